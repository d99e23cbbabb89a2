"""A fixture's wire as editable units: decode, change the JSON inside, encode again.

Structure-aware tests and the fuzzer (``hostile_fuzz.py``) rewrite what a
stream *says*, not its bytes: each protocol's wire is split into the units its
framing defines (docs/design.md "Layers"), each unit's payload decoded as JSON
when it is JSON, and the stream re-encoded after the payloads were changed:

* SSE (``openai-chat``, ``openai-responses``, ``anthropic``, ``gemini``):
  events, re-encoded with ``sw.encode_sse`` under the same name and id;
* AWS EventStream (``bedrock-converse``, ``bedrock-invoke``): messages, with
  their headers, re-encoded with ``sw.encode_eventstream``; a
  ``bedrock-invoke`` chunk's base64 ``bytes`` is decoded too (``Unit.inner``),
  so the Anthropic event inside can be changed like any other payload;
* a JSON array (``gemini-json``): its elements;
* WebSocket sessions (``.jsonl`` fixtures): one message per line.

A payload that is not JSON (``[DONE]``, an empty keep-alive) stays text.
"""

from __future__ import annotations

import base64
import binascii
import json
import re
from dataclasses import dataclass, field
from typing import Any

import streamwire as sw
from streamwire.io._wire import framing_of

__all__ = ["NOT_JSON", "Unit", "Wire", "decode_wire", "dumps"]


class _NotJson:
    """The marker of a payload that is not JSON; copies of it are itself."""

    def __copy__(self) -> _NotJson:
        return self

    def __deepcopy__(self, memo: Any) -> _NotJson:
        return self

    def __repr__(self) -> str:
        return "NOT_JSON"


#: The payload of a unit whose data is not JSON (its ``text`` holds it).
NOT_JSON: Any = _NotJson()
WEBSOCKET = frozenset({"openai-responses-ws", "openai-realtime", "gemini-live"})


_SURROGATE = re.compile("[\ud800-\udfff]")


def dumps(value: Any) -> str:
    """Compact JSON, non-ASCII kept, lone surrogates written as their escapes
    (as an upstream sends them: its bytes are UTF-8)."""
    text = json.dumps(value, ensure_ascii=False, separators=(",", ":"))
    return _SURROGATE.sub(lambda m: f"\\u{ord(m[0]):04x}", text)


def _loads(text: str) -> Any:
    try:
        return json.loads(text)
    except (ValueError, RecursionError):
        return NOT_JSON


@dataclass
class Unit:
    """One framing unit: an SSE event, an EventStream message, an array element, a message."""

    #: The decoded JSON payload, or ``NOT_JSON`` (then ``text`` is the payload).
    payload: Any
    text: str = ""
    #: SSE: the event name (None for unnamed) and id.
    event: str | None = None
    id: str | None = None
    #: EventStream: the headers.
    headers: dict[str, Any] = field(default_factory=dict)
    #: bedrock-invoke: the JSON event inside a chunk's base64 ``bytes`` (or ``NOT_JSON``).
    inner: Any = NOT_JSON

    def data(self) -> str:
        """The payload as text (its JSON when it is JSON)."""
        return self.text if self.payload is NOT_JSON else dumps(self.payload)


@dataclass
class Wire:
    """A stream's units and how to encode them again."""

    protocol: str
    kind: str  # "sse", "eventstream", "json", "messages", or "raw" (not the wire format)
    units: list[Unit]
    #: The bytes of a ``raw`` wire (a body that is not the protocol's format).
    body: bytes = b""

    def encode(self) -> bytes:
        """The wire bytes (WebSocket: the messages, one per line)."""
        if self.kind == "raw":
            return self.body
        if self.kind == "messages":
            return "\n".join(unit.data() for unit in self.units).encode("utf-8", "surrogatepass")
        if self.kind == "json":
            body = ",\r\n".join(unit.data() for unit in self.units)
            return ("[" + body + "]").encode("utf-8", "surrogatepass")
        out = bytearray()
        for unit in self.units:
            if self.kind == "sse":
                out += _sse(unit)
            else:
                out += _frame(unit)
        return bytes(out)

    def messages(self) -> list[str]:
        """WebSocket: each unit as one text message."""
        return [unit.data() for unit in self.units]


def _sse(unit: Unit) -> bytes:
    data = unit.data()
    try:
        return sw.encode_sse(data, event=unit.event, id=unit.id)
    except UnicodeEncodeError:  # a lone surrogate: JSON can say it as an escape
        escaped = data.encode("ascii", "backslashreplace").decode("ascii")
        return sw.encode_sse(escaped, event=unit.event, id=unit.id)


def _frame(unit: Unit) -> bytes:
    payload: Any = unit.payload
    if unit.inner is not NOT_JSON and isinstance(payload, dict):
        inner = dumps(unit.inner).encode("utf-8", "surrogatepass")
        payload = {**payload, "bytes": base64.b64encode(inner).decode("ascii")}
    text = unit.text if payload is NOT_JSON else dumps(payload)
    return sw.encode_eventstream(unit.headers, text.encode("utf-8", "surrogatepass"))


def decode_wire(protocol: str, raw: bytes) -> Wire:
    """Splits a fixture's raw bytes into units (see the module docstring)."""
    if protocol in WEBSOCKET:
        lines = [line for line in raw.decode("utf-8").split("\n") if line.strip()]
        return Wire(protocol, "messages", [Unit(_loads(line), line) for line in lines])
    framing = framing_of(protocol)
    if framing == "eventstream":
        messages = _messages(raw)
        if raw and not messages:
            return Wire(protocol, "raw", [], raw)
        return Wire(protocol, "eventstream", messages)
    if framing == "json":
        elements = _loads(raw.decode("utf-8", "replace"))
        if not isinstance(elements, list):
            return Wire(protocol, "raw", [], raw)
        return Wire(protocol, "json", [Unit(element) for element in elements])
    decoder = sw.SseDecoder()
    try:
        events = decoder.feed(raw) + decoder.finish()
    except sw.FramingError as exc:
        events = list(exc.partial)  # type: ignore[arg-type]
    units = [
        Unit(
            _loads(ev.data),
            ev.data,
            event=None if ev.event == "message" else ev.event,
            id=ev.id or None,
        )
        for ev in events
    ]
    return Wire(protocol, "sse", units)


def _messages(raw: bytes) -> list[Unit]:
    decoder = sw.EventStreamDecoder()
    try:
        messages = decoder.feed(raw)
    except sw.FramingError as exc:
        messages = list(exc.partial)  # type: ignore[arg-type]
    units = []
    for message in messages:
        text = message.payload.decode("utf-8", "replace")
        unit = Unit(_loads(text), text, headers=dict(message.headers))
        encoded = unit.payload.get("bytes") if isinstance(unit.payload, dict) else None
        if isinstance(encoded, str):
            try:
                unit.inner = _loads(base64.b64decode(encoded, validate=True).decode("utf-8"))
            except (binascii.Error, UnicodeDecodeError):
                pass
        units.append(unit)
    return units
