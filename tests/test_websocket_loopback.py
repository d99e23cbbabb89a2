"""The WebSocket adapters behind a real WebSocket connection on loopback.

A small server (the ``websockets`` library, RFC 6455) replays a fixture: it
waits for the client's first message (``response.create``, ``setup``), then
sends each line of the fixture as one message (text frames; binary frames for
Gemini Live, which sends its JSON that way) and closes. The client (the same
library) feeds every message it receives to the adapter and ends the session
with the close code it got. The events and every response's result must be
those of the direct replay (``fixture_replay.Fixture.replay_messages``).
Each exchange runs on a free port, is bounded in time, and closes cleanly.
"""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest

import streamwire as sw
from fixture_replay import Fixture, _comparable, facts, manifests

websockets = pytest.importorskip("websockets")
from websockets.asyncio.client import connect  # noqa: E402
from websockets.asyncio.server import ServerConnection, serve  # noqa: E402
from websockets.exceptions import ConnectionClosed, ConnectionClosedError  # noqa: E402

FIXTURES = [f for f in manifests() if f.messages]
TIMEOUT = 10.0
BINARY = {"gemini-live"}


async def _exchange(
    messages: list[str],
    protocol: str,
    *,
    binary: bool,
    stop_after: int | None = None,
    close: tuple[int, str] = (1000, ""),
) -> tuple[sw.Stream, list[sw.Event], tuple[int | None, str | None]]:
    """Serves ``messages`` to one client; returns the client's session and events."""
    served = asyncio.Event()

    async def handler(connection: ServerConnection) -> None:
        try:
            await connection.recv()  # the client's request
            for message in messages:
                await connection.send(message.encode() if binary else message)
            await connection.close(*close)
        except ConnectionClosed:
            pass  # the client left first (it cancelled)
        finally:
            served.set()

    session = sw.stream(protocol)
    events: list[sw.Event] = []
    async with serve(handler, "127.0.0.1", 0) as server:
        port = server.sockets[0].getsockname()[1]
        async with connect(f"ws://127.0.0.1:{port}", max_size=2**24) as ws:
            await ws.send(json.dumps({"type": "response.create"}))
            received = 0
            try:
                async for message in ws:
                    events += session.feed_message(message)
                    received += 1
                    if stop_after is not None and received == stop_after:
                        events += session.cancel()  # the caller gives up mid-stream
                        break
            except ConnectionClosedError:
                pass  # an error close: its code is read below
        await asyncio.wait_for(served.wait(), TIMEOUT)
        if stop_after is None:
            events += session.connection_closed(ws.close_code, ws.close_reason or "")
    return session, events, (ws.close_code, ws.close_reason)


def _run(coro: Any) -> Any:
    return asyncio.run(asyncio.wait_for(coro, TIMEOUT))


@pytest.mark.parametrize("fixture", FIXTURES, ids=[f.name for f in FIXTURES])
def test_a_session_over_a_real_websocket_equals_the_direct_replay(fixture: Fixture) -> None:
    replay = fixture.manifest.get("replay", {})
    stop_after = replay.get("at_message") if replay.get("end") == "cancel" else None
    lines = [line for line in fixture.raw.decode("utf-8").split("\n") if line.strip()]
    session, events, (code, _) = _run(
        _exchange(lines, fixture.protocol, binary=fixture.protocol in BINARY, stop_after=stop_after)
    )
    direct, direct_events, _ = fixture.replay_messages("str")
    assert [_comparable(e) for e in events] == [_comparable(e) for e in direct_events]
    results = getattr(session, "results", ())
    assert [facts(r) for r in results] == [facts(r) for r in getattr(direct, "results", ())]
    assert facts(session.result) == facts(direct.result) and session.result.final
    if stop_after is None:
        assert code == 1000


def test_an_error_close_ends_the_response_in_flight_in_error() -> None:
    fixture = next(f for f in FIXTURES if f.name == "openai-realtime/01-text")
    lines = [line for line in fixture.raw.decode("utf-8").split("\n") if line.strip()]
    session, _, (code, reason) = _run(
        _exchange(lines[:5], fixture.protocol, binary=False, close=(1011, "internal error"))
    )
    assert (code, reason) == (1011, "internal error")
    result = session.result
    assert result.status == "error" and result.text == "Hello"
    assert result.error is not None
    assert (result.error.phase, result.error.type, result.error.code) == (
        "transport",
        "websocket_close",
        1011,
    )
    assert result.error.retryable and result.error.message == "internal error"
