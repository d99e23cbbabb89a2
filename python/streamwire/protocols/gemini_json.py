"""The ``gemini-json`` adapter: ``streamGenerateContent`` without ``alt=sse``.

Without ``alt=sse`` the Gemini API (and Vertex AI) streams the chunks as the
elements of ONE JSON array, written as they are generated (Gemini API
reference, ``models.streamGenerateContent``, ai.google.dev/api/generate-content,
checked 2026-11-29; the element separator on the wire is ``\\r\\n,\\r\\n``)::

    [{"candidates": [...], ...}
    ,
    {"candidates": [...], ...}
    ]

``ArrayScanner`` splits the body into its elements incrementally, in bounded
memory: it tracks string, escape and brace-depth state and resumes where the
previous ``feed`` stopped (no byte is scanned twice; C-speed regex jumps take
it from one quote or brace to the next), holds only the element in progress,
and dispatches each element as soon as its closing brace arrives. An element
larger than ``max_element_bytes`` ends the stream in ``error``
(``event_too_large``). Between elements the scanner is a small machine with
its transitions as data (``SCAN_TRANSITIONS``); a byte with no transition
(garbage, a missing comma, a trailing comma, data after the closing
bracket) is a framing error (``invalid_json``). A body that is one bare
object (an HTTP error's ``{"error": ...}``) is accepted as a one-element
stream.

Each element is one chunk, with exactly the semantics of the ``gemini`` SSE
adapter (``gemini_chunks.py``), including its Rust-matched fast path (the
matcher reads the element's bytes). Cost: the scanner makes one regex call
per string that a feed cuts and per brace, about 12 per typical chunk,
which makes ``gemini-json`` about 3x slower per chunk than SSE, whose
framing is in Rust (``benches/bench_pipeline_gemini.py``).

At EOF, an element in progress is discarded (warning
``partial_event_discarded``) and an array that was never closed is noted
(warning ``missing_array_end``); the status is decided by the candidates'
finish reasons, as for SSE.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any, Literal

from .._core import DEFAULT_MAX_EVENT_BYTES
from .._json import loads
from ..accumulate import Accumulator
from ..errors import UsageError
from ..events import Event
from ._base import Stream
from .gemini_chunks import SHAPES, GeminiChunks

__all__ = ["SCAN_TRANSITIONS", "ArrayScanner", "GeminiJsonStream", "JsonBody"]

ScanState = Literal["start", "first", "after", "next", "element", "end"]
ByteClass = Literal["space", "open_array", "open_object", "comma", "close_array", "other"]

#: ``(state, byte class) -> next state`` between elements; a missing pair is a
#: framing error. ``element`` is scanned by ``ArrayScanner`` and ends in
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
_EXPECTED: Mapping[ScanState, str] = {
    "start": "'[' or '{'",
    "first": "'{' or ']'",
    "after": "',' or ']'",
    "next": "'{'",
    "end": "nothing after the end of the JSON text",
}
_CLASSES: dict[int, ByteClass] = {
    0x20: "space",
    0x09: "space",
    0x0A: "space",
    0x0D: "space",
    0x5B: "open_array",
    0x7B: "open_object",
    0x2C: "comma",
    0x5D: "close_array",
}
_SPACE = re.compile(rb"[ \t\r\n]*")
#: Outside strings only braces matter (brackets do not change the depth): this
#: skips everything else, whole strings included, in one C-level call. Both
#: string patterns are the unrolled-loop form (one way to match any text), so
#: an unterminated string backtracks linearly, never exponentially.
_SKIP = re.compile(rb'(?:[^{}"]+|"[^"\\]*(?:\\.[^"\\]*)*")*', re.S)
#: The rest of a string's body (after a feed ended inside it).
_STRING_BODY = re.compile(rb'[^"\\]*(?:\\.[^"\\]*)*', re.S)
_match = SHAPES.match


class ArrayScanner:
    """Splits a JSON array of objects (or one bare object) into its elements' bytes."""

    def __init__(self, max_element_bytes: int = DEFAULT_MAX_EVENT_BYTES) -> None:
        self.max_element_bytes = max_element_bytes
        self.state: ScanState = "start"
        #: ``(kind, message, byte offset)`` once the body broke; the scanner stops.
        self.error: tuple[str, str, int] | None = None
        #: Elements dispatched.
        self.elements = 0
        self.bytes_fed = 0
        self.peak_buffered_bytes = 0
        self._buf = bytearray()
        self._pos = 0  # next byte to scan, in _buf
        self._start = 0  # first byte of the element in progress, in _buf
        self._depth = 0
        self._in_string = False
        self._single = False  # a bare object body: it is the only element
        self._consumed = 0  # bytes dropped from the front of _buf

    @property
    def buffered_bytes(self) -> int:
        """Bytes held: the element in progress."""
        return len(self._buf)

    def feed(self, data: bytes | bytearray | memoryview) -> list[bytes]:
        """Scans more of the body; returns the elements it completed (before any error)."""
        size = memoryview(data).nbytes
        self.bytes_fed += size
        if self.error is not None or not size:
            return []
        buf = self._buf
        buf += data
        out: list[bytes] = []
        pos, n = self._pos, len(buf)
        while pos < n:
            if self.state == "element":
                pos = self._scan_element(buf, pos, n, out)
                if self.error is not None or self.state == "element":
                    break
                continue
            pos = _SPACE.match(buf, pos).end()  # type: ignore[union-attr]
            if pos >= n:
                break
            cls = _CLASSES.get(buf[pos], "other")
            state = self.state
            following = SCAN_TRANSITIONS.get((state, cls))
            if following is None:
                got = chr(buf[pos]) if 0x20 < buf[pos] < 0x7F else f"byte 0x{buf[pos]:02x}"
                self._fail("invalid_json", f"expected {_EXPECTED[state]}, got {got!r}", pos)
                break
            if following == "element":
                self._start, self._depth, self._in_string = pos, 0, False
                self._single = state == "start"
            else:
                pos += 1
            self.state = following
        keep = self._start if self.state == "element" else pos
        if keep:
            del buf[:keep]
            self._consumed += keep
            pos -= keep
            self._start = 0
        self._pos = pos
        if self.state == "element" and len(buf) > self.max_element_bytes and self.error is None:
            self._fail(
                "event_too_large",
                f"an element passed max_element_bytes ({self.max_element_bytes})",
                0,
            )
        if self.error is not None:
            buf.clear()  # nothing more is parsed: hold nothing
            self._pos = 0
            return out
        if len(buf) > self.peak_buffered_bytes:
            self.peak_buffered_bytes = len(buf)
        return out

    def finish(self) -> tuple[int, bool]:
        """The input ended: ``(bytes of an element in progress, array left open)``."""
        pending = len(self._buf) if self.state == "element" else 0
        unclosed = self.state in ("first", "after", "next") or (
            self.state == "element" and not self._single
        )
        return pending, unclosed

    def _scan_element(self, buf: bytearray, pos: int, n: int, out: list[bytes]) -> int:
        depth, in_string = self._depth, self._in_string
        while True:
            if in_string:
                pos = _STRING_BODY.match(buf, pos).end()  # type: ignore[union-attr]
                if pos >= n:
                    break
                if buf[pos] != 0x22:
                    break  # a backslash at the end: its escaped byte has not arrived
                in_string = False
                pos += 1
                continue
            pos = _SKIP.match(buf, pos).end()  # type: ignore[union-attr]
            if pos >= n:
                break
            byte = buf[pos]
            pos += 1
            if byte == 0x22:
                in_string = True
            elif byte == 0x7B:
                depth += 1
            else:
                depth -= 1
                if depth == 0:
                    if pos - self._start > self.max_element_bytes:
                        self._fail(
                            "event_too_large",
                            f"an element passed max_element_bytes ({self.max_element_bytes})",
                            self._start,
                        )
                        break
                    out.append(bytes(buf[self._start : pos]))
                    self.elements += 1
                    self.state = "end" if self._single else "after"
                    break
        self._depth, self._in_string = depth, in_string
        return pos

    def _fail(self, kind: str, message: str, pos: int) -> None:
        offset = self._consumed + pos
        self.error = (kind, f"{message} (byte {offset})", offset)


class JsonBody:
    """A Gemini JSON-array body fed to a chunk handler (``gemini-json``, and the
    ``gemini`` adapter when a body turns out not to be SSE)."""

    def __init__(self, acc: Accumulator, chunks: GeminiChunks, max_element_bytes: int) -> None:
        self._acc = acc
        self._chunks = chunks
        self.scanner = ArrayScanner(max_element_bytes)

    def feed(self, data: bytes | bytearray | memoryview, out: list[Event]) -> None:
        """Feeds body bytes; appends the events of every completed element."""
        scanner = self.scanner
        if scanner.error is not None:
            scanner.feed(data)  # after an error: counted, not parsed
            return
        for element in scanner.feed(data):
            self._element(element, out)
        if scanner.error is not None:
            kind, message, _ = scanner.error
            out.append(self._acc.fail("framing", kind, None, message, retryable=False))

    def close(self) -> None:
        """The input ended: records what was left unfinished."""
        acc = self._acc
        if self.scanner.error is not None:
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
        match = _match(element)
        if match is not None:
            _, text, index, usage, response_id = match
            if self._chunks.fast_text(text, index, usage, response_id, out):
                return
        text = element.decode("utf-8", "replace")
        try:
            chunk = loads(text)
        except ValueError:
            message = f"an element is not JSON: {text[:80]!r}"
            out.append(self._acc.fail("framing", "invalid_json", None, message))
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
        **options: Any,
    ) -> None:
        """Options: ``max_element_bytes`` caps one array element (a larger one ends
        the stream in ``error``); ``max_candidates`` caps the candidates; the rest
        are ``Stream``'s."""
        super().__init__(**options)
        self._chunks = GeminiChunks(self._acc, max_candidates=max_candidates)
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
        self._acc.provider_content = self._chunks.provider_content()


def sync_json_counters(acc: Accumulator, body: JsonBody, extra_bytes: int) -> None:
    """Copies a JSON body's counters into the accumulator."""
    scanner = body.scanner
    acc.bytes_received = scanner.bytes_fed + extra_bytes
    acc.wire_events = scanner.elements
    acc.peak_buffered_bytes = max(acc.peak_buffered_bytes, scanner.peak_buffered_bytes)
