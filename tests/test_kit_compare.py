"""Two runs compared (``streamwire compare``, ``check --against``): each change once, both values.

Ground truth is a hop of our own in two versions: the honest relay, then
one that differs in one fact (an event count, an order, an error type, a
status, usage dropped, a streaming regression). Each comparison reports
exactly the changes that fact makes, with both values; identical runs
compare clean, run after run (their times reported only); an accepted change
stops failing the gate, and only that one.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest

from kit_hops import Hop
from streamwire.kit.cli import main as kit_main
from streamwire.kit.report.compare import (
    Comparison,
    accept,
    compare,
    facts,
    load_accepted,
    render_text,
)
from streamwire.kit.report.document import build_report
from streamwire.kit.run.check import CheckPlan, Route, run_check
from streamwire.kit.upstream.mock import MockUpstream
from streamwire.kit.vocab.cases import CASES as KIT_CASES

CASES = ("short-text", "single-tool", "usage", "in-stream-error")
CLIENTS = ("openai-chat", "anthropic")


def _run(
    behaviour: str,
    cases: Sequence[str] = CASES,
    deliveries: Sequence[str] = ("whole",),
) -> dict[str, Any]:
    async def go() -> dict[str, Any]:
        async with MockUpstream() as mock, Hop(mock.url, behaviour) as hop:
            plan = CheckPlan(
                # The same label in every run: the hop's port changes, the route does not.
                routes=[Route(hop.url, label="gateway", key_passthrough=True)],
                clients=CLIENTS,
                cases=cases,
                deliveries=deliveries,
                unary=False,
                mock_url=mock.url,
            )
            report = build_report(await run_check(plan), routes=[{"label": "gateway"}])
            data: dict[str, Any] = json.loads(json.dumps(report.as_dict(), default=str))
            return data

    return asyncio.run(go())


@pytest.fixture(scope="module")
def honest() -> dict[str, Any]:
    return _run("pass")


def _gated(comparison: Comparison) -> set[tuple[str, str]]:
    return {(c.cell, c.what) for c in comparison.regressions}


def test_identical_runs_compare_clean_run_after_run(honest: dict[str, Any]) -> None:
    for _ in range(3):
        again = _run("pass")
        comparison = compare(honest, again)
        # The clock's own facts (time to first content, in all) may move on a
        # busy machine (a CI run saw 24 ms become 339 ms): reported, never
        # gated, and nothing else may change.
        changed = [c.as_dict() for c in comparison.changes if c.kind != "timing"]
        assert changed == [], changed
        assert all(not c.gated for c in comparison.changes)
        assert comparison.matched == len(honest["cells"]) and comparison.exit_status == 0


@pytest.mark.parametrize(
    ("behaviour", "expected"),
    [
        # More events, the same text: nothing fails, the count changed.
        (
            "split_text",
            {
                (f"{case} {client} gateway whole", "fact events")
                for case in CASES
                for client in CLIENTS
                if any(len(t) > 1 for t in KIT_CASES[case].text)
            },
        ),
        # The same facts in another order (Anthropic's usage before a call's end:
        # a text block's end is no unified event, a call's is).
        ("late_block_stop", {("single-tool anthropic gateway whole", "fact order")}),
        # The error's type lost: the fact, the completion layer, the verdict.
        (
            "retype_error",
            {
                *((f"in-stream-error {c} gateway whole", "fact error") for c in CLIENTS),
                *((f"in-stream-error {c} gateway whole", "layer completion") for c in CLIENTS),
                *((f"gateway {c}", "verdict error_masked") for c in CLIENTS),
            },
        ),
    ],
)
def test_a_hop_that_changed_one_fact_is_reported_exactly(
    honest: dict[str, Any], behaviour: str, expected: set[tuple[str, str]]
) -> None:
    comparison = compare(honest, _run(behaviour))
    got = _gated(comparison)
    assert got == expected, [c.as_dict() for c in comparison.regressions]
    # Once each, both values given.
    assert len(comparison.regressions) == len(got)
    for change in comparison.regressions:
        assert change.old != change.new
        if change.what.startswith("fact"):
            assert change.old is not None and change.new is not None


def test_a_status_and_dropped_usage_are_each_their_own_change(honest: dict[str, Any]) -> None:
    refused = compare(honest, _run("refuse_usage"))
    statuses = [c for c in refused.regressions if c.what == "fact status"]
    assert {(c.cell, c.old, c.new) for c in statuses} == {
        (f"usage {client} gateway whole", 200, 503) for client in CLIENTS
    }
    dropped = compare(honest, _run("drop_usage"))
    usage = [c for c in dropped.regressions if c.what == "fact usage"]
    assert [(c.cell, c.old, c.new) for c in usage] == [
        ("usage openai-chat gateway whole", True, False)
    ]
    assert all(c.cell.split()[1] == "openai-chat" for c in dropped.regressions)


@pytest.mark.timed
def test_a_streaming_regression_is_a_layer_and_a_verdict() -> None:
    cases = ("short-text",)
    before = _run("pass", cases, ("paced",))
    after = _run("hold", cases, ("paced",))
    comparison = compare(before, after)
    whats = {c.what for c in comparison.regressions}
    assert "layer streaming" in whats and "verdict not_streaming" in whats, whats
    layer = next(c for c in comparison.regressions if c.what == "layer streaming")
    assert (layer.old, layer.new) == ("pass", "fail")
    # ... and the other way round, the fix.
    back = compare(after, before)
    assert back.regressions == [] or all(c.kind != "regressed" for c in back.regressions)
    assert any(c.kind == "fixed" and c.what == "layer streaming" for c in back.changes)
    assert any(c.kind == "gone" and c.what == "verdict not_streaming" for c in back.changes)


def test_an_accepted_change_stops_failing_and_only_that_one(honest: dict[str, Any]) -> None:
    after = _run("retype_error")
    comparison = compare(honest, after)
    first, *rest = comparison.regressions
    text = json.dumps(
        {"accepted": [{"cell": first.cell, "what": first.what, "reason": "the new mapping"}]}
    )
    again = compare(honest, after, load_accepted(text))
    assert [(c.cell, c.what) for c in again.regressions] == [(c.cell, c.what) for c in rest]
    assert [(c.cell, c.what) for c in again.accepted_changes] == [(first.cell, first.what)]
    # Accepting them all, with a reason, makes the gate pass.
    every = accept(comparison, "LiteLLM 1.110 types its errors")
    assert compare(honest, after, load_accepted(every)).exit_status == 0
    with pytest.raises(ValueError, match="reason"):
        load_accepted(json.dumps({"accepted": [{"cell": "x", "what": "y"}]}))
    with pytest.raises(ValueError, match="reason"):
        accept(comparison, " ")


def test_missing_and_new_cells_and_routes_matched_by_position(honest: dict[str, Any]) -> None:
    fewer = {**honest, "cells": honest["cells"][1:]}
    comparison = compare(honest, fewer)
    (missing,) = comparison.regressions
    assert missing.kind == "missing" and missing.cell.startswith(honest["cells"][0]["case"])
    assert [c.kind for c in compare(fewer, honest).changes] == ["new"]

    # A route named by its host: a restart's new port is the same route.
    def moved(report: dict[str, Any], label: str) -> dict[str, Any]:
        cells = [{**c, "route": label} for c in report["cells"]]
        verdicts = [{**v, "route": label} for v in report["verdicts"]]
        routes = [{"label": label, "base_url": "http://" + label, "model": "{model}"}]
        return {**report, "cells": cells, "verdicts": verdicts, "routes": routes}

    assert compare(moved(honest, "127.0.0.1:4001"), moved(honest, "127.0.0.1:4002")).changes == []


def test_hostile_reports_compare_without_raising() -> None:
    for old, new in (
        ({}, {}),
        ({"cells": [None, 3, {"layers": []}]}, {"cells": [{"evidence": {"client": []}}]}),
        (
            {"cells": [{"case": "a", "evidence": {"client": {"unified_events": {"sample": 5}}}}]},
            {"cells": [{"case": "a", "evidence": "x"}]},
        ),
    ):
        comparison = compare(old, new)
        json.dumps(comparison.as_dict(), default=str)
        comparison.markdown()
    assert facts({})["events"] is None


def test_the_command_gates_accepts_and_writes_a_comment(
    honest: dict[str, Any], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    old, new = tmp_path / "old.json", tmp_path / "new.json"
    old.write_text(json.dumps(honest))
    new.write_text(json.dumps(_run("retype_error")))
    md, out = tmp_path / "comment.md", tmp_path / "compare.json"
    assert kit_main(["compare", str(old), str(new), "--markdown", str(md), "--json", str(out)]) == 1
    assert "regressions" in capsys.readouterr().out
    comment = md.read_text()
    assert comment.startswith("### streamwire compare: regressions")
    assert "| `in-stream-error openai-chat gateway whole` | fact error |" in comment
    assert len(comment) < 10_000
    document = json.loads(out.read_text())
    assert document["format"] == "streamwire-compare/1" and document["exit_status"] == 1
    accepted, baseline = tmp_path / "accepted.json", tmp_path / "baseline.json"
    assert kit_main(["compare", str(old), str(new), "--accept", "--accepted", str(accepted)]) == 2
    assert (
        kit_main(
            [
                "compare",
                str(old),
                str(new),
                "--accept",
                "--accepted",
                str(accepted),
                "--reason",
                "intended",
                "--baseline-out",
                str(baseline),
            ]
        )
        == 0
    )
    assert json.loads(baseline.read_text()) == json.loads(new.read_text())
    assert kit_main(["compare", str(old), str(new), "--accepted", str(accepted)]) == 0
    assert kit_main(["compare", str(baseline), str(new)]) == 0
    assert kit_main(["compare", str(tmp_path / "none.json"), str(new)]) == 2


def _free_port() -> int:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


def test_check_against_an_earlier_report_gates_on_the_comparison(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    def check(*extra: str) -> int:
        port = _free_port()
        return kit_main(
            [
                "check",
                f"http://127.0.0.1:{port}",
                "--mock-port",
                str(port),
                "--client",
                "openai-chat",
                "--cases",
                "short-text,usage",
                "--delivery",
                "whole",
                "--no-unary",
                "--label",
                "direct",
                "--transport",
                "http1",
                "--quiet",
                *extra,
            ]
        )

    first = tmp_path / "first.json"
    assert check("--json", str(first), "--gateway", "mock@1") == 0
    summary = json.loads(first.read_text())["summary"]
    assert summary["gateway"] == "mock@1" and summary["time"]
    capsys.readouterr()
    assert check("--against", str(first)) == 0
    assert "streamwire compare: 2 cells matched; no change" in capsys.readouterr().out
    # An earlier report in which the usage case was refused: the run "fixed" it.
    old = json.loads(first.read_text())
    for cell in old["cells"]:
        if cell["case"] == "usage":
            cell["layers"]["usage"] = "fail"
    edited = tmp_path / "edited.json"
    edited.write_text(json.dumps(old))
    assert check("--against", str(edited)) == 0
    assert "fixed:" in capsys.readouterr().out
    assert check("--against", str(tmp_path / "nothing.json")) == 2


def test_events_a_clock_decided_are_timed_and_others_not() -> None:
    # The client's hang-up, and a retry case's first attempt breaking off
    # mid-stream: how many events came first is the clock's (a LiteLLM run
    # passed the broken attempt's text on in one run, not in the next).
    def report(count: int) -> dict[str, Any]:
        sample = [{"event": "MessageStarted"}, *([{"event": "TextDelta"}] * (count - 2))]
        cells = [
            {
                "case": case,
                "client": "openai-chat",
                "route": "gateway",
                "delivery": "whole",
                "layers": {},
                "evidence": {
                    "client": {
                        "unified_events": {
                            "count": count,
                            "sample": [*sample, {"event": "MessageCompleted"}],
                        }
                    }
                },
            }
            for case in ("cancel", "retry-after-text", "retry-before-output", "short-text")
        ]
        return {"cells": cells, "routes": [{"label": "gateway"}]}

    comparison = compare(report(5), report(2))
    timed = {(c.cell.split(" ")[0], c.what): c.timed for c in comparison.changes}
    for case in ("cancel", "retry-after-text"):
        assert timed[case, "fact events"] and timed[case, "fact order"], timed
    for case in ("retry-before-output", "short-text"):
        assert not timed[case, "fact events"] and not timed[case, "fact order"], timed


# --- what a clock decides is never gated, as a class -----------------------------------


def _cell(case: str, **client: Any) -> dict[str, Any]:
    """A cell of a report as a run writes it, with the client's side given."""
    record = {
        k: client.pop(k) for k in ("status", "completion", "stop_reason", "usage") if k in client
    }
    count = client.pop("events", 5)
    sample = [{"event": "MessageStarted"}, *([{"event": "TextDelta"}] * max(0, count - 1))]
    layers = client.pop("layers", {"http": "pass", "cancel": "pass"})
    notes = client.pop("notes", {})
    return {
        "case": case,
        "client": "openai-chat",
        "route": "gateway",
        "delivery": "paced",
        "inconclusive": client.pop("inconclusive", False),
        "layers": layers,
        "evidence": {
            "layers": notes,
            "record": record,
            "client": {**client, "unified_events": {"count": count, "sample": sample}},
        },
    }


def _report(*cells: dict[str, Any], verdicts: Sequence[dict[str, Any]] = ()) -> dict[str, Any]:
    return {"cells": list(cells), "verdicts": list(verdicts), "routes": [{"label": "gateway"}]}


def test_a_cancel_cell_whose_client_hung_up_on_its_timer_before_the_head_is_not_gated() -> None:
    # A busy gateway's head came after the client's 1 s timer: the client saw no
    # status, no completion and no event (LiteLLM in a loaded CI run).
    deltas = _cell(
        "cancel",
        status=200,
        completion="cancelled",
        events=5,
        cancel_reason="deltas",
        cancelled_at=0.4,
        times={"headers": 0.2},
    )
    timer = _cell(
        "cancel",
        status=None,
        completion=None,
        events=0,
        cancel_reason="timer",
        cancelled_at=1.0,
        times={"headers": None},
    )
    comparison = compare(_report(deltas), _report(timer))
    changed = {c.what: c for c in comparison.changes}
    assert {"fact status", "fact completion", "fact events"} <= set(changed), changed
    assert comparison.regressions == [] and comparison.exit_status == 0
    for what in ("fact status", "fact completion", "fact events"):
        assert changed[what].timed and "hung up on its timer" in changed[what].reason
    assert {c.what for c in comparison.timed_changes} >= {"fact status", "fact completion"}
    text = compare_text(comparison)
    assert "decided by a clock (not gated)" in text and "before the response head" in text
    # Both ways, and only what the hang-up decided: the cancel layer is the mock's log.
    back = compare(_report(timer), _report(deltas))
    assert back.exit_status == 0
    worse = _cell(
        "cancel",
        status=None,
        completion=None,
        events=0,
        cancel_reason="timer",
        cancelled_at=1.0,
        times={"headers": None},
        layers={"http": "pass", "cancel": "fail"},
        notes={"cancel": {"verdict": "fail", "tags": ["kept_open"]}},
    )
    gated = compare(_report(deltas), _report(worse))
    assert _gated(gated) == {("cancel openai-chat gateway paced", "layer cancel")}
    # --gate-timing gates them all the same.
    assert compare(_report(deltas), _report(timer), gate_timing=True).exit_status == 1


def test_a_cancel_cell_that_hung_up_on_its_deltas_both_times_keeps_its_facts_gated() -> None:
    one = _cell("cancel", status=200, completion="cancelled", cancel_reason="deltas")
    other = _cell("cancel", status=502, completion="cancelled", cancel_reason="deltas")
    assert _gated(compare(_report(one), _report(other))) == {
        ("cancel openai-chat gateway paced", "fact status")
    }


def _streaming(verdict: str, tags: list[str], margin_ms: float | None, firm: bool) -> dict:
    return {"streaming": {"verdict": verdict, "tags": tags, "margin_ms": margin_ms, "firm": firm}}


def test_a_timed_finding_near_its_bound_is_timed_and_a_firm_one_gates() -> None:
    ok = _cell("short-text", layers={"streaming": "pass"}, status=200)
    # Delayed by 76 ms past the 50 ms bound: a loaded machine moves that.
    late = _cell(
        "short-text",
        layers={"streaming": "degraded"},
        notes=_streaming("degraded", ["delayed"], 76.0, False),
        status=200,
    )
    # Held whole: the first content seconds after the mock's last write (Kong 3.8 -> 3.9).
    held = _cell(
        "short-text",
        layers={"streaming": "fail"},
        notes=_streaming("fail", ["held"], 2950.0, True),
        status=200,
    )
    near = compare(_report(ok), _report(late))
    (change,) = near.changes
    assert change.timed and "too near its bound" in change.reason and near.exit_status == 0
    far = compare(_report(ok), _report(held))
    assert _gated(far) == {("short-text openai-chat gateway paced", "layer streaming")}
    for _ in range(3):  # every time
        assert compare(_report(ok), _report(held)).exit_status == 1


def _verdict(name: str, cases: list[str], timed: list[str], client: str = "openai-chat") -> dict:
    return {
        "name": name,
        "route": "gateway",
        "client": client,
        "cases": cases,
        "timed_cases": timed,
    }


def test_a_verdict_only_clocks_raised_is_timed_added_or_gone() -> None:
    cell = _cell("short-text", status=200)
    delayed = _verdict("stream_delayed", ["short-text"], ["short-text"])
    added = compare(_report(cell), _report(cell, verdicts=[delayed]))
    (change,) = added.changes
    assert change.kind == "added" and change.timed and added.exit_status == 0
    gone = compare(_report(cell, verdicts=[delayed]), _report(cell))
    assert [c.kind for c in gone.changes] == ["gone"] and gone.changes[0].timed
    # A verdict with a firm case gates when it is added.
    masked = _verdict("error_masked", ["short-text"], [])
    assert compare(_report(cell), _report(cell, verdicts=[masked])).exit_status == 1


def test_an_inconclusive_cell_is_not_compared() -> None:
    # A slow reader cut by the kit's own timeout: 6,136 events, then 7,738.
    a = _cell("slow-reader", events=6136, status=200)
    b = _cell("slow-reader", events=7738, status=200, inconclusive=True)
    comparison = compare(_report(a), _report(b))
    assert [(c.kind, c.what) for c in comparison.changes] == [("inconclusive", "inconclusive")]
    assert comparison.exit_status == 0
    assert "inconclusive (not compared)" in compare_text(comparison)


def test_cells_and_verdicts_the_old_run_did_not_have_are_new() -> None:
    cell = _cell("short-text", status=200)
    sdk = {**_cell("short-text", status=200), "client": "openai-chat via openai"}
    limit = _verdict("sdk_incompatible", ["short-text"], [], client="openai-chat via openai")
    comparison = compare(_report(cell), _report(cell, sdk, verdicts=[limit]))
    kinds = {(c.kind, c.what) for c in comparison.changes}
    assert kinds == {("new", "new"), ("new", "verdict sdk_incompatible")}
    assert comparison.exit_status == 0
    assert "new verdicts" in compare_text(comparison)


def test_a_verdict_raised_only_in_a_delivery_the_old_run_did_not_have_is_new() -> None:
    # The SDK cells gained a paced delivery: its verdict is no regression of the
    # pair, whose whole cell of the same case passes in both runs; a verdict in
    # that whole cell still gates.
    client = "openai-chat via openai"
    whole = {**_cell("short-text", status=200), "client": client, "delivery": "whole"}
    held = {
        **_cell("short-text", status=200, layers={"streaming": "fail"}),
        "client": client,
    }
    found = _verdict("not_streaming", ["short-text"], [], client=client)
    comparison = compare(_report(whole), _report(whole, held, verdicts=[found]))
    kinds = {(c.kind, c.what) for c in comparison.changes}
    assert kinds == {("new", "new"), ("new", "verdict not_streaming")}
    assert comparison.exit_status == 0
    broken = {**whole, "layers": {"streaming": "fail"}}
    assert compare(_report(whole), _report(broken, verdicts=[found])).exit_status == 1


def test_repeated_runs_compare_their_outcome_sets() -> None:
    def repeated(*outcomes: str) -> dict[str, Any]:
        worst = "fail" if "fail" in outcomes else "pass"
        cell = _cell("in-stream-error", layers={"completion": worst}, status=200)
        cell["repeat"] = {
            "count": len(outcomes),
            "runs": [{"layers": {"completion": o}, "inconclusive": False} for o in outcomes],
        }
        return cell

    steady = repeated("pass", "pass", "pass")
    flaky = repeated("pass", "fail", "pass")
    worse = compare(_report(steady), _report(flaky))
    assert _gated(worse) == {("in-stream-error openai-chat gateway paced", "layer completion")}
    # The same outcomes in another order are the same set.
    assert compare(_report(flaky), _report(repeated("fail", "pass", "pass"))).changes == []
    assert compare(_report(flaky), _report(steady)).changes[0].kind == "fixed"


def compare_text(comparison: Comparison) -> str:
    return render_text(comparison) + comparison.markdown()


# --- the terminal and the comment: each regression whole, the rest grouped ------------


def _many(count: int, client: str = "openai-chat", **client_side: Any) -> list[dict[str, Any]]:
    """``count`` cells of one client, each its own case, as ``_cell`` makes them."""
    cells = []
    for i in range(count):
        cell = _cell(f"case-{i}", status=200, **dict(client_side))
        cells.append({**cell, "client": client})
    return cells


def _times(cells: list[dict[str, Any]], ttft: float, total: float) -> list[dict[str, Any]]:
    for cell in cells:
        cell["evidence"]["record"].update(ttft=ttft, total=total)
    return cells


def _of_kind(comparison: Comparison, kind: str) -> list[Any]:
    return [c for c in comparison.changes if c.kind == kind]


def _lines(text: str, *words: str) -> list[str]:
    return [line for line in text.splitlines() if all(w in line for w in words)]


def test_many_timing_changes_are_a_few_lines_with_the_spread() -> None:
    # A loaded machine: every cell's times moved (a LiteLLM comparison listed 60 lines).
    before = _report(*_times(_many(40), 0.1, 0.2))
    after = _report(*_times(_many(40), 0.9, 1.2))
    comparison = compare(before, after)
    assert len(_of_kind(comparison, "timing")) == 80 and comparison.exit_status == 0
    text = render_text(comparison)
    assert len(text.splitlines()) <= 5, text
    (ttft,) = _lines(text, "time ttft")
    assert "in 40 cells" in ttft and "median 0.10 s -> 0.90 s" in ttft, ttft
    (total,) = _lines(text, "time total")
    assert "median 0.20 s -> 1.20 s" in total and "40 cases" in total, total
    assert _lines(text, "case-7") == []
    comment = comparison.markdown()
    assert len(_lines(comment, "time ")) == 2 and "case-7" not in comment, comment
    # Every change is still in the JSON.
    document = comparison.as_dict()
    assert sum(c["kind"] == "timing" for c in document["changes"]) == 80


def test_a_new_verdict_in_several_cells_is_one_line_with_the_count() -> None:
    # A new SDK column: the same verdict for each SDK client, in cells the old run did not have.
    sdks = ("openai-chat via openai", "anthropic via anthropic", "gemini via google-genai")
    held = [cell for sdk in sdks for cell in _many(2, sdk, layers={"streaming": "fail"})]
    found = [_verdict("not_streaming", ["case-0", "case-1"], [], client=sdk) for sdk in sdks]
    comparison = compare(_report(), _report(*held, verdicts=found))
    assert len(_of_kind(comparison, "new")) == 9 and comparison.exit_status == 0
    text = render_text(comparison)
    (line,) = _lines(text, "not_streaming")
    assert "in 3 (route, client) pairs" in line and "3 SDK clients" in line, line
    assert "in cells the old run did not judge" in line
    (cells,) = _lines(text, "the old run did not have")
    assert cells.strip().startswith("6 cells"), cells
    assert len(_lines(comparison.markdown(), "not_streaming")) == 1


def test_alike_fixes_are_one_line_and_a_lone_one_is_whole() -> None:
    broken = _report(*_many(5, layers={"streaming": "fail"}), _cell("x", layers={"usage": "fail"}))
    mended = _report(*_many(5, layers={"streaming": "pass"}), _cell("x", layers={"usage": "pass"}))
    text = render_text(compare(broken, mended))
    (streaming,) = _lines(text, "layer streaming")
    assert 'layer streaming: "fail" -> "pass" in 5 cells' in streaming, text
    (usage,) = _lines(text, "layer usage")
    assert usage.strip() == 'x openai-chat gateway paced: layer usage: "fail" -> "pass"'


def test_regressions_are_still_listed_cell_by_cell() -> None:
    good = _report(*_many(12, layers={"streaming": "pass"}))
    bad = _report(*_many(12, layers={"streaming": "fail"}))
    comparison = compare(good, bad)
    assert len(comparison.regressions) == 12 and comparison.exit_status == 1
    text = render_text(comparison)
    for i in range(12):
        (line,) = _lines(text, f"case-{i} openai-chat gateway paced:")
        assert line.endswith('layer streaming: "pass" -> "fail"'), line
    comment = comparison.markdown()
    assert len(_lines(comment, "| `case-", "| layer streaming |")) == 12, comment


def test_verbose_lists_each_change_again(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    old, new = tmp_path / "old.json", tmp_path / "new.json"
    old.write_text(json.dumps(_report(*_times(_many(20), 0.1, 0.2))))
    new.write_text(json.dumps(_report(*_times(_many(20), 0.9, 1.2))))
    assert kit_main(["compare", str(old), str(new)]) == 0
    terse = capsys.readouterr().out
    assert len(_lines(terse, "time total")) == 1 and "--verbose" in terse
    assert kit_main(["compare", str(old), str(new), "--verbose"]) == 0
    verbose = capsys.readouterr().out
    assert len(_lines(verbose, "time total: 0.2 -> 1.2")) == 20, verbose
    assert len(_lines(verbose, "time ttft: 0.1 -> 0.9")) == 20
    assert "grouped" not in verbose
