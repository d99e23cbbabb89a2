"""Direct against proxied (``--path``): the same cells on two paths, compared hop by hop.

The comparison itself is held to cells made by hand, one difference each
(a later first event, fewer events, more reads, a layer's verdict): each is
reported exactly once with both values, and identical cells compare clean.
Then two real paths through hops of our own: an honest relay against a
batching one (haproxy's defaults) names the batching (its first events
late, the paced cells' streaming degraded, ``stream_delayed`` on that path
only) and nothing else, and two honest relays compare clean, run after run.
"""

from __future__ import annotations

import asyncio
import copy
import io
import json
from collections.abc import Sequence
from typing import Any

import pytest

from kit_hops import BATCH, Hop
from streamwire.kit.cli import main as kit_main
from streamwire.kit.judge.cell import LAYERS, Cell, Check
from streamwire.kit.report.document import Report, build_report
from streamwire.kit.report.html import write_html
from streamwire.kit.report.paths import NOISE, compare_paths, findings
from streamwire.kit.run.check import CheckPlan, Route, _interleaved, run_check
from streamwire.kit.upstream.mock import MockUpstream


def _cell(route: str, case: str = "short-text", **client: Any) -> Cell:
    evidence = {
        "time_to_headers": 0.010,
        "time_to_first_event": 0.020,
        "largest_gap": 0.030,
        "provider_events": {"count": 9},
        "raw": {"pieces": 9},
        **client,
    }
    checks = {layer: Check("pass") for layer in LAYERS}
    return Cell(case, "openai-chat", "openai-chat", "paced", checks, {"client": evidence}, route)


def _paths(a: Sequence[Cell], b: Sequence[Cell]) -> dict[str, Any]:
    result: dict[str, Any] = compare_paths([*a, *b], ["direct", "edge"])["paths"]["edge"]
    return result


def test_identical_paths_compare_clean() -> None:
    a = [_cell("direct", case) for case in ("short-text", "usage")]
    b = [_cell("edge", case) for case in ("short-text", "usage")]
    c = _paths(a, b)
    assert c["cells"] == 2 and c["unmatched"] == 0
    assert not any(t["changed"] for t in c["times"].values())
    assert c["fewer_events"]["cells"] == c["more_events"]["cells"] == 0
    assert c["layers"]["changes"] == []
    (lines,) = findings(compare_paths([*a, *b], ["direct", "edge"])).values()
    assert lines == [
        f"no difference in 2 cells (times within {NOISE * 1000:.0f} ms, "
        "the same events, the same verdicts)"
    ]


@pytest.mark.parametrize(
    ("change", "words"),
    [
        ({"time_to_first_event": 0.320}, "the first event +300 ms"),
        ({"time_to_headers": 0.210}, "the response head +200 ms"),
        ({"provider_events": {"count": 3}}, "fewer events (merged or dropped) in 1 of 1 cells"),
        ({"provider_events": {"count": 12}}, "more events (split or added) in 1 of 1 cells"),
        ({"raw": {"pieces": 2}}, "the body arrived in 0.222x the reads (paced: median of 1"),
    ],
)
def test_each_difference_is_reported_once_with_both_values(
    change: dict[str, Any], words: str
) -> None:
    comparison = compare_paths([_cell("direct"), _cell("edge", **change)], ["direct", "edge"])
    (lines,) = findings(comparison).values()
    assert len(lines) == 1 and lines[0].startswith(words), lines
    edge = comparison["paths"]["edge"]
    if "provider_events" in change:
        key = "fewer_events" if change["provider_events"]["count"] < 9 else "more_events"
        (example,) = edge[key]["examples"]
        assert example == {
            "cell": "short-text openai-chat paced",
            "reference": 9,
            "path": change["provider_events"]["count"],
        }


def test_a_layer_that_changed_names_both_verdicts_and_why() -> None:
    edge = _cell("edge")
    edge.checks["streaming"] = Check("fail", "held until the upstream finished", ("held",))
    comparison = compare_paths([_cell("direct"), edge], ["direct", "edge"])
    (change,) = comparison["paths"]["edge"]["layers"]["changes"]
    assert change == {
        "cell": "short-text openai-chat paced",
        "layer": "streaming",
        "reference": "pass",
        "path": "fail",
        "why": "held until the upstream finished",
    }
    (lines,) = findings(comparison).values()
    assert lines == [
        "streaming: pass -> fail in 1 cells (e.g. short-text openai-chat paced: "
        "held until the upstream finished)"
    ]


def test_hostile_evidence_is_skipped_not_raised() -> None:
    bad = _cell("edge", time_to_first_event="soon", provider_events=[1], raw=None)
    bad.evidence["client"]["largest_gap"] = True
    comparison = compare_paths([_cell("direct"), bad], ["direct", "edge"])
    assert comparison["paths"]["edge"]["times"]["first_event"]["cells"] == 0
    json.dumps(comparison)
    assert compare_paths([], []) == {"reference": None, "paths": {}}


def _two_paths(first: str, second: str) -> Report:
    async def go() -> Report:
        async with MockUpstream() as mock, Hop(mock.url, first) as a, Hop(mock.url, second) as b:
            plan = CheckPlan(
                routes=[
                    Route(a.url, label="direct", key_passthrough=True),
                    Route(b.url, label="edge", key_passthrough=True),
                ],
                clients=["openai-chat", "anthropic"],
                cases=["short-text", "single-tool"],
                deliveries=["whole", "paced"],
                unary=False,
                mock_url=mock.url,
            )
            return build_report(await run_check(plan), paths=["direct", "edge"])

    return asyncio.run(go())


@pytest.mark.timed
def test_a_batching_hop_against_an_honest_one_is_named_and_only_it() -> None:
    report = _two_paths("pass", "batch")
    assert report.paths is not None
    edge = report.paths["paths"]["edge"]
    assert edge["cells"] == 8 and edge["unmatched"] == 0
    # The batching holds each paced write up to 200 ms: the first event comes late.
    first = edge["times"]["first_event"]
    assert first["changed"] and 0.5 * BATCH <= first["most"] <= 1.5 * BATCH, first
    assert edge["fewer_events"]["cells"] == edge["more_events"]["cells"] == 0
    changed = {c["layer"] for c in edge["layers"]["changes"]}
    assert changed == {"streaming"}, edge["layers"]
    assert all(c["reference"] == "pass" for c in edge["layers"]["changes"])
    assert [v.split(" ")[0] for v in edge["verdicts_added"]] == ["stream_delayed"] * len(
        edge["verdicts_added"]
    )
    # Every rendering says it.
    assert "paths against direct" in _table(report)
    markdown = _markdown(report)
    assert "## Paths against `direct`" in markdown and "stream\\_delayed" in markdown
    html = _html(report)
    assert "Paths against <code>direct</code>" in html
    assert json.loads(json.dumps(report.as_dict(), default=str))["paths"]["reference"] == "direct"
    # The timelines put each client's two paths one above the other.
    lanes = html.split("<h3><code>short-text</code>")[1].split("</svg>")[0]
    order = [lanes.index(f"{route} ← openai-chat") for route in ("direct", "edge")]
    assert order == sorted(order)


@pytest.mark.timed
def test_two_honest_paths_compare_clean_run_after_run() -> None:
    for _ in range(3):
        report = _two_paths("pass", "pass")
        assert report.paths is not None
        (lines,) = findings(report.paths).values()
        assert lines[0].startswith("no difference in 8 cells"), lines


def _table(report: Report) -> str:
    out = io.StringIO()
    report.write_table(out, width=120)
    return out.getvalue()


def _markdown(report: Report) -> str:
    out = io.StringIO()
    report.write_markdown(out, "t")
    return out.getvalue()


def _html(report: Report) -> str:
    out = io.StringIO()
    write_html(report, out)
    return out.getvalue()


def test_path_arguments_are_checked(capsys: pytest.CaptureFixture[str]) -> None:
    assert (
        kit_main(["check", "--client", "openai-chat", "--path", "direct=http://127.0.0.1:9"]) == 2
    )
    assert "at least two paths" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        kit_main(["check", "--client", "openai-chat", "--path", "direct"])
    assert "NAME=URL" in capsys.readouterr().err


def test_the_cells_are_not_changed_by_the_comparison() -> None:
    cells = [_cell("direct"), _cell("edge", time_to_first_event=0.5)]
    before = copy.deepcopy([c.as_dict() for c in cells])
    compare_paths(cells, ["direct", "edge"])
    assert [c.as_dict() for c in cells] == before


def test_each_cell_runs_on_every_path_back_to_back() -> None:
    # Run path after path, the first path's cells meet a gateway still warming
    # up and the others do not: the comparison would blame a hop for the clock.
    routes = [Route(f"http://127.0.0.1:{port}", label=name) for port, name in ((1, "a"), (2, "b"))]
    plan = CheckPlan(
        routes=routes,
        clients=["openai-chat", "anthropic"],
        cases=["short-text", "single-tool", "cancel"],
        deliveries=["whole", "paced"],
    )
    keys = plan.keys()
    order = _interleaved(keys, range(len(keys)))
    assert sorted(order) == list(range(len(keys)))
    pairs = [order[i : i + 2] for i in range(0, len(order), 2)]
    for first, second in pairs:
        assert keys[first][1:] == keys[second][1:]
        assert (keys[first][0].label, keys[second][0].label) == ("a", "b")
    # The cells keep their plan order otherwise.
    assert [keys[first][1:] for first, _ in pairs] == [k[1:] for k in keys if k[0].label == "a"]
