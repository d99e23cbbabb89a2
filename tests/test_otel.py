"""``sw.otel_attributes`` and ``sw.otel_set_span``: the GenAI semantic conventions, checked.

* Every ``gen_ai.*`` name streamwire emits, over every fixture's result, is
  a name the published ``opentelemetry-semantic-conventions`` package defines,
  and every provider and operation value one of its well-known values.
* ``gen_ai.usage.input_tokens`` counts all input tokens: Anthropic's (and
  Bedrock's) cache reads and writes are added to their ``input_tokens``;
  OpenAI's prompt figure, which already holds its cached tokens, is kept.
* A stream that never finished has ``error`` among its finish reasons.
* ``otel_set_span`` against a real OpenTelemetry SDK: the exported span
  carries the attributes, and a failed stream's span has status ``ERROR``.
"""

from __future__ import annotations

import json

import pytest
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.semconv._incubating.attributes import gen_ai_attributes
from opentelemetry.semconv.attributes import error_attributes
from opentelemetry.trace import StatusCode

import streamwire as sw
from fixture_replay import manifests

GEN_AI_NAMES = {
    value
    for name, value in vars(gen_ai_attributes).items()
    if name.startswith("GEN_AI_") and isinstance(value, str)
}
PROVIDERS = {v.value for v in gen_ai_attributes.GenAiProviderNameValues}
OPERATIONS = {v.value for v in gen_ai_attributes.GenAiOperationNameValues}


def _result(protocol: str, raw: bytes, **options: object) -> sw.StreamResult:
    s = sw.stream(protocol, **options)  # type: ignore[call-overload]
    s.feed(raw)
    s.close()
    return s.result


def _sse(event: str, payload: dict[str, object]) -> bytes:
    return f"event: {event}\ndata: {json.dumps(payload)}\n\n".encode()


def test_every_name_and_value_is_a_published_one() -> None:
    seen: set[str] = set()
    for fixture in manifests():
        if fixture.messages:
            continue
        result = _result(fixture.protocol, fixture.raw, **fixture.manifest.get("options", {}))
        attrs = sw.otel_attributes(result)
        names = {k for k in attrs if k.startswith("gen_ai.")}
        assert names <= GEN_AI_NAMES, (fixture.name, names - GEN_AI_NAMES)
        assert attrs["gen_ai.provider.name"] in PROVIDERS, fixture.name
        assert attrs["gen_ai.operation.name"] in OPERATIONS
        assert all(isinstance(v, str | bool | int | float | list) for v in attrs.values())
        seen |= names
    # The usage names are among those the fixtures exercise.
    assert {
        gen_ai_attributes.GEN_AI_USAGE_INPUT_TOKENS,
        gen_ai_attributes.GEN_AI_USAGE_OUTPUT_TOKENS,
        gen_ai_attributes.GEN_AI_USAGE_CACHE_READ_INPUT_TOKENS,
        gen_ai_attributes.GEN_AI_USAGE_CACHE_CREATION_INPUT_TOKENS,
        gen_ai_attributes.GEN_AI_RESPONSE_FINISH_REASONS,
    } <= seen
    assert error_attributes.ERROR_TYPE == "error.type"


ANTHROPIC_CACHED = b"".join(
    [
        _sse(
            "message_start",
            {
                "type": "message_start",
                "message": {
                    "id": "msg_1",
                    "type": "message",
                    "role": "assistant",
                    "model": "claude-test",
                    "content": [],
                    "usage": {
                        "input_tokens": 10,
                        "cache_read_input_tokens": 100,
                        "cache_creation_input_tokens": 5,
                        "output_tokens": 1,
                    },
                },
            },
        ),
        _sse(
            "content_block_start",
            {
                "type": "content_block_start",
                "index": 0,
                "content_block": {"type": "text", "text": ""},
            },
        ),
        _sse(
            "content_block_delta",
            {
                "type": "content_block_delta",
                "index": 0,
                "delta": {"type": "text_delta", "text": "hi"},
            },
        ),
        _sse("content_block_stop", {"type": "content_block_stop", "index": 0}),
        _sse(
            "message_delta",
            {
                "type": "message_delta",
                "delta": {"stop_reason": "end_turn"},
                "usage": {"output_tokens": 7},
            },
        ),
        _sse("message_stop", {"type": "message_stop"}),
    ]
)


def test_anthropic_cached_tokens_count_as_input() -> None:
    result = _result("anthropic", ANTHROPIC_CACHED)
    assert result.usage is not None and result.usage.input_tokens == 10  # as reported
    attrs = sw.otel_attributes(result)
    assert attrs["gen_ai.usage.input_tokens"] == 115
    assert attrs["gen_ai.usage.cache_read.input_tokens"] == 100
    assert attrs["gen_ai.usage.cache_creation.input_tokens"] == 5
    assert attrs["gen_ai.response.finish_reasons"] == ["end_turn"]


def test_openai_prompt_tokens_already_hold_the_cached_ones() -> None:
    chunk = {
        "id": "c1",
        "object": "chat.completion.chunk",
        "model": "m",
        "choices": [{"index": 0, "delta": {"content": "hi"}, "finish_reason": "stop"}],
        "usage": {
            "prompt_tokens": 120,
            "completion_tokens": 3,
            "total_tokens": 123,
            "prompt_tokens_details": {"cached_tokens": 100},
        },
    }
    raw = b"data: " + json.dumps(chunk).encode() + b"\n\ndata: [DONE]\n\n"
    attrs = sw.otel_attributes(_result("openai-chat", raw))
    assert attrs["gen_ai.usage.input_tokens"] == 120
    assert attrs["gen_ai.usage.cache_read.input_tokens"] == 100


@pytest.mark.parametrize(
    ("cut", "error_type"),
    [(len(ANTHROPIC_CACHED) // 2, "incomplete"), (0, "incomplete")],
    ids=["mid-stream", "nothing"],
)
def test_a_stream_that_never_finished_reports_error_as_its_finish_reason(
    cut: int, error_type: str
) -> None:
    attrs = sw.otel_attributes(_result("anthropic", ANTHROPIC_CACHED[:cut]))
    assert attrs["gen_ai.response.finish_reasons"] == ["error"]
    assert attrs["error.type"] == error_type


def test_a_cancelled_stream_and_a_provider_error() -> None:
    s = sw.stream("openai-chat")
    s.cancel()
    attrs = sw.otel_attributes(s.result)
    assert (attrs["error.type"], attrs["gen_ai.response.finish_reasons"]) == (
        "cancelled",
        ["error"],
    )
    raw = b'data: {"error": {"type": "server_error", "message": "boom"}}\n\n'
    assert sw.otel_attributes(_result("openai-chat", raw))["error.type"] == "server_error"


def _exported(result: sw.StreamResult) -> object:
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    tracer = provider.get_tracer("streamwire-test")
    with tracer.start_as_current_span("chat claude-test") as span:
        returned = sw.otel_set_span(span, result, request_model="claude-test")
    (finished,) = exporter.get_finished_spans()
    assert dict(finished.attributes or {}) == {
        k: tuple(v) if isinstance(v, list) else v for k, v in returned.items()
    }
    return finished


def test_otel_set_span_on_a_real_sdk_span() -> None:
    span = _exported(_result("anthropic", ANTHROPIC_CACHED))
    attributes = span.attributes  # type: ignore[attr-defined]
    assert attributes["gen_ai.usage.input_tokens"] == 115
    assert attributes["gen_ai.request.model"] == "claude-test"
    assert span.status.status_code is StatusCode.UNSET  # type: ignore[attr-defined]

    span = _exported(_result("anthropic", ANTHROPIC_CACHED[:200]))
    assert span.status.status_code is StatusCode.ERROR  # type: ignore[attr-defined]
    assert span.status.description == "incomplete"  # type: ignore[attr-defined]
    assert span.attributes["error.type"] == "incomplete"  # type: ignore[attr-defined]
