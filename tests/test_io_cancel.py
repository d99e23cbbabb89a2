"""Cancellation and timeouts of streamwire.io against a real server, with all three clients.

A client that stops early must close the upstream response at once: the
server (which stamps the moment its handler sees the connection drop, on the
same monotonic clock) must see the disconnect within 100 ms, and the result
must be ``cancelled``, without final usage, with nothing executable. The
timeouts (first event, idle gap, total deadline) must fire as configured and
end the stream ``incomplete`` with the timeout named in a warning, and the
server must see the disconnect then too.

Timing assertions leave generous margins for a loaded 2-core machine while
still telling a working timeout from a missing one (the server would
otherwise hold the connection for seconds).
"""

from __future__ import annotations

import json

import pytest

import streamwire as sw
from servers.clients import CLIENTS, fetch
from servers.stream_server import Scenario, StreamServer, shared_server

#: The server's wait where the client is expected to give up: far longer than
#: any timeout tested, so a timeout that does not fire is unmistakable.
HOLD = 3.0
#: How late a timeout may fire, at most (scheduling on a loaded machine).
SLACK = 0.6


@pytest.fixture(scope="session")
def server() -> StreamServer:
    return shared_server()


def _chunk(payload: dict) -> bytes:
    return b"data: " + json.dumps(payload).encode() + b"\n\n"


def _text(i: int) -> bytes:
    return _chunk(
        {
            "id": "c1",
            "object": "chat.completion.chunk",
            "model": "m",
            "choices": [{"index": 0, "delta": {"content": f"w{i} "}, "finish_reason": None}],
        }
    )


#: A chat stream with one tool call, cut into one chunk per event.
TOOL_EVENTS = [
    _chunk(
        {
            "id": "c2",
            "object": "chat.completion.chunk",
            "model": "m",
            "choices": [{"index": 0, "delta": {"role": "assistant"}, "finish_reason": None}],
        }
    ),
    _chunk(
        {
            "id": "c2",
            "object": "chat.completion.chunk",
            "model": "m",
            "choices": [
                {
                    "index": 0,
                    "delta": {
                        "tool_calls": [
                            {
                                "index": 0,
                                "id": "call_1",
                                "type": "function",
                                "function": {"name": "get_weather", "arguments": '{"city": '},
                            }
                        ]
                    },
                    "finish_reason": None,
                }
            ],
        }
    ),
    _chunk(
        {
            "id": "c2",
            "object": "chat.completion.chunk",
            "model": "m",
            "choices": [
                {
                    "index": 0,
                    "delta": {"tool_calls": [{"index": 0, "function": {"arguments": '"Oslo"}'}}]},
                    "finish_reason": None,
                }
            ],
        }
    ),
    _chunk(
        {
            "id": "c2",
            "object": "chat.completion.chunk",
            "model": "m",
            "choices": [{"index": 0, "delta": {}, "finish_reason": "tool_calls"}],
            "usage": {"prompt_tokens": 5, "completion_tokens": 7, "total_tokens": 12},
        }
    ),
    b"data: [DONE]\n\n",
]

#: The same stream, the call started (and half its arguments in) in the first write.
STALLING = [TOOL_EVENTS[0] + TOOL_EVENTS[1], *TOOL_EVENTS[2:]]

STOPS = {
    "httpx": ("close", "break", "context"),
    "httpx-async": ("close", "context", "cancel_task"),
    "httpx2": ("close", "break", "context"),
    "httpx2-async": ("close", "context", "cancel_task"),
    "aiohttp": ("close", "context", "cancel_task"),
}
CANCEL_CASES = [(client, how) for client in CLIENTS for how in STOPS[client]]


def test_the_whole_tool_stream_is_executable_when_read_to_the_end(server: StreamServer) -> None:
    url = server.add(Scenario(body=b"".join(TOOL_EVENTS), chunks=TOOL_EVENTS))
    result = fetch("httpx", url, "openai-chat").result
    assert result is not None
    assert (result.status, result.executable) == ("completed", True)
    assert result.usage is not None and result.usage.final


@pytest.mark.timed
@pytest.mark.parametrize(("client", "how"), CANCEL_CASES, ids=[f"{c}-{h}" for c, h in CANCEL_CASES])
def test_client_cancel_is_a_disconnect_within_100ms(
    server: StreamServer, client: str, how: str
) -> None:
    # MessageStarted, ToolCallStarted, a fragment; then the server stalls.
    url = server.add(Scenario(body=b"".join(TOOL_EVENTS), chunks=STALLING, delay=HOLD))
    out = fetch(client, url, "openai-chat", stop_after=2, how=how)
    visit = server.wait_for(url, "disconnected")
    assert out.stopped_at is not None
    assert visit.disconnected is not None
    lag = visit.disconnected - out.stopped_at
    assert lag < 0.1, f"the server saw the disconnect {lag * 1000:.1f} ms after the cancel"
    assert visit.completed is None
    result = out.result
    assert result is not None and result.final
    assert result.status == "cancelled"
    assert result.executable is False
    assert all(not c.executable for c in result.tool_calls)
    assert result.usage is None or not result.usage.final
    assert out.ended_at - out.started_at < HOLD / 2


@pytest.mark.timed
@pytest.mark.parametrize("client", CLIENTS)
def test_idle_timeout_fires_as_configured(server: StreamServer, client: str) -> None:
    url = server.add(Scenario(body=b"".join(TOOL_EVENTS), chunks=STALLING, delay=HOLD))
    out = fetch(client, url, "openai-chat", idle_timeout=0.15)
    result = out.result
    assert result is not None and result.final
    assert result.status == "incomplete" and result.executable is False
    codes = [w.code for w in result.warnings]
    assert "idle_timeout" in codes
    elapsed = out.ended_at - out.started_at
    assert 0.15 <= elapsed < 0.15 + SLACK, elapsed
    # The events before the stall were delivered, and the server saw the client leave.
    assert any(isinstance(e, sw.ToolCallStarted) for e in out.events)
    assert isinstance(out.events[-1], sw.MessageCompleted)
    visit = server.wait_for(url, "disconnected")
    assert visit.completed is None


@pytest.mark.timed
@pytest.mark.parametrize("client", CLIENTS)
def test_first_event_timeout_fires_as_configured(server: StreamServer, client: str) -> None:
    url = server.add(Scenario(body=b"".join(TOOL_EVENTS), chunks=TOOL_EVENTS, first_delay=HOLD))
    out = fetch(client, url, "openai-chat", first_event_timeout=0.15)
    result = out.result
    assert result is not None
    assert result.status == "incomplete"
    assert [w.code for w in result.warnings if w.code.endswith("timeout")] == [
        "first_event_timeout"
    ]
    assert [type(e).__name__ for e in out.events] == ["MessageCompleted"]
    assert result.metrics.time_to_first_event is not None  # the MessageCompleted itself
    elapsed = out.ended_at - out.started_at
    assert 0.15 <= elapsed < 0.15 + SLACK, elapsed
    server.wait_for(url, "disconnected")


@pytest.mark.timed
@pytest.mark.parametrize("client", CLIENTS)
def test_total_timeout_ends_a_stream_that_keeps_going(server: StreamServer, client: str) -> None:
    chunks = [_text(i) for i in range(200)]
    url = server.add(Scenario(body=b"".join(chunks), chunks=chunks, delay=0.03))
    out = fetch(client, url, "openai-chat", total_timeout=0.3, idle_timeout=0.5)
    result = out.result
    assert result is not None and result.status == "incomplete"
    assert "total_timeout" in {w.code for w in result.warnings}
    assert 0 < len(result.text) < len("".join(f"w{i} " for i in range(200)))
    elapsed = out.ended_at - out.started_at
    assert 0.3 <= elapsed < 0.3 + SLACK, elapsed
    server.wait_for(url, "disconnected")


@pytest.mark.timed
@pytest.mark.parametrize("client", CLIENTS)
def test_gaps_shorter_than_the_idle_timeout_do_not_end_the_stream(
    server: StreamServer, client: str
) -> None:
    url = server.add(Scenario(body=b"".join(TOOL_EVENTS), chunks=TOOL_EVENTS, delay=0.03))
    out = fetch(client, url, "openai-chat", idle_timeout=0.5, first_event_timeout=1.0)
    result = out.result
    assert result is not None
    assert (result.status, result.executable) == ("completed", True)
    assert not [w for w in result.warnings if w.code.endswith("timeout")]
    assert result.metrics.largest_gap is not None and result.metrics.largest_gap >= 0.02


@pytest.mark.timed
@pytest.mark.parametrize("client", CLIENTS)
def test_keepalives_reset_the_idle_timer_only_when_asked(server: StreamServer, client: str) -> None:
    # Keep-alive comments every 40 ms for 0.4 s between two events.
    keepalives = [b": keep-alive\n\n"] * 10
    chunks = [TOOL_EVENTS[0], *keepalives, *TOOL_EVENTS[1:]]
    body = b"".join(chunks)
    strict = server.add(Scenario(body=body, chunks=chunks, delay=0.04))
    out = fetch(client, strict, "openai-chat", idle_timeout=0.2)
    assert out.result is not None and out.result.status == "incomplete"
    assert "idle_timeout" in {w.code for w in out.result.warnings}
    lenient = server.add(Scenario(body=body, chunks=chunks, delay=0.04))
    out = fetch(client, lenient, "openai-chat", idle_timeout=0.2, idle_reset="data")
    assert out.result is not None and out.result.status == "completed"


@pytest.mark.parametrize(
    "options",
    [{"idle_timeout": 0}, {"total_timeout": -1}, {"idle_reset": "bytes"}],
    ids=["zero-idle", "negative-total", "bad-reset"],
)
def test_bad_timeout_options_are_refused(server: StreamServer, options: dict) -> None:
    url = server.add(Scenario(body=b"".join(TOOL_EVENTS)))
    with pytest.raises(ValueError):
        fetch("httpx", url, "openai-chat", **options)


def test_unknown_protocol_is_refused_before_reading(server: StreamServer) -> None:
    url = server.add(Scenario(body=b"".join(TOOL_EVENTS)))
    with pytest.raises(ValueError, match="unknown protocol"):
        fetch("httpx", url, "no-such-protocol")


def test_wrong_client_flavour_is_refused(server: StreamServer) -> None:
    import httpx

    url = server.add(Scenario(body=b"".join(TOOL_EVENTS)))
    with httpx.Client() as client, client.stream("GET", url) as response:
        with pytest.raises(TypeError, match="aiter_events"):
            sw.aiter_events(object(), "openai-chat")
        it = sw.iter_events(response, "openai-chat")
        it.close()
        assert it.result.status == "cancelled" and it.closed
    with pytest.raises(TypeError, match="unsupported response type"):
        sw.iter_events(object(), "openai-chat")
