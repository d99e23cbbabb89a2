"""The ``bedrock-invoke`` adapter beyond its fixtures.

The adapter composes the EventStream plumbing with the anthropic adapter's
``AnthropicMachine``; the strongest check of that is here: the same Anthropic
events, sent as SSE to ``anthropic`` and as base64 chunks to ``bedrock-invoke``,
give the same result. Also: the option, Bedrock's invocation metrics and
where usage comes from, chunk defects, tool results, and that no chunk makes
the adapter raise.
"""

from __future__ import annotations

import base64
import json
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

import streamwire as sw
from bedrock_frames import anthropic_chunk, chunk_frame, event_frame
from chunking import chunkings
from fixture_replay import Fixture, facts, manifests

FIXTURES = [f for f in manifests() if f.protocol == "bedrock-invoke"]
METRICS = {
    "inputTokenCount": 7,
    "outputTokenCount": 3,
    "invocationLatency": 90,
    "firstByteLatency": 40,
}
MESSAGE = {
    "id": "msg_x",
    "type": "message",
    "role": "assistant",
    "model": "claude-x",
    "content": [],
    "stop_reason": None,
    "stop_sequence": None,
    "usage": {"input_tokens": 7, "output_tokens": 1},
}


def _fixture(case: str) -> Fixture:
    return next(f for f in FIXTURES if f.manifest["case"] == case)


def _events(stop_usage: bool = True) -> list[dict[str, Any]]:
    delta: dict[str, Any] = {"type": "message_delta", "delta": {"stop_reason": "end_turn"}}
    if stop_usage:
        delta["usage"] = {"output_tokens": 3}
    return [
        {"type": "message_start", "message": MESSAGE},
        {"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}},
        {"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": "Hi"}},
        {"type": "content_block_stop", "index": 0},
        delta,
        {"type": "message_stop", "amazon-bedrock-invocationMetrics": METRICS},
    ]


def _run(data: bytes, **options: Any) -> tuple[sw.Stream, list[sw.Event]]:
    stream = sw.stream("bedrock-invoke", **options)
    events = stream.feed(data) + stream.close()
    return stream, events


def test_model_format_option() -> None:
    assert sw.stream("bedrock-invoke").model_format == "anthropic"  # type: ignore[attr-defined]
    with pytest.raises(ValueError, match="unknown model_format 'openai-chat'; known: anthropic"):
        sw.stream("bedrock-invoke", model_format="openai-chat")


def test_the_same_events_as_the_anthropic_adapter() -> None:
    if "anthropic" not in sw.known_protocols():
        pytest.skip("no anthropic adapter")
    compared = 0
    for fixture in FIXTURES:
        try:
            messages = sw.EventStreamDecoder().feed(fixture.raw)
        except sw.FramingError:
            continue  # not EventStream at all
        chunks = [json.loads(m.payload) for m in messages if m.event_type == "chunk"]
        if len(chunks) != len(messages) or not chunks:
            continue  # exceptions and defects have no SSE counterpart
        if fixture.manifest["case"] == "no-model-usage":
            continue  # Bedrock's invocation metrics supply the usage: tested below
        try:
            objects = [base64.b64decode(c["bytes"], validate=True) for c in chunks]
        except ValueError:
            continue  # a defect the SSE form cannot carry
        sse = b"".join(
            b"event: " + json.loads(o)["type"].encode() + b"\ndata: " + o + b"\n\n" for o in objects
        )
        anthropic = sw.stream("anthropic")
        expected = anthropic.feed(sse) + anthropic.close()
        invoke, got = _run(fixture.raw)
        assert got == expected, fixture.name
        left, right = facts(anthropic.result), facts(invoke.result)
        assert left == right, fixture.name
        assert anthropic.result.provider_content == invoke.result.provider_content
        compared += 1
    assert compared >= 4


def test_invocation_metrics_are_kept_and_model_usage_wins() -> None:
    stream, events = _run(b"".join(chunk_frame(e) for e in _events()))
    result = stream.result
    assert dict(result.provider_metrics) == {"amazon-bedrock-invocationMetrics": METRICS}
    finals = [e.usage for e in events if isinstance(e, sw.UsageReported) and e.usage.final]
    assert len(finals) == 1 and finals[0].raw == {"input_tokens": 7, "output_tokens": 3}


def test_invocation_metrics_are_the_usage_when_the_model_reports_none() -> None:
    stream, events = _run(b"".join(chunk_frame(e) for e in _events(stop_usage=False)))
    usage = stream.result.usage
    assert usage is not None and usage.final and (usage.input_tokens, usage.output_tokens) == (7, 3)
    assert usage.raw == METRICS
    names = [type(e).__name__ for e in events]
    assert names[-2:] == ["UsageReported", "MessageCompleted"]


@pytest.mark.parametrize(
    ("payload", "kind"),
    [
        ({"p": "abc"}, "invalid_chunk"),
        ({"bytes": 12}, "invalid_chunk"),
        ({"bytes": "//79"}, "invalid_chunk"),  # base64 of bytes that are not UTF-8
        ({"bytes": base64.b64encode(b"not json").decode()}, "invalid_json"),
        ({"bytes": base64.b64encode(b"[1]").decode()}, "invalid_payload"),
    ],
)
def test_chunk_defects_are_framing_errors(payload: dict[str, Any], kind: str) -> None:
    frame = event_frame("chunk", payload, pad=None)
    stream, _ = _run(anthropic_chunk("message_start", message=MESSAGE) + frame)
    error = stream.result.error
    assert error is not None and (error.phase, error.type) == ("framing", kind)


def test_unknown_chunk_members_are_counted() -> None:
    raw = json.dumps({"type": "message_start", "message": MESSAGE}).encode()
    frame = event_frame("chunk", {"bytes": base64.b64encode(raw).decode(), "future": 1})
    stream, _ = _run(frame)
    assert dict(stream.result.unknown_fields) == {"chunk.future": 1}


def test_tool_result_is_anthropic_shaped() -> None:
    fixture = _fixture("anthropic-tool-use")
    stream, _ = fixture.replay([fixture.raw])
    assert sw.tool_result(stream, "toolu_bdrk_01", "18C", is_error=True) == {
        "type": "tool_result",
        "tool_use_id": "toolu_bdrk_01",
        "content": "18C",
        "is_error": True,
    }
    with pytest.raises(sw.ToolResultError):
        sw.tool_result(stream, "toolu_other", "x")


def test_an_error_after_message_stop_is_a_warning() -> None:
    frames = b"".join(chunk_frame(e) for e in _events())
    stream, _ = _run(frames + sw.encode_eventstream({":message-type": "error"}, b""))
    assert stream.result.status == "completed"
    assert [w.code for w in stream.result.warnings] == ["error_after_end"]


def test_cancel_mid_chunk() -> None:
    data = b"".join(chunk_frame(e) for e in _events())
    for _, chunks in list(chunkings(data[:300], random_rounds=2))[:20]:
        stream = sw.stream("bedrock-invoke")
        for chunk in chunks:
            stream.feed(chunk)
        events = stream.cancel()
        assert stream.result.status == "cancelled" and not stream.result.executable
        assert isinstance(events[-1], sw.MessageCompleted)


_KEYS = ["type", "index", "delta", "text", "message", "content_block", "usage", "stop_reason"]
_json_values = st.recursive(
    st.none() | st.booleans() | st.integers(-1, 2) | st.text(max_size=4),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.sampled_from(_KEYS), inner),
    max_leaves=10,
)


@given(st.lists(_json_values, max_size=8))
def test_arbitrary_model_events_never_raise(values: list[Any]) -> None:
    stream = sw.stream("bedrock-invoke")
    events: list[sw.Event] = []
    for value in values:
        events += stream.feed(chunk_frame(json.dumps(value).encode()))
    events += stream.close()
    assert stream.result.final and isinstance(events[-1], sw.MessageCompleted)
