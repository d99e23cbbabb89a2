"""The mock's WebSocket sessions (``kit/upstream/ws.py``): the Responses API's WebSocket mode.

Each test opens a real socket on loopback with the ``websockets`` client, as
a gateway would, and reads the mock's messages with streamwire's own
``openai-responses-ws`` adapter: the answers are the cases' (the same facts
the HTTP endpoint streams), and the session keeps the provider's rules (one
response in flight, errors that leave the socket open).
"""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import pytest

import streamwire as sw
from streamwire.kit.upstream.mock import MockUpstream
from streamwire.kit.vocab.cases import CASES, cell_model, prompt_for, truth
from streamwire.kit.vocab.delivery import PACE_SPAN

websockets = pytest.importorskip("websockets")
from websockets.asyncio.client import ClientConnection, connect  # noqa: E402

TERMINAL = {"response.completed", "response.incomplete", "response.failed", "error"}
TOOLS = [
    {"type": "function", "name": "add_numbers", "description": "adds", "parameters": {}},
    {"type": "function", "name": "get_weather", "description": "weather", "parameters": {}},
]


@asynccontextmanager
async def _session() -> AsyncIterator[tuple[MockUpstream, ClientConnection]]:
    async with MockUpstream() as mock:
        url = mock.url.replace("http://", "ws://") + "/v1/responses"
        async with connect(url, ping_interval=None) as ws:
            yield mock, ws


def _create(model: str, **extra: Any) -> str:
    body = {"type": "response.create", "model": model, "input": "hi", "tools": TOOLS}
    return json.dumps({**body, **extra})


async def _answer(ws: ClientConnection) -> list[tuple[float, dict[str, Any]]]:
    """Every message up to a response's end (or an error), with its arrival time."""
    out = []
    while True:
        message = await asyncio.wait_for(ws.recv(), 10)
        event = json.loads(message)
        out.append((time.time(), event))
        if event.get("type") in TERMINAL:
            return out


def _read(events: list[tuple[float, dict[str, Any]]]) -> sw.StreamResult:
    stream = sw.stream("openai-responses-ws")
    for _, event in events:
        stream.feed_message(json.dumps(event))
    stream.close()
    return stream.result


@pytest.mark.parametrize("name", ["short-text", "parallel-tools", "usage", "truncated"])
def test_a_response_create_gets_the_case_the_model_names(name: str) -> None:
    async def go() -> sw.StreamResult:
        async with _session() as (mock, ws):
            await ws.send(_create(cell_model(name, "whole", "k1")))
            result = _read(await _answer(ws))
            (entry,) = mock.entries("k1")
            assert entry["upstream"] == "openai-responses-ws" and entry["case"] == name
            assert entry["status"] == 101 and entry["writes"]
            return result

    result = asyncio.run(go())
    facts = truth(CASES[name], "openai-responses")
    assert result.status == facts.status and result.text == facts.text
    assert [c.arguments for c in result.tool_calls] == [c[2] for c in facts.calls]


def test_a_paced_answer_spreads_its_messages_and_the_log_times_them() -> None:
    async def go() -> tuple[list[tuple[float, dict[str, Any]]], dict[str, Any]]:
        async with _session() as (mock, ws):
            await ws.send(_create(cell_model("short-text", "paced", "k2")))
            events = await _answer(ws)
            return events, mock.entries("k2")[0]

    events, entry = asyncio.run(go())
    assert events[-1][0] - events[0][0] > 0.8 * PACE_SPAN
    written = [w[0] for w in entry["writes"]]
    assert written == sorted(written) and written[-1] - written[0] > 0.8 * PACE_SPAN


def test_a_gateway_s_own_model_leaves_the_case_to_the_prompt() -> None:
    async def go() -> tuple[sw.StreamResult, dict[str, Any]]:
        async with _session() as (mock, ws):
            prompt = prompt_for(cell_model("single-tool", "whole", "k3"))
            await ws.send(_create("gpt-4.1", input=prompt))
            return _read(await _answer(ws)), mock.entries("k3")[0]

    result, entry = asyncio.run(go())
    assert entry["case_from"] == "prompt" and [c.name for c in result.tool_calls] == ["add_numbers"]


def test_the_session_keeps_the_provider_s_rules_and_stays_open() -> None:
    async def error(ws: ClientConnection) -> str:
        event = json.loads(await asyncio.wait_for(ws.recv(), 10))
        assert event.get("type") == "error", event
        return str(event["error"]["code"])

    async def go() -> list[str]:
        codes = []
        async with _session() as (_, ws):
            for message in (
                "not json",
                json.dumps({"type": "response.bogus"}),
                _create("gpt-4.1"),  # names no case, nor does its prompt
                _create(cell_model("short-text", "whole", "k6"), previous_response_id="x"),
            ):
                await ws.send(message)
                codes.append(await error(ws))
            await ws.send(_create(cell_model("short-text", "paced", "k4")))
            await ws.send(_create(cell_model("short-text", "whole", "k5")))  # one at a time
            answer = await _answer(ws)
            codes += [e["error"]["code"] for _, e in answer if e.get("type") == "error"]
            if answer[-1][1].get("type") == "error":
                answer = await _answer(ws)
            assert answer[-1][1]["type"] == "response.completed"
            # ... and the socket still answers.
            await ws.send(_create(cell_model("short-text", "whole", "k7")))
            assert _read(await _answer(ws)).status == "completed"
        return codes

    assert asyncio.run(go()) == [
        "invalid_json",
        "unknown_event_type",
        "model_not_found",
        "previous_response_not_found",
        "concurrent_request",
    ]


def test_a_tool_result_answers_the_call_in_a_second_response() -> None:
    async def go() -> tuple[sw.StreamResult, list[dict[str, Any]]]:
        async with _session() as (mock, ws):
            model = cell_model("tool-error-result", "whole", "k8")
            first = await _answer(await _sent(ws, _create(model)))
            response_id = first[0][1]["response"]["id"]
            (call,) = _read(first).tool_calls
            result = {"type": "function_call_output", "call_id": call.id, "output": "failed"}
            again = _create(model, input=[result], previous_response_id=response_id)
            second = _read(await _answer(await _sent(ws, again)))
            return second, mock.entries("k8")

    second, entries = asyncio.run(go())
    assert second.status == "completed" and second.text == "".join(
        CASES["tool-error-result"].follow_up
    )
    assert [e["follow_up"] for e in entries] == [False, True]


async def _sent(ws: ClientConnection, message: str) -> ClientConnection:
    await ws.send(message)
    return ws


def test_a_client_that_closes_mid_answer_ends_the_response_in_the_log() -> None:
    async def go() -> dict[str, Any]:
        async with MockUpstream() as mock:
            url = mock.url.replace("http://", "ws://") + "/v1/responses"
            async with connect(url, ping_interval=None) as ws:
                await ws.send(_create(cell_model("cancel", "whole", "k9")))
                await asyncio.wait_for(ws.recv(), 10)
            for _ in range(100):
                (entry,) = mock.entries("k9")
                if entry["ended_at"] is not None:
                    return entry
                await asyncio.sleep(0.05)
            raise AssertionError("the response never ended")

    entry = asyncio.run(go())
    assert entry["completed"] is False and entry["disconnected_at"] is not None
    assert entry["ended_at"] - entry["disconnected_at"] < 1.0


def test_an_upgrade_at_a_path_with_no_session_is_logged_and_refused() -> None:
    async def go() -> tuple[int, list[dict[str, Any]]]:
        async with MockUpstream() as mock:
            url = mock.url.replace("http://", "ws://") + "/v1/audio/speech/stream"
            with pytest.raises(websockets.exceptions.InvalidStatus) as refused:
                async with connect(url, ping_interval=None):
                    pass
            return refused.value.response.status_code, mock.entries()

    status, entries = asyncio.run(go())
    assert status == 404
    (entry,) = entries
    assert entry["method"] == "GET" and entry["path"] == "/v1/audio/speech/stream"
    assert entry["status"] == 404
