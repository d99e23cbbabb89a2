"""The adapter interface every protocol implements, and the shared SSE plumbing.

The interface is docs/design.md's "Public names" (checked 2026-11-29), shaped
like h11's and h2's sans-IO connections: an adapter is fed data and returns
the unified events the data completed; it never reads a socket or a clock
(except a clock the caller injects for metrics).

* ``feed(data)``: raw body bytes, any chunking (HTTP protocols);
* ``feed_message(msg)``: one WebSocket message (WebSocket protocols);
* ``close()``: the input ended (EOF); decides ``completed`` vs ``incomplete``;
* ``cancel()``: the caller aborts; status ``cancelled``;
* ``result``: a ``StreamResult``, valid at any time, final after close/cancel.

Bad upstream input never raises out of an adapter; it becomes an event and a
status. That holds whatever the caller's stack: values are decoded at most
``_json.MAX_DEPTH`` levels deep, and if walking one still runs out of stack
(``RecursionError``, a caller already deep in its own recursion), the stream
ends in a ``limit`` error of type ``json_too_deep`` (``stack_exhausted``) and
reads no more of its input, so its state stays what it was. Feeding after
``close()`` or ``cancel()`` is caller misuse and raises ``UsageError``.
``close()`` and ``cancel()`` are idempotent.

``SseStream`` is the base of the SSE protocols: it owns the Rust
``SseDecoder`` and turns a ``FramingError`` into an ``error`` result with
phase ``framing`` and the framing kind as the type, keeping every event
decoded before it.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable, Iterable, Mapping
from typing import Any, ClassVar, Protocol

from .._core import (
    DEFAULT_MAX_EVENT_BYTES,
    DEFAULT_MAX_LINE_BYTES,
    ShapeMatcher,
    SseDecoder,
    SseEvent,
    TextTaker,
    TextUsageTaker,
)
from .._json import MAX_DEPTH
from ..accumulate import Accumulator
from ..errors import FramingError, UsageError
from ..events import (
    ErrorReceived,
    Event,
    ReasoningDelta,
    RefusalDelta,
    TextDelta,
    ToolCallArgumentsDelta,
    ToolCallStarted,
)
from ..result import StreamResult
from ..tooldefs import VALIDATIONS, ToolSet, Validation

__all__ = [
    "DEFAULT_MAX_CONTENT_BLOCKS",
    "DEFAULT_MAX_TOOL_ARGUMENT_CHARS",
    "DEFAULT_MAX_TOOL_CALLS",
    "DEFAULT_MAX_TOTAL_TOOL_ARGUMENT_CHARS",
    "FramedStream",
    "SseStream",
    "Stream",
    "decode",
    "retryable_hint",
    "stack_exhausted",
]

#: Default cap on one call's arguments, in characters (code points).
DEFAULT_MAX_TOOL_ARGUMENT_CHARS = 8 * 1024 * 1024
#: Default cap on the arguments of all the calls of one stream, in characters.
DEFAULT_MAX_TOTAL_TOOL_ARGUMENT_CHARS = 16 * 1024 * 1024
#: Default cap on the number of tool calls in one stream.
DEFAULT_MAX_TOOL_CALLS = 1024
#: Default cap on the content blocks of one stream (WebSocket: of one
#: response): Anthropic and Bedrock content blocks, Responses and Realtime
#: output items and content parts, Gemini parts.
DEFAULT_MAX_CONTENT_BLOCKS = 4096

Clock = Callable[[], float]
#: The message of ``stack_exhausted``.
STACK_EXHAUSTED = (
    "the stack ran out while reading a nested value: the caller's own stack left "
    f"too little room for values nested up to {MAX_DEPTH} levels"
)


def stack_exhausted(acc: Accumulator) -> ErrorReceived:
    """The error of a ``RecursionError`` met while interpreting input."""
    return acc.fail("limit", "json_too_deep", None, STACK_EXHAUSTED)


#: Events that count as content for ``time_to_first_content``.
_CONTENT = frozenset(
    {TextDelta, ReasoningDelta, RefusalDelta, ToolCallStarted, ToolCallArgumentsDelta}
)
Tools = ToolSet | Iterable[Mapping[str, Any]] | Mapping[str, Any] | None


class MatchSink(Protocol):
    """What takes a stream's matches in Rust before they become tuples
    (``FramedStream.feed``, ``decode``): ``arm()`` gives the armed taker
    (``TextUsageTaker``, ``TextTaker``) for the next ``feed_matched`` call,
    or None; after a call it armed for, ``settle()`` takes over the state the
    taker ended the call in, when the sink ``settles`` (a sink whose taker
    leaves nothing to take over is not called)."""

    #: Whether ``settle()`` must follow every call ``arm()`` armed for.
    settles: bool

    def arm(self) -> TextUsageTaker | TextTaker | None: ...
    def settle(self) -> None: ...


class Stream(ABC):
    """A sans-IO protocol adapter: data in, unified events out."""

    #: The protocol's registered name.
    protocol: ClassVar[str]
    #: The stream's ``MatchSink``, if its fast path has one (``feed_framed``).
    _sink: MatchSink | None = None

    def __init__(
        self,
        *,
        tools: Tools = None,
        validation: Validation = "auto",
        clock: Clock | None = None,
        max_tool_argument_chars: int = DEFAULT_MAX_TOOL_ARGUMENT_CHARS,
        max_total_tool_argument_chars: int = DEFAULT_MAX_TOTAL_TOOL_ARGUMENT_CHARS,
        max_tool_calls: int = DEFAULT_MAX_TOOL_CALLS,
        max_content_blocks: int = DEFAULT_MAX_CONTENT_BLOCKS,
        request_id: str | None = None,
        http_status: int | None = None,
    ) -> None:
        """Options common to every protocol.

        Args:
            tools: the tool definitions sent in the request (any provider's
                format, or a prebuilt ``ToolSet``): completed calls are checked
                against them (declared name, JSON Schema).
            validation: how calls are checked against ``tools`` (see
                ``ToolSet``): ``"auto"`` (the default: names, and schemas
                when ``jsonschema`` is installed), ``"schema"`` (schemas
                required: ``UsageError`` without ``jsonschema``) or
                ``"names"``. Ignored when ``tools`` is a prebuilt ``ToolSet``.
            clock: a monotonic clock (e.g. ``time.monotonic``) for the timing
                metrics; None (the default) records no timings.
            max_tool_argument_chars: cap on one call's arguments.
            max_total_tool_argument_chars: cap on the arguments of all calls
                together (a call that would pass it ends the stream in a
                ``limit`` error, as one that passes its own cap does).
            max_tool_calls: cap on the number of calls.
            max_content_blocks: cap on the content blocks (Anthropic and
                Bedrock blocks, Responses and Realtime output items plus
                content parts, Gemini parts); one more ends the stream in a
                ``limit`` error, ``too_many_content_blocks``.
            request_id: the request id from the HTTP response headers, used in
                error reports when the in-stream error carries none.
            http_status: the HTTP status, when the caller knows it (``http_ok``).
        """
        if validation not in VALIDATIONS:
            raise UsageError(f"validation must be 'auto', 'schema' or 'names', not {validation!r}")
        if tools is not None and not isinstance(tools, ToolSet):
            tools = ToolSet(tools, validation=validation)
        self._acc = Accumulator(
            self.protocol,
            toolset=tools,
            max_tool_argument_chars=max_tool_argument_chars,
            max_total_tool_argument_chars=max_total_tool_argument_chars,
            max_tool_calls=max_tool_calls,
            max_content_blocks=max_content_blocks,
            request_id=request_id,
            http_status=http_status,
        )
        if tools is not None and (note := tools.unchecked_note) is not None:
            self._acc.warn("tool_schemas_not_checked", note)
        self._clock = clock
        self._t0 = clock() if clock is not None else 0.0
        self._last_stamp: float | None = None
        self._closed = False

    @abstractmethod
    def feed(self, data: bytes | bytearray | memoryview) -> list[Event]:
        """Feeds body bytes (any chunking); returns the events they completed."""

    def feed_message(self, message: str | bytes | Mapping[str, Any]) -> list[Event]:
        """Feeds one WebSocket message; only WebSocket protocols accept it."""
        raise UsageError(f"{self.protocol} is not a WebSocket protocol: use feed(bytes)")

    def close(self) -> list[Event]:
        """The input ended: decides the status; returns the final events."""
        if self._closed:
            return []
        self._closed = True
        acc = self._acc
        acc.cached = None
        out: list[Event] = []
        try:
            self._end_input(out)
            self._on_eof(out)
        except RecursionError:
            out.append(stack_exhausted(acc))
        if not acc.ended:
            out.extend(acc.finish())
        return self._emit(out)

    def _end_input(self, out: list[Event]) -> None:  # noqa: B027 - optional hook
        """The input ended (framing hook): flush, or report, what the framing holds."""

    def _on_eof(self, out: list[Event]) -> None:  # noqa: B027 - optional hook
        """The input ended (protocol hook, after the framing's, before
        ``acc.finish()`` if the stream has not ended yet)."""

    def cancel(self) -> list[Event]:
        """The caller aborts: status ``cancelled`` unless the stream already ended."""
        if self._closed:
            return []
        self._closed = True
        acc = self._acc
        acc.cached = None
        if acc.ended:
            return []
        acc.cancelled = True
        return self._emit(acc.finish())

    @property
    def result(self) -> StreamResult:
        """What the stream produced so far; final after close() or cancel()."""
        self._sync_counters()
        return self._acc.snapshot()

    @property
    def closed(self) -> bool:
        """True after close() or cancel()."""
        return self._closed

    @property
    def decided(self) -> bool:
        """True once nothing more the input could bring changes how the stream
        ended: its protocol's end marker arrived (chat ``[DONE]``, anthropic
        ``message_stop``, ...), or its framing broke (later bytes are only
        counted). A reader may stop reading then; ``streamwire.io`` does."""
        acc = self._acc
        return acc.ended or not acc.framing_ok

    def _note_response(self, http_status: int | None, request_id: str | None) -> None:
        """The HTTP edge's facts, known once the response arrived (before any
        feed): what the ``http_status`` and ``request_id`` options would have
        said, for a stream made before the request was answered."""
        acc = self._acc
        if http_status is not None:
            acc.http_ok = 200 <= http_status < 300
        if request_id is not None:
            acc.request_id = request_id
        acc.cached = None

    def _sync_counters(self) -> None:  # noqa: B027 - optional hook
        """Copies the framing layer's counters into the accumulator."""

    def _emit(self, out: list[Event]) -> list[Event]:
        """Counts (and, with a clock, times) the events one call returns."""
        if not out:
            return out
        acc = self._acc
        acc.events += len(out)
        clock = self._clock
        if clock is not None:
            now = clock() - self._t0
            if acc.time_to_first_event is None:
                acc.time_to_first_event = now
            elif self._last_stamp is not None:
                gap = now - self._last_stamp
                if acc.largest_gap is None or gap > acc.largest_gap:
                    acc.largest_gap = gap
            self._last_stamp = now
            if acc.time_to_first_content is None and any(type(e) in _CONTENT for e in out):
                acc.time_to_first_content = now
        return out


class FramedStream(Stream):
    """Base of the byte-framed protocols, SSE and EventStream: a Rust framer
    (``SseDecoder``, ``EventStreamDecoder``) fed the body, what it decoded
    interpreted by the protocol.

    With ``shapes`` set the decoder matches payloads in Rust, and the
    interpreter receives match tuples beside the decoded units; with a sink
    (``_sink``) the matches it takes never leave Rust. A ``FramingError``
    keeps what the same call decoded before it (``.partial``) and ends the
    framing: the bytes after it cannot be trusted, so they are counted, not
    parsed. ``feed`` is every chunk's path: it calls no helper of its own
    (measured with callgrind on the benches' chat stream, 4 KiB chunks:
    through a helper function, a second one for the decoder call and a third
    for the count of events, the adapter's own Python took 175 instructions
    an event more, 5% of the pipeline).
    """

    #: The payload shapes of the protocol's fast path (see the subclasses).
    shapes: ClassVar[ShapeMatcher | None] = None
    _decoder: Any

    def __init__(self, **options: Any) -> None:
        super().__init__(**options)
        self._framing_failed = False
        self._ignored_bytes = 0

    def feed(self, data: bytes | bytearray | memoryview) -> list[Event]:
        if self._closed:
            raise UsageError(f"the {self.protocol} stream was closed; it cannot be fed")
        acc = self._acc
        acc.cached = None
        if self._framing_failed:
            self._ignored_bytes += memoryview(data).nbytes
            return []
        out: list[Event] = []
        shapes, sink = self.shapes, self._sink
        try:
            # ``decode``, written out for the sink that takes every match.
            if shapes is None or sink is None or (taker := sink.arm()) is None:
                units = decode(self._decoder, data, shapes, None, out)
            elif not sink.settles:
                units = self._decoder.feed_matched(data, shapes, taker, out)
            else:
                try:
                    units = self._decoder.feed_matched(data, shapes, taker, out)
                finally:
                    sink.settle()
        except FramingError as exc:
            self._interpret(exc.partial, out)
            self._framing_error(exc, out)
            return self._emit(out)
        if units:
            try:
                self._interpret(units, out)
            except RecursionError:
                self._framing_failed = True  # the rest of the input is counted, not parsed
                out.append(stack_exhausted(acc))
        if out and self._clock is None:
            acc.events += len(out)  # ``_emit`` without a clock
            return out
        return self._emit(out)

    @abstractmethod
    def _interpret(self, units: list[Any], out: list[Event]) -> None:
        """Interprets what one decoder call decoded, appending unified events to ``out``."""

    def _framing_error(self, exc: FramingError, out: list[Event]) -> None:
        self._framing_failed = True
        out.append(self._acc.fail("framing", exc.kind, None, str(exc), retryable=False, raw=None))


class SseStream(FramedStream):
    """Base of the SSE protocols: framing by the Rust ``SseDecoder``."""

    #: The payload shapes of the protocol's fast path, matched in Rust while
    #: framing (see ``ShapeMatcher`` in ``_core.pyi``). When set, an event whose
    #: data matches reaches ``_on_sse`` as the tuple ``(template, *captures,
    #: ticket)`` instead of an ``SseEvent`` (or within a run tuple, for a
    #: matcher made with ``runs=True``); ``self._decoder.matched_event(ticket)``
    #: gives the ``SseEvent`` back. None (the default): every event is an ``SseEvent``.
    shapes: ClassVar[ShapeMatcher | None] = None

    def __init__(
        self,
        *,
        max_line_bytes: int = DEFAULT_MAX_LINE_BYTES,
        max_event_bytes: int = DEFAULT_MAX_EVENT_BYTES,
        **options: Any,
    ) -> None:
        """SSE options: ``max_line_bytes`` and ``max_event_bytes`` cap the
        framing buffers (a larger line or event ends the stream in ``error``);
        the rest are ``Stream``'s."""
        super().__init__(**options)
        self._decoder = SseDecoder(max_line_bytes=max_line_bytes, max_event_bytes=max_event_bytes)

    @abstractmethod
    def _on_sse(self, events: list[SseEvent], out: list[Event]) -> None:
        """Interprets decoded SSE events, appending unified events to ``out``."""

    def _interpret(self, units: list[Any], out: list[Event]) -> None:
        self._on_sse(units, out)

    def _end_input(self, out: list[Event]) -> None:
        if self._framing_failed:
            return
        pending = self._decoder.buffered_bytes
        try:
            self._on_sse(self._decoder.finish(), out)
        except FramingError as exc:
            self._on_sse(exc.partial, out)  # type: ignore[arg-type]
            self._framing_error(exc, out)
        if pending and not self._acc.ended:
            self._acc.warn(
                "partial_event_discarded",
                f"the input ended inside an event; its {pending} bytes were discarded",
            )

    def _sync_counters(self) -> None:
        acc = self._acc
        decoder = self._decoder
        acc.bytes_received = decoder.bytes_fed + self._ignored_bytes
        acc.wire_events = decoder.events_dispatched
        acc.peak_buffered_bytes = decoder.peak_buffered_bytes


def decode(
    decoder: Any,
    data: bytes | bytearray | memoryview,
    shapes: ShapeMatcher | None,
    sink: MatchSink | None,
    out: list[Event],
) -> list[Any]:
    """One call of a Rust framer (``SseDecoder``, ``EventStreamDecoder``,
    ``ArraySplitter``): ``feed``, or ``feed_matched`` with ``shapes``, with
    the sink's taker when it arms one (the matches it takes append their
    events to ``out``; a sink that ``settles`` settles after the call,
    whatever the call raised)."""
    if shapes is None:
        units: list[Any] = decoder.feed(data)
        return units
    if sink is None or (taker := sink.arm()) is None:
        units = decoder.feed_matched(data, shapes)
        return units
    if not sink.settles:
        units = decoder.feed_matched(data, shapes, taker, out)
        return units
    try:
        units = decoder.feed_matched(data, shapes, taker, out)
    finally:
        sink.settle()
    return units


#: Provider error types and codes that say "try again later". Anything else,
#: including quota and validation errors, is not retryable: the hint is
#: conservative.
_RETRYABLE = frozenset(
    {
        "server_error",
        "api_error",
        "internal_error",
        "internal_server_error",
        "overloaded_error",
        "overloaded",
        "rate_limit_error",
        "rate_limit_exceeded",
        "service_unavailable",
        "timeout",
        "request_timeout",
        "unavailable",
        "resource_exhausted",
        "throttlingexception",
        "serviceunavailableexception",
        "internalserverexception",
        "modeltimeoutexception",
    }
)
_NOT_RETRYABLE = frozenset({"insufficient_quota", "billing_hard_limit_reached"})
_RETRYABLE_STATUS = frozenset({408, 409, 429, 500, 502, 503, 504, 529})


def retryable_hint(type: object, code: object, status: object = None) -> bool:
    """A conservative retryable hint from a provider error's type, code and status."""
    names = {str(v).lower() for v in (type, code) if isinstance(v, str)}
    if names & _NOT_RETRYABLE:
        return False
    if names & _RETRYABLE:
        return True
    for value in (code, status):
        if isinstance(value, int) and not isinstance(value, bool) and value in _RETRYABLE_STATUS:
            return True
        if isinstance(value, str) and value.isdigit() and int(value) in _RETRYABLE_STATUS:
            return True
    return False
