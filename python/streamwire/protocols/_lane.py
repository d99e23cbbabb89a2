"""The WebSocket adapters' fast lane: a stream's dominant message, matched in Rust.

A WebSocket session is mostly one kind of message (a Responses or Realtime
text delta, a Gemini Live model-turn part, a Realtime audio delta), each fed
alone: there is no chunk to batch them in, so every Python step per message
counts. Measured on the benches' sessions (py-spy, ``bench_pipeline_websocket.py``,
checked 2026-12-01): decoding the message into a dict (``orjson.loads``) and
routing it through the session and response machines cost 3 to 5 times what
a plain ``orjson.loads`` loop does.

When the session is in a state where such a message can only do one thing
(append a delta to a known open part), the adapter opens a ``Lane``: the
message is matched in Rust against the shapes of the SSE fast path
(``MessageMatcher``, which matches the session's next delta by its last
one's skeleton) and, if it fits the state the lane was opened for, applied
directly. The adapter tells the matcher what fits (``MessageMatcher.expect``:
the part's ids, a sequence number that counts up); a match that fits is
*taken* there: its delta goes to the lane's ``taken`` list and the message
comes back as the list of its one event, which the adapter returns as it is.
``flush`` hands the taken deltas on to the response's state (its part and
its text), in order, before anything else touches that state. Anything
else, including a match that does not fit, takes the general path, which
closes the lane first and may open a new one after. Where the adapter
installs the matcher as its front (``WebSocketSession._install_front``), a
taken message does not even reach Python: ``MessageMatcher.feed`` answers
it while the lane is open (``arm``; ``release`` when the lane closes) and
hands the rest to the adapter's ``_feed_matched``.

The lane defers the per-message counters (messages, their bytes, events):
the matcher counts what it matched, the lane what it did not take (handed
on to the general path, which counts it) and the deltas that were empty (no
event), and ``fold`` adds the difference to the session's and the response's
accumulators when anything reads them: before the general path runs and
before any result is built. A lane is only opened without a clock (timings
are per message).
"""

from __future__ import annotations

from .._core import MessageMatcher
from ..accumulate import Accumulator

__all__ = ["Lane"]


class Lane:
    """The fast path's view of one response in flight, and its deferred counters."""

    __slots__ = (
        "acc",
        "base",
        "empty",
        "match",
        "matcher",
        "max_bytes",
        "refused",
        "refused_bytes",
        "runs",
        "session",
        "taken",
    )

    def __init__(
        self,
        matcher: MessageMatcher,
        session: Accumulator,
        acc: Accumulator,
        number: int,
        max_bytes: int,
    ) -> None:
        self.matcher = matcher
        #: ``MessageMatcher.match`` of the session.
        self.match = matcher.match
        self.session = session
        #: The response's accumulator.
        self.acc = acc
        #: What ``last_turns`` says of a call the lane took: one event of this response.
        self.runs = [(number, 1)]
        self.max_bytes = max_bytes
        #: The matcher's counts when the counters were last folded.
        self.base = matcher.matched
        #: Matched messages the lane did not take, their bytes; empty deltas taken.
        self.refused = self.refused_bytes = self.empty = 0
        #: The deltas the matcher took since the last ``flush``.
        self.taken: list[str] = []

    def flush(self) -> None:
        """Hands the taken deltas on to the response's state (the protocol's part)."""

    def close(self) -> None:
        """The general path is about to run: everything deferred is applied."""
        self.fold()
        self.matcher.release()

    def refuse(self, size: int) -> None:
        """A matched message of ``size`` bytes goes to the general path instead."""
        self.refused += 1
        self.refused_bytes += size

    def fold(self) -> None:
        """Applies the taken deltas and adds the deferred counters to the session's
        and the response's accumulators."""
        self.flush()
        matched, size = self.matcher.matched
        messages = matched - self.base[0] - self.refused
        if messages:
            size -= self.base[1] + self.refused_bytes
            events = messages - self.empty
            for acc in (self.session, self.acc):
                acc.cached = None
                acc.wire_events += messages
                acc.bytes_received += size
                acc.events += events
        self.base = self.matcher.matched
        self.refused = self.refused_bytes = self.empty = 0
