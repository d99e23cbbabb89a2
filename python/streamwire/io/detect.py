"""Which protocol produced a captured body: detection from the first bytes.

The signals, strongest first, from each provider's streaming reference
(checked 2026-11-29; the adapters' module docstrings cite the documents):

1. An AWS EventStream prelude: the first 12 bytes are a total length, a
   headers length and a CRC-32 of the first 8 that matches. The messages'
   ``:event-type`` header then tells ``bedrock-invoke`` (``chunk`` events
   carrying ``{"bytes": ...}``) from ``bedrock-converse`` (``messageStart``,
   ``contentBlockDelta``, ``metadata`` ...).
2. A JSON array (first non-blank byte ``[``): ``gemini-json``.
3. Server-Sent Events: event names (``message_start``, ``content_block_*``,
   ``ping`` -> ``anthropic``; ``response.*`` -> ``openai-responses``), else the
   first JSON payload's shape (``"object": "chat.completion.chunk"`` or
   ``choices`` -> ``openai-chat``; ``candidates`` / ``usageMetadata`` /
   ``modelVersion`` -> ``gemini``; a ``type`` of ``response.*`` or of the
   anthropic event names as above, or ``"type": "error"`` with an ``error``
   object -> ``anthropic``), else a lone ``[DONE]`` -> ``openai-chat``.

A stream of Bedrock exceptions alone, a single JSON object (an error body)
and an empty body are not told: the caller passes the protocol.

``detect(prefix)`` looks at a prefix (``SNIFF_BYTES`` are plenty) and returns
the protocol and the reason, or None and why not. It never raises on bad input.
"""

from __future__ import annotations

import binascii
import struct

from .._core import EventStreamDecoder, SseDecoder
from .._json import loads
from ..errors import FramingError

__all__ = ["SNIFF_BYTES", "Detection", "detect", "detect_payload"]

#: How much of a body detection looks at.
SNIFF_BYTES = 64 * 1024
#: Detection: (protocol or None, the reason in words).
Detection = tuple[str | None, str]

_ANTHROPIC_EVENTS = frozenset(
    {
        "message_start",
        "message_delta",
        "message_stop",
        "content_block_start",
        "content_block_delta",
        "content_block_stop",
        "ping",
    }
)
_CONVERSE_EVENTS = frozenset(
    {
        "messageStart",
        "messageStop",
        "contentBlockStart",
        "contentBlockDelta",
        "contentBlockStop",
        "metadata",
    }
)
_GEMINI_KEYS = ("candidates", "usageMetadata", "modelVersion", "promptFeedback")


def _is_eventstream(prefix: bytes) -> bool:
    if len(prefix) < 12:
        return False
    total, headers_len, crc = struct.unpack(">III", prefix[:12])
    valid_crc: bool = binascii.crc32(prefix[:8]) & 0xFFFFFFFF == crc
    return total >= 16 and headers_len <= total - 16 and valid_crc


def _eventstream(prefix: bytes) -> Detection:
    decoder = EventStreamDecoder()
    try:
        messages = decoder.feed(prefix)
    except FramingError as exc:
        messages = list(exc.partial)  # type: ignore[arg-type]
    for msg in messages:
        kind = msg.headers.get(":event-type")
        if kind == "chunk":
            return "bedrock-invoke", "AWS EventStream with 'chunk' events"
        if isinstance(kind, str) and kind in _CONVERSE_EVENTS:
            return "bedrock-converse", f"AWS EventStream with a {kind!r} event"
    # Exceptions (and nothing else) look the same in both Bedrock APIs.
    return None, "AWS EventStream without an event that tells bedrock-converse from bedrock-invoke"


def _from_payload(data: str) -> Detection | None:
    try:
        value = loads(data)
    except ValueError:
        return None
    if not isinstance(value, dict):
        return None
    kind = value.get("type")
    if kind == "error" and isinstance(value.get("error"), dict):
        return "anthropic", "an anthropic error event"
    if isinstance(kind, str):
        if kind.startswith("response."):
            return "openai-responses", f"a JSON payload of type {kind!r}"
        if kind in _ANTHROPIC_EVENTS:
            return "anthropic", f"a JSON payload of type {kind!r}"
    if value.get("object") == "chat.completion.chunk" or "choices" in value:
        return "openai-chat", "chat.completion.chunk JSON payloads"
    for key in _GEMINI_KEYS:
        if key in value:
            return "gemini", f"JSON payloads with {key!r}"
    return None


def detect_payload(data: str) -> Detection | None:
    """The protocol one JSON payload (an SSE event's data, or a whole body)
    belongs to, by its shape (signal 3 of the module docstring); None if none."""
    return _from_payload(data)


def _sse(prefix: bytes) -> Detection:
    decoder = SseDecoder()
    try:
        events = decoder.feed(prefix)
    except FramingError as exc:
        events = list(exc.partial)  # type: ignore[arg-type]
    done = False
    for event in events:
        name = event.event
        if name in _ANTHROPIC_EVENTS:
            return "anthropic", f"SSE event {name!r}"
        if name.startswith("response."):
            return "openai-responses", f"SSE event {name!r}"
        found = _from_payload(event.data)
        if found is not None:
            return found
        done = done or event.data.strip() == "[DONE]"
    if done:
        return "openai-chat", "a data: [DONE] terminator"
    if not events:
        return None, "no complete Server-Sent Event in the first bytes"
    return None, f"{len(events)} SSE events, none of a known protocol's shape"


def detect(prefix: bytes) -> Detection:
    """The protocol of a body from its first bytes, with the reason (see the module docstring)."""
    if not prefix:
        return None, "the input is empty"
    if _is_eventstream(prefix):
        return _eventstream(prefix)
    start = prefix.lstrip()[:1]
    if start == b"[":
        return "gemini-json", "a JSON array"
    if start == b"{":
        found = _from_payload(prefix.decode("utf-8", "replace"))
        reason = "a single JSON object (an error body?), not a stream"
        if found is not None:
            reason += f" (looks like {found[0]}: was streaming off?)"
        return None, reason
    return _sse(prefix)
