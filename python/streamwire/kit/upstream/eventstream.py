"""Bedrock's streaming bodies for the mock: ConverseStream and InvokeModelWithResponseStream.

streamwire has no Bedrock encoder (a gateway serves clients the SSE
protocols), so the mock writes these two itself, as the Bedrock API reference
describes them ("ConverseStream", "ConverseStreamOutput",
"InvokeModelWithResponseStream", "PayloadPart";
docs.aws.amazon.com/bedrock/latest/APIReference, checked 2026-12-01): AWS
EventStream frames (``sw.encode_eventstream``) with the headers
``:event-type``, ``:content-type`` and ``:message-type`` in Bedrock's order,
JSON payloads with Bedrock's random padding member ``p``.

* ConverseStream, from the case's unified events: ``messageStart``; per
  content block ``contentBlockDelta`` (text, ``reasoningContent`` text and
  signature) or ``contentBlockStart`` / ``toolUse.input`` deltas for a call,
  then ``contentBlockStop``; ``messageStop`` with the stop reason;
  ``metadata`` with the usage. An error is an exception frame
  (``:message-type: exception``).
* InvokeModelWithResponseStream with a Claude model: ``chunk`` frames whose
  ``bytes`` are the base64 of Anthropic's own stream events, the last one
  carrying ``amazon-bedrock-invocationMetrics``.
"""

from __future__ import annotations

import base64
import json
from collections.abc import Sequence
from typing import Any

from ..._core import encode_eventstream
from ...events import (
    ErrorReceived,
    Event,
    MessageCompleted,
    MessageStarted,
    ReasoningDelta,
    TextDelta,
    ToolCallArgumentsDelta,
    ToolCallCompleted,
    ToolCallStarted,
    UsageReported,
)
from ...result import Usage
from ...translate._base import dumps
from ...translate._usage import figures
from ..vocab.delivery import Unit

__all__ = [
    "converse_units",
    "converse_usage",
    "event_unit",
    "exception_unit",
    "invoke_unit",
    "invoke_units",
]

_PAD = "abcdefghijklmnopqrstuvwxyz"
_STOP = {"stop": "end_turn", "length": "max_tokens", "tool_calls": "tool_use"}


def event_unit(event_type: str, body: dict[str, Any], *, kind: str = "event") -> Unit:
    """One ``:message-type: event`` frame with Bedrock's padding."""
    headers = [
        (":event-type", event_type),
        (":content-type", "application/json"),
        (":message-type", "event"),
    ]
    payload = dumps({**body, "p": _PAD[: 3 + len(event_type) % 7]}).encode()
    return Unit(encode_eventstream(headers, payload), kind)


def exception_unit(exception_type: str, message: str) -> Unit:
    """One ``:message-type: exception`` frame."""
    headers = [
        (":exception-type", exception_type),
        (":content-type", "application/json"),
        (":message-type", "exception"),
    ]
    return Unit(encode_eventstream(headers, dumps({"message": message}).encode()), "error")


def converse_units(events: Sequence[Event], source: str = "bedrock-converse") -> list[Unit]:
    """The ConverseStream frames of a case's unified events, whose usage follows
    ``source``'s convention (``translate._usage``): Bedrock's ``inputTokens``
    counts only the fresh tokens, the cache's beside it."""
    units: list[Unit] = []
    block = -1
    open_kind: str | None = None
    tool_blocks: dict[int, int] = {}
    usage: UsageReported | None = None

    def stop_block() -> None:
        nonlocal open_kind
        if open_kind is not None:
            units.append(event_unit("contentBlockStop", {"contentBlockIndex": block}))
            open_kind = None

    def delta(kind: str, value: dict[str, Any], unit_kind: str = "event") -> None:
        nonlocal block, open_kind
        if open_kind != kind:
            stop_block()
            block += 1
            open_kind = kind
        units.append(
            event_unit(
                "contentBlockDelta", {"contentBlockIndex": block, "delta": value}, kind=unit_kind
            )
        )

    for event in events:
        if isinstance(event, MessageStarted):
            units.append(event_unit("messageStart", {"role": "assistant"}))
        elif isinstance(event, TextDelta):
            delta("text", {"text": event.text}, "text")
        elif isinstance(event, ReasoningDelta):
            value = {"signature": event.signature} if event.signature else {"text": event.text}
            delta("reasoning", {"reasoningContent": value})
        elif isinstance(event, ToolCallStarted):
            stop_block()
            block += 1
            open_kind = "tool"
            tool_blocks[event.index] = block
            start = {"toolUse": {"toolUseId": event.id, "name": event.name}}
            units.append(
                event_unit("contentBlockStart", {"contentBlockIndex": block, "start": start})
            )
        elif isinstance(event, ToolCallArgumentsDelta):
            at = tool_blocks[event.index]
            body = {"contentBlockIndex": at, "delta": {"toolUse": {"input": event.delta}}}
            units.append(event_unit("contentBlockDelta", body))
        elif isinstance(event, ToolCallCompleted):
            stop_block()
        elif isinstance(event, UsageReported):
            usage = event
        elif isinstance(event, ErrorReceived):
            stop_block()
            units.append(
                exception_unit(event.type or "internalServerException", event.message or "")
            )
        elif isinstance(event, MessageCompleted) and event.status != "error":
            stop_block()
            units.append(
                event_unit("messageStop", {"stopReason": _STOP[event.stop_reason or "stop"]})
            )
            figures: dict[str, Any] = {}
            if usage is not None and usage.usage.final:
                figures = converse_usage(usage.usage, source)
            units.append(event_unit("metadata", {"usage": figures, "metrics": {"latencyMs": 42}}))
    return units


def invoke_unit(event: dict[str, Any], *, kind: str = "event") -> Unit:
    """One ``chunk`` frame carrying an Anthropic stream event."""
    data = base64.b64encode(dumps(event).encode()).decode("ascii")
    return event_unit("chunk", {"bytes": data}, kind=kind)


def converse_usage(usage: Usage, source: str) -> dict[str, int]:
    """Bedrock's ``TokenUsage`` of a report in ``source``'s convention."""
    f = figures(usage, source)
    body = {
        "inputTokens": f.input_fresh or 0,
        "outputTokens": f.output or 0,
        "totalTokens": (f.input_total or 0) + (f.output or 0),
    }
    if f.cache_read is not None:
        body["cacheReadInputTokens"] = f.cache_read
    if f.cache_write is not None:
        body["cacheWriteInputTokens"] = f.cache_write
    return body


def invoke_units(anthropic_events: Sequence[str], usage: tuple[int, int]) -> list[Unit]:
    """InvokeModelWithResponseStream chunks of an Anthropic stream's event payloads
    (``usage``: the invocation metrics' fresh input and output counts)."""
    units = []
    for text in anthropic_events:
        event = json.loads(text)
        kind = "event"
        if (
            event.get("type") == "content_block_delta"
            and event.get("delta", {}).get("type") == "text_delta"
        ):
            kind = "text"
        elif event.get("type") == "error":
            kind = "error"
        if event.get("type") == "message_stop":
            event["amazon-bedrock-invocationMetrics"] = {
                "inputTokenCount": usage[0],
                "outputTokenCount": usage[1],
                "invocationLatency": 42,
                "firstByteLatency": 7,
            }
        units.append(invoke_unit(event, kind=kind))
    return units
