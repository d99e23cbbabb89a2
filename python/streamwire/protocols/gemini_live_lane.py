"""The ``gemini-live`` fast lane: a model turn's text parts.

The lane of ``_lane.py`` for a Gemini Live session (Gemini API reference,
"Live API - WebSockets API reference", checked 2026-11-29): while a model
turn is in flight, nearly every server message is one ``serverContent.
modelTurn`` carrying one text part. ``TEXT`` is that message's shape, exactly
the one ``GeminiLiveSession._fast_text`` takes (the ``role`` is not read);
while the turn's candidate has a run of plain text open, its text is taken
by the matcher and appended to the run, as ``GeminiParts.text`` does.
"""

from __future__ import annotations

from .._core import MessageMatcher, ShapeMatcher
from ..accumulate import Accumulator
from ..events import text_delta_builder
from ._lane import Lane
from ._websocket import Turn
from .gemini_live_turns import LiveTurn

__all__ = ["TEXT", "LiveLane", "new_matcher"]

#: ``{"serverContent": {"modelTurn": {"parts": [{"text": ...}]}}}``; captures the text.
TEXT = ShapeMatcher(
    [("message", {"serverContent": {"modelTurn": {"role?": "$any", "parts": [{"text": "$str"}]}}})]
)


def new_matcher() -> MessageMatcher:
    """A session's matcher (it keeps the session's skeletons)."""
    return MessageMatcher(TEXT, build={0: (text_delta_builder, 0)})


class LiveLane(Lane):
    """The fast lane of a model turn whose plain text run is open."""

    __slots__ = ("text", "turn")

    def __init__(
        self, matcher: MessageMatcher, session: Accumulator, turn: Turn[LiveTurn], max_bytes: int
    ) -> None:
        super().__init__(matcher, session, turn.acc, turn.number, max_bytes)
        self.turn = turn
        self.text = turn.machine.cand.state.text
        matcher.expect(0, {}, None, self.taken, max_bytes)

    def flush(self) -> None:
        taken = self.taken
        if taken:
            self.text.extend(taken)
            taken.clear()
