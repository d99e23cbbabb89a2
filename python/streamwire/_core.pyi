"""Type stubs for the Rust extension ``streamwire._core``.

The extension holds the byte-level framing: Server-Sent Events (WHATWG HTML
"event stream interpretation"), incremental UTF-8, and AWS EventStream. Every
decoder is sans-IO: it is fed bytes and returns what they completed.
"""

import datetime
import uuid
from collections.abc import Iterable, Mapping
from typing import Any, Literal, final

from typing_extensions import Buffer

__all__ = [
    "DEFAULT_MAX_EVENT_BYTES",
    "DEFAULT_MAX_LINE_BYTES",
    "DEFAULT_MAX_MESSAGE_BYTES",
    "EventStreamDecoder",
    "EventStreamMessage",
    "HeaderValue",
    "SseDecoder",
    "SseEvent",
    "Utf8Decoder",
    "__version__",
    "encode_eventstream",
    "encode_sse",
]

__version__: str

DEFAULT_MAX_LINE_BYTES: int
DEFAULT_MAX_EVENT_BYTES: int
DEFAULT_MAX_MESSAGE_BYTES: int

_HeaderTypeName = Literal[
    "boolean_true",
    "boolean_false",
    "byte",
    "short",
    "integer",
    "long",
    "byte_array",
    "string",
    "timestamp",
    "uuid",
]
_HeaderPyValue = bool | int | bytes | str | datetime.datetime | uuid.UUID

@final
class SseEvent:
    """One dispatched Server-Sent Event."""

    @property
    def event(self) -> str:
        """The event type; ``"message"`` when the stream set none."""
    @property
    def data(self) -> str:
        """The data lines joined by LF, without the trailing LF."""
    @property
    def id(self) -> str | None:
        """The last event id at dispatch: None if never set, "" if cleared."""
    @property
    def retry(self) -> int | None:
        """A reconnection time (ms) set in this event's block, else None."""
    def __new__(
        cls,
        data: str = "",
        event: str = "message",
        id: str | None = None,
        retry: int | None = None,
    ) -> SseEvent: ...
    def __eq__(self, other: object, /) -> bool: ...
    def __hash__(self) -> int: ...

@final
class SseDecoder:
    """Incremental Server-Sent Events decoder with bounded buffers."""

    def __new__(
        cls,
        max_line_bytes: int = ...,
        max_event_bytes: int = ...,
    ) -> SseDecoder: ...
    def feed(self, data: Buffer) -> list[SseEvent]:
        """Decodes a chunk; returns the events it completed."""
    def finish(self) -> list[SseEvent]:
        """Ends the input: an unterminated event is discarded (always [])."""
    @property
    def last_event_id(self) -> str | None: ...
    @property
    def retry(self) -> int | None: ...
    @property
    def buffered_bytes(self) -> int: ...
    @property
    def peak_buffered_bytes(self) -> int: ...
    @property
    def bytes_fed(self) -> int: ...
    @property
    def events_dispatched(self) -> int: ...
    @property
    def comments_seen(self) -> int: ...

@final
class Utf8Decoder:
    """Streaming UTF-8 decoder: U+FFFD replacement, or ``strict=True`` to raise."""

    def __new__(cls, strict: bool = False) -> Utf8Decoder: ...
    def decode(self, data: Buffer) -> str: ...
    def finish(self) -> str: ...
    @property
    def pending_bytes(self) -> int: ...

def encode_sse(
    data: str,
    event: str | None = None,
    id: str | None = None,
    retry: int | None = None,
) -> bytes:
    """Encodes one event; raises ValueError for CR, LF or NUL in event or id."""

@final
class EventStreamMessage:
    """One AWS EventStream message."""

    @property
    def headers(self) -> dict[str, _HeaderPyValue]:
        """Headers by name. A timestamp is an aware UTC ``datetime``, or an
        ``int`` of milliseconds when it lies outside ``datetime``'s range."""
    @property
    def typed_headers(self) -> list[tuple[str, _HeaderTypeName, _HeaderPyValue]]:
        """Headers in wire order with their wire type names."""
    @property
    def payload(self) -> bytes: ...
    @property
    def message_type(self) -> str | None:
        """The ``:message-type`` header (``event``, ``exception``, ``error``)."""
    @property
    def event_type(self) -> str | None: ...
    @property
    def content_type(self) -> str | None: ...
    @property
    def exception_type(self) -> str | None: ...

@final
class EventStreamDecoder:
    """Incremental AWS EventStream decoder: CRC-checked, bounded."""

    def __new__(
        cls,
        max_message_bytes: int = ...,
        validation: Literal["strict", "lenient"] = "strict",
    ) -> EventStreamDecoder: ...
    def feed(self, data: Buffer) -> list[EventStreamMessage]: ...
    def finish(self) -> None: ...
    @property
    def buffered_bytes(self) -> int: ...
    @property
    def peak_buffered_bytes(self) -> int: ...
    @property
    def bytes_fed(self) -> int: ...
    @property
    def messages_decoded(self) -> int: ...

@final
class HeaderValue:
    """A header value with an explicit wire type, for ``encode_eventstream``."""

    def __new__(cls, type: _HeaderTypeName, value: Any = None) -> HeaderValue: ...
    @property
    def type(self) -> _HeaderTypeName: ...
    @property
    def value(self) -> _HeaderPyValue: ...

def encode_eventstream(
    headers: Mapping[str, _HeaderPyValue | HeaderValue]
    | Iterable[tuple[str, _HeaderPyValue | HeaderValue]],
    payload: Buffer | None = None,
) -> bytes:
    """Encodes one message. Plain values map to: bool → boolean, int →
    integer when it fits in 32 bits else long, bytes → byte_array,
    str → string, datetime → timestamp, UUID → uuid."""
