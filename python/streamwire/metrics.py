"""Timing a stream at the edge: the timing fields of a result's ``Metrics``.

``Timing`` is sans-IO: it is told when bytes and events arrived and reads only
the clock it is given (``streamwire.io`` injects ``time.monotonic``; a replay
injects the recorded arrival times, so replayed metrics equal the recorded
ones). It fills the timing fields of ``Metrics`` (docs/design.md "Layered flags and
metrics", checked 2026-11-29):

* ``time_to_headers``: from the request's start (the caller's ``started_at``)
  to the response headers; None when the start is unknown.
* ``time_to_first_event`` / ``time_to_first_content``: from the start (the
  request's when given, else the moment reading began) to the feed that
  produced the first unified event / the first text, reasoning, refusal or
  tool call.
* ``largest_gap``: the longest wait between two event-producing feeds.
* ``mean_gap``: (last event - first event) / (events - 1), the mean of the
  gaps between consecutive events (events of one feed are 0 apart).
* ``duration``: from the start to the last byte (or to the end of reading).
* ``burst``: the body arrived in one burst. Precisely: at least
  ``BURST_MIN_EVENTS`` unified events, a ``duration`` of at least
  ``BURST_MIN_DURATION`` seconds, and the shortest stretch of time in which
  ``BURST_BYTES_FRACTION`` (90%) of the body's bytes arrived is at most
  ``BURST_WINDOW_FRACTION`` (10%) of the duration. Arrival is measured with an
  adaptive histogram of 64 buckets (O(1) memory; bucket width at most 1/32 of
  the duration), and the stretch may be one bucket wider than the true one
  (the resolution). A proxy that buffers the response (nginx's default
  ``proxy_buffering on``) delivers a slow stream this way: late and all at
  once. So does a provider that generates everything after a long first
  token, which is why the flag is a hint, not a verdict. Times count from the
  request's start only when the caller gives it (``started_at``); without it
  they count from when the headers were in hand, and a proxy that holds the
  headers back with the body (nginx before a length-delimited upstream) shows
  in ``time_to_headers`` and ``burst`` only with it.

A result's OpenTelemetry attributes are ``streamwire.otel``'s.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterable

from .events import (
    Event,
    ReasoningDelta,
    RefusalDelta,
    TextDelta,
    ToolCallArgumentsDelta,
    ToolCallStarted,
)
from .result import Metrics

__all__ = [
    "BURST_BYTES_FRACTION",
    "BURST_MIN_DURATION",
    "BURST_MIN_EVENTS",
    "BURST_WINDOW_FRACTION",
    "ArrivalHistogram",
    "Timing",
]

Clock = Callable[[], float]

#: A stream with fewer unified events is never called a burst.
BURST_MIN_EVENTS = 4
#: A stream shorter than this (seconds, start to last byte) is never called a burst.
BURST_MIN_DURATION = 0.05
#: The share of the body's bytes that must arrive within the window.
BURST_BYTES_FRACTION = 0.9
#: The window, as a share of the duration.
BURST_WINDOW_FRACTION = 0.1

_CONTENT = frozenset(
    {TextDelta, ReasoningDelta, RefusalDelta, ToolCallStarted, ToolCallArgumentsDelta}
)
_BUCKETS = 64
_FIRST_WIDTH = 0.001


class ArrivalHistogram:
    """Bytes by arrival time, in 64 buckets whose width doubles as time goes on."""

    __slots__ = ("buckets", "total", "width")

    def __init__(self, width: float = _FIRST_WIDTH) -> None:
        self.width = width
        self.buckets = [0] * _BUCKETS
        self.total = 0

    def add(self, at: float, size: int) -> None:
        """Records ``size`` bytes arriving ``at`` seconds after the start."""
        at = max(at, 0.0)
        while at >= self.width * _BUCKETS:
            # Merge neighbours: the histogram keeps its size, the width doubles.
            b = self.buckets
            self.buckets = [b[i] + b[i + 1] for i in range(0, _BUCKETS, 2)] + [0] * (_BUCKETS // 2)
            self.width *= 2
        self.buckets[int(at / self.width)] += size
        self.total += size

    def shortest_window(self, fraction: float) -> float:
        """Seconds spanned by the fewest consecutive buckets holding ``fraction`` of the bytes."""
        need = self.total * fraction
        if need <= 0:
            return 0.0
        best = _BUCKETS
        left = 0
        held = 0
        for right, size in enumerate(self.buckets):
            held += size
            while held - self.buckets[left] >= need:
                held -= self.buckets[left]
                left += 1
            if held >= need:
                best = min(best, right - left + 1)
        return best * self.width


class Timing:
    """When a stream's headers, bytes and events arrived, by an injected clock."""

    def __init__(self, clock: Clock, *, started_at: float | None = None) -> None:
        """``started_at``: the clock's reading when the request was sent, if
        known (then times count from it and ``time_to_headers`` is known);
        otherwise times count from now, the moment the headers were in hand."""
        self.clock = clock
        now = clock()
        self.start = now if started_at is None else started_at
        self.time_to_headers = None if started_at is None else now - started_at
        self.events = 0
        self.first_event: float | None = None
        self.first_content: float | None = None
        self.last_event: float | None = None
        self.largest_gap: float | None = None
        self.last_data: float | None = None
        self.end: float | None = None
        self.arrivals = ArrivalHistogram()

    def now(self) -> float:
        """Seconds since the start."""
        return self.clock() - self.start

    def on_data(self, size: int, at: float) -> None:
        """``size`` body bytes arrived ``at`` seconds after the start."""
        if size:
            self.arrivals.add(at, size)
            self.last_data = at

    def on_events(self, events: Iterable[Event], at: float) -> None:
        """The events one feed produced, stamped ``at``."""
        count = 0
        content = False
        for event in events:
            count += 1
            if not content and type(event) in _CONTENT:
                content = True
        if not count:
            return
        if self.first_event is None:
            self.first_event = at
        elif self.last_event is not None:
            gap = at - self.last_event
            if self.largest_gap is None or gap > self.largest_gap:
                self.largest_gap = gap
        self.last_event = at
        self.events += count
        if content and self.first_content is None:
            self.first_content = at

    def on_end(self, at: float) -> None:
        """Reading ended (EOF, cancel, timeout, error)."""
        if self.end is None:
            self.end = at

    @property
    def duration(self) -> float | None:
        """Start to last byte, or to the end of reading when no byte came."""
        return self.last_data if self.last_data is not None else self.end

    @property
    def mean_gap(self) -> float | None:
        """The mean gap between consecutive events."""
        if self.events < 2 or self.first_event is None or self.last_event is None:
            return None
        return (self.last_event - self.first_event) / (self.events - 1)

    @property
    def burst(self) -> bool:
        """The body arrived in one burst (see the module docstring)."""
        duration = self.last_data
        if self.events < BURST_MIN_EVENTS or duration is None or duration < BURST_MIN_DURATION:
            return False
        window = self.arrivals.shortest_window(BURST_BYTES_FRACTION)
        return window <= BURST_WINDOW_FRACTION * duration + self.arrivals.width

    def apply(self, metrics: Metrics) -> Metrics:
        """``metrics`` with the timing fields filled from this record."""
        return dataclasses.replace(
            metrics,
            time_to_headers=self.time_to_headers,
            time_to_first_event=self.first_event,
            time_to_first_content=self.first_content,
            largest_gap=self.largest_gap,
            mean_gap=self.mean_gap,
            duration=self.duration,
            burst=self.burst,
        )
