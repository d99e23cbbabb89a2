"""Streams of many content blocks, calls and unknown names, in every protocol's own wire.

The cap tests (``test_hostile_caps.py``) and the hostile benchmark
(``benches/bench_hostile.py``) feed adapters far more blocks, items, parts,
calls or unknown events than any real stream has. These builders write them
in each protocol's grammar (the regression fixtures' shapes, per each
provider's streaming reference, checked 2026-12-01) and yield the wire in
chunks, lazily, so that the input itself does not weigh on the memory
measured.
"""

from __future__ import annotations

import base64
import json
from collections.abc import Iterator
from typing import Any

import streamwire as sw

__all__ = [
    "BLOCK_PROTOCOLS",
    "block_stream",
    "chat_calls",
    "chunked",
    "encode",
]

#: The protocols whose messages are made of blocks, items or parts.
BLOCK_PROTOCOLS = (
    "anthropic",
    "bedrock-invoke",
    "bedrock-converse",
    "openai-responses",
    "openai-responses-ws",
    "openai-realtime",
    "gemini",
    "gemini-json",
    "gemini-live",
)


def _dumps(value: Any) -> str:
    return json.dumps(value, separators=(",", ":"))


def encode(protocol: str, payloads: Iterator[dict[str, Any]]) -> Iterator[bytes | str]:
    """Each payload as one unit of the protocol's wire (WebSocket: one message)."""
    if protocol in ("openai-responses-ws", "openai-realtime", "gemini-live"):
        for payload in payloads:
            yield _dumps(payload)
    elif protocol == "bedrock-invoke":
        for payload in payloads:
            inner = base64.b64encode(_dumps(payload).encode()).decode()
            headers = {":event-type": "chunk", ":message-type": "event"}
            yield sw.encode_eventstream(headers, _dumps({"bytes": inner}).encode())
    elif protocol == "bedrock-converse":
        for payload in payloads:
            ((name, body),) = payload.items()
            headers = {":event-type": name, ":message-type": "event"}
            yield sw.encode_eventstream(headers, _dumps(body).encode())
    elif protocol == "gemini-json":
        yield b"["
        for i, payload in enumerate(payloads):
            yield (b"," if i else b"") + _dumps(payload).encode()
        yield b"]"
    else:
        for payload in payloads:
            event = payload.get("type") if protocol == "anthropic" else None
            yield sw.encode_sse(_dumps(payload), event=event if isinstance(event, str) else None)


def chunked(units: Iterator[bytes | str], size: int = 64 * 1024) -> Iterator[bytes | str]:
    """Byte units joined into chunks of about ``size`` bytes; messages one by one."""
    buffer = bytearray()
    for unit in units:
        if isinstance(unit, str):
            yield unit
            continue
        buffer += unit
        if len(buffer) >= size:
            yield bytes(buffer)
            buffer.clear()
    if buffer:
        yield bytes(buffer)


def block_stream(protocol: str, blocks: int, text: str = "") -> Iterator[dict[str, Any]]:
    """A whole, well-formed response of ``blocks`` content blocks (items, parts)."""
    if protocol in ("anthropic", "bedrock-invoke"):
        yield _anthropic_start()
        for i in range(blocks):
            yield {
                "type": "content_block_start",
                "index": i,
                "content_block": {"type": "text", "text": ""},
            }
            if text:
                delta = {"type": "text_delta", "text": text}
                yield {"type": "content_block_delta", "index": i, "delta": delta}
            yield {"type": "content_block_stop", "index": i}
        yield {
            "type": "message_delta",
            "delta": {"stop_reason": "end_turn"},
            "usage": {"output_tokens": 1},
        }
        yield {"type": "message_stop"}
    elif protocol == "bedrock-converse":
        yield {"messageStart": {"role": "assistant"}}
        for i in range(blocks):
            yield {"contentBlockDelta": {"contentBlockIndex": i, "delta": {"text": text or "."}}}
            yield {"contentBlockStop": {"contentBlockIndex": i}}
        yield {"messageStop": {"stopReason": "end_turn"}}
        yield {"metadata": {"usage": {"inputTokens": 1, "outputTokens": 1, "totalTokens": 2}}}
    elif protocol in ("openai-responses", "openai-responses-ws"):
        yield from _responses(blocks, text)
    elif protocol == "openai-realtime":
        yield from _realtime(blocks, text)
    else:
        yield from _gemini(protocol, blocks, text)


def _anthropic_start() -> dict[str, Any]:
    message = {
        "id": "msg_hostile",
        "type": "message",
        "role": "assistant",
        "model": "claude-test",
        "content": [],
        "usage": {"input_tokens": 1, "output_tokens": 1},
    }
    return {"type": "message_start", "message": message}


def _responses(blocks: int, text: str) -> Iterator[dict[str, Any]]:
    response = {"id": "resp_hostile", "object": "response", "status": "in_progress", "output": []}
    seq = iter(range(1 << 30))
    yield {"type": "response.created", "sequence_number": next(seq), "response": response}
    for i in range(blocks):
        item = {"id": f"msg_{i}", "type": "message", "role": "assistant", "content": []}
        yield {
            "type": "response.output_item.added",
            "sequence_number": next(seq),
            "output_index": i,
            "item": item,
        }
        done = {**item, "status": "completed"}
        if text:
            done["content"] = [{"type": "output_text", "text": text, "annotations": []}]
        yield {
            "type": "response.output_item.done",
            "sequence_number": next(seq),
            "output_index": i,
            "item": done,
        }
    final = {
        **response,
        "status": "completed",
        "usage": {"input_tokens": 1, "output_tokens": 1, "total_tokens": 2},
    }
    yield {"type": "response.completed", "sequence_number": next(seq), "response": final}


def _realtime(blocks: int, text: str) -> Iterator[dict[str, Any]]:
    response = {
        "object": "realtime.response",
        "id": "resp_rt",
        "status": "in_progress",
        "output": [],
    }
    yield {"type": "response.created", "event_id": "e0", "response": response}
    for i in range(blocks):
        item = {
            "id": f"item_{i}",
            "object": "realtime.item",
            "type": "message",
            "role": "assistant",
            "content": [],
        }
        yield {
            "type": "response.output_item.added",
            "response_id": "resp_rt",
            "output_index": i,
            "item": item,
        }
        if text:
            delta = {
                "type": "response.output_text.delta",
                "response_id": "resp_rt",
                "item_id": f"item_{i}",
            }
            yield {**delta, "output_index": i, "content_index": 0, "delta": text}
        yield {
            "type": "response.output_item.done",
            "response_id": "resp_rt",
            "output_index": i,
            "item": {**item, "status": "completed"},
        }
    yield {"type": "response.done", "response": {**response, "status": "completed"}}


def _gemini(protocol: str, blocks: int, text: str) -> Iterator[dict[str, Any]]:
    # Alternating thought and answer parts: every part starts a part of its own.
    per_chunk = 64
    if protocol == "gemini-live":
        yield {"setupComplete": {}}
    for start in range(0, blocks, per_chunk):
        parts = [
            {"text": text or ".", "thought": True} if i % 2 else {"text": text or "."}
            for i in range(start, min(blocks, start + per_chunk))
        ]
        if protocol == "gemini-live":
            yield {"serverContent": {"modelTurn": {"role": "model", "parts": parts}}}
        else:
            yield {
                "candidates": [{"content": {"role": "model", "parts": parts}, "index": 0}],
                "responseId": "r1",
            }
    if protocol == "gemini-live":
        yield {"serverContent": {"turnComplete": True}}
    else:
        yield {
            "candidates": [
                {"content": {"role": "model", "parts": []}, "finishReason": "STOP", "index": 0}
            ]
        }


def chat_calls(
    calls: int, arguments: str = "{}", *, ids: str = "call_{}"
) -> Iterator[dict[str, Any]]:
    """An openai-chat response making ``calls`` tool calls, each whole in one chunk."""
    for i in range(calls):
        fragment = {
            "index": i,
            "id": ids.format(i),
            "type": "function",
            "function": {"name": "f", "arguments": arguments},
        }
        yield {
            "id": "c",
            "model": "m",
            "choices": [{"index": 0, "delta": {"tool_calls": [fragment]}}],
        }
    yield {"id": "c", "choices": [{"index": 0, "delta": {}, "finish_reason": "tool_calls"}]}
