"""The ``bedrock-invoke`` adapter: Amazon Bedrock ``InvokeModelWithResponseStream``.

Implements the event stream of ``POST /model/{modelId}/invoke-with-response-stream``
as the Bedrock API reference describes it ("InvokeModelWithResponseStream",
"ResponseStream", "PayloadPart", docs.aws.amazon.com/bedrock/latest/APIReference,
checked 2026-11-29; botocore 1.43's ``bedrock-runtime`` model): an AWS
EventStream body whose ``chunk`` events carry ``{"bytes": <base64>}`` (plus
Bedrock's padding member ``p``, ignored), the bytes being one event of the
model's *own* streaming format. Framing, the in-stream exceptions
(``modelTimeoutException`` and the rest) and error frames are
``_eventstream.py``'s.

``model_format`` says which format that is:

* ``"anthropic"`` (the default): Claude models ("Anthropic Claude Messages
  API" in the Bedrock user guide's inference parameters, checked 2026-11-29):
  the chunks are the Anthropic Messages stream events (``message_start``,
  ``content_block_*``, ``message_delta``, ``message_stop``, ``error``), and
  they go through the same ``AnthropicMachine`` the ``anthropic`` SSE adapter
  uses: one implementation of Anthropic's semantics, composed here, so the
  statuses, tool calls, reasoning and ``provider_content`` are exactly the
  anthropic adapter's. Tool results are built in Anthropic's format
  (``sw.tool_result``: ``tool_result`` + ``tool_use_id``).

No other value is accepted yet. The OpenAI gpt-oss models on Bedrock take a
Chat Completions request body and stream ``chat.completion.chunk`` objects
(the user guide's "OpenAI models" page, checked 2026-11-29); serving them here
needs the ``openai-chat`` semantics as a machine fed decoded objects, as the
anthropic adapter has (``AnthropicMachine``), which does not exist yet. Other
families (Nova, Llama, Mistral, Cohere, ...) stream formats of their own that
no streamwire protocol implements: use ``bedrock-converse`` for them.

The last chunk carries ``amazon-bedrock-invocationMetrics``
(``inputTokenCount``, ``outputTokenCount``, ``invocationLatency``,
``firstByteLatency``, and the cache counts where reported): kept verbatim in
the result's ``provider_metrics``. The usage is the model's own (Anthropic's
``message_delta`` figures, final at ``message_stop``); when the model reported
none, the invocation metrics' token counts become the final usage, reported
before the ``message_stop`` they arrive with.
"""

from __future__ import annotations

import base64
import binascii
from typing import Any

from .._core import EventStreamMessage
from .._json import loads
from ..events import Event
from ..kinds import ModelFormat
from ..result import ReadOnlyDict, Usage
from ._eventstream import EventStreamStream
from ._values import int_or_none
from .anthropic_machine import AnthropicMachine

__all__ = ["INVOCATION_METRICS", "MODEL_FORMATS", "BedrockInvokeStream", "invocation_usage"]

#: The accepted ``model_format`` values.
MODEL_FORMATS: tuple[ModelFormat, ...] = ("anthropic",)
#: The member of the last chunk's JSON that Bedrock adds.
INVOCATION_METRICS = "amazon-bedrock-invocationMetrics"
_CHUNK_FIELDS = frozenset({"bytes", "p"})


class BedrockInvokeStream(EventStreamStream):
    """Bedrock ``InvokeModelWithResponseStream`` adapter (``sw.stream("bedrock-invoke")``)."""

    protocol = "bedrock-invoke"

    def __init__(self, *, model_format: ModelFormat = "anthropic", **options: Any) -> None:
        """Options: ``model_format``, the format of the model's own events
        inside each chunk (only ``"anthropic"`` for now; see the module
        docstring); the rest are ``EventStreamStream``'s (``max_message_bytes``)
        and ``Stream``'s. An unknown ``model_format`` raises ``ValueError``."""
        if model_format not in MODEL_FORMATS:
            known = ", ".join(MODEL_FORMATS)
            raise ValueError(f"unknown model_format {model_format!r}; known: {known}")
        super().__init__(**options)
        self.model_format: ModelFormat = model_format
        self._machine = AnthropicMachine(
            self._acc, extension_fields=frozenset({INVOCATION_METRICS})
        )
        self._model_usage = False

    def _on_event(self, message: EventStreamMessage, out: list[Event]) -> None:
        acc = self._acc
        if message.event_type != "chunk":
            name = message.event_type or ":event-type missing"
            out.append(acc.unknown_event(name, message.payload.decode("utf-8", "replace")))
            return
        payload = self._payload(message, out)
        if payload is None:
            return
        if not _CHUNK_FIELDS.issuperset(payload):
            for key in payload:
                if key not in _CHUNK_FIELDS:
                    acc.unknown_field(f"chunk.{key}")
        encoded = payload.get("bytes")
        try:
            if type(encoded) is not str:
                raise ValueError("a chunk has no base64 'bytes' string")
            text = base64.b64decode(encoded, validate=True).decode("utf-8")
        except (binascii.Error, ValueError) as exc:  # UnicodeDecodeError is a ValueError
            why = exc if type(encoded) is not str else f"its bytes are not base64 of UTF-8: {exc}"
            out.append(acc.fail("framing", "invalid_chunk", None, f"{why}"))
            return
        try:
            obj = loads(text)
        except ValueError as exc:
            self._machine.on_not_json(text, out, None, exc)
            return
        if type(obj) is dict:
            self._observe(obj, out)
        self._machine.on_event(obj, out, None, text)

    def _observe(self, obj: dict[str, Any], out: list[Event]) -> None:
        """Bedrock's additions to the model's events, before the machine applies them."""
        kind = obj.get("type")
        if kind == "message_delta" and type(obj.get("usage")) is dict:
            self._model_usage = True
        metrics = obj.get(INVOCATION_METRICS)
        if metrics is None:
            return
        acc = self._acc
        if type(metrics) is not dict:
            acc.warn("invocation_metrics_not_object", f"{INVOCATION_METRICS} is not an object")
            return
        acc.provider_metrics[INVOCATION_METRICS] = metrics
        if kind == "message_stop" and not self._model_usage and self._machine.phase != "stopped":
            out.append(acc.report_usage(invocation_usage(metrics, final=True)))

    def _on_eof(self, out: list[Event]) -> None:
        self._machine.on_eof(out)


def invocation_usage(metrics: dict[str, Any], *, final: bool) -> Usage:
    """A ``Usage`` from ``amazon-bedrock-invocationMetrics``."""
    return Usage(
        input_tokens=int_or_none(metrics.get("inputTokenCount")),
        output_tokens=int_or_none(metrics.get("outputTokenCount")),
        total_tokens=None,
        cache_read_tokens=int_or_none(metrics.get("cacheReadInputTokenCount")),
        cache_creation_tokens=int_or_none(metrics.get("cacheWriteInputTokenCount")),
        reasoning_tokens=None,
        final=final,
        raw=ReadOnlyDict(metrics),
    )
