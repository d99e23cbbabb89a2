"""After an upgrade: two check reports compared cell by cell, and a gate on what regressed.

``compare(old, new)`` reads two JSON reports (``streamwire check --json``)
and matches their cells by a stable identity, (case, client, route label,
delivery), never a port or a tag; routes named by their host, which a
restart changes, are matched by position (``_route_names``). A matched
cell's layers are ``regressed`` or ``fixed``, its facts (``FACTS``)
``changed``, and its times ``timing`` past ``TIME_FLOOR`` and ``TIME_RATIO``;
verdicts, compared by (name, route, client), are ``added`` or ``gone``.

What a clock decided is never gated, as a class: each cell's own evidence
says whether a change could have gone the other way on another run
(``clock_facts``, ``_clocked_layer``), and such a change is marked ``timed``
with the reason; ``--gate-timing`` gates them all the same. A cell the kit's
own timeout cut on either side is ``inconclusive``: not compared.

The gate (``Comparison.regressions``) is every gated change not in the
reviewed accepted-changes file (``load_accepted``: a reason for each);
``accept`` adds the current regressions to it. docs/kit/comparisons.md has
what is compared and gated, and the file's format.

The terminal (``render_text``) and a pull-request comment (``markdown``) give
each regression its own line and group the rest (``_grouped``, ``_timing``):
a line for one change in many cells, with how many and where; ``verbose``
gives every change its line. The JSON (``as_dict``) keeps every change.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timezone
from statistics import median
from typing import Any

from ... import __version__
from ..judge.timed import clock_decided
from ..vocab.cases import CASES

__all__ = [
    "ACCEPTED_FORMAT",
    "FORMAT",
    "TIME_FLOOR",
    "TIME_RATIO",
    "Change",
    "Comparison",
    "accept",
    "clock_facts",
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
    #: ``new``, ``missing`` or ``inconclusive``.
    what: str
    #: ``regressed``, ``fixed``, ``changed`` (a fact), ``new`` (a cell, or a verdict
    #: of cells the old run did not judge), ``missing``, ``added``, ``gone`` (a
    #: verdict), ``timing`` (a time to first content or in all past the
    #: tolerance), ``inconclusive`` (the kit's timeout cut the cell in a run).
    kind: str
    old: Any = None
    new: Any = None
    #: A clock decided it: another run could have gone the other way.
    timed: bool = False
    #: Why it is timed (or new, or not compared), from the cells' own evidence.
    reason: str = ""
    #: (case, client, route, delivery) of the cell; a verdict's case and
    #: delivery are "". What the terminal groups by (``_spread``); not in the JSON.
    where: tuple[str, str, str, str] = field(default=("", "", "", ""), compare=False, repr=False)

    @property
    def gated(self) -> bool:
        return self.kind in ("regressed", "changed", "missing", "added")

    def as_dict(self) -> dict[str, Any]:
        out = {
            "cell": self.cell,
            "what": self.what,
            "kind": self.kind,
            "old": self.old,
            "new": self.new,
            "timed": self.timed,
        }
        if self.reason:
            out["reason"] = self.reason
        return out


@dataclass
class Comparison:
    """Every difference between two reports, and what the gate makes of them."""

    old: Mapping[str, Any]
    new: Mapping[str, Any]
    changes: list[Change]
    matched: int
    #: (cell, what) -> reason, from the accepted-changes file.
    accepted: dict[tuple[str, str], str] = field(default_factory=dict)
    #: Clock-decided changes gate too (by default they are reported only).
    gate_timing: bool = False

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
        """What a clock decided, reported and not gated (unless ``gate_timing``)."""
        return [c for c in self.changes if c.gated and c.timed and not self.gate_timing]

    @property
    def exit_status(self) -> int:
        return 1 if self.regressions else 0

    def counts(self) -> dict[str, int]:
        out: dict[str, int] = {}
        for change in self.changes:
            kind = f"{change.kind} (timed)" if change.gated and change.timed else change.kind
            out[kind] = out.get(kind, 0) + 1
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
            "timed": [c.as_dict() for c in self.timed_changes],
            "changes": [c.as_dict() for c in self.changes],
            "exit_status": self.exit_status,
        }

    def markdown(self, limit: int = 40) -> str:
        """A pull-request comment: the verdict, the regressions (at most
        ``limit`` rows), then what was accepted, the fixes, what a clock
        decided, the times, what is new: a line a group of alike changes."""
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
        for heading in _headings(self):
            body = heading.lines(_MARKDOWN)
            if not body:
                continue
            lines.append(f"{heading.markdown} ({len(heading.changes)}):")
            lines += [f"- {line}" for line in body[:limit]]
            if len(body) > limit:
                lines.append(f"- … {len(body) - limit} more groups in the JSON")
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


#: The layers judged from the mock's log, not from what the client saw: a
#: hang-up's timing does not decide them.
_LOG_LAYERS = frozenset({"cancel", "request", "credentials", "retries", "backpressure"})


def _seconds(value: Any) -> float | None:
    return float(value) if isinstance(value, int | float) and not isinstance(value, bool) else None


def _timer_hang_up(cell: Mapping[str, Any]) -> str | None:
    """Why the cell's client view is its hang-up timer's, or None: the cancel
    case's client hung up on its own timer (before the head came, or before
    the deltas it hangs up on)."""
    client = _d(_d(cell.get("evidence")).get("client"))
    if client.get("cancel_reason") != "timer":
        return None
    at = _seconds(client.get("cancelled_at"))
    head = _seconds(_d(client.get("times")).get("headers"))
    when = f" at {at:.2f} s" if at is not None else ""
    if head is None or (at is not None and at <= head):
        return f"the client hung up on its timer{when}, before the response head came"
    return f"the client hung up on its timer{when}, before the deltas it waits for"


def clock_facts(cell: Mapping[str, Any]) -> dict[str, str]:
    """The facts of one cell (``FACTS``) that a clock decided, each with why,
    read from the cell's own evidence."""
    case = CASES.get(str(cell.get("case")))
    out: dict[str, str] = {}
    record = _d(_d(cell.get("evidence")).get("record"))

    def events(reason: str) -> None:
        out.setdefault("events", reason)
        out.setdefault("order", reason)

    timer = _timer_hang_up(cell)
    if timer is not None:
        for name in FACTS:
            out[name] = timer
    if case is not None and case.kind.clock_events is not None:
        events(case.kind.clock_events)
    if record.get("completion") == "incomplete":
        events("how many events arrived before the stream was cut is the clock's")
    return out


def _clocked_layer(cell: Mapping[str, Any], layer: str) -> str | None:
    """Why a clock decided this layer's verdict in the cell, or None."""
    if layer not in _LOG_LAYERS:
        timer = _timer_hang_up(cell)
        if timer is not None:
            return timer
    note = _d(_d(_d(cell.get("evidence")).get("layers")).get(layer))
    tags = note.get("tags")
    tags = [t for t in tags if isinstance(t, str)] if isinstance(tags, list) else []
    if not clock_decided(tags, note):
        return None
    margin = _seconds(note.get("margin_ms"))
    past = f", {margin:.0f} ms past its bound" if margin is not None else ""
    return f"a timed finding ({', '.join(tags)}{past}) too near its bound to be firm"


def _timed_verdict(verdict: Mapping[str, Any]) -> bool:
    cases, timed = verdict.get("cases"), verdict.get("timed_cases")
    if not isinstance(cases, list) or not isinstance(timed, list) or not cases:
        return False
    return set(map(str, cases)) <= set(map(str, timed))


def _firm_cases(verdict: Mapping[str, Any]) -> set[str]:
    cases, timed = verdict.get("cases"), verdict.get("timed_cases")
    found = set(map(str, cases)) if isinstance(cases, list) else set()
    return found - (set(map(str, timed)) if isinstance(timed, list) else set())


def _key(cell: Mapping[str, Any], route: str) -> str:
    return " ".join(_where(cell, route))


def _where(cell: Mapping[str, Any], route: str) -> tuple[str, str, str, str]:
    """The cell's (case, client, route, delivery)."""
    return str(cell.get("case")), str(cell.get("client")), route, str(cell.get("delivery"))


def _time_changed(old: Any, new: Any) -> bool:
    if not isinstance(old, int | float) or not isinstance(new, int | float):
        return False
    return abs(new - old) > TIME_FLOOR and abs(new - old) > TIME_RATIO * abs(old)


def _outcomes(cell: Mapping[str, Any], layer: str) -> list[str]:
    """A layer's verdicts over the cell's repeated runs (its own verdict when
    it ran once)."""
    runs = _d(cell.get("repeat")).get("runs")
    found = [
        str(_d(_d(run).get("layers")).get(layer))
        for run in (runs if isinstance(runs, list) else [])
        if not _d(run).get("inconclusive")
    ]
    return found or [str(_d(cell.get("layers")).get(layer))]


def _layer_change(
    where: tuple[str, str, str, str], layer: str, was: Mapping[str, Any], cell: Mapping[str, Any]
) -> Change | None:
    a, b = _d(was.get("layers")).get(layer), _d(cell.get("layers")).get(layer)
    seen_a, seen_b = _outcomes(was, layer), _outcomes(cell, layer)
    worst_a = max(_RANK.get(v, 0) for v in seen_a)
    worst_b = max(_RANK.get(v, 0) for v in seen_b)
    reason = _clocked_layer(was, layer) or _clocked_layer(cell, layer)
    key = " ".join(where)
    if worst_b != worst_a:
        kind = "regressed" if worst_b > worst_a else "fixed"
        return Change(key, f"layer {layer}", kind, a, b, reason is not None, reason or "", where)
    # Repeated runs: an outcome the old runs never had, worse than pass, is new flakiness.
    added = {v for v in seen_b if _RANK.get(v, 0) > 0} - set(seen_a)
    if added:
        old, new = sorted(set(seen_a)), sorted(set(seen_b))
        return Change(
            key, f"layer {layer}", "regressed", old, new, reason is not None, reason or "", where
        )
    return None


def _verdict_change(
    name: str, route: str, client: str, kind: str, timed: bool, reason: str
) -> Change:
    """A verdict of the pair (route, client) added, new or gone."""
    old, new = (name, None) if kind == "gone" else (None, name)
    where = ("", client, route, "")
    return Change(f"{route} {client}", f"verdict {name}", kind, old, new, timed, reason, where)


def compare(
    old: Mapping[str, Any],
    new: Mapping[str, Any],
    accepted: Mapping[tuple[str, str], str] | None = None,
    *,
    gate_timing: bool = False,
) -> Comparison:
    """Every difference between the reports ``old`` and ``new`` (parsed JSON)."""
    names = _route_names(old, new)

    def renamed(cell: Mapping[str, Any]) -> str:
        return names.get(str(cell.get("route")), str(cell.get("route")))

    before = {_key(c, renamed(c)): c for c in map(_d, old.get("cells") or [])}
    after = {_key(c, str(c.get("route"))): c for c in map(_d, new.get("cells") or [])}
    changes: list[Change] = []
    matched = 0
    #: (case, client, route) of the cells judged in both runs -> whether a clock
    #: decided a change there (a hang-up on the timer).
    judged: dict[tuple[str, str, str], bool] = {}
    for key, cell in after.items():
        was = before.get(key)
        place = _where(cell, str(cell.get("route")))
        if was is None:
            changes.append(Change(key, "new", "new", None, _d(cell.get("layers")), where=place))
            continue
        matched += 1
        if was.get("inconclusive") is True or cell.get("inconclusive") is True:
            side = "old" if was.get("inconclusive") is True else "new"
            changes.append(
                Change(
                    key,
                    "inconclusive",
                    "inconclusive",
                    reason=f"the kit's own timeout cut the cell in the {side} run: not compared",
                    where=place,
                )
            )
            continue
        where = (str(cell.get("case")), str(cell.get("client")), str(cell.get("route")))
        timer = _timer_hang_up(was) or _timer_hang_up(cell)
        judged[where] = judged.get(where, False) or timer is not None
        layers_a, layers_b = _d(was.get("layers")), _d(cell.get("layers"))
        for layer in dict.fromkeys([*layers_a, *layers_b]):
            change = _layer_change(place, layer, was, cell)
            if change is not None:
                changes.append(change)
        fa, fb = facts(was), facts(cell)
        # The side whose client hung up on its timer says why first.
        sides = sorted((was, cell), key=lambda c: _timer_hang_up(c) is not None)
        clocked = {**clock_facts(sides[0]), **clock_facts(sides[1])}
        for name in FACTS:
            if fa[name] != fb[name]:
                why = clocked.get(name, "")
                changes.append(
                    Change(
                        key, f"fact {name}", "changed", fa[name], fb[name], bool(why), why, place
                    )
                )
        for name in _TIMED:
            if _time_changed(fa[name], fb[name]):
                changes.append(
                    Change(key, f"time {name}", "timing", fa[name], fb[name], where=place)
                )
    for key, was in before.items():
        if key not in after:
            gone = _where(was, renamed(was))
            changes.append(Change(key, "missing", "missing", _d(was.get("layers")), where=gone))
    found_a = {
        (
            str(v.get("name")),
            names.get(str(v.get("route")), str(v.get("route"))),
            str(v.get("client")),
        ): v
        for v in map(_d, old.get("verdicts") or [])
    }
    found_b = {
        (str(v.get("name")), str(v.get("route")), str(v.get("client"))): v
        for v in map(_d, new.get("verdicts") or [])
    }

    def only_new_cells(route: str, client: str, cases: set[str]) -> bool:
        """Every cell of the pair and cases that failed or degraded in the new
        run is one the old run did not have (a delivery it did not run)."""
        failing = [
            key
            for key, cell in after.items()
            if str(cell.get("route")) == route
            and str(cell.get("client")) == client
            and str(cell.get("case")) in cases
            and any(v in ("fail", "degraded") for v in _d(cell.get("layers")).values())
        ]
        return bool(failing) and all(key not in before for key in failing)

    for name, route, client in sorted(set(found_b) - set(found_a)):
        verdict = found_b[name, route, client]
        firm = [(case, client, route) for case in sorted(_firm_cases(verdict))]
        if _timed_verdict(verdict):
            kind, timed, why = "added", True, "raised by timed findings only"
        elif not any(w in judged for w in firm) or only_new_cells(
            route, client, _firm_cases(verdict)
        ):
            kind, timed, why = "new", False, "in cells the old run did not judge"
        elif all(judged.get(w, True) for w in firm):
            kind, timed, why = "added", True, "in cancel cells the hang-up timer decided"
        else:
            kind, timed, why = "added", False, ""
        changes.append(_verdict_change(name, route, client, kind, timed, why))
    for name, route, client in sorted(set(found_a) - set(found_b)):
        timed = _timed_verdict(found_a[name, route, client])
        why = "raised by timed findings only" if timed else ""
        changes.append(_verdict_change(name, route, client, "gone", timed, why))
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


def render_text(comparison: Comparison, limit: int = 60, *, verbose: bool = False) -> str:
    """The terminal's summary: counts, then each regression (at most ``limit``),
    then the rest a line a group of alike changes (``verbose``: a line a change,
    as the JSON has them)."""
    lines = [
        f"streamwire compare: {comparison.matched} cells matched; "
        + (", ".join(f"{n} {k}" for k, n in comparison.counts().items()) or "no change")
    ]
    lines += _listed("regressions (the gate fails on these)", comparison.regressions, limit)
    grouped = False
    for heading in _headings(comparison):
        if verbose:
            lines += _listed(heading.title, heading.changes, limit)
            continue
        body = heading.lines(_TEXT)
        grouped = grouped or len(body) < len(heading.changes)
        lines += [f"{heading.title}:", *(f"  {line}" for line in body[:limit])] if body else []
        if len(body) > limit:
            lines.append(f"  ... {len(body) - limit} more groups")
    if grouped:
        lines.append("(alike changes grouped: streamwire compare --verbose lists each one)")
    return "\n".join(lines) + "\n"


def _listed(title: str, changes: Sequence[Change], limit: int) -> list[str]:
    """A heading and a line a change (at most ``limit``)."""
    if not changes:
        return []
    lines = [f"{title}:", *(f"  {_one(c, _TEXT)}" for c in changes[:limit])]
    if len(changes) > limit:
        lines.append(f"  ... {len(changes) - limit} more (--json has them all)")
    return lines


@dataclass(frozen=True)
class _Style:
    """How a line writes a name and a change: the terminal's or Markdown's."""

    arrow: str
    quote: str

    def name(self, text: str) -> str:
        return f"{self.quote}{text}{self.quote}"


_TEXT = _Style("->", "")
_MARKDOWN = _Style("→", "`")


@dataclass(frozen=True)
class _Heading:
    """The changes under one heading that do not gate (or are accepted)."""

    title: str
    #: The heading in a pull-request comment.
    markdown: str
    changes: list[Change]
    #: Each change's reason as shown (the accepted ones': the reviewed file's).
    why: Callable[[Change], str] = lambda change: change.reason

    def lines(self, style: _Style) -> list[str]:
        """A line a group of alike changes (a group of one: the change whole)."""
        if self.changes and all(c.kind == "timing" for c in self.changes):
            return _timing(self.changes, style)
        return _grouped(self.changes, style, self.why)


def _headings(comparison: Comparison) -> list[_Heading]:
    """What is accepted or not gated, under its headings, in the order shown."""
    new = changes_of(comparison, ["new"])
    floor = f"{TIME_FLOOR:g} s and {TIME_RATIO + 1:g}×"
    return [
        _Heading(
            "accepted",
            "Accepted",
            comparison.accepted_changes,
            lambda change: comparison.accepted[change.cell, change.what],
        ),
        _Heading("fixed", "Fixed", changes_of(comparison, ["fixed", "gone"])),
        _Heading(
            "decided by a clock (not gated)",
            "Decided by a clock, not gated",
            comparison.timed_changes,
        ),
        _Heading(
            "timing (not gated)",
            f"Timing beyond {floor}, not gated",
            changes_of(comparison, ["timing"]),
        ),
        _Heading(
            "inconclusive (not compared)",
            "Inconclusive, not compared",
            changes_of(comparison, ["inconclusive"]),
        ),
        _Heading("new cells", "New cells", [c for c in new if c.what == "new"]),
        _Heading("new verdicts", "New verdicts, not gated", [c for c in new if c.what != "new"]),
    ]


def _one(change: Change, style: _Style, reason: str | None = None) -> str:
    """One change on a line: its cell, what changed, both values and why
    (``reason``, else the change's own)."""
    cell = style.name(change.cell)
    reason = change.reason if reason is None else reason
    if change.kind == "inconclusive":
        return f"{cell}: {reason}"
    if change.kind == "new" and change.what == "new":
        return f"{cell}: a cell the old run did not have"
    why = f" ({reason})" if reason else ""
    return f"{cell}: {change.what}: {_values([change], style)}{why}"


def _grouped(changes: Sequence[Change], style: _Style, why: Callable[[Change], str]) -> list[str]:
    """A line a group of changes of one kind to one thing (a layer, a fact, a
    verdict): what changed, from and to what, in how many cells, where, and why."""
    groups: dict[tuple[str, str], list[Change]] = {}
    for change in changes:
        groups.setdefault((change.kind, change.what), []).append(change)
    lines = []
    for group in groups.values():
        if len(group) == 1:
            lines.append(_one(group[0], style, why(group[0])))
            continue
        reasons = list(dict.fromkeys(why(c) for c in group if why(c)))
        others = len(reasons) - 1
        more = f"; and {others} other reason{'s' if others > 1 else ''}" if others else ""
        because = f" ({reasons[0]}{more})" if reasons else ""
        lines.append(f"{_subject(group, style)}: {_spread(group, style)}{because}")
    return lines


def _subject(group: Sequence[Change], style: _Style) -> str:
    """What a group's changes changed, and how many: ``layer streaming:
    "pass" -> "fail" in 12 cells``, ``verdict not_streaming: new in 6
    (route, client) pairs``, ``20 cells the old run did not have``."""
    first = group[0]
    if first.kind == "new" and first.what == "new":
        return f"{len(group)} cells the old run did not have"
    if first.kind == "inconclusive":
        return f"{len(group)} cells"
    noun = "(route, client) pairs" if first.what.startswith("verdict ") else "cells"
    return f"{first.what}: {_values(group, style)} in {len(group)} {noun}"


def _values(group: Sequence[Change], style: _Style) -> str:
    """From and to what a group changed (a verdict: its kind)."""
    if group[0].what.startswith("verdict "):
        return group[0].kind
    return f"{_alike(c.old for c in group)} {style.arrow} {_alike(c.new for c in group)}"


def _alike(values: Iterable[Any]) -> str:
    """A group's values: each of at most three, else how many."""
    seen = list(dict.fromkeys(_cellv(v) for v in values))
    return " or ".join(seen) if len(seen) <= 3 else f"{len(seen)} values"


#: The parts of a change's cell the groups are spread over, in the order named.
_PARTS = (
    (2, "route", "routes"),
    (1, "client", "clients"),
    (0, "case", "cases"),
    (3, "delivery", "deliveries"),
)


def _spread(group: Sequence[Change], style: _Style) -> str:
    """Where a group's changes are: each of its routes, clients, cases and
    deliveries named when there are at most three, else counted."""
    out = []
    for index, one, many in _PARTS:
        seen = list(dict.fromkeys(c.where[index] for c in group if c.where[index]))
        if many == "clients" and seen and all(" via " in name for name in seen):
            one, many = f"SDK {one}", f"SDK {many}"
        names = [style.name(name) for name in seen]
        if len(seen) == 1:
            out.append(f"{one} {names[0]}")
        elif 1 < len(seen) <= 3:
            out.append(f"{len(seen)} {many} ({', '.join(names)})")
        elif seen:
            out.append(f"{len(seen)} {many}")
    return ", ".join(out)


def _timing(changes: Sequence[Change], style: _Style) -> list[str]:
    """A line for each time that moved (to first content, in all): in how many
    cells, its median before and after, the slowest after, and where."""
    lines = []
    for name in _TIMED:
        group = [c for c in changes if c.what == f"time {name}"]
        if len(group) == 1:
            lines.append(_one(group[0], style))
        elif group:
            before = median(float(c.old) for c in group)
            after = [float(c.new) for c in group]
            lines.append(
                f"time {name} in {len(group)} cells: median {before:.2f} s {style.arrow} "
                f"{median(after):.2f} s, the slowest {max(after):.2f} s; {_spread(group, style)}"
            )
    return lines


def changes_of(comparison: Comparison, kinds: Sequence[str]) -> list[Change]:
    """The comparison's changes of the given kinds."""
    return [c for c in comparison.changes if c.kind in kinds]
