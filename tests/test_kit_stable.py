"""The gate holds on a busy machine: what a clock decides is never gated, and a flaky cell is named.

Hops of our own (``kit_hops.py``): ``close_quarter`` closes the upstream
250 ms after the client hangs up (within the cancel bound: a pass);
``late_head`` sends every answer on after a delay drawn anew each time
from 0.5-1.5 s (a busy gateway: the cancel case's 1 s timer fires before or
after the head by chance, and with it the client's status, completion and
events); ``fail_every_second`` cuts every second stream of each cell (a
race: ``--repeat`` finds it, one run cannot); ``pass``, honest. An honest
hop's run compared with its own earlier run passes the gate, however busy
the machine; the flaky one fails every repeated run.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import multiprocessing
import os
from collections.abc import Iterator, Sequence
from typing import Any

import pytest

from kit_hops import Hop
from streamwire.kit.report.compare import compare, render_text
from streamwire.kit.report.document import build_report
from streamwire.kit.run.check import CheckPlan, Route, run_check
from streamwire.kit.upstream.mock import MockUpstream

CASES = ("short-text", "cancel", "usage", "in-stream-error", "single-tool")
CLIENTS = ("openai-chat", "anthropic")


def _check(behaviours: Sequence[str], *, repeat: int = 1) -> dict[str, Any]:
    """One check of each hop (a route each, labelled by its behaviour), as JSON."""

    async def go() -> dict[str, Any]:
        async with contextlib.AsyncExitStack() as stack:
            mock = await stack.enter_async_context(MockUpstream())
            hops = [await stack.enter_async_context(Hop(mock.url, b)) for b in behaviours]
            plan = CheckPlan(
                routes=[
                    Route(hop.url, label=b, key_passthrough=True)
                    for hop, b in zip(hops, behaviours, strict=True)
                ],
                clients=CLIENTS,
                cases=CASES,
                deliveries=("whole",),
                unary=False,
                mock_url=mock.url,
                read_timeout=10.0,
                repeat=repeat,
            )
            report = build_report(await run_check(plan), routes=[{"label": b} for b in behaviours])
            data: dict[str, Any] = json.loads(json.dumps(report.as_dict(), default=str))
            return data

    return asyncio.run(go())


def _spin() -> None:
    while True:
        pass


@contextlib.contextmanager
def _busy_cores() -> Iterator[None]:
    """A busy loop on every core, as a shared CI runner has."""
    spinners = [
        multiprocessing.get_context("spawn").Process(target=_spin, daemon=True)
        for _ in range(os.cpu_count() or 1)
    ]
    for proc in spinners:
        proc.start()
    try:
        yield
    finally:
        for proc in spinners:
            proc.terminate()
            proc.join()


def test_a_hop_that_fails_every_second_stream_is_flaky_in_every_cell_and_fails_the_run() -> None:
    report = _check(["pass", "fail_every_second"], repeat=2)
    cells = {
        route: [c for c in report["cells"] if c["route"] == route] for route in report["matrix"]
    }
    flaky = cells["fail_every_second"]
    assert flaky and all(c["flaky"] for c in flaky), [c.get("repeat") for c in flaky]
    for cell in flaky:
        repeat = cell["repeat"]
        assert repeat["count"] == 2 and repeat["failed"] == 1, repeat
        assert [bool(run["failing"]) for run in repeat["runs"]] == [False, True], repeat
        assert "completion" in repeat["layers"], repeat["layers"]
    assert not any(c["flaky"] for c in cells["pass"]), [c["repeat"] for c in cells["pass"]]
    assert all(c["repeat"]["failed"] == 0 for c in cells["pass"])
    summary = report["summary"]
    assert summary["flaky"] == len(flaky) and summary["repeat"] == 2
    assert summary["exit_status"] == 1
    for client in CLIENTS:
        assert report["matrix"]["fail_every_second"]["clients"][client]["status"] == "flaky"
        assert report["matrix"]["pass"]["clients"][client]["status"] == "pass"
    # One run of each cell, the first, passes: only repeating it finds the race.
    once = _check(["fail_every_second"])
    assert once["summary"]["exit_status"] == 0, once["verdicts"]


@pytest.mark.timed
def test_honest_hops_compared_with_their_own_earlier_run_pass_the_gate_on_busy_cores() -> None:
    behaviours = ["pass", "close_quarter", "late_head"]
    baseline = _check(behaviours)
    # The late head may leave a cancel cell with nothing before its timer (held,
    # by the kit's clock) or its first deltas late: each said to be timed.
    for verdict in baseline["verdicts"]:
        assert verdict["route"] == "late_head", verdict
        assert verdict["name"] in ("not_streaming", "stream_delayed"), verdict
        assert verdict["timed_cases"] == verdict["cases"] == ["cancel"], verdict
    timed = 0
    with _busy_cores():
        for _ in range(3):
            comparison = compare(baseline, _check(behaviours))
            assert comparison.exit_status == 0, render_text(comparison)
            timed += len(comparison.timed_changes)
    # The late head's timer hang-ups were seen, and said so, not gated.
    print(f"{timed} clock-decided changes reported over three busy runs")
