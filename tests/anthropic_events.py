"""Anthropic Messages stream events for the tests, built from the streaming reference.

Each builder returns one event as a dict, shaped as Anthropic's streaming
reference shows it (platform.claude.com/docs/en/build-with-claude/streaming,
checked 2026-11-29); ``sse`` frames them as an SSE body, ``run`` feeds a body
to a fresh ``anthropic`` adapter and closes it.
"""

from __future__ import annotations

import json
from typing import Any

import streamwire as sw

__all__ = [
    "MESSAGE_STOP",
    "TEXT_BLOCK",
    "block_delta",
    "block_start",
    "block_stop",
    "json_delta",
    "message_delta",
    "message_start",
    "run",
    "sse",
    "text_delta",
    "tool_start",
]


def sse(*events: dict[str, Any] | tuple[str | None, str]) -> bytes:
    out = []
    for event in events:
        if isinstance(event, tuple):
            name, data = event
        else:
            name, data = event.get("type"), json.dumps(event)
        head = f"event: {name}\n" if name else ""
        out.append(f"{head}data: {data}\n\n")
    return "".join(out).encode()


def message_start(input_tokens: int = 10) -> dict[str, Any]:
    message: dict[str, Any] = {
        "id": "msg_test",
        "type": "message",
        "role": "assistant",
        "model": "claude-test",
        "content": [],
        "stop_reason": None,
        "stop_sequence": None,
        "usage": {"input_tokens": input_tokens, "output_tokens": 1},
    }
    return {"type": "message_start", "message": message}


def block_start(index: int, block: dict[str, Any]) -> dict[str, Any]:
    return {"type": "content_block_start", "index": index, "content_block": block}


def block_delta(index: int, delta: dict[str, Any]) -> dict[str, Any]:
    return {"type": "content_block_delta", "index": index, "delta": delta}


def text_delta(index: int, text: str) -> dict[str, Any]:
    return block_delta(index, {"type": "text_delta", "text": text})


def json_delta(index: int, partial: str) -> dict[str, Any]:
    return block_delta(index, {"type": "input_json_delta", "partial_json": partial})


def block_stop(index: int) -> dict[str, Any]:
    return {"type": "content_block_stop", "index": index}


def message_delta(reason: str | None, output: int = 5) -> dict[str, Any]:
    return {
        "type": "message_delta",
        "delta": {"stop_reason": reason, "stop_sequence": None},
        "usage": {"output_tokens": output},
    }


MESSAGE_STOP = {"type": "message_stop"}
TEXT_BLOCK = {"type": "text", "text": ""}


def tool_start(index: int, call_id: str, name: str, kind: str = "tool_use") -> dict[str, Any]:
    return block_start(index, {"type": kind, "id": call_id, "name": name, "input": {}})


def run(data: bytes, **options: Any) -> tuple[sw.Stream, list[sw.Event]]:
    stream = sw.stream("anthropic", **options)
    events = stream.feed(data)
    events += stream.close()
    return stream, events
