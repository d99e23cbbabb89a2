"""One response (or model turn) of a WebSocket session, and tool-result refusals.

Part of the WebSocket plumbing (``_websocket.py``, where the session and its
rules are described; docs/design.md "Tool calls", checked 2026-11-29): a ``Turn``
holds one response's accumulator, its protocol machine and its audio; a tool
result for a call of a cancelled response, or for a call the provider
withdrew, is refused.
"""

from __future__ import annotations

import base64
import binascii
from typing import Any, Generic, TypeVar

from ..accumulate import Accumulator
from ..errors import ToolResultError
from ..kinds import AudioMode
from ..result import StreamResult

__all__ = ["REVOKED", "AudioMode", "Turn", "b64_size", "refuse_cancelled"]

M = TypeVar("M")
#: The ``invalid_reason`` prefix of a call the provider withdrew (Live
#: ``toolCallCancellation``): a tool result for it is refused.
REVOKED = "cancelled by the provider"


def b64_size(data: str) -> int:
    """The decoded size of a base64 text, without decoding it."""
    size = len(data)
    if size == 0:
        return 0
    padding = 2 if data.endswith("==") else 1 if data.endswith("=") else 0
    return size * 3 // 4 - padding


class Turn(Generic[M]):
    """One response (or model turn) of a session: its accumulator and its machine."""

    __slots__ = ("acc", "audio", "in_flight", "key", "machine", "number", "stamp", "t0")

    def __init__(self, acc: Accumulator, number: int, key: Any, machine: M) -> None:
        self.acc = acc
        #: The response's number in the session, from 0.
        self.number = number
        #: The protocol's id of the response (Realtime, Responses), if any.
        self.key = key
        self.machine = machine
        #: The response has not ended yet.
        self.in_flight = True
        #: The decoded audio (``audio="keep"``), else None.
        self.audio: bytearray | None = None
        #: Clock readings: the first message, the last event (None: no clock yet).
        self.t0: float | None = None
        self.stamp: float | None = None

    def count_audio(self, data: Any, mode: AudioMode) -> bool:
        """Counts one base64 audio delta; False when it is not base64 text."""
        acc = self.acc
        metrics = acc.provider_metrics
        if type(data) is not str:
            return False
        if mode == "keep":
            try:
                decoded = base64.b64decode(data, validate=True)
            except (binascii.Error, ValueError):
                return False
            if self.audio is None:
                self.audio = bytearray()
            self.audio += decoded
            size = len(decoded)
        else:
            size = b64_size(data)
        metrics["audio_deltas"] = metrics.get("audio_deltas", 0) + 1
        metrics["audio_bytes"] = metrics.get("audio_bytes", 0) + size
        acc.cached = None
        return True


def refuse_cancelled(result: StreamResult, call_id: str) -> None:
    """Refuses (``ToolResultError``) a tool result for a call the provider cancelled."""
    call = result.tool_call(call_id)
    if call is None:
        return
    if result.status == "cancelled":
        raise ToolResultError(
            f"tool call {call_id!r} belongs to a cancelled response: it must not be run, "
            "and the provider expects no result for it"
        )
    reason = call.invalid_reason
    if reason is not None and reason.startswith(REVOKED):
        raise ToolResultError(f"tool call {call_id!r} was {reason}: it expects no result")
