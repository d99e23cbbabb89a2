"""The SSE framing API around the parsing itself.

Covers the size caps (``max_line_bytes``, ``max_event_bytes``) and the
``FramingError`` they raise (kind, offset, ``.partial``, the decoder staying
failed), the counters, bounded memory on a long stream, ``SseEvent`` values,
``Utf8Decoder`` (replacement and strict mode) and ``encode_sse`` round trips.
"""

from __future__ import annotations

import random
import re

import pytest
from hypothesis import given
from hypothesis import strategies as st

import streamwire as sw
from chunking import chunkings, split_at
from sse_reference import interpret
from sse_strategies import chunked_streams
from streamwire.errors import UsageError

BOM = "\ufeff".encode()


def _decode_until_error(
    chunks: list[bytes], **caps: int
) -> tuple[list[sw.SseEvent], sw.FramingError | None]:
    """Feeds chunks; returns every event obtained (incl. ``.partial``) and the error."""
    decoder = sw.SseDecoder(**caps)
    events: list[sw.SseEvent] = []
    for chunk in chunks:
        try:
            events += decoder.feed(chunk)
        except sw.FramingError as err:
            events += err.partial  # type: ignore[arg-type]
            return events, err
    events += decoder.finish()
    return events, None


# --- caps ------------------------------------------------------------------


def test_line_too_large_under_every_chunking() -> None:
    ok = b"data: ok\n\n: keepalive\n"
    raw = ok + b"data: " + b"x" * 40 + b"\n\n" + b"data: never\n\n"
    for label, chunks in chunkings(raw):
        events, err = _decode_until_error(chunks, max_line_bytes=32)
        assert err is not None, label
        assert err.kind == "line_too_large", label
        assert err.offset == len(ok), label  # where the offending line starts
        # Nothing valid is lost: what earlier feeds returned plus .partial.
        assert [e.data for e in events] == ["ok"], label


def test_unterminated_long_line_fails_before_its_end() -> None:
    # A line that never ends must not be buffered without bound.
    decoder = sw.SseDecoder(max_line_bytes=1000)
    decoder.feed(b"data: ")
    with pytest.raises(sw.FramingError) as info:
        for _ in range(200):
            decoder.feed(b"x" * 100)
    assert info.value.kind == "line_too_large"
    assert info.value.offset == 0
    assert decoder.buffered_bytes <= 1000
    assert decoder.peak_buffered_bytes <= 1000


@pytest.mark.parametrize("eol", [b"\n", b"\r", b"\r\n"])
def test_line_cap_boundary_excludes_terminator(eol: bytes) -> None:
    cap = 64
    exact = b"data: " + b"y" * (cap - 6)
    for label, chunks in chunkings(exact + eol + eol, random_rounds=4):
        events, err = _decode_until_error(chunks, max_line_bytes=cap)
        assert err is None, label
        assert [e.data for e in events] == ["y" * (cap - 6)], label
    for label, chunks in chunkings(exact + b"y" + eol + eol, random_rounds=4):
        events, err = _decode_until_error(chunks, max_line_bytes=cap)
        assert err is not None and err.kind == "line_too_large", label
        assert err.offset == 0, label
        assert events == [], label


def test_line_cap_offsets_count_the_bom() -> None:
    # Offsets are stream offsets: a stripped BOM still occupies bytes 0..3.
    raw = BOM + b"data: a\r\n\r\n" + b"event: " + b"e" * 100 + b"\n"
    for label, chunks in chunkings(raw):
        events, err = _decode_until_error(chunks, max_line_bytes=50)
        assert err is not None and err.kind == "line_too_large", label
        assert err.offset == len(BOM) + len(b"data: a\r\n\r\n"), label
        assert [e.data for e in events] == ["a"], label


def test_event_too_large_under_every_chunking() -> None:
    head = b"data: first\n\n"
    line = b"data: " + b"z" * 10 + b"\n"  # adds 11 bytes ("z" * 10 + LF) to the data buffer
    raw = head + line * 3 + b"\n" + b"data: never\n\n"
    for label, chunks in chunkings(raw):
        events, err = _decode_until_error(chunks, max_event_bytes=32)
        assert err is not None, label
        assert err.kind == "event_too_large", label
        # The third data line is the one that overflows: 3 * 11 = 33 > 32.
        assert err.offset == len(head) + 2 * len(line), label
        assert [e.data for e in events] == ["first"], label


def test_event_cap_boundary_counts_data_buffer_and_event_type() -> None:
    # The data buffer holds each value plus its LF; the event type counts too.
    cap = 40
    fits = b"event: " + b"t" * 10 + b"\ndata: " + b"d" * (cap - 10 - 1) + b"\n\n"
    events, err = _decode_until_error([fits], max_event_bytes=cap)
    assert err is None
    assert [(e.event, len(e.data)) for e in events] == [("t" * 10, cap - 11)]
    over = b"event: " + b"t" * 10 + b"\ndata: " + b"d" * (cap - 10) + b"\n\n"
    for label, chunks in chunkings(over, random_rounds=4):
        events, err = _decode_until_error(chunks, max_event_bytes=cap)
        assert err is not None and err.kind == "event_too_large", label
        assert err.offset == len(b"event: ") + 10 + 1, label
        assert events == [], label


def test_event_cap_is_per_event_not_per_stream() -> None:
    raw = b"data: " + b"q" * 20 + b"\n\n"
    decoder = sw.SseDecoder(max_event_bytes=32, max_line_bytes=32)
    for _ in range(1000):
        assert len(decoder.feed(raw)) == 1
    assert decoder.events_dispatched == 1000


def test_framing_error_types_and_failed_state() -> None:
    decoder = sw.SseDecoder(max_line_bytes=8)
    with pytest.raises(sw.FramingError) as info:
        decoder.feed(b"data: a\n\ndata: too long\n\n")
    err = info.value
    assert err.kind == "line_too_large"
    assert err.offset == 9
    assert err.partial == [sw.SseEvent(data="a")]
    assert isinstance(err, ValueError)
    assert isinstance(err, sw.StreamwireError)
    # The decoder stays failed: valid input afterwards raises the same error.
    for retry in (lambda: decoder.feed(b"data: b\n\n"), decoder.finish):
        with pytest.raises(sw.FramingError) as again:
            retry()
        assert (again.value.kind, again.value.offset) == ("line_too_large", 9)
        assert again.value.partial == []


def test_feed_after_finish_is_a_usage_error() -> None:
    decoder = sw.SseDecoder()
    assert decoder.feed(b"data: a\n\ndata: b") == [sw.SseEvent(data="a")]
    assert decoder.finish() == []
    with pytest.raises(UsageError):
        decoder.feed(b"\n\n")


def _first_cap_violation(raw: bytes, max_line: int, max_event: int) -> tuple[str, int] | None:
    """Where the documented caps stop a stream: ``(kind, offset)`` or None.

    A line is measured in raw bytes without its terminator (and without the
    stream's leading BOM); an unterminated last line counts too, since holding
    it is what the cap bounds. An event is measured as the decoder documents:
    its data buffer (each value, decoded, plus LF) plus its event type buffer.
    """
    start = len(BOM) if raw.startswith(BOM) else 0
    data_len = event_len = 0
    ends = [(m.start(), m.end()) for m in re.finditer(rb"\r\n|\n|\r", raw[start:])]
    bounds = [(start + a, start + b) for a, b in ends]
    line_starts = [start] + [b for _, b in bounds]
    for i, offset in enumerate(line_starts):
        terminated = i < len(bounds)
        line = raw[offset : bounds[i][0] if terminated else len(raw)]
        if len(line) > max_line:
            return "line_too_large", offset
        if not terminated:
            return None
        if line == b"":
            data_len = event_len = 0
            continue
        name, colon, value = line.partition(b":")
        if colon and value.startswith(b" "):
            value = value[1:]
        size = len(value.decode("utf-8", "replace").encode())
        if name == b"data":
            data_len += size + 1
        elif name == b"event":
            event_len = size
        else:
            continue
        if data_len + event_len > max_event:
            return "event_too_large", offset
    return None


@given(
    chunked_streams(),
    # From 3: below that, a partial BOM held at stream start (at most 2 bytes,
    # not yet known to be content) is not counted as a line; nothing to test.
    st.integers(min_value=3, max_value=40),
    st.integers(min_value=0, max_value=60),
)
def test_caps_match_a_model_under_any_chunking(
    case: tuple[bytes, list[bytes]], max_line: int, max_event: int
) -> None:
    raw, chunks = case
    events, err = _decode_until_error(chunks, max_line_bytes=max_line, max_event_bytes=max_event)
    violation = _first_cap_violation(raw, max_line, max_event)
    if violation is None:
        assert err is None
        assert events == [
            sw.SseEvent(data=e.data, event=e.event, id=e.id, retry=e.retry)
            for e in interpret(raw).events
        ]
        return
    assert err is not None
    assert (err.kind, err.offset) == violation
    # Every event completed before the offending line is delivered, no more.
    assert events == [
        sw.SseEvent(data=e.data, event=e.event, id=e.id, retry=e.retry)
        for e in interpret(raw[: violation[1]]).events
    ]


# --- counters and memory ---------------------------------------------------


def test_counters_under_every_chunking() -> None:
    raw = b": hello\r\n:\n" + b"data: abc\nid: 1\n\n" + b":k\r"
    raw += b"event: e\ndata: d\n\n" + b":tail"
    for label, chunks in chunkings(raw):
        decoder = sw.SseDecoder()
        events = [e for chunk in chunks for e in decoder.feed(chunk)]
        assert decoder.bytes_fed == len(raw), label
        assert decoder.events_dispatched == len(events) == 2, label
        # ":tail" has no line ending yet: not a comment seen (yet).
        assert decoder.comments_seen == 3, label
        assert decoder.buffered_bytes == len(b":tail"), label
        assert decoder.finish() == []
        assert decoder.buffered_bytes == 0, label


def test_buffered_bytes_tracks_line_and_event_buffers() -> None:
    decoder = sw.SseDecoder()
    assert (decoder.buffered_bytes, decoder.peak_buffered_bytes) == (0, 0)
    decoder.feed(b"data: abc")
    assert decoder.buffered_bytes == len(b"data: abc")  # the incomplete line
    decoder.feed(b"\n")
    assert decoder.buffered_bytes == len("abc\n")  # the spec's data buffer
    decoder.feed(b"event: ev\n")
    assert decoder.buffered_bytes == len("abc\n") + len("ev")
    assert decoder.feed(b"\n") == [sw.SseEvent(data="abc", event="ev")]
    assert decoder.buffered_bytes == 0
    assert decoder.peak_buffered_bytes == len(b"data: abc")


def _long_stream(events: int) -> tuple[bytes, int]:
    parts = []
    for i in range(events):
        text = "tok" * (i % 50) + "é😀" * (i % 7)
        parts.append(f'id: {i}\ndata: {{"i":{i},"t":"{text}"}}\n\n'.encode())
        if i % 100 == 0:
            parts.append(b": keep-alive\n\n")
    return b"".join(parts), max(len(p) for p in parts)


@pytest.mark.parametrize("chunk_size", [1, 7, 4096, 65536, 1 << 30])
def test_peak_buffer_is_bounded_by_the_largest_event(chunk_size: int) -> None:
    n = 2000 if chunk_size < 100 else 20000
    raw, largest = _long_stream(n)
    decoder = sw.SseDecoder()
    count = 0
    for start in range(0, len(raw), chunk_size):
        count += len(decoder.feed(raw[start : start + chunk_size]))
    assert count == n
    # O(largest event), not O(stream) nor O(chunk): a partial line plus one event.
    assert decoder.peak_buffered_bytes <= 2 * largest, (decoder.peak_buffered_bytes, largest)
    assert decoder.buffered_bytes == 0


# --- values ----------------------------------------------------------------


def test_sse_event_value_semantics() -> None:
    decoded = sw.SseDecoder().feed(b"event: t\nid: 9\nretry: 5\ndata: x\n\n")
    assert decoded == [sw.SseEvent(data="x", event="t", id="9", retry=5)]
    ev = decoded[0]
    assert (ev.event, ev.data, ev.id, ev.retry) == ("t", "x", "9", 5)
    assert hash(ev) == hash(sw.SseEvent(data="x", event="t", id="9", retry=5))
    default = sw.SseEvent()
    assert (default.event, default.data, default.id, default.retry) == ("message", "", None, None)
    assert sw.SseEvent(id="") != sw.SseEvent(id=None)
    assert sw.SseEvent(retry=0) != sw.SseEvent()
    assert sw.SseEvent(data="x") != "x"
    assert "x" in repr(sw.SseEvent(data="x"))
    long_repr = repr(sw.SseEvent(data="z" * 10_000))
    assert len(long_repr) < 300  # reprs truncate long data


def test_retry_beyond_u64_is_ignored() -> None:
    # Documented choice of the core: a retry too big for u64 milliseconds is
    # ignored like a non-numeric one (the spec has unbounded integers).
    decoder = sw.SseDecoder()
    decoder.feed(b"retry: 18446744073709551615\nretry: 18446744073709551616\ndata\n\n")
    assert decoder.retry == 2**64 - 1


# --- Utf8Decoder -----------------------------------------------------------

TRICKY_UTF8 = [
    b"",
    b"plain ascii",
    "é€😀𝄞 汉字".encode(),
    b"a\xe2\x82",  # truncated 3-byte sequence at the end
    b"\xf0\x9f\x98",  # truncated 4-byte sequence alone
    b"x\xf0\x9f\x98y",  # truncated then ASCII
    b"\xc0\x8a\xc1\xbf",  # overlong 2-byte forms
    b"\xe0\x80\xaf\xe0\x9f\xbf",  # overlong 3-byte forms
    b"\xf0\x8f\xbf\xbf",  # overlong 4-byte form
    b"\xed\xa0\x80\xed\xbf\xbf",  # UTF-8-encoded surrogates
    b"\xf4\x90\x80\x80",  # above U+10FFFF
    b"\xf5\xf8\xfc\xfe\xff",  # bytes that never start a sequence
    b"\x80\xbf\x80",  # stray continuation bytes
    b"\xe2\x28\xa1",  # a valid lead, an invalid second byte, then a stray one
    b"\xf0\x9f\x98\xf0\x9f\x98\x80",  # truncated 4-byte then a complete one
    b"\xef\xbb\xbfBOM\xef\xbb\xbf",  # BOMs are content here
    b"\xef\xbf\xbd\xef\xbf\xbe",  # literal U+FFFD and U+FFFE
    "🙂".encode() * 50 + b"\xe2",
]


@pytest.mark.parametrize("raw", TRICKY_UTF8, ids=repr)
def test_utf8_replacement_matches_python(raw: bytes) -> None:
    expected = raw.decode("utf-8", "replace")
    for label, chunks in chunkings(raw):
        decoder = sw.Utf8Decoder()
        parts = []
        for chunk in chunks:
            parts.append(decoder.decode(chunk))
            assert 0 <= decoder.pending_bytes <= 3, label
        parts.append(decoder.finish())
        assert decoder.pending_bytes == 0, label
        assert "".join(parts) == expected, label


def test_utf8_holds_back_only_incomplete_sequences() -> None:
    decoder = sw.Utf8Decoder()
    assert decoder.decode(b"ab\xf0\x9f") == "ab"
    assert decoder.pending_bytes == 2
    assert decoder.decode(b"\x98") == ""
    assert decoder.decode(b"\x80!") == "😀!"
    assert decoder.pending_bytes == 0
    assert decoder.decode(b"\xf0\x28") == "\ufffd("  # invalid at once: not held
    assert decoder.finish() == ""


def _strict_offset(raw: bytes) -> int | None:
    try:
        raw.decode("utf-8")
    except UnicodeDecodeError as err:
        return err.start
    return None


@pytest.mark.parametrize("raw", TRICKY_UTF8, ids=repr)
def test_utf8_strict_raises_at_first_bad_byte(raw: bytes) -> None:
    offset = _strict_offset(raw)
    for label, chunks in chunkings(raw, random_rounds=4):
        decoder = sw.Utf8Decoder(strict=True)
        text = ""
        try:
            for chunk in chunks:
                text += decoder.decode(chunk)
            text += decoder.finish()
        except sw.FramingError as err:
            assert offset is not None, label
            assert isinstance(err, ValueError), label
            assert (err.kind, err.offset) == ("utf8", offset), label
            # Text returned before the failing call is a prefix of the valid part.
            assert raw[:offset].decode().startswith(text), label
            with pytest.raises(sw.FramingError) as again:
                decoder.decode(b"ok")
            assert (again.value.kind, again.value.offset) == ("utf8", offset), label
        else:
            assert offset is None, label
            assert text == raw.decode("utf-8"), label


# --- encode_sse ------------------------------------------------------------


def _normalize_eol(data: str) -> str:
    return data.replace("\r\n", "\n").replace("\r", "\n")


def _round_trip(
    data: str, event: str | None = None, id: str | None = None, retry: int | None = None
) -> None:
    wire = sw.encode_sse(data, event=event, id=id, retry=retry)
    assert isinstance(wire, bytes)
    assert wire.endswith(b"\n\n")
    expected = sw.SseEvent(data=_normalize_eol(data), event=event or "message", id=id, retry=retry)
    for label, chunks in [("whole", [wire]), ("bytewise", split_at(wire, range(1, len(wire))))]:
        decoder = sw.SseDecoder()
        events = [e for chunk in chunks for e in decoder.feed(chunk)]
        assert events == [expected], label
        assert decoder.last_event_id == id
        assert decoder.retry == retry


def test_encode_sse_canonical_form() -> None:
    assert sw.encode_sse("hello") == b"data: hello\n\n"
    assert sw.encode_sse("a\nb", event="e", id="1", retry=10).count(b"data:") == 2


@pytest.mark.parametrize(
    "data",
    [
        "",
        "x",
        "a\nb",
        "a\rb",
        "a\r\nb",
        "\n",
        "\r\n",
        "\r\r\n\n",
        "trailing\n",
        " one leading space",
        "  two leading spaces",
        "trailing space ",
        ": looks like a comment",
        "data: looks like a field",
        "é😀汉字\u2028\u0085",
        "\ufeffBOM first",
        "nul\x00inside",
    ],
    ids=repr,
)
def test_encode_sse_round_trips_data(data: str) -> None:
    _round_trip(data)


@pytest.mark.parametrize(
    ("event", "id", "retry"),
    [
        ("update", "42", 1500),
        ("", "", 0),
        (" spaced", " 7 ", None),
        ("ünïcödé", "id:with:colons", 2**63),
        (None, None, 3000),
        ("message", None, None),
    ],
)
def test_encode_sse_round_trips_fields(
    event: str | None, id: str | None, retry: int | None
) -> None:
    _round_trip("payload", event=event, id=id, retry=retry)


def test_encoded_events_concatenate_into_a_stream() -> None:
    wire = sw.encode_sse("a", id="1") + sw.encode_sse("b") + sw.encode_sse("c", id="")
    assert sw.SseDecoder().feed(wire) == [
        sw.SseEvent(data="a", id="1"),
        sw.SseEvent(data="b", id="1"),
        sw.SseEvent(data="c", id=""),
    ]


@pytest.mark.parametrize("bad", ["a\nb", "a\rb", "\r\n", "nul\x00"], ids=repr)
@pytest.mark.parametrize("field", ["event", "id"])
def test_encode_sse_rejects_line_breaks_and_nul(field: str, bad: str) -> None:
    with pytest.raises(ValueError):
        sw.encode_sse("x", **{field: bad})  # type: ignore[arg-type]


single_line = st.text(st.characters(exclude_categories=["Cs"], exclude_characters="\r\n\x00"))


@given(
    data=st.text(st.characters(exclude_categories=["Cs"])),
    event=st.none() | single_line,
    id=st.none() | single_line,
    retry=st.none() | st.integers(min_value=0, max_value=2**64 - 1),
)
def test_encode_sse_round_trip_property(
    data: str, event: str | None, id: str | None, retry: int | None
) -> None:
    _round_trip(data, event=event, id=id, retry=retry)


_PIECES = st.sampled_from(
    ["", "a", "x" * 15, "y" * 16, "z" * 17, "é", "ÿ", "数据", "🙂", "\u2028", '"{}']
)


@given(st.lists(_PIECES, max_size=40))
def test_data_of_every_width_is_the_text_sent(pieces: list[str]) -> None:
    # ASCII runs of every length around Latin-1, BMP and astral characters:
    # the str is built in blocks of sixteen bytes where they are ASCII.
    text = "".join(pieces)
    (event,) = sw.SseDecoder().feed(b"data: " + text.encode() + b"\n\n")
    assert event.data == text


def _mixed_sizes(seed: int) -> list[str]:
    """Data of every size class, from empty to larger than the lazy limit (64 KiB)."""
    rng = random.Random(seed)
    sizes = [rng.choice([0, 1, 90, 5_000, 15_000, 17_000, 70_000]) for _ in range(30)]
    return [("é数🙂" if i % 2 else "ab") * (size // 4) + str(i) for i, size in enumerate(sizes)]


@pytest.mark.parametrize("seed", range(4))
def test_data_of_every_size_read_in_any_order(seed: int) -> None:
    # Lazy data (built on first read) and large data (built at once), in one
    # feed and in many: each reads as its own text, in any order, after its
    # neighbours are gone, from a feed that failed part-way as well.
    texts = _mixed_sizes(seed)
    wire = b"".join(b"data: " + t.encode() + b"\n\n" for t in texts)
    for chunks in ([wire], split_at(wire, random.Random(seed).sample(range(1, len(wire)), 40))):
        decoder = sw.SseDecoder()
        events = [e for chunk in chunks for e in decoder.feed(chunk)]
        assert len(events) == len(texts)
        order = list(range(len(events)))
        random.Random(seed).shuffle(order)
        first, rest = order[: len(order) // 2], order[len(order) // 2 :]
        for i in first:
            assert events[i].data == texts[i]
        kept = {i: events[i] for i in rest[::2]}
        del events
        for i, event in kept.items():
            assert event.data == texts[i]
    failing = wire + b"data: " + b"y" * 200_001 + b"\n"
    with pytest.raises(sw.FramingError) as caught:
        sw.SseDecoder(max_event_bytes=200_000).feed(failing)
    assert [e.data for e in caught.value.partial] == texts  # type: ignore[attr-defined]
