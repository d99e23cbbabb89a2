"""How reading ends, with every client over loopback: decided results, dropped iterators, mistakes.

* **The result decided, the connection still open.** An upstream that keeps
  the connection open after ``[DONE]`` (or after its framing broke) must not
  hold the reader: the iterator ends within the drain window, the result is
  final, and the server sees the client leave. A body that does end at once
  is read to its end, so an HTTP/1.1 connection goes back to the pool.
* **Leaving without ``close()``.** An iterator dropped mid-stream (the last
  reference gone, or collected in a reference cycle) ends ``cancelled`` and
  closes its response; one still held after ``break`` stays open until the
  response's owner closes the response, after which it reads ``cancelled``.
* **Mistakes at the call.** A misspelt option, a response of the wrong
  flavour or a bad tool schema raise when ``iter_events`` / ``aiter_events``
  is called, not at the first event.
"""

from __future__ import annotations

import asyncio
import gc
import time
from typing import Any

import pytest

import streamwire as sw
from servers.clients import CLIENTS, SYNC_CLIENTS, fetch, library
from servers.stream_server import Scenario, StreamServer, shared_server
from streamwire.io._driver import DRAIN_SECONDS
from test_io_cancel import HOLD, STALLING, TOOL_EVENTS

#: How long, at most, a reader may take to end once the result is decided:
#: the drain window plus scheduling on a loaded machine; far below ``HOLD``.
DECIDED_WITHIN = DRAIN_SECONDS + 0.6


@pytest.fixture(scope="session")
def server() -> StreamServer:
    return shared_server()


# --- the result decided, the connection left open --------------------------------


@pytest.mark.timed
@pytest.mark.parametrize("client", CLIENTS)
def test_done_then_an_open_connection_ends_the_iterator(server: StreamServer, client: str) -> None:
    # The whole stream, [DONE] included, then the server holds the connection.
    url = server.add(Scenario(body=b"".join(TOOL_EVENTS), chunks=TOOL_EVENTS, hold=HOLD))
    out = fetch(client, url, "openai-chat")
    elapsed = out.ended_at - out.started_at
    assert elapsed < DECIDED_WITHIN, f"the reader was held {elapsed:.2f} s after [DONE]"
    result = out.result
    assert result is not None and result.final
    assert (result.status, result.executable) == ("completed", True)
    assert not [w for w in result.warnings if w.code in ("transport_error", "idle_timeout")]
    assert isinstance(out.events[-1], sw.MessageCompleted)
    visit = server.wait_for(url, "disconnected")
    assert visit.completed is None


@pytest.mark.timed
@pytest.mark.parametrize("client", CLIENTS)
def test_a_framing_error_then_an_open_connection_ends_the_iterator(
    server: StreamServer, client: str
) -> None:
    # The second event passes max_event_bytes: the framing breaks, the server holds on.
    chunks = [TOOL_EVENTS[0], b"data: " + b"x" * 4096 + b"\n\n", TOOL_EVENTS[1]]
    url = server.add(Scenario(body=b"".join(chunks), chunks=chunks, hold=HOLD))
    out = fetch(client, url, "openai-chat", max_event_bytes=1024)
    assert out.ended_at - out.started_at < DECIDED_WITHIN
    result = out.result
    assert result is not None and result.final
    assert result.status == "error" and result.error is not None
    assert (result.error.phase, result.error.type) == ("framing", "event_too_large")
    server.wait_for(url, "disconnected")


def test_a_body_that_ends_promptly_leaves_its_connection_reusable(server: StreamServer) -> None:
    # The server ends the body 10 ms after [DONE], well inside the drain window.
    chunks = [*TOOL_EVENTS, b""]
    url = server.add(Scenario(body=b"".join(TOOL_EVENTS), chunks=chunks, delay=0.01))
    for lib in (library("httpx"), library("httpx2")):
        with lib.Client() as client:
            for _ in range(2):
                with client.stream("GET", url) as response:
                    with sw.iter_events(response, "openai-chat") as events:
                        list(events)
                assert events.result.status == "completed"
            # Both requests went over one connection: it was returned to the pool.
            connections = client._transport._pool.connections  # httpcore's pool
            assert len(connections) == 1, connections
            assert "Request Count: 2" in connections[0].info(), connections


# --- leaving without close() -----------------------------------------------------


@pytest.mark.timed
@pytest.mark.parametrize("client", SYNC_CLIENTS)
def test_an_iterator_collected_in_a_reference_cycle_cancels(
    server: StreamServer, client: str
) -> None:
    url = server.add(Scenario(body=b"".join(TOOL_EVENTS), chunks=STALLING, delay=HOLD))
    lib = library(client)
    with lib.Client(timeout=10.0) as http, http.stream("GET", url) as response:
        holder: dict[str, Any] = {}
        holder["self"] = holder  # a cycle: only the collector frees it
        holder["events"] = events = sw.iter_events(response, "openai-chat")
        driver = events._driver
        for event in events:
            if isinstance(event, sw.ToolCallStarted):
                break
        del events, holder
        gc.collect()
        stopped = time.monotonic()
        assert response.is_closed
    visit = server.wait_for(url, "disconnected")
    assert visit.disconnected is not None and visit.disconnected - stopped < 0.1
    assert driver.result.status == "cancelled"


@pytest.mark.parametrize("client", ["httpx-async", "httpx2-async", "aiohttp"])
def test_a_dropped_async_iterator_closes_its_response(server: StreamServer, client: str) -> None:
    url = server.add(Scenario(body=b"".join(TOOL_EVENTS), chunks=STALLING, delay=HOLD))

    async def run() -> Any:
        if client == "aiohttp":
            import aiohttp

            async with aiohttp.ClientSession() as session, session.get(url) as response:
                return await _drop(response)
        async with library(client).AsyncClient() as http, http.stream("GET", url) as response:
            return await _drop(response)

    async def _drop(response: Any) -> Any:
        events = sw.aiter_events(response, "openai-chat")
        driver = events._driver
        async for event in events:
            if isinstance(event, sw.ToolCallStarted):
                break
        del events  # the last reference: finalized at once
        await asyncio.sleep(0.05)  # a close scheduled on the loop runs
        return driver

    driver = asyncio.run(run())
    server.wait_for(url, "disconnected")
    assert driver.result.status == "cancelled"


@pytest.mark.parametrize("client", SYNC_CLIENTS)
def test_an_iterator_still_held_after_break_is_cancelled_when_the_response_closes(
    server: StreamServer, client: str
) -> None:
    url = server.add(Scenario(body=b"".join(TOOL_EVENTS), chunks=STALLING, delay=HOLD))
    lib = library(client)
    with lib.Client(timeout=10.0) as http:
        with http.stream("GET", url) as response:
            events = sw.iter_events(response, "openai-chat")
            for event in events:
                if isinstance(event, sw.ToolCallStarted):
                    break
            # Neither closed nor dropped: it cannot know the loop left.
            assert events.result.status == "in_progress" and not response.is_closed
        # The client's ``with`` closed the response: nothing more can come.
        assert events.result.status == "cancelled" and events.result.final
    assert not events.result.executable


def test_an_async_iterator_still_held_is_cancelled_when_aiohttp_releases(
    server: StreamServer,
) -> None:
    import aiohttp

    url = server.add(Scenario(body=b"".join(TOOL_EVENTS), chunks=STALLING, delay=HOLD))

    async def run() -> sw.StreamResult:
        async with aiohttp.ClientSession() as session:
            async with session.get(url) as response:
                events = sw.aiter_events(response, "openai-chat")
                async for event in events:
                    if isinstance(event, sw.ToolCallStarted):
                        break
                assert events.result.status == "in_progress"
            return events.result

    assert asyncio.run(run()).status == "cancelled"


# --- mistakes are reported at the call -------------------------------------------


@pytest.mark.parametrize("client", CLIENTS)
def test_a_misspelt_option_is_refused_at_the_call(server: StreamServer, client: str) -> None:
    url = server.add(Scenario(body=b"".join(TOOL_EVENTS)))
    with pytest.raises(TypeError, match=r"'idle_timout'.*did you mean 'idle_timeout'"):
        fetch(client, url, "openai-chat", idle_timout=30)
    with pytest.raises(TypeError, match=r"'strict_dnoe'.*did you mean 'strict_done'"):
        fetch(client, url, "openai-chat", strict_dnoe=True)


def test_responses_of_the_wrong_flavour_are_refused_at_the_call(server: StreamServer) -> None:
    url = server.add(Scenario(body=b"".join(TOOL_EVENTS)))
    for lib in (library("httpx"), library("httpx2")):
        with lib.Client() as http, http.stream("GET", url) as response:
            with pytest.raises(TypeError, match=r"use sw\.iter_events"):
                sw.aiter_events(response, "openai-chat")

        async def run(lib: Any = lib) -> None:
            async with lib.AsyncClient() as http, http.stream("GET", url) as response:
                with pytest.raises(TypeError, match=r"use sw\.aiter_events"):
                    sw.iter_events(response, "openai-chat")

        asyncio.run(run())


def test_bad_tool_definitions_are_refused_at_the_call(server: StreamServer) -> None:
    url = server.add(Scenario(body=b"".join(TOOL_EVENTS)))
    bad = [{"type": "function", "function": {"name": "f", "parameters": {"type": 12}}}]
    with pytest.raises(sw.UsageError, match="invalid JSON Schema"):
        fetch("httpx2", url, "openai-chat", tools=bad)
    with pytest.raises(sw.UsageError, match="validation must be"):
        fetch("httpx2", url, "openai-chat", validation="strict")


def test_stream_refuses_an_unknown_option_with_a_suggestion() -> None:
    with pytest.raises(TypeError, match=r"sw.stream: unknown option 'max_tool_call'"):
        sw.stream("anthropic", max_tool_call=3)
    assert sw.stream("anthropic", max_tool_calls=3).result.status == "in_progress"
