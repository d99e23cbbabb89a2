"""Grammar checks of re-encoded streams: each target's own rules, and the SDKs' models.

``check(target, wire)`` decodes the wire bytes with ``sw.SseDecoder`` and
returns every rule of the target's streaming grammar the bytes break. The
rules are the providers' streaming references (checked 2026-11-29, cited in
each encoder's docstring); the JSON of every event is also validated against
the official SDKs' own pydantic models (openai-python 3.57.0
``ChatCompletionChunk`` and the ``ResponseStreamEvent`` union,
anthropic-python 2.14.0 ``RawMessageStreamEvent``): a field the SDK requires,
or a value of the wrong type, is a failure here before it is one in a client.
"""

from __future__ import annotations

import json
import typing
from typing import Any

import streamwire as sw


def _models() -> tuple[Any, dict[str, Any], Any]:
    from anthropic.types import RawMessageStreamEvent
    from openai.types.chat import ChatCompletionChunk
    from openai.types.responses import ResponseStreamEvent
    from pydantic import TypeAdapter

    union = typing.get_args(ResponseStreamEvent)[0]
    by_type = {}
    for model in typing.get_args(union):
        (name,) = typing.get_args(model.model_fields["type"].annotation)
        by_type[name] = model
    return ChatCompletionChunk, by_type, TypeAdapter(RawMessageStreamEvent)


CHAT_MODEL, RESPONSES_MODELS, ANTHROPIC_MODEL = _models()


def events(wire: bytes) -> list[sw.SseEvent]:
    decoder = sw.SseDecoder()
    return decoder.feed(wire) + decoder.finish()


def check(target: str, wire: bytes) -> list[str]:
    """The grammar rules ``wire`` breaks as a ``target`` body (empty: none)."""
    return {
        "openai-chat": _chat,
        "openai-responses": _responses,
        "anthropic": _anthropic,
        "gemini": _gemini,
    }[target](events(wire))


def _chat(sse: list[sw.SseEvent]) -> list[str]:
    out: list[str] = []
    ids: set[str] = set()
    roles: set[int] = set()
    calls: dict[int, int] = {}
    finished: set[int] = set()
    for n, event in enumerate(sse):
        if event.event != "message":
            out.append(f"chat events are unnamed, got {event.event!r}")
        if event.data == "[DONE]":
            if n != len(sse) - 1:
                out.append("[DONE] is not last")
            if finished != roles:
                out.append("[DONE] before every choice finished")
            continue
        chunk = json.loads(event.data)
        if "error" in chunk:
            if n != len(sse) - 1:
                out.append("the error chunk is not last")
            continue
        CHAT_MODEL.model_validate(chunk)
        ids.add(chunk["id"])
        if chunk["object"] != "chat.completion.chunk":
            out.append(f"object {chunk['object']!r}")
        for choice in chunk["choices"]:
            index, delta = choice["index"], choice["delta"]
            if index in finished:
                out.append(f"choice {index} continues after its finish_reason")
            if index not in roles:
                if delta.get("role") != "assistant":
                    out.append(f"choice {index}'s first delta has no role")
                roles.add(index)
            for fragment in delta.get("tool_calls") or []:
                seen = calls.get(index, 0)
                if fragment["index"] > seen:
                    out.append(f"choice {index}: tool call index {fragment['index']} skips")
                if fragment["index"] == seen:
                    calls[index] = seen + 1
                    if "type" not in fragment:
                        out.append("a call's first fragment has no type")
                if "function" not in fragment:
                    out.append("a tool call fragment has no function")
            if choice["finish_reason"] is not None:
                finished.add(index)
        if chunk["choices"] == [] and "usage" not in chunk:
            out.append("a chunk without choices and without usage")
    if len(ids) > 1:
        out.append(f"the chunk id changed: {ids}")
    return out


def _responses(sse: list[sw.SseEvent]) -> list[str]:
    out: list[str] = []
    open_items: dict[int, str] = {}
    done_items: list[int] = []
    terminal = False
    for n, event in enumerate(sse):
        data = json.loads(event.data)
        kind = data["type"]
        if event.event != kind:
            out.append(f"event name {event.event!r} for type {kind!r}")
        if data["sequence_number"] != n:
            out.append(f"sequence_number {data['sequence_number']} at position {n}")
        model = RESPONSES_MODELS.get(kind)
        if model is None:
            out.append(f"unknown event type {kind}")
        else:
            model.model_validate(data)
        if n == 0 and kind != "response.created":
            out.append(f"the first event is {kind}")
        if terminal:
            out.append(f"{kind} after the terminal event")
        if kind == "response.output_item.added":
            index = data["output_index"]
            if index != len(done_items) + len(open_items) or open_items:
                out.append(f"item {index} added out of sequence")
            open_items[index] = data["item"]["id"]
        elif kind == "response.output_item.done":
            index = data["output_index"]
            if open_items.pop(index, None) != data["item"]["id"]:
                out.append(f"item {index} done but not open")
            done_items.append(index)
        elif "item_id" in data and data["item_id"] not in open_items.values():
            out.append(f"{kind} for an item that is not open")
        if kind in ("response.completed", "response.incomplete", "response.failed"):
            terminal = True
            if kind != "response.failed":
                if open_items:
                    out.append(f"{kind} with items still open")
                if len(data["response"]["output"]) != len(done_items):
                    out.append(f"{kind} output has not every done item")
    return out


def _anthropic(sse: list[sw.SseEvent]) -> list[str]:
    out: list[str] = []
    started = stopped = False
    blocks = 0
    open_blocks: set[int] = set()
    for n, event in enumerate(sse):
        data = json.loads(event.data)
        kind = data["type"]
        if event.event != kind:
            out.append(f"event name {event.event!r} for type {kind!r}")
        if kind == "error":
            if n != len(sse) - 1:
                out.append("the error event is not last")
            continue
        ANTHROPIC_MODEL.validate_python(data)
        if stopped:
            out.append(f"{kind} after message_stop")
        if kind == "message_start":
            if started:
                out.append("a second message_start")
            started = True
        elif not started:
            out.append(f"{kind} before message_start")
        elif kind == "content_block_start":
            if data["index"] != blocks:
                out.append(f"block {data['index']} started, expected {blocks}")
            if open_blocks:
                out.append("a block started while another is open")
            blocks += 1
            open_blocks.add(data["index"])
        elif kind in ("content_block_delta", "content_block_stop"):
            if data["index"] not in open_blocks:
                out.append(f"{kind} for block {data['index']}, which is not open")
            if kind == "content_block_stop":
                open_blocks.discard(data["index"])
        elif kind == "message_delta" and open_blocks and data["delta"]["stop_reason"]:
            # Allowed only for a call the source left unfinished (declared).
            pass
        elif kind == "message_stop":
            stopped = True
    return out


def _gemini(sse: list[sw.SseEvent]) -> list[str]:
    out: list[str] = []
    ids: set[str] = set()
    finished: set[int] = set()
    for n, event in enumerate(sse):
        chunk = json.loads(event.data)
        if "error" in chunk:
            if n != len(sse) - 1:
                out.append("the error chunk is not last")
            continue
        if "responseId" not in chunk or "modelVersion" not in chunk:
            out.append("a chunk without responseId or modelVersion")
        ids.add(chunk.get("responseId"))
        for candidate in chunk.get("candidates", []):
            index = candidate.get("index", 0)
            if index in finished:
                out.append(f"candidate {index} continues after its finishReason")
            for part in candidate.get("content", {}).get("parts", []):
                if not ({"text", "functionCall"} & set(part)):
                    out.append(f"a part with neither text nor functionCall: {part}")
                call = part.get("functionCall")
                if call is not None and not isinstance(call.get("args"), dict):
                    out.append("a functionCall without object args")
            if "finishReason" in candidate:
                finished.add(index)
        if not chunk.get("candidates") and "usageMetadata" not in chunk:
            out.append("a chunk with neither candidates nor usage")
    if len(ids) > 1:
        out.append(f"the responseId changed: {ids}")
    return out
