"""One cause, one verdict: the kit through hops of our own (``kit_hops.py``), each one behaviour.

Each hop reproduces what a real proxy or gateway was measured doing, and
must get exactly the verdict of that cause and no other: a hop that holds
the whole answer is ``not_streaming`` and nothing else (its usage is the
mock's own, not invented; the cancel case still hangs up while the upstream
writes, so the hang-up is judged truly); a hop that batches writes for
200 ms streams, late (``stream_delayed``), and its 200 ms close delay is
within the cancel bound; a gateway that refuses a parameter before calling
any upstream is ``upstream_not_called``, filed under its route; one that
holds a call's arguments is ``arguments_buffered``; a Responses bridge that
completes a cut answer with ``status: "incomplete"`` is read by what the
response says. The honest relay is clean in every cell.
"""

from __future__ import annotations

import asyncio
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest

from kit_hops import BATCH, FIXED_MODEL, Hop
from streamwire.kit import CLIENTS
from streamwire.kit.judge.verdicts import cell_verdicts, control_cells
from streamwire.kit.report.document import Report, build_report
from streamwire.kit.run.check import CheckPlan, Route, run_check
from streamwire.kit.upstream.mock import MockUpstream
from streamwire.kit.vocab.cases import CASE_NAMES, UNARY_CASES


def _check(
    behaviour: str,
    cases: Sequence[str],
    clients: Sequence[str] = ("openai-chat",),
    deliveries: Sequence[str] = ("whole", "paced"),
    passthrough: bool = True,
    unary: bool = False,
    model: str = "{model}",
    seen: list[dict[str, Any]] | None = None,
) -> Report:
    """The report of a check through the hop; ``seen`` gets the mock's log."""

    async def go() -> Report:
        async with MockUpstream() as mock, Hop(mock.url, behaviour) as hop:
            route = Route(hop.url, model, label=behaviour, key_passthrough=passthrough)
            plan = CheckPlan(
                routes=[route],
                clients=clients,
                cases=cases,
                deliveries=deliveries,
                unary=unary,
                mock_url=mock.url,
                read_timeout=8.0,
                # Silences and a stall long enough to show a hop that cuts them
                # (the hops here have no idle timeout), short enough for a test.
                silence=3.0,
                stall=2.0,
            )
            report = build_report(await run_check(plan))
            if seen is not None:
                seen.extend(mock.entries())
            return report

    return asyncio.run(go())


def _names(report: Report) -> set[str]:
    return {v["name"] for v in report.verdicts}


def _only(report: Report, verdict: str) -> None:
    """Every failing or degraded layer of every cell is ``verdict``, and it was raised."""
    assert _names(report) == {verdict}, report.verdicts
    controls = control_cells(report.cells)
    for cell in report.cells:
        control = controls.get((cell.route, cell.client, cell.delivery, cell.case))
        assert {name for name, _ in cell_verdicts(cell, control)} <= {verdict}, cell.as_dict()


@pytest.mark.timed
def test_the_honest_relay_is_clean_in_every_cell() -> None:
    report = _check("pass", CASE_NAMES, CLIENTS, unary=True)
    assert sum(c.delivery == "unary" for c in report.cells) == len(UNARY_CASES) * len(CLIENTS)
    failing = [
        (c.case, c.client, c.delivery, c.as_dict()["evidence"]["layers"])
        for c in report.cells
        if c.failed or c.degraded
    ]
    assert failing == []
    assert report.exit_status == 0
    row = report.matrix["pass"]
    # Every client's calls streamed their arguments as they came (where a call is paced).
    streamed = {client: pair["arguments_streamed"] for client, pair in row["clients"].items()}
    # Gemini sends each call whole: nothing to judge there.
    assert streamed == {c: None if c == "gemini" else True for c in CLIENTS}, streamed


@pytest.mark.timed
@pytest.mark.parametrize("behaviour", ["hold", "hold_no_cancel"])
def test_a_hop_that_holds_the_answer_is_not_streaming_and_only_that(behaviour: str) -> None:
    report = _check(behaviour, ["short-text", "usage", "single-tool", "cancel"])
    expected = {"not_streaming"} | ({"cancel_not_propagated"} if behaviour != "hold" else set())
    assert _names(report) == expected, report.verdicts
    for cell in report.cells:
        layers = {layer for _, layer in cell_verdicts(cell)}
        if cell.case == "cancel":
            # Nothing arrived before the timer hung up while the mock wrote.
            assert cell.checks["streaming"].verdict == "fail"
            assert cell.evidence["client"]["cancel_reason"] == "timer"
            want = "pass" if behaviour == "hold" else "fail"
            assert cell.checks["cancel"].verdict == want, cell.checks["cancel"]
        elif cell.delivery == "paced":
            assert layers == {"streaming"}, cell.as_dict()
            assert "held" in cell.checks["streaming"].tags
            assert "not even the response head" in cell.checks["streaming"].why
        else:
            # Under whole the mock writes at once: a held answer cannot be seen.
            assert layers == set(), cell.as_dict()
        if cell.case == "usage":
            assert cell.checks["usage"].verdict == "pass"


@pytest.mark.timed
def test_write_batching_is_a_delay_not_buffering_and_its_close_delay_passes() -> None:
    first = _check("batch", ["short-text", "single-tool", "cancel"])
    _only(first, "stream_delayed")
    (delayed,) = first.verdicts
    _low, high = delayed["figures"]["lag_median_ms"]
    assert 0.5 * BATCH * 1000 < high <= 1.5 * BATCH * 1000, delayed["figures"]
    for cell in first.cells:
        if cell.case == "cancel":
            closed = cell.checks["cancel"].details["closed_after_ms"]
            assert cell.checks["cancel"].verdict == "pass" and closed < 1000
    # Stable: the same hop, the same verdicts.
    again = _check("batch", ["short-text", "single-tool", "cancel"])
    assert [(v["name"], v["client"]) for v in again.verdicts] == [
        (v["name"], v["client"]) for v in first.verdicts
    ]


@pytest.mark.timed
def test_a_late_close_within_the_bound_passes_with_its_figure() -> None:
    report = _check("close_late", ["cancel"], deliveries=["whole"])
    (cell,) = report.cells
    check = cell.checks["cancel"]
    assert check.verdict == "pass", check
    assert BATCH * 1000 <= check.details["closed_after_ms"] < 1000
    assert report.exit_status == 0


def test_a_gateway_that_refuses_before_any_upstream_call() -> None:
    report = _check("fail_early", ["reasoning", "short-text"], ["openai-chat", "gemini"], ["whole"])
    _only(report, "upstream_not_called")
    for cell in report.cells:
        if cell.case == "reasoning":
            assert cell.upstream is None and cell.route == "fail_early"
            assert "without any call to the upstream" in cell.checks["http"].why
            assert [layer for _, layer in cell_verdicts(cell)] == ["http"]
        else:
            assert not cell.failed
    assert report.matrix["fail_early"]["clients"]["gemini"]["never_called"] == 1


def test_a_gateway_that_sends_one_model_of_its_own_still_reaches_every_case() -> None:
    # MLflow's AI Gateway, and many a company's, route by their own names and
    # send one fixed model upstream: the prompt names the cell, and the mock
    # reads it there, for every protocol (the model in the body or the path),
    # for a follow-up request and for a unary one, cells running side by side.
    seen: list[dict[str, Any]] = []
    report = _check(
        "fixed_model",
        ["short-text", "parallel-tools", "usage", "tool-error-result"],
        ("openai-chat", "anthropic", "gemini", "bedrock-converse"),
        deliveries=["whole"],
        unary=True,
        model="our-default",
        seen=seen,
    )
    assert report.cells and not [c.as_dict() for c in report.cells if c.failed or c.degraded]
    assert {c.delivery for c in report.cells} == {"whole", "unary"}
    assert seen and {e["model"] for e in seen} == {FIXED_MODEL}
    assert {e.get("case_from") for e in seen} == {"prompt"}
    assert {e["tag"] for e in seen} >= {c.evidence["tag"] for c in report.cells}


@pytest.mark.timed
def test_a_gateway_that_blocks_while_a_whole_answer_waits_is_head_of_line_blocked() -> None:
    # claude-code-proxy 0.1.5 called its upstream for a stream: false request
    # with a synchronous client on its event loop: a stream beside it got
    # nothing for as long as the upstream took. The hop runs in a process of
    # its own (it blocks its loop), the mock and the kit in this one.
    async def go() -> Report:
        async with MockUpstream() as mock:
            hop = await asyncio.create_subprocess_exec(
                sys.executable,
                str(Path(__file__).parent / "kit_hops.py"),
                mock.url,
                "block_unary",
                stdout=asyncio.subprocess.PIPE,
            )
            try:
                assert hop.stdout is not None
                line = (await asyncio.wait_for(hop.stdout.readline(), 30)).decode()
                assert line.startswith("listening on "), line
                plan = CheckPlan(
                    routes=[Route(line.split()[-1], label="block_unary", key_passthrough=True)],
                    clients=("openai-chat", "anthropic", "gemini"),
                    cases=("head-of-line", "short-text"),
                    deliveries=("whole",),
                    unary=True,
                    mock_url=mock.url,
                    read_timeout=8.0,
                )
                return build_report(await run_check(plan))
            finally:
                hop.kill()
                await hop.wait()

    report = asyncio.run(go())
    _only(report, "head_of_line_blocked")
    blocked = [c for c in report.cells if c.case == "head-of-line"]
    assert len(blocked) == 3 and all(c.failed for c in blocked), report.verdicts
    for cell in blocked:
        details = cell.checks["head_of_line"].details
        # Held as long as the answer beside it waited, not a few milliseconds.
        assert details["first_content_ms"] >= details["overlap_ms"] * 0.9, details
        assert "held behind a non-streaming request" in cell.checks["head_of_line"].why
    # The other cells, unary ones included, are the gateway's ordinary answers.
    assert not [c.as_dict() for c in report.cells if c.case != "head-of-line" and c.failed]


@pytest.mark.timed
def test_a_hop_that_holds_a_call_s_arguments() -> None:
    report = _check("hold_arguments", ["chunked-json-args", "single-tool"], deliveries=["paced"])
    _only(report, "arguments_buffered")
    assert report.matrix["hold_arguments"]["clients"]["openai-chat"]["arguments_streamed"] is False
    for cell in report.cells:
        assert cell.checks["tool_calls"].verdict == "pass"


@pytest.mark.timed
def test_a_hop_that_sends_the_text_only_once_it_is_complete_is_not_streaming() -> None:
    # The text arrives as one event after the mock's last text write, before
    # its closing events (the end, usage): held, judged against the last
    # content, not the last write of any kind (that made it a late stream).
    report = _check("hold_text", ["short-text", "long-text"], deliveries=["paced"])
    _only(report, "not_streaming")
    for cell in report.cells:
        streaming = cell.checks["streaming"]
        assert "held" in streaming.tags and streaming.details["firm"], streaming
        assert streaming.details["first_content_after_last_content_ms"] >= 0
        assert cell.checks["deltas"].verdict == "pass"


@pytest.mark.timed
def test_a_hop_that_drops_the_reasoning_and_streams_the_text_is_not_held() -> None:
    # The text it streams came right after the mock wrote it: held is judged
    # on the kinds the client received (LiteLLM to a Gemini client does this).
    report = _check("drop_reasoning", ["reasoning"], deliveries=["paced"])
    _only(report, "reasoning_dropped")
    for cell in report.cells:
        assert "held" not in cell.checks["streaming"].tags, cell.checks["streaming"]


@pytest.mark.timed
def test_what_keep_alives_broke_is_theirs_alone() -> None:
    # The text, the usage and the ending all go with the stream the keep-alive
    # ended; short-text, the same but for the keep-alives, passes: one cause.
    report = _check("keepalive_kills", ["keepalive", "short-text"], ["openai-chat", "gemini"])
    _only(report, "keepalive_broke_stream")
    for cell in report.cells:
        if cell.case == "keepalive":
            layers = {layer for _, layer in cell_verdicts(cell, None)} | set(cell.failing)
            assert {"deltas", "completion"} <= layers, cell.as_dict()
        else:
            assert not cell.failed


def test_a_responses_bridge_completing_with_status_incomplete_is_truncated() -> None:
    report = _check("completed_incomplete", ["truncated"], ["openai-responses"], ["whole"])
    (cell,) = report.cells
    assert not cell.failed, cell.as_dict()
    assert cell.checks["completion"].verdict == "pass"
    assert report.exit_status == 0


def test_a_hop_that_drops_cached_tokens_is_usage_incomplete_and_nothing_else() -> None:
    clients = ("openai-chat", "openai-responses", "anthropic", "gemini")
    report = _check("drop_cached", ["usage", "short-text"], clients, ["whole"])
    _only(report, "usage_incomplete")
    failed = {(c.case, c.client) for c in report.cells if c.failed}
    assert failed == {("usage", client) for client in clients}
    for cell in report.cells:
        if cell.failed:
            assert cell.failing == ["usage"], cell.as_dict()
            assert "cache read: the upstream's 1000 did not arrive" in cell.checks["usage"].why


def test_a_hop_that_drops_the_request_id_is_request_id_lost_and_nothing_else() -> None:
    clients = ("openai-chat", "anthropic", "gemini", "bedrock-converse")
    report = _check("drop_request_id", ["short-text", "in-stream-error"], clients, ["whole"])
    _only(report, "request_id_lost")
    for cell in report.cells:
        if cell.client == "gemini":  # Gemini's API has no request id to lose
            assert cell.checks["request_id"].verdict == "not_applicable", cell.as_dict()
        else:
            assert cell.failing == ["request_id"], cell.as_dict()
            assert "reached the client in no header" in cell.checks["request_id"].why


def test_a_hop_that_streams_a_whole_answer_is_non_streaming_broken_and_nothing_else() -> None:
    clients = ("openai-chat", "openai-responses")
    cases = ["short-text", "single-tool", "tool-error-result", "usage", "in-stream-error"]
    report = _check("force_stream", cases, clients, ["whole"], unary=True)
    _only(report, "non_streaming_broken")
    failed = {(c.case, c.client, c.delivery) for c in report.cells if c.failed}
    assert failed == {(case, client, "unary") for case in cases for client in clients}
    for cell in report.cells:
        if cell.failed:
            assert cell.failing[0] == "framing", cell.as_dict()
            assert "not application/json" in cell.checks["framing"].why, cell.as_dict()
    for pair in report.matrix["force_stream"]["clients"].values():
        assert pair["streaming"]["status"] == "pass"
        assert pair["non_streaming"] == {"status": "fail", "cells": 5, "failed": 5}


def _cells(report: Report) -> list[dict[str, Any]]:
    return [c.as_dict() for c in report.cells]


def test_a_hop_s_own_error_page_is_judged_as_the_error_not_as_a_lost_request_id() -> None:
    # varnish and mitmproxy relay request ids on every answer they relay; their
    # own 502 page relays no upstream answer, hence no id: the page is the finding.
    report = _check("bad_gateway_usage", ["usage", "short-text"], ("openai-chat",), ["whole"])
    cells = {c.case: c for c in report.cells}
    page = cells["usage"]
    assert page.failed and "request_id" not in page.failing, page.as_dict()
    assert page.checks["request_id"].verdict == "not_applicable"
    assert "hop's own error page (HTTP 502" in page.checks["request_id"].why
    assert "request_id_lost" not in _names(report)
    assert not cells["short-text"].failed


def test_a_hop_that_calls_the_upstream_and_answers_nothing_is_response_dropped() -> None:
    report = _check("close_usage", ["usage", "short-text"], ("openai-chat",), ["whole"])
    assert {v["name"] for v in report.verdicts if v["cases"] == ["usage"]} >= {"response_dropped"}
    assert "gateway_unreachable" not in _names(report)
    cells = {c.case: c for c in report.cells}
    assert cells["usage"].checks["http"].tags == ("dropped",)
    assert "though the gateway called the upstream" in cells["usage"].checks["http"].why
    assert not cells["short-text"].failed
