"""The Python API of AWS EventStream: ``encode_eventstream``, ``HeaderValue``, the decoder's
options, counters and misuse, and ``EventStreamMessage``'s properties.

Frames that must be exact are built here by hand, from the wire format (all
integers big-endian: ``total_length``, ``headers_length``, ``prelude_crc`` = CRC-32
of bytes 0..8, headers, payload, ``message_crc`` = CRC-32 of everything before
it; CRC-32 as zlib computes it), never by the encoder under test.
"""

from __future__ import annotations

import datetime as dt
import random
import struct
import uuid
import zlib
from collections.abc import Iterator, Mapping
from types import MappingProxyType
from typing import Any

import numpy as np
import pytest

import streamwire as sw
from chunking import chunkings, feed_all


def stable_id(value: object) -> str:
    """A parameter's test id: its ``repr``, but the same in every process for
    the objects whose ``repr`` is an address (pytest-xdist's workers must
    collect the same ids)."""
    if isinstance(value, memoryview):
        return f"memoryview({value.tobytes()!r}, strides={value.strides})"
    if type(value) is object:
        return "object()"
    return repr(value)


UTC = dt.timezone.utc
EPOCH = dt.datetime(1970, 1, 1, tzinfo=UTC)
TYPE_IDS = {
    "boolean_true": 0,
    "boolean_false": 1,
    "byte": 2,
    "short": 3,
    "integer": 4,
    "long": 5,
    "byte_array": 6,
    "string": 7,
    "timestamp": 8,
    "uuid": 9,
}
A_UUID = uuid.UUID("0f8fad5b-d9cb-469f-a165-70867728950e")


def frame(header_block: bytes, payload: bytes = b"") -> bytes:
    """A frame around an already-encoded header block, with both CRCs right."""
    lengths = struct.pack(">II", 12 + len(header_block) + len(payload) + 4, len(header_block))
    body = lengths + struct.pack(">I", zlib.crc32(lengths)) + header_block + payload
    return body + struct.pack(">I", zlib.crc32(body))


def prelude(total_length: int, headers_length: int) -> bytes:
    """Twelve prelude bytes declaring these lengths, with a valid prelude CRC."""
    lengths = struct.pack(">II", total_length, headers_length)
    return lengths + struct.pack(">I", zlib.crc32(lengths))


def header(name: str, type_name: str, value_bytes: bytes = b"") -> bytes:
    encoded = name.encode()
    return bytes([len(encoded)]) + encoded + bytes([TYPE_IDS[type_name]]) + value_bytes


def decode_one(data: bytes, validation: str = "strict") -> sw.EventStreamMessage:
    decoder = sw.EventStreamDecoder(validation=validation)  # type: ignore[arg-type]
    messages = decoder.feed(data)
    decoder.finish()
    assert len(messages) == 1
    return messages[0]


def typed(value: object) -> tuple[str, object]:
    # Compare values with their type: True is not 1, a naive datetime is not an aware one.
    if isinstance(value, dt.datetime):
        return ("datetime", (value.replace(tzinfo=None), value.utcoffset()))
    return (type(value).__name__, value)


def round_trip(headers: Any, payload: bytes = b"") -> list[tuple[str, str, tuple[str, object]]]:
    message = decode_one(sw.encode_eventstream(headers, payload))
    assert message.payload == payload
    return [(name, kind, typed(value)) for name, kind, value in message.typed_headers]


# --- encode: the wire bytes ----------------------------------------------------------------


def test_encode_writes_the_exact_wire_format() -> None:
    headers = {
        ":event-type": "chunk",
        "n": 7,
        "flag": False,
        "blob": b"\x00\xff",
        "at": EPOCH + dt.timedelta(milliseconds=1_700_000_000_123),
        "id": A_UUID,
    }
    block = (
        header(":event-type", "string", b"\x00\x05chunk")
        + header("n", "integer", struct.pack(">i", 7))
        + header("flag", "boolean_false")
        + header("blob", "byte_array", b"\x00\x02\x00\xff")
        + header("at", "timestamp", struct.pack(">q", 1_700_000_000_123))
        + header("id", "uuid", A_UUID.bytes)
    )
    assert sw.encode_eventstream(headers, b'{"a":1}') == frame(block, b'{"a":1}')


def test_encode_empty_message_is_sixteen_bytes() -> None:
    expected = frame(b"")
    assert len(expected) == 16
    assert sw.encode_eventstream({}) == expected
    assert sw.encode_eventstream([], b"") == expected
    assert sw.encode_eventstream({}, None) == expected


# --- encode: default types of plain values ------------------------------------------------

DEFAULTS = [
    (True, "boolean_true", True),
    (False, "boolean_false", False),
    (0, "integer", 0),
    (-1, "integer", -1),
    (2**31 - 1, "integer", 2**31 - 1),
    (-(2**31), "integer", -(2**31)),
    (2**31, "long", 2**31),
    (-(2**31) - 1, "long", -(2**31) - 1),
    (2**63 - 1, "long", 2**63 - 1),
    (-(2**63), "long", -(2**63)),
    (b"", "byte_array", b""),
    (b"\x00bytes\xff", "byte_array", b"\x00bytes\xff"),
    (bytearray(b"ba"), "byte_array", b"ba"),
    ("", "string", ""),
    ("héllo ☃ 😀", "string", "héllo ☃ 😀"),
    (EPOCH, "timestamp", EPOCH),
    (
        dt.datetime(2024, 5, 31, 14, 8, 37, 123000, tzinfo=UTC),
        "timestamp",
        dt.datetime(2024, 5, 31, 14, 8, 37, 123000, tzinfo=UTC),
    ),
    # Another zone: the same instant, decoded in UTC.
    (
        dt.datetime(2024, 1, 1, 5, 30, tzinfo=dt.timezone(dt.timedelta(hours=5, minutes=30))),
        "timestamp",
        dt.datetime(2024, 1, 1, 0, 0, tzinfo=UTC),
    ),
    (dt.datetime(1969, 7, 20, 20, 17, 40, tzinfo=UTC), "timestamp", None),
    (A_UUID, "uuid", A_UUID),
]


@pytest.mark.parametrize(("plain", "type_name", "decoded"), DEFAULTS, ids=stable_id)
def test_plain_values_take_the_documented_default_type(
    plain: object, type_name: str, decoded: object
) -> None:
    expect = plain if decoded is None else decoded
    assert round_trip({"h": plain}) == [("h", type_name, typed(expect))]


def test_int_subclasses_are_ints_but_bool_is_boolean() -> None:
    class Small(int):
        pass

    assert round_trip({"a": Small(5), "b": True}) == [
        ("a", "integer", typed(5)),
        ("b", "boolean_true", typed(True)),
    ]


@pytest.mark.parametrize("value", [2**63, -(2**63) - 1], ids=stable_id)
def test_plain_int_beyond_64_bits_is_out_of_range(value: int) -> None:
    with pytest.raises((OverflowError, ValueError)):
        sw.encode_eventstream({"n": value})


@pytest.mark.parametrize(
    "value", [1.5, None, [1], {"a": 1}, object(), memoryview(b"x")], ids=stable_id
)
def test_plain_values_without_a_default_type_are_refused(value: object) -> None:
    with pytest.raises(TypeError, match="HeaderValue"):
        sw.encode_eventstream({"h": value})


def test_naive_datetime_is_refused() -> None:
    naive = dt.datetime(2024, 1, 1)
    with pytest.raises(ValueError, match="timezone-aware"):
        sw.encode_eventstream({"t": naive})
    with pytest.raises(ValueError, match="timezone-aware"):
        sw.HeaderValue("timestamp", naive)


# --- encode: explicit HeaderValue for every type -------------------------------------------

EXPLICIT = [
    ("boolean_true", None, True),
    ("boolean_false", None, False),
    ("byte", -128, -128),
    ("byte", 127, 127),
    ("short", -32768, -32768),
    ("short", 32767, 32767),
    ("integer", -(2**31), -(2**31)),
    ("integer", 2**31 - 1, 2**31 - 1),
    ("long", 0, 0),
    ("long", -(2**63), -(2**63)),
    ("long", 2**63 - 1, 2**63 - 1),
    ("byte_array", b"", b""),
    ("byte_array", bytes(range(256)) * 255 + b"x" * 255, bytes(range(256)) * 255 + b"x" * 255),
    ("byte_array", bytearray(b"ab"), b"ab"),
    ("byte_array", memoryview(b"mv"), b"mv"),
    ("string", "", ""),
    ("string", "é" * 32767 + "x", "é" * 32767 + "x"),
    ("string", "\x00nul", "\x00nul"),
    ("timestamp", 0, EPOCH),
    ("timestamp", -1, EPOCH - dt.timedelta(milliseconds=1)),
    ("timestamp", 1_717_171_717_123, EPOCH + dt.timedelta(milliseconds=1_717_171_717_123)),
    ("timestamp", dt.datetime(9999, 12, 31, 23, 59, 59, 999000, tzinfo=UTC), None),
    ("timestamp", dt.datetime(1, 1, 1, tzinfo=UTC), None),
    ("uuid", A_UUID, A_UUID),
    ("uuid", A_UUID.bytes, A_UUID),
    ("uuid", uuid.UUID(int=0), uuid.UUID(int=0)),
]


@pytest.mark.parametrize(
    ("type_name", "value", "decoded"),
    EXPLICIT,
    ids=lambda v: stable_id(v)[:40] if v else stable_id(v),
)
def test_explicit_header_value_round_trips(type_name: str, value: object, decoded: object) -> None:
    hv = sw.HeaderValue(type_name, value)  # type: ignore[arg-type]
    assert hv.type == type_name
    if value is not None:
        assert hv.value is value
    expect = value if decoded is None else decoded
    assert round_trip([("h", hv)]) == [("h", type_name, typed(expect))]


def test_every_type_is_covered_explicitly() -> None:
    assert {t for t, _, _ in EXPLICIT} == set(TYPE_IDS)


def test_explicit_types_write_their_wire_ids() -> None:
    headers = [
        ("t", sw.HeaderValue("boolean_true")),
        ("f", sw.HeaderValue("boolean_false")),
        ("b", sw.HeaderValue("byte", -2)),
        ("s", sw.HeaderValue("short", -2)),
        ("i", sw.HeaderValue("integer", -2)),
        ("l", sw.HeaderValue("long", -2)),
        ("y", sw.HeaderValue("byte_array", b"yz")),
        ("z", sw.HeaderValue("string", "yz")),
        ("m", sw.HeaderValue("timestamp", -2)),
        ("u", sw.HeaderValue("uuid", A_UUID)),
    ]
    block = (
        header("t", "boolean_true")
        + header("f", "boolean_false")
        + header("b", "byte", b"\xfe")
        + header("s", "short", b"\xff\xfe")
        + header("i", "integer", b"\xff\xff\xff\xfe")
        + header("l", "long", b"\xff" * 7 + b"\xfe")
        + header("y", "byte_array", b"\x00\x02yz")
        + header("z", "string", b"\x00\x02yz")
        + header("m", "timestamp", b"\xff" * 7 + b"\xfe")
        + header("u", "uuid", A_UUID.bytes)
    )
    assert sw.encode_eventstream(headers) == frame(block)


def test_boolean_header_values_ignore_the_given_value() -> None:
    # The type carries the value: `boolean_true` is true whatever is passed.
    assert sw.HeaderValue("boolean_true").value is True
    assert sw.HeaderValue("boolean_false", True).value is False
    assert round_trip({"x": sw.HeaderValue("boolean_true", 0)}) == [
        ("x", "boolean_true", typed(True))
    ]


@pytest.mark.parametrize(
    ("type_name", "value"),
    [
        ("byte", 128),
        ("byte", -129),
        ("short", 2**15),
        ("short", -(2**15) - 1),
        ("integer", 2**31),
        ("integer", -(2**31) - 1),
        ("long", 2**63),
        ("long", -(2**63) - 1),
    ],
    ids=stable_id,
)
def test_out_of_range_values_are_refused(type_name: str, value: int) -> None:
    with pytest.raises((OverflowError, ValueError)):
        sw.HeaderValue(type_name, value)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("type_name", "value"),
    [
        ("byte", None),
        ("string", None),
        ("short", 1.5),
        ("long", "1"),
        ("string", b"bytes"),
        ("byte_array", "text"),
        ("uuid", b"\x00" * 15),
        ("uuid", b"\x00" * 17),
        ("uuid", str(A_UUID)),
    ],
    ids=stable_id,
)
def test_values_of_the_wrong_kind_are_refused(type_name: str, value: object) -> None:
    with pytest.raises((TypeError, ValueError)):
        sw.HeaderValue(type_name, value)  # type: ignore[arg-type]


@pytest.mark.parametrize("value", [1.5, "2024-01-01", True, 2**63, -(2**63) - 1], ids=stable_id)
def test_timestamp_takes_an_aware_datetime_or_int_ms(value: object) -> None:
    with pytest.raises((TypeError, ValueError, OverflowError)):
        sw.HeaderValue("timestamp", value)


@pytest.mark.parametrize("name", ["", "int32", "Boolean", "bool", "string "], ids=stable_id)
def test_unknown_type_names_are_refused(name: str) -> None:
    with pytest.raises(ValueError, match="header type"):
        sw.HeaderValue(name, 1)  # type: ignore[arg-type]


# --- encode: names, sizes, input shapes ---------------------------------------------------


def test_header_names_are_1_to_255_bytes() -> None:
    assert round_trip({"a" * 255: 1}) == [("a" * 255, "integer", typed(1))]
    assert round_trip({"é" * 127 + "a": 1})[0][0] == "é" * 127 + "a"  # 255 bytes
    for bad in ("", "a" * 256, "é" * 128):  # the limit is in UTF-8 bytes, not characters
        with pytest.raises(ValueError, match="header name"):
            sw.encode_eventstream({bad: 1})


def test_value_and_header_block_size_limits() -> None:
    for value in ("x" * 65535, b"x" * 65535):
        assert len(round_trip({"v": value})) == 1
    for value in ("x" * 65536, b"x" * 65536, "é" * 32768):
        with pytest.raises(ValueError, match="65535"):
            sw.encode_eventstream({"v": value})
    # Three near-maximal values exceed the 128 KiB header block every decoder caps.
    with pytest.raises(ValueError, match="cap"):
        sw.encode_eventstream({"a": "x" * 65000, "b": "y" * 65000, "c": "z" * 65000})


def test_surrogates_cannot_be_encoded() -> None:
    with pytest.raises(UnicodeEncodeError):
        sw.encode_eventstream({"s": "\ud800"})


class _Headers(Mapping[str, object]):
    """A Mapping that is not a dict."""

    def __init__(self, items: list[tuple[str, object]]) -> None:
        self._items = dict(items)

    def __getitem__(self, key: str) -> object:
        return self._items[key]

    def __iter__(self) -> Iterator[str]:
        return iter(self._items)

    def __len__(self) -> int:
        return len(self._items)


ITEMS: list[tuple[str, object]] = [
    (":message-type", "event"),
    (":event-type", "chunk"),
    ("n", sw.HeaderValue("short", 3)),
    ("z", b"\x01"),
]


@pytest.mark.parametrize(
    "shape",
    [list, tuple, dict, MappingProxyType, _Headers, lambda items: iter(items)],
    ids=["list", "tuple", "dict", "mappingproxy", "Mapping", "iterator"],
)
def test_header_inputs_keep_their_order(shape: Any) -> None:
    headers = shape(ITEMS) if shape not in (dict, MappingProxyType) else shape(dict(ITEMS))
    assert round_trip(headers, b"p") == [
        (":message-type", "string", typed("event")),
        (":event-type", "string", typed("chunk")),
        ("n", "short", typed(3)),
        ("z", "byte_array", typed(b"\x01")),
    ]


@pytest.mark.parametrize(
    "bad", [[("a",)], [("a", 1, 2)], [(1, 1)], [b"ab"], 5, "ab"], ids=stable_id
)
def test_malformed_header_inputs_are_refused(bad: object) -> None:
    with pytest.raises((TypeError, ValueError)):
        sw.encode_eventstream(bad)  # type: ignore[arg-type]


def test_duplicate_names_are_written_as_given() -> None:
    # The encoder writes what it is told; a strict decoder then refuses the frame.
    data = sw.encode_eventstream([("k", "a"), ("k", "b")])
    with pytest.raises(sw.FramingError) as info:
        sw.EventStreamDecoder().feed(data)
    assert (info.value.kind, info.value.offset) == ("duplicate_header", 0)
    message = decode_one(data, "lenient")
    assert message.typed_headers == [("k", "string", "a"), ("k", "string", "b")]
    assert message.headers == {"k": "b"}


@pytest.mark.parametrize(
    "wrap",
    [bytes, bytearray, memoryview, lambda b: np.frombuffer(b, dtype=np.uint8)],
    ids=["bytes", "bytearray", "memoryview", "numpy"],
)
def test_payload_accepts_any_buffer(wrap: Any) -> None:
    payload = bytes(range(256)) * 3
    assert decode_one(sw.encode_eventstream({}, wrap(payload))).payload == payload


@pytest.mark.parametrize("bad", ["text", 5, [1, 2], memoryview(b"abcd")[::2]], ids=stable_id)
def test_payload_must_be_contiguous_bytes(bad: object) -> None:
    with pytest.raises(TypeError):
        sw.encode_eventstream({}, bad)  # type: ignore[arg-type]


# --- messages -----------------------------------------------------------------------------


def test_message_properties_read_the_common_headers() -> None:
    message = decode_one(
        sw.encode_eventstream(
            {
                ":message-type": "exception",
                ":event-type": "chunk",
                ":content-type": "application/json",
                ":exception-type": "throttlingException",
            },
            b"{}",
        )
    )
    assert message.message_type == "exception"
    assert message.event_type == "chunk"
    assert message.content_type == "application/json"
    assert message.exception_type == "throttlingException"


def test_message_properties_are_none_when_absent_or_not_strings() -> None:
    message = decode_one(sw.encode_eventstream({":message-type": b"event", ":event-type": 3}))
    assert message.headers == {":message-type": b"event", ":event-type": 3}
    for prop in ("message_type", "event_type", "content_type", "exception_type"):
        assert getattr(message, prop) is None


def test_message_properties_agree_with_headers_on_repeated_names() -> None:
    message = decode_one(
        sw.encode_eventstream([(":event-type", "a"), (":event-type", 5)]), "lenient"
    )
    assert message.headers[":event-type"] == 5
    assert message.event_type is None


def test_repeated_header_sets_decode_like_distinct_ones() -> None:
    # The decoder reuses the header objects of a recent set that a message
    # repeats; every message must still read exactly its own headers, under
    # every chunking, and own its headers dict.
    sets: list[Any] = [
        {":event-type": "contentBlockDelta", ":content-type": "application/json"},
        {":event-type": "contentBlockDelta", ":content-type": "application/json"},
        {":event-type": "contentBlockDelta", ":content-type": "text/plain"},
        {":event-type": "contentBlockDelta", ":content-type": "application/json"},
        {":event-type": "contentBlockDelta", ":content-type": "application/json", "n": 1},
        {":event-type": "contentBlockDelta", ":content-type": "application/json", "n": 2},
        {":event-type": "contentBlockDelta", ":content-type": "application/json", "n": True},
        [(":event-type", "a"), (":event-type", "b")],
        [(":event-type", "b"), (":event-type", "a")],
        {"blob": b"\x00"},
        {"blob": b"\x01"},
        {"at": EPOCH + dt.timedelta(milliseconds=5)},
        {"at": EPOCH + dt.timedelta(milliseconds=6)},
        {},
        {":event-type": "x" * 2000},
        {":event-type": "x" * 2000},
        {":event-type": "contentBlockDelta", ":content-type": "application/json"},
    ]
    wire = b"".join(sw.encode_eventstream(h, b"%d" % i) for i, h in enumerate(sets))
    expected = [
        sw.EventStreamDecoder(validation="lenient").feed(sw.encode_eventstream(h, b"%d" % i))[0]
        for i, h in enumerate(sets)
    ]
    for label, chunks in chunkings(wire, random_rounds=4):
        decoder = sw.EventStreamDecoder(validation="lenient")
        got = feed_all(decoder.feed, chunks)
        assert [m.payload for m in got] == [b"%d" % i for i in range(len(sets))], label
        for message, alone in zip(got, expected, strict=True):
            assert message.typed_headers == alone.typed_headers, label
            assert message.headers == alone.headers, label
            assert message.event_type == alone.event_type, label
            assert message.content_type == alone.content_type, label
    first, second = got[0], got[1]
    first.headers["extra"] = 1
    assert "extra" not in second.headers


def test_message_is_read_only_and_has_a_short_repr() -> None:
    message = decode_one(sw.encode_eventstream({":event-type": "chunk"}, b"x" * 5000))
    with pytest.raises(AttributeError):
        message.payload = b""  # type: ignore[misc]
    text = repr(message)
    assert "chunk" in text and "5000 bytes" in text and len(text) < 200


def test_timestamps_decode_to_aware_utc_datetimes() -> None:
    data = frame(header("t", "timestamp", struct.pack(">q", 1_717_171_717_123)))
    value = decode_one(data).headers["t"]
    assert isinstance(value, dt.datetime)
    assert value.utcoffset() == dt.timedelta(0)
    assert value == dt.datetime(2024, 5, 31, 16, 8, 37, 123000, tzinfo=UTC)


@pytest.mark.parametrize(
    "ms",
    [
        253_402_300_800_000,  # 10000-01-01: just past datetime.max
        -62_135_596_800_001,  # just before 0001-01-01
        2**62,
        2**63 - 1,
        -(2**63),
    ],
)
def test_timestamps_outside_datetime_range_stay_integer_ms(ms: int) -> None:
    # Documented by the binding: a valid frame never fails for want of a datetime,
    # even past timedelta's range (|ms| > ~8.6e16), where timedelta itself overflows.
    data = frame(header("t", "timestamp", struct.pack(">q", ms)))
    assert decode_one(data).typed_headers == [("t", "timestamp", ms)]


# --- decoder: options, counters, caps -----------------------------------------------------


def _stream(count: int, seed: int = 7) -> tuple[bytes, list[int]]:
    """``count`` messages of varied sizes and the offset just past each."""
    rng = random.Random(seed)
    frames = [
        sw.encode_eventstream(
            {":event-type": "chunk", "i": i}, rng.randbytes(rng.choice((0, 1, 50, 300, 5000)))
        )
        for i in range(count)
    ]
    ends, at = [], 0
    for f in frames:
        at += len(f)
        ends.append(at)
    return b"".join(frames), ends


@pytest.mark.parametrize("chunk_size", [1, 7, 100, 4096, 65536, 1 << 30])
def test_counters_and_peak_buffer_on_a_long_stream(chunk_size: int) -> None:
    data, ends = _stream(600)
    largest = max(b - a for a, b in zip([0, *ends], ends, strict=False))
    decoder = sw.EventStreamDecoder()
    decoded = done = 0
    for start in range(0, len(data), chunk_size):
        chunk = data[start : start + chunk_size]
        for message in decoder.feed(chunk):
            assert message.headers["i"] == decoded
            decoded += 1
        fed = start + len(chunk)
        while done < len(ends) and ends[done] <= fed:
            done += 1
        assert decoder.messages_decoded == decoded == done
        assert decoder.bytes_fed == fed
        # What is held is exactly the unfinished message's bytes, nothing decoded.
        assert decoder.buffered_bytes == fed - (ends[done - 1] if done else 0)
    decoder.finish()
    assert decoder.buffered_bytes == 0
    # Bounded by one message plus one chunk, whatever the stream length.
    assert decoder.peak_buffered_bytes <= largest + min(chunk_size, len(data))
    assert decoder.peak_buffered_bytes <= largest


def test_max_message_bytes_is_inclusive() -> None:
    data = sw.encode_eventstream({"k": "v"}, b"x" * 100)
    assert len(sw.EventStreamDecoder(max_message_bytes=len(data)).feed(data)) == 1
    with pytest.raises(sw.FramingError) as info:
        sw.EventStreamDecoder(max_message_bytes=len(data) - 1).feed(data)
    assert info.value.kind == "length"
    assert sw.EventStreamDecoder(max_message_bytes=16).feed(frame(b"")) != []
    assert sw.DEFAULT_MAX_MESSAGE_BYTES == 16 * 1024 * 1024


@pytest.mark.parametrize("cap", [None, 1000])
def test_over_cap_length_fails_at_the_twelfth_byte(cap: int | None) -> None:
    # A verified prelude declaring 1 GiB: refused at once, never waited for.
    first = sw.encode_eventstream({":event-type": "ok"}, b"{}")
    big = prelude(1 << 30, 0)
    decoder = sw.EventStreamDecoder() if cap is None else sw.EventStreamDecoder(cap)
    assert len(decoder.feed(first)) == 1
    for byte in big[:11]:
        assert decoder.feed(bytes([byte])) == []
    with pytest.raises(sw.FramingError) as info:
        decoder.feed(big[11:] + b"\x00" * 100)
    assert (info.value.kind, info.value.offset, info.value.partial) == ("length", len(first), [])
    assert decoder.peak_buffered_bytes <= len(first)
    assert decoder.buffered_bytes == 0


def test_cap_error_does_not_wait_for_the_body_when_fed_whole() -> None:
    # Just over the cap, body present or not: same error, same place.
    data = sw.encode_eventstream({}, b"x" * 2000)
    for tail in (len(data), 12):
        with pytest.raises(sw.FramingError) as info:
            sw.EventStreamDecoder(max_message_bytes=2000).feed(data[:tail])
        assert (info.value.kind, info.value.offset) == ("length", 0)


@pytest.mark.parametrize(
    ("total", "headers_length", "kind"),
    [
        (15, 0, "length"),
        (0, 0, "length"),
        (16, 1, "headers_length"),
        (200_000, 131_073, "headers_length"),  # over the 128 KiB header cap
        (200_000, 200_000 - 15, "headers_length"),
    ],
)
def test_prelude_length_rules(total: int, headers_length: int, kind: str) -> None:
    decoder = sw.EventStreamDecoder()
    with pytest.raises(sw.FramingError) as info:
        decoder.feed(prelude(total, headers_length))
    assert (info.value.kind, info.value.offset) == (kind, 0)


def test_largest_header_block_is_accepted() -> None:
    # 131072 bytes of headers exactly: the cap is inclusive.
    block = header("a", "string", b"\xff\xff" + b"a" * 65535)  # 65540 bytes
    rest = 131072 - len(block) - len(header("b", "byte_array", b"\x00\x00"))
    block += header("b", "byte_array", struct.pack(">H", rest) + b"b" * rest)
    assert len(block) == 131072
    message = decode_one(frame(block, b"p"))
    assert [(n, t, len(v)) for n, t, v in message.typed_headers] == [
        ("a", "string", 65535),
        ("b", "byte_array", rest),
    ]


@pytest.mark.parametrize("bad", [-1, "16", None])
def test_max_message_bytes_must_be_a_size(bad: object) -> None:
    with pytest.raises((OverflowError, TypeError, ValueError)):
        sw.EventStreamDecoder(max_message_bytes=bad)  # type: ignore[arg-type]


@pytest.mark.parametrize("bad", ["Strict", "loose", ""])
def test_validation_is_strict_or_lenient(bad: str) -> None:
    with pytest.raises(ValueError, match="validation"):
        sw.EventStreamDecoder(validation=bad)  # type: ignore[arg-type]


def test_feed_after_finish_is_a_usage_error() -> None:
    decoder = sw.EventStreamDecoder()
    decoder.feed(sw.encode_eventstream({}, b"x"))
    decoder.finish()
    with pytest.raises(sw.UsageError):
        decoder.feed(b"")
    with pytest.raises(RuntimeError):
        decoder.feed(sw.encode_eventstream({}, b"x"))
    assert decoder.messages_decoded == 1


@pytest.mark.parametrize(
    "bad", ["text", None, 5, [1, 2], memoryview(b"abcdef")[::2]], ids=stable_id
)
def test_feed_takes_contiguous_buffers_only(bad: object) -> None:
    data = sw.encode_eventstream({":event-type": "x"}, b"y")
    decoder = sw.EventStreamDecoder()
    assert decoder.feed(data[:20]) == []
    with pytest.raises(TypeError):
        decoder.feed(bad)  # type: ignore[arg-type]
    # A refused argument is not input: the decoder carries on where it was.
    assert decoder.bytes_fed == 20
    assert [m.event_type for m in decoder.feed(data[20:])] == ["x"]


def test_kept_bytes_are_copied_from_a_reused_bytearray() -> None:
    data = sw.encode_eventstream({":event-type": "first"}, b"payload-one")
    scratch = bytearray(data[:30])
    decoder = sw.EventStreamDecoder()
    assert decoder.feed(scratch) == []
    scratch[:] = b"\xee" * len(scratch)  # the caller reuses its buffer
    (message,) = decoder.feed(memoryview(data)[30:])
    assert (message.event_type, message.payload) == ("first", b"payload-one")


def test_framing_error_is_a_value_error_with_a_readable_message() -> None:
    data = bytearray(sw.encode_eventstream({}, b"abc"))
    data[-1] ^= 1
    with pytest.raises(ValueError) as info:
        sw.EventStreamDecoder().feed(bytes(data))
    err = info.value
    assert isinstance(err, sw.FramingError)
    assert err.kind == "message_crc" and err.offset == 0 and err.partial == []
    assert "CRC" in str(err)
