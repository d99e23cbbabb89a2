"""The retry kind: the first attempt fails, and what reaches the client is one attempt's answer."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from ....events import ErrorReceived, Event, MessageCompleted, ToolCallArgumentsDelta
from .base import Failure, Kind, Limits, at_least

__all__ = ["DEFAULT_STALL", "Mode", "Retry"]

#: How the first attempt fails: before any byte (an HTTP error with the
#: provider's error body), after some text (the connection reset), after a
#: call's first fragments (the provider's in-stream error), or by saying
#: nothing for a while (a stall).
Mode = Literal["before_output", "after_text", "after_tool", "stall"]
#: How long a stalled first attempt says nothing, when its tag sets none.
DEFAULT_STALL = 5.0

_FAILURES: dict[str, Failure] = {
    "before_output": Failure("before_output", before_output=True),
    "after_text": Failure("after_text", reset_after_texts=2),
    "after_tool": Failure("after_tool"),
    "stall": Failure("stall", stall=True),
}


@dataclass(frozen=True)
class Retry(Kind):
    """The first attempt fails as ``mode`` says; each attempt answers its own
    (``Attempt <n>: ...``, call ids ``..._a<n>``), so that the ``retries``
    layer tells which attempts reached the client."""

    mode: Mode = "before_output"

    layers = frozenset({"retries"})
    per_attempt = True

    @property
    def clock_events(self) -> str | None:
        if self.mode == "before_output":
            return None
        return (
            "whether the gateway passed the failed attempt's output on before it read "
            "the break is the clock's"
        )

    def failure(self, attempt: int) -> Failure | None:
        return _FAILURES[self.mode] if attempt == 1 else None

    def events(
        self, events: list[Event], attempt: int, error: tuple[str, str | int | None, str]
    ) -> list[Event]:
        """A first attempt that fails after its call's first fragment: the
        provider's in-stream error there, and the end."""
        if self.mode != "after_tool" or attempt != 1:
            return events
        at = next(i for i, e in enumerate(events) if isinstance(e, ToolCallArgumentsDelta)) + 1
        kind, code, message = error
        return [
            *events[:at],
            ErrorReceived(phase="provider", type=kind, code=code, message=message, retryable=True),
            MessageCompleted(status="error", stop_reason=None, provider_stop_reason=None),
        ]

    def tag_options(self, limits: Limits) -> dict[str, float]:
        return {"stall": limits.stall} if self.mode == "stall" else {}

    def limits(self, limits: Limits) -> Limits:
        if self.mode != "stall":
            return limits
        # The client outwaits the stall; an abandoned attempt shows its end.
        return at_least(limits, read=limits.stall + 10.0, settle=limits.stall + limits.settle)
