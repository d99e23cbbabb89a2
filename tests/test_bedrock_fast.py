"""The ``bedrock-converse`` Rust-matched fast path is the general path.

With ``BedrockConverseStream.shapes`` set (the default), a text
``contentBlockDelta`` whose payload matches ``bedrock.SHAPES`` is matched in
Rust while framing (``EventStreamDecoder.feed_matched``) and arrives as a
tuple; with it unset, every message is an ``EventStreamMessage``. Both must
give identical unified events and identical results for every Bedrock
fixture (recorded and regression, ``bedrock-converse`` and
``bedrock-invoke``) under every chunking, for crafted payloads next to the
shape (padding of any type, extra or escaped keys, other types, duplicate
keys, other headers), and in the states where a matched message must fall
back (no message yet, a block not open or of another kind, after
``messageStop``, a framing error after the match). Each test also checks
that the fast path ran. ``feed_matched``'s own contract (tickets give back
the message ``feed`` would have returned) is tested here too.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

import streamwire as sw
from bedrock_frames import converse as C
from bedrock_frames import event_frame
from chunking import chunkings, feed_all
from fixture_replay import Fixture, manifests
from streamwire._core import EventStreamDecoder
from streamwire.protocols import bedrock
from streamwire.protocols._eventstream import EventStreamStream

BEDROCK_FIXTURES = [f for f in manifests() if f.protocol in ("bedrock-converse", "bedrock-invoke")]


class _Counting(bedrock.BedrockConverseStream):
    """The adapter, counting the messages that arrive matched (in runs)."""

    matched = 0

    def _on_messages(self, messages: list[sw.EventStreamMessage], out: list[sw.Event]) -> None:
        _Counting.matched += sum(len(m[-2]) for m in messages if type(m) is tuple)
        super()._on_messages(messages, out)


class _General(bedrock.BedrockConverseStream):
    """The adapter with the Rust matching off (its Python fast path stays)."""

    shapes = None


def _classes(protocol: str) -> tuple[type[EventStreamStream], type[EventStreamStream]]:
    if protocol == "bedrock-converse":
        return _Counting, _General
    invoke = type(sw.stream("bedrock-invoke"))
    assert issubclass(invoke, EventStreamStream)
    # bedrock-invoke takes no fast path: its two runs must agree all the same.
    return invoke, type("_GeneralInvoke", (invoke,), {"shapes": None})


def _run(
    cls: type[EventStreamStream], chunks: list[bytes], end: str = "close", **options: Any
) -> tuple[list[sw.Event], sw.StreamResult]:
    stream = cls(**options)
    events = feed_all(stream.feed, chunks)
    events += stream.cancel() if end == "cancel" else stream.close()
    return events, stream.result


def _same_both_ways(
    chunks: list[bytes], protocol: str = "bedrock-converse", end: str = "close", **options: Any
) -> list[sw.Event]:
    fast, general = _classes(protocol)
    fast_events, fast_result = _run(fast, chunks, end, **options)
    slow_events, slow_result = _run(general, chunks, end, **options)
    assert fast_events == slow_events
    assert fast_result == slow_result
    return fast_events


def test_there_are_fixtures_of_both_protocols() -> None:
    assert {f.protocol for f in BEDROCK_FIXTURES} == {"bedrock-converse", "bedrock-invoke"}


@pytest.mark.parametrize("fixture", BEDROCK_FIXTURES, ids=lambda f: f.name)
def test_fixture_fast_equals_general(fixture: Fixture) -> None:
    data = fixture.fed_bytes()
    end = fixture.manifest.get("replay", {}).get("end", "close")
    options = fixture.manifest.get("options", {})
    for _label, chunks in chunkings(data, random_rounds=2):
        _same_both_ways(chunks, fixture.protocol, end, **options)


def test_the_rust_fast_path_runs_on_the_fixtures() -> None:
    _Counting.matched = 0
    for fixture in BEDROCK_FIXTURES:
        if fixture.protocol == "bedrock-converse":
            _same_both_ways([fixture.fed_bytes()], **fixture.manifest.get("options", {}))
    assert _Counting.matched > 100


def _stream(*middle: bytes) -> bytes:
    return C.start() + b"".join(middle) + C.stop("end_turn") + C.metadata(3, 4)


def _raw(event_type: str, payload: bytes, **headers: Any) -> bytes:
    base: dict[str, Any] = {
        ":event-type": event_type,
        ":content-type": "application/json",
        ":message-type": "event",
    }
    base.update(headers)
    return sw.encode_eventstream(list(base.items()), payload)


#: Payloads next to the shape: each must behave exactly as the general path says.
_CRAFTED = [
    b'{"contentBlockIndex":0,"delta":{"text":"a"}}',
    b'{"contentBlockIndex":0,"delta":{"text":"a"},"p":"xyz"}',
    b'{"p":[1,{"q":null}],"delta":{"text":"a"},"contentBlockIndex":0}',
    b'{"contentBlockIndex":0,"delta":{"text":""},"p":1}',
    b'{"contentBlockIndex":0,"delta":{"text":"\\u00e9\\ud83d\\ude00\\n"}}',
    b'{"contentBlockIndex":0,"delta":{"text":"a"},"extra":1}',
    b'{"contentBlockIndex":0,"delta":{"text":"a","more":1}}',
    b'{"contentBlockIndex":0,"delta":{"text":"a"},"p":"x","p":"y"}',
    b'{"contentBlockIndex":0,"contentBlockIndex":0,"delta":{"text":"a"}}',
    b'{"contentBlockIndex":0,"delta":{"text":"a","text":"b"}}',
    b'{"contentBlockIndex":0.0,"delta":{"text":"a"}}',
    b'{"contentBlockIndex":true,"delta":{"text":"a"}}',
    b'{"contentBlockIndex":-1,"delta":{"text":"a"}}',
    b'{"contentBlockIndex":99999999999999999999999,"delta":{"text":"a"}}',
    b'{"contentBlockIndex":"0","delta":{"text":"a"}}',
    b'{"contentBlockIndex":0,"delta":{"text":1}}',
    b'{"contentBlockIndex":0,"delta":{"text":null}}',
    b'{"contentBlockIndex":0,"delta":{"t\\u0065xt":"a"}}',
    b'{"contentBlockIndex":0,"delta":{"text":"\\ud800"}}',
    b'{"contentBlockIndex":0,"delta":{"text":"a"}',
    b'{"contentBlockIndex":0,"delta":{"text":"a"}} x',
    b'\xef\xbb\xbf{"contentBlockIndex":0,"delta":{"text":"a"}}',
    b'{"contentBlockIndex":0,"delta":{"text":"\xff"}}',
    b'{"contentBlockIndex":1,"delta":{"text":"a"}}',
    b'{"contentBlockIndex":0,"delta":{"toolUse":{"input":"{}"}}}',
    b"[]",
    b"",
]


@pytest.mark.parametrize("payload", _CRAFTED)
def test_crafted_payloads(payload: bytes) -> None:
    text = C.text(0, "first")
    _same_both_ways([_stream(text, _raw("contentBlockDelta", payload), text)])
    # In a tool block, before any message and after messageStop.
    tool = C.tool_start(0, "t1", "f")
    _same_both_ways([_stream(tool, _raw("contentBlockDelta", payload), C.block_stop(0))])
    _same_both_ways([_raw("contentBlockDelta", payload) + _stream(text)])
    _same_both_ways([_stream(text) + _raw("contentBlockDelta", payload)])


@pytest.mark.parametrize(
    "headers",
    [
        {":message-type": "exception"},
        {":message-type": sw.HeaderValue("byte_array", b"event")},
        {":event-type": sw.HeaderValue("byte_array", b"contentBlockDelta")},
        {"x-extra": 7},
        {":content-type": "text/plain"},
    ],
    ids=repr,
)
def test_other_headers(headers: dict[str, Any]) -> None:
    payload = b'{"contentBlockIndex":0,"delta":{"text":"a"},"p":"x"}'
    _same_both_ways([_stream(C.text(0, "first"), _raw("contentBlockDelta", payload, **headers))])


def test_matched_then_a_framing_error_in_the_same_chunk() -> None:
    good = _stream(C.text(0, "a"), C.text(0, "b"))
    bad = bytearray(C.text(0, "c"))
    bad[-1] ^= 0xFF  # the message CRC
    _Counting.matched = 0
    events = _same_both_ways([C.start() + C.text(0, "a") + C.text(0, "b") + bytes(bad)])
    assert _Counting.matched == 2  # the first one falls back: it opens the block
    names = [type(e).__name__ for e in events]
    assert names == [
        "MessageStarted",
        "TextDelta",
        "TextDelta",
        "ErrorReceived",
        "MessageCompleted",
    ]
    _same_both_ways([good[: len(good) // 2] + bytes(bad), good[len(good) // 2 :]])


_texts = st.text(st.characters(codec="utf-8"), max_size=6)


@given(
    st.lists(
        st.one_of(
            st.tuples(st.just("text"), st.integers(0, 2), _texts),
            st.tuples(st.just("raw"), st.integers(0, 2), _texts),
            st.tuples(st.just("stop"), st.integers(0, 2), _texts),
            st.tuples(st.just("tool"), st.integers(0, 2), _texts),
        ),
        max_size=12,
    ),
    st.integers(1, 64),
)
def test_generated_streams(steps: list[tuple[str, int, str]], chunk: int) -> None:
    frames = [C.start()]
    for kind, index, text in steps:
        if kind == "text":
            frames.append(C.text(index, text, pad=len(text) % 4))
        elif kind == "raw":
            body = {"delta": {"text": text}, "contentBlockIndex": index, "p": [text]}
            frames.append(event_frame("contentBlockDelta", body, pad=None))
        elif kind == "stop":
            frames.append(C.block_stop(index))
        else:
            frames.append(C.tool_start(index, f"t{index}", "f"))
    frames += [C.stop("end_turn"), C.metadata(1, 2)]
    data = b"".join(frames)
    _same_both_ways([data[i : i + chunk] for i in range(0, len(data), chunk)])


def _messages_equal(a: sw.EventStreamMessage, b: sw.EventStreamMessage) -> None:
    assert a.headers == b.headers
    assert a.typed_headers == b.typed_headers
    assert a.payload == b.payload
    assert (a.message_type, a.event_type, a.content_type, a.exception_type) == (
        b.message_type,
        b.event_type,
        b.content_type,
        b.exception_type,
    )


def test_feed_matched_tickets_give_back_what_feed_gives() -> None:
    frames = [
        C.start(),
        C.text(0, "héllo"),
        _raw("contentBlockDelta", b'{"contentBlockIndex":3,"delta":{"text":"x"}}', x=5),
        _raw("contentBlockDelta", b'{"contentBlockIndex":4,"delta":{"text":"y"}}', y=True),
        C.text(1, "z"),
        _raw("contentBlockDelta", b'{"contentBlockIndex":0,"delta":{"text":1}}'),
    ]
    data = b"".join(frames)
    plain = EventStreamDecoder().feed(data)
    decoder = EventStreamDecoder()
    got = decoder.feed_matched(data, bedrock.SHAPES)
    assert len(plain) == 6
    # Consecutive matches for one block are one run; each block index its own.
    assert [type(item) is tuple for item in got] == [False, True, True, True, True, False]
    assert [item[:3] for item in got[1:5]] == [
        (0, 0, ["héllo"]),
        (0, 3, ["x"]),
        (0, 4, ["y"]),
        (0, 1, ["z"]),
    ]
    for item, message in zip(got, plain, strict=True):
        if type(item) is tuple:
            (ticket,) = range(item[-1], item[-1] + len(item[-2]))
            _messages_equal(decoder.matched_message(ticket), message)
        else:
            assert isinstance(item, sw.EventStreamMessage)
            _messages_equal(item, message)
    decoder.feed(b"")
    with pytest.raises(IndexError):
        decoder.matched_message(0)


def test_feed_matched_merges_a_blocks_deltas_into_one_run() -> None:
    frames = [C.text(0, "a"), C.text(0, ""), C.text(0, "数🙂"), C.text(1, "b"), C.text(0, "c")]
    data = b"".join(frames)
    plain = EventStreamDecoder().feed(data)
    decoder = EventStreamDecoder()
    got = decoder.feed_matched(data, bedrock.SHAPES)
    assert got == [(0, 0, ["a", "", "数🙂"], 0), (0, 1, ["b"], 3), (0, 0, ["c"], 4)]
    for ticket, message in enumerate(plain):
        _messages_equal(decoder.matched_message(ticket), message)


def test_feed_matched_after_finish_and_framing_errors() -> None:
    decoder = EventStreamDecoder()
    decoder.finish()
    with pytest.raises(sw.UsageError):
        decoder.feed_matched(b"", bedrock.SHAPES)
    bad = bytearray(C.text(0, "c"))
    bad[-1] ^= 0xFF
    decoder = EventStreamDecoder()
    with pytest.raises(sw.FramingError) as caught:
        decoder.feed_matched(C.text(0, "a") + bytes(bad), bedrock.SHAPES)
    (item,) = caught.value.partial
    assert item == (0, 0, ["a"], 0)
    assert (
        decoder.matched_message(item[-1]).payload
        == json.dumps(
            {"contentBlockIndex": 0, "delta": {"text": "a"}, "p": "abc"}, separators=(",", ":")
        ).encode()
    )
    with pytest.raises(sw.FramingError):
        decoder.feed_matched(b"", bedrock.SHAPES)
