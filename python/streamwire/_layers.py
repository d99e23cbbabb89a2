"""The three layers of a body, side by side: wire events, provider events, unified events.

docs/design.md ("Fixtures": all three layers stay reviewable) asks that a
wrong result show which layer lost the information. ``walk`` splits a body
into its wire events with their byte ranges, by the protocol's framing:

* SSE: a wire event is a block of lines ending with the blank line that
  dispatches it (comments and blank lines before it included); its label is
  the event name.
* AWS EventStream: a wire event is one message, its length read from its
  prelude; its label is its ``:event-type`` (or ``exception <type>``,
  ``error <code>``).
* JSON (``gemini-json``): a wire event is one element of the streamed array,
  split by the adapter's own ``ArraySplitter``.

Each wire event's bytes, and only they, are fed to the adapter, so the
unified events a feed returns are the ones that wire event became. The
provider event is the wire event's JSON payload, reduced to its ``type`` and
its non-empty leaf fields (``choices[0].delta.content='Hi'``); bedrock-invoke's
base64 ``bytes`` are decoded first. What a wire event did beyond its events is
read off the result before and after it: a new unknown event type, a protocol
conflict, a warning, an error, a stop reason or status decided; a wire event
that did none of these and gave no event is ``ignored``. The payload's
padding members (Bedrock's ``p``, the Responses API's ``obfuscation``) are
left out. This costs a result snapshot per wire event: a view
for finding a fault, not for the hot path.
"""

from __future__ import annotations

import base64
import binascii
import json
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

from ._core import EventStreamDecoder, SseDecoder
from .errors import FramingError
from .events import Event, MessageCompleted
from .io._wire import framing_of
from .protocols import Stream
from .result import StreamResult

__all__ = ["LayerRow", "provider_fields", "walk"]

#: The most leaf fields a provider event shows.
MAX_FIELDS = 8
_SHORT = 28


@dataclass(frozen=True, slots=True)
class LayerRow:
    """One wire event and what became of it."""

    #: Its bytes in the body: ``body[start:end]``.
    start: int
    end: int
    #: The wire layer: SSE event name, EventStream headers, "array element", ...
    wire: str
    #: The provider layer: the payload's type and telling fields.
    provider: str
    #: The unified events it became.
    unified: tuple[Event, ...]
    #: What else it did: "ignored", "unknown: ...", "conflict: ...", "warning ...".
    notes: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class _Piece:
    start: int
    end: int
    wire: str
    payload: str | None


def _short(value: Any) -> str:
    text = json.dumps(value, ensure_ascii=False) if isinstance(value, str) else str(value)
    return text if len(text) <= _SHORT else text[: _SHORT - 1] + "…"


#: Top-level members that only pad the payload: Bedrock's ``p`` (against
#: length side channels) and the Responses API's ``obfuscation``.
_PADDING = frozenset({"type", "p", "obfuscation"})


def _leaves(value: Any, path: str, out: list[str]) -> None:
    if len(out) >= MAX_FIELDS:
        return
    if isinstance(value, dict):
        for key, item in value.items():
            if not (path == "" and key in _PADDING):
                _leaves(item, f"{path}.{key}" if path else str(key), out)
    elif isinstance(value, list):
        for i, item in enumerate(value):
            _leaves(item, f"{path}[{i}]", out)
    elif value is not None and value != "":
        out.append(f"{path}={_short(value)}")


def provider_fields(payload: str | None) -> str:
    """A payload's ``type`` and its first non-empty leaf fields, on one line."""
    if payload is None:
        return "-"
    try:
        value = json.loads(payload)
    except ValueError:
        return _short(payload) if payload.strip() else "(empty)"
    if isinstance(value, dict) and isinstance(value.get("bytes"), str):
        try:  # bedrock-invoke: the model's own event, base64 inside the message
            inner = json.loads(base64.b64decode(value["bytes"], validate=True))
        except (binascii.Error, ValueError):
            pass
        else:
            value = {"bytes→": inner}  # the rest ("p") is padding
    fields: list[str] = []
    if isinstance(value, dict) and isinstance(value.get("type"), str):
        fields.append(f"type={value['type']}")
    _leaves(value, "", fields)
    return " ".join(fields) if fields else "{}"


# --- framing -----------------------------------------------------------------------


def _sse_pieces(body: bytes) -> Iterator[_Piece]:
    decoder = SseDecoder()
    start = offset = 0
    for line in body.splitlines(keepends=True):
        offset += len(line)
        try:
            events = decoder.feed(line)
        except FramingError as exc:
            yield _Piece(start, len(body), f"framing error: {exc.kind}", None)
            return
        for event in events:
            label = event.event if event.id is None else f"{event.event} (id {event.id})"
            yield _Piece(start, offset, label, event.data)
            start = offset
    if start < len(body):
        yield _Piece(start, len(body), "(no blank line: not dispatched)", None)


def _label(headers: Any) -> str:
    """An EventStream message by its headers: the event's name, or what failed."""
    kind = headers.get(":message-type")
    if kind == "event" or (kind is None and ":event-type" in headers):
        return str(headers.get(":event-type", "(an event without :event-type)"))
    if kind == "exception":
        return f"exception {headers.get(':exception-type', '?')!s}"
    if kind == "error":
        return f"error {headers.get(':error-code', '?')!s}"
    return f":message-type={kind!s}" if kind is not None else "(no :message-type)"


def _eventstream_pieces(body: bytes) -> Iterator[_Piece]:
    offset = 0
    while offset < len(body):
        total = int.from_bytes(body[offset : offset + 4], "big")
        end = offset + total
        if len(body) - offset < 16 or total < 16 or end > len(body):
            yield _Piece(offset, len(body), "(cut-off or invalid message)", None)
            return
        try:
            (message,) = EventStreamDecoder().feed(body[offset:end])
        except (FramingError, ValueError) as exc:
            kind = getattr(exc, "kind", "invalid")
            yield _Piece(offset, len(body), f"framing error: {kind}", None)
            return
        yield _Piece(
            offset, end, _label(message.headers), message.payload.decode("utf-8", "replace")
        )
        offset = end


def _json_pieces(body: bytes) -> Iterator[_Piece]:
    from ._core import DEFAULT_MAX_EVENT_BYTES, ArraySplitter

    scanner = ArraySplitter(DEFAULT_MAX_EVENT_BYTES)
    start = offset = 0
    # Elements end with a closing brace: fed up to each one, the scanner
    # returns an element exactly when that brace closed it.
    for part in body.split(b"}"):
        piece = part + b"}" if offset + len(part) < len(body) else part
        offset += len(piece)
        for element in scanner.feed(piece):
            yield _Piece(start, offset, "array element", element.decode("utf-8", "replace"))
            start = offset
        if scanner.error is not None:
            yield _Piece(start, len(body), f"framing error: {scanner.error[0]}", None)
            return
    if start < len(body):
        yield _Piece(start, len(body), "(array punctuation)", None)


def _pieces(protocol: str, body: bytes) -> Iterator[_Piece]:
    framing = framing_of(protocol)
    if framing == "eventstream":
        return _eventstream_pieces(body)
    if framing == "json":
        return _json_pieces(body)
    return _sse_pieces(body)


# --- what each did --------------------------------------------------------------


def _notes(
    before: StreamResult, after: StreamResult, events: list[Event], idle: str = "ignored"
) -> tuple[str, ...]:
    notes: list[str] = []
    for name, count in after.unknown_events.items():
        if count > before.unknown_events.get(name, 0):
            notes.append(f"unknown: {name}")
    notes += [f"conflict: {c}" for c in after.conflicts[len(before.conflicts) :]]
    notes += [f"warning {w.code}: {w.message}" for w in after.warnings[len(before.warnings) :]]
    if not any(isinstance(e, MessageCompleted) for e in events):  # it says both itself
        if after.provider_stop_reason != before.provider_stop_reason:
            stop = f"stop reason {after.stop_reason} (provider: {after.provider_stop_reason})"
            notes.append(stop)
        if after.status != before.status and after.status != "in_progress":
            notes.append(f"status {after.status}")
    if after.error is not None and before.error is None and not events:
        notes.append(f"error: {after.error.phase} {after.error.type}")
    if not events and not notes:
        notes.append(idle)
    return tuple(notes)


def walk(
    stream: Stream, protocol: str, body: bytes, close: Callable[[], list[Event]]
) -> list[LayerRow]:
    """Feeds ``body`` to ``stream`` one wire event at a time, then ``close()``; the rows."""
    rows: list[LayerRow] = []
    before = stream.result
    for piece in _pieces(protocol, body):
        events = stream.feed(body[piece.start : piece.end])
        after = stream.result
        rows.append(
            LayerRow(
                piece.start,
                piece.end,
                piece.wire,
                provider_fields(piece.payload),
                tuple(events),
                _notes(before, after, events),
            )
        )
        before = after
    events = close()
    after = stream.result
    notes = _notes(before, after, events, idle="nothing more")
    rows.append(LayerRow(len(body), len(body), "end of input", "-", tuple(events), notes))
    return rows
