"""Direct against proxied: the same cells on several paths to one gateway, compared hop by hop.

A path is a route (``--path NAME=URL``): the gateway straight, or through a
CDN, a load balancer or a reverse proxy in front of it. Every path runs the
same cases, clients and deliveries; ``compare_paths`` matches each cell of a
path with the same (case, client, delivery) on the first path, the
reference, and says what the hop between them changed:

* time to the response head and to the first event, and the longest gap:
  the median difference over the matched cells, with the least and most
  (a figure below ``NOISE`` seconds is no change: loopback and a busy
  judge move that much between identical runs);
* event boundaries: cells whose client read fewer provider events than on
  the reference (the hop merged or dropped events) or more (it split them,
  or added its own), and the body's read count (pieces), as a median ratio
  (a hop that batches writes halves it, one that trickles doubles it);
* every layer whose verdict differs, with both verdicts and why, and the
  verdicts the path raised that the reference did not.

The result is JSON-ready (the report's ``paths`` member) and read by the
terminal, Markdown and HTML renderings; ``findings`` puts it in sentences.
"""

from __future__ import annotations

import statistics
from collections.abc import Mapping, Sequence
from typing import Any

from ..judge.cell import Cell

__all__ = ["NOISE", "compare_paths", "findings"]

#: A timing difference smaller than this (seconds) is no change.
NOISE = 0.05
#: The most examples kept of each kind of difference.
_EXAMPLES = 5
_TIMES = (
    ("time_to_headers", "headers"),
    ("time_to_first_event", "first_event"),
    ("largest_gap", "largest_gap"),
)


def _d(value: Any) -> Mapping[str, Any]:
    return value if isinstance(value, dict) else {}


def _client(cell: Cell) -> Mapping[str, Any]:
    return _d(cell.evidence.get("client"))


def _number(value: Any) -> float | None:
    return float(value) if isinstance(value, int | float) and not isinstance(value, bool) else None


def _events(cell: Cell) -> int | None:
    count = _d(_client(cell).get("provider_events")).get("count")
    return count if isinstance(count, int) else None


def _reads(cell: Cell) -> int | None:
    pieces = _d(_client(cell).get("raw")).get("pieces")
    return pieces if isinstance(pieces, int) else None


def _spread(values: Sequence[float]) -> dict[str, Any]:
    if not values:
        return {"cells": 0, "median": None, "least": None, "most": None, "changed": False}
    median = statistics.median(values)
    return {
        "cells": len(values),
        "median": round(median, 4),
        "least": round(min(values), 4),
        "most": round(max(values), 4),
        "changed": abs(median) >= NOISE,
    }


def _where(cell: Cell) -> str:
    return f"{cell.case} {cell.client} {cell.delivery}"


def _compare(reference: Sequence[Cell], other: Sequence[Cell]) -> dict[str, Any]:
    by_key = {(c.case, c.client, c.delivery): c for c in reference}
    pairs = [(by_key[k], c) for c in other if (k := (c.case, c.client, c.delivery)) in by_key]
    times: dict[str, list[float]] = {name: [] for _, name in _TIMES}
    fewer: list[dict[str, Any]] = []
    more: list[dict[str, Any]] = []
    ratios: dict[str, list[float]] = {}
    layers: list[dict[str, Any]] = []
    for ref, cell in pairs:
        for key, name in _TIMES:
            a, b = _number(_client(ref).get(key)), _number(_client(cell).get(key))
            if a is not None and b is not None:
                times[name].append(b - a)
        a_events, b_events = _events(ref), _events(cell)
        if a_events is not None and b_events is not None and a_events != b_events:
            entry = {"cell": _where(cell), "reference": a_events, "path": b_events}
            (fewer if b_events < a_events else more).append(entry)
        a_reads, b_reads = _reads(ref), _reads(cell)
        if a_reads and b_reads is not None:
            ratios.setdefault(cell.delivery, []).append(b_reads / a_reads)
        for layer, check in cell.checks.items():
            was = ref.checks.get(layer)
            if was is None or was.verdict == check.verdict:
                continue
            layers.append(
                {
                    "cell": _where(cell),
                    "layer": layer,
                    "reference": was.verdict,
                    "path": check.verdict,
                    "why": check.why[:300] if check.verdict != "pass" else was.why[:300],
                }
            )
    return {
        "cells": len(pairs),
        "unmatched": len(other) - len(pairs),
        "times": {name: _spread(values) for name, values in times.items()},
        "fewer_events": {"cells": len(fewer), "examples": fewer[:_EXAMPLES]},
        "more_events": {"cells": len(more), "examples": more[:_EXAMPLES]},
        "reads": {
            delivery: {"cells": len(values), "median_ratio": round(statistics.median(values), 3)}
            for delivery, values in sorted(ratios.items())
        },
        "layers": {"cells": len({d["cell"] for d in layers}), "changes": layers[:200]},
    }


def compare_paths(
    cells: Sequence[Cell], paths: Sequence[str], found: Sequence[Mapping[str, Any]] = ()
) -> dict[str, Any]:
    """Each path after the first compared with the first (``paths``: route
    names, as the cells carry them); ``found``: the run's verdicts, for those
    a path raised and the reference did not."""
    if not paths:
        return {"reference": None, "paths": {}}
    reference, *others = paths
    groups: dict[str, list[Cell]] = {name: [] for name in paths}
    for cell in cells:
        if cell.route in groups and cell.evidence.get("client") is not None:
            groups[cell.route].append(cell)
    raised = {(v["name"], v["client"]) for v in found if v.get("route") == reference}
    out: dict[str, Any] = {"reference": reference, "paths": {}}
    for name in others:
        comparison = _compare(groups[reference], groups[name])
        comparison["verdicts_added"] = sorted(
            {
                f"{v['name']} ({v['client']})"
                for v in found
                if v.get("route") == name and (v["name"], v["client"]) not in raised
            }
        )
        out["paths"][name] = comparison
    return out


def _ms(seconds: float) -> str:
    return f"{seconds * 1000:+.0f} ms"


def findings(comparison: Mapping[str, Any]) -> dict[str, list[str]]:
    """Each compared path's differences from the reference, in sentences."""
    out: dict[str, list[str]] = {}
    for name, c in (comparison.get("paths") or {}).items():
        lines = []
        for key, words in (
            ("headers", "the response head"),
            ("first_event", "the first event"),
            ("largest_gap", "the longest gap"),
        ):
            t = c["times"][key]
            if t["changed"]:
                lines.append(
                    f"{words} {_ms(t['median'])} (median of {t['cells']} cells; "
                    f"{_ms(t['least'])} to {_ms(t['most'])})"
                )
        for key, words in (
            ("fewer_events", "fewer events (merged or dropped)"),
            ("more_events", "more events (split or added)"),
        ):
            part = c[key]
            if part["cells"]:
                e = part["examples"][0]
                lines.append(
                    f"{words} in {part['cells']} of {c['cells']} cells (e.g. {e['cell']}: "
                    f"{e['reference']} -> {e['path']} events)"
                )
        for delivery, reads in c["reads"].items():
            ratio = reads["median_ratio"]
            if ratio <= 0.5 or ratio >= 2.0:
                lines.append(
                    f"the body arrived in {ratio:g}x the reads ({delivery}: median of "
                    f"{reads['cells']} cells)"
                )
        changes = c["layers"]["changes"]
        if changes:
            by_layer: dict[str, list[dict[str, Any]]] = {}
            for change in changes:
                by_layer.setdefault(change["layer"], []).append(change)
            for layer, group in by_layer.items():
                first = group[0]
                lines.append(
                    f"{layer}: {first['reference']} -> {first['path']} in {len(group)} cells "
                    f"(e.g. {first['cell']}: {first['why']})"
                )
        if c["verdicts_added"]:
            lines.append("verdicts only on this path: " + ", ".join(c["verdicts_added"]))
        if not lines:
            lines.append(
                f"no difference in {c['cells']} cells (times within {NOISE * 1000:.0f} ms, "
                "the same events, the same verdicts)"
            )
        out[name] = lines
    return out
