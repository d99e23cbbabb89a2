"""The shape cache: a stream's next payload matched by its last match's skeleton.

``SseDecoder.feed_matched``, ``EventStreamDecoder.feed_matched`` and
``MessageMatcher.match`` remember, per stream, the skeleton of each
template's last match (its bytes outside the values a capture or ``$any``
takes) and match a payload that fits it by comparing bytes. The answer must
always be the stateless ``ShapeMatcher.match``'s: checked here on streams of
generated payloads (mostly one shape with varying values, sometimes another
shape, corrupted, or re-spaced), framed under every chunking, and on the
WebSocket adapters' own shapes.
"""

from __future__ import annotations

import json
from typing import Any

from hypothesis import given
from hypothesis import strategies as st

import streamwire as sw
from chunking import chunkings
from streamwire._core import MessageMatcher, ShapeMatcher

DELTA = {
    "type": "response.output_text.delta",
    "sequence_number?": "$int",
    "item_id": "$str",
    "content_index?": "$int",
    "delta": "$str",
    "obfuscation?": "$any",
    "logprobs?": "$raw",
}
OTHER = {"type": "$str", "value?": "$falsy"}
MATCHER = ShapeMatcher([("message", DELTA), ("message", OTHER)])

_TEXT = st.text(alphabet=st.characters(codec="utf-8"), max_size=12)
_ANY = st.recursive(
    st.none() | st.booleans() | st.integers(-(2**70), 2**70) | _TEXT,
    lambda inner: st.lists(inner, max_size=2) | st.dictionaries(_TEXT, inner, max_size=2),
    max_leaves=4,
)


@st.composite
def _payload(draw: st.DrawFn) -> str:
    kind = draw(st.integers(0, 9))
    if kind == 9:
        body: dict[str, Any] = {"type": draw(_TEXT), "value": draw(st.sampled_from([0, "", 1]))}
    else:
        body = {
            "type": "response.output_text.delta",
            "sequence_number": draw(st.integers(-5, 2**64)),
            "item_id": draw(st.sampled_from(["msg_1", "msg_2", "é"])),
            "content_index": 0,
            "delta": draw(_TEXT),
            "obfuscation": draw(_ANY),
            "logprobs": draw(st.sampled_from([[], None, [{"t": 1}]])),
        }
        if draw(st.booleans()):
            del body["obfuscation"]
    separators = draw(st.sampled_from([(",", ":"), (",", ":"), (", ", ": ")]))
    text = json.dumps(body, ensure_ascii=draw(st.booleans()), separators=separators)
    if draw(st.integers(0, 7)) == 0:  # corrupted
        at = draw(st.integers(0, len(text)))
        junk = draw(st.sampled_from(["", ",", "}", '"', "\\", "0", " "]))
        text = text[:at] + junk + text[at + 1 :]
    return text


def _clean(text: str) -> bool:
    return "\n" not in text and "\r" not in text and "\x00" not in text


@given(st.lists(_payload(), max_size=30))
def test_message_matches_are_the_stateless_matches(messages: list[str]) -> None:
    matcher = MessageMatcher(MATCHER)
    for message in messages:
        got = matcher.match(message)
        expected = MATCHER.match(message)
        size = len(message.encode("utf-8", "surrogatepass"))
        assert got == (None if expected is None else (*expected, size)), message
        assert matcher.match(message.encode()) == got


def test_a_session_of_deltas_replays_and_keeps_its_ids() -> None:
    matcher = MessageMatcher(MATCHER)
    messages = [
        json.dumps(
            {
                "type": "response.output_text.delta",
                "sequence_number": n,
                "item_id": "msg_7",
                "content_index": 0,
                "delta": f"δ{n}",
                "obfuscation": "x" * (n % 5),
            },
            ensure_ascii=False,
            separators=(",", ":"),
        )
        for n in range(50)
    ]
    got = [matcher.match(m) for m in messages]
    assert [g[4] for g in got if g] == [f"δ{n}" for n in range(50)]
    assert matcher.replayed == 49
    # The item id is built once and handed out again while it does not change.
    assert len({id(g[2]) for g in got if g}) == 1
    assert matcher.shapes is MATCHER


def test_bytes_that_are_not_utf8_lone_surrogates_and_other_types_decline() -> None:
    matcher = MessageMatcher(MATCHER)
    assert matcher.match(b'{"type":"\xff"}') is None
    assert matcher.match('{"type":"\ud800"}') is None
    assert matcher.match({"type": "x"}) is None  # a dict message: the general path's


@given(st.lists(_payload().filter(_clean), max_size=12), st.data())
def test_sse_matches_are_the_stateless_matches_under_every_chunking(
    payloads: list[str], data: st.DataObject
) -> None:
    wire = b"".join(f"data: {p}\n\n".encode() for p in payloads)
    expected = [MATCHER.match(p) for p in payloads]
    seed = data.draw(st.integers(0, 99))
    for _, chunks in chunkings(wire, seed=seed, random_rounds=4):
        decoder = sw.SseDecoder()
        got: list[Any] = []
        for chunk in chunks:
            for item in decoder.feed_matched(chunk, MATCHER):
                got.append(item[:-1] if isinstance(item, tuple) else None)
        assert got == expected


def test_eventstream_matches_are_the_stateless_matches() -> None:
    payloads = [
        json.dumps({"type": "response.output_text.delta", "item_id": "i", "delta": str(n)})
        for n in range(20)
    ] + ['{"type": "x", "value": 0}', '{"type": "x", "value": 1}']
    wire = b"".join(
        sw.encode_eventstream({":message-type": "event", ":event-type": "message"}, p.encode())
        for p in payloads
    )
    decoder = sw.EventStreamDecoder()
    got = [
        item[:-1] if isinstance(item, tuple) else None
        for item in decoder.feed_matched(wire, MATCHER)
    ]
    assert got == [MATCHER.match(p) for p in payloads]


def test_a_decoder_given_another_matcher_starts_afresh() -> None:
    first = ShapeMatcher([("message", {"a": "$str", "b?": "$any"})])
    second = ShapeMatcher([("message", {"a": "$str", "b?": 1})])
    decoder = sw.SseDecoder()
    assert decoder.feed_matched(b'data: {"a":"x","b":2}\n\n', first)[0][:-1] == (0, "x")
    # The same skeleton would take b=2 again; the second matcher refuses it.
    assert isinstance(decoder.feed_matched(b'data: {"a":"y","b":2}\n\n', second)[0], sw.SseEvent)
    assert decoder.feed_matched(b'data: {"a":"z","b":2}\n\n', first)[0][:-1] == (0, "z")
    assert decoder.shapes_replayed == 0
