"""The kit's SDK cells (``--sdk``): the official SDKs read the cases, pointed at the gateway.

Ground truth first: straight to the mock, every SDK cell of every SDK
passes (the SDKs read the mock's streams as the providers' own). Then
examples/gateway (its worked example's script, with ``--sdk``) passes them
too, and a hop that streamwire reads right but the openai SDK's helper does
not (``repeat_heads``: a call's name in every delta, which the helper
concatenates) fails exactly its SDK cells, as ``sdk_incompatible`` with the
SDK's final object as evidence, while the raw HTTP cells of the same cases
pass. The joins of the SDKs without a final object of their own, and the
judgement, are held to hostile input.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kit_hops import Hop
from streamwire.kit.cli import main as kit_main
from streamwire.kit.client.sdk import (
    SDK_CASES,
    SDK_DELIVERIES,
    SDK_PACED_CASES,
    SdkAnswer,
    _converse_joined,
    _joined,
    _messages_joined,
    sdk_version,
)
from streamwire.kit.judge.cell import LAYERS, Check
from streamwire.kit.judge.rules import reference
from streamwire.kit.judge.sdk import compare
from streamwire.kit.report.document import Report, build_report
from streamwire.kit.run.check import CheckPlan, Route, run_check
from streamwire.kit.upstream.mock import MockUpstream
from streamwire.kit.vocab.cases import CASES
from streamwire.kit.vocab.names import SDKS

ROOT = Path(__file__).resolve().parent.parent


def _check(
    behaviour: str | None,
    sdks: Sequence[str],
    clients: Sequence[str],
    cases: Sequence[str] = SDK_CASES,
    deliveries: Sequence[str] = SDK_DELIVERIES,
) -> Report:
    async def go() -> Report:
        async with MockUpstream() as mock, contextlib.AsyncExitStack() as stack:
            route = Route(mock.url)
            if behaviour is not None:
                hop = await stack.enter_async_context(Hop(mock.url, behaviour))
                route = Route(hop.url, label=behaviour, key_passthrough=True)
            plan = CheckPlan(
                routes=[route],
                clients=clients,
                cases=cases,
                deliveries=deliveries,
                unary=False,
                sdks=sdks,
                mock_url=mock.url,
            )
            return build_report(await run_check(plan))

    return asyncio.run(go())


def _sdk_cells(report: Report) -> list[Any]:
    return [c for c in report.cells if " via " in c.client]


def test_straight_to_the_mock_every_sdk_reads_every_case() -> None:
    clients = sorted({c for protocols in SDKS.values() for c in protocols})
    report = _check(None, list(SDKS), clients)
    cells = _sdk_cells(report)
    per_client = sum(
        len(
            {
                d
                for d in CASES[n].only or SDK_DELIVERIES
                if d in SDK_DELIVERIES and (d != "paced" or n in SDK_PACED_CASES)
            }
        )
        for n in SDK_CASES
    )
    assert len(cells) == len(clients) * per_client
    assert {c.client for c in cells} == {f"{p} via {s}" for s, ps in SDKS.items() for p in ps}
    failing = [(c.case, c.client, c.delivery, c.checks["sdk"].why) for c in cells if c.failed]
    assert failing == []
    # One limit of an SDK, not of any hop: google-genai reads only "data: " lines,
    # so the keep-alive case's SSE comments (which the mock, as the upstream,
    # sends itself) make it raise. Straight to the mock that is the SDK's limit.
    limited = {(c.case, c.client) for c in cells if c.checks["sdk"].verdict == "degraded"}
    assert limited == {("keepalive", "gemini via google-genai")}
    for cell in cells:
        if (cell.case, cell.client) in limited:
            check = cell.checks["sdk"]
            assert check.tags == ("sdk_limit",) and "UnknownApiResponseError" in check.why
            continue
        assert cell.checks["sdk"].verdict == "pass"
        judged = [n for n, check in cell.checks.items() if check.verdict != "not_applicable"]
        if cell.delivery == "paced":
            # Timed as the SDK yielded its content: every text delta, spread out.
            streaming = cell.checks["streaming"]
            assert judged == ["streaming", "sdk"] and streaming.verdict != "fail"
            assert streaming.details["timed_by"] == "the SDK's own events"
            assert cell.evidence["sdk"]["content_events"] == len(CASES[cell.case].text)
        else:
            assert judged == ["sdk"]
        sdk = cell.evidence["sdk"]
        assert sdk["version"] == sdk_version(sdk["sdk"]) and sdk["version"]
        assert cell.upstream == cell.client.split(" via ")[0]
    # The raw cells ran beside them, and the run is clean (sdk_limit is acceptable).
    assert any(" via " not in c.client for c in report.cells)
    assert report.exit_status == 0
    # A busy machine may delay a paced cell (stream_delayed): a clock's verdict.
    firm = {v["name"] for v in report.verdicts if set(v["cases"]) - set(v["timed_cases"])}
    assert firm == {"sdk_limit"}


def test_an_in_stream_error_surfaces_as_each_sdk_s_error() -> None:
    clients = sorted({c for protocols in SDKS.values() for c in protocols})
    report = _check(None, list(SDKS), clients, cases=["in-stream-error"], deliveries=["whole"])
    cells = _sdk_cells(report)
    assert len(cells) == len(clients)
    for cell in cells:
        sdk = cell.evidence["sdk"]
        surfaced = sdk["error"] is not None or '"failed"' in (sdk["answer"] or "")
        assert surfaced, cell.as_dict()
        assert sdk["raised"] is None


def test_a_hop_whose_repeated_call_heads_the_openai_sdk_concatenates() -> None:
    cases = ["single-tool", "parallel-tools", "short-text"]
    report = _check("repeat_heads", ["openai"], ["openai-chat"], cases, ["whole"])
    raw = [c for c in report.cells if " via " not in c.client]
    assert raw and not any(c.failed for c in raw), [c.as_dict() for c in raw if c.failed]
    cells = {c.case: c for c in _sdk_cells(report)}
    assert set(cells) == set(cases)
    for case in ("single-tool", "parallel-tools"):
        check = cells[case].checks["sdk"]
        assert check.verdict == "fail" and "differs" in check.tags, check
        # The helper's final object names the call twice over (or more).
        assert "add_numbersadd_numbers" in check.why or "get_weatherget_weather" in check.why
    # A text answer has no call head to repeat: its SDK cell passes.
    assert cells["short-text"].checks["sdk"].verdict == "pass"
    names = {v["name"]: v for v in report.verdicts}
    assert set(names) == {"sdk_incompatible"}
    found = names["sdk_incompatible"]
    assert found["client"] == "openai-chat via openai"
    assert set(found["cases"]) == {"single-tool", "parallel-tools"}
    assert report.exit_status == 1


def test_examples_gateway_passes_its_sdk_cells(tmp_path: Path) -> None:
    out = tmp_path / "gateway"
    done = subprocess.run(
        [
            sys.executable,
            str(ROOT / "examples" / "kit_gateway.py"),
            "--out",
            str(out),
            "--sdk",
            "openai,anthropic,google-genai",
            "--cases",
            "short-text,parallel-tools,in-stream-error,truncated,usage",
            "--delivery",
            "whole",
            "--no-unary",
            "--quiet",
        ],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=ROOT,
    )
    report = json.loads((out / "check.json").read_text())
    cells = [c for c in report["cells"] if " via " in c["client"]]
    # Four routes (one per upstream) x four SDK clients x five cases.
    assert len(cells) == 4 * 4 * 5, done.stdout + done.stderr
    failing = [
        (c["route"], c["client"], c["case"], c["evidence"]["layers"]["sdk"]["why"])
        for c in cells
        if c["layers"]["sdk"] == "fail"
    ]
    assert failing == []
    assert report["summary"]["sdks"]["openai-chat via openai"] == f"openai {sdk_version('openai')}"
    assert done.returncode in (0, 1)


def test_an_unknown_or_missing_sdk_is_a_usage_error(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exited:
        kit_main(["check", "http://127.0.0.1:9", "--client", "openai-chat", "--sdk", "x"])
    assert exited.value.code == 2
    assert "unknown SDK 'x'" in capsys.readouterr().err
    with pytest.raises(ValueError, match="unknown SDK"):
        CheckPlan(routes=[Route("http://127.0.0.1:9")], sdks=["openai-agents"])


def _answer(client: str, **fields: Any) -> SdkAnswer:
    sdk = next(name for name, clients in SDKS.items() if client in clients)
    return SdkAnswer(sdk, client, **fields)


def test_the_judgement_names_what_the_sdk_did() -> None:
    ref = reference("single-tool", "openai-chat", "openai-chat", True, False)
    raised = compare(
        _answer("openai-chat", raised=("pydantic.ValidationError", "1 error")), ref, None
    )
    assert raised.verdict == "fail" and "raised" in raised.tags
    assert "pydantic.ValidationError" in raised.why
    status = compare(
        _answer("openai-chat", error={"class": "APIStatusError", "status": 502, "type": None}),
        ref,
        None,
    )
    assert status.verdict == "fail" and "HTTP 502" in status.why
    # An error case whose error the SDK never raised: taken as a success.
    error_ref = reference("in-stream-error", "openai-chat", "openai-chat", True, False)
    quiet = compare(_answer("openai-chat", answer={"choices": []}), error_ref, "server_error")
    assert quiet.verdict == "fail" and "never surfaced" in quiet.why
    surfaced = compare(
        _answer("openai-chat", error={"class": "APIError", "type": "server_error"}),
        error_ref,
        "server_error",
    )
    assert surfaced.verdict == "pass"
    assert compare(_answer("openai-chat"), ref, None).verdict == "fail"


def test_a_final_object_that_matches_the_reference_passes_and_each_difference_is_named() -> None:
    ref = reference("single-tool", "anthropic", "anthropic", True, False)
    call = ref.result.tool_calls[0]
    message = {
        "type": "message",
        "id": "msg_1",
        "model": "m",
        "content": [
            {"type": "text", "text": ref.result.text},
            {"type": "tool_use", "id": call.id, "name": call.name, "input": call.arguments},
        ],
        "stop_reason": "tool_use",
        "usage": {
            "input_tokens": ref.result.usage.input_tokens,
            "output_tokens": ref.result.usage.output_tokens,
        },
    }
    assert compare(_answer("anthropic", answer=message), ref, None).verdict == "pass"
    for change, word in (
        ({"stop_reason": "max_tokens"}, "stop reason"),
        ({"usage": {"input_tokens": 1, "output_tokens": 2}}, "usage"),
        ({"content": message["content"][1:]}, "text"),
        ({"content": message["content"][:1]}, "calls"),
    ):
        check = compare(_answer("anthropic", answer={**message, **change}), ref, None)
        assert check.verdict == "fail" and word in check.why, (change, check)
    without_id = {**message["content"][1], "id": None}
    check = compare(
        _answer("anthropic", answer={**message, "content": [message["content"][0], without_id]}),
        ref,
        None,
    )
    assert check.verdict == "fail" and "without an id" in check.why


def test_the_joins_rebuild_the_whole_answer() -> None:
    converse = _converse_joined(
        [
            {"messageStart": {"role": "assistant"}},
            {"contentBlockDelta": {"contentBlockIndex": 0, "delta": {"text": "Hel"}}},
            {"contentBlockDelta": {"contentBlockIndex": 0, "delta": {"text": "lo"}}},
            {
                "contentBlockStart": {
                    "contentBlockIndex": 1,
                    "start": {"toolUse": {"toolUseId": "t1", "name": "add_numbers"}},
                }
            },
            {
                "contentBlockDelta": {
                    "contentBlockIndex": 1,
                    "delta": {"toolUse": {"input": '{"a"'}},
                }
            },
            {"contentBlockDelta": {"contentBlockIndex": 1, "delta": {"toolUse": {"input": ":1}"}}}},
            {"messageStop": {"stopReason": "tool_use"}},
            {"metadata": {"usage": {"inputTokens": 3, "outputTokens": 4}}},
        ]
    )
    assert converse["output"]["message"]["content"] == [
        {"text": "Hello"},
        {"toolUse": {"toolUseId": "t1", "name": "add_numbers", "input": {"a": 1}}},
    ]
    assert converse["stopReason"] == "tool_use" and converse["usage"]["outputTokens"] == 4
    message = _messages_joined(
        [
            {"type": "message_start", "message": {"id": "m1", "usage": {"input_tokens": 5}}},
            {
                "type": "content_block_start",
                "index": 0,
                "content_block": {"type": "text", "text": ""},
            },
            {
                "type": "content_block_delta",
                "index": 0,
                "delta": {"type": "text_delta", "text": "Hi"},
            },
            {
                "type": "message_delta",
                "delta": {"stop_reason": "end_turn"},
                "usage": {"output_tokens": 2},
            },
        ]
    )
    assert message["content"] == [{"type": "text", "text": "Hi"}]
    assert message["stop_reason"] == "end_turn" and message["usage"] == {
        "input_tokens": 5,
        "output_tokens": 2,
    }
    gemini = _joined(
        [
            {"candidates": [{"content": {"parts": [{"text": "a"}]}}], "responseId": "r"},
            {
                "candidates": [{"content": {"parts": [{"text": "b"}]}, "finishReason": "STOP"}],
                "usageMetadata": {"promptTokenCount": 1},
            },
        ]
    )
    candidate = gemini["candidates"][0]
    assert [p["text"] for p in candidate["content"]["parts"]] == ["a", "b"]
    assert candidate["finishReason"] == "STOP" and gemini["usageMetadata"]["promptTokenCount"] == 1


_JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=8),
    lambda inner: (
        st.lists(inner, max_size=4)
        | st.dictionaries(
            st.sampled_from(
                [
                    "type",
                    "index",
                    "delta",
                    "text",
                    "message",
                    "usage",
                    "content_block",
                    "candidates",
                    "content",
                    "parts",
                    "finishReason",
                    "contentBlockStart",
                    "contentBlockDelta",
                    "contentBlockIndex",
                    "start",
                    "toolUse",
                    "input",
                    "messageStop",
                    "metadata",
                    "partial_json",
                    "stop_reason",
                ]
            ),
            inner,
            max_size=5,
        )
    ),
    max_leaves=24,
)


@settings(max_examples=300, deadline=None)
@given(st.lists(_JSON, max_size=8))
def test_the_joins_and_the_judgement_never_raise_on_hostile_events(events: list[Any]) -> None:
    ref = reference("single-tool", "openai-chat", "openai-chat", True, False)
    for join, client in (
        (_converse_joined, "bedrock-converse"),
        (_messages_joined, "bedrock-invoke"),
        (_joined, "gemini"),
    ):
        answer = join(events)
        json.dumps(answer, default=str)
        check = compare(SdkAnswer("boto3", client, answer=answer), ref, None)
        assert isinstance(check, Check) and check.verdict in ("pass", "fail")


def test_the_sdk_layer_was_added_at_the_end_of_the_layer_list() -> None:
    # New layers go at the end (docs/design.md): the head-of-line case's came after.
    assert LAYERS[-2:] == ("sdk", "head_of_line")


def test_an_sdk_exception_without_a_message_is_told_by_where_it_was_raised() -> None:
    from streamwire.kit.client.sdk import _raised

    def helper() -> None:
        raise AssertionError  # an SDK's own bare assert, as pytest does not rewrite it

    try:
        helper()
    except AssertionError as exc:
        kind, message = _raised(exc)
    assert kind == "builtins.AssertionError"
    assert message.startswith("no message; raised at tests/test_kit_sdk.py:")
    assert "raise AssertionError" in message
    assert _raised(ValueError("said so")) == ("builtins.ValueError", "said so")
