"""A spec-literal reference for ``_core.ArraySplitter``: the JSON-array splitter in Python.

This was ``gemini-json``'s splitter before it moved into the Rust core
(``rust/core/src/json_array.rs``): the same machine, written from the same
rules (RFC 8259 strings and escapes, brace depth, ``SCAN_TRANSITIONS``
between elements), in Python regexes. ``tests/test_gemini_json.py`` holds the
Rust splitter to it under every chunking.
"""

from __future__ import annotations

import re
from collections.abc import Mapping

from streamwire._core import DEFAULT_MAX_EVENT_BYTES
from streamwire.protocols.gemini_json import SCAN_TRANSITIONS, ByteClass, ScanState

__all__ = ["ArrayScanner"]

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
#: Outside strings only braces matter (brackets do not change the depth).
_SKIP = re.compile(rb'(?:[^{}"]+|"[^"\\]*(?:\\.[^"\\]*)*")*', re.S)
#: The rest of a string's body (after a feed ended inside it).
_STRING_BODY = re.compile(rb'[^"\\]*(?:\\.[^"\\]*)*', re.S)


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
