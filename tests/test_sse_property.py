"""Property tests: ``sw.SseDecoder`` under any chunking agrees with the spec reference.

Streams come from ``sse_strategies.py``; chunk boundaries are drawn
independently, empty chunks included, so a split lands inside a CRLF, a BOM or
a multi-byte sequence. The oracle is ``sse_reference.interpret``.
"""

from __future__ import annotations

from typing import Any

from hypothesis import example, given
from hypothesis import strategies as st

import streamwire as sw
from sse_reference import interpret
from sse_strategies import BOM, VALUE_PIECES, chunked_streams, streams

Observed = tuple[list[tuple[str, str, str | None, int | None]], str | None, int | None]


def _decode(chunks: list[bytes], wrap: Any = bytes) -> Observed:
    decoder = sw.SseDecoder()
    events = []
    for chunk in chunks:
        events += decoder.feed(wrap(chunk))
    assert decoder.finish() == []
    assert decoder.bytes_fed == sum(len(c) for c in chunks)
    assert decoder.events_dispatched == len(events)
    return [(e.event, e.data, e.id, e.retry) for e in events], decoder.last_event_id, decoder.retry


def _reference(data: bytes) -> Observed:
    ref = interpret(data)
    return [(e.event, e.data, e.id, e.retry) for e in ref.events], ref.last_event_id, ref.retry


# Regressions worth pinning whatever Hypothesis draws: a CRLF split between
# chunks, a BOM split over three chunks, a second BOM, a split 4-byte character
# and a truncated one before CR, NUL in an id, a non-ASCII digit in retry.
@example((b"data: a\r\ndata: b\r\n\r\n", [b"data: a\r", b"\ndata: b\r", b"\n\r", b"\n"]))
@example((BOM + b"data: x\n\n", [BOM[:1], BOM[1:2], BOM[2:] + b"data: x\n\n"]))
@example((BOM + BOM + b"data: x\n\n", [BOM + BOM[:1], BOM[1:] + b"data: x\n\n"]))
@example((b"data: \xf0\x9f\x98\x80\n\n", [b"data: \xf0", b"\x9f\x98", b"\x80\n\n"]))
@example((b"data: \xf0\x9f\x98\rdata\r\r", [b"data: \xf0\x9f", b"\x98\r", b"data\r\r"]))
@example((b"id: 1\nid: 2\x003\ndata\n\n", [b"id: 1\nid: 2\x00", b"3\ndata\n\n"]))
@example((b"retry: 5\ndata: a\n\ndata: b\n\n", [b"retry: 5\ndata: a\n\nda", b"ta: b\n\n"]))
@example((b"retry: 7\nretry: \xd9\xa3\ndata\n\n", [b"retry: 7\n", b"retry: \xd9\xa3\ndata\n\n"]))
@given(chunked_streams())
def test_decoder_matches_reference(case: tuple[bytes, list[bytes]]) -> None:
    data, chunks = case
    assert _decode(chunks) == _reference(data)


@given(streams(), st.sampled_from([bytearray, memoryview]))
def test_buffer_kinds_match_reference(data: bytes, wrap: Any) -> None:
    assert _decode([data], wrap) == _reference(data)


SOUP = [*VALUE_PIECES, b"\n", b"\r", b"\r\n", b"\n\n", b"data", b"data:", b"id:", b"retry:1"]


@given(st.lists(st.sampled_from(SOUP), max_size=40))
def test_arbitrary_byte_soup_matches_reference(pieces: list[bytes]) -> None:
    # Not shaped like SSE at all: whatever comes, both must read it the same way.
    data = b"".join(pieces)
    half = len(data) // 2
    assert _decode([data[:half], data[half:]]) == _reference(data)
