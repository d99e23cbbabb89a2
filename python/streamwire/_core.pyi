"""Type stubs for the Rust extension ``streamwire._core``.

The extension holds the byte-level framing: Server-Sent Events (WHATWG HTML
"event stream interpretation"), incremental UTF-8, and AWS EventStream. Every
decoder is sans-IO: it is fed bytes and returns what they completed.
"""

import datetime
import uuid
from collections.abc import Callable, Iterable, Mapping
from typing import Any, Literal, final, overload

from typing_extensions import Buffer

__all__ = [
    "DEFAULT_MAX_EVENT_BYTES",
    "DEFAULT_MAX_LINE_BYTES",
    "DEFAULT_MAX_MESSAGE_BYTES",
    "DEFAULT_RELEASE_GIL_BYTES",
    "ArraySplitter",
    "Builder",
    "EventStreamDecoder",
    "EventStreamMessage",
    "HeaderValue",
    "MessageMatcher",
    "ShapeMatcher",
    "SseDecoder",
    "SseEvent",
    "TextTaker",
    "TextUsageTaker",
    "Utf8Decoder",
    "__version__",
    "encode_eventstream",
    "encode_sse",
    "has_digit_run",
    "json_nesting_exceeds",
    "release_gil_bytes",
    "utf8_length",
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
    def feed_matched(
        self,
        data: Buffer,
        shapes: ShapeMatcher,
        sink: TextUsageTaker | TextTaker | None = None,
        out: list[Any] | None = None,
    ) -> list[SseEvent | tuple[Any, ...]]:
        """Decodes a chunk like ``feed``, matching each event's data against
        ``shapes``: an event whose data matches a template (and whose block set
        no ``retry``) becomes the tuple ``(template, *captures, ticket)``
        instead of an ``SseEvent``, or joins a run tuple (``ShapeMatcher(...,
        runs=True)``). ``matched_event(ticket)`` gives the event back until
        the decoder's next call. An armed ``sink`` takes the matches at the
        head of the call first, its events appended to ``out``."""
    def matched_event(self, ticket: int) -> SseEvent:
        """The ``SseEvent`` of a match tuple's ``ticket`` from the last
        ``feed_matched`` call (equal to what ``feed`` would have returned);
        IndexError once the decoder was called again."""
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
    @property
    def shapes_replayed(self) -> int:
        """Events ``feed_matched`` matched by replaying the skeleton of an
        earlier one: its bytes outside the values a template takes whatever
        they are, compared instead of parsed (the answer is always ``match``'s)."""

@final
class ShapeMatcher:
    """JSON shape templates for a protocol's fast path, matched in Rust.

    ``ShapeMatcher([(sse_event_type, shape), ...])``; the first template that
    matches a payload wins, and its index in the list is the ``template`` of
    the match tuple. A shape is written as a JSON-like Python value:

    * a dict is a *closed* object: a payload key it does not list declines,
      as do a repeated key and a missing key; a key ending in ``?`` is
      optional (the ``?`` is not part of the key); payload keys may come in
      any order;
    * a list is a fixed-length array, element by element (``[]`` matches only
      an empty array);
    * ``None``, ``True``, ``False``, an int (a JSON integer, not ``1.0``) and a
      str are literals the value must equal;
    * the strings ``"$any"`` (any valid JSON value, ignored), ``"$falsy"`` (a
      value Python treats as false, ignored: ``null``, ``false``, ``0``,
      ``""``, ``[]`` or ``{}``; a zero written as a float declines),
      ``"$str"`` (capture a string), ``"$int"`` (capture an integer that fits
      in 64 bits; a fraction or an exponent declines) and ``"$raw"`` (capture
      any value's JSON text, as in the payload) are directives; write a
      literal string starting with ``$`` as ``"$$..."``.

    Captures come in the shape's own key order, depth first; a capture under
    an absent optional key is ``None``. At most 8 captures per template and
    64 keys per object.

    A payload matches only if it is one valid JSON text (RFC 8259, checked by
    ``serde_json``) that ``json.loads`` decodes to a value of exactly that
    shape, and each capture equals what ``json.loads`` gives for it. Anything
    else declines, including valid JSON the matcher does not take on (nesting
    deeper than 128, lone surrogate escapes, numbers beyond float range,
    digit runs longer than 640, an integer written ``-0``, and a template's
    deepest required key spelled with escapes, which is looked for verbatim
    before parsing so that a payload is parsed only for templates it may
    fit): the caller's general path then handles the payload, so its outcome
    cannot differ.
    """

    def __new__(
        cls, templates: Iterable[tuple[str, object]], *, runs: bool = False
    ) -> ShapeMatcher:
        """``runs=True``: the decoders' ``feed_matched`` merges consecutive
        matches of one template whose captures agree on all but the last into
        one *run* tuple ``(template, *captures[:-1], [last capture, ...],
        first_ticket)``; the run's tickets are ``first_ticket`` up to
        ``first_ticket + len(list) - 1``. Every template must then capture
        something (ValueError otherwise). ``match`` is unaffected."""
    @property
    def runs(self) -> bool:
        """Whether ``feed_matched`` merges runs."""
    def match(self, data: str | Buffer, event: str = "message") -> tuple[Any, ...] | None:
        """``(template, *captures)`` for a payload of an SSE event of type
        ``event``, or None when no template matches."""
    def decline_reason(self, data: str | Buffer, event: str = "message") -> str | None:
        """Why ``match`` gives None (``"event"``, ``"syntax"``,
        ``"unknown_key"``, ``"duplicate_key"``, ``"missing_key"``,
        ``"mismatch"``, ``"length"``, ``"int_range"``, ``"long_number"``; with
        several templates, the last one tried), or None when it matches."""
    def captures(self, index: int) -> int:
        """The number of captures of template ``index``."""
    def __len__(self) -> int: ...

@final
class ArraySplitter:
    """Incremental splitter of a streamed JSON array of objects (Gemini's
    ``streamGenerateContent`` without ``alt=sse``), or of one bare object.
    A broken body does not raise: ``error`` says what broke, and nothing
    more is split."""

    def __new__(cls, max_element_bytes: int) -> ArraySplitter: ...
    def feed(self, data: Buffer) -> list[bytes]:
        """The elements these bytes completed."""
    def feed_matched(
        self,
        data: Buffer,
        shapes: ShapeMatcher,
        sink: TextUsageTaker | TextTaker | None = None,
        out: list[Any] | None = None,
    ) -> list[bytes | tuple[Any, ...]]:
        """``feed``, each element matched against the templates of event type
        ``"message"``: a match is ``(template, *captures, ticket)`` (or joins a
        run tuple), ``matched_element(ticket)`` its bytes until the next call;
        an armed ``sink`` takes the matches at the head of the call first
        (as ``SseDecoder.feed_matched``)."""
    def matched_element(self, ticket: int) -> bytes: ...
    def finish(self) -> tuple[int, bool]:
        """``(bytes of an element in progress, whether the array was left open)``."""
    @property
    def state(self) -> Literal["start", "first", "after", "next", "element", "end"]: ...
    @property
    def error(self) -> tuple[str, str, int] | None:
        """``(kind, message, offset)`` once the body broke (``invalid_json``,
        ``event_too_large``)."""
    @property
    def buffered_bytes(self) -> int: ...
    @property
    def peak_buffered_bytes(self) -> int: ...
    @property
    def bytes_fed(self) -> int: ...
    @property
    def elements(self) -> int: ...

@final
class MessageMatcher:
    """Shape matching for the messages of one WebSocket session.

    ``MessageMatcher(shapes).match(data)`` is ``shapes.match(data)`` (templates
    of event type ``"message"``) with the message's length in UTF-8 bytes
    appended: ``(template, *captures, size)``, or None (also for anything but
    a ``str`` or a buffer). It remembers the skeleton of each template's last
    match, so that the session's next message of that shape is matched by
    comparing bytes (``replayed`` counts those); a string capture other than a
    template's last is the same ``str`` object as the last time it had the
    same value.

    ``build={template: (builder, *fixed)}`` gives a template's last capture
    as ``builder.one(capture, *fixed)``. ``expect(...)`` makes a template's
    matches that fit the caller's state *taken*: the last capture appended to
    ``taken`` and ``match`` returning ``[last]`` (built), or, with ``taken``
    None, tallied as base64 (``tallied``) and ``match`` returning ``[]``.

    ``feed(message)`` is a session's ``feed_message`` in front of its Python
    one: once ``arm()``-ed, a taken match's list is returned at once (``took``:
    its length); everything else is ``fallback(message, matched)``, with
    ``match``'s tuple or None. ``release()`` disarms."""

    def __new__(
        cls, shapes: ShapeMatcher, *, build: dict[int, tuple[Any, ...]] | None = None
    ) -> MessageMatcher: ...
    def match(self, data: object, /) -> tuple[Any, ...] | list[Any] | None: ...
    def feed(self, message: object, /) -> list[Any]: ...
    def arm(self) -> None: ...
    @property
    def took(self) -> int | None:
        """Events the last ``feed`` returned when it took the message, else None."""
    @property
    def fallback(self) -> Callable[[Any, tuple[Any, ...] | None], Any] | None: ...
    @fallback.setter
    def fallback(self, fallback: Callable[[Any, tuple[Any, ...] | None], Any] | None) -> None: ...
    def expect(
        self,
        template: int,
        equal: dict[int, Any],
        successor: tuple[int, int | None] | None,
        taken: list[Any] | None,
        max_size: int,
    ) -> None:
        """Takes the template's matches whose capture slots in ``equal`` hold
        the value (or one of the tuple of values) given, whose ``successor``
        slot ``(slot, last)`` is absent or ``last + 1``, of at most
        ``max_size`` bytes and with a non-empty last capture (any, tallied),
        until ``release()``; one expectation per template and kind."""
    def release(self) -> None: ...
    @property
    def successor(self) -> int | None:
        """The last value of an expectation's successor slot."""
    @property
    def tallied(self) -> tuple[int, int]:
        """Tallied matches, and the decoded size of their base64."""
    @property
    def matched(self) -> tuple[int, int]:
        """Messages matched (taken or not), and their UTF-8 bytes."""
    @property
    def shapes(self) -> ShapeMatcher: ...
    @property
    def replayed(self) -> int: ...

@final
class Builder:
    """Builds many objects of one class from Rust: ``Builder(cls, field,
    *fields).build(values, *fixed)`` is ``[obj(v) for v in values]`` where
    ``obj(v)`` is ``object.__new__(cls)`` with ``field`` set to ``v`` and
    each of ``fields`` to the matching one of ``fixed``, through
    ``object.__setattr__`` (so a frozen dataclass's ``__setattr__`` and
    ``__init__`` are bypassed, as its own ``__init__`` bypasses the former).
    ``cls.__new__`` must be ``object.__new__``; the caller sets every field
    the class needs."""

    def __new__(cls, target: type, field: str, /, *fields: str) -> Builder: ...
    def build(self, values: list[Any], *fixed: Any) -> list[Any]: ...
    def one(self, value: Any, *fixed: Any) -> Any:
        """``build([value], *fixed)[0]``, without the lists."""

@final
class TextUsageTaker:
    """Takes a run of text-and-usage match tuples ``(template, text, index,
    usage_text, response_id, ticket)`` in one call (Gemini's chunks):
    ``take(units, start, out, index, texts, id_known, usage_text, usage_raw)``
    takes ``units[start:]`` while each is a match of ``template`` for choice
    ``index`` (None counts as 0), with a ``str`` text, no response id unless
    ``id_known``, and a usage text that is absent, equal to the last one, or
    one the Rust decoder takes (a strict JSON subset, its outer object built
    as ``mapping``; anything else stops the run). Each taken unit's non-empty
    text is appended to ``texts`` and its ``text.one(text, index)`` to
    ``out``; a changed snapshot (not equal to the last mapping, with an
    integer under one of ``required``) gives ``usage.one(*sums, False, raw,
    None...)`` (each figure the sum of its keys' integers, or None) and
    ``reported.one(usage)`` in ``out``. Returns the index of the first unit
    not taken; ``usage_text``, ``usage_raw`` and ``usage`` (the last
    ``Usage`` built by that call, or None) hold the state it ended in.

    As a sink: ``arm(index, texts, id_known, usage_text, usage_raw)`` sets the
    same state for the next ``feed_matched(data, shapes, taker, out)`` of an
    ``SseDecoder`` or ``ArraySplitter``, which hands it each match at the head
    of that call before it becomes a tuple; what it takes (``sunk`` counts
    them) appends its events to ``out``, and the first match it does not take
    and everything after it are returned as usual."""

    def __new__(
        cls,
        template: int,
        *,
        text: Builder,
        usage: Builder,
        reported: Builder,
        mapping: type[dict[str, Any]],
        figures: list[list[str]],
        required: list[str],
    ) -> TextUsageTaker: ...
    def take(
        self,
        units: list[Any],
        start: int,
        out: list[Any],
        index: int,
        texts: list[str],
        id_known: bool,
        usage_text: str | None,
        usage_raw: object,
    ) -> int: ...
    def arm(
        self,
        index: int,
        texts: list[str],
        id_known: bool,
        usage_text: str | None,
        usage_raw: object,
    ) -> None: ...
    @property
    def sunk(self) -> int:
        """Matches taken as a sink since the last ``arm``."""
    @property
    def usage_text(self) -> str | None: ...
    @property
    def usage_raw(self) -> Any: ...
    @property
    def usage(self) -> Any: ...
    @property
    def taken(self) -> int: ...
    @property
    def patched(self) -> int:
        """Usage snapshots decoded as the last one with other integers for
        some of its outer members (its copy, those members set)."""

@final
class TextTaker:
    """Takes the text matches of one choice (or one content block) as a
    decoder's sink (the Chat Completions fast path; Anthropic's text and
    thinking deltas): ``arm(index, texts, fixed=None, also=None)`` arms it
    for the next ``feed_matched(data, shapes, taker, out)`` of an
    ``SseDecoder``, which hands it each match at the head of that call; it
    takes a match of ``template`` whose captures are ``(index, text)`` with
    that index, appending a non-empty text to ``texts`` (and to ``also``,
    when given) and ``text.one(text, *fixed)`` to ``out`` (``fixed`` is
    ``(index,)`` unless given, as many values as the builder's fixed fields;
    an empty text is taken with no event). The first match it does not take
    and everything after it are returned as usual."""

    def __new__(cls, template: int, *, text: Builder) -> TextTaker: ...
    def arm(
        self,
        index: int,
        texts: list[str],
        fixed: tuple[Any, ...] | None = None,
        also: list[str] | None = None,
    ) -> None: ...
    @property
    def sunk(self) -> int:
        """Matches taken since the last ``arm``."""
    @property
    def taken(self) -> int:
        """Matches taken, in all."""

def utf8_length(text: str) -> int:
    """``len(text.encode("utf-8", "surrogatepass"))``, without building the bytes."""

def has_digit_run(data: str | Buffer, length: int) -> bool:
    """Whether ``data`` holds a run of at least ``length`` consecutive ASCII
    digits (a JSON integer outside the 64-bit range has 19 or more)."""

#: The default of ``release_gil_bytes()``.
DEFAULT_RELEASE_GIL_BYTES: int

def release_gil_bytes(bytes: int | None = None) -> int:
    """The smallest ``feed`` (of an immutable ``bytes``) that the decoders
    frame with the GIL released (``feed_matched`` keeps it); sets it first
    when ``bytes`` is given. Returns the threshold in force before the call."""

def json_nesting_exceeds(data: str | Buffer, limit: int) -> bool:
    """Whether the JSON text ``data`` nests arrays and objects more than
    ``limit`` levels deep (brackets inside strings do not count)."""

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
    def feed_matched(
        self, data: Buffer, shapes: ShapeMatcher
    ) -> list[EventStreamMessage | tuple[Any, ...]]:
        """Decodes a chunk like ``feed``, matching the JSON payload of each
        message whose ``:message-type`` is ``event`` against the templates of
        ``shapes`` for its ``:event-type``: a message that matches becomes the
        tuple ``(template, *captures, ticket)`` instead of an
        ``EventStreamMessage``, or joins a run tuple (``ShapeMatcher(...,
        runs=True)``). ``matched_message(ticket)`` gives the message back
        until the decoder's next call."""
    def matched_message(self, ticket: int) -> EventStreamMessage:
        """The ``EventStreamMessage`` of a match tuple's ``ticket`` from the last
        ``feed_matched`` call (equal to what ``feed`` would have returned);
        IndexError once the decoder was called again."""
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

@overload
def encode_eventstream(
    headers: Mapping[str, _HeaderPyValue | HeaderValue], payload: Buffer | None = None
) -> bytes:
    """Encodes one message. Plain values map to: bool → boolean, int →
    integer when it fits in 32 bits else long, bytes → byte_array,
    str → string, datetime → timestamp, UUID → uuid."""

@overload
def encode_eventstream(
    headers: Iterable[tuple[str, _HeaderPyValue | HeaderValue]], payload: Buffer | None = None
) -> bytes: ...
