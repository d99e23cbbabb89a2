"""From cells to the capability matrix and the practice's degradation verdicts.

The verdicts, names fixed (tests outside the project read them), each a
rule over one cell (``VERDICT_RULES``: data, like the layer rules):

========================  ============================================================
``not_streaming``         events buffered: do not mark the route streaming
``chat_only``             text works, call ids or arguments do not: turn tool routing off
``semantic_downgrade``    a fact the client protocol cannot carry was lost: listed
``usage_incomplete``      the upstream's final usage did not reach the client: mark the
                          usage incomplete, never estimate it
``usage_invented``        usage the upstream never reported (or other figures)
``error_masked``          an upstream error became text or success, or lost its type
``cancel_not_propagated`` the client hung up, the upstream connection stayed open
``compat_gate_failed``    an unknown event broke the gateway
========================  ============================================================

A verdict is reported per (client, upstream) pair with the cases that raised
it; ``timed_cases`` lists those of them that raised it by a clock alone
(``not_streaming`` from a burst, ``cancel_not_propagated`` from a late
close, anything in a cell whose answer a read timeout cut short), which a
loaded machine can produce. ``not_streaming`` from an
upstream request that said ``stream: false`` is a fact of the mock's log, not
a timing. Only ``semantic_downgrade`` is acceptable:
any other verdict, and any failing layer, makes ``exit_status`` 1.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from .cell import Cell
from .timing import TIMING_TAGS

__all__ = [
    "ACCEPTABLE",
    "VERDICT_NAMES",
    "VERDICT_RULES",
    "VerdictRule",
    "exit_status",
    "matrix",
    "verdicts",
]


def _never(cell: Cell) -> bool:
    return False


@dataclass(frozen=True)
class VerdictRule:
    """A degradation verdict: which cells raise it, and what an operator does about it."""

    name: str
    #: The whys of the cell's layers that raise it (empty: not raised).
    match: Callable[[Cell], list[str]]
    advice: str
    #: Whether a cell raised it by a timing measurement alone (``timing.TIMING_TAGS``).
    timed: Callable[[Cell], bool] = _never


def _timed(layer: str) -> Callable[[Cell], bool]:
    def timed(cell: Cell) -> bool:
        tags = set(cell.checks[layer].tags)
        return bool(tags) and tags <= TIMING_TAGS

    return timed


def _timed_out(cell: Cell) -> bool:
    # A read that outlasted its timeout cut the answer short: whatever the
    # cell then misses may be the clock's doing, not the gateway's bytes.
    return any("timeout" in c.tags for c in cell.checks.values())


def _layer(layer: str, *tags: str) -> Callable[[Cell], list[str]]:
    def match(cell: Cell) -> list[str]:
        check = cell.checks.get(layer)
        if check is None or check.verdict != "fail":
            return []
        if tags and not set(tags) & set(check.tags):
            return []
        return [check.why]

    return match


def _chat_only(cell: Cell) -> list[str]:
    if cell.checks["deltas"].verdict == "fail" or cell.checks["http"].verdict == "fail":
        return []
    return [
        cell.checks[layer].why
        for layer in ("tool_calls", "tool_results")
        if cell.checks[layer].verdict == "fail"
    ]


def _degraded(cell: Cell) -> list[str]:
    return [c.why for c in cell.checks.values() if c.verdict == "degraded"]


def _error_masked(cell: Cell) -> list[str]:
    if cell.case != "in-stream-error" or "unreachable" in cell.checks["http"].tags:
        return []
    return _layer("completion")(cell)


def _compat(cell: Cell) -> list[str]:
    if cell.case != "unknown-event":
        return []
    # What an unknown event can break: the stream itself (timings have rules of their own).
    return [
        f"{layer}: {c.why}"
        for layer, c in cell.checks.items()
        if c.verdict == "fail" and layer in ("http", "framing", "deltas", "completion")
    ]


VERDICT_RULES: tuple[VerdictRule, ...] = (
    VerdictRule(
        "not_streaming",
        _layer("streaming", "buffered", "not_streamed"),
        "something between the upstream and the client buffers the response: "
        "do not mark the route streaming (look for proxy buffering, compression, "
        "a response collected before it is sent)",
        _timed("streaming"),
    ),
    VerdictRule(
        "chat_only",
        _chat_only,
        "text works, tool calls do not survive: turn tool routing off for this pair",
    ),
    VerdictRule(
        "semantic_downgrade",
        _degraded,
        "acceptable: the client protocol cannot carry these facts; make sure no "
        "consumer relies on them",
    ),
    VerdictRule(
        "usage_incomplete",
        _layer("usage", "missing"),
        "the final usage is lost: mark the request's usage incomplete, never estimate it",
    ),
    VerdictRule(
        "usage_invented",
        _layer("usage", "invented"),
        "the gateway reports usage the upstream never sent: bill from the upstream's figures",
    ),
    VerdictRule(
        "error_masked",
        _error_masked,
        "an upstream error does not reach the client as an error of the provider's type: "
        "clients cannot retry or report it; fix the error mapping",
    ),
    VerdictRule(
        "cancel_not_propagated",
        _layer("cancel"),
        "a client that hangs up leaves the upstream generating (and billing): close the "
        "upstream response when the client disconnects",
        _timed("cancel"),
    ),
    VerdictRule(
        "compat_gate_failed",
        _compat,
        "an event type the gateway has not seen broke the stream: ignore unknown events "
        "instead of failing on them",
    ),
)
VERDICT_NAMES = tuple(r.name for r in VERDICT_RULES)
#: Verdicts that do not fail a run.
ACCEPTABLE = frozenset({"semantic_downgrade"})


def verdicts(cells: Iterable[Cell]) -> list[dict[str, Any]]:
    """Each verdict raised, per (client, upstream), with its cases and why;
    ``timed_cases``: those of its cases that raised it by a timing measurement
    alone (which a loaded machine can produce), not by what the bytes or the
    mock's log say."""
    found: dict[tuple[str, str, str | None], dict[str, Any]] = {}
    for cell in cells:
        for rule in VERDICT_RULES:
            whys = [w for w in rule.match(cell) if w]
            if not whys:
                continue
            key = (rule.name, cell.client, cell.upstream)
            entry = found.setdefault(
                key,
                {
                    "name": rule.name,
                    "client": cell.client,
                    "upstream": cell.upstream,
                    "cases": [],
                    "why": [],
                    "advice": rule.advice,
                    "timed_cases": [],
                },
            )
            timed = rule.timed(cell) or _timed_out(cell)
            if cell.case not in entry["cases"]:
                entry["cases"].append(cell.case)
                if timed:
                    entry["timed_cases"].append(cell.case)
            elif not timed and cell.case in entry["timed_cases"]:
                entry["timed_cases"].remove(cell.case)
            for why in whys:
                if why not in entry["why"] and len(entry["why"]) < 6:
                    entry["why"].append(why)
    order = {name: i for i, name in enumerate(VERDICT_NAMES)}
    out = sorted(found.values(), key=lambda v: (order[v["name"]], str(v["upstream"]), v["client"]))
    for entry in out:
        entry["why"] = "; ".join(entry["why"])
    return out


def _pair_status(cells: Sequence[Cell]) -> str:
    if any(c.failed for c in cells):
        return "fail"
    if any(c.degraded for c in cells):
        return "degraded"
    return "pass"


def matrix(cells: Sequence[Cell], found: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """upstream -> client -> the pair's summary (status, counts, verdicts)."""
    pairs: dict[str, dict[str, list[Cell]]] = {}
    for cell in cells:
        pairs.setdefault(cell.upstream or "unreached", {}).setdefault(cell.client, []).append(cell)
    out: dict[str, Any] = {}
    for upstream, by_client in pairs.items():
        row = out.setdefault(upstream, {})
        for client, group in by_client.items():
            names = sorted(
                {
                    v["name"]
                    for v in found
                    if v["client"] == client and (v["upstream"] or "unreached") == upstream
                }
            )
            row[client] = {
                "status": _pair_status(group),
                "cells": len(group),
                "failed": sum(c.failed for c in group),
                "degraded": sum(c.degraded for c in group),
                "verdicts": names,
            }
    return out


def exit_status(cells: Iterable[Cell], found: Iterable[Mapping[str, Any]]) -> int:
    """0 when every cell passed (or degraded) and only acceptable verdicts were raised."""
    if any(c.failed for c in cells):
        return 1
    return 1 if any(v["name"] not in ACCEPTABLE for v in found) else 0
