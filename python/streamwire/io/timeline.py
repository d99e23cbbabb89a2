"""A recorded stream's arrivals in time: when each chunk came, the gaps, the bursts.

``Timeline.of(recording)`` reads a ``Recording`` (``record.py``): each chunk's
arrival time (seconds from the request's start when the recording knew it,
else from when the headers were in hand), its size and the unified events it
produced. It is a plain data model, for any view: ``streamwire inspect`` and
``replay --timeline`` draw it in the terminal (``_cli_views.py``).

* A gap is the wait between two consecutive chunks; ``gaps()`` lists them,
  longest first. The wait before the first chunk is the time to first byte.
* A burst is a run of at least ``BURST_MIN_CHUNKS`` consecutive chunks, each
  within ``BURST_SPACING`` seconds of the previous one, that together carry
  at least ``metrics.BURST_MIN_EVENTS`` unified events: events that a client
  receives as one lump, as when a proxy buffers the response and lets it go.
  Streams that are generated token by token show gaps of tens of
  milliseconds between chunks; a loopback replay shows one burst.
* ``columns(n)`` buckets the span from 0 to the last arrival into ``n``
  equal columns of (bytes, events), for a bar chart.

The whole-body verdict (``burst`` in ``StreamResult.metrics``, see
``streamwire.metrics``) is the result's; the timeline shows where.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field

from ..metrics import BURST_MIN_EVENTS
from .record import Recording

__all__ = ["BURST_MIN_CHUNKS", "BURST_SPACING", "Arrival", "Burst", "Gap", "Timeline"]

#: Chunks closer together than this (seconds) may form a burst.
BURST_SPACING = 0.002
#: The fewest chunks that form a burst.
BURST_MIN_CHUNKS = 3
_CONTENT_EVENTS = frozenset(
    {"TextDelta", "ReasoningDelta", "RefusalDelta", "ToolCallStarted", "ToolCallArgumentsDelta"}
)


@dataclass(frozen=True, slots=True)
class Arrival:
    """One chunk as it arrived."""

    #: Its position in the recording, from 0.
    index: int
    #: Seconds from the start.
    t: float
    size: int
    #: Unified events it produced, by class name.
    events: Counter[str] = field(default_factory=Counter)

    @property
    def event_count(self) -> int:
        return sum(self.events.values())

    @property
    def has_content(self) -> bool:
        """It produced text, reasoning, a refusal or a tool call."""
        return any(name in _CONTENT_EVENTS for name in self.events)


@dataclass(frozen=True, slots=True)
class Gap:
    """The wait before chunk ``before``."""

    before: int
    #: When the wait began (the previous chunk's arrival; 0 for the first chunk).
    t: float
    seconds: float


@dataclass(frozen=True, slots=True)
class Burst:
    """Chunks ``first`` to ``last`` arrived together."""

    first: int
    last: int
    t: float
    seconds: float
    size: int
    events: int

    @property
    def chunks(self) -> int:
        return self.last - self.first + 1


@dataclass(frozen=True, slots=True)
class Timeline:
    """A stream's chunks in arrival order, with what each produced."""

    arrivals: tuple[Arrival, ...]
    #: Seconds from the start to the headers, when known.
    time_to_headers: float | None = None
    #: Seconds from the start to the end of reading, when known.
    end: float | None = None
    #: How reading ended (``eof``, ``cancel``, ``idle_timeout``, ...).
    ended_by: str | None = None

    @classmethod
    def of(cls, recording: Recording) -> Timeline:
        """The timeline of a recording."""
        arrivals = tuple(
            Arrival(
                i,
                chunk.t,
                len(chunk.data),
                Counter(str(e.get("event")) for e in chunk.events if isinstance(e, dict)),
            )
            for i, chunk in enumerate(recording.chunks)
        )
        return cls(arrivals, recording.time_to_headers, recording.end_t, recording.end)

    @property
    def span(self) -> float:
        """Seconds from the start to the last arrival (or the end, if later)."""
        last = self.arrivals[-1].t if self.arrivals else 0.0
        return max(last, self.end or 0.0)

    @property
    def first_content(self) -> Arrival | None:
        """The first chunk that produced content."""
        return next((a for a in self.arrivals if a.has_content), None)

    def gaps(self) -> list[Gap]:
        """The wait before each chunk, longest first."""
        out: list[Gap] = []
        previous = 0.0
        for arrival in self.arrivals:
            out.append(Gap(arrival.index, previous, max(arrival.t - previous, 0.0)))
            previous = arrival.t
        return sorted(out, key=lambda g: -g.seconds)

    def bursts(self) -> list[Burst]:
        """Runs of chunks that arrived together (see the module docstring)."""
        out: list[Burst] = []
        run: list[Arrival] = []

        def close() -> None:
            events = sum(a.event_count for a in run)
            if len(run) >= BURST_MIN_CHUNKS and events >= BURST_MIN_EVENTS:
                seconds = run[-1].t - run[0].t
                size = sum(a.size for a in run)
                out.append(Burst(run[0].index, run[-1].index, run[0].t, seconds, size, events))

        for arrival in self.arrivals:
            if run and arrival.t - run[-1].t > BURST_SPACING:
                close()
                run = []
            run.append(arrival)
        close()
        return out

    def columns(self, count: int) -> list[tuple[int, int]]:
        """(bytes, events) in ``count`` equal spans of time from 0 to ``span``."""
        span = self.span
        out = [[0, 0] for _ in range(count)]
        for arrival in self.arrivals:
            column = min(int(arrival.t / span * count), count - 1) if span > 0 else 0
            out[column][0] += arrival.size
            out[column][1] += arrival.event_count
        return [(b, e) for b, e in out]
