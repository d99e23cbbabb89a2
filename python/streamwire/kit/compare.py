"""After an upgrade: two check reports compared cell by cell, and a gate on what regressed.

``compare(old, new)`` reads two JSON reports (``streamwire check --json``)
and matches their cells by a stable identity: (case, client, route label,
delivery); never a port or a tag. Routes are matched by label; two reports
whose labels differ only because no label was given (a route named by its
host and port, which a restart changes) but whose routes have the same model
templates in the same order are matched route by route.

For each matched cell:

* each layer: ``regressed`` (worse: pass or n/a < degraded < fail),
  ``fixed`` (better), or unchanged; a change of a layer a clock decided (its
  tags, on either side, among ``timing.TIMING_TAGS``: a held answer, a
  delay, held arguments, a late close) is ``timing``, reported and not
  gated, as is a verdict all of whose cases a clock decided (its
  ``timed_cases``): a loaded machine can move them between identical runs;
* the facts the practice names, both values side by side: the number of
  unified events, their order (the event types, runs of one type counted
  once), the error's phase and type, the completion status and stop reason,
  usage present, the HTTP status; any change is a regression;
* the clock's facts, time to first content (``ttft``) and the total: a
  change is reported, never gated, when it is both more than
  ``TIME_FLOOR`` seconds and more than ``TIME_RATIO`` times the old value
  (a loaded machine moves them less than that between identical runs).

A cell only in the new report is ``new``, only in the old one ``missing``
(a missing cell is a regression: the run no longer judges it). Verdicts
are compared by (name, route, client): ``added`` ones are regressions,
``gone`` ones are reported.

The gate (``Comparison.regressions``) is every regression not accepted: an
accepted-changes file (``--accepted FILE``, JSON, reviewed in the
repository) lists changes with a reason each, ``{"accepted": [{"cell":
"<case> <client> <route> <delivery>", "what": "layer streaming" | "fact
stop_reason" | "verdict <name> <route> <client>" | "missing", "reason":
"..."}]}``; ``accept`` writes the current regressions into it (with the
reason given) and the new report as the next baseline.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timezone
from typing import Any

from .. import __version__
from .cases import CASES
from .timing import TIMING_TAGS

__all__ = [
    "ACCEPTED_FORMAT",
    "FORMAT",
    "TIME_FLOOR",
    "TIME_RATIO",
    "Change",
    "Comparison",
    "accept",
    "compare",
    "load_accepted",
]

FORMAT = "streamwire-compare/1"
ACCEPTED_FORMAT = "streamwire-accepted/1"
#: A clock's fact changed when it moved by more than this many seconds ...
TIME_FLOOR = 0.25
#: ... and by more than this factor of its old value.
TIME_RATIO = 1.0
_RANK = {"pass": 0, "not_applicable": 0, "degraded": 1, "fail": 2}
#: The facts gated, and where a cell's JSON keeps each.
FACTS = ("events", "order", "error", "completion", "stop_reason", "usage", "status")
_TIMED = ("ttft", "total")


def _d(value: Any) -> Mapping[str, Any]:
    return value if isinstance(value, dict) else {}


def _order(sample: Any) -> list[str]:
    out: list[str] = []
    for item in sample if isinstance(sample, list) else []:
        kind = _d(item).get("event")
        if isinstance(kind, str) and (not out or out[-1] != kind):
            out.append(kind)
    return out


def facts(cell: Mapping[str, Any]) -> dict[str, Any]:
    """The gated facts of one cell of a report (None where the cell has none)."""
    evidence = _d(cell.get("evidence"))
    client = _d(evidence.get("client"))
    record = _d(evidence.get("record"))
    unified = _d(client.get("unified_events"))
    sample = unified.get("sample")
    error = next(
        (
            {"phase": e.get("phase"), "type": e.get("type")}
            for e in map(_d, sample if isinstance(sample, list) else [])
            if e.get("event") == "ErrorReceived"
        ),
        None,
    )
    return {
        "events": unified.get("count") if isinstance(unified.get("count"), int) else None,
        "order": _order(sample) if sample is not None else None,
        "error": error,
        "completion": record.get("completion"),
        "stop_reason": record.get("stop_reason"),
        "usage": (record.get("usage") is not None) if record else None,
        "status": record.get("status", client.get("status")),
        "ttft": record.get("ttft"),
        "total": record.get("total"),
    }


@dataclass(frozen=True)
class Change:
    """One difference between the reports."""

    #: ``<case> <client> <route> <delivery>``; a verdict's: ``<route> <client>``.
    cell: str
    #: ``layer <name>``, ``fact <name>``, ``time <name>``, ``verdict <name>``,
    #: ``new`` or ``missing``.
    what: str
    #: ``regressed``, ``fixed``, ``changed`` (a fact), ``new``, ``missing``,
    #: ``added``, ``gone`` (a verdict), ``timing`` (a time to first content or in
    #: all past the tolerance: never gated).
    kind: str
    old: Any = None
    new: Any = None
    #: A clock decided it (a timed layer's change, a verdict of timed cases only).
    timed: bool = False

    @property
    def gated(self) -> bool:
        return self.kind in ("regressed", "changed", "missing", "added")

    def as_dict(self) -> dict[str, Any]:
        return {
            "cell": self.cell,
            "what": self.what,
            "kind": self.kind,
            "old": self.old,
            "new": self.new,
            "timed": self.timed,
        }


@dataclass
class Comparison:
    """Every difference between two reports, and what the gate makes of them."""

    old: Mapping[str, Any]
    new: Mapping[str, Any]
    changes: list[Change]
    matched: int
    #: (cell, what) -> reason, from the accepted-changes file.
    accepted: dict[tuple[str, str], str] = field(default_factory=dict)
    #: Clock-decided changes gate too (off: they are reported only).
    gate_timing: bool = True

    def _gates(self, change: Change) -> bool:
        return change.gated and (self.gate_timing or not change.timed)

    @property
    def regressions(self) -> list[Change]:
        """The gated changes that are not accepted."""
        return [c for c in self.changes if self._gates(c) and (c.cell, c.what) not in self.accepted]

    @property
    def accepted_changes(self) -> list[Change]:
        return [c for c in self.changes if self._gates(c) and (c.cell, c.what) in self.accepted]

    @property
    def timed_changes(self) -> list[Change]:
        """What a clock decided, and does not gate (``gate_timing`` off)."""
        return [c for c in self.changes if c.gated and c.timed and not self.gate_timing]

    @property
    def exit_status(self) -> int:
        return 1 if self.regressions else 0

    def counts(self) -> dict[str, int]:
        out: dict[str, int] = {}
        for change in self.changes:
            out[change.kind] = out.get(change.kind, 0) + 1
        return dict(sorted(out.items()))

    def as_dict(self) -> dict[str, Any]:
        return {
            "format": FORMAT,
            "streamwire": __version__,
            "time": datetime.now(timezone.utc).isoformat(timespec="seconds"),
            "old": _about(self.old),
            "new": _about(self.new),
            "matched_cells": self.matched,
            "counts": self.counts(),
            "gate_timing": self.gate_timing,
            "regressions": [c.as_dict() for c in self.regressions],
            "accepted": [
                {**c.as_dict(), "reason": self.accepted[c.cell, c.what]}
                for c in self.accepted_changes
            ],
            "changes": [c.as_dict() for c in self.changes],
            "exit_status": self.exit_status,
        }

    def markdown(self, limit: int = 40) -> str:
        """A pull-request comment: the verdict, the regressions (at most
        ``limit`` rows), the fixes, and what was accepted."""
        old, new = _about(self.old), _about(self.new)
        regressions = self.regressions
        head = "regressions" if regressions else "no regression"
        lines = [
            f"### streamwire compare: {head}",
            "",
            f"`{_label(old)}` → `{_label(new)}`: {self.matched} cells matched; "
            + ", ".join(f"{n} {k}" for k, n in self.counts().items())
            + ".",
            "",
        ]
        if regressions:
            lines += ["| cell | what | before | after |", "|---|---|---|---|"]
            for c in regressions[:limit]:
                lines.append(f"| `{c.cell}` | {c.what} | {_cellv(c.old)} | {_cellv(c.new)} |")
            if len(regressions) > limit:
                lines.append(f"| … | {len(regressions) - limit} more in the JSON | | |")
            lines.append("")
        fixed = [c for c in self.changes if c.kind in ("fixed", "gone")]
        if fixed:
            lines.append(f"Fixed ({len(fixed)}):")
            lines += [
                f"- `{c.cell}` {c.what}: {_cellv(c.old)} → {_cellv(c.new)}" for c in fixed[:limit]
            ]
            lines.append("")
        timing = [c for c in self.changes if c.kind == "timing"]
        if timing:
            lines.append(
                f"Timing beyond {TIME_FLOOR:g} s and {TIME_RATIO + 1:g}× (not gated): "
                f"{len(timing)} cells."
            )
            lines.append("")
        accepted = self.accepted_changes
        if accepted:
            lines.append(f"Accepted ({len(accepted)}):")
            lines += [
                f"- `{c.cell}` {c.what}: {self.accepted[c.cell, c.what]}" for c in accepted[:limit]
            ]
            lines.append("")
        return "\n".join(lines)


def _cellv(value: Any) -> str:
    text = json.dumps(value, ensure_ascii=False, default=str)
    text = text if len(text) <= 80 else text[:77] + "..."
    return text.replace("|", "\\|").replace("`", "'")


def _about(report: Mapping[str, Any]) -> dict[str, Any]:
    summary = _d(report.get("summary"))
    return {
        "format": report.get("format"),
        "streamwire": report.get("streamwire"),
        "gateway": summary.get("gateway"),
        "time": summary.get("time"),
        "cells": summary.get("cells"),
    }


def _label(about: Mapping[str, Any]) -> str:
    return str(about.get("gateway") or about.get("time") or "report")


def _route_names(old: Mapping[str, Any], new: Mapping[str, Any]) -> dict[str, str]:
    """Old route label -> new route label."""
    a = [_d(r) for r in old.get("routes") or []]
    b = [_d(r) for r in new.get("routes") or []]
    labels_a, labels_b = [r.get("label") for r in a], [r.get("label") for r in b]
    if (
        set(labels_a) != set(labels_b)
        and len(a) == len(b)
        and [r.get("model") for r in a] == [r.get("model") for r in b]
    ):
        return {str(x): str(y) for x, y in zip(labels_a, labels_b, strict=True)}
    return {str(x): str(x) for x in labels_a}


def _timed_layer(cell: Mapping[str, Any], layer: str) -> bool:
    notes = _d(_d(_d(cell.get("evidence")).get("layers")).get(layer))
    tags = notes.get("tags")
    return isinstance(tags, list) and bool(TIMING_TAGS & {t for t in tags if isinstance(t, str)})


def _timed_verdict(verdict: Mapping[str, Any]) -> bool:
    cases, timed = verdict.get("cases"), verdict.get("timed_cases")
    if not isinstance(cases, list) or not isinstance(timed, list) or not cases:
        return False
    return set(map(str, cases)) <= set(map(str, timed))


def _key(cell: Mapping[str, Any], route: str) -> str:
    return f"{cell.get('case')} {cell.get('client')} {route} {cell.get('delivery')}"


def _time_changed(old: Any, new: Any) -> bool:
    if not isinstance(old, int | float) or not isinstance(new, int | float):
        return False
    return abs(new - old) > TIME_FLOOR and abs(new - old) > TIME_RATIO * abs(old)


def compare(
    old: Mapping[str, Any],
    new: Mapping[str, Any],
    accepted: Mapping[tuple[str, str], str] | None = None,
    *,
    gate_timing: bool = True,
) -> Comparison:
    """Every difference between the reports ``old`` and ``new`` (parsed JSON)."""
    names = _route_names(old, new)
    before = {
        _key(c, names.get(str(c.get("route")), str(c.get("route")))): c
        for c in map(_d, old.get("cells") or [])
    }
    after = {_key(c, str(c.get("route"))): c for c in map(_d, new.get("cells") or [])}
    changes: list[Change] = []
    matched = 0
    for key, cell in after.items():
        was = before.get(key)
        if was is None:
            changes.append(Change(key, "new", "new", None, _d(cell.get("layers"))))
            continue
        matched += 1
        layers_a, layers_b = _d(was.get("layers")), _d(cell.get("layers"))
        for layer in dict.fromkeys([*layers_a, *layers_b]):
            a, b = layers_a.get(layer), layers_b.get(layer)
            if a == b:
                continue
            ra, rb = _RANK.get(str(a), 0), _RANK.get(str(b), 0)
            if ra == rb:
                continue
            kind = "regressed" if rb > ra else "fixed"
            timed = _timed_layer(was, layer) or _timed_layer(cell, layer)
            changes.append(Change(key, f"layer {layer}", kind, a, b, timed))
        fa, fb = facts(was), facts(cell)
        # How many events arrived is the clock's in a case the client hangs up
        # on (a read that brought one more before the hang-up), and in a retry
        # case whose first attempt breaks off mid-stream or stalls (whether the
        # gateway passed the attempt's text on before it read the break).
        case = CASES.get(str(cell.get("case")))
        clocked = case is not None and (
            case.cancel_after is not None or case.retry in ("after_text", "after_tool", "stall")
        )
        for name in FACTS:
            if fa[name] != fb[name]:
                timed = clocked and name in ("events", "order")
                changes.append(Change(key, f"fact {name}", "changed", fa[name], fb[name], timed))
        for name in _TIMED:
            if _time_changed(fa[name], fb[name]):
                changes.append(Change(key, f"time {name}", "timing", fa[name], fb[name]))
    for key, was in before.items():
        if key not in after:
            changes.append(Change(key, "missing", "missing", _d(was.get("layers")), None))
    found_a = {
        (
            str(v.get("name")),
            names.get(str(v.get("route")), str(v.get("route"))),
            str(v.get("client")),
        )
        for v in map(_d, old.get("verdicts") or [])
    }
    found_b = {
        (str(v.get("name")), str(v.get("route")), str(v.get("client")))
        for v in map(_d, new.get("verdicts") or [])
    }
    for name, route, client in sorted(found_b - found_a):
        changes.append(Change(f"{route} {client}", f"verdict {name}", "added", None, name))
    for name, route, client in sorted(found_a - found_b):
        changes.append(Change(f"{route} {client}", f"verdict {name}", "gone", name, None))
    return Comparison(old, new, changes, matched, dict(accepted or {}), gate_timing)


def load_accepted(text: str) -> dict[tuple[str, str], str]:
    """The accepted-changes file's (cell, what) -> reason; a change without a
    reason is refused (``ValueError``): every accepted change is reviewed."""
    data = json.loads(text)
    items = _d(data).get("accepted")
    if not isinstance(items, list):
        raise ValueError('an accepted-changes file is {"accepted": [...]}')
    out: dict[tuple[str, str], str] = {}
    for item in map(_d, items):
        cell, what, reason = item.get("cell"), item.get("what"), item.get("reason")
        if not (isinstance(cell, str) and isinstance(what, str)):
            raise ValueError(f"an accepted change needs its cell and what: {item!r}")
        if not isinstance(reason, str) or not reason.strip():
            raise ValueError(f"an accepted change needs a reason: {cell} {what}")
        out[cell, what] = reason
    return out


def accept(comparison: Comparison, reason: str, earlier: str | None = None) -> str:
    """The accepted-changes file with the comparison's regressions added, each
    with ``reason`` (``earlier``: the file so far, kept)."""
    if not reason.strip():
        raise ValueError("accepting changes needs a reason")
    kept: list[Any] = []
    if earlier:
        load_accepted(earlier)  # a malformed file is refused, not overwritten
        kept = list(json.loads(earlier)["accepted"])
    added = [
        {"cell": c.cell, "what": c.what, "old": c.old, "new": c.new, "reason": reason}
        for c in comparison.regressions
    ]
    document = {"format": ACCEPTED_FORMAT, "accepted": [*kept, *added]}
    return json.dumps(document, ensure_ascii=False, indent=1, default=str) + "\n"


def render_text(comparison: Comparison, limit: int = 60) -> str:
    """The terminal's summary: counts, then each regression and fix."""
    lines = [
        f"streamwire compare: {comparison.matched} cells matched; "
        + (", ".join(f"{n} {k}" for k, n in comparison.counts().items()) or "no change")
    ]
    for title, group in (
        ("regressions (the gate fails on these)", comparison.regressions),
        ("accepted", comparison.accepted_changes),
        ("fixed", [c for c in comparison.changes if c.kind in ("fixed", "gone")]),
        ("decided by a clock (--no-gate-timing: not gated)", comparison.timed_changes),
        ("timing (not gated)", [c for c in comparison.changes if c.kind == "timing"]),
        ("new cells", [c for c in comparison.changes if c.kind == "new"]),
    ):
        if not group:
            continue
        lines.append(f"{title}:")
        for c in group[:limit]:
            lines.append(f"  {c.cell}: {c.what}: {_cellv(c.old)} -> {_cellv(c.new)}")
        if len(group) > limit:
            lines.append(f"  ... {len(group) - limit} more (--json has them all)")
    return "\n".join(lines) + "\n"


def changes_of(comparison: Comparison, kinds: Sequence[str]) -> list[Change]:
    """The comparison's changes of the given kinds."""
    return [c for c in comparison.changes if c.kind in kinds]
