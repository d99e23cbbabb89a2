"""The shared plumbing of the AWS EventStream protocols (``bedrock-converse``, ``bedrock-invoke``).

Bedrock streams are ``application/vnd.amazon.eventstream`` bodies: binary
frames with headers and a payload ("Event stream encoding" of the AWS SDKs'
references; the Bedrock API reference's ``ConverseStreamOutput`` and
``ResponseStream``; all checked 2026-11-29). ``EventStreamStream`` owns the
Rust ``EventStreamDecoder`` and dispatches each message on its
``:message-type``, as the AWS SDKs do: ``event`` (named by ``:event-type``)
goes to the protocol's ``_on_event``; ``exception`` (a modeled in-stream
exception) and ``error`` (an unmodeled one, in headers) end the stream in
``error``; anything else is an ``UnknownEvent``. A framing error ends the
stream in ``error`` after every message decoded before it; once the
protocol's end marker arrived, errors are warnings. The tables are in
docs/protocols/bedrock-converse.md.

A body that is not EventStream at all (an HTTP error's JSON, a proxy's HTML
page) would otherwise surface as a "prelude checksum mismatch". A frame
starts with its big-endian ``total_length``, so its first byte is 0 or 1 for
any frame the decoder accepts; when the first byte is text (printable ASCII,
tab, CR, LF, a UTF-8 BOM's first byte) and, read as a length's high byte,
exceeds ``max_message_bytes`` (0x09 << 24 is 144 MiB, above the 16 MiB
default), no frame can start there. The body is then collected (up to
``FOREIGN_BODY_CAP``) and reported as one ``not_eventstream`` error. The
decision is made on the first byte, so it is the same under every chunking;
any other body is left to the decoder, whose CRC check is then the answer.
"""

from __future__ import annotations

import re
from abc import abstractmethod
from collections.abc import Callable
from typing import Any, ClassVar

from .._core import (
    DEFAULT_MAX_MESSAGE_BYTES,
    EventStreamDecoder,
    EventStreamMessage,
    ShapeMatcher,
    has_digit_run,
)
from .._json import ACCELERATED, WIDE_INT_DIGITS, check_depth, failure, loads
from ..errors import FramingError, UsageError
from ..events import Event
from ._base import FramedStream, retryable_hint

__all__ = ["FOREIGN_BODY_CAP", "EventStreamStream", "exception_retryable", "loads_payload"]

#: How much of a body that is not EventStream is kept for the error report.
FOREIGN_BODY_CAP = 64 * 1024
#: Exception types whose Bedrock reference says "Retry your request" and that
#: ``retryable_hint`` does not already know.
_RETRYABLE_EXCEPTIONS = frozenset({"modelstreamerrorexception"})
#: Unmodeled AWS error codes (``:error-code``) that are transient.
_RETRYABLE_CODES = frozenset(
    {
        "internalfailure",
        "internalerror",
        "serviceunavailable",
        "throttling",
        "throttlingexception",
        "toomanyrequestsexception",
        "requesttimeout",
        "requesttimeoutexception",
        "slowdown",
    }
)
_WHITESPACE = re.compile(r"\s+")


def exception_retryable(exception_type: str | None, code: object, status: object = None) -> bool:
    """The retryable hint for an in-stream exception or unmodeled error."""
    name = (exception_type or "").lower()
    if name in _RETRYABLE_EXCEPTIONS:
        # "A streaming error occurred. Retry your request." - unless the
        # model's own status code says the request itself was wrong.
        if isinstance(code, int) and not isinstance(code, bool):
            return retryable_hint(None, None, code)
        return True
    if name in _RETRYABLE_CODES:
        return True
    return retryable_hint(exception_type, code, status)


def _loads_payload_stdlib(payload: bytes) -> Any:
    return loads(payload.decode("utf-8"))


def _make_loads_payload() -> Any:
    """``loads`` for a payload's bytes. With orjson, the bytes go to it directly:
    decoding them to ``str`` first is a second pass over every payload;
    whatever orjson refuses, or might read differently (an integer beyond 64 bits, see
    ``_json``), takes the ``str`` path of ``_json.loads``, so the outcome stays
    exactly the standard library's."""
    if not ACCELERATED:
        return _loads_payload_stdlib
    import orjson

    orjson_loads = orjson.loads
    orjson_error = orjson.JSONDecodeError

    def loads_payload(payload: bytes) -> Any:
        check_depth(payload)
        if has_digit_run(payload, WIDE_INT_DIGITS):
            return loads(payload.decode("utf-8"))
        try:
            return orjson_loads(payload)
        except orjson_error:
            return loads(payload.decode("utf-8"))

    return loads_payload


#: Decodes a payload's JSON; raises ValueError (``UnicodeDecodeError`` and
#: ``JsonDepthError`` included).
loads_payload: Callable[[bytes], Any] = _make_loads_payload()


def _text_like(first: int) -> bool:
    return first >= 0x20 or first in (0x09, 0x0A, 0x0D)


class EventStreamStream(FramedStream):
    """Base of the EventStream protocols: framing by the Rust ``EventStreamDecoder``."""

    #: The payload shapes of the protocol's fast path, matched in Rust while
    #: framing (``EventStreamDecoder.feed_matched``). When set, an ``event``
    #: message whose payload matches a template for its ``:event-type`` reaches
    #: ``_on_messages`` as the tuple ``(template, *captures, ticket)`` instead
    #: of an ``EventStreamMessage`` (or within a run tuple, for a matcher made
    #: with ``runs=True``); ``self._decoder.matched_message(ticket)`` gives the
    #: message back. None (the default): every message is an
    #: ``EventStreamMessage``.
    shapes: ClassVar[ShapeMatcher | None] = None

    def __init__(
        self,
        *,
        max_message_bytes: int = DEFAULT_MAX_MESSAGE_BYTES,
        **options: Any,
    ) -> None:
        """EventStream options: ``max_message_bytes`` caps one frame (a larger
        frame ends the stream in ``error``); the rest are ``Stream``'s."""
        super().__init__(**options)
        self._decoder = EventStreamDecoder(max_message_bytes=max_message_bytes)
        self._max_message_bytes = max_message_bytes
        self._http_status = options.get("http_status")
        self._started = False
        #: The body, when it is not EventStream (see the module docstring).
        self._foreign: bytearray | None = None
        self._foreign_reported = False

    def _note_response(self, http_status: int | None, request_id: str | None) -> None:
        super()._note_response(http_status, request_id)
        if http_status is not None:
            self._http_status = http_status

    # --- hooks of the protocol modules -------------------------------------

    @abstractmethod
    def _on_event(self, message: EventStreamMessage, out: list[Event]) -> None:
        """Interprets one ``:message-type: event`` message."""

    # --- feeding -------------------------------------------------------------

    def feed(self, data: bytes | bytearray | memoryview) -> list[Event]:
        if self._closed:
            raise UsageError(f"the {self.protocol} stream was closed; it cannot be fed")
        acc = self._acc
        acc.cached = None
        if not self._started:
            if not memoryview(data).nbytes:
                return []
            self._started = True
            first = memoryview(data)[0]
            if _text_like(first) and (first << 24) > self._max_message_bytes:
                self._foreign = bytearray()
        if self._foreign is not None:
            return self._emit(self._collect_foreign(data))
        return super().feed(data)

    def _end_input(self, out: list[Event]) -> None:
        if self._foreign is not None:
            self._report_foreign(out)
            return
        if self._framing_failed:
            return
        pending = self._decoder.buffered_bytes
        try:
            self._decoder.finish()
        except FramingError as exc:
            if exc.kind != "truncated":
                self._framing_error(exc, out)
        if pending and not self._framing_failed:
            self._acc.warn(
                "partial_message_discarded",
                f"the input ended inside a message; its {pending} bytes were discarded",
            )

    # --- dispatch --------------------------------------------------------------

    def _interpret(self, units: list[Any], out: list[Event]) -> None:
        self._on_messages(units, out)

    def _on_messages(self, messages: list[EventStreamMessage], out: list[Event]) -> None:
        for message in messages:
            kind = message.message_type
            if kind == "event":
                self._on_event(message, out)
            elif self._acc.ended and (kind == "exception" or kind == "error"):
                name = message.exception_type or message.headers.get(":error-code")
                self._acc.warn("error_after_end", f"a {kind} frame after the end: {name!r}")
            elif kind == "exception":
                self._on_exception(message, out)
            elif kind == "error":
                self._on_error_message(message, out)
            else:
                name = f":message-type {kind}" if kind is not None else ":message-type missing"
                out.append(self._acc.unknown_event(name, _preview(message.payload)))

    def _on_exception(self, message: EventStreamMessage, out: list[Event]) -> None:
        kind = message.exception_type or "exception"
        payload: Any = None
        text = message.payload.decode("utf-8", "replace")
        if text.strip():
            try:
                payload = loads(text)
            except ValueError:
                payload = text
        code: str | int | None = None
        if type(payload) is dict:
            found = payload.get("message", payload.get("Message"))
            note = found if type(found) is str else None
            original = payload.get("originalStatusCode")
            if type(original) is int:
                code = original
            original_message = payload.get("originalMessage")
            if type(original_message) is str and original_message and original_message != note:
                note = f"{note} ({original_message})" if note else original_message
        else:
            note = payload if type(payload) is str else None
        out.append(
            self._acc.fail(
                "provider",
                kind,
                code,
                note,
                retryable=exception_retryable(kind, code),
                raw=payload,
            )
        )

    def _on_error_message(self, message: EventStreamMessage, out: list[Event]) -> None:
        headers = message.headers
        code = headers.get(":error-code")
        note = headers.get(":error-message")
        code_text = code if type(code) is str else None
        out.append(
            self._acc.fail(
                "provider",
                code_text,
                code_text,
                note if type(note) is str else None,
                retryable=exception_retryable(code_text, None),
                raw=dict(headers),
            )
        )

    def _payload(self, message: EventStreamMessage, out: list[Event]) -> dict[str, Any] | None:
        """The message's JSON object payload; None (an error recorded) if it is not one."""
        try:
            value = loads_payload(message.payload)
        except ValueError as exc:  # UnicodeDecodeError is a ValueError too
            what = f"the payload of a {message.event_type} event"
            kind, note = failure(exc, _preview(message.payload), what)
            out.append(self._acc.fail("framing", kind, None, note))
            return None
        if type(value) is not dict:
            out.append(
                self._acc.fail(
                    "framing",
                    "invalid_payload",
                    None,
                    f"the payload of a {message.event_type} event is not a JSON object",
                )
            )
            return None
        return value

    # --- framing failures ------------------------------------------------------

    def _framing_error(self, exc: FramingError, out: list[Event]) -> None:
        self._framing_failed = True
        if self._acc.ended:
            # After the protocol's end marker nothing can change how the stream ended.
            self._acc.warn("framing_error_after_end", f"{exc.kind}: {exc}")
            return
        out.append(self._acc.fail("framing", exc.kind, None, str(exc), retryable=False, raw=None))

    def _collect_foreign(self, data: bytes | bytearray | memoryview) -> list[Event]:
        body = self._foreign
        assert body is not None
        if self._foreign_reported:
            self._ignored_bytes += memoryview(data).nbytes
            return []
        room = FOREIGN_BODY_CAP - len(body)
        view = memoryview(data)
        body += view[:room]
        self._ignored_bytes += max(0, view.nbytes - room)
        out: list[Event] = []
        if len(body) >= FOREIGN_BODY_CAP:
            self._report_foreign(out)
        return out

    def _report_foreign(self, out: list[Event]) -> None:
        if self._foreign_reported:
            return
        self._foreign_reported = True
        body = bytes(self._foreign or b"")
        text = body.decode("utf-8", "replace").lstrip("\ufeff \t\r\n")
        code: str | None = None
        raw: Any = text
        detail = _WHITESPACE.sub(" ", text[:200]).strip()
        if text[:1] in ("{", "["):
            looks = "JSON (an HTTP error response?)"
            try:
                raw = loads(text)
            except ValueError:
                looks = "JSON-like text (an HTTP error response?)"
            if type(raw) is dict:
                code = _error_type(raw)
                found = raw.get("message", raw.get("Message"))
                if type(found) is str:
                    detail = found
        elif text[:1] == "<":
            head = text[:512].lower()
            looks = (
                "HTML (an error page?)" if "<html" in head or "<!doctype html" in head else "XML"
            )
        else:
            looks = "text"
        message = f"the body is not AWS EventStream but {looks}: {detail}"
        retryable = exception_retryable(code, None, self._http_status)
        out.append(
            self._acc.fail(
                "framing", "not_eventstream", code, message, retryable=retryable, raw=raw
            )
        )

    def _sync_counters(self) -> None:
        acc = self._acc
        decoder = self._decoder
        foreign = len(self._foreign) if self._foreign is not None else 0
        acc.bytes_received = decoder.bytes_fed + self._ignored_bytes + foreign
        acc.wire_events = decoder.messages_decoded
        acc.peak_buffered_bytes = max(decoder.peak_buffered_bytes, foreign)


def _error_type(body: dict[str, Any]) -> str | None:
    """The AWS error type of a JSON error body (``__type`` without its namespace)."""
    for key in ("__type", "code", "Code", "type"):
        value = body.get(key)
        if type(value) is str and value:
            return value.rsplit("#", 1)[-1].split(":", 1)[0]
    return None


def _preview(payload: bytes) -> str:
    return payload[:4096].decode("utf-8", "replace")
