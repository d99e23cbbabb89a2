"""The ``gemini-json`` adapter: the incremental JSON-array splitter and its equivalence
with the SSE adapter.

The splitter (``_core.ArraySplitter``, in Rust) is tested over every (state,
byte class) pair of its between-elements machine; against the standard
library's parser on generated arrays of tricky objects (quotes, backslashes,
braces and brackets inside strings, nesting) under any chunking, with its
memory bounded by the largest element; against the spec-literal Python
reference (``json_array_reference.py``) on those arrays and on corrupted
ones, element for element and error for error; and every ``gemini`` fixture
made of plain JSON events, re-serialized as an array, gives the same unified
events as over SSE.
"""

from __future__ import annotations

import itertools
import json
import time
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

import streamwire as sw
from chunking import chunkings, split_at
from fixture_replay import Fixture, manifests
from json_array_reference import ArrayScanner
from streamwire._core import ArraySplitter
from streamwire.protocols import gemini_chunks, gemini_json

_BYTES = {
    "space": b" ",
    "open_array": b"[",
    "open_object": b"{",
    "comma": b",",
    "close_array": b"]",
    "other": b"x",
}
#: A body prefix that leaves the scanner in each state.
_PREFIX = {"start": b"", "first": b"[", "after": b"[{}", "next": b"[{},", "end": b"[]"}


def _scan(
    chunks: list[bytes], max_element_bytes: int = 1 << 20
) -> tuple[ArraySplitter, list[bytes]]:
    scanner = ArraySplitter(max_element_bytes)
    out: list[bytes] = []
    for chunk in chunks:
        out += scanner.feed(chunk)
    return scanner, out


def _reference(chunks: list[bytes], max_element_bytes: int = 1 << 20) -> tuple[Any, ...]:
    scanner = ArrayScanner(max_element_bytes)
    out: list[bytes] = []
    for chunk in chunks:
        out += scanner.feed(chunk)
    error = None if scanner.error is None else (scanner.error[0], scanner.error[2])
    return out, error, scanner.state if error is None else None


def _run(body: bytes, protocol: str = "gemini-json", **options: Any) -> sw.StreamResult:
    stream = sw.stream(protocol, **options)
    stream.feed(body)
    stream.close()
    return stream.result


def _chunk(text: str, finish: str | None = None) -> dict[str, Any]:
    cand: dict[str, Any] = {"content": {"parts": [{"text": text}], "role": "model"}}
    if finish:
        cand["finishReason"] = finish
    return {"candidates": [cand], "responseId": "rid"}


# --- the between-elements machine ---------------------------------------------------


@pytest.mark.parametrize(
    ("state", "byte_class"),
    list(itertools.product(gemini_json.SCAN_STATES, gemini_json.BYTE_CLASSES)),
)
def test_every_state_and_byte_class(state: str, byte_class: str) -> None:
    prefix = _PREFIX[state]
    scanner, _ = _scan([prefix])
    assert scanner.state == state and scanner.error is None
    scanner.feed(_BYTES[byte_class])
    following = gemini_json.SCAN_TRANSITIONS.get((state, byte_class))  # type: ignore[call-overload]
    if following is None:
        assert scanner.error is not None
        kind, message, offset = scanner.error
        assert kind == "invalid_json" and offset == len(prefix), message
    else:
        assert scanner.error is None and scanner.state == following


def test_a_bare_object_is_one_element_and_ends_the_text() -> None:
    scanner, elements = _scan([b' {"a": "}"} ', b"\n"])
    assert elements == [b'{"a": "}"}'] and scanner.state == "end"
    scanner.feed(b"{}")
    assert scanner.error is not None and "nothing after the end" in scanner.error[1]


# --- the element scanner ------------------------------------------------------------

_TRICKY = st.text(alphabet=st.sampled_from(list('ab{}[]",:\\ é🙂\n\t')), max_size=12)
_VALUE = st.recursive(
    st.one_of(st.none(), st.booleans(), st.integers(-1000, 1000), _TRICKY),
    lambda inner: st.one_of(
        st.lists(inner, max_size=3), st.dictionaries(_TRICKY, inner, max_size=3)
    ),
    max_leaves=10,
)
_ELEMENT = st.dictionaries(_TRICKY, _VALUE, max_size=4)
_SPACE = st.sampled_from(["", " ", "\r\n", "\n\t ", "\r\n"])


@given(
    st.lists(_ELEMENT, max_size=5),
    st.lists(_SPACE, min_size=12, max_size=12),
    st.booleans(),
    st.randoms(use_true_random=False),
)
def test_scanner_splits_like_the_json_parser(
    elements: list[dict[str, Any]], spaces: list[str], ascii_only: bool, rng: Any
) -> None:
    texts = [json.dumps(e, ensure_ascii=ascii_only) for e in elements]
    seps = iter(spaces * 2)
    body = "[" + next(seps) + (next(seps) + "," + next(seps)).join(texts) + next(seps) + "]"
    data = body.encode()
    points = rng.sample(range(len(data) + 1), min(len(data) + 1, rng.randint(0, 40)))
    scanner, out = _scan(split_at(data, points))
    assert scanner.error is None and scanner.state == "end"
    assert [json.loads(e) for e in out] == elements
    largest = max((len(t.encode()) for t in texts), default=0)
    assert scanner.peak_buffered_bytes <= largest
    assert scanner.buffered_bytes == 0 and scanner.bytes_fed == len(data)


def test_escapes_cut_at_every_point() -> None:
    element = '{"a": "x\\\\", "b": "\\"}", "c": {"d": "\\u00e9{"}}'
    data = ("[" + element + "]").encode()
    for label, chunks in chunkings(data):
        _scanner, out = _scan(chunks)
        assert out == [element.encode()], label


def test_non_object_elements_and_garbage_are_errors() -> None:
    for body, where in [
        (b"[1]", 1),
        (b'["a"]', 1),
        (b"[{}{}]", 3),
        (b"[{},]", 4),
        (b"[{}] x", 5),
        (b"<html>", 0),
        (b"[{} , {}] ]", 10),
    ]:
        scanner, _ = _scan([body])
        assert scanner.error is not None and scanner.error[0] == "invalid_json", body
        assert scanner.error[2] == where, (body, scanner.error)


def test_element_cap() -> None:
    big = b'[{"a": "' + b"x" * 100 + b'"}]'
    for chunks in ([big], [big[i : i + 7] for i in range(0, len(big), 7)]):
        scanner, out = _scan(chunks, max_element_bytes=64)
        assert out == [] and scanner.error is not None and scanner.error[0] == "event_too_large"
        assert scanner.peak_buffered_bytes <= 64 + 7 or len(chunks) == 1
    first = json.dumps(_chunk("ok")).encode()
    result = _run(
        b"[" + first + b"," + b'{"a": "' + b"x" * 200 + b'"}]', max_element_bytes=len(first)
    )
    assert result.status == "error" and result.text == "ok"
    assert result.error is not None and result.error.type == "event_too_large"


@pytest.mark.timed
def test_large_elements_fed_in_small_chunks_take_linear_time() -> None:
    # A quadratic scanner (one that rescans the element on every feed) takes
    # minutes here; the incremental one, well under a second.
    element = json.dumps({"candidates": [{"content": {"parts": [{"text": "é\\" * 150_000}]}}]})
    data = ("[" + element + "]").encode()
    start = time.perf_counter()
    scanner, out = _scan([data[i : i + 16] for i in range(0, len(data), 16)], len(data))
    assert len(out) == 1 and scanner.error is None
    assert time.perf_counter() - start < 5


# --- the adapter --------------------------------------------------------------------


def test_interface_and_counters() -> None:
    body = ("[" + ",\r\n".join(json.dumps(_chunk(t)) for t in "ab") + "]").encode()
    stream = sw.stream("gemini-json")
    for piece in (body[:10], bytearray(body[10:20]), memoryview(body[20:])):
        stream.feed(piece)
    assert stream.result.status == "in_progress" and stream.result.text == "ab"
    stream.close()
    result = stream.result
    assert result.status == "incomplete" and result.warnings == ()
    assert result.metrics.bytes_received == len(body) and result.metrics.wire_events == 2
    with pytest.raises(sw.UsageError, match="closed"):
        stream.feed(b"[]")
    cancelled = sw.stream("gemini-json")
    cancelled.feed(body[:40])
    cancelled.cancel()
    assert cancelled.result.status == "cancelled"


@pytest.mark.parametrize(
    ("body", "status", "warnings", "error_type"),
    [
        (b"", "incomplete", [], None),
        (b"  \r\n", "incomplete", [], None),
        (b"[]", "incomplete", [], None),
        (b"[{}]", "incomplete", [], None),
        (
            b'[{"candidates": [{"content": {"parts": [{"text": "a"}]}, "finishReason": "STOP"}]}',
            "completed",
            ["missing_array_end"],
            None,
        ),
        (
            b'[{"candidates": [{"content": {"parts": [{"text": "a"}]}}]},\r\n{"candid',
            "incomplete",
            ["missing_array_end", "partial_event_discarded"],
            None,
        ),
        (b'[{"candidates": "x" : 1}]', "error", [], "invalid_json"),
        (b"[{\xff}]", "error", [], "invalid_json"),
        (
            b'{"error": {"code": 404, "message": "not found", "status": "NOT_FOUND"}}',
            "error",
            [],
            "NOT_FOUND",
        ),
    ],
)
def test_bodies(body: bytes, status: str, warnings: list[str], error_type: str | None) -> None:
    for chunks in ([body], [body[i : i + 1] for i in range(len(body))]):
        stream = sw.stream("gemini-json")
        for chunk in chunks:
            stream.feed(chunk)
        stream.close()
        result = stream.result
        assert result.status == status
        assert sorted(w.code for w in result.warnings) == warnings
        assert (result.error.type if result.error else None) == error_type


def test_after_a_framing_error_bytes_are_counted_not_parsed() -> None:
    stream = sw.stream("gemini-json")
    stream.feed(b"[x")
    stream.feed(b"more")
    stream.close()
    result = stream.result
    assert result.status == "error" and not result.framing_ok
    assert result.metrics.bytes_received == 6


# --- equivalence with the SSE adapter ------------------------------------------------


def _plain_json_events(fixture: Fixture) -> list[str] | None:
    """The data of every event, when the fixture is nothing but JSON-object events."""
    if fixture.manifest.get("options") or fixture.manifest.get("replay"):
        return None
    decoder = sw.SseDecoder()
    try:
        events = decoder.feed(fixture.raw) + decoder.finish()
    except sw.FramingError:
        return None
    if decoder.buffered_bytes or not events:
        return None
    datas = []
    for event in events:
        try:
            value = json.loads(event.data)
        except ValueError:
            return None
        if event.event != "message" or not isinstance(value, dict):
            return None
        datas.append(event.data)
    return datas


EQUIVALENT = [
    pytest.param(f, datas, id=f.name)
    for f in manifests()
    if f.protocol == "gemini" and (datas := _plain_json_events(f)) is not None
]


def test_most_gemini_fixtures_are_compared() -> None:
    assert len(EQUIVALENT) >= 30


@pytest.mark.parametrize(("fixture", "datas"), EQUIVALENT)
def test_the_array_gives_the_sse_events(fixture: Fixture, datas: list[str]) -> None:
    _, sse_events = fixture.replay([fixture.raw])
    body = ("[" + "\r\n,\r\n".join(datas) + "]").encode()
    for chunks in (
        [body],
        [body[i : i + 5] for i in range(0, len(body), 5)],
        [body[i : i + 4096] for i in range(0, len(body), 4096)],
    ):
        stream = sw.stream("gemini-json")
        events = []
        for chunk in chunks:
            events += stream.feed(chunk)
        events += stream.close()
        assert events == sse_events
    # and the SSE adapter, given the array, reads it as JSON
    via_sse = sw.stream("gemini")
    events = via_sse.feed(body) + via_sse.close()
    assert events == sse_events
    assert "not_sse" in {w.code for w in via_sse.result.warnings}


def test_fast_path_matches_general_path(monkeypatch: Any) -> None:
    fixtures = [f for f in manifests() if f.protocol == "gemini-json"]
    assert fixtures
    fast = [f.replay(split_at(f.raw, range(0, len(f.raw), 101)))[1] for f in fixtures]
    with monkeypatch.context() as unsunk:  # every match a tuple first, no sink
        unsunk.setattr(gemini_chunks.GeminiChunks, "arm", lambda self: None)
        tuples = [f.replay(split_at(f.raw, range(0, len(f.raw), 101)))[1] for f in fixtures]
    monkeypatch.setattr(gemini_json.JsonBody, "shapes", None)
    general = [f.replay(split_at(f.raw, range(0, len(f.raw), 101)))[1] for f in fixtures]
    assert fast == general == tuples


@given(
    st.lists(_ELEMENT, max_size=4),
    st.lists(_SPACE, min_size=12, max_size=12),
    st.integers(0, 3),
    st.sampled_from(["", "", ",", "}", "{", '"', "\\", "x", "]", "[", " "]),
    st.sampled_from([1 << 20, 40, 9]),
    st.randoms(use_true_random=False),
)
def test_the_rust_splitter_is_the_reference(
    elements: list[dict[str, Any]],
    spaces: list[str],
    cut: int,
    junk: str,
    cap: int,
    rng: Any,
) -> None:
    texts = [json.dumps(e, ensure_ascii=False) for e in elements]
    seps = iter(spaces * 2)
    body = "[" + next(seps) + (next(seps) + "," + next(seps)).join(texts) + next(seps) + "]"
    data = body.encode()
    at = rng.randint(0, len(data))
    data = data[:at] + junk.encode() + data[at + cut :]
    expected = _reference([data], cap)
    for label, chunks in chunkings(data, seed=rng.randint(0, 999), random_rounds=3):
        scanner, out = _scan(chunks, cap)
        error = None if scanner.error is None else (scanner.error[0], scanner.error[2])
        got = (out, error, scanner.state if error is None else None)
        assert got == expected, (label, data)


def _gemini_element(text: str, count: int) -> dict[str, Any]:
    return {
        "candidates": [{"content": {"parts": [{"text": text}], "role": "model"}, "index": 0}],
        "usageMetadata": {"promptTokenCount": 3, "candidatesTokenCount": count},
        "modelVersion": "gemini-2.5-flash",
    }


def _matched_items(chunks: list[bytes], head: bool, cap: int) -> tuple[Any, ...]:
    """What the splitter gives with each element matched: through
    ``feed_matched`` (``head``: an element the last skeleton replays is found
    by the match itself), or split by ``feed`` and each element matched alone."""
    scanner = ArraySplitter(cap)
    shapes = gemini_chunks.SHAPES
    items: list[Any] = []
    for chunk in chunks:
        if head:
            for item in scanner.feed_matched(chunk, shapes):
                if isinstance(item, tuple):
                    items.append((item[:-1], scanner.matched_element(item[-1])))
                else:
                    items.append(item)
        else:
            for element in scanner.feed(chunk):
                found = shapes.match(element, "message")
                items.append(element if found is None else (found, element))
    return items, scanner.error, scanner.state, scanner.elements, scanner.bytes_fed


_GEMINI_OR_ANY = st.one_of(_ELEMENT, st.tuples(st.text(max_size=40), st.integers(0, 10**6)))


@given(
    st.lists(_GEMINI_OR_ANY, max_size=8),
    st.lists(_SPACE, min_size=20, max_size=20),
    st.integers(0, 3),
    st.sampled_from(["", "", ",", "}", "{", '"', "\\", "x", "]"]),
    # Caps about a Gemini element's size: some fit, the next may not.
    st.sampled_from([1 << 20, 190, 170, 9]),
    st.randoms(use_true_random=False),
)
def test_elements_found_by_their_match_are_the_ones_the_splitter_finds(
    elements: list[Any], spaces: list[str], cut: int, junk: str, cap: int, rng: Any
) -> None:
    texts = [
        json.dumps(_gemini_element(*e) if isinstance(e, tuple) else e, ensure_ascii=False)
        for e in elements
    ]
    seps = iter(spaces * 2)
    body = "[" + next(seps) + (next(seps) + "," + next(seps)).join(texts) + next(seps) + "]"
    data = body.encode()
    if rng.random() < 0.5:
        at = rng.randint(0, len(data))
        data = data[:at] + junk.encode() + data[at + cut :]
    expected = _matched_items([data], head=False, cap=cap)
    for label, chunks in chunkings(data, seed=rng.randint(0, 999), random_rounds=3):
        assert _matched_items(chunks, head=True, cap=cap) == expected, (label, data)


def test_an_element_the_last_skeleton_replays_is_not_buffered() -> None:
    first = json.dumps(_gemini_element("a", 1))
    rest = [json.dumps(_gemini_element("longer text " * i, i)) for i in range(2, 6)]
    body = ("[" + ",".join([first, *rest]) + "]").encode()
    scanner = ArraySplitter(1 << 20)
    items = scanner.feed_matched(body, gemini_chunks.SHAPES)
    assert [type(item) for item in items] == [tuple] * 5
    assert scanner.elements == 5 and scanner.state == "end"
    # Only the first was split and held: the rest were found by their match.
    assert scanner.peak_buffered_bytes == len(first)
