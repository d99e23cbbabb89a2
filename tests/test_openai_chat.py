"""The ``openai-chat`` adapter beyond its fixtures.

Fixture replays (``test_fixtures.py``) cover the wire behaviours; this module
covers the API around them: misuse, options, caps, metrics with an injected
clock, tool results and the ledger on real streams, the equivalence of the
fast path with the general path, and two properties: generated streams give
back exactly what was put in under any chunking, and no input, however
broken, makes the adapter raise.
"""

from __future__ import annotations

import json
from functools import partial
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

import streamwire as sw
from adapter_fuzz import mutations, never_raises
from chunking import chunkings, split_at
from fixture_replay import Fixture, facts, manifests
from streamwire.protocols import openai_chat

CHAT_FIXTURES = [f for f in manifests() if f.protocol == "openai-chat"]


def _fixture(case: str) -> Fixture:
    return next(f for f in CHAT_FIXTURES if f.manifest["case"] == case)


def _sse(*payloads: Any) -> bytes:
    out = []
    for payload in payloads:
        data = payload if isinstance(payload, str) else json.dumps(payload)
        out.append(f"data: {data}\n\n")
    return "".join(out).encode()


def _text_chunk(text: str, finish: str | None = None, **extra: Any) -> dict[str, Any]:
    return {"choices": [{"index": 0, "delta": {"content": text}, "finish_reason": finish}], **extra}


# --- the interface ----------------------------------------------------------------


def test_unknown_protocol_lists_the_known_ones() -> None:
    with pytest.raises(ValueError, match="openai-chat") as info:
        sw.stream("openai-chatt")
    assert "unknown protocol 'openai-chatt'" in str(info.value)
    assert "openai-chat" in sw.known_protocols()


def test_feeding_after_close_or_cancel_raises() -> None:
    for end in ("close", "cancel"):
        stream = sw.stream("openai-chat")
        stream.feed(_sse(_text_chunk("a")))
        getattr(stream, end)()
        assert stream.closed
        with pytest.raises(sw.UsageError, match="closed"):
            stream.feed(b"data: {}\n\n")
        assert stream.close() == [] and stream.cancel() == [], "ending twice is a no-op"


def test_feed_message_is_for_websocket_protocols() -> None:
    with pytest.raises(sw.UsageError, match="not a WebSocket protocol"):
        sw.stream("openai-chat").feed_message("{}")


def test_cancel_after_done_keeps_the_status() -> None:
    stream = sw.stream("openai-chat")
    stream.feed(_sse(_text_chunk("a", "stop"), "[DONE]"))
    assert stream.result.status == "completed" and stream.result.final
    assert stream.cancel() == []
    assert stream.result.status == "completed"


def test_cancel_mid_stream() -> None:
    stream = sw.stream("openai-chat")
    stream.feed(_sse(_text_chunk("a")))
    events = stream.cancel()
    assert [e.as_dict() for e in events] == [
        {
            "event": "MessageCompleted",
            "status": "cancelled",
            "stop_reason": None,
            "provider_stop_reason": None,
            "choice": 0,
        }
    ]
    assert stream.result.status == "cancelled" and stream.result.text == "a"


def test_result_is_valid_before_the_end() -> None:
    stream = sw.stream("openai-chat")
    assert stream.result.status == "in_progress" and not stream.result.final
    stream.feed(_sse(_text_chunk("Hi", "stop")))
    result = stream.result
    assert result.status == "in_progress" and result.text == "Hi" and result.stop_reason == "stop"
    assert stream.result is result, "unchanged streams return the cached snapshot"
    stream.feed(b"data: [DONE]\n\n")
    assert stream.result is not result and stream.result.status == "completed"


def test_accepts_any_buffer() -> None:
    data = _sse(_text_chunk("é", "stop"), "[DONE]")
    for buffer in (bytearray(data), memoryview(data)):
        stream = sw.stream("openai-chat")
        stream.feed(buffer)
        assert stream.result.text == "é"


def test_options_request_id_and_http_status() -> None:
    stream = sw.stream("openai-chat", request_id="req_123", http_status=200)
    stream.feed(_sse({"error": {"message": "m", "type": "server_error"}}))
    stream.close()
    result = stream.result
    assert result.http_ok is True
    assert result.error is not None and result.error.request_id == "req_123"
    assert sw.stream("openai-chat", http_status=503).result.http_ok is False


def test_clock_metrics() -> None:
    ticks = iter([100.0, 100.5, 101.0, 103.0, 103.5])
    stream = sw.stream("openai-chat", clock=lambda: next(ticks))  # created at 100.0
    assert stream.feed(b": keep-alive\n\n") == []  # no events: the clock is not read
    stream.feed(_sse({"choices": [{"index": 0, "delta": {"role": "assistant"}}]}))  # 100.5
    stream.feed(_sse(_text_chunk("a")))  # 101.0: first content
    stream.feed(_sse(_text_chunk("b", "stop")))  # 103.0
    stream.close()  # 103.5
    metrics = stream.result.metrics
    assert metrics.time_to_first_event == 0.5
    assert metrics.time_to_first_content == 1.0
    assert metrics.largest_gap == 2.0
    untimed = sw.stream("openai-chat")
    untimed.feed(_sse(_text_chunk("a")))
    assert untimed.result.metrics.time_to_first_event is None


def test_metrics_counts() -> None:
    stream = sw.stream("openai-chat")
    data = _sse(_text_chunk("héllo"), _text_chunk("", "stop"), "[DONE]")
    events = stream.feed(data)
    metrics = stream.result.metrics
    assert metrics.bytes_received == len(data)
    assert metrics.wire_events == 3
    assert metrics.events == len(events)
    assert metrics.text_bytes == len("héllo".encode())


# --- caps -------------------------------------------------------------------------


def _call_fragment(index: int, args: str) -> dict[str, Any]:
    fragment = {"index": index, "id": f"c{index}", "function": {"name": "f", "arguments": args}}
    return {"choices": [{"index": 0, "delta": {"tool_calls": [fragment]}}]}


def test_caps_are_typed_errors() -> None:
    stream = sw.stream("openai-chat", max_tool_calls=2)
    stream.feed(_sse(*[_call_fragment(i, "{}") for i in range(4)]))
    stream.close()
    result = stream.result
    assert result.status == "error" and result.error is not None
    assert (result.error.phase, result.error.type) == ("limit", "too_many_tool_calls")
    assert len(result.tool_calls) == 2 and not result.deltas_ok

    stream = sw.stream("openai-chat", max_tool_argument_chars=8)
    stream.feed(_sse(_call_fragment(0, '{"a":'), _call_fragment(0, '"long"}')))
    stream.close()
    assert (
        stream.result.error is not None and stream.result.error.type == "tool_arguments_too_large"
    )
    assert stream.result.tool_calls[0].raw_arguments == '{"a":'

    stream = sw.stream("openai-chat", max_choices=1)
    stream.feed(_sse({"choices": [{"index": i, "delta": {"content": "x"}} for i in range(3)]}))
    assert stream.result.error is not None and stream.result.error.type == "too_many_choices"


def test_framing_caps_end_the_stream_in_error() -> None:
    stream = sw.stream("openai-chat", max_line_bytes=120)
    events = stream.feed(_sse(_text_chunk("ok")) + b"data: " + b"x" * 300 + b"\n\n")
    assert isinstance(events[-1], sw.ErrorReceived) and events[-1].type == "line_too_large"
    more = _sse(_text_chunk("more"))
    assert stream.feed(more) == [], "bytes after a framing error are ignored"
    fed = stream.result.metrics.bytes_received
    stream.close()
    assert stream.result.metrics.bytes_received == fed
    assert stream.result.status == "error" and stream.result.text == "ok"
    assert not stream.result.framing_ok and stream.result.metrics.framing_errors == 1


# --- tool calls on real streams ------------------------------------------------------


def test_one_tool_call_result_is_correlated() -> None:
    stream, _ = _fixture("06-one-tool-call").replay([_fixture("06-one-tool-call").raw])
    result = stream.result
    assert result.executable
    message = sw.tool_result(stream, "call_reg06_weather", "18C and sunny")
    assert message == {
        "role": "tool",
        "tool_call_id": "call_reg06_weather",
        "content": "18C and sunny",
    }
    with pytest.raises(sw.ToolResultError):
        sw.tool_result(result, "call_not_from_this_stream", "x")


def test_failing_tool_is_reported_back_once() -> None:
    fixture = _fixture("09-failing-tool")
    stream, _ = fixture.replay([fixture.raw])
    result = stream.result
    ledger = sw.ToolLedger()
    call = ledger.authorize(result, "call_reg09_db")
    ledger.start(call.id or "")
    try:
        raise LookupError("relation 'missing' does not exist")  # the tool fails
    except LookupError as exc:
        ledger.fail("call_reg09_db")
        reply = sw.tool_result(result, "call_reg09_db", f"error: {exc}", is_error=True)
    assert ledger.state("call_reg09_db") == "failed"
    assert reply["tool_call_id"] == "call_reg09_db" and reply["content"].startswith("error:")
    with pytest.raises(sw.ToolCallStateError):
        ledger.authorize(result, "call_reg09_db")  # never executed twice


def test_legacy_function_call_result_quotes_the_name() -> None:
    fixture = _fixture("legacy-function-call")
    stream, _ = fixture.replay([fixture.raw])
    reply = sw.tool_result(stream.result, "function_call-0", "sunny")
    assert reply == {"role": "function", "name": "get_weather", "content": "sunny"}


CHAT_TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "get_weather",
            "parameters": {
                "type": "object",
                "properties": {"city": {"type": "string"}, "units": {"enum": ["c", "f"]}},
                "required": ["city", "units"],
            },
        },
    }
]


def test_schema_validation_from_request_tools() -> None:
    fixture = _fixture("06-one-tool-call")
    stream = sw.stream("openai-chat", tools=CHAT_TOOLS)
    stream.feed(fixture.raw)
    stream.close()
    assert stream.result.executable

    strict = json.loads(json.dumps(CHAT_TOOLS))
    strict[0]["function"]["parameters"]["required"].append("country")
    stream = sw.stream("openai-chat", tools=sw.ToolSet(strict))
    events = stream.feed(fixture.raw) + stream.close()
    completed = [e for e in events if isinstance(e, sw.ToolCallCompleted)]
    assert completed[0].invalid_reason is not None and "country" in completed[0].invalid_reason
    result = stream.result
    assert result.status == "completed" and not result.executable
    assert result.tool_calls[0].state == "rejected"

    stream = sw.stream("openai-chat", tools=[{"type": "function", "function": {"name": "other"}}])
    stream.feed(fixture.raw)
    stream.close()
    assert "did not declare" in (stream.result.tool_calls[0].invalid_reason or "")


# --- the fast path is the general path -------------------------------------------------


@pytest.mark.parametrize("fixture", CHAT_FIXTURES, ids=lambda f: f.name)
def test_fast_path_matches_general_path(fixture: Fixture, monkeypatch: pytest.MonkeyPatch) -> None:
    fast_stream, fast_events = fixture.replay([fixture.fed_bytes()])
    monkeypatch.setattr(openai_chat.OpenAIChatStream, "shapes", None)  # every chunk: general path
    slow_stream, slow_events = fixture.replay([fixture.fed_bytes()])
    assert fast_events == slow_events
    assert facts(fast_stream.result) == facts(slow_stream.result)


# --- properties ------------------------------------------------------------------------

_texts = st.text(st.characters(codec="utf-8"), min_size=1, max_size=12)


@st.composite
def chat_streams(draw: st.DrawFn) -> tuple[list[bytes], list[str], list[tuple[str, str]]]:
    """A well-formed stream: text deltas and interleaved parallel calls, then its chunking."""
    texts = draw(st.lists(_texts, max_size=8))
    calls = draw(st.lists(st.dictionaries(st.text(max_size=5), _texts, max_size=3), max_size=3))
    arguments = [json.dumps(c, ensure_ascii=draw(st.booleans())) for c in calls]
    pieces: list[tuple[int, str]] = []
    for i, args in enumerate(arguments):
        cuts = sorted(draw(st.lists(st.integers(0, len(args)), max_size=4)))
        bounds = zip([0, *cuts], [*cuts, len(args)], strict=True)
        pieces += [(i, p) for p in (args[a:b] for a, b in bounds) if p]
    per_call_order: dict[int, list[str]] = {}
    for i, piece in pieces:
        per_call_order.setdefault(i, []).append(piece)
    chunks: list[Any] = [{"choices": [{"index": 0, "delta": {"role": "assistant", "content": ""}}]}]
    chunks += [_text_chunk(t) for t in texts]
    for i in range(len(arguments)):
        head = {
            "index": i,
            "id": f"call_{i}",
            "type": "function",
            "function": {"name": f"tool{i}", "arguments": ""},
        }
        chunks.append({"choices": [{"index": 0, "delta": {"tool_calls": [head]}}]})
    # Fragments of different calls interleave, each call's own pieces stay in order.
    queues = {i: list(p) for i, p in per_call_order.items()}
    while any(queues.values()):
        i = draw(st.sampled_from([k for k, q in queues.items() if q]))
        fragment = {"index": i, "function": {"arguments": queues[i].pop(0)}}
        chunks.append({"choices": [{"index": 0, "delta": {"tool_calls": [fragment]}}]})
    chunks.append(
        {"choices": [{"index": 0, "delta": {}, "finish_reason": "tool_calls" if calls else "stop"}]}
    )
    data = _sse(*chunks, "[DONE]")
    points = draw(st.lists(st.integers(0, len(data)), max_size=10))
    return split_at(data, points), texts, [(f"tool{i}", a) for i, a in enumerate(arguments)]


@given(chat_streams())
def test_generated_streams_round_trip(
    case: tuple[list[bytes], list[str], list[tuple[str, str]]],
) -> None:
    chunks, texts, calls = case
    stream = sw.stream("openai-chat")
    for chunk in chunks:
        stream.feed(chunk)
    stream.close()
    result = stream.result
    assert result.status == "completed"
    assert result.text == "".join(texts)
    assert [(c.name, c.raw_arguments) for c in result.tool_calls] == [
        (name, args) for name, args in calls
    ]
    assert all(
        c.arguments == json.loads(a) for c, (_, a) in zip(result.tool_calls, calls, strict=True)
    )
    assert result.executable == bool(calls)


_never_raises = partial(never_raises, "openai-chat", valid_calls="all")


@pytest.mark.parametrize("fixture", CHAT_FIXTURES, ids=lambda f: f.name)
def test_mutated_fixtures_never_raise(fixture: Fixture) -> None:
    if len(fixture.raw) > 20_000:
        pytest.skip("large inputs: the small ones exercise the same paths")
    for i, data in enumerate(mutations(fixture.raw, seed=len(fixture.raw))):
        for _, chunks in list(chunkings(data, random_rounds=2))[:6]:
            _never_raises(chunks)
        del i


@given(st.binary(max_size=400), st.lists(st.integers(0, 400), max_size=6))
def test_arbitrary_bytes_never_raise(data: bytes, points: list[int]) -> None:
    _never_raises(split_at(data, [p for p in points if p <= len(data)]))


_json_values = st.recursive(
    st.none() | st.booleans() | st.integers(-3, 3) | st.text(max_size=4),
    lambda inner: (
        st.lists(inner, max_size=3)
        | st.dictionaries(
            st.sampled_from(
                [
                    "choices",
                    "index",
                    "delta",
                    "content",
                    "tool_calls",
                    "id",
                    "function",
                    "arguments",
                    "name",
                    "finish_reason",
                    "usage",
                    "error",
                    "refusal",
                    "reasoning",
                    "function_call",
                    "type",
                    "x",
                ]
            ),
            inner,
            max_size=4,
        )
    ),
    max_leaves=12,
)


@given(st.lists(_json_values, max_size=6), st.booleans())
def test_arbitrary_json_never_raises(payloads: list[Any], done: bool) -> None:
    data = _sse(*[json.dumps(p) for p in payloads], *(["[DONE]"] if done else []))
    _never_raises([data])
