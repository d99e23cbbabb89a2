"""The upstream request judged (``upstream/contract.py``), the log's hashes, the key and canary.

The contract accepts every request the kit's own client sends, in every
protocol and case (the kit's requests are its reference of a right one), and
names the field of each mistranslation gateways make; a hop of our own that
makes one is caught by ``request_mistranslated`` and nothing else, one that
passes the client's key on by ``key_forwarded``, one that echoes it by
``key_echoed``.
"""

from __future__ import annotations

import asyncio
import contextlib
import copy
import json
from collections.abc import AsyncIterator, Sequence
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kit_hops import Hop
from streamwire.kit.client.raw import client_request
from streamwire.kit.judge.verdicts import cell_verdicts, control_cells
from streamwire.kit.report.document import Report, build_report
from streamwire.kit.run.check import CheckPlan, Route, run_check
from streamwire.kit.upstream.contract import MAX_PROBLEMS, Problem, problems, refusal
from streamwire.kit.upstream.mock import MockUpstream, fingerprint, hashed_body, is_entry
from streamwire.kit.vocab.cases import CASES
from streamwire.kit.vocab.names import CLIENTS, UPSTREAM_PROTOCOLS

HEADERS = [("content-type", "application/json"), ("anthropic-version", "2023-06-01")]


@pytest.mark.parametrize("client", CLIENTS)
def test_every_request_the_kits_client_sends_is_one_its_provider_accepts(client: str) -> None:
    for case in CASES.values():
        _url, headers, body = client_request(client, case, "sw-x", "http://gw", canary="swc-1")
        assert problems(client, body, headers) == [], (client, case.name)


def _chat_tools_body() -> dict[str, Any]:
    _url, _headers, body = client_request("openai-chat", CASES["single-tool"], "m", "http://gw")
    return body


def _anthropic_body() -> dict[str, Any]:
    _url, _headers, body = client_request("anthropic", CASES["single-tool"], "m", "http://gw")
    return body


def _first(upstream: str, body: Any, headers: Sequence[tuple[str, str]] = HEADERS) -> str:
    found = problems(upstream, body, headers)
    assert found, (upstream, body)
    return found[0].field


def test_openai_shaped_tools_at_anthropic_are_refused_at_the_tool() -> None:
    body = _anthropic_body()
    body["tools"] = _chat_tools_body()["tools"]
    (problem, *_) = problems("anthropic", body, HEADERS)
    assert problem.field == "tools[0].type"
    assert "OpenAI Chat Completions's shape" in problem.message


@pytest.mark.parametrize(
    ("upstream", "edit", "field"),
    [
        ("anthropic", lambda b: b.pop("max_tokens"), "max_tokens"),
        (
            "anthropic",
            lambda b: b["messages"].insert(0, {"role": "system", "content": "x"}),
            "messages.0.role",
        ),
        ("anthropic", lambda b: b.update(stream="yes"), "stream"),
        (
            "anthropic",
            lambda b: b.update(thinking={"type": "enabled", "budget_tokens": 100}),
            "thinking.budget_tokens",
        ),
        ("anthropic", lambda b: b["tools"][0].pop("input_schema"), "tools[0].input_schema"),
        ("openai-chat", lambda b: b.update(stream=False), "stream_options"),
        (
            "openai-chat",
            lambda b: b["tools"][0]["function"].update(name="add numbers"),
            "tools[0].function.name",
        ),
        ("openai-chat", lambda b: b.update(messages=[]), "messages"),
        ("openai-chat", lambda b: b.update(max_tokens=0), "max_tokens"),
    ],
)
def test_each_mistranslation_is_named_by_its_field(upstream: str, edit: Any, field: str) -> None:
    body = _anthropic_body() if upstream == "anthropic" else _chat_tools_body()
    if upstream == "openai-chat" and field == "stream_options":
        body["stream_options"] = {"include_usage": True}
    edit(body)
    assert _first(upstream, body) == field


def test_a_tool_result_must_answer_a_call_of_the_turn_before() -> None:
    call = {"id": "call_1", "type": "function", "function": {"name": "f", "arguments": "{}"}}
    messages: list[dict[str, Any]] = [
        {"role": "user", "content": "q"},
        {"role": "assistant", "content": None, "tool_calls": [call]},
        {"role": "tool", "tool_call_id": "call_1", "content": "4"},
    ]
    assert problems("openai-chat", {"model": "m", "messages": messages}) == []
    wrong = copy.deepcopy(messages)
    wrong[2]["tool_call_id"] = "call_2"
    assert _first("openai-chat", {"model": "m", "messages": wrong}) == "messages[2].tool_call_id"
    as_object = copy.deepcopy(messages)
    as_object[1]["tool_calls"][0]["function"]["arguments"] = {"a": 1}
    field = _first("openai-chat", {"model": "m", "messages": as_object})
    assert field == "messages[1].tool_calls[0].function.arguments"
    anthropic = {
        "model": "m",
        "max_tokens": 64,
        "messages": [
            {"role": "user", "content": "q"},
            {
                "role": "assistant",
                "content": [{"type": "tool_use", "id": "t1", "name": "f", "input": "{}"}],
            },
            {
                "role": "user",
                "content": [{"type": "tool_result", "tool_use_id": "t2", "content": "4"}],
            },
        ],
    }
    fields = [p.field for p in problems("anthropic", anthropic, HEADERS)]
    assert fields == ["messages.1.content.0.input", "messages.2.content.0.tool_use_id"]
    responses = {
        "model": "m",
        "input": [{"type": "function_call_output", "call_id": "c9", "output": "4"}],
    }
    assert _first("openai-responses", responses) == "input[0].call_id"
    responses["previous_response_id"] = "resp_1"  # the call is in the earlier response
    assert problems("openai-responses", responses) == []


def test_each_provider_refuses_the_others_tool_shapes_and_its_own_required_fields() -> None:
    chat_tool = _chat_tools_body()["tools"][0]
    assert _first("openai-responses", {"model": "m", "input": "q", "tools": [chat_tool]}) == (
        "tools[0].name"
    )
    gemini = {"contents": [{"role": "user", "parts": [{"text": "q"}]}], "tools": [chat_tool]}
    assert _first("gemini", gemini) == "tools[0].type"
    assert _first("gemini", {"contents": [{"role": "assistant", "parts": [{"text": "q"}]}]}) == (
        "contents[0].role"
    )
    invoke = _anthropic_body()
    invoke.pop("stream", None)
    invoke["anthropic_version"] = "bedrock-2023-05-31"
    assert problems("bedrock-invoke", {k: v for k, v in invoke.items() if k != "model"}) == []
    assert _first("bedrock-invoke", invoke) == "model"
    converse = {"messages": [{"role": "user", "content": [{"text": "q"}]}], "tools": []}
    assert _first("bedrock-converse", converse) == "tools"
    assert _first("openai-responses", {"model": "m", "input": "q", "max_output_tokens": 5}) == (
        "max_output_tokens"
    )
    assert _first("anthropic", _anthropic_body(), headers=()) == "anthropic-version"


@pytest.mark.parametrize("upstream", UPSTREAM_PROTOCOLS)
def test_a_refusal_is_the_providers_status_and_error_json(upstream: str) -> None:
    status, headers, payload = refusal(upstream, Problem("tools[0].type", "no such type"))
    assert status == 400
    doc = json.loads(payload)
    text = json.dumps(doc)
    assert "tools[0].type: no such type" in text
    if upstream.startswith("openai"):
        assert doc["error"]["type"] == "invalid_request_error"
        assert doc["error"]["param"] == "tools[0].type"
    elif upstream == "anthropic":
        assert doc["type"] == "error" and doc["error"]["type"] == "invalid_request_error"
    elif upstream.startswith("gemini"):
        assert doc["error"]["status"] == "INVALID_ARGUMENT" and doc["error"]["code"] == 400
    else:
        assert ("x-amzn-errortype", "ValidationException") in headers


_JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=8),
    lambda inner: (
        st.lists(inner, max_size=4)
        | st.dictionaries(
            st.sampled_from(
                [
                    "messages",
                    "role",
                    "content",
                    "tools",
                    "type",
                    "function",
                    "name",
                    "input",
                    "tool_calls",
                    "id",
                    "tool_use_id",
                    "contents",
                    "parts",
                    "max_tokens",
                    "stream",
                    "toolConfig",
                    "toolSpec",
                    "functionCall",
                    "args",
                    "thinking",
                    "call_id",
                    "x",
                ]
            ),
            inner,
            max_size=5,
        )
    ),
    max_leaves=30,
)


@settings(max_examples=400, deadline=None)
@given(body=_JSON, upstream=st.sampled_from(UPSTREAM_PROTOCOLS))
def test_hostile_bodies_never_raise_and_the_problems_are_capped(body: Any, upstream: str) -> None:
    found = problems(upstream, body, [("anthropic-version", "x")])
    assert len(found) <= MAX_PROBLEMS
    assert all(isinstance(p.field, str) and isinstance(p.message, str) for p in found)
    hashed_body(body)


@pytest.mark.parametrize("upstream", UPSTREAM_PROTOCOLS)
@pytest.mark.parametrize("role", [["user"], {"a": 1}])
def test_a_role_of_any_json_type_is_a_problem_never_a_crash(upstream: str, role: Any) -> None:
    # A hypothesis example of the hostile-bodies test: a list where a role goes
    # (membership in a set of names raised TypeError: unhashable).
    for body in (
        {"model": "m", "messages": [{"role": role, "content": "hi"}]},
        {"model": "m", "input": [{"type": "message", "role": role, "content": "hi"}]},
        {"contents": [{"role": role, "parts": [{"text": "hi"}]}]},
        {"messages": [{"role": role, "content": [{"text": "hi"}]}]},
    ):
        found = problems(upstream, body, [("anthropic-version", "x")])
        assert all(isinstance(p.message, str) for p in found)


def test_the_log_keeps_prompts_and_arguments_as_hashes_and_lengths() -> None:
    _url, _headers, body = client_request(
        "anthropic", CASES["single-tool"], "sw-single-tool", "http://gw", canary="swc-secret1"
    )
    body["messages"].append(
        {
            "role": "assistant",
            "content": [{"type": "tool_use", "id": "t1", "name": "f", "input": {"a": "b-secret2"}}],
        }
    )
    kept = json.dumps(hashed_body(body))
    assert "secret1" not in kept and "secret2" not in kept
    assert '"role": "user"' in kept and '"name": "f"' in kept and '"id": "t1"' in kept
    assert f"len {len(body['messages'][0]['content'])}]" in kept


def _run(
    url_of: Any,
    cases: Sequence[str],
    clients: Sequence[str],
    passthrough: bool = False,
    **plan: Any,
) -> tuple[Report, list[dict[str, Any]]]:
    plan.setdefault("unary", False)

    async def go() -> tuple[Report, list[dict[str, Any]]]:
        async with MockUpstream(**plan.pop("mock", {})) as mock, url_of(mock.url) as url:
            check = CheckPlan(
                routes=[Route(url, label="hop", key_passthrough=passthrough)],
                clients=clients,
                cases=cases,
                deliveries=["whole"],
                mock_url=mock.url,
                read_timeout=8.0,
                **plan,
            )
            report = build_report(await run_check(check))
            return report, mock.entries()

    return asyncio.run(go())


def _verdicts(report: Report) -> set[tuple[str, str]]:
    control = control_cells(report.cells)
    return {pair for cell in report.cells for pair in cell_verdicts(cell, control)}


def _hop(behaviour: str) -> Any:
    @contextlib.asynccontextmanager
    async def url_of(upstream: str) -> AsyncIterator[str]:
        async with Hop(upstream, behaviour) as hop:
            yield hop.url

    return url_of


CASES_RUN = ("short-text", "single-tool", "tool-error-result")


def test_the_honest_relay_is_clean_and_the_log_holds_no_prompt_and_no_key() -> None:
    report, entries = _run(_hop("pass"), CASES_RUN, ("openai-chat", "anthropic"), passthrough=True)
    assert report.verdicts == [], report.verdicts
    run = json.dumps(entries)
    cell = report.cells[0]
    assert cell.evidence["mock"]["request_problems"] == []
    assert "swc-" not in run and "sk-swkit-" not in run
    assert all(is_entry(e) for e in entries)
    assert any(e["credentials"] for e in entries)


def test_openai_shaped_tools_at_anthropic_are_request_mistranslated_and_nothing_else() -> None:
    report, entries = _run(_hop("openai_tools"), CASES_RUN, ("anthropic",), passthrough=True)
    assert _verdicts(report) == {("request_mistranslated", "request")}, report.verdicts
    refused = [e for e in entries if e.get("refused")]
    assert refused and all(e["status"] == 400 for e in refused)
    assert {e["request_problems"][0][0] for e in refused} == {"tools[0].type"}
    tool_cells = [c for c in report.cells if c.case != "short-text"]
    assert all(c.checks["request"].details["field"] == "tools[0].type" for c in tool_cells)
    (text,) = [c for c in report.cells if c.case == "short-text"]
    assert text.checks["request"].verdict == "pass"


def test_a_lenient_mock_streams_the_mistranslated_request_and_still_names_it() -> None:
    report, entries = _run(
        _hop("openai_tools"),
        ("single-tool",),
        ("anthropic",),
        passthrough=True,
        mock={"lenient": True},
    )
    (cell,) = report.cells
    assert cell.checks["request"].verdict == "fail"
    assert cell.checks["request"].details["refused"] is False
    # Streamed all the same; the tools it declared in the wrong shape are none at Anthropic.
    assert cell.checks["http"].verdict == "pass"
    assert cell.evidence["mock"]["status"] == 200
    assert not any(e.get("refused") for e in entries)


def test_a_hop_that_passes_the_clients_key_on_is_key_forwarded_and_nothing_else() -> None:
    report, _entries = _run(_hop("pass"), ("short-text",), ("openai-chat", "anthropic"))
    assert _verdicts(report) == {("key_forwarded", "credentials")}, report.verdicts
    key = report.cells[0].evidence["client"]
    assert "sk-swkit-" not in json.dumps(key)


def test_a_hop_that_echoes_the_key_is_key_echoed_and_the_evidence_keeps_no_key() -> None:
    report, _entries = _run(_hop("echo_key"), ("short-text",), ("openai-chat",), passthrough=True)
    assert _verdicts(report) == {("key_echoed", "credentials")}, report.verdicts
    (cell,) = report.cells
    assert "header x-debug-auth" in cell.checks["credentials"].why
    assert "sk-swkit-" not in json.dumps(cell.as_dict())


def test_a_given_key_is_watched_and_never_stored() -> None:
    report, _entries = _run(
        _hop("pass"), ("short-text",), ("openai-chat",), key="sk-team-real-key-123"
    )
    (cell,) = report.cells
    assert cell.checks["credentials"].verdict == "fail"
    assert fingerprint("sk-team-real-key-123")["sha256"] in cell.checks["credentials"].why
    assert "sk-team-real-key-123" not in json.dumps(cell.as_dict())


def _echoes_of(pieces: Sequence[bytes], secret: str) -> list[str]:
    """What ``observe``'s scan records of a body read as ``pieces``."""
    from streamwire.kit.client.raw import Observation, _scan_echoes

    obs = Observation("openai-chat", "http://gw", {}, 0.0, secrets=[secret])
    needle = secret.encode()
    seen = b""
    for piece in pieces:
        seen = _scan_echoes(obs, [needle], seen, piece, len(needle) - 1)
        obs.raw_bytes += len(piece)
    return obs.echoed


def test_a_key_echoed_in_the_body_is_found_at_its_byte_under_every_split() -> None:
    secret = "sk-swkit-r1"
    body = b'data: {"error": "bad key sk-swkit-r1"}\n\n'
    at = body.index(secret.encode())
    assert _echoes_of([body], secret) == [f"body at byte {at}"]
    assert _echoes_of([body[i : i + 1] for i in range(len(body))], secret) == [f"body at byte {at}"]
    for cut in range(1, len(body)):
        assert _echoes_of([body[:cut], body[cut:]], secret) == [f"body at byte {at}"], cut
    for first in range(1, len(body) - 1):
        for second in range(first + 1, len(body)):
            pieces = [body[:first], body[first:second], body[second:]]
            assert _echoes_of(pieces, secret) == [f"body at byte {at}"], (first, second)


def test_a_body_without_the_key_has_no_echo_under_every_split() -> None:
    secret = "sk-swkit-r1"
    body = b'data: {"note": "sk-swkit-r2 and sk-swkit-r"}\n\n'
    for cut in range(len(body) + 1):
        assert _echoes_of([body[:cut], body[cut:]], secret) == [], cut


def test_the_test_record_keeps_ids_times_and_usage_and_no_key() -> None:
    from streamwire.kit.client.raw import ECHO_MARK, Observation
    from streamwire.kit.run.check import test_record

    obs = Observation("openai-chat", "http://gw", {}, 1764547200.0, secrets=["sk-swkit-r1"])
    obs.status = 200
    obs.headers = [("x-request-id", "gw-1 for sk-swkit-r1"), ("x-upstream-request-id", "req_sw9")]
    obs.echoed = ["header x-request-id"]
    record = test_record("openai-chat", "sw-usage.whole.t1", obs, [{"request_id": "req_sw9"}])
    assert record["upstream_request_id"] == "req_sw9"
    assert record["gateway_request_id"] == f"gw-1 for {ECHO_MARK}"
    assert record["time"] == "2025-12-01T00:00:00.000+00:00"
    assert record["status"] == 200 and record["usage"] is None
    assert "sk-swkit-r1" not in json.dumps(record)


@pytest.mark.parametrize("case", [c for c in CASES.values() if c.max_tokens is not None], ids=str)
def test_a_case_s_output_limit_is_one_every_provider_accepts(case: Any) -> None:
    # A gateway may forward any client's limit to any provider under that
    # provider's own name: each provider's contract must accept the case's.
    limits = {
        "openai-chat": {"max_tokens": case.max_tokens},
        "openai-responses": {"max_output_tokens": case.max_tokens},
        "anthropic": {"max_tokens": case.max_tokens},
        "gemini": {"generationConfig": {"maxOutputTokens": case.max_tokens}},
    }
    for client in ("openai-chat", "openai-responses", "anthropic", "gemini"):
        _, _, body = client_request(client, CASES["short-text"], "m", "http://h", None)
        found = problems(client, {**body, **limits[client]})
        fields = [p.field for p in found if "token" in p.field.lower()]
        assert fields == [], (client, found)
