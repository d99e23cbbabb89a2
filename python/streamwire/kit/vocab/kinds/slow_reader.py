"""The slow-reader kind: the client stops reading; the hop slows the upstream or says it gave up."""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

from ..buffers import slow_reader_bytes
from ..delivery import Unit
from .base import Conduct, Kind, Limits, at_least

__all__ = [
    "MAX_SLOW_BYTES",
    "MAX_SLOW_DELTAS",
    "SLOW_DELTAS",
    "SLOW_DELTA_CHARS",
    "SLOW_READER_AFTER",
    "SLOW_READER_EVENT_BYTES",
    "SLOW_READER_HEAD_PAUSE",
    "SLOW_READER_PAUSE",
    "SLOW_READER_RCVBUF",
    "SLOW_READER_SNDBUF",
    "SLOW_READER_TOTAL",
    "SlowReader",
    "slow_text",
]

#: The client stops reading after this many text deltas, and the mock logs
#: when it wrote the one after them.
SLOW_READER_AFTER = 3
#: ... for this many seconds, with this receive buffer, then reads on.
SLOW_READER_PAUSE = 3.0
SLOW_READER_RCVBUF = 32 * 1024
#: The answer's deltas of ``SLOW_DELTA_CHARS`` characters unless sized
#: (``SlowReader.sized``): 16,384,000 bytes of text, more than twice what the
#: kernel buffers of a relay on loopback hold where tcp_rmem tops out at 6 MiB.
SLOW_DELTAS = 4096
SLOW_DELTA_CHARS = 4000
#: The most deltas a sized answer has (131 MB of text), and its bytes.
MAX_SLOW_DELTAS = 32768
MAX_SLOW_BYTES = MAX_SLOW_DELTAS * SLOW_DELTA_CHARS
#: The largest SSE line or event the client parses: a Responses done event
#: repeats the whole text of the answer, and a hop that renders Responses
#: from another upstream's sized answer writes the largest one.
SLOW_READER_EVENT_BYTES = 2 * MAX_SLOW_BYTES
#: The answer waits this long after its first few text deltas.
SLOW_READER_HEAD_PAUSE = 0.5
#: The least time a slow-reader cell may take, whole (``CheckPlan.total_timeout``
#: when that is longer).
SLOW_READER_TOTAL = 300.0
#: The mock's send buffer (SO_SNDBUF): its writes block when the gateway
#: stops taking bytes, so the log shows where the bytes wait.
SLOW_READER_SNDBUF = 64 * 1024


def slow_text(deltas: int = SLOW_DELTAS) -> tuple[str, ...]:
    """The answer's text: ``deltas`` numbered deltas of ``SLOW_DELTA_CHARS``."""
    filler = "streamwire slow reader: every byte arrives, in order, once. " * 70
    return tuple((f"<{i:04d}> " + filler)[: SLOW_DELTA_CHARS - 1] + "\n" for i in range(deltas))


@dataclass(frozen=True)
class SlowReader(Kind):
    """The client stops reading for ``SLOW_READER_PAUSE`` after a few deltas,
    with a small receive window, while the mock writes an answer larger than
    this machine's sockets hold (``buffers.slow_reader_bytes``); the
    ``backpressure`` layer judges where the bytes waited."""

    layers = frozenset({"backpressure"})
    send_buffer = SLOW_READER_SNDBUF

    @property
    def conduct(self) -> Conduct:
        return Conduct(
            pause_after=SLOW_READER_AFTER,
            pause_for=SLOW_READER_PAUSE,
            recv_buffer=SLOW_READER_RCVBUF,
            event_bytes=SLOW_READER_EVENT_BYTES,
        )

    def sized(self, case: Any, deltas: int) -> Any:
        """``case`` with ``deltas`` deltas of text (and as many output tokens),
        from 1 to ``MAX_SLOW_DELTAS``."""
        deltas = max(1, min(MAX_SLOW_DELTAS, deltas))
        if deltas == len(case.text):
            return case
        return replace(case, text=slow_text(deltas), usage=(case.usage[0], deltas))

    def units(self, units: list[Unit], keepalives: list[Unit], silence: float | None) -> list[Unit]:
        """A pause after the first few text deltas (the client's few, and one),
        so that the client has paused before the bulk comes. Written all at
        once, the bulk met a relay whose kernel buffers had grown while it kept
        up (Linux autotunes a receive buffer up to ``tcp_rmem``'s maximum,
        32 MiB on some machines: more than the answer), and an honest relay
        could take the whole answer in them. After the pause the relay's
        buffers are still the size its first few events needed."""
        texts = [i for i, u in enumerate(units) if u.kind == "text"]
        if len(texts) > SLOW_READER_AFTER + 1:
            at = texts[SLOW_READER_AFTER + 1]
            paused = replace(units[at], pause=max(units[at].pause, SLOW_READER_HEAD_PAUSE))
            units = [*units[:at], paused, *units[at + 1 :]]
        return super().units(units, keepalives, silence)

    def logged(self, case: Any) -> dict[str, Any]:
        return {"deltas": len(case.text)}

    def limits(self, limits: Limits) -> Limits:
        # The client reads and parses up to 131 MB: on a machine busy with
        # other work it took over 120 s (a clean-clone CI beside another and a
        # busy loop, on two cores: 74.8 MB of an 83 MB answer when the limit
        # cut it). A hop that stalls is caught by the read limit, not this one.
        return at_least(limits, total=SLOW_READER_TOTAL)

    def tag_options(self, limits: Limits) -> dict[str, float]:
        # An answer larger than what this machine's sockets can take, in the
        # upstream's protocol: the mock sizes it and logs its deltas.
        return {"answer_bytes": slow_reader_bytes()}
