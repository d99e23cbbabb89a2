"""The WHATWG SSE conformance vectors (``fixtures/sse/cases.json``) under every chunking.

Each case gives raw bytes and the events, last event ID and reconnection time a
conforming parser derives from them. ``sw.SseDecoder`` must produce exactly
those, whatever the chunking (see ``chunking.py``), whatever kind of buffer it
is fed, and ``finish()`` must add nothing: an unterminated event is discarded.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import streamwire as sw
from chunking import chunkings, feed_all
from sse_reference import interpret

Case = dict[str, Any]
Observed = tuple[list[tuple[str, str, str | None, int | None]], str | None, int | None]


def _expected(case: Case) -> Observed:
    events = [(e["event"], e["data"], e["id"], e["retry"]) for e in case["events"]]
    return events, case["last_event_id"], case["reconnection_time"]


def _decode(chunks: list[Any]) -> Observed:
    decoder = sw.SseDecoder()
    events = feed_all(decoder.feed, chunks)
    assert decoder.finish() == [], "finish() must discard, never dispatch"
    assert decoder.events_dispatched == len(events)
    return (
        [(e.event, e.data, e.id, e.retry) for e in events],
        decoder.last_event_id,
        decoder.retry,
    )


def test_vector_under_every_chunking(sse_case: Case) -> None:
    expected = _expected(sse_case)
    for label, chunks in chunkings(sse_case["raw"]):
        assert b"".join(chunks) == sse_case["raw"]
        observed = _decode(chunks)
        assert observed == expected, f"chunking {label}: {sse_case['notes']}"


def test_reference_agrees_with_vector(sse_case: Case) -> None:
    # The oracle of the property tests must itself pass the conformance vectors.
    ref = interpret(sse_case["raw"])
    events = [(e.event, e.data, e.id, e.retry) for e in ref.events]
    assert (events, ref.last_event_id, ref.retry) == _expected(sse_case)


BUFFER_KINDS: dict[str, Callable[[bytes], Any]] = {
    "bytes": bytes,
    "bytearray": bytearray,
    "memoryview": memoryview,
    "memoryview-slice": lambda b: memoryview(b"#" + b + b"#")[1:-1],
    "numpy-uint8": lambda b: np.frombuffer(b, dtype=np.uint8),
}


@pytest.mark.parametrize("kind", list(BUFFER_KINDS))
def test_vector_fed_as_any_buffer(sse_case: Case, kind: str) -> None:
    wrap = BUFFER_KINDS[kind]
    raw: bytes = sse_case["raw"]
    assert _decode([wrap(raw)]) == _expected(sse_case)
    # A few chunkings too: a buffer kind must not change what the carry-over sees.
    for label, chunks in list(chunkings(raw, random_rounds=2))[:: max(1, len(raw) // 16)]:
        assert _decode([wrap(c) for c in chunks]) == _expected(sse_case), label


def test_bytearray_may_be_reused_after_feed() -> None:
    # The decoder must copy what it keeps: the caller's buffer is scratch space.
    decoder = sw.SseDecoder()
    scratch = bytearray(b"data: hel")
    assert decoder.feed(scratch) == []
    scratch[:] = b"XXXXXXXXX"
    assert [e.data for e in decoder.feed(bytearray(b"lo\n\n"))] == ["hello"]


def test_non_contiguous_buffer_is_rejected() -> None:
    strided = memoryview(b"ddaattaa::  xx\n\n\n\n")[::2]
    with pytest.raises((TypeError, BufferError)):
        sw.SseDecoder().feed(strided)


def test_str_is_rejected() -> None:
    with pytest.raises(TypeError):
        sw.SseDecoder().feed("data: x\n\n")  # type: ignore[arg-type]
