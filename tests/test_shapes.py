"""``ShapeMatcher`` and ``SseDecoder.feed_matched``: the Rust fast-path matcher.

The matcher may decline anything (the caller's general path then runs), but
it must never match a payload that Python's ``json.loads`` would decode to
something else than the template says, and its captures must be exactly
``json.loads``'s values. Checked here against the spec-literal reference of
``shape_reference.py``, on generated templates and payloads written both by
``json.dumps`` and by a liberal encoder (whitespace, escapes of any
character, ``-0``, exponents, repeated keys), and on corrupted payloads.
Also: the matcher's API, its errors, and the decoder's tickets.
"""

from __future__ import annotations

import json
import sys
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

import streamwire as sw
from shape_reference import (
    Pairs,
    capture_count,
    capture_kinds,
    encode,
    loads_pairs,
    reference_match,
    same,
)
from streamwire import _json
from streamwire._core import ShapeMatcher
from streamwire.protocols.openai_chat import SHAPE_SPECS, SHAPES

TEXT_SHAPE = {
    "type": "content_block_delta",
    "index": "$int",
    "delta": {"type": "text_delta", "text": "$str"},
    "usage?": "$raw",
}


def _anthropic() -> ShapeMatcher:
    return ShapeMatcher([("content_block_delta", TEXT_SHAPE)])


# --- the API -------------------------------------------------------------------------


def test_a_match_is_the_template_and_its_captures() -> None:
    matcher = _anthropic()
    data = '{"type":"content_block_delta","index":1,"delta":{"type":"text_delta","text":"Hé\\n"}}'
    assert matcher.match(data, "content_block_delta") == (0, 1, "Hé\n", None)
    assert matcher.match(data.encode(), "content_block_delta") == (0, 1, "Hé\n", None)
    assert matcher.match(memoryview(data.encode()), event="content_block_delta") is not None
    assert matcher.decline_reason(data, "content_block_delta") is None
    with_usage = data[:-1] + ',"usage": {"output_tokens": 3}}'
    assert matcher.match(with_usage, "content_block_delta") == (
        0,
        1,
        "Hé\n",
        '{"output_tokens": 3}',
    )
    assert len(matcher) == 1
    assert matcher.captures(0) == 3
    assert "1 templates" in repr(matcher)


@pytest.mark.parametrize(
    ("data", "event", "reason"),
    [
        (
            '{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"x"}}',
            "message",
            "event",
        ),
        (
            '{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"x"}',
            None,
            "syntax",
        ),
        (
            '{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"x"},"x":1}',
            None,
            "unknown_key",
        ),
        (
            '{"type":"content_block_delta","index":0,"index":0,"delta":{"type":"text_delta","text":"x"}}',
            None,
            "duplicate_key",
        ),
        (
            '{"type":"content_block_delta","delta":{"type":"text_delta","text":"x"}}',
            None,
            "missing_key",
        ),
        (
            '{"type":"content_block_delta","index":0,"delta":{"type":"input_json_delta","text":"x"}}',
            None,
            "mismatch",
        ),
        (
            '{"type":"content_block_delta","index":0.0,"delta":{"type":"text_delta","text":"x"}}',
            None,
            "int_range",
        ),
        (
            '{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"'
            + "1" * 641
            + '"}}',
            None,
            "long_number",
        ),
    ],
)
def test_every_decline_reason_is_named(data: str, event: str | None, reason: str) -> None:
    matcher = _anthropic()
    event = event or "content_block_delta"
    assert matcher.match(data, event) is None
    assert matcher.decline_reason(data, event) == reason


def test_an_array_length_decline_is_named() -> None:
    matcher = ShapeMatcher([("message", {"a": ["$int"]})])
    assert matcher.decline_reason('{"a": [1, 2]}') == "length"
    assert matcher.match('{"a": [1]}') == (0, 1)


def test_bytes_that_are_not_utf8_and_strs_with_lone_surrogates_decline() -> None:
    matcher = ShapeMatcher([("message", {"a": "$str"})])
    assert matcher.match(b'{"a": "\xff"}') is None
    assert matcher.decline_reason(b'{"a": "\xff"}') == "syntax"
    assert matcher.match('{"a": "\ud800"}') is None


@pytest.mark.parametrize(
    ("templates", "error"),
    [
        ([("message", {"a": 1.5})], ValueError),
        ([("message", {"a": "$float"})], ValueError),
        ([("message", {"a": 2**64})], ValueError),
        ([("message", {"a": 1, "a?": 2})], ValueError),
        ([("message", {1: "$str"})], TypeError),
        ([("message", {"a": object()})], TypeError),
        ([("message", ["$str"] * 17)], ValueError),
        ([("message", {f"k{i}": None for i in range(65)})], ValueError),
        ([("message",)], TypeError),
        (["message"], TypeError),
        (5, TypeError),
    ],
)
def test_invalid_templates_are_refused(templates: Any, error: type[Exception]) -> None:
    with pytest.raises(error):
        ShapeMatcher(templates)


def test_cyclic_templates_are_refused() -> None:
    cyclic: list[Any] = []
    cyclic.append(cyclic)
    with pytest.raises(ValueError, match="deeper"):
        ShapeMatcher([("message", cyclic)])


def test_falsy_is_what_python_treats_as_false_except_floats() -> None:
    matcher = ShapeMatcher([("message", {"a?": "$falsy"})])
    for falsy in ("null", "false", "0", '""', "[]", "{}"):
        assert matcher.match('{"a": ' + falsy + "}") == (0,)
        assert not json.loads(falsy)
    for other in ("true", "1", '" "', "[0]", '{"": 0}', "0.0", "-0"):
        assert matcher.match('{"a": ' + other + "}") is None


def test_a_literal_dollar_string_is_written_twice() -> None:
    matcher = ShapeMatcher([("message", {"ref": "$$ref", "n": ("$int", None, True)})])
    assert matcher.match('{"ref": "$ref", "n": [5, null, true]}') == (0, 5)
    assert matcher.match('{"ref": "$$ref", "n": [5, null, true]}') is None


# --- the decoder -----------------------------------------------------------------------

_WIRE = (
    b': keep-alive\n\nid: 7\ndata: {"a": "x"}\n\n'
    b'data: {"a": 1}\n\n'
    b'event: other\ndata: {"a": "y"}\n\n'
    b'retry: 5\ndata: {"a": "z"}\n\n'
    b'data: {"a":\n'
    b'data: "two lines"}\n\n'
)


def test_feed_matched_gives_tuples_and_their_events_back() -> None:
    matcher = ShapeMatcher([("message", {"a": "$str"})])
    plain = sw.SseDecoder().feed(_WIRE)
    decoder = sw.SseDecoder()
    mixed = decoder.feed_matched(_WIRE, matcher)
    assert [type(x) for x in mixed] == [tuple, sw.SseEvent, sw.SseEvent, sw.SseEvent, tuple]
    assert mixed[0] == (0, "x", 0)
    assert mixed[4] == (0, "two lines", 1)
    # A retry event is never matched; tickets give back what feed() gives.
    back = [decoder.matched_event(x[-1]) if isinstance(x, tuple) else x for x in mixed]
    assert back == plain
    assert back[0].id == "7" and back[4].id == "7"
    with pytest.raises(IndexError):
        decoder.matched_event(2)
    decoder.feed(b"")  # the next call ends the tickets
    with pytest.raises(IndexError):
        decoder.matched_event(0)
    decoder.finish()
    with pytest.raises(sw.UsageError):
        decoder.feed_matched(b"", matcher)


@given(st.lists(st.binary(max_size=40), max_size=6), st.data())
def test_feed_matched_frames_like_feed_under_any_chunking(
    chunks: list[bytes], data: st.DataObject
) -> None:
    matcher = ShapeMatcher([("message", {"a": "$str"}), ("message", "$any")])
    wire = (
        b"".join(chunks) + _WIRE + b"data: " + json.dumps(data.draw(st.text())).encode() + b"\n\n"
    )
    cuts = sorted(data.draw(st.lists(st.integers(0, len(wire)), max_size=5)))
    pieces = [wire[a:b] for a, b in zip([0, *cuts], [*cuts, len(wire)], strict=True)]
    plain_decoder, decoder = sw.SseDecoder(), sw.SseDecoder()
    plain: list[Any] = []
    back: list[Any] = []
    for piece in pieces:
        try:
            plain += plain_decoder.feed(piece)
        except sw.FramingError as exc:
            plain += exc.partial
            break
        try:
            got = decoder.feed_matched(piece, matcher)
        except sw.FramingError as exc:  # pragma: no cover - the plain decoder fails first
            got = exc.partial
        back += [decoder.matched_event(x[-1]) if isinstance(x, tuple) else x for x in got]
    assert back == plain


def test_a_framing_error_keeps_the_tuples_decoded_before_it() -> None:
    matcher = ShapeMatcher([("message", {"a": "$str"})])
    decoder = sw.SseDecoder(max_line_bytes=64)
    with pytest.raises(sw.FramingError) as info:
        decoder.feed_matched(b'data: {"a": "x"}\n\ndata: ' + b"y" * 100 + b"\n\n", matcher)
    assert info.value.partial == [(0, "x", 0)]
    assert decoder.matched_event(0).data == '{"a": "x"}'


def test_a_large_matched_event_comes_back_whole() -> None:
    matcher = ShapeMatcher([("message", {"a": "$str"})])
    text = "é" * 50_000
    decoder = sw.SseDecoder()
    (item,) = decoder.feed_matched(b"data: " + json.dumps({"a": text}).encode() + b"\n\n", matcher)
    assert item[1] == text
    assert json.loads(decoder.matched_event(item[-1]).data) == {"a": text}


# --- building the captured strs ----------------------------------------------------------

#: Characters at the edges of CPython's str storage widths (1, 2, 4 bytes per
#: character) and of UTF-8's sequence lengths.
_EDGES = [
    "\x00",
    "\x7f",
    "\x80",
    "\xff",
    "\u0100",
    "\u07ff",
    "\u0800",
    "\uffff",
    "\U00010000",
    "\U0010ffff",
]


@pytest.mark.parametrize("widest", _EDGES)
@pytest.mark.parametrize("prefix", ["", "a", "é", "数", "🙂"])
def test_captured_strs_are_what_python_builds(prefix: str, widest: str) -> None:
    """Equal, same hash, same size: CPython compares the storage widths of two
    strs before their characters, so a str stored wider than its widest
    character needs would compare unequal to the same text built by Python.
    (Sizes are compared past one character: Python's one-character strs are
    shared objects that may carry a cached UTF-8 copy.)"""
    matcher = ShapeMatcher([("message", {"a": "$str"})])
    for text in (prefix + widest, widest + prefix, (prefix + widest) * 9 + "z"):
        expected = json.loads(json.dumps(text))
        for payload in (json.dumps({"a": text}, ensure_ascii=False), json.dumps({"a": text})):
            got = matcher.match(payload)
            assert got is not None
            assert got[1] == expected and hash(got[1]) == hash(expected)
            if len(text) > 1:
                assert sys.getsizeof(got[1]) == sys.getsizeof(expected)


@pytest.mark.parametrize("widest", _EDGES)
def test_long_captured_strs_with_ascii_runs_are_what_python_builds(widest: str) -> None:
    """ASCII runs are widened sixteen bytes at a time (tests/test_str_build.py):
    runs of every length around a block, with wide characters between them."""
    matcher = ShapeMatcher([("message", {"a": "$str"})])
    for run in range(20):
        for tail in (0, 1, 7, 8, 9, 70):
            text = "x" * 70 + widest + "a" * run + widest + "b" * tail + "数🙂" * (run % 3)
            got = matcher.match(json.dumps({"a": text}, ensure_ascii=False))
            fresh = json.loads(json.dumps(text))
            assert got is not None and got[1] == fresh
            assert sys.getsizeof(got[1]) == sys.getsizeof(fresh)


@given(st.text(), st.booleans())
def test_any_captured_str_is_what_python_builds(text: str, long: bool) -> None:
    if long:  # past several sixteen-byte blocks of ASCII
        text = "ascii prefix of some length " * 3 + text
    got = ShapeMatcher([("message", {"a": "$str"})]).match(
        json.dumps({"a": text}, ensure_ascii=False)
    )
    if got is None:  # lone surrogates have no UTF-8 form
        assert any("\ud800" <= c <= "\udfff" for c in text)
        return
    # A fresh copy: hypothesis may hand over a str some C API gave a cached
    # UTF-8 copy, which sys.getsizeof counts.
    fresh = json.loads(json.dumps(text))
    assert got[1] == text
    if len(text) > 1:
        assert sys.getsizeof(got[1]) == sys.getsizeof(fresh)


# --- runs -------------------------------------------------------------------------------

_RUN_WIRE = (
    b'event: delta\ndata: {"i": 0, "t": "a"}\n\n'
    b'event: delta\ndata: {"i": 0, "t": "b"}\n\n'
    b'event: delta\ndata: {"i": 1, "t": "c"}\n\n'
    b'event: other\ndata: {"i": 1, "t": "d"}\n\n'
    b'event: delta\ndata: {"i": 1, "t": "e"}\n\n'
    b"event: ping\ndata: {}\n\n"
    b'event: delta\ndata: {"i": 1, "t": "f"}\n\n'
    b'event: delta\ndata: {"i": 1, "t": "g"}\n\n'
)
_RUN_TEMPLATES = [
    ("delta", {"i": "$int", "t": "$str"}),
    ("other", {"i": "$int", "t": "$str"}),
]


def test_runs_merge_matches_that_differ_only_in_the_last_capture() -> None:
    matcher = ShapeMatcher(_RUN_TEMPLATES, runs=True)
    assert matcher.runs and not ShapeMatcher(_RUN_TEMPLATES).runs
    decoder = sw.SseDecoder()
    got = decoder.feed_matched(_RUN_WIRE, matcher)
    assert got[:3] == [(0, 0, ["a", "b"], 0), (0, 1, ["c"], 2), (1, 1, ["d"], 3)]
    assert got[3] == (0, 1, ["e"], 4)
    assert isinstance(got[4], sw.SseEvent) and got[4].event == "ping"
    assert got[5] == (0, 1, ["f", "g"], 5)
    # Tickets count matches: a run's are first .. first + len - 1.
    assert decoder.matched_event(6).data == '{"i": 1, "t": "g"}'


def test_runs_need_a_capture_to_vary() -> None:
    with pytest.raises(ValueError, match="captures nothing"):
        ShapeMatcher([("message", {"a": "$str"}), ("ping", {})], runs=True)


def _flatten(items: list[Any]) -> list[Any]:
    """Runs as the single-match tuples they merge (tickets included)."""
    flat: list[Any] = []
    for item in items:
        if isinstance(item, tuple):
            *head, values, first = item
            flat += [(*head, v, first + k) for k, v in enumerate(values)]
        else:
            flat.append(item)
    return flat


@given(st.lists(st.integers(0, len(_RUN_WIRE)), max_size=6))
def test_runs_are_the_single_matches_merged_under_any_chunking(cuts: list[int]) -> None:
    cuts = sorted(cuts)
    pieces = [_RUN_WIRE[a:b] for a, b in zip([0, *cuts], [*cuts, len(_RUN_WIRE)], strict=True)]
    single, merged = sw.SseDecoder(), sw.SseDecoder()
    plain_matcher, run_matcher = (
        ShapeMatcher(_RUN_TEMPLATES),
        ShapeMatcher(_RUN_TEMPLATES, runs=True),
    )
    for piece in pieces:
        expected = single.feed_matched(piece, plain_matcher)
        got = merged.feed_matched(piece, run_matcher)
        assert _flatten(got) == expected
        assert all(len(x[-2]) for x in got if isinstance(x, tuple))
        for item in expected:
            if isinstance(item, tuple):
                assert merged.matched_event(item[-1]) == single.matched_event(item[-1])


# --- soundness against json.loads -------------------------------------------------------

_KEYS = st.sampled_from(["a", "b", "type", "text", "dé", 'k"q', "", "a?"])
_SCALARS = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-(2**70), 2**70),
    st.floats(allow_nan=False, allow_infinity=False),
    st.text(max_size=6),
)
_VALUES = st.recursive(
    _SCALARS,
    lambda inner: st.one_of(
        st.lists(inner, max_size=3), st.lists(st.tuples(_KEYS, inner), max_size=3).map(Pairs)
    ),
    max_leaves=8,
)
_LEAF_SHAPES = st.sampled_from(
    ["$any", "$falsy", "$str", "$int", "$raw", None, True, False, 0, 1, -1, "x", "", "$$x", "dé"]
)


@st.composite
def _object_shapes(draw: st.DrawFn, inner: st.SearchStrategy[Any]) -> dict[str, Any]:
    names = draw(
        st.lists(
            st.sampled_from(["a", "b", "type", "text", "dé", 'k"q', ""]), unique=True, max_size=3
        )
    )
    return {name + ("?" if draw(st.booleans()) else ""): draw(inner) for name in names}


_SHAPES = st.recursive(
    _LEAF_SHAPES,
    lambda inner: st.one_of(st.lists(inner, max_size=3), _object_shapes(inner)),
    max_leaves=8,
)


@st.composite
def _value_for(draw: st.DrawFn, shape: Any, wide_ints: bool) -> Any:
    """A value that mostly fits ``shape``, sometimes not."""
    if draw(st.integers(0, 9)) == 0:
        return draw(_VALUES)
    if isinstance(shape, dict):
        pairs = Pairs()
        for raw_key, sub in shape.items():
            key = raw_key[:-1] if raw_key.endswith("?") else raw_key
            if not raw_key.endswith("?") or draw(st.booleans()):
                pairs.append((key, draw(_value_for(sub, wide_ints))))
        if pairs and draw(st.integers(0, 5)) == 0:
            pairs.append(draw(st.sampled_from(pairs)))  # a repeated key
        if draw(st.integers(0, 5)) == 0:
            pairs.append((draw(_KEYS), draw(_VALUES)))
        order = draw(st.permutations(range(len(pairs))))
        return Pairs(pairs[i] for i in order)
    if isinstance(shape, list):
        return [draw(_value_for(sub, wide_ints)) for sub in shape]
    if shape == "$str":
        return draw(st.text(max_size=8))
    if shape == "$int":
        bound = 2**70 if wide_ints else 2**63
        return draw(st.integers(-bound, bound - 1))
    if shape in ("$any", "$raw"):
        return draw(_VALUES)
    if shape == "$falsy":
        return draw(st.sampled_from([None, False, 0, 0.0, "", [], Pairs(), 1, "x", [0]]))
    if isinstance(shape, str) and shape.startswith("$$"):
        return shape[1:]
    return shape


def _check_sound(matcher: ShapeMatcher, shapes: list[Any], text: str | bytes) -> Any:
    """A match must be one of json.loads's own, with its captures."""
    got = matcher.match(text)
    if got is None:
        return None
    value = loads_pairs(text)  # raises if json.loads rejects what the matcher took
    assert same(json.loads(text), _json.loads(text if isinstance(text, str) else text.decode()))
    template, *captures = got
    expected = reference_match(shapes[template], value)
    assert expected is not None, f"matched template {template} that json.loads's value does not fit"
    kinds = capture_kinds(shapes[template])
    assert len(captures) == len(kinds)
    for kind, want, capture in zip(kinds, expected, captures, strict=True):
        if kind == "$raw" and capture is not None:
            capture = loads_pairs(capture)  # the value's JSON text
        assert same(capture, want), (kind, capture, want)
    return got


@given(st.lists(_SHAPES, min_size=1, max_size=3), st.data())
def test_liberally_encoded_payloads_never_match_wrongly(
    shapes: list[Any], data: st.DataObject
) -> None:
    matcher = ShapeMatcher([("message", s) for s in shapes])
    value = data.draw(_value_for(data.draw(st.sampled_from(shapes)), wide_ints=True))
    text = encode(data.draw, value)
    _check_sound(matcher, shapes, text)
    _check_sound(matcher, shapes, text.encode())


@given(st.lists(_SHAPES, min_size=1, max_size=3), st.data())
def test_corrupted_payloads_never_match_wrongly(shapes: list[Any], data: st.DataObject) -> None:
    matcher = ShapeMatcher([("message", s) for s in shapes])
    value = data.draw(_value_for(data.draw(st.sampled_from(shapes)), wide_ints=True))
    text = encode(data.draw, value)
    at = data.draw(st.integers(0, len(text)))
    junk = data.draw(
        st.sampled_from(["", "", ",", "}", "]", '"', "\\", "0", "-", "\x01", "{", " e"])
    )
    corrupted = text[:at] + junk + text[at + data.draw(st.integers(0, 2)) :]
    try:
        _check_sound(matcher, shapes, corrupted)
    except json.JSONDecodeError:
        pytest.fail(f"matched what json.loads rejects: {corrupted!r}")


@given(st.lists(_SHAPES, min_size=1, max_size=3), st.data())
def test_plain_payloads_match_as_the_reference_says(shapes: list[Any], data: st.DataObject) -> None:
    """Completeness for what servers send (``json.dumps``, no escaped keys):
    the first template the reference matches is the one the matcher matches."""
    matcher = ShapeMatcher([("message", s) for s in shapes])
    value = data.draw(_value_for(data.draw(st.sampled_from(shapes)), wide_ints=False))
    separators = data.draw(st.sampled_from([(",", ":"), (", ", ": ")]))
    text = json.dumps(_plain(value), ensure_ascii=False, separators=separators)
    parsed = loads_pairs(text)
    expected = next(
        ((i, r) for i, s in enumerate(shapes) if (r := reference_match(s, parsed)) is not None),
        None,
    )
    got = _check_sound(matcher, shapes, text)
    if expected is None:
        assert got is None
    else:
        assert got is not None and got[0] == expected[0], (text, got, expected)


def _plain(value: Any) -> Any:
    # json.dumps takes dicts: a repeated key stays repeated through a pairs-preserving dict.
    if isinstance(value, Pairs):
        return _PairsDict([(k, _plain(v)) for k, v in value])
    if isinstance(value, list):
        return [_plain(v) for v in value]
    return value


class _PairsDict(dict[str, Any]):
    """A dict that json.dumps writes with its pairs, repeats included."""

    def __init__(self, pairs: list[tuple[str, Any]]) -> None:
        super().__init__(pairs)
        self._pairs = pairs

    def items(self) -> Any:  # json's pure-Python encoder iterates items()
        return iter(self._pairs)

    def __bool__(self) -> bool:
        return bool(self._pairs)


# --- the chat adapter's shapes --------------------------------------------------------


def test_the_chat_shapes_are_the_specs_compiled() -> None:
    assert len(SHAPES) == len(SHAPE_SPECS)
    for i, (event, shape) in enumerate(SHAPE_SPECS):
        assert event == "message"
        assert SHAPES.captures(i) == capture_count(shape)
