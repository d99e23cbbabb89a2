"""Holds a kit run against a gateway to the worked example it documents (used by .ci/litellm.sh).

    python .ci/kit_expect.py REPORT.json EXPECTED.json [--write]

The gateway is pinned (LiteLLM at the version in .ci/litellm-constraints.txt),
so what the kit finds in it changes only when the kit changes. The check's
own exit status cannot gate CI (it is 1: the gateway has defects), and the
run's exact verdicts cannot either: two of them can come from clocks, which a
loaded machine moves. The rule:

* The run happened and is whole: REPORT.json exists (.ci/litellm.sh deletes
  the previous one first, so a check that crashed leaves none), it has cells,
  and none is inconclusive (cut by the kit's own timeout). A cell the gateway
  answered without calling the mock is a verdict (``upstream_not_called``),
  gated like the others.
* A verdict raised by anything but a clock is a fact of the bytes and of the
  mock's log (a provider error type lost, a call id replaced, usage missing,
  an upstream request sent with ``stream: false``, an upstream left running
  to its end after the hang-up): the run must find exactly the ones
  EXPECTED.json documents, for the same (route, client) pairs and the same
  cases (of the cases the run ran). One no longer found means the
  kit stopped seeing a defect the gateway has; one beyond them means the kit
  judges differently now. Either way the worked example is redone
  (``LITELLM_DOCS=1 bash .ci/litellm.sh`` runs every case and this script
  with ``--write``).
* A cell the worked example's own run could not judge (inconclusive there:
  LiteLLM, busy with the 16 MB and 1 MiB answers of other cells, sent nothing
  within the kit's read timeout) is not held to it: EXPECTED.json lists those
  cells, and what a run finds in them is left out of the comparison.
* A case whose every cell the client's own hang-up timer (the cancel
  case's 1 s) cut before the response head arrived judged nothing of the
  answer: a documented verdict is not expected of it in that run (a
  clean-clone CI beside another and a busy loop saw LiteLLM answer the
  cancel cells of one route later than that).
* A verdict's cases raised by a clock alone (its ``timed_cases``: a held
  answer, a delay, held arguments, a late close) are printed, never failed,
  in either direction: the kit confirms each by a second, quiet run before
  reporting it, and those rules are proven against hops of our own in
  tests/test_kit_hops.py and tests/test_kit.py, not here.

``--write`` records the report's verdicts, without their timed cases, and its
inconclusive cells as EXPECTED.json.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

Key = tuple[str, str, str]


def _firm(report: dict[str, Any], unjudged: set[Key]) -> dict[Key, set[str]]:
    """(name, route, client) -> its cases not raised by a timing alone, nor
    among the ``unjudged`` (route, client, case) cells."""
    out = {}
    for v in report["verdicts"]:
        cases = {
            case
            for case in set(v["cases"]) - set(v["timed_cases"])
            if (v["route"], v["client"], case) not in unjudged
        }
        if cases:
            out[v["name"], v["route"], v["client"]] = cases
    return out


def _inconclusive(report: dict[str, Any]) -> set[Key]:
    """The (route, client, case) of every cell the kit's own timeout cut."""
    return {(c["route"], c["client"], c["case"]) for c in report["cells"] if c.get("inconclusive")}


def _before_the_head(cell: dict[str, Any]) -> bool:
    """The client hung up on its own timer (the cancel case's 1 s) before the
    response head came: no layer that reads the answer judged anything."""
    client = cell.get("evidence", {}).get("client", {})
    return client.get("cancel_reason") == "timer" and client.get("status") is None


def _timer_unjudged(report: dict[str, Any]) -> set[Key]:
    """The (route, client, case) whose every cell the client's own timer
    hung up on before the response head: a clock decided that nothing of
    the answer could be judged."""
    cells: dict[Key, list[bool]] = {}
    for c in report["cells"]:
        key = (c.get("route", ""), c.get("client", ""), c.get("case", ""))
        cells.setdefault(key, []).append(_before_the_head(c))
    return {key for key, cut in cells.items() if all(cut)}


def main(argv: list[str]) -> int:
    report_path, expected_path = Path(argv[0]), Path(argv[1])
    if not report_path.exists():
        print(f"FAIL: {report_path} was not written: the check did not finish (see its output)")
        return 1
    report = json.loads(report_path.read_text(encoding="utf-8"))
    if "--write" in argv:
        rows = [
            {"name": n, "route": r, "client": c, "cases": sorted(cases)}
            for (n, r, c), cases in sorted(_firm(report, set()).items())
        ]
        unjudged = [list(key) for key in sorted(_inconclusive(report))]
        expected_path.write_text(
            json.dumps({"verdicts": rows, "inconclusive": unjudged}, indent=1) + "\n",
            encoding="utf-8",
        )
        print(f"{expected_path}: {len(rows)} verdicts, {len(unjudged)} inconclusive cells recorded")
        return 0
    problems = []
    cells = report["cells"]
    ran = {c["case"] for c in cells}
    if not cells:
        problems.append("the report has no cells")
    cut = [c for c in cells if c.get("inconclusive")]
    if cut:
        problems.append(f"{len(cut)} cells were cut by the kit's own timeout (inconclusive)")
    page = json.loads(expected_path.read_text(encoding="utf-8"))
    documented = page["verdicts"]
    # The cells the worked example could not judge are not held to it, nor
    # the cases this run's own hang-up timer left unjudged.
    timer = _timer_unjudged(report)
    found = _firm(report, {(r, c, case) for r, c, case in page.get("inconclusive", [])})
    expected = {}
    for v in documented:
        cases = {
            case for case in set(v["cases"]) & ran if (v["route"], v["client"], case) not in timer
        }
        if cases:
            expected[v["name"], v["route"], v["client"]] = cases
    for route, client, case in sorted(timer):
        print(
            f"note: {case} {route} <- {client}: the client's own timer hung up before the "
            "response head (not gated)"
        )
    for key in sorted(expected.keys() - found.keys()):
        problems.append(f"documented verdict no longer found: {key}")
    for key in sorted(found.keys() - expected.keys()):
        problems.append(f"verdict the worked example does not document: {key} {sorted(found[key])}")
    for key in sorted(expected.keys() & found.keys()):
        if found[key] != expected[key]:
            problems.append(
                f"{key}: cases {sorted(found[key])}, documented {sorted(expected[key])}"
            )
    for v in report["verdicts"]:
        if v["timed_cases"]:
            print(
                f"note: by timing alone (not gated): {v['name']} {v['route']} <- "
                f"{v['client']} {v['timed_cases']}"
            )
    summary = report["summary"]
    print(
        f"{summary['cells']} cells: {summary['passed']} pass, {summary['degraded']} degraded, "
        f"{summary['failed']} fail; {len(found)} verdicts gated ({len(expected)} documented)"
    )
    for problem in problems:
        print(f"FAIL: {problem}")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
