"""The cancel kind: the client hangs up mid-stream, and the upstream connection must close."""

from __future__ import annotations

from dataclasses import dataclass, replace

from .base import Conduct, Kind, Limits

__all__ = ["CANCEL_TIMER", "CANCEL_WAIT", "Cancel"]

#: The client hangs up after the case's few text deltas, or this many seconds
#: after it sent the request if they have not all arrived by then (a hop that
#: holds the answer): the hang-up comes while the upstream is still writing,
#: whatever the hop does.
CANCEL_TIMER = 1.0
#: How long the judge waits for the upstream connection to close.
CANCEL_WAIT = 3.5


@dataclass(frozen=True)
class Cancel(Kind):
    """The client hangs up after ``after`` text deltas (or ``CANCEL_TIMER``);
    the answer the truth holds is ``cancelled``, and the ``cancel`` layer
    times the upstream's close (``streaming`` the deltas before it)."""

    after: int = 3

    layers = frozenset({"cancel", "streaming"})

    @property
    def clock_events(self) -> str | None:
        return "how many events arrived before the client hung up is the clock's"

    @property
    def conduct(self) -> Conduct:
        return Conduct(hang_up_after=self.after, hang_up_timer=CANCEL_TIMER)

    def limits(self, limits: Limits) -> Limits:
        return replace(limits, settle=limits.hang_up)
