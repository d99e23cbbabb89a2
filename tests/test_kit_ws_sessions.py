"""The mock's session log (``GET /_sw/sessions``) and its connections' lifetimes.

Each test opens real sockets on loopback with the ``websockets`` client, as
a gateway would, keeps every message it sends and receives, and holds the
mock's log to them: every message each way, in order, with its type, size
and time, and the close as the client made or saw it.
"""

from __future__ import annotations

import asyncio
import json
import socket as plain_socket
import time
import urllib.request
from typing import Any

import pytest

from streamwire.kit.run.check import _Log
from streamwire.kit.upstream import ws_socket
from streamwire.kit.upstream.mock import MockUpstream
from streamwire.kit.upstream.ws_socket import is_session, message_kind
from streamwire.kit.vocab.cases import cell_model

pytest.importorskip("websockets")
from websockets.asyncio.client import ClientConnection, connect
from websockets.exceptions import ConnectionClosed

LIVE = "/ws/google.ai.generativelanguage.v1beta.GenerativeService.BidiGenerateContent"


class Seen:
    """A client socket that keeps every message it sends and receives, in order."""

    def __init__(self, ws: ClientConnection) -> None:
        self.ws = ws
        self.sent: list[str] = []
        self.received: list[str] = []

    async def send(self, body: dict[str, Any] | str) -> None:
        text = body if isinstance(body, str) else json.dumps(body)
        self.sent.append(text)
        await self.ws.send(text)

    async def until(self, done: Any) -> dict[str, Any]:
        """Reads messages until one for which ``done(message)`` holds."""
        while True:
            text = await asyncio.wait_for(self.ws.recv(), 10)
            assert isinstance(text, str)
            self.received.append(text)
            message = json.loads(text)
            if done(message):
                return message

    async def drain(self) -> None:
        """Reads to the socket's close."""
        try:
            while True:
                text = await asyncio.wait_for(self.ws.recv(), 10)
                assert isinstance(text, str)
                self.received.append(text)
        except ConnectionClosed:
            return


def _url(mock: MockUpstream, path: str) -> str:
    return mock.url.replace("http://", "ws://") + path


def _typed(kind: str) -> Any:
    return lambda m: m.get("type") == kind


def _kinds(texts: list[str]) -> list[str]:
    return [message_kind(t) for t in texts]


def _holds_every_message(session: dict[str, Any], seen: Seen, opened: float) -> None:
    """The session's log is what the client sent and received, in order, each
    message's size its own, every time within the session's."""
    rows = session["messages"]
    ins = [r for r in rows if r[1] == "in"]
    outs = [r for r in rows if r[1] == "out"]
    assert [r[2] for r in ins] == _kinds(seen.sent)
    assert [r[3] for r in ins] == [len(t.encode()) for t in seen.sent]
    assert [r[2] for r in outs] == _kinds(seen.received)
    assert [r[3] for r in outs] == [len(t.encode()) for t in seen.received]
    times = [r[0] for r in rows]
    assert times == sorted(times)
    assert opened - 0.5 <= session["opened_at"] <= times[0] <= session["closed_at"]
    assert session["messages_dropped"] == 0 and is_session(session)


def test_a_realtime_session_is_logged_message_by_message_with_the_client_s_close() -> None:
    model = cell_model("short-text", "whole", "t1")

    async def go() -> tuple[MockUpstream, Seen, float]:
        async with MockUpstream() as mock:
            opened = time.time()
            async with connect(_url(mock, f"/v1/realtime?model={model}"), ping_interval=None) as ws:
                seen = Seen(ws)
                await seen.until(_typed("session.created"))
                text_only = {"output_modalities": ["text"]}
                await seen.send({"type": "session.update", "session": text_only})
                await seen.until(_typed("session.updated"))
                item = {"type": "message", "role": "user", "content": []}
                item["content"] = [{"type": "input_text", "text": "hi"}]
                await seen.send({"type": "conversation.item.create", "item": item})
                await seen.send({"type": "response.create"})
                await seen.until(_typed("response.done"))
                await ws.close(4000, "done here")
            await asyncio.sleep(0.2)
            return mock, seen, opened

    mock, seen, opened = asyncio.run(go())
    (session,) = mock.sessions.sessions()
    _holds_every_message(session, seen, opened)
    assert session["protocol"] == "openai-realtime"
    assert session["close"] == {"by": "client", "code": 4000, "reason": "done here"}
    # The response is the request log's entry, and names its session.
    (entry,) = mock.entries()
    assert session["responses"] == [entry["id"]] and entry["session"] == session["id"]
    assert session["tags"] == ["t1"] and mock.sessions.sessions("t1") == [session]
    assert mock.sessions.sessions("other") == []


def test_a_responses_session_s_two_responses_and_a_live_close_are_logged() -> None:
    async def go() -> tuple[MockUpstream, list[Seen]]:
        async with MockUpstream() as mock:
            seen = []
            async with connect(_url(mock, "/v1/responses"), ping_interval=None) as ws:
                one = Seen(ws)
                for name in ("short-text", "usage"):
                    create = {"type": "response.create", "model": f"sw-{name}", "input": "hi"}
                    await one.send(create)
                    await one.until(_typed("response.completed"))
                await one.send("not json")
                await one.until(_typed("error"))
                seen.append(one)
            async with connect(_url(mock, LIVE), ping_interval=None) as ws:
                two = Seen(ws)
                await two.send({"setup": {"model": "models/sw-short-text"}})
                await two.until(lambda m: "setupComplete" in m)
                await two.send({"notAField": {}})  # Live closes with 1007
                await two.drain()
                seen.append(two)
            await asyncio.sleep(0.2)
            return mock, seen

    mock, (one, two) = asyncio.run(go())
    first, second = mock.sessions.sessions()
    _holds_every_message(first, one, first["opened_at"])
    assert len(first["responses"]) == 2 and first["close"]["by"] == "client"
    assert _kinds(one.sent)[-1] == "invalid"
    _holds_every_message(second, two, second["opened_at"])
    assert second["close"]["by"] == "mock" and second["close"]["code"] == 1007


def test_a_connection_dropped_without_a_close_frame_is_logged_as_1006() -> None:
    async def go() -> dict[str, Any]:
        async with MockUpstream() as mock:
            host, port = mock.url.removeprefix("http://").split(":")
            raw = plain_socket.create_connection((host, int(port)))
            raw.sendall(
                b"GET /v1/responses HTTP/1.1\r\nHost: x\r\nUpgrade: websocket\r\n"
                b"Connection: Upgrade\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n"
                b"Sec-WebSocket-Version: 13\r\n\r\n"
            )
            await asyncio.sleep(0.2)
            raw.close()
            await asyncio.sleep(0.3)
            (session,) = mock.sessions.sessions()
            return session

    session = asyncio.run(go())
    assert session["close"] == {"by": "connection", "code": 1006, "reason": ""}
    assert session["messages"] == []


def test_the_log_keeps_both_ends_of_a_long_session_and_the_newest_sessions(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(ws_socket, "MAX_SESSION_MESSAGES", 8)
    monkeypatch.setattr(ws_socket, "MAX_SESSIONS", 2)

    async def go() -> MockUpstream:
        async with MockUpstream() as mock:
            for _ in range(3):
                async with connect(_url(mock, "/v1/responses"), ping_interval=None) as ws:
                    seen = Seen(ws)
                    for n in range(10):
                        await seen.send({"type": f"probe.{n}"})
                        await seen.until(_typed("error"))
            await asyncio.sleep(0.2)
            return mock

    mock = asyncio.run(go())
    sessions = mock.sessions.sessions()
    assert [s["id"] for s in sessions] == [2, 3] and mock.sessions.dropped == 1
    rows = sessions[-1]["messages"]
    # 20 messages: the first 4 and the latest 4 kept, 12 counted.
    assert len(rows) == 8 and sessions[-1]["messages_dropped"] == 12
    kinds = [r[2] for r in rows]
    assert kinds[:4] == ["probe.0", "error", "probe.1", "error"]
    assert kinds[4:] == ["probe.8", "error", "probe.9", "error"]


def test_the_check_reads_the_sessions_over_http_and_takes_only_sessions() -> None:
    async def go() -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
        async with MockUpstream() as mock:
            model = cell_model("short-text", "whole", "t9")
            async with connect(_url(mock, "/v1/responses"), ping_interval=None) as ws:
                seen = Seen(ws)
                await seen.send({"type": "response.create", "model": model, "input": "hi"})
                await seen.until(_typed("response.completed"))
            await asyncio.sleep(0.2)
            log = _Log(None, mock.url)
            return await log.sessions("t9"), await log.sessions("nothing")

    found, none = asyncio.run(go())
    assert len(found) == 1 and found[0]["tags"] == ["t9"] and none == []


@pytest.mark.parametrize(
    "value",
    [
        None,
        [],
        {"protocol": "openai-realtime"},
        {"protocol": 1, "messages": [], "messages_dropped": 0, "opened_at": 1.0, "closed_at": None},
        {
            "protocol": "x",
            "messages": [[1.0, "sideways", "a", 1]],
            "messages_dropped": 0,
            "opened_at": 1.0,
            "closed_at": None,
        },
        {
            "protocol": "x",
            "messages": [],
            "messages_dropped": 0,
            "opened_at": 1.0,
            "closed_at": 2.0,
            "close": {"by": "client", "code": "1000", "reason": ""},
        },
        {"protocol": "x", "messages": [], "messages_dropped": True, "opened_at": 1.0},
    ],
)
def test_a_session_of_the_wrong_shape_is_not_taken(value: Any) -> None:
    assert not is_session(value)


#: A connection's lifetime short enough for a test.
SHORT = 0.8


def test_a_responses_connection_past_its_lifetime_refuses_the_next_response_and_closes() -> None:
    async def go() -> tuple[list[str], int | None, dict[str, Any]]:
        async with MockUpstream(ws_lifetime=SHORT) as mock:
            async with connect(_url(mock, "/v1/responses"), ping_interval=None) as ws:
                seen = Seen(ws)
                create = {"type": "response.create", "model": "sw-short-text", "input": "hi"}
                await seen.send(create)
                first = await seen.until(lambda m: m["type"] in ("response.completed", "error"))
                await asyncio.sleep(SHORT)
                await seen.send(create)
                second = await seen.until(_typed("error"))
                await seen.drain()
                codes = [first["type"], second["error"]["code"]]
                code = ws.close_code
            await asyncio.sleep(0.1)
            return codes, code, mock.sessions.sessions()[0]

    codes, code, session = asyncio.run(go())
    assert codes == ["response.completed", "websocket_connection_limit_reached"]
    assert code == 1000 and session["close"]["by"] == "mock"


def test_a_realtime_session_expires_with_its_error_and_1001() -> None:
    async def go() -> tuple[dict[str, Any], dict[str, Any], float, int | None]:
        async with MockUpstream(ws_lifetime=SHORT) as mock:
            url = _url(mock, "/v1/realtime?model=sw-short-text")
            async with connect(url, ping_interval=None) as ws:
                opened = time.time()
                seen = Seen(ws)
                created = await seen.until(_typed("session.created"))
                expired = await seen.until(_typed("error"))
                after = time.time() - opened
                await seen.drain()
                return created, expired, after, ws.close_code

    created, expired, after, code = asyncio.run(go())
    assert abs(created["session"]["expires_at"] - time.time()) < SHORT + 2
    assert expired["error"]["code"] == "session_expired" and code == 1001
    assert SHORT - 0.1 <= after < SHORT + 2


def test_a_live_connection_says_go_away_with_its_time_left_then_closes_1011() -> None:
    async def go() -> tuple[dict[str, Any], float, float, int | None, str | None]:
        async with MockUpstream(ws_lifetime=SHORT) as mock:
            async with connect(_url(mock, LIVE), ping_interval=None) as ws:
                opened = time.time()
                seen = Seen(ws)
                await seen.send({"setup": {"model": "models/sw-short-text"}})
                await seen.until(lambda m: "setupComplete" in m)
                away = await seen.until(lambda m: "goAway" in m)
                warned = time.time() - opened
                await seen.drain()
                return away, warned, time.time() - opened, ws.close_code, ws.close_reason

    away, warned, closed, code, reason = asyncio.run(go())
    assert away == {"goAway": {"timeLeft": f"{SHORT / 2:g}s"}}
    assert SHORT / 2 - 0.1 <= warned < SHORT and SHORT - 0.1 <= closed < SHORT + 2
    assert code == 1011 and reason == "Deadline expired before operation could complete."


def test_the_mock_command_takes_a_lifetime_and_serves_the_session_log() -> None:
    import subprocess
    import sys

    bad = subprocess.run(
        [sys.executable, "-m", "streamwire.kit.cli", "mock-upstream", "--ws-lifetime", "inf"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert bad.returncode == 2 and "a finite number of seconds" in bad.stderr
    command = [sys.executable, "-m", "streamwire.kit.cli", "mock-upstream", "--ws-lifetime", "0.8"]
    proc = subprocess.Popen(command, stdout=subprocess.PIPE, text=True)
    try:
        assert proc.stdout is not None
        url = proc.stdout.readline().strip().rpartition(" ")[2]

        async def go() -> dict[str, Any]:
            ws_url = url.replace("http://", "ws://") + "/v1/realtime?model=sw-short-text"
            async with connect(ws_url, ping_interval=None) as ws:
                seen = Seen(ws)
                expired = await seen.until(_typed("error"))
                await seen.drain()
            await asyncio.sleep(0.2)
            return expired

        expired = asyncio.run(go())
        with urllib.request.urlopen(f"{url}/_sw/sessions", timeout=10) as answer:
            sessions = json.load(answer)["sessions"]
    finally:
        proc.terminate()
        proc.wait(10)
    assert expired["error"]["code"] == "session_expired"
    (session,) = sessions
    assert session["close"]["by"] == "mock" and session["close"]["code"] == 1001
    assert [m[2] for m in session["messages"]] == ["session.created", "error"]


def test_a_response_s_logged_writes_are_the_messages_it_sent() -> None:
    # Keep-alive comments and the fragments of calls a Live turn sends
    # together in its toolCall sent nothing on the wire: no write is logged
    # for them, and each write's size is its messages' bytes.
    from streamwire.kit.report.document import build_report
    from streamwire.kit.run.check import CheckPlan, Route, run_check

    async def go() -> tuple[MockUpstream, Any]:
        async with MockUpstream() as mock:
            plan = CheckPlan(
                routes=[Route(mock.url, key_passthrough=True)],
                clients=["openai-responses-ws", "gemini-live"],
                cases=["keepalive", "chunked-json-args"],
                deliveries=["paced"],
                mock_url=mock.url,
                unary=False,
            )
            return mock, build_report(await run_check(plan))

    mock, report = asyncio.run(go())
    assert not [c for c in report.cells if c.failed or c.degraded]
    sessions = {s["id"]: s for s in mock.sessions.sessions()}
    for entry in mock.entries():
        session = sessions[entry["session"]]
        sizes = [w[1] for w in entry["writes"]]
        assert sizes and all(size > 0 for size in sizes), entry["writes"]
        outs = [m[3] for m in session["messages"] if m[1] == "out" and m[2] != "setupComplete"]
        assert sum(sizes) == sum(outs), (entry["upstream"], entry["case"], sizes, outs)


def test_a_continuation_of_no_response_of_this_socket_is_refused_and_the_socket_stays_open() -> (
    None
):
    model = cell_model("tool-error-result", "whole", "t7")

    async def go() -> tuple[list[str], dict[str, Any], list[dict[str, Any]]]:
        async with MockUpstream() as mock:
            async with connect(_url(mock, "/v1/responses"), ping_interval=None) as ws:
                seen = Seen(ws)
                codes = []
                for previous in ([1], {"id": "x"}, 5, None, "resp_elsewhere", "é" * 500):
                    create = {"type": "response.create", "model": model, "input": "hi"}
                    await seen.send({**create, "previous_response_id": previous})
                    answer = await seen.until(lambda m: m["type"] in ("error", "response.created"))
                    codes.append(answer.get("error", {}).get("code") or answer["type"])
                    if answer["type"] == "response.created":
                        await seen.until(_typed("response.completed"))
                first = next(json.loads(t) for t in seen.received if '"response.completed"' in t)
                # A continuation whose input is of no type the API takes is
                # read as no new items, the previous conversation alone.
                chained = {
                    "type": "response.create",
                    "model": model,
                    "previous_response_id": first["response"]["id"],
                    "input": {"not": "a list"},
                }
                await seen.send(chained)
                done = await seen.until(_typed("response.completed"))
            await asyncio.sleep(0.1)
            return codes, done, mock.entries("t7")

    codes, done, entries = asyncio.run(go())
    refused = "previous_response_not_found"
    assert codes == [refused, refused, refused, "response.created", refused, refused]
    assert done["response"]["status"] == "completed"
    # Each refusal is logged as the cell's entry, failed so; the rest answered.
    assert [e.get("failed") for e in entries] == [refused] * 3 + [None] + [refused] * 2 + [None]


def test_a_message_nested_past_the_parser_s_depth_is_invalid_and_the_socket_stays_open() -> None:
    deep = "[" * 200_000 + "]" * 200_000

    async def go() -> tuple[list[dict[str, Any]], dict[str, Any]]:
        async with MockUpstream() as mock:
            answers = []
            for path in ("/v1/responses", "/v1/realtime?model=sw-short-text"):
                async with connect(_url(mock, path), ping_interval=None) as ws:
                    seen = Seen(ws)
                    await seen.send(deep)
                    answers.append(await seen.until(_typed("error")))
            async with connect(_url(mock, LIVE), ping_interval=None) as ws:
                seen = Seen(ws)
                await seen.send(deep)  # Live closes with 1007
                await seen.drain()
                live = {"code": ws.close_code}
            await asyncio.sleep(0.1)
            sessions = mock.sessions.sessions()
            kinds = [[m[2] for m in s["messages"] if m[1] == "in"] for s in sessions]
            assert kinds == [["invalid"]] * 3, kinds
            return answers, live

    answers, live = asyncio.run(go())
    assert [a["error"]["code"] for a in answers] == ["invalid_json", "invalid_json"]
    assert live == {"code": 1007}
