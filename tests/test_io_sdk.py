"""streamwire.io with the official SDKs' own streaming responses, over loopback.

The openai and anthropic SDKs (current releases are built on httpx2) hand a
caller their raw response in two shapes: ``with_streaming_response.create(...,
stream=True)`` (an ``APIResponse`` / ``AsyncAPIResponse`` around the
library's response, ``.http_response``) and ``create(..., stream=True)`` (a
``Stream`` / ``AsyncStream``, ``.response``). Each shape, sync and async,
is pointed (``base_url``) at the test server, which serves a recorded or
hand-written stream, and read with ``sw.iter_events`` / ``sw.aiter_events``:
the events equal a direct replay of the bytes, the request id comes from the
headers, and the edges behave as with a bare client: a cancel is a
disconnect the server sees, a timeout fires, a cut connection ends
``incomplete``, a 200 answer that is not a stream is a clear error.

An error *status* never reaches streamwire through an SDK: the SDK raises
its own ``APIStatusError`` before it returns a response (the last test pins
that down, so that the README says the truth).
"""

from __future__ import annotations

import asyncio
import time
from typing import Any

import anthropic
import openai
import pytest

import streamwire as sw
from fixture_replay import Fixture, manifests
from servers.stream_server import Scenario, StreamServer, shared_server
from test_io_cancel import HOLD, STALLING, TOOL_EVENTS

CHAT_BODY = b"".join(TOOL_EVENTS)
ANTHROPIC = next(f for f in manifests() if f.name == "anthropic/prism-tools")
MESSAGES = [{"role": "user", "content": "Weather in Oslo?"}]


@pytest.fixture(scope="session")
def server() -> StreamServer:
    return shared_server()


def _openai(url: str, *, asynchronous: bool = False) -> Any:
    cls = openai.AsyncOpenAI if asynchronous else openai.OpenAI
    return cls(base_url=url, api_key="sk-test", max_retries=0, timeout=10.0)


def _anthropic(url: str, *, asynchronous: bool = False) -> Any:
    cls = anthropic.AsyncAnthropic if asynchronous else anthropic.Anthropic
    return cls(base_url=url, api_key="sk-ant-test", max_retries=0, timeout=10.0)


def _direct(protocol: str, raw: bytes) -> list[sw.Event]:
    s = sw.stream(protocol)
    return s.feed(raw) + s.close()


def _chat_scenario(chunks: list[bytes] = TOOL_EVENTS, **kwargs: Any) -> Scenario:
    return Scenario(body=CHAT_BODY, chunks=chunks, headers={"x-request-id": "req_sdk"}, **kwargs)


def _read_sync(
    response: Any, protocol: str, **options: Any
) -> tuple[list[sw.Event], sw.StreamResult]:
    with sw.iter_events(response, protocol, **options) as events:
        out = list(events)
    return out, events.result


async def _read_async(
    response: Any, protocol: str, **options: Any
) -> tuple[list[sw.Event], sw.StreamResult]:
    async with sw.aiter_events(response, protocol, **options) as events:
        out = [event async for event in events]
    return out, events.result


def _check_chat(events: list[sw.Event], result: sw.StreamResult) -> None:
    assert events == _direct("openai-chat", CHAT_BODY)
    assert (result.status, result.executable, result.final) == ("completed", True, True)
    assert result.error is None and result.http_ok is True
    assert [c.name for c in result.tool_calls] == ["get_weather"]


# --- every shape of SDK response ------------------------------------------------


def test_openai_with_streaming_response(server: StreamServer) -> None:
    url = server.add(_chat_scenario())
    client = _openai(url)
    with client.chat.completions.with_streaming_response.create(
        model="gpt-4o", messages=MESSAGES, stream=True
    ) as response:
        events, result = _read_sync(response, "openai-chat", idle_timeout=5.0)
    _check_chat(events, result)
    visit = server.visits_of(url)[0]
    assert visit.path.endswith("/chat/completions") and b'"stream":true' in visit.body


def test_openai_stream_object(server: StreamServer) -> None:
    url = server.add(_chat_scenario())
    stream = _openai(url).chat.completions.create(model="gpt-4o", messages=MESSAGES, stream=True)
    events, result = _read_sync(stream, "openai-chat")
    _check_chat(events, result)


def test_openai_async_with_streaming_response(server: StreamServer) -> None:
    url = server.add(_chat_scenario())

    async def run() -> tuple[list[sw.Event], sw.StreamResult]:
        client = _openai(url, asynchronous=True)
        async with client.chat.completions.with_streaming_response.create(
            model="gpt-4o", messages=MESSAGES, stream=True
        ) as response:
            return await _read_async(response, "openai-chat", idle_timeout=5.0)

    _check_chat(*asyncio.run(run()))


def test_openai_async_stream_object(server: StreamServer) -> None:
    url = server.add(_chat_scenario())

    async def run() -> tuple[list[sw.Event], sw.StreamResult]:
        client = _openai(url, asynchronous=True)
        stream = await client.chat.completions.create(
            model="gpt-4o", messages=MESSAGES, stream=True
        )
        return await _read_async(stream, "openai-chat")

    _check_chat(*asyncio.run(run()))


def _anthropic_scenario(fixture: Fixture) -> Scenario:
    raw = fixture.raw
    chunks = [raw[i : i + 97] for i in range(0, len(raw), 97)]
    return Scenario(body=raw, chunks=chunks, headers={"request-id": "req_ant_sdk"})


def test_anthropic_with_streaming_response_sync_and_async(server: StreamServer) -> None:
    direct = _direct("anthropic", ANTHROPIC.raw)
    url = server.add(_anthropic_scenario(ANTHROPIC))
    with _anthropic(url).messages.with_streaming_response.create(
        model="claude-test", max_tokens=64, messages=MESSAGES, stream=True
    ) as response:
        events, result = _read_sync(response, "anthropic")
    assert events == direct and result.status == "completed"
    assert result.executable is True

    url = server.add(_anthropic_scenario(ANTHROPIC))

    async def run() -> tuple[list[sw.Event], sw.StreamResult]:
        client = _anthropic(url, asynchronous=True)
        async with client.messages.with_streaming_response.create(
            model="claude-test", max_tokens=64, messages=MESSAGES, stream=True
        ) as response:
            return await _read_async(response, "anthropic")

    events, result = asyncio.run(run())
    assert events == direct and result.status == "completed"
    assert server.visits_of(url)[0].path.endswith("/v1/messages")


# --- the edges, through an SDK response -----------------------------------------


@pytest.mark.timed
def test_cancel_through_an_sdk_response_is_a_disconnect(server: StreamServer) -> None:
    url = server.add(_chat_scenario(STALLING, delay=HOLD))
    with _openai(url).chat.completions.with_streaming_response.create(
        model="gpt-4o", messages=MESSAGES, stream=True
    ) as response:
        with sw.iter_events(response, "openai-chat") as events:
            for event in events:
                if isinstance(event, sw.ToolCallStarted):
                    break
        stopped = time.monotonic()
    visit = server.wait_for(url, "disconnected")
    assert visit.disconnected is not None and visit.disconnected - stopped < 0.1
    assert events.result.status == "cancelled" and not events.result.executable


def test_async_cancel_of_the_reading_task(server: StreamServer) -> None:
    url = server.add(_chat_scenario(STALLING, delay=HOLD))

    async def run() -> sw.StreamResult:
        client = _openai(url, asynchronous=True)
        async with client.chat.completions.with_streaming_response.create(
            model="gpt-4o", messages=MESSAGES, stream=True
        ) as response:
            events = sw.aiter_events(response, "openai-chat")
            started = asyncio.Event()

            async def read() -> None:
                async for event in events:
                    if isinstance(event, sw.ToolCallStarted):
                        started.set()

            task = asyncio.create_task(read())
            await started.wait()
            await asyncio.sleep(0.02)
            task.cancel()
            with pytest.raises(asyncio.CancelledError):
                await task
            return events.result

    result = asyncio.run(run())
    assert result.status == "cancelled"
    server.wait_for(url, "disconnected")


@pytest.mark.timed
@pytest.mark.parametrize("asynchronous", [False, True], ids=["sync", "async"])
def test_idle_timeout_through_an_sdk_response(server: StreamServer, asynchronous: bool) -> None:
    url = server.add(_chat_scenario(STALLING, delay=HOLD))
    started = time.monotonic()
    if asynchronous:

        async def run() -> sw.StreamResult:
            client = _openai(url, asynchronous=True)
            async with client.chat.completions.with_streaming_response.create(
                model="gpt-4o", messages=MESSAGES, stream=True
            ) as response:
                return (await _read_async(response, "openai-chat", idle_timeout=0.15))[1]

        result = asyncio.run(run())
    else:
        with _openai(url).chat.completions.with_streaming_response.create(
            model="gpt-4o", messages=MESSAGES, stream=True
        ) as response:
            result = _read_sync(response, "openai-chat", idle_timeout=0.15)[1]
    assert time.monotonic() - started < HOLD / 2
    assert result.status == "incomplete" and "idle_timeout" in {w.code for w in result.warnings}
    server.wait_for(url, "disconnected")


def test_cut_connection_through_an_sdk_response_is_incomplete(server: StreamServer) -> None:
    url = server.add(_chat_scenario(cut_at=len(STALLING[0]) + 10))
    with _openai(url).chat.completions.with_streaming_response.create(
        model="gpt-4o", messages=MESSAGES, stream=True
    ) as response:
        result = _read_sync(response, "openai-chat")[1]
    assert result.status == "incomplete" and not result.executable
    assert "transport_error" in {w.code for w in result.warnings}


def test_a_200_answer_that_is_not_a_stream_is_a_clear_error(server: StreamServer) -> None:
    body = b'{"id": "chatcmpl-1", "object": "chat.completion", "choices": []}'
    url = server.add(Scenario(body=body, content_type="application/json"))
    with _openai(url).chat.completions.with_streaming_response.create(
        model="gpt-4o", messages=MESSAGES, stream=True
    ) as response:
        result = _read_sync(response, "openai-chat")[1]
    assert result.status == "error" and result.error is not None
    assert result.error.type == "unexpected_content_type"


def test_an_error_status_is_raised_by_the_sdk_before_streamwire_sees_it(
    server: StreamServer,
) -> None:
    body = b'{"error": {"message": "Rate limit reached", "type": "requests", "code": "rate"}}'
    url = server.add(Scenario(body=body, status=429, content_type="application/json"))
    with pytest.raises(openai.RateLimitError):
        with _openai(url).chat.completions.with_streaming_response.create(
            model="gpt-4o", messages=MESSAGES, stream=True
        ):
            pass  # pragma: no cover - the SDK raised on entering


def test_sdk_responses_of_the_wrong_flavour_are_refused_at_the_call(server: StreamServer) -> None:
    url = server.add(_chat_scenario())
    with _openai(url).chat.completions.with_streaming_response.create(
        model="gpt-4o", messages=MESSAGES, stream=True
    ) as response:
        with pytest.raises(TypeError, match="iter_events"):
            sw.aiter_events(response, "openai-chat")
        with pytest.raises(TypeError, match="idle_timeout"):
            sw.iter_events(response, "openai-chat", idle_timout=3)
