"""The burst flag and the timing metrics behind a real nginx reverse proxy on loopback.

nginx (the Debian package; ``.ci/run`` installs it) runs as its own process
with a generated config (``servers/nginx.py``) in front of the stream server.
The stream is slow and small: ten events 40 ms apart, well under nginx's
proxy buffers. With ``proxy_buffering off`` the events arrive spread out,
time to first event is short and ``burst`` is False. With buffering on, nginx
holds the whole response until the upstream finished, so the events arrive
late and at once: ``burst`` is True and time to first event shows the delay.

The upstream answers with a Content-Length here: nginx 1.22 (observed) passes
a *chunked* upstream response on chunk by chunk even with buffering on, so
the buffering case needs a length-delimited body to show.

The nginx binary is required under CI (``CI`` set): a missing one fails the
test instead of skipping it.
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Iterator

import httpx
import pytest

import streamwire as sw
from servers.clients import CLIENTS, fetch
from servers.nginx import Nginx, find_nginx
from servers.stream_server import Scenario, StreamServer, shared_server

EVENTS = 10
GAP = 0.04
SPREAD = (EVENTS - 1) * GAP  # 0.36 s from the first write to the last


def _chunks() -> list[bytes]:
    out = []
    for i in range(EVENTS - 1):
        chunk = {
            "id": "c1",
            "object": "chat.completion.chunk",
            "model": "m",
            "choices": [{"index": 0, "delta": {"content": f"w{i} "}, "finish_reason": None}],
        }
        out.append(b"data: " + json.dumps(chunk).encode() + b"\n\n")
    end = {
        "id": "c1",
        "object": "chat.completion.chunk",
        "model": "m",
        "choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}],
    }
    out.append(b"data: " + json.dumps(end).encode() + b"\n\ndata: [DONE]\n\n")
    return out


@pytest.fixture(scope="module")
def server() -> StreamServer:
    return shared_server()


@pytest.fixture(scope="module")
def nginx(server: StreamServer) -> Iterator[Nginx]:
    binary = find_nginx()
    if binary is None:
        message = "nginx is not installed (apt-get install nginx; .ci/run installs it)"
        if os.environ.get("CI"):
            pytest.fail(message + " - required under CI")
        pytest.skip(message)
    proxy = Nginx(binary, server.port).start()
    yield proxy
    proxy.close()


def _get(client: str, url: str) -> sw.StreamResult:
    started = time.monotonic()
    out = fetch(client, url, "openai-chat", started_at=started)
    assert out.result is not None
    return out.result


def _scenario() -> Scenario:
    chunks = _chunks()
    return Scenario(body=b"".join(chunks), chunks=chunks, delay=GAP, content_length=True)


@pytest.mark.timed
@pytest.mark.parametrize("client", CLIENTS)
def test_unbuffered_proxy_delivers_events_spread_out(
    server: StreamServer, nginx: Nginx, client: str
) -> None:
    result = _get(client, nginx.url("unbuffered", server.add(_scenario())))
    m = result.metrics
    assert result.status == "completed" and result.text.startswith("w0 w1")
    assert m.burst is False
    assert m.time_to_first_event is not None and m.time_to_first_event < SPREAD / 2
    assert m.duration is not None and m.duration >= SPREAD * 0.9
    assert m.largest_gap is not None and m.largest_gap >= GAP / 2
    assert m.mean_gap is not None and m.mean_gap >= GAP / 4


@pytest.mark.timed
@pytest.mark.parametrize("client", CLIENTS)
def test_buffering_proxy_delivers_one_late_burst(
    server: StreamServer, nginx: Nginx, client: str
) -> None:
    result = _get(client, nginx.url("buffered", server.add(_scenario())))
    m = result.metrics
    assert result.status == "completed" and result.text.startswith("w0 w1")
    assert m.burst is True
    assert m.time_to_first_event is not None and m.time_to_first_event >= SPREAD * 0.9
    assert m.time_to_headers is not None and m.time_to_headers >= SPREAD * 0.9
    # Everything came in one read (no gap at all) or a few, back to back.
    assert m.largest_gap is None or m.largest_gap < GAP / 2
    assert m.mean_gap is not None and m.mean_gap < GAP / 4


@pytest.mark.timed
def test_the_proxy_passes_cancellation_on(server: StreamServer, nginx: Nginx) -> None:
    # Through an unbuffered proxy, closing the client's response closes the upstream too.
    chunks = _chunks()
    upstream = server.add(Scenario(body=b"".join(chunks), chunks=chunks, delay=3.0))
    with httpx.Client(timeout=10) as client:
        with client.stream("GET", nginx.url("unbuffered", upstream)) as response:
            with sw.iter_events(response, "openai-chat") as events:
                next(events)
                closed = time.monotonic()
    visit = server.wait_for(upstream, "disconnected")
    assert visit.disconnected is not None and visit.disconnected - closed < 1.0
    assert events.result.status == "cancelled"
