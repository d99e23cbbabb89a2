"""The ``--layers`` and ``--timeline`` views of ``streamwire inspect`` and ``replay``.

Plain text for a terminal (and for logs: no colour, no cursor movement):

* layers: one row per wire event, in four columns: its byte range, the wire
  layer (SSE event name, EventStream headers), the provider event (type and
  telling fields) and the unified events it became, or what happened
  instead (``ignored``, ``unknown: ...``, ``conflict: ...``). Rows come from
  ``_layers.walk``.
* timeline: a bar chart of unified events over time (one column per equal
  slice of the stream's span, bars from ``▁`` to ``█``), the markers for
  the headers and the first content, the longest gaps and the bursts, from
  ``streamwire.io.timeline``.
"""

from __future__ import annotations

import shutil
from collections.abc import Sequence
from typing import Any, TextIO

from ._clifmt import describe
from ._layers import LayerRow
from .io.serialize import event_dict
from .io.timeline import Timeline

__all__ = ["layer_dicts", "timeline_dict", "write_layers", "write_timeline"]

_BARS = " ▁▂▃▄▅▆▇█"
#: How many gaps the timeline lists.
GAPS_SHOWN = 3
#: How many bursts the timeline lists.
BURSTS_SHOWN = 5


def _width() -> int:
    return max(shutil.get_terminal_size((160, 24)).columns, 120)


def _fit(text: str, width: int) -> str:
    return text if len(text) <= width else text[: width - 1] + "…"


def _ms(seconds: float | None) -> str:
    return "-" if seconds is None else f"{seconds * 1000:.1f} ms"


# --- layers ------------------------------------------------------------------------


def write_layers(out: TextIO, rows: Sequence[LayerRow]) -> None:
    """The rows as four columns: bytes, wire event, provider event, unified events."""
    width = _width()
    span, wire = 15, 26
    rest = width - span - wire - 6
    provider = rest // 2
    unified = rest - provider
    rule = f"{'bytes':<{span}}  {'wire event':<{wire}}  {'provider event':<{provider}}  unified"
    out.write("── layers " + "─" * 50 + "\n")
    if not rows:
        out.write("an error answer, read whole: no wire events\n")
        return
    out.write(rule + "\n")
    for row in rows:
        lines = [f"{type(e).__name__} {describe(e)}" for e in row.unified]
        lines += [f"({note})" for note in row.notes]
        left = f"{row.start}–{row.end}" if row.end > row.start else f"{row.start}"
        first = (
            f"{_fit(left, span):<{span}}  {_fit(row.wire, wire):<{wire}}  "
            f"{_fit(row.provider, provider):<{provider}}  "
        )
        out.write(first + _fit(lines[0] if lines else "", unified) + "\n")
        pad = " " * (span + wire + provider + 6)
        for line in lines[1:]:
            out.write(pad + _fit(line, unified) + "\n")


def layer_dicts(rows: Sequence[LayerRow]) -> list[dict[str, Any]]:
    """The rows as JSON values."""
    return [
        {
            "bytes": [row.start, row.end],
            "wire": row.wire,
            "provider": row.provider,
            "unified": [event_dict(e) for e in row.unified],
            "notes": list(row.notes),
        }
        for row in rows
    ]


# --- timeline ----------------------------------------------------------------------


def _bar(value: int, tallest: int) -> str:
    if value <= 0 or tallest <= 0:
        return _BARS[0]
    return _BARS[max(1, round(value / tallest * (len(_BARS) - 1)))]


def write_timeline(out: TextIO, timeline: Timeline, *, burst: bool) -> None:
    """The timeline block; ``burst`` is the result's whole-body verdict."""
    arrivals = timeline.arrivals
    out.write("── timeline " + "─" * 49 + "\n")
    if not arrivals:
        out.write("no chunk arrived\n")
        return
    span = timeline.span
    events = sum(a.event_count for a in arrivals)
    out.write(
        f"{len(arrivals)} chunks, {events} unified events over {_ms(span)}; "
        f"headers at {_ms(timeline.time_to_headers)}, ended by {timeline.ended_by or '-'}\n"
    )
    count = max(min(_width() - 24, 100), 20)
    columns = timeline.columns(count)
    tallest = max(e for _, e in columns)
    bars = "".join(_bar(e, tallest) for _, e in columns)
    out.write(f"{'events':<12}{bars}\n")
    marks = [" "] * count
    for t, mark in ((timeline.time_to_headers, "h"), (_first_content_t(timeline), "c")):
        if t is not None and span > 0:
            marks[min(int(t / span * count), count - 1)] = mark
    out.write(f"{'':<12}{''.join(marks).rstrip()}\n")
    scale = f"0 ms{_ms(span):>{count - 4}}"
    out.write(f"{'':<12}{scale}\n")
    slice_ms = _ms(span / count) if span > 0 else "-"
    out.write(
        f"{'':<12}one column = {slice_ms}; tallest bar {tallest} events; "
        "h headers, c first content\n"
    )
    gaps = timeline.gaps()[:GAPS_SHOWN]
    shown = [f"{_ms(g.seconds)} before chunk {g.before} (at {_ms(g.t)})" for g in gaps]
    out.write(f"{'gaps':<12}{' · '.join(shown)}\n")
    bursts = timeline.bursts()
    if not bursts:
        out.write(f"{'bursts':<12}none\n")
    for b in bursts[:BURSTS_SHOWN]:
        out.write(
            f"{'bursts':<12}chunks {b.first}–{b.last} ({b.chunks} chunks, {b.events} events, "
            f"{b.size} bytes) within {_ms(b.seconds)} at {_ms(b.t)}\n"
        )
    if len(bursts) > BURSTS_SHOWN:
        out.write(f"{'':<12}and {len(bursts) - BURSTS_SHOWN} more\n")
    verdict = "yes: most of the body arrived at once (buffered in between?)" if burst else "no"
    out.write(f"{'one burst':<12}{verdict}\n")


def _first_content_t(timeline: Timeline) -> float | None:
    first = timeline.first_content
    return None if first is None else first.t


def timeline_dict(timeline: Timeline) -> dict[str, Any]:
    """The timeline as JSON values."""
    return {
        "time_to_headers": timeline.time_to_headers,
        "end": timeline.end,
        "ended_by": timeline.ended_by,
        "arrivals": [
            {"index": a.index, "t": a.t, "bytes": a.size, "events": dict(a.events)}
            for a in timeline.arrivals
        ],
        "gaps": [
            {"before": g.before, "t": g.t, "seconds": g.seconds}
            for g in timeline.gaps()[:GAPS_SHOWN]
        ],
        "bursts": [
            {"first": b.first, "last": b.last, "t": b.t, "seconds": b.seconds, "events": b.events}
            for b in timeline.bursts()
        ],
    }
