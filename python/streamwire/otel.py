"""A result as OpenTelemetry span attributes, by the GenAI semantic conventions.

``otel_attributes(result)`` is a plain dict keyed by the conventions' names
for an inference span (``gen_ai.client.inference``; the GenAI conventions
now live in github.com/open-telemetry/semantic-conventions-genai). Every
``gen_ai.*`` name and value used here was checked, 2026-12-01, against the
published ``opentelemetry-semantic-conventions`` package (0.66b2,
``opentelemetry.semconv._incubating.attributes.gen_ai_attributes``), and
``tests/test_otel.py`` checks them against it on every run:

* ``gen_ai.operation.name`` (``chat``), ``gen_ai.provider.name`` (the
  well-known values ``openai``, ``anthropic``, ``gcp.gemini``,
  ``aws.bedrock``), ``gen_ai.request.model``, ``gen_ai.request.stream``;
* ``gen_ai.response.id``, ``gen_ai.response.model``,
  ``gen_ai.response.time_to_first_chunk``, and
  ``gen_ai.response.finish_reasons``: one per choice, the provider's raw stop
  reason (the normalized one when it sent none), and ``error`` for a choice
  that never finished (an error, a cut, a cancel), the finish reason the
  conventions' output-message schema gives a failed generation;
* ``gen_ai.usage.input_tokens``, which the conventions define as all input
  tokens, cached ones included: Anthropic and Bedrock report cache reads and
  writes beside ``input_tokens`` rather than inside it, so for those
  protocols the three are added up (OpenAI and Gemini already count cached
  tokens in their prompt figure); ``gen_ai.usage.output_tokens``,
  ``gen_ai.usage.cache_read.input_tokens``,
  ``gen_ai.usage.cache_creation.input_tokens``,
  ``gen_ai.usage.reasoning.output_tokens``;
* ``error.type``: the provider's error type (or code) for an ``error``
  result, the status itself for ``incomplete``, ``cancelled`` and
  ``protocol_conflict``.

What the conventions have no name for is under ``streamwire.*``. Values that
are unknown are left out, as the conventions ask.

No OpenTelemetry dependency: ``otel_attributes`` returns a dict, and
``otel_set_span(span, result)`` calls the span's own ``set_attributes`` and,
for a failed stream, ``set_status`` with OpenTelemetry's ``Status``
(imported then: a span exists, so the API is installed).
"""

from __future__ import annotations

from typing import Any

from .result import StreamResult

__all__ = ["otel_attributes", "otel_set_span"]

#: ``gen_ai.provider.name`` well-known values, by protocol.
_PROVIDERS = {
    "openai-chat": "openai",
    "openai-responses": "openai",
    "openai-responses-ws": "openai",
    "openai-realtime": "openai",
    "anthropic": "anthropic",
    "gemini": "gcp.gemini",
    "gemini-json": "gcp.gemini",
    "gemini-live": "gcp.gemini",
    "bedrock-converse": "aws.bedrock",
    "bedrock-invoke": "aws.bedrock",
}
#: Protocols whose ``input_tokens`` leave out cache reads and writes.
_CACHE_BESIDE_INPUT = frozenset({"anthropic", "bedrock-invoke", "bedrock-converse"})
#: Statuses that count as an error for ``error.type`` (besides ``error`` itself).
_FAILED = frozenset({"incomplete", "cancelled", "protocol_conflict"})
#: A choice's finish reason when it never finished.
_UNFINISHED = frozenset({"error", "incomplete", "cancelled", "protocol_conflict"})


def otel_attributes(
    result: StreamResult,
    *,
    operation_name: str = "chat",
    provider_name: str | None = None,
    request_model: str | None = None,
) -> dict[str, Any]:
    """The result as OpenTelemetry GenAI span attributes (see the module docstring)."""
    m = result.metrics
    usage = result.usage
    attrs: dict[str, Any] = {
        "gen_ai.operation.name": operation_name,
        "gen_ai.provider.name": provider_name or _PROVIDERS.get(result.protocol, result.protocol),
        "gen_ai.request.stream": True,
        "gen_ai.request.model": request_model,
        "gen_ai.response.id": result.message_id,
        "gen_ai.response.model": result.model,
        "gen_ai.response.time_to_first_chunk": m.time_to_first_event,
    }
    reasons = []
    for choice in result.choices:
        reason = choice.provider_stop_reason or choice.stop_reason
        if reason is None and choice.status in _UNFINISHED:
            reason = "error"
        if reason is not None:
            reasons.append(reason)
    if reasons:
        attrs["gen_ai.response.finish_reasons"] = reasons
    if usage is not None:
        input_tokens = usage.input_tokens
        if input_tokens is not None and result.protocol in _CACHE_BESIDE_INPUT:
            input_tokens += (usage.cache_read_tokens or 0) + (usage.cache_creation_tokens or 0)
        attrs["gen_ai.usage.input_tokens"] = input_tokens
        attrs["gen_ai.usage.output_tokens"] = usage.output_tokens
        attrs["gen_ai.usage.cache_read.input_tokens"] = usage.cache_read_tokens
        attrs["gen_ai.usage.cache_creation.input_tokens"] = usage.cache_creation_tokens
        attrs["gen_ai.usage.reasoning.output_tokens"] = usage.reasoning_tokens
        attrs["streamwire.usage.final"] = usage.final
    if result.status == "error":
        error = result.error
        kind = None if error is None else (error.type or error.code)
        attrs["error.type"] = str(kind) if kind is not None else "error"
    elif result.status in _FAILED:
        attrs["error.type"] = result.status
    attrs.update(
        {
            "streamwire.protocol": result.protocol,
            "streamwire.status": result.status,
            "streamwire.stop_reason": result.stop_reason,
            "streamwire.executable": result.executable,
            "streamwire.tool_calls": sum(len(c.tool_calls) for c in result.choices),
            "streamwire.time_to_headers": m.time_to_headers,
            "streamwire.time_to_first_content": m.time_to_first_content,
            "streamwire.largest_gap": m.largest_gap,
            "streamwire.mean_gap": m.mean_gap,
            "streamwire.duration": m.duration,
            "streamwire.burst": m.burst,
            "streamwire.events": m.events,
            "streamwire.bytes": m.bytes_received,
            "streamwire.text_bytes": m.text_bytes,
            "streamwire.argument_bytes": m.argument_bytes,
            "streamwire.unknown_events": m.unknown_events,
            "streamwire.framing_errors": m.framing_errors,
        }
    )
    if result.warnings:
        attrs["streamwire.warnings"] = sorted({w.code for w in result.warnings})
    return {key: value for key, value in attrs.items() if value is not None}


def otel_set_span(
    span: Any,
    result: StreamResult,
    *,
    operation_name: str = "chat",
    provider_name: str | None = None,
    request_model: str | None = None,
) -> dict[str, Any]:
    """Sets ``otel_attributes(result, ...)`` on an OpenTelemetry ``span``, and
    marks the span's status ``ERROR`` (with ``error.type`` as its
    description) when the stream did not complete; returns the attributes.

    ``span`` is any object with ``set_attributes`` (an ``opentelemetry.trace.Span``);
    its status is set only when the ``opentelemetry`` API is importable.
    """
    attrs = otel_attributes(
        result,
        operation_name=operation_name,
        provider_name=provider_name,
        request_model=request_model,
    )
    span.set_attributes(attrs)
    error_type = attrs.get("error.type")
    if error_type is not None:
        try:
            from opentelemetry.trace import Status, StatusCode
        except ImportError:
            return attrs
        span.set_status(Status(StatusCode.ERROR, str(error_type)))
    return attrs
