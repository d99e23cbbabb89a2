"""The ``openai-chat`` fast path (chunks matched in Rust) is the general path.

With ``OpenAIChatStream.shapes`` set (the default), the chunks of
``SHAPE_SPECS`` skip ``json.loads`` and the general chunk code; with it
unset, every chunk takes the general path. Both must give identical unified
events and identical results, for every recorded and regression fixture,
for generated streams mixing matching and non-matching chunks (unknown
fields, nulls, wrong types, several choices, errors, ``[DONE]`` anywhere),
and in the states where a matched chunk must fall back (a choice not started
yet, a finished choice, a call that is not open, the arguments cap, after
``[DONE]``). Each test also checks that the fast path did run.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

import streamwire as sw
from chunking import feed_all, split_at
from fixture_replay import Fixture, manifests
from streamwire._core import SseEvent
from streamwire.protocols.openai_chat import OpenAIChatStream

CHAT_FIXTURES = [f for f in manifests() if f.protocol == "openai-chat"]


class _Counting(OpenAIChatStream):
    """The adapter, counting the events that arrive matched (in runs: a run
    tuple's next-to-last item is the list of its matches' last captures)."""

    matched = 0

    def _on_sse(self, events: Sequence[SseEvent | tuple[Any, ...]], out: list[sw.Event]) -> None:
        _Counting.matched += sum(len(e[-2]) for e in events if type(e) is tuple)
        super()._on_sse(events, out)


class _General(OpenAIChatStream):
    """The adapter with the fast path off: every chunk takes the general path."""

    shapes = None


class _Unsunk(OpenAIChatStream):
    """The fast path without the decoder's sink: every match becomes a tuple."""

    def __init__(self, **options: Any) -> None:
        super().__init__(**options)
        self._sink = None


def _run(
    cls: type[OpenAIChatStream], chunks: list[bytes], end: str = "close", **options: Any
) -> tuple[list[sw.Event], sw.StreamResult]:
    stream = cls(**options)
    events = feed_all(stream.feed, chunks)
    events += stream.cancel() if end == "cancel" else stream.close()
    return events, stream.result


def _same_both_ways(chunks: list[bytes], end: str = "close", **options: Any) -> list[sw.Event]:
    fast_events, fast_result = _run(_Counting, chunks, end, **options)
    slow_events, slow_result = _run(_General, chunks, end, **options)
    tuple_events, tuple_result = _run(_Unsunk, chunks, end, **options)
    assert fast_events == slow_events == tuple_events
    assert fast_result == slow_result == tuple_result
    return fast_events


def _sse(*payloads: Any) -> bytes:
    return b"".join(
        b"data: " + (p if isinstance(p, str) else json.dumps(p)).encode() + b"\n\n"
        for p in payloads
    )


def _chunk(delta: dict[str, Any], index: int = 0, **extra: Any) -> dict[str, Any]:
    return {
        "id": "c1",
        "object": "chat.completion.chunk",
        "choices": [{"index": index, "delta": delta}],
        **extra,
    }


# --- fixtures -------------------------------------------------------------------------


@pytest.mark.parametrize("fixture", CHAT_FIXTURES, ids=lambda f: f.name)
def test_every_fixture_gives_the_same_events_and_result(fixture: Fixture) -> None:
    data = fixture.fed_bytes()
    end = fixture.manifest.get("replay", {}).get("end", "close")
    options = fixture.manifest.get("options", {})
    for chunks in ([data], split_at(data, range(7, len(data), 7))):
        _same_both_ways(chunks, end, **options)


def test_the_fixtures_exercise_the_fast_path() -> None:
    _Counting.matched = 0
    sunk = 0
    for fixture in CHAT_FIXTURES:
        stream = _Counting(**fixture.manifest.get("options", {}))
        data = fixture.fed_bytes()
        feed_all(stream.feed, split_at(data, range(256, len(data), 256)))
        sunk += stream._sink._taker.taken  # type: ignore[union-attr]
    assert _Counting.matched > 100  # tuples
    assert sunk > 100  # text chunks taken by the decoder's sink


# --- states in which a matched chunk falls back ------------------------------------------


def test_text_before_the_choice_started_starts_it_first() -> None:
    _Counting.matched = 0
    events = _same_both_ways([_sse(_chunk({"content": "Hi"}), _chunk({"content": "!"}), "[DONE]")])
    assert _Counting.matched == 2
    assert [type(e).__name__ for e in events][:3] == ["MessageStarted", "TextDelta", "TextDelta"]


def test_text_after_the_finish_reason_is_the_general_paths_conflict() -> None:
    finish = {"choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]}
    wire = _sse(
        _chunk({"role": "assistant", "content": ""}), finish, _chunk({"content": "late"}), "[DONE]"
    )
    _same_both_ways([wire])
    assert (
        sw.stream("openai-chat").feed(wire)
        and _run(_Counting, [wire])[1].status == "protocol_conflict"
    )


def test_a_chunk_after_done_is_the_general_paths_warning() -> None:
    wire = _sse(_chunk({"role": "assistant", "content": "a"}), "[DONE]", _chunk({"content": "b"}))
    _, result = _run(_Counting, [wire])
    assert [w.code for w in result.warnings] == ["missing_finish_reason", "data_after_done"]
    _same_both_ways([wire])


def test_arguments_for_a_call_not_opened_open_it_through_the_general_path() -> None:
    fragment = {"tool_calls": [{"index": 0, "function": {"arguments": '{"a"'}}]}
    rest = {"tool_calls": [{"index": 0, "function": {"arguments": ": 1}"}}]}
    finish = {"choices": [{"index": 0, "delta": {}, "finish_reason": "tool_calls"}]}
    wire = _sse(_chunk({"role": "assistant"}), _chunk(fragment), _chunk(rest), finish, "[DONE]")
    _same_both_ways([wire])


def test_the_arguments_cap_is_reached_on_the_general_path() -> None:
    head = {
        "tool_calls": [
            {
                "index": 0,
                "id": "call_1",
                "type": "function",
                "function": {"name": "f", "arguments": ""},
            }
        ]
    }
    pieces = [
        _chunk({"tool_calls": [{"index": 0, "function": {"arguments": p}}]})
        for p in ['{"a":', ' "xy', 'z"}', ""]
    ]
    wire = _sse(_chunk({"role": "assistant", "content": None}), _chunk(head), *pieces, "[DONE]")
    _Counting.matched = 0
    for cap in (3, 5, 9, 10, 100):
        events = _same_both_ways([wire], max_tool_argument_chars=cap)
    assert _Counting.matched >= 4
    assert sum(type(e).__name__ == "ToolCallArgumentsDelta" for e in events) == 3


def test_falsy_fields_roles_and_ignored_fields_match_and_change_nothing() -> None:
    chunks = [
        _chunk({"role": "assistant", "content": ""}),
        _chunk({"content": "a", "role": "assistant", "refusal": None, "reasoning_content": None}),
        # OpenRouter's content chunks; a falsy field of any kind is skipped.
        _chunk({"content": "", "reasoning": None, "reasoning_details": [], "refusal": ""}),
        _chunk({"content": "", "tool_calls": [], "function_call": {}, "reasoning": 0}),
        {
            "choices": [
                {"delta": {"content": "b"}, "logprobs": {"content": []}, "finish_reason": None}
            ],
            "usage": None,
            "x_groq": {"id": "req_1"},
            "obfuscation": "xyz",
            "system_fingerprint": "fp",
        },
        _chunk(
            {"content": '\u00e9\ud83d\ude42 "q" \\ \n', "tool_calls": None, "function_call": None}
        ),
        {"choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]},
    ]
    _Counting.matched = 0
    events = _same_both_ways([_sse(*chunks, "[DONE]")])
    assert _Counting.matched == 6
    assert (
        "".join(e.text for e in events if isinstance(e, sw.TextDelta))
        == 'ab\u00e9\U0001f642 "q" \\ \n'
    )


def test_reasoning_chunks_take_the_fast_path() -> None:
    chunks = [
        _chunk({"role": "assistant", "content": None, "reasoning_content": ""}, usage=None),
        _chunk({"content": None, "reasoning_content": "Hmm"}, usage=None),
        _chunk({"reasoning": " so", "reasoning_content": None}),
        _chunk({"reasoning": ""}),
        _chunk({"reasoning": "both", "reasoning_content": "both"}),  # general path: one delta
        _chunk({"content": "4", "reasoning_content": None}, usage=None),
        {"choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]},
        _chunk({"reasoning_content": "late"}),  # after the finish_reason: a conflict
    ]
    _Counting.matched = 0
    events = _same_both_ways([_sse(*chunks, "[DONE]")])
    assert _Counting.matched == 6
    reasoning = [e.text for e in events if isinstance(e, sw.ReasoningDelta)]
    assert reasoning == ["Hmm", " so", "both"]
    assert _run(_Counting, [_sse(*chunks)])[1].status == "protocol_conflict"


def test_unknown_fields_decline_and_are_counted() -> None:
    chunks = [
        _chunk({"role": "assistant", "content": ""}),
        _chunk({"content": "a"}, x_new=1),
        _chunk({"content": "b", "audio": {"id": "a"}}),
    ]
    _Counting.matched = 0
    _same_both_ways([_sse(*chunks, "[DONE]")])
    assert _Counting.matched == 1  # the role chunk only (it falls back: no choice yet)
    result = _run(_Counting, [_sse(*chunks, "[DONE]")])[1]
    assert dict(result.unknown_fields) == {"x_new": 1, "choices[].delta.audio": 1}


# --- generated streams ------------------------------------------------------------------

_TEXTS = st.text(st.characters(codec="utf-8"), max_size=6)
_ANY = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(-3, 3)
    | st.floats(allow_nan=False, allow_infinity=False)
    | _TEXTS,
    lambda inner: (
        st.lists(inner, max_size=2)
        | st.dictionaries(st.sampled_from(["a", "usage", "id"]), inner, max_size=2)
    ),
    max_leaves=4,
)
_NULLISH = st.none() | _ANY


_FRAGMENT = st.fixed_dictionaries(
    {
        "index": st.integers(0, 2) | _ANY,
        "function": st.fixed_dictionaries(
            {"arguments": _TEXTS | _ANY}, optional={"name": _NULLISH}
        ),
    },
    optional={
        "id": st.none() | st.sampled_from(["call_0", "call_1"]),
        "type": st.none() | st.just("function"),
    },
)
_DELTA = st.one_of(
    st.fixed_dictionaries({"content": _TEXTS}),
    st.fixed_dictionaries(
        {"content": _TEXTS | _ANY},
        optional={
            "role": _ANY,
            "refusal": _NULLISH,
            "reasoning_content": _NULLISH,
            "tool_calls": _NULLISH,
        },
    ),
    st.fixed_dictionaries(
        {"reasoning_content": _TEXTS},
        optional={"content": _NULLISH, "reasoning": _NULLISH, "role": _ANY},
    ),
    st.fixed_dictionaries(
        {"reasoning": _TEXTS},
        optional={"content": _NULLISH, "reasoning_content": _NULLISH, "role": _ANY},
    ),
    st.fixed_dictionaries(
        {"tool_calls": st.lists(_FRAGMENT, min_size=1, max_size=2)},
        optional={"content": st.none(), "role": _ANY},
    ),
    st.dictionaries(st.sampled_from(["content", "role", "reasoning", "x_delta"]), _ANY, max_size=2),
)
_CHOICE = st.fixed_dictionaries(
    {"delta": _DELTA},
    optional={
        "index": st.integers(0, 2) | _ANY,
        "finish_reason": st.none() | st.sampled_from(["stop", "length", "tool_calls"]) | _ANY,
        "logprobs": _ANY,
        "content_filter_results": _ANY,
        "x_choice": _ANY,
    },
)
_CHUNK = st.fixed_dictionaries(
    {"choices": st.lists(_CHOICE, max_size=2) | _ANY},
    optional={
        "id": _ANY,
        "object": st.just("chat.completion.chunk"),
        "model": _ANY,
        "usage": st.none() | st.fixed_dictionaries({"prompt_tokens": st.integers(0, 9)}) | _ANY,
        "x_groq": st.fixed_dictionaries({}, optional={"id": _ANY, "usage": _NULLISH}) | _ANY,
        "error": _NULLISH,
        "x_chunk": _ANY,
    },
)
_EVENT = st.one_of(
    _CHUNK.map(lambda c: b"data: " + json.dumps(c, ensure_ascii=False).encode() + b"\n\n"),
    _CHUNK.map(
        lambda c: b"data: " + json.dumps(c, indent=1).replace("\n", "\ndata: ").encode() + b"\n\n"
    ),
    _CHUNK.map(lambda c: b"retry: 10\nid: 5\ndata: " + json.dumps(c).encode() + b"\n\n"),
    st.sampled_from(
        [
            b"data: [DONE]\n\n",
            b": ping\n\n",
            b"data: \n\n",
            b"data: {\n\n",
            b'event: error\ndata: {"error": {"type": "x"}}\n\n',
        ]
    ),
)


@given(st.lists(_EVENT, max_size=10), st.booleans(), st.data())
def test_generated_streams_give_the_same_events_and_result(
    events: list[bytes], role_first: bool, data: st.DataObject
) -> None:
    role = _sse(_chunk({"role": "assistant", "content": ""})) if role_first else b""
    wire = role + b"".join(events)
    cuts = sorted(data.draw(st.lists(st.integers(0, len(wire)), max_size=4)))
    _same_both_ways(split_at(wire, cuts), data.draw(st.sampled_from(["close", "cancel"])))


def test_generated_streams_often_take_the_fast_path() -> None:
    _Counting.matched = 0

    @given(st.lists(_EVENT, min_size=1, max_size=10))
    def run(events: list[bytes]) -> None:
        _run(_Counting, [_sse(_chunk({"role": "assistant", "content": ""})) + b"".join(events)])

    run()
    assert _Counting.matched > 20
