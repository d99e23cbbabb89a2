"""The ``gemini-json`` adapter: ``streamGenerateContent`` without ``alt=sse``.

Without ``alt=sse`` the Gemini API (and Vertex AI) streams the chunks as the
elements of ONE JSON array, written as they are generated (Gemini API
reference, ``models.streamGenerateContent``, ai.google.dev/api/generate-content,
checked 2026-11-29; the element separator on the wire is ``\\r\\n,\\r\\n``);
docs/protocols/gemini-json.md has what becomes of it. Each element is one
chunk, with exactly the semantics of the ``gemini`` SSE adapter
(``gemini_chunks.py``), including its fast path.

The Rust core's ``ArraySplitter`` (``rust/core/src/json_array.rs``) splits
the body into elements incrementally, in bounded memory: it resumes where
the previous ``feed`` stopped (no byte is scanned twice), holds only the
element in progress, and hands out each element as soon as its closing
brace arrives, matched on the way against the fast path's shapes. An element
that the last matched element's skeleton replays is found by that match
(``ArraySplitter.feed_to``), so the splitter neither scans nor buffers it.
Between elements the splitter is a small machine with its transitions as
data (``SCAN_TRANSITIONS`` here, ``next_state`` there; tested to agree); a
byte with no transition is a framing error (``invalid_json``).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar, Literal

from .._core import DEFAULT_MAX_EVENT_BYTES, ArraySplitter, ShapeMatcher
from .._json import failure, loads
from ..accumulate import Accumulator
from ..errors import UsageError
from ..events import Event
from ..kinds import EnumNumbering
from ._base import Stream, decode, stack_exhausted
from .gemini_chunks import SHAPES, GeminiChunks

__all__ = ["SCAN_TRANSITIONS", "ArraySplitter", "GeminiJsonStream", "JsonBody"]

ScanState = Literal["start", "first", "after", "next", "element", "end"]
ByteClass = Literal["space", "open_array", "open_object", "comma", "close_array", "other"]

#: ``(state, byte class) -> next state`` between elements; a missing pair is a
#: framing error. ``element`` is scanned by ``ArraySplitter`` and ends in
#: ``after`` (``end`` for a bare-object body).
SCAN_TRANSITIONS: Mapping[tuple[ScanState, ByteClass], ScanState] = {
    ("start", "space"): "start",
    ("start", "open_array"): "first",
    ("start", "open_object"): "element",
    ("first", "space"): "first",
    ("first", "open_object"): "element",
    ("first", "close_array"): "end",
    ("after", "space"): "after",
    ("after", "comma"): "next",
    ("after", "close_array"): "end",
    ("next", "space"): "next",
    ("next", "open_object"): "element",
    ("end", "space"): "end",
}
SCAN_STATES: tuple[ScanState, ...] = ("start", "first", "after", "next", "end")
BYTE_CLASSES: tuple[ByteClass, ...] = (
    "space",
    "open_array",
    "open_object",
    "comma",
    "close_array",
    "other",
)


class JsonBody:
    """A Gemini JSON-array body fed to a chunk handler (``gemini-json``, and the
    ``gemini`` adapter when a body turns out not to be SSE)."""

    #: The fast path's shapes (``gemini_chunks.SHAPES``), matched while
    #: splitting; None: every element takes the general path.
    shapes: ClassVar[ShapeMatcher | None] = SHAPES

    def __init__(self, acc: Accumulator, chunks: GeminiChunks, max_element_bytes: int) -> None:
        self._acc = acc
        self._chunks = chunks
        self.scanner = ArraySplitter(max_element_bytes)
        #: Interpreting an element ran out of stack (``stack_exhausted``): the
        #: rest of the body is counted (``ignored_bytes``), not split.
        self.stopped = False
        self.ignored_bytes = 0

    def feed(self, data: bytes | bytearray | memoryview, out: list[Event]) -> None:
        """Feeds body bytes; appends the events of every completed element."""
        scanner = self.scanner
        if self.stopped:
            self.ignored_bytes += memoryview(data).nbytes
            return
        if scanner.error is not None:
            scanner.feed(data)  # after an error: counted, not parsed
            return
        try:
            chunks = self._chunks
            items = decode(scanner, data, self.shapes, chunks, out)
            at, count = 0, len(items)
            while at < count:
                item = items[at]
                if isinstance(item, tuple):
                    end = chunks.take(items, at, out)
                    if end != at:
                        at = end
                        continue
                    at += 1
                    _, text, index, usage, response_id, ticket = item
                    if chunks.fast_text(text, index, usage, response_id, out):
                        continue
                    self._element(scanner.matched_element(ticket), out)
                else:
                    at += 1
                    self._element(item, out)
        except RecursionError:
            self.stopped = True  # the rest is counted, not parsed
            out.append(stack_exhausted(self._acc))
            return
        if scanner.error is not None:
            kind, message, _ = scanner.error
            out.append(self._acc.fail("framing", kind, None, message, retryable=False))

    def close(self) -> None:
        """The input ended: records what was left unfinished."""
        acc = self._acc
        if self.scanner.error is not None or self.stopped:
            return
        pending, unclosed = self.scanner.finish()
        if pending and not acc.ended:
            acc.warn(
                "partial_event_discarded",
                f"the input ended inside an element; its {pending} bytes were discarded",
            )
        if unclosed:
            acc.warn("missing_array_end", "the input ended before the array's closing ']'")

    def _element(self, element: bytes, out: list[Event]) -> None:
        """The general path: one element, decoded."""
        text = element.decode("utf-8", "replace")
        try:
            chunk = loads(text)
        except ValueError as exc:
            kind, message = failure(exc, text, "an element")
            out.append(self._acc.fail("framing", kind, None, message))
            return
        self._chunks.on_chunk(chunk, out)


class GeminiJsonStream(Stream):
    """Gemini ``streamGenerateContent`` JSON-array adapter (``sw.stream("gemini-json")``)."""

    protocol = "gemini-json"

    def __init__(
        self,
        *,
        max_element_bytes: int = DEFAULT_MAX_EVENT_BYTES,
        max_candidates: int = 128,
        enum_numbering: EnumNumbering = "either",
        **options: Any,
    ) -> None:
        """Options: ``max_element_bytes`` caps one array element (a larger one ends
        the stream in ``error``); ``max_candidates`` caps the candidates;
        ``enum_numbering`` as for ``gemini``; the rest are ``Stream``'s."""
        super().__init__(**options)
        self._chunks = GeminiChunks(
            self._acc, max_candidates=max_candidates, enum_numbering=enum_numbering
        )
        self._body = JsonBody(self._acc, self._chunks, max_element_bytes)

    def feed(self, data: bytes | bytearray | memoryview) -> list[Event]:
        if self._closed:
            raise UsageError(f"the {self.protocol} stream was closed; it cannot be fed")
        self._acc.cached = None
        out: list[Event] = []
        self._body.feed(data, out)
        return self._emit(out)

    def _end_input(self, out: list[Event]) -> None:
        self._body.close()

    def _sync_counters(self) -> None:
        sync_json_counters(self._acc, self._body, 0)


def sync_json_counters(acc: Accumulator, body: JsonBody, extra_bytes: int) -> None:
    """Copies a JSON body's counters into the accumulator."""
    scanner = body.scanner
    acc.bytes_received = scanner.bytes_fed + body.ignored_bytes + extra_bytes
    acc.wire_events = scanner.elements
    acc.peak_buffered_bytes = max(acc.peak_buffered_bytes, scanner.peak_buffered_bytes)
