"""The mock's Gemini Live sessions (``kit/upstream/ws_live.py``, ``live.py``).

Each test opens a real socket on loopback with the ``websockets`` client, as
a gateway would, sends Live client messages and reads the mock's server
messages with streamwire's own ``gemini-live`` adapter: the turns are the
cases' (the facts the Gemini endpoint streams), and the session keeps the
API's rules (``setup`` first, a turn interrupted by the next one, errors as
closes with Live's codes).
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import pytest

import streamwire as sw
from streamwire.kit.upstream.mock import MockUpstream
from streamwire.kit.vocab.cases import CASES, cell_model, prompt_for, truth

websockets = pytest.importorskip("websockets")
from websockets.asyncio.client import ClientConnection, connect  # noqa: E402
from websockets.exceptions import ConnectionClosed  # noqa: E402

PATH = "/ws/google.ai.generativelanguage.v1beta.GenerativeService.BidiGenerateContent"
TOOLS = [{"functionDeclarations": [{"name": "add_numbers"}, {"name": "ping"}]}]


@asynccontextmanager
async def _socket(path: str = PATH) -> AsyncIterator[tuple[MockUpstream, ClientConnection]]:
    async with MockUpstream() as mock:
        url = mock.url.replace("http://", "ws://") + path
        async with connect(url, ping_interval=None) as ws:
            yield mock, ws


async def _setup(ws: ClientConnection, model: str = "gemini-live-2.5-flash") -> None:
    setup = {
        "model": f"models/{model}",
        "generationConfig": {"responseModalities": ["TEXT"]},
        "tools": TOOLS,
    }
    await ws.send(json.dumps({"setup": setup}))
    assert json.loads(await asyncio.wait_for(ws.recv(), 10)) == {"setupComplete": {}}


def _ask(text: str) -> str:
    turns = [{"role": "user", "parts": [{"text": text}]}]
    return json.dumps({"clientContent": {"turns": turns, "turnComplete": True}})


async def _turn(ws: ClientConnection) -> list[dict[str, Any]]:
    """Every message up to the turn's end (``turnComplete``, ``toolCall``)."""
    out = []
    while True:
        message = json.loads(await asyncio.wait_for(ws.recv(), 10))
        out.append(message)
        content = message.get("serverContent") or {}
        if content.get("turnComplete") or "toolCall" in message:
            return out


def _read(messages: list[dict[str, Any]]) -> sw.StreamResult:
    stream: Any = sw.stream("gemini-live")
    stream.feed_message(json.dumps({"setupComplete": {}}))
    for message in messages:
        stream.feed_message(json.dumps(message))
    stream.close()
    result: sw.StreamResult = stream.results[-1]
    return result


async def _closed(ws: ClientConnection) -> tuple[int | None, str]:
    with pytest.raises(ConnectionClosed):
        while True:
            await asyncio.wait_for(ws.recv(), 10)
    return ws.close_code, ws.close_reason or ""


@pytest.mark.parametrize("version", ["v1beta", "v1alpha"])
def test_a_turn_is_the_case_the_model_names_with_its_usage_in_lives_fields(version: str) -> None:
    async def go() -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
        async with _socket(PATH.replace("v1beta", version)) as (mock, ws):
            await _setup(ws, "sw-usage")
            await ws.send(_ask("hello"))
            return await _turn(ws), mock.log.entries()

    messages, entries = asyncio.run(go())
    result = _read(messages)
    facts = truth(CASES["usage"], "gemini")
    assert result.text == facts.text and result.status == "completed"
    assert result.stop_reason == "stop"
    usage = messages[-1]["usageMetadata"]
    assert usage["responseTokenCount"] + usage["thoughtsTokenCount"] == 56
    assert "candidatesTokenCount" not in usage
    assert result.usage is not None and result.usage.input_tokens == 1234
    assert result.usage.output_tokens == 56 and result.usage.cache_read_tokens == 1000
    assert messages[-2] == {"serverContent": {"generationComplete": True}}
    (entry,) = entries
    assert entry["upstream"] == "gemini-live" and entry["completed"] and entry["status"] == 101
    assert len(entry["writes"]) == 2  # each write logged, as it went


def test_the_prompt_picks_the_case_when_the_model_names_none() -> None:
    async def go() -> list[dict[str, Any]]:
        async with _socket() as (_, ws):
            await _setup(ws)  # a real model's name
            await ws.send(_ask(prompt_for(cell_model("short-text", "whole", "t1"))))
            return await _turn(ws)

    result = _read(asyncio.run(go()))
    assert result.text == "".join(CASES["short-text"].text)


def test_calls_come_whole_in_one_tool_call_and_the_tool_response_gets_the_answer() -> None:
    async def go() -> tuple[list[dict[str, Any]], list[dict[str, Any]], list[Any]]:
        async with _socket() as (mock, ws):
            await _setup(ws, "sw-tool-error-result")
            await ws.send(_ask("add"))
            first = await _turn(ws)
            (call,) = first[-1]["toolCall"]["functionCalls"]
            answer = {"id": call["id"], "name": call["name"], "response": {"error": "no"}}
            await ws.send(json.dumps({"toolResponse": {"functionResponses": [answer]}}))
            return first, await _turn(ws), mock.log.entries()

    first, second, entries = asyncio.run(go())
    calls = first[-1]["toolCall"]["functionCalls"]
    assert [(c["name"], c["args"]) for c in calls] == [("add_numbers", {"a": 1, "b": "two"})]
    assert first[-1]["usageMetadata"]["totalTokenCount"] == 19
    result = _read(first)
    assert result.stop_reason == "tool_calls" and result.tool_calls[0].id == calls[0]["id"]
    assert _read(second).text == "".join(CASES["tool-error-result"].follow_up)
    # The second turn's request is the conversation: the call, then its result.
    check = entries[1]["tool_result"]
    assert check["correlated"] and check["is_error"] and check["call_in_history"]


def test_parallel_calls_share_one_tool_call_each_with_its_own_id() -> None:
    async def go() -> list[dict[str, Any]]:
        async with _socket() as (_, ws):
            await _setup(ws, "sw-parallel-tools")
            await ws.send(_ask("both"))
            return await _turn(ws)

    messages = asyncio.run(go())
    assert sum("toolCall" in m for m in messages) == 1
    calls = messages[-1]["toolCall"]["functionCalls"]
    assert [c["name"] for c in calls] == ["add_numbers", "ping"]
    assert len({c["id"] for c in calls}) == 2


def test_an_in_stream_error_closes_the_socket_with_1011_and_the_message() -> None:
    async def go() -> tuple[list[Any], tuple[int | None, str]]:
        async with _socket() as (_, ws):
            await _setup(ws, "sw-in-stream-error")
            await ws.send(_ask("x"))
            got = []
            with pytest.raises(ConnectionClosed):
                while True:
                    got.append(json.loads(await asyncio.wait_for(ws.recv(), 10)))
            return got, (ws.close_code, ws.close_reason or "")

    messages, (code, reason) = asyncio.run(go())
    assert code == 1011 and "overloaded" in reason
    stream: Any = sw.stream("gemini-live")
    stream.feed_message(json.dumps({"setupComplete": {}}))
    for message in messages:
        stream.feed_message(json.dumps(message))
    stream.connection_closed(code, reason)
    result = stream.results[-1]
    assert result.text == "Partial answer" and result.status == "error"
    assert result.error is not None and result.error.code == 1011


#: A client message the session cannot take, and Live's close for it.
REFUSED = [
    ([b"not json"], 1007),
    (["[1, 2]"], 1007),
    (['{"swFutureMessage": {}}'], 1007),
    ([_ask("before setup")], 1007),
    (['{"setup": {"model": 7}}'], 1007),
    (["SETUP", '{"setup": {"model": "models/sw-short-text"}}'], 1007),
    (["SETUP", '{"realtimeInput": {"text": "hi"}}'], 1008),
    (["SETUP", '{"toolResponse": {"functionResponses": [{"id": "nope", "name": "x"}]}}'], 1007),
    (["SETUP", '{"toolResponse": {"functionResponses": [{"id": [1], "name": "x"}]}}'], 1007),
    (["SETUP", '{"clientContent": {"turns": "hi"}}'], 1007),
]


@pytest.mark.parametrize(("messages", "code"), REFUSED)
def test_a_message_the_session_cannot_take_closes_it_with_lives_code(
    messages: list[str | bytes], code: int
) -> None:
    async def go() -> tuple[int | None, str]:
        async with _socket() as (_, ws):
            for message in messages:
                if message == "SETUP":
                    await _setup(ws)
                else:
                    await ws.send(message)
            return await _closed(ws)

    got, reason = asyncio.run(go())
    assert got == code and reason


def test_a_turn_whose_model_and_prompt_name_no_case_closes_with_1008() -> None:
    async def go() -> tuple[int | None, str]:
        async with _socket() as (_, ws):
            await _setup(ws)
            await ws.send(_ask("no case named here"))
            return await _closed(ws)

    code, reason = asyncio.run(go())
    assert code == 1008 and reason


def test_a_new_turn_interrupts_the_one_in_flight_and_is_answered() -> None:
    async def go() -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
        async with _socket() as (mock, ws):
            await _setup(ws)
            await ws.send(_ask(prompt_for(cell_model("cancel", "whole", "t2"))))  # 200 paced
            for _ in range(3):
                await asyncio.wait_for(ws.recv(), 10)
            await ws.send(_ask("and now?"))
            messages = [json.loads(await asyncio.wait_for(ws.recv(), 10)) for _ in range(8)]
            return messages, mock.log.entries()

    messages, entries = asyncio.run(go())
    # Up to the interruption, the first turn's ticks; after it, a new turn
    # (the conversation's first prompt still names the case: it starts again).
    cut = next(i for i, m in enumerate(messages) if m["serverContent"].get("interrupted"))
    assert _read(messages[cut + 1 :]).text.startswith("tick 000 tick 001")
    first, second = entries
    assert first["cancelled_at"] is not None and not first.get("completed")
    assert len(first["writes"]) < 50 and first.get("disconnected_at") is None
    assert second["body"] is not None and len(second["writes"]) >= 1


def test_binary_messages_are_read_and_a_close_mid_turn_ends_the_turn() -> None:
    async def go() -> dict[str, Any]:
        async with _socket() as (mock, ws):
            setup = {"setup": {"model": "models/sw-cancel"}}
            await ws.send(json.dumps(setup).encode())
            assert json.loads(await asyncio.wait_for(ws.recv(), 10)) == {"setupComplete": {}}
            await ws.send(_ask("tick").encode())
            await asyncio.wait_for(ws.recv(), 10)
            await ws.close()
            for _ in range(100):
                if mock.log.entries()[0].get("ended_at"):
                    break
                await asyncio.sleep(0.05)
            entry: dict[str, Any] = mock.log.entries()[0]
            return entry

    entry = asyncio.run(go())
    assert entry["disconnected_at"] is not None and not entry.get("completed")
    assert len(entry["writes"]) < 50
