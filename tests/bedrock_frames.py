"""Building Bedrock EventStream bodies by hand, for tests and the fixture generator.

Frames carry the headers Bedrock sends, in its order (``:event-type``,
``:content-type``, ``:message-type``; exceptions ``:exception-type`` instead of
``:event-type``; unmodeled errors ``:error-code`` and ``:error-message``), as
the Bedrock API reference and botocore's ``bedrock-runtime`` model describe
them (checked 2026-11-29); payloads are compact JSON with Bedrock's padding
member ``p``. Framing is ``sw.encode_eventstream``. The ``expect_*`` helpers
build the unified-event dicts a manifest's ``events`` list compares with.
"""

from __future__ import annotations

import base64
import hashlib
import json
from dataclasses import dataclass, field
from typing import Any

import streamwire as sw

__all__ = [
    "CONVERSE_METHOD",
    "INVOKE_METHOD",
    "PADDING",
    "Case",
    "anthropic_chunk",
    "call",
    "chunk_frame",
    "converse",
    "error_frame",
    "event_frame",
    "exception_frame",
    "expect_args",
    "expect_completed",
    "expect_error",
    "expect_started",
    "expect_text",
    "expect_tool_completed",
    "expect_tool_started",
    "expect_usage",
    "usage",
    "usage_body",
]

PADDING = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"


def _dumps(value: Any) -> bytes:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":")).encode()


def event_frame(event_type: str, body: Any, *, pad: int | None = 3) -> bytes:
    """One ``:message-type: event`` frame; ``pad`` adds a ``p`` member of that length."""
    if pad is not None and isinstance(body, dict):
        body = {**body, "p": PADDING[:pad]}
    headers = [
        (":event-type", event_type),
        (":content-type", "application/json"),
        (":message-type", "event"),
    ]
    payload = body if isinstance(body, bytes) else _dumps(body)
    return sw.encode_eventstream(headers, payload)


def exception_frame(exception_type: str, body: dict[str, Any]) -> bytes:
    """One ``:message-type: exception`` frame."""
    headers = [
        (":exception-type", exception_type),
        (":content-type", "application/json"),
        (":message-type", "exception"),
    ]
    return sw.encode_eventstream(headers, _dumps(body))


def error_frame(code: str, message: str) -> bytes:
    """One unmodeled ``:message-type: error`` frame (empty payload)."""
    headers = [(":error-code", code), (":error-message", message), (":message-type", "error")]
    return sw.encode_eventstream(headers, b"")


def usage_body(input_tokens: int, output_tokens: int, latency: int = 250) -> dict[str, Any]:
    """A ``metadata`` payload with ``usage`` and ``metrics``."""
    usage = {
        "inputTokens": input_tokens,
        "outputTokens": output_tokens,
        "totalTokens": input_tokens + output_tokens,
    }
    return {"metrics": {"latencyMs": latency}, "usage": usage}


class converse:
    """ConverseStream frames."""

    @staticmethod
    def start(pad: int = 5) -> bytes:
        return event_frame("messageStart", {"role": "assistant"}, pad=pad)

    @staticmethod
    def text(index: int, text: str, pad: int = 3) -> bytes:
        body = {"contentBlockIndex": index, "delta": {"text": text}}
        return event_frame("contentBlockDelta", body, pad=pad)

    @staticmethod
    def delta(index: int, delta: dict[str, Any], pad: int = 3) -> bytes:
        body = {"contentBlockIndex": index, "delta": delta}
        return event_frame("contentBlockDelta", body, pad=pad)

    @staticmethod
    def tool_start(index: int, tool_id: str, name: str, **extra: Any) -> bytes:
        start = {"toolUse": {"toolUseId": tool_id, "name": name, **extra}}
        return event_frame("contentBlockStart", {"contentBlockIndex": index, "start": start})

    @staticmethod
    def tool_input(index: int, fragment: str) -> bytes:
        return converse.delta(index, {"toolUse": {"input": fragment}})

    @staticmethod
    def block_stop(index: int) -> bytes:
        return event_frame("contentBlockStop", {"contentBlockIndex": index})

    @staticmethod
    def stop(reason: str, pad: int = 2) -> bytes:
        return event_frame("messageStop", {"stopReason": reason}, pad=pad)

    @staticmethod
    def metadata(input_tokens: int, output_tokens: int, latency: int = 250) -> bytes:
        return event_frame("metadata", usage_body(input_tokens, output_tokens, latency))


def chunk_frame(model_event: Any, *, pad: int = 4) -> bytes:
    """An ``InvokeModelWithResponseStream`` ``chunk`` frame carrying ``model_event``."""
    raw = model_event if isinstance(model_event, bytes) else _dumps(model_event)
    return event_frame("chunk", {"bytes": base64.b64encode(raw).decode("ascii")}, pad=pad)


def anthropic_chunk(event_type: str, **fields: Any) -> bytes:
    """A ``chunk`` frame carrying one Anthropic Messages stream event."""
    return chunk_frame({"type": event_type, **fields})


# --- expected unified events ----------------------------------------------------------


def expect_started(role: str | None = "assistant", **fields: Any) -> dict[str, Any]:
    base = {"event": "MessageStarted", "message_id": None, "model": None, "role": role}
    return {**base, "choice": 0, **fields}


def expect_text(text: str) -> dict[str, Any]:
    return {"event": "TextDelta", "text": text, "choice": 0}


def expect_usage(
    input_tokens: int | None, output_tokens: int | None, *, final: bool, total: bool = True
) -> dict[str, Any]:
    usage: dict[str, Any] = {"input_tokens": input_tokens, "output_tokens": output_tokens}
    if total and input_tokens is not None and output_tokens is not None:
        usage["total_tokens"] = input_tokens + output_tokens
    usage["final"] = final
    return {"event": "UsageReported", "usage": usage}


def expect_completed(status: str, stop: str | None, raw: str | None) -> dict[str, Any]:
    return {
        "event": "MessageCompleted",
        "status": status,
        "stop_reason": stop,
        "provider_stop_reason": raw,
        "choice": 0,
    }


def expect_tool_started(
    index: int, call_id: str, name: str, *, executor: str = "client", kind: str = "tool_use"
) -> dict[str, Any]:
    return {
        "event": "ToolCallStarted",
        "index": index,
        "id": call_id,
        "name": name,
        "type": kind,
        "executor": executor,
        "id_source": "provider",
        "choice": 0,
    }


def expect_args(index: int, call_id: str, delta: str) -> dict[str, Any]:
    return {"event": "ToolCallArgumentsDelta", "index": index, "id": call_id, "delta": delta}


def expect_tool_completed(
    index: int,
    call_id: str,
    name: str,
    raw: str,
    arguments: Any,
    invalid: str | None = None,
) -> dict[str, Any]:
    done = {
        "event": "ToolCallCompleted",
        "index": index,
        "id": call_id,
        "name": name,
        "raw_arguments": raw,
        "arguments": arguments,
    }
    if invalid is None:
        done["invalid_reason"] = None
    return done


def expect_error(
    phase: str, kind: str | None, code: Any, retryable: bool, message: str | None = None
) -> dict[str, Any]:
    error = {"event": "ErrorReceived", "phase": phase, "type": kind, "code": code}
    if message is not None:
        error["message"] = message
    error["retryable"] = retryable
    return error


# --- fixture cases -------------------------------------------------------------------

CONVERSE_METHOD = (
    "written by hand from the Amazon Bedrock API reference (ConverseStream, "
    "ConverseStreamOutput, ContentBlockStartEvent, ContentBlockDeltaEvent, MessageStopEvent, "
    "ConverseStreamMetadataEvent; docs.aws.amazon.com/bedrock/latest/APIReference) and "
    "botocore 1.43's bedrock-runtime service model, checked 2026-11-29; framed with "
    "sw.encode_eventstream by tests/make_bedrock_fixtures.py"
)
INVOKE_METHOD = (
    "written by hand from the Amazon Bedrock API reference (InvokeModelWithResponseStream, "
    "ResponseStream, PayloadPart) and user guide ('Anthropic Claude Messages API'), with model "
    "events as Anthropic's streaming reference gives them "
    "(platform.claude.com/docs/en/build-with-claude/streaming), checked 2026-11-29; framed "
    "with sw.encode_eventstream by tests/make_bedrock_fixtures.py"
)
LICENSE = "Apache-2.0 (this project)"


@dataclass
class Case:
    """One fixture: raw body, what it exercises, and what a correct parser derives."""

    protocol: str
    name: str
    body: bytes
    exercises: str
    expect: dict[str, Any]
    method: str = CONVERSE_METHOD
    ext: str = "eventstream"
    options: dict[str, Any] | None = None
    replay: dict[str, Any] | None = None
    notes: list[str] = field(default_factory=list)

    def manifest(self) -> dict[str, Any]:
        raw = f"{self.name}.{self.ext}"
        out: dict[str, Any] = {
            "format": "streamwire-fixture/1",
            "case": self.name,
            "raw": raw,
            "sha256": hashlib.sha256(self.body).hexdigest(),
            "size": len(self.body),
            "provider": "amazon-bedrock",
            "protocol": self.protocol,
            "origin": "synthetic",
            "provenance": {"written_for": "streamwire", "method": self.method, "license": LICENSE},
            "exercises": self.exercises,
        }
        if self.options is not None:
            out["options"] = self.options
        if self.replay is not None:
            out["replay"] = self.replay
        out["expect"] = self.expect
        out["notes"] = self.notes
        return out


def usage(i: int, o: int, final: bool = True) -> dict[str, Any]:
    return {
        "input_tokens": i,
        "output_tokens": o,
        "total_tokens": i + o,
        "cache_read_tokens": None,
        "cache_creation_tokens": None,
        "reasoning_tokens": None,
        "final": final,
    }


def call(index: int, call_id: str, name: str, raw: str, *, valid: bool = True) -> dict[str, Any]:
    return {
        "choice": 0,
        "index": index,
        "id": call_id,
        "name": name,
        "type": "tool_use",
        "raw_arguments": raw,
        "arguments": json.loads(raw) if valid else None,
        "state": "valid" if valid else "rejected",
    }
