"""The check as JUnit XML (``--junit FILE``): a test case per cell, for CI to list the failures.

The format is the one Ant's JUnit task writes and CI systems read (Jenkins'
JUnit plugin, GitLab's unit test reports, Azure Pipelines, the GitHub test
reporter actions; checked 2026-12-01): ``testsuites`` > ``testsuite`` >
``testcase`` with ``failure``, ``skipped``, ``properties`` and
``system-out``. One ``testcase`` per cell: ``classname`` its route and
client (``route <- client``), ``name`` its case and delivery (and its
transport, when the cells ran over several: ``case[delivery-transport]``).
By the cell's state (``Cell.state``):

* ``pass``: a bare test case;
* ``degraded``: a passing one, with the properties ``state`` = ``degraded``
  and ``verdict`` = its verdicts, and the same in ``system-out``;
* ``fail``: a ``failure`` whose ``message`` is its verdicts' names (those
  of its failing layers) and whose text is each one's evidence and advice,
  and the command that reproduces the cell (``report/reproduce.py``);
* ``flaky``: a ``failure`` whose ``message`` says flaky, with its runs'
  outcomes as text;
* ``inconclusive``: ``skipped``, with the reason.

The counts (``tests``, ``failures``, ``skipped``) are the summary line's:
cells, failed and flaky ones, inconclusive ones. A string the gateway chose
may hold characters XML 1.0 cannot carry; they are written escaped
(``\\x01``) so that every parser reads the file.
"""

from __future__ import annotations

import json
import re
import xml.etree.ElementTree as ET
from collections.abc import Mapping, Sequence
from typing import Any, TextIO

from ... import __version__
from ..judge.cell import Cell
from ..judge.verdicts import CATCH_ALL, cell_verdicts, control_cells
from .document import Report

__all__ = ["junit_tree", "write_junit"]

#: Characters XML 1.0 allows (its ``Char`` production); the rest are escaped.
_NOT_XML = re.compile("[^\t\n\r\x20-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]")
#: The most characters of one layer's figures a failure's text shows.
MAX_FIGURES = 2000
_KIT_LIMIT = "cut by the kit's own timeout"


def _xml(text: str) -> str:
    """``text`` with what XML 1.0 cannot carry shown escaped."""
    return _NOT_XML.sub(lambda m: m.group(0).encode("unicode_escape").decode("ascii"), text)


def _transport(cell: Cell) -> str:
    """How the cell's client reached the gateway (``Cell.transport``)."""
    return cell.transport


def _name(cell: Cell, transports: bool) -> str:
    transport = _transport(cell) if transports else None
    return f"{cell.case}[{cell.delivery}{f'-{transport}' if transport else ''}]"


def _seconds(cell: Cell) -> str:
    record = cell.evidence.get("record")
    total = record.get("total") if isinstance(record, dict) else None
    return f"{total:.3f}" if isinstance(total, int | float) else "0"


def _sub(parent: ET.Element, tag: str, text: str | None = None, **attrs: str) -> ET.Element:
    child = ET.SubElement(parent, tag, {k: _xml(v) for k, v in attrs.items()})
    if text is not None:
        child.text = _xml(text)
    return child


def _figures(details: Mapping[str, Any]) -> str:
    text = json.dumps(details, ensure_ascii=False, default=str, sort_keys=True)
    return text if len(text) <= MAX_FIGURES else text[:MAX_FIGURES] + " ..."


def _failure(cell: Cell, found: list[tuple[str, str]], advice: Mapping[str, str]) -> ET.Element:
    """The ``failure`` of a failing cell: its failing layers' verdicts."""
    failing = [(n, layer) for n, layer in found if cell.checks[layer].verdict == "fail"]
    failing = failing or [(CATCH_ALL.name, layer) for layer in cell.failing]
    names = list(dict.fromkeys(n for n, _ in failing))
    lines = []
    for name, layer in failing:
        check = cell.checks[layer]
        lines.append(f"{name} ({layer}): {check.why}")
        if check.details:
            lines.append(f"  figures: {_figures(check.details)}")
        lines.append(f"  do: {advice.get(name, CATCH_ALL.advice)}")
    if cell.reproduce:
        lines.append(f"reproduce: {cell.reproduce}")
    failure = ET.Element("failure", {"message": _xml(", ".join(names)), "type": "fail"})
    failure.text = _xml("\n".join(lines))
    return failure


def _flaky(cell: Cell) -> ET.Element:
    """The ``failure`` of a flaky cell: how many runs failed, each run's outcome."""
    record = cell.repeat_record() or {"count": 0, "failed": 0, "runs": []}
    message = f"flaky: {record['failed']} of {record['count']} runs failed"
    lines = []
    for i, run in enumerate(record["runs"], 1):
        failing = run["failing"]
        outcome = "inconclusive" if run["inconclusive"] else ("fail" if failing else "pass")
        lines.append(f"run {i} ({run['tag']}): {outcome}")
        lines += [f"  {layer}: {why}" for layer, why in failing.items()]
    if cell.reproduce:
        lines.append(f"reproduce: {cell.reproduce}")
    failure = ET.Element("failure", {"message": _xml(message), "type": "flaky"})
    failure.text = _xml("\n".join(lines))
    return failure


def _degraded(case: ET.Element, cell: Cell, found: list[tuple[str, str]]) -> None:
    names = ", ".join(dict.fromkeys(n for n, _ in found)) or "degraded"
    properties = _sub(case, "properties")
    _sub(properties, "property", name="state", value="degraded")
    _sub(properties, "property", name="verdict", value=names)
    whys = [f"{n} ({layer}): {cell.checks[layer].why}" for n, layer in found]
    _sub(case, "system-out", "\n".join([f"degraded: {names}", *whys]))


def _testcase(
    cell: Cell, control: Cell | None, advice: Mapping[str, str], transports: bool
) -> ET.Element:
    case = ET.Element(
        "testcase",
        {
            "classname": _xml(f"{cell.route} <- {cell.client}"),
            "name": _xml(_name(cell, transports)),
            "time": _seconds(cell),
        },
    )
    state = cell.state
    found = cell_verdicts(cell, control)
    if state == "fail":
        case.append(_failure(cell, found, advice))
    elif state == "flaky":
        case.append(_flaky(cell))
    elif state == "degraded":
        _degraded(case, cell, found)
    elif state == "inconclusive":
        why = "; ".join(c.why for c in cell.checks.values() if "kit_limit" in c.tags)
        _sub(case, "skipped", message=f"inconclusive: {why or _KIT_LIMIT}")
    return case


def _counts(cells: Sequence[Cell], seconds: Any) -> dict[str, str]:
    states = [c.state for c in cells]
    return {
        "tests": str(len(cells)),
        "failures": str(states.count("fail") + states.count("flaky")),
        "errors": "0",
        "skipped": str(states.count("inconclusive")),
        "time": f"{seconds:.3f}" if isinstance(seconds, int | float) else "0",
    }


def junit_tree(report: Report, title: str = "streamwire check") -> ET.Element:
    """The report as a ``testsuites`` element."""
    cells = report.cells
    counts = _counts(cells, report.meta.get("seconds"))
    root = ET.Element("testsuites", {"name": _xml(title), **counts})
    suite = _sub(root, "testsuite", name=title, **counts)
    if report.meta.get("time"):
        suite.set("timestamp", _xml(str(report.meta["time"])))
    properties = _sub(suite, "properties")
    summary = report.summary()
    for name, value in (
        ("streamwire", __version__),
        ("exit_status", str(summary["exit_status"])),
        ("verdicts", ", ".join(summary["verdicts"])),
        ("gateway", str(report.meta.get("gateway") or "")),
    ):
        if value:
            _sub(properties, "property", name=name, value=value)
    advice = {v["name"]: v["advice"] for v in report.verdicts}
    controls = control_cells(cells)
    transports = len({_transport(c) for c in cells}) > 1
    for cell in cells:
        control = controls.get((cell.route, cell.client, cell.delivery, cell.case))
        suite.append(_testcase(cell, control, advice, transports))
    return root


def write_junit(report: Report, out: TextIO, title: str = "streamwire check") -> None:
    """Writes the report as JUnit XML (UTF-8)."""
    root = junit_tree(report, title)
    ET.indent(root)
    out.write('<?xml version="1.0" encoding="UTF-8"?>\n')
    out.write(ET.tostring(root, encoding="unicode"))
    out.write("\n")
