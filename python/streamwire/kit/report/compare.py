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
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timezone
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
        ``limit`` rows), the fixes, what a clock decided, and what was accepted."""
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
        timed = self.timed_changes
        if timed:
            lines.append(f"Decided by a clock, not gated ({len(timed)}):")
            for reason, group in _by_reason(timed).items():
                cells = ", ".join(f"`{c.cell}` {c.what}" for c in group[:6])
                more = f" and {len(group) - 6} more" if len(group) > 6 else ""
                lines.append(f"- {reason}: {cells}{more}")
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


def _by_reason(changes: Sequence[Change]) -> dict[str, list[Change]]:
    out: dict[str, list[Change]] = {}
    for change in changes:
        out.setdefault(change.reason or "a clock decided it", []).append(change)
    return out


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


def render_text(comparison: Comparison, limit: int = 60) -> str:
    """The terminal's summary: counts, then each regression, fix and
    clock-decided change (with why)."""
    lines = [
        f"streamwire compare: {comparison.matched} cells matched; "
        + (", ".join(f"{n} {k}" for k, n in comparison.counts().items()) or "no change")
    ]
    for title, group in (
        ("regressions (the gate fails on these)", comparison.regressions),
        ("accepted", comparison.accepted_changes),
        ("fixed", [c for c in comparison.changes if c.kind in ("fixed", "gone")]),
        ("decided by a clock (not gated)", comparison.timed_changes),
        ("timing (not gated)", [c for c in comparison.changes if c.kind == "timing"]),
        ("inconclusive (not compared)", changes_of(comparison, ["inconclusive"])),
        ("new cells", [c for c in comparison.changes if c.kind == "new" and c.what == "new"]),
        ("new verdicts", [c for c in comparison.changes if c.kind == "new" and c.what != "new"]),
    ):
        if not group:
            continue
        lines.append(f"{title}:")
        if title.startswith("new cells"):
            lines.append(f"  {len(group)} cells the old run did not have")
            continue
        for c in group[:limit]:
            why = f" ({c.reason})" if c.reason and c.kind != "inconclusive" else ""
            if c.kind == "inconclusive":
                lines.append(f"  {c.cell}: {c.reason}")
                continue
            lines.append(f"  {c.cell}: {c.what}: {_cellv(c.old)} -> {_cellv(c.new)}{why}")
        if len(group) > limit:
            lines.append(f"  ... {len(group) - limit} more (--json has them all)")
    return "\n".join(lines) + "\n"


def changes_of(comparison: Comparison, kinds: Sequence[str]) -> list[Change]:
    """The comparison's changes of the given kinds."""
    return [c for c in comparison.changes if c.kind in kinds]
