"""The ``gemini-live`` fast lane: a model turn's text, audio and transcript.

The lane of ``_lane.py`` for a Gemini Live session (Gemini API reference,
"Live API - WebSockets API reference", checked 2026-11-29): while a model
turn is in flight, nearly every server message is one ``serverContent``
carrying one thing, by the shapes of ``SHAPES``:

* ``TEXT``: a ``modelTurn`` with one text part, exactly the message
  ``GeminiLiveSession._fast_text`` takes (the ``role`` is not read); while the
  turn's candidate has a run of plain text open, its text is taken by the
  matcher and appended to the run, as ``GeminiParts.text`` does;
* ``AUDIO``: a ``modelTurn`` with one ``inlineData`` part of one of the
  audio types of ``AUDIO_TYPES`` (a native-audio model's speech): with
  ``audio="count"``, tallied by the matcher as ``Turn.count_audio`` counts
  it, never copied;
* ``TRANSCRIPT``: an ``outputTranscription`` (the speech's transcript, the
  turn's text): taken and appended to the candidate's text, with its event,
  as ``LiveTurn.content`` does.
"""

from __future__ import annotations

from .._core import MessageMatcher, ShapeMatcher
from ..accumulate import Accumulator
from ..events import text_delta_builder
from ._lane import Lane
from ._websocket import Turn
from .gemini_live_turns import LiveTurn

__all__ = ["AUDIO", "AUDIO_TYPES", "SHAPES", "TEXT", "TRANSCRIPT", "LiveLane", "new_matcher"]

#: The templates of ``SHAPES``, by index.
TEXT, AUDIO, TRANSCRIPT = 0, 1, 2
#: The audio types the lane tallies (Live's output is 24 kHz PCM); audio of
#: any other ``audio/`` type takes the general path, which counts it too.
AUDIO_TYPES = ("audio/pcm;rate=24000", "audio/pcm")


def _model_turn(part: dict[str, object]) -> dict[str, object]:
    return {"serverContent": {"modelTurn": {"role?": "$any", "parts": [part]}}}


#: The lane's message shapes (see the module docstring); each captures its
#: string last (the text; the audio type, then its base64 data).
SHAPES = ShapeMatcher(
    [
        ("message", _model_turn({"text": "$str"})),
        ("message", _model_turn({"inlineData": {"mimeType": "$str", "data": "$str"}})),
        ("message", {"serverContent": {"outputTranscription": {"text": "$str"}}}),
    ]
)


def new_matcher() -> MessageMatcher:
    """A session's matcher (it keeps the session's skeletons)."""
    texts = (text_delta_builder, 0)
    return MessageMatcher(SHAPES, build={TEXT: texts, TRANSCRIPT: texts})


class LiveLane(Lane):
    """The fast lane of a model turn in flight: its transcripts, its text parts
    while a plain text run is open (``plain``), its audio when counted
    (``tally``: ``audio="count"``)."""

    __slots__ = ("tallied", "text", "turn")

    def __init__(
        self,
        matcher: MessageMatcher,
        session: Accumulator,
        turn: Turn[LiveTurn],
        max_bytes: int,
        *,
        plain: bool,
        tally: bool,
    ) -> None:
        super().__init__(matcher, session, turn.acc, turn.number, max_bytes)
        self.turn = turn
        self.text = turn.machine.cand.state.text
        self.tallied = matcher.tallied
        # Text parts and transcripts go to the one list, in the order they came.
        if plain:
            matcher.expect(TEXT, {}, None, self.taken, max_bytes)
        matcher.expect(TRANSCRIPT, {}, None, self.taken, max_bytes)
        if tally:
            matcher.expect(AUDIO, {0: AUDIO_TYPES}, None, None, max_bytes)

    def flush(self) -> None:
        taken = self.taken
        if taken:
            self.text.extend(taken)
            taken.clear()
        tallied = self.matcher.tallied
        deltas = tallied[0] - self.tallied[0]
        if deltas:
            # What Turn.count_audio adds for each audio part, for all of them.
            metrics = self.acc.provider_metrics
            metrics["audio_deltas"] = metrics.get("audio_deltas", 0) + deltas
            metrics["audio_bytes"] = metrics.get("audio_bytes", 0) + tallied[1] - self.tallied[1]
            self.acc.cached = None
            self.empty += deltas  # messages without an event
            self.tallied = tallied
