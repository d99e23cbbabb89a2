"""Large feeds are decoded with the GIL released, to the same objects.

A ``feed`` of an immutable ``bytes`` of at least ``_core.release_gil_bytes()``
(default ``DEFAULT_RELEASE_GIL_BYTES``, 64 KiB) is framed (and CRC-checked)
in Rust while other Python threads run, then turned into Python objects
(``rust/py/src/buffer.rs``). The objects, their order, and the framing
errors (with what decoded before them) are those of the path that keeps the
GIL, under every chunking, ``feed_matched`` too whatever the threshold (it
keeps the GIL); and another thread does run during one large feed, which it
could not while the GIL was held throughout.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

import pytest

import streamwire as sw
from bedrock_frames import event_frame
from chunking import chunkings
from streamwire._core import DEFAULT_RELEASE_GIL_BYTES, release_gil_bytes
from streamwire.protocols.anthropic import SHAPES as ANTHROPIC
from streamwire.protocols.bedrock import SHAPES as CONVERSE
from streamwire.protocols.openai_chat import SHAPES as CHAT


@contextmanager
def threshold(value: int) -> Iterator[None]:
    previous = release_gil_bytes(value)
    try:
        yield
    finally:
        release_gil_bytes(previous)


@pytest.fixture
def always() -> Iterator[None]:
    with threshold(0):
        yield


def _sse_body() -> bytes:
    parts = []
    for i in range(300):
        chunk = {"id": "c", "choices": [{"index": 0, "delta": {"content": f"tok{i} é🙂"}}]}
        parts.append(sw.encode_sse(_dumps(chunk)))
        delta = {"type": "text_delta", "text": f"t{i}"}
        parts.append(
            sw.encode_sse(
                _dumps({"type": "content_block_delta", "index": i % 3, "delta": delta}),
                event="content_block_delta",
            )
        )
        if i % 50 == 0:
            parts.append(b": keep-alive\nid: e" + str(i).encode() + b"\nretry: 5\ndata: x\n\n")
    return b"".join(parts)


def _es_body() -> bytes:
    frames = []
    for i in range(300):
        frames.append(
            event_frame(
                "contentBlockDelta", {"contentBlockIndex": i % 2, "delta": {"text": f"t{i}"}}
            )
        )
        if i % 40 == 0:
            frames.append(event_frame("messageStop", {"stopReason": "end_turn"}))
    return b"".join(frames)


def _dumps(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False)


def _flat(items: list[Any], decoder: Any) -> list[Any]:
    """The decoded items, with each match tuple's ticket resolved to its unit."""
    out = []
    for item in items:
        if isinstance(item, tuple):
            ticket = item[-1]
            lookup = getattr(decoder, "matched_event", None) or decoder.matched_message
            out.append((item[:-1], _unit(lookup(ticket))))
        else:
            out.append(_unit(item))
    return out


def _unit(unit: Any) -> Any:
    if isinstance(unit, sw.SseEvent):
        return ("sse", unit.event, unit.data, unit.id, unit.retry)
    return ("es", dict(unit.headers), unit.payload)


def _decode(make: Callable[[], Any], chunks: list[bytes], shapes: Any) -> list[Any]:
    decoder = make()
    out: list[Any] = []
    try:
        for chunk in chunks:
            items = decoder.feed(chunk) if shapes is None else decoder.feed_matched(chunk, shapes)
            out += _flat(items, decoder)
    except sw.FramingError as exc:
        out += [("error", exc.kind, exc.offset), *_flat(exc.partial, decoder)]
    return out


CASES = [
    ("sse", sw.SseDecoder, None),
    ("sse-chat", sw.SseDecoder, CHAT),
    ("sse-anthropic-runs", sw.SseDecoder, ANTHROPIC),
    ("eventstream", sw.EventStreamDecoder, None),
    ("eventstream-converse-runs", sw.EventStreamDecoder, CONVERSE),
]


@pytest.mark.parametrize(("name", "make", "shapes"), CASES, ids=[c[0] for c in CASES])
def test_released_feeds_decode_to_the_same_objects(name: str, make: Any, shapes: Any) -> None:
    body = _sse_body() if name.startswith("sse") else _es_body()
    broken = body[: len(body) // 2] + b"\xff" * 64 + body[len(body) // 2 :]
    for data in (body, broken if name.startswith("eventstream") else body + b"data: \xff\n\n"):
        for label, chunks in chunkings(data, random_rounds=3):
            if label.startswith("split@") and int(label[6:]) % 97:
                continue  # a sample of the single splits is enough here
            with threshold(1 << 62):
                held = _decode(make, chunks, shapes)
            with threshold(0):
                released = _decode(make, chunks, shapes)
            assert released == held, label


def test_the_default_threshold() -> None:
    assert release_gil_bytes() == DEFAULT_RELEASE_GIL_BYTES == 64 * 1024


def test_buffers_other_than_bytes_keep_the_gil(always: None) -> None:
    # A bytearray could be written by another thread mid-feed: never released.
    body = _sse_body()
    assert _decode(sw.SseDecoder, [bytearray(body)], CHAT) == _decode(sw.SseDecoder, [body], CHAT)


def _wakes_inside(feed: Callable[[Any], object], data: Any) -> int:
    """How often a thread waking every millisecond ran Python code during
    the one call ``feed(data)``, not counting its first and last 6 ms
    (where the GIL's 5 ms switch interval lets it in around a call that holds
    the GIL throughout)."""
    stamps: list[float] = []
    running = True

    def wake() -> None:
        while running:
            time.sleep(0.001)
            stamps.append(time.perf_counter())  # needs the GIL

    thread = threading.Thread(target=wake, daemon=True)
    thread.start()
    time.sleep(0.02)
    try:
        start = time.perf_counter()
        feed(data)
        end = time.perf_counter()
    finally:
        running = False
        thread.join()
    return sum(1 for t in stamps if start + 0.006 < t < end - 0.006)


@pytest.mark.timed
def test_other_threads_run_during_a_large_feed() -> None:
    # One feed of ~38 MiB (~50 ms of framing): with the GIL held throughout,
    # the waking thread never runs inside the call; released, it runs while
    # the bytes are framed. Best of three: on a busy machine the waking
    # thread may lack a core.
    body = _sse_body() * 600
    held = min(_wakes_inside(sw.SseDecoder().feed, bytearray(body)) for _ in range(3))
    released = max(_wakes_inside(sw.SseDecoder().feed, body) for _ in range(3))
    assert held <= 2, held
    assert released >= 10, released
