"""The AWS EventStream vectors (``fixtures/eventstream/``) through the Python binding.

Three sets, described in ``fixtures/eventstream/PROVENANCE.md``: aws-sdk-go's
encoded/decoded pairs, the smithy-rs files with our ``smithy-rs.expect.json``,
and our ``generated.json``. Every vector is decoded by ``sw.EventStreamDecoder``
under every chunking of ``chunking.py`` (whole, one byte at a time, every split
point of small inputs, seeded random splits, empty chunks interleaved) and must
give exactly:

* the expected messages: header names, wire type names (``typed_headers``) and
  values as natural Python objects (``bool``, ``int``, ``bytes``, ``str``, an
  aware UTC ``datetime`` for a timestamp, ``uuid.UUID``), and payloads;
* for an invalid vector, exactly the expected ``FramingError.kind``, at the
  stream offset of the first byte of the failing message, with the messages
  decoded earlier in the failing ``feed()`` call in ``.partial``; the decoder
  then stays failed, and ``finish()`` raises ``truncated`` when bytes of an
  unfinished message remain.

Expectations come from the vector files only, never from a decoder. Values are
compared with their Python type (``True`` is not ``1``, an aware datetime is not
a naive one).
"""

from __future__ import annotations

import base64
import datetime as dt
import json
import struct
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np
import pytest

import streamwire as sw
from chunking import chunkings
from conftest import fixture_path

Validation = Literal["strict", "lenient"]
HeaderValue = bool | int | bytes | str | dt.datetime | uuid.UUID
#: A header value tagged with its Python type, so that ``True != 1``.
Tagged = tuple[str, object]
#: One message as compared: ``((name, wire type name, tagged value), ...), payload``.
Msg = tuple[tuple[tuple[str, str, Tagged], ...], bytes]

UTC = dt.timezone.utc
EPOCH = dt.datetime(1970, 1, 1, tzinfo=UTC)
#: Wire type ids 0..9, in order (EventStream spec; the names are streamwire's).
TYPE_NAMES = (
    "boolean_true",
    "boolean_false",
    "byte",
    "short",
    "integer",
    "long",
    "byte_array",
    "string",
    "timestamp",
    "uuid",
)
#: ``EventStreamMessage`` properties and the header each one reads.
PROPERTIES = {
    "message_type": ":message-type",
    "event_type": ":event-type",
    "content_type": ":content-type",
    "exception_type": ":exception-type",
}
ES_DIR = fixture_path("eventstream")


# --- expected values ----------------------------------------------------------------------


def timestamp_value(ms: int) -> dt.datetime | int:
    """A timestamp header as the binding documents it: an aware UTC datetime, or the
    integer milliseconds when the instant is outside ``datetime``'s years 1..9999."""
    try:
        return EPOCH + dt.timedelta(milliseconds=ms)
    except OverflowError:
        return ms


def tag(value: object) -> Tagged:
    """A value with its type: a datetime also keeps its UTC offset (None if naive)."""
    if isinstance(value, dt.datetime):
        return ("datetime", (value.replace(tzinfo=None), value.utcoffset()))
    return (type(value).__name__, value)


def natural(type_name: str, value: Any) -> HeaderValue:
    """A header value of the ``generated.json`` format as a Python value."""
    if type_name in ("boolean_true", "boolean_false"):
        assert value is (type_name == "boolean_true")
        return bool(value)
    if type_name in ("byte", "short", "integer", "long"):
        return int(value)
    if type_name == "byte_array":
        return base64.b64decode(value)
    if type_name == "string":
        return str(value)
    if type_name == "timestamp":
        return timestamp_value(int(value))
    if type_name == "uuid":
        return uuid.UUID(value)
    raise AssertionError(f"unknown header type {type_name!r}")


def expected_msg(message: dict[str, Any]) -> Msg:
    headers = tuple(
        (h["name"], h["type"], tag(natural(h["type"], h["value"]))) for h in message["headers"]
    )
    return headers, base64.b64decode(message["payload_b64"])


def seen(message: sw.EventStreamMessage) -> Msg:
    """A decoded message as compared, after checking that its views agree."""
    typed = message.typed_headers
    assert isinstance(typed, list)
    assert isinstance(message.payload, bytes)
    # `headers` is `typed_headers` by name (a repeat, lenient only, keeps the last).
    by_name = {name: tag(value) for name, _, value in typed}
    assert {name: tag(value) for name, value in message.headers.items()} == by_name
    for prop, name in PROPERTIES.items():
        value = message.headers.get(name)
        assert getattr(message, prop) == (value if isinstance(value, str) else None), prop
    return tuple((name, type_name, tag(value)) for name, type_name, value in typed), message.payload


def frame_offsets(raw: bytes, count: int) -> int:
    """The stream offset just past the first ``count`` frames (read from their lengths)."""
    offset = 0
    for _ in range(count):
        (total_length,) = struct.unpack_from(">I", raw, offset)
        offset += total_length
    return offset


# --- the vectors --------------------------------------------------------------------------


@dataclass(frozen=True)
class Outcome:
    """What decoding a whole stream gives: messages, then an error kind and offset or None."""

    messages: tuple[Msg, ...]
    error: str | None = None
    offset: int | None = None


@dataclass(frozen=True)
class Vector:
    name: str
    raw: bytes
    expect: Outcome
    #: The expectation follows a spec MUST that lenient mode may relax.
    strict: bool = False


def _outcome(raw: bytes, expect: dict[str, Any]) -> Outcome:
    if "headers" in expect:
        messages = [expect]
    else:
        messages = expect.get("messages", [])
    error = expect.get("error")
    offset = frame_offsets(raw, len(messages)) if error else None
    return Outcome(tuple(expected_msg(m) for m in messages), error, offset)


def _generated() -> Iterator[Vector]:
    for case in json.loads((ES_DIR / "generated.json").read_text(encoding="utf-8")):
        raw = base64.b64decode(case["message_b64"])
        yield Vector(
            f"generated/{case['name']}",
            raw,
            _outcome(raw, case["expect"]),
            strict=case.get("strict", False),
        )


def _smithy_rs() -> Iterator[Vector]:
    for case in json.loads((ES_DIR / "smithy-rs.expect.json").read_text(encoding="utf-8")):
        raw = (ES_DIR / "smithy-rs" / case["file"]).read_bytes()
        # `expect` is the CRC-first answer, not smithy-rs's own (see PROVENANCE.md).
        yield Vector(f"smithy-rs/{case['file']}", raw, _outcome(raw, case["expect"]))


#: aws-sdk-go's `decoded/negative` files hold the error text of its decoder.
AWS_ERRORS = {
    "Prelude checksum mismatch": "prelude_crc",
    "Message checksum mismatch": "message_crc",
}


def _aws_header(header: dict[str, Any]) -> dict[str, Any]:
    # aws-sdk-go's JSON: `type` is the wire id; byte_array, string and uuid
    # values are base64 of the raw bytes; a timestamp is integer milliseconds.
    type_name = TYPE_NAMES[header["type"]]
    value = header["value"]
    if type_name == "string":
        value = base64.b64decode(value).decode("utf-8")
    elif type_name == "uuid":
        value = str(uuid.UUID(bytes=base64.b64decode(value)))
    return {"name": header["name"], "type": type_name, "value": value}


def _signed32(raw: bytes, at: int) -> int:
    # The upstream JSON prints CRCs as signed 32-bit integers.
    return int(struct.unpack_from(">i", raw, at)[0])


def _aws_sdk_go() -> Iterator[Vector]:
    root = ES_DIR / "aws-sdk-go"
    for path in sorted((root / "encoded" / "positive").iterdir()):
        raw = path.read_bytes()
        decoded = json.loads((root / "decoded" / "positive" / path.name).read_text("utf-8"))
        # The frame-level fields of the decoded form must describe these very bytes.
        assert struct.unpack_from(">II", raw) == (
            decoded["total_length"],
            decoded["headers_length"],
        )
        assert _signed32(raw, 8) == decoded["prelude_crc"], path.name
        assert _signed32(raw, len(raw) - 4) == decoded["message_crc"], path.name
        message = {
            "headers": [_aws_header(h) for h in decoded["headers"]],
            "payload_b64": decoded["payload"],
        }
        yield Vector(f"aws-sdk-go/positive/{path.name}", raw, _outcome(raw, message))
    for path in sorted((root / "encoded" / "negative").iterdir()):
        text = (root / "decoded" / "negative" / path.name).read_text("utf-8").strip()
        raw = path.read_bytes()
        yield Vector(
            f"aws-sdk-go/negative/{path.name}", raw, _outcome(raw, {"error": AWS_ERRORS[text]})
        )


VECTORS = [*_aws_sdk_go(), *_smithy_rs(), *_generated()]
BY_NAME = {v.name: v for v in VECTORS}

#: What lenient mode gives for the vectors whose strict expectation it relaxes: the
#: spec's MUSTs on names. Both frames read by hand from the vector bytes.
LENIENT: dict[str, Outcome] = {
    # headers_length 5: name length 0, type 7 (string), u16 length 1, "v".
    "generated/header_name_length_0": Outcome((((("", "string", tag("v")),), b""),)),
    # Two `:event-type` string headers, "a" then "b"; both kept in wire order.
    "generated/duplicate_header_name": Outcome(
        ((((":event-type", "string", tag("a")), (":event-type", "string", tag("b"))), b""),)
    ),
}
#: Strict vectors whose expectation is a size cap: it holds in both modes.
CAPS = {"length", "headers_length"}


VECTOR_PARAMS = [pytest.param(v, id=v.name) for v in VECTORS]


# --- decoding -----------------------------------------------------------------------------

#: A valid frame, fed to a failed decoder to show it stays failed.
ANOTHER_FRAME = sw.encode_eventstream({":event-type": "x"}, b"{}")


def assert_stays_failed(decoder: sw.EventStreamDecoder, err: sw.FramingError) -> None:
    """A failed decoder raises the same error from every later call, with nothing partial."""
    for again in (lambda: decoder.feed(b""), lambda: decoder.feed(ANOTHER_FRAME), decoder.finish):
        with pytest.raises(sw.FramingError) as info:
            again()
        assert (info.value.kind, info.value.offset, info.value.partial) == (
            err.kind,
            err.offset,
            [],
        )


def decode(
    chunks: list[Any],
    validation: Validation = "strict",
    wrap: Callable[[bytes], Any] = bytes,
) -> Outcome:
    """Feeds every chunk, then ``finish()``; stops at the first error."""
    decoder = sw.EventStreamDecoder(validation=validation)
    got: list[sw.EventStreamMessage] = []
    fed = 0
    err: sw.FramingError | None = None
    for chunk in chunks:
        try:
            got += decoder.feed(wrap(chunk))
        except sw.FramingError as e:
            # Nothing valid is lost: what this call completed rides on the error.
            got += e.partial
            err = e
            break
        fed += len(chunk)
        assert decoder.bytes_fed == fed
    else:
        try:
            decoder.finish()
        except sw.FramingError as e:
            assert e.partial == []
            err = e
    assert decoder.messages_decoded == len(got)
    if err is None:
        assert decoder.buffered_bytes == 0
        return Outcome(tuple(seen(m) for m in got))
    assert isinstance(err, ValueError)
    assert isinstance(err, sw.StreamwireError)
    assert decoder.buffered_bytes == 0, "a failed decoder releases its buffer"
    assert_stays_failed(decoder, err)
    return Outcome(tuple(seen(m) for m in got), err.kind, err.offset)


def test_vectors_were_found() -> None:
    names = [v.name for v in VECTORS]
    assert len(names) == len(set(names))
    counts = {prefix: sum(n.startswith(prefix) for n in names) for prefix in ("aws", "smi", "gen")}
    assert counts == {"aws": 9, "smi": 11, "gen": 38}
    assert sum(v.expect.error is not None for v in VECTORS) >= 30


@pytest.mark.parametrize("vector", VECTOR_PARAMS)
def test_vector_under_every_chunking(vector: Vector) -> None:
    for label, chunks in chunkings(vector.raw):
        assert decode(chunks) == vector.expect, f"{vector.name}, chunking {label}"


@pytest.mark.parametrize("vector", VECTOR_PARAMS)
def test_vector_in_lenient_mode(vector: Vector) -> None:
    # Lenient relaxes only the spec's MUSTs on names; every CRC, length, cap,
    # type and UTF-8 rule holds as in strict mode.
    expect = LENIENT.get(vector.name, vector.expect)
    if vector.strict:
        assert vector.name in LENIENT or vector.expect.error in CAPS
    for label, chunks in chunkings(vector.raw, random_rounds=4):
        if label == "whole" or label == "bytewise" or label.startswith("random"):
            assert decode(chunks, "lenient") == expect, f"{vector.name}, chunking {label}"


def test_strict_only_vectors_are_the_documented_ones() -> None:
    strict = {v.name: v.expect.error for v in VECTORS if v.strict}
    assert strict == {
        "generated/oversized_payload_declared": "length",
        "generated/oversized_headers_declared": "headers_length",
        "generated/total_length_max_u32": "length",
        "generated/header_name_length_0": "header_name",
        "generated/duplicate_header_name": "duplicate_header",
    }
    assert set(LENIENT) <= set(strict)


BUFFER_KINDS: dict[str, Callable[[bytes], Any]] = {
    "bytes": bytes,
    "bytearray": bytearray,
    "memoryview": memoryview,
    "memoryview-slice": lambda b: memoryview(b"#" + b + b"#")[1:-1],
    "numpy-uint8": lambda b: np.frombuffer(b, dtype=np.uint8),
}


@pytest.mark.parametrize("kind", list(BUFFER_KINDS))
@pytest.mark.parametrize("vector", VECTOR_PARAMS)
def test_vector_fed_as_any_buffer(vector: Vector, kind: str) -> None:
    wrap = BUFFER_KINDS[kind]
    assert decode([vector.raw], wrap=wrap) == vector.expect
    for label, chunks in chunkings(vector.raw, random_rounds=3):
        if label == "bytewise" or label.startswith("random"):
            assert decode(chunks, wrap=wrap) == vector.expect, f"{kind}, chunking {label}"


# --- errors: partial, offset, failed state, truncation -------------------------------------


def test_partial_holds_only_what_the_failing_call_decoded() -> None:
    three = BY_NAME["generated/concatenated_three"]
    bad = BY_NAME["generated/valid_then_bad_crc"]
    stream = three.raw + bad.raw
    first_end = frame_offsets(stream, 1)
    decoder = sw.EventStreamDecoder()
    # The first call completes the first message and starts the second.
    assert [seen(m) for m in decoder.feed(stream[: first_end + 5])] == [three.expect.messages[0]]
    with pytest.raises(sw.FramingError) as info:
        decoder.feed(stream[first_end + 5 :])
    err = info.value
    assert err.kind == "message_crc"
    assert err.offset == len(three.raw) + frame_offsets(bad.raw, 1)
    # The rest of concatenated_three and the valid half of valid_then_bad_crc.
    assert [seen(m) for m in err.partial] == [*three.expect.messages[1:], *bad.expect.messages]
    assert decoder.messages_decoded == 4
    assert_stays_failed(decoder, err)


def test_error_offsets_count_bytes_before_the_failing_message() -> None:
    # The offset is a stream offset, counted from the first byte ever fed.
    good = BY_NAME["generated/concatenated_three"].raw
    for name in ("generated/bad_prelude_crc", "generated/unknown_header_type_255"):
        vector = BY_NAME[name]
        for label, chunks in chunkings(good + vector.raw, random_rounds=4):
            outcome = decode(chunks)
            assert (outcome.error, outcome.offset, len(outcome.messages)) == (
                vector.expect.error,
                len(good),
                3,
            ), f"{name}, chunking {label}"


@pytest.mark.parametrize(
    "name",
    [
        "generated/concatenated_three",
        "generated/bedrock_converse_stream_tool_use",
        "aws-sdk-go/positive/all_headers",
    ],
)
def test_every_cut_of_a_valid_stream_is_truncated_at_finish(name: str) -> None:
    vector = BY_NAME[name]
    raw, messages = vector.raw, vector.expect.messages
    ends = [frame_offsets(raw, n) for n in range(1, len(messages) + 1)]
    for cut in range(len(raw) + 1):
        complete = sum(end <= cut for end in ends)
        start = ends[complete - 1] if complete else 0
        if cut == start:
            expect = Outcome(messages[:complete])
        else:
            # Even a partial 12-byte prelude is an unfinished message.
            expect = Outcome(messages[:complete], "truncated", start)
        assert decode([raw[:cut]]) == expect, f"cut at {cut}"
        assert decode([raw[:start], raw[start:cut], b""]) == expect, f"cut at {cut}"


def test_finish_on_a_clean_boundary_is_silent_and_idempotent() -> None:
    decoder = sw.EventStreamDecoder()
    assert len(decoder.feed(BY_NAME["generated/concatenated_three"].raw)) == 3
    assert decoder.finish() is None
    assert decoder.finish() is None
    assert decoder.buffered_bytes == 0


def test_failed_finish_keeps_the_decoder_failed() -> None:
    raw = BY_NAME["generated/valid_then_truncated"].raw
    decoder = sw.EventStreamDecoder()
    assert len(decoder.feed(raw)) == 1
    assert decoder.buffered_bytes == len(raw) - 52
    with pytest.raises(sw.FramingError) as info:
        decoder.finish()
    assert (info.value.kind, info.value.offset, info.value.partial) == ("truncated", 52, [])
    # A framing error, not a usage error: the framing failure comes first.
    assert_stays_failed(decoder, info.value)
