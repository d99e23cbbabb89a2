"""The mock's OpenAI Realtime sessions (``kit/upstream/ws_realtime.py``).

Each test opens a real socket on loopback with the ``websockets`` client, as
a gateway would, sends Realtime client events and reads the mock's server
events with streamwire's own ``openai-realtime`` adapter: the answers are
the cases' (the facts the HTTP endpoints stream), spoken when the session
asks for audio, and the session keeps the provider's rules (one response at
a time, ``response.cancel``, errors that leave the socket open).
"""

from __future__ import annotations

import asyncio
import base64
import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import pytest

import streamwire as sw
from streamwire.kit.upstream.mock import MockUpstream
from streamwire.kit.upstream.realtime import AUDIO_BYTES
from streamwire.kit.vocab.cases import CASES, cell_model, prompt_for, truth

websockets = pytest.importorskip("websockets")
from websockets.asyncio.client import ClientConnection, connect  # noqa: E402

TOOLS = [
    {"type": "function", "name": "add_numbers", "description": "adds", "parameters": {}},
    {"type": "function", "name": "ping", "description": "pings", "parameters": {}},
]


@asynccontextmanager
async def _session(model: str = "gpt-realtime") -> AsyncIterator[tuple[MockUpstream, Any]]:
    async with MockUpstream() as mock:
        url = mock.url.replace("http://", "ws://") + f"/v1/realtime?model={model}"
        async with connect(url, ping_interval=None) as ws:
            created = json.loads(await asyncio.wait_for(ws.recv(), 10))
            assert created["type"] == "session.created", created
            assert created["session"]["model"] == model
            yield mock, ws


def _user(text: str = "hi") -> str:
    content = [{"type": "input_text", "text": text}]
    return json.dumps(
        {
            "type": "conversation.item.create",
            "item": {"type": "message", "role": "user", **{"content": content}},
        }
    )


def _setup(modalities: list[str], **extra: Any) -> str:
    session = {"type": "realtime", "output_modalities": modalities, "tools": TOOLS, **extra}
    return json.dumps({"type": "session.update", "session": session})


async def _until(ws: ClientConnection, *ends: str) -> list[dict[str, Any]]:
    """Every event up to one of the ``ends`` types."""
    out = []
    while True:
        event = json.loads(await asyncio.wait_for(ws.recv(), 10))
        out.append(event)
        if event.get("type") in ends:
            return out


def _read(events: list[dict[str, Any]]) -> sw.StreamResult:
    stream: Any = sw.stream("openai-realtime")
    stream.feed_message(json.dumps({"type": "session.created", "session": {}}))
    for event in events:
        stream.feed_message(json.dumps(event))
    stream.close()
    result: sw.StreamResult = stream.results[-1]
    return result


async def _ask(ws: ClientConnection, model_or_prompt: str, modalities: list[str]) -> list[Any]:
    await ws.send(_setup(modalities))
    await ws.send(_user(model_or_prompt))
    await ws.send(json.dumps({"type": "response.create"}))
    return await _until(ws, "response.done", "error")


@pytest.mark.parametrize(
    "name", ["short-text", "parallel-tools", "usage", "truncated", "in-stream-error"]
)
def test_a_response_create_gets_the_case_the_model_names_as_realtime_events(name: str) -> None:
    async def go() -> tuple[sw.StreamResult, list[dict[str, Any]], dict[str, Any]]:
        async with _session(cell_model(name, "whole", "r1")) as (mock, ws):
            events = await _ask(ws, "hi", ["text"])
            (entry,) = mock.entries("r1")
            return _read(events), events, entry

    result, events, entry = asyncio.run(go())
    assert entry["upstream"] == "openai-realtime" and entry["case"] == name
    assert entry["status"] == 101 and entry["completed"] and entry["writes"]
    facts = truth(CASES[name], "openai-responses")
    assert result.status == facts.status and result.text == facts.text
    assert [c.arguments for c in result.tool_calls] == [c[2] for c in facts.calls]
    if facts.error_type is not None:
        assert result.error is not None and result.error.type == facts.error_type
    elif facts.usage is not None:
        assert result.usage is not None
        assert (result.usage.input_tokens, result.usage.output_tokens) == facts.usage
        cached = dict(facts.usage_parts).get("cache_read")
        assert result.usage.cache_read_tokens == (cached or 0)
    kinds = [e["type"] for e in events]
    done = events[-1]["response"]
    assert kinds[-1] == "response.done" and "response.completed" not in kinds
    assert {"response.in_progress", "error"}.isdisjoint(kinds)  # no Responses-only events
    of_response = [e for e in events if e["type"].startswith("response.") and "response" not in e]
    assert of_response and all(e["response_id"] == done["id"] for e in of_response)
    assert done["status"] == {"completed": "completed", "truncated": "incomplete"}.get(
        facts.status, "failed"
    )
    if done["status"] == "incomplete":
        assert done["status_details"] == {"type": "incomplete", "reason": "max_output_tokens"}


def test_an_audio_session_speaks_the_text_as_audio_deltas_with_their_transcript() -> None:
    async def go() -> list[dict[str, Any]]:
        async with _session(cell_model("short-text", "paced", "r2")) as (_, ws):
            return await _ask(ws, "hi", ["audio"])

    events = asyncio.run(go())
    kinds = [e["type"] for e in events]
    assert "response.output_text.delta" not in kinds
    audio = [e for e in events if e["type"] == "response.output_audio.delta"]
    spoken = [e for e in events if e["type"] == "response.output_audio_transcript.delta"]
    assert len(audio) == len(spoken) == len(CASES["short-text"].text)
    assert all(len(base64.b64decode(e["delta"])) == AUDIO_BYTES for e in audio)
    result = _read(events)
    assert result.text == "".join(CASES["short-text"].text)  # the transcript is the text
    assert result.provider_metrics["audio_deltas"] == len(audio)
    part = next(e for e in events if e["type"] == "response.content_part.added")["part"]
    assert part["type"] == "output_audio"


def test_a_gateway_s_own_model_leaves_the_case_to_the_prompt() -> None:
    async def go() -> tuple[sw.StreamResult, dict[str, Any]]:
        async with _session() as (mock, ws):
            events = await _ask(ws, prompt_for(cell_model("single-tool", "whole", "r3")), ["text"])
            return _read(events), mock.entries("r3")[0]

    result, entry = asyncio.run(go())
    assert entry["case_from"] == "prompt" and [c.name for c in result.tool_calls] == ["add_numbers"]
    assert entry["tools"] == ["add_numbers", "ping"]  # the session's tools, declared upstream


def test_a_tool_result_item_answers_the_call_in_the_next_response() -> None:
    async def go() -> tuple[sw.StreamResult, list[dict[str, Any]]]:
        async with _session(cell_model("tool-error-result", "whole", "r4")) as (mock, ws):
            (call,) = _read(await _ask(ws, "hi", ["text"])).tool_calls
            item = {"type": "function_call_output", "call_id": call.id, "output": "failed"}
            await ws.send(json.dumps({"type": "conversation.item.create", "item": item}))
            await ws.send(json.dumps({"type": "response.create"}))
            second = _read(await _until(ws, "response.done", "error"))
            return second, mock.entries("r4")

    second, entries = asyncio.run(go())
    assert second.status == "completed"
    assert second.text == "".join(CASES["tool-error-result"].follow_up)
    assert [e["follow_up"] for e in entries] == [False, True]
    assert entries[1]["tool_result"]["call_in_history"] is True  # the session kept the call


def test_the_session_keeps_the_provider_s_rules_and_stays_open() -> None:
    async def error(ws: ClientConnection) -> str:
        event = (await _until(ws, "error"))[-1]
        return str(event["error"]["code"])

    async def go() -> list[str]:
        codes = []
        async with _session(cell_model("cancel", "whole", "r5")) as (mock, ws):
            for message in (
                "not json",
                "[1]",
                json.dumps({"type": "response.bogus"}),
                json.dumps({"type": "input_audio_buffer.append", "audio": ""}),
                json.dumps({"type": "conversation.item.create", "item": {"type": "message"}}),
                json.dumps({"type": "session.update", "session": {"tools": "all"}}),
                json.dumps({"type": "response.cancel"}),  # nothing to cancel
            ):
                await ws.send(message)
                codes.append(await error(ws))
            await ws.send(_user())
            await ws.send(json.dumps({"type": "response.create"}))
            await ws.send(json.dumps({"type": "response.create"}))  # one at a time
            codes.append(await error(ws))
            await ws.send(json.dumps({"type": "response.cancel"}))
            done = (await _until(ws, "response.done"))[-1]["response"]
            assert done["status"] == "cancelled"
            assert done["status_details"] == {"type": "cancelled", "reason": "client_cancelled"}
            (entry,) = mock.entries("r5")
            assert entry["cancelled_at"] is not None and not entry["completed"]
            assert entry["disconnected_at"] is None  # the socket is open ...
            await ws.send(json.dumps({"type": "response.create"}))  # ... and answers on
            assert (await _until(ws, "response.created"))[-1]["response"]["status"] == "in_progress"
        return codes

    assert asyncio.run(go()) == [
        "invalid_json",
        "invalid_json",
        "unknown_event_type",
        "unsupported_event_type",
        "invalid_value",
        "invalid_value",
        "response_cancel_not_active",
        "conversation_already_has_active_response",
    ]


def test_a_client_that_closes_mid_answer_ends_the_response_in_the_log() -> None:
    async def go() -> dict[str, Any]:
        async with MockUpstream() as mock:
            url = mock.url.replace("http://", "ws://") + "/v1/realtime?model=sw-cancel.whole.r6"
            async with connect(url, ping_interval=None) as ws:
                await ws.send(_user())
                await ws.send(json.dumps({"type": "response.create"}))
                # No session.update: the API's default output is audio.
                await _until(ws, "response.output_audio.delta")
            for _ in range(100):
                (entry,) = mock.entries("r6")
                if entry["ended_at"] is not None:
                    return entry
                await asyncio.sleep(0.05)
            raise AssertionError("the response never ended")

    entry = asyncio.run(go())
    assert entry["completed"] is False and entry["disconnected_at"] is not None
    assert entry.get("cancelled_at") is None
    assert entry["ended_at"] - entry["disconnected_at"] < 1.0
