"""The ``openai-realtime`` fast lane: a response's text, transcript and audio deltas.

The lane of ``_lane.py`` for a Realtime session (OpenAI API reference,
"Realtime server events", checked 2026-11-29): while a response is
streaming, nearly every server event is a ``response.output_audio.delta``
(base64 audio, counted or kept) or the ``response.output_audio_transcript.delta``
beside it (or, for a text response, ``response.output_text.delta``), each
naming its response, item and content part. ``DELTAS`` is their shape; a
message of that shape for the response, item and part the lane is aimed at
is applied as ``openai_realtime_items.py`` applies it, and the transcript
and text deltas of that part are taken by the matcher itself; so are the
audio deltas of the item (``audio="count"``): tallied there, their decoded
size computed from the base64 text without building a ``str`` of it, and
added to the response's ``provider_metrics`` by ``flush``. Anything else
takes the general path.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from .._core import MessageMatcher, ShapeMatcher
from ..accumulate import Accumulator
from ..events import text_delta_builder
from ._lane import Lane
from ._websocket import Turn
from .openai_realtime_items import PartKind
from .openai_realtime_machine import RealtimeResponse

__all__ = ["AUDIO", "BY_TYPE", "DELTAS", "KINDS", "RealtimeLane", "new_matcher"]

#: A delta event as the server sends it; captures ``type``, ``response_id``,
#: ``item_id``, ``content_index`` (None when absent) and ``delta``. Every
#: field is one the general path knows; any other declines.
_DELTA = {
    "type": "$str",
    "event_id?": "$any",
    "response_id": "$str",
    "item_id": "$str",
    "output_index?": "$any",
    "content_index?": "$int",
    "delta": "$str",
    "obfuscation?": "$any",
    "logprobs?": "$any",
}
DELTAS = ShapeMatcher([("message", _DELTA)])
#: The audio delta types (GA and beta names).
AUDIO = ("response.output_audio.delta", "response.audio.delta")
#: The delta types of each part kind (the GA names and the beta ones).
KINDS: Mapping[str, tuple[str, ...]] = {
    "text": ("response.output_text.delta", "response.text.delta"),
    "audio": ("response.output_audio_transcript.delta", "response.audio_transcript.delta"),
}
#: Delta type -> the kind of the part it extends.
BY_TYPE: Mapping[str, PartKind] = {k: group for group, kinds in KINDS.items() for k in kinds}  # type: ignore[misc]


def new_matcher() -> MessageMatcher:
    """A session's matcher (it keeps the session's skeletons)."""
    return MessageMatcher(DELTAS, build={0: (text_delta_builder, 0)})


class RealtimeLane(Lane):
    """The fast lane of a streaming response (see the module docs)."""

    __slots__ = (
        "audio",
        "chunks",
        "index",
        "item_id",
        "items",
        "kind",
        "rid",
        "tallied",
        "text",
        "turn",
    )

    def __init__(
        self,
        matcher: MessageMatcher,
        session: Accumulator,
        turn: Turn[RealtimeResponse],
        max_bytes: int,
    ) -> None:
        super().__init__(matcher, session, turn.acc, turn.number, max_bytes)
        machine = turn.machine
        self.turn = turn
        self.rid: str = turn.key
        self.items = machine.items
        self.text = machine.choice.text
        #: The part the taken deltas go to: its item, index, kind and chunks.
        self.item_id: str | None = None
        self.index = 0
        self.kind: PartKind | None = None
        self.chunks: list[str] | None = None
        #: The item whose audio deltas the matcher tallies, and its tally when folded.
        self.audio: str | None = None
        self.tallied = matcher.tallied

    def part(self, item_id: str, index: int, kind: PartKind) -> list[str] | None:
        """The chunks of an open message item's existing part of ``kind``, or None."""
        item = self.items.items.get(item_id)
        if item is None or item.state != "open" or item.type != "message":
            return None
        found = self.items.parts.get((item_id, index))
        return found[1] if found is not None and found[0] == kind else None

    def open_item(self, item_id: str) -> bool:
        """Whether the item is announced and open (an audio delta changes nothing else)."""
        item = self.items.items.get(item_id)
        return item is not None and item.state == "open"

    def aim(self, item_id: str, index: int, kind: PartKind, chunks: list[str]) -> None:
        """The next deltas of this part are taken by the matcher."""
        self.flush()
        self.item_id, self.index, self.kind, self.chunks = item_id, index, kind, chunks
        allowed: tuple[Any, ...] = (index, None) if index == 0 else (index,)
        equal = {0: KINDS[kind], 1: self.rid, 2: item_id, 3: allowed}
        self.matcher.expect(0, equal, None, self.taken, self.max_bytes)

    def aim_audio(self, item_id: str) -> None:
        """The next audio deltas of this item are tallied by the matcher (``count``)."""
        self.flush()
        self.audio = item_id
        self.matcher.expect(0, {0: AUDIO, 1: self.rid, 2: item_id}, None, None, self.max_bytes)

    def flush(self) -> None:
        taken = self.taken
        if taken:
            chunks = self.chunks
            assert chunks is not None
            chunks.extend(taken)
            self.text.extend(taken)
            taken.clear()
        tallied = self.matcher.tallied
        deltas = tallied[0] - self.tallied[0]
        if deltas:
            # What Turn.count_audio adds for each delta, for all of them.
            metrics = self.acc.provider_metrics
            metrics["audio_deltas"] = metrics.get("audio_deltas", 0) + deltas
            metrics["audio_bytes"] = metrics.get("audio_bytes", 0) + tallied[1] - self.tallied[1]
            self.acc.cached = None
            self.empty += deltas  # messages without an event
            self.tallied = tallied
