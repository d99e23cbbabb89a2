"""The mock's WebSocket, shared by its sessions (``ws.py``'s Responses
session, ``ws_realtime.py``'s Realtime one, ``ws_live.py``'s Gemini Live
one): what a session asks of the mock, one socket over a connection the
HTTP server handed over, and the log of sessions.

The session log (``GET /_sw/sessions``) keeps each session as it went on
the wire: every message each way with its time, its type and its size, and
the close: who closed (``client``: a close frame from the peer; ``mock``:
the mock's own, for an error, a lifetime or an idle socket; ``connection``:
the TCP connection ended with no close frame, RFC 6455's 1006), the code
and the reason. A message's content is not kept: the response entries of
``/_sw/log`` keep what a case wrote (each names its ``session``), and the
session names its ``responses``. It is bounded as the request log is:
``MAX_SESSIONS``, and ``MAX_SESSION_MESSAGES`` a session (the first half
and the latest half stay, ``messages_dropped`` counts the rest).
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import json
import time
from collections import deque
from collections.abc import AsyncIterator, Mapping
from typing import Any, Protocol

from ..vocab.delivery import Write
from ..vocab.httpbase import HttpTimeout
from ..vocab.httpio import Request, TransportError, Upgraded

__all__ = [
    "LIFETIMES",
    "MAX_CLIENT_MESSAGE",
    "MAX_SESSIONS",
    "MAX_SESSION_MESSAGES",
    "SESSION_IDLE",
    "Mock",
    "SessionLog",
    "Socket",
    "either",
    "is_session",
    "message_kind",
    "message_request",
    "responded",
]

#: The largest message the mock takes from a client (a Responses body's worth).
MAX_CLIENT_MESSAGE = 16 * 1024 * 1024
#: How long the mock waits for a client's next bytes before it closes the session.
SESSION_IDLE = 120.0
#: How long a connection lasts at each provider, in seconds, as their
#: documents and their users' reports give it (the mock keeps it; ``MockUpstream``'s
#: ``ws_lifetime`` sets another, for a test): OpenAI's Responses WebSocket
#: mode, 60 minutes ("WebSocket Mode" guide); a Realtime session, 60 minutes;
#: a Gemini Live connection, about 10 minutes.
LIFETIMES: Mapping[str, float] = {
    "openai-responses-ws": 3600.0,
    "openai-realtime": 3600.0,
    "gemini-live": 600.0,
}
#: The sessions the session log keeps (the newest), and the messages of each.
MAX_SESSIONS = 1024
MAX_SESSION_MESSAGES = 2048
#: The longest message type, and close reason, a session's log keeps.
_MAX_NAME = 80


class Mock(Protocol):
    """What a session asks of the mock (``MockUpstream``): each response's
    case, log entry and writes, and the log to note each write in."""

    log: Any

    async def ws_case(
        self,
        request: Request,
        body: dict[str, Any],
        upstream: str,
        session: dict[str, Any] | None = None,
        refuse: str | None = None,
    ) -> tuple[dict[str, Any], list[Write]] | str: ...

    def ws_session(self, protocol: str, request: Request) -> dict[str, Any]:
        """A new session's record in the session log."""
        ...

    def ws_lifetime(self, protocol: str) -> float:
        """How long a connection of ``protocol`` lasts, in seconds."""
        ...


def message_kind(message: str | bytes) -> str:
    """What a message is, as the session log names it: its ``type`` (OpenAI's
    events), else its first field (Gemini Live's ``setup``, ``serverContent``);
    ``invalid`` for what is not a JSON object."""
    try:
        body = json.loads(message)
    except (UnicodeDecodeError, ValueError, RecursionError):
        return "invalid"
    if not isinstance(body, dict):
        return "invalid"
    kind = body.get("type")
    if not isinstance(kind, str):
        kind = next(iter(body), "")
    return kind[:_MAX_NAME]


class SessionLog:
    """The mock's record of WebSocket sessions (see the module docstring)."""

    def __init__(self) -> None:
        self._sessions: deque[dict[str, Any]] = deque()
        self._ids = itertools.count(1)
        #: Sessions dropped to keep within ``MAX_SESSIONS``.
        self.dropped = 0

    def open(self, protocol: str, request: Request, path: str, query: str) -> dict[str, Any]:
        """A new session's record: ``request`` is its upgrade, ``path`` and
        ``query`` its target with no secret."""
        session: dict[str, Any] = {
            "id": next(self._ids),
            "protocol": protocol,
            "path": path,
            "query": query,
            "connection": request.connection,
            "opened_at": time.time(),
            "messages": [],
            "messages_dropped": 0,
            "responses": [],
            "tags": [],
            "closed_at": None,
            "close": None,
        }
        self._sessions.append(session)
        if len(self._sessions) > MAX_SESSIONS:
            self._sessions.popleft()
            self.dropped += 1
        return session

    def sessions(self, tag: str | None = None, since: int = 0) -> list[dict[str, Any]]:
        """The sessions (those a response of ``tag`` was on, after id ``since``), oldest first."""
        return [s for s in self._sessions if s["id"] > since and (tag is None or tag in s["tags"])]


def is_session(value: Any) -> bool:
    """Whether ``value`` is a session as the session log keeps it (the fields
    the check reads): a mock over HTTP may be another version, or no mock."""
    if not isinstance(value, dict) or not isinstance(value.get("protocol"), str):
        return False
    messages, close = value.get("messages"), value.get("close")
    rows_ok = isinstance(messages, list) and all(
        isinstance(m, list)
        and len(m) == 4
        and isinstance(m[0], (int, float))
        and m[1] in ("in", "out")
        and isinstance(m[2], str)
        and type(m[3]) is int
        for m in messages
    )
    close_ok = close is None or (
        isinstance(close, dict)
        and close.get("by") in ("client", "mock", "connection")
        and (close.get("code") is None or type(close.get("code")) is int)
        and isinstance(close.get("reason"), str)
    )
    times_ok = all(
        isinstance(value.get(k), (int, float)) or (k == "closed_at" and value.get(k) is None)
        for k in ("opened_at", "closed_at")
    )
    return rows_ok and close_ok and times_ok and type(value.get("messages_dropped")) is int


def responded(session: dict[str, Any], entry: int, tag: str | None) -> None:
    """A response of ``session`` is the request log's ``entry``, of ``tag``;
    the latest ``MAX_SESSION_MESSAGES`` of each are kept (named again, once)."""
    if entry not in session["responses"][-1:]:
        session["responses"] = [*session["responses"][-(MAX_SESSION_MESSAGES - 1) :], entry]
    if tag is not None and tag not in session["tags"]:
        session["tags"] = [*session["tags"][-(MAX_SESSION_MESSAGES - 1) :], tag]


def _noted(session: dict[str, Any], way: str, message: str | bytes) -> None:
    """One message of ``session``, ``in`` from the client or ``out`` from the mock."""
    size = len(message.encode() if isinstance(message, str) else message)
    messages = session["messages"]
    messages.append([round(time.time(), 6), way, message_kind(message), size])
    if len(messages) > MAX_SESSION_MESSAGES:
        del messages[MAX_SESSION_MESSAGES // 2]
        session["messages_dropped"] += 1


def _closed(session: dict[str, Any], by: str, code: int | None, reason: str) -> None:
    """How ``session`` ended; the first close is the one kept."""
    if session["close"] is None:
        session["closed_at"] = time.time()
        session["close"] = {"by": by, "code": code, "reason": reason[:_MAX_NAME]}


class Socket:
    """One WebSocket over a taken-over connection (``websockets``' sans-I/O
    server protocol): the handshake, whole text messages in, messages out."""

    def __init__(self, conn: Upgraded, session: dict[str, Any] | None = None) -> None:
        from websockets.server import ServerProtocol

        self.conn = conn
        self.protocol = ServerProtocol(max_size=MAX_CLIENT_MESSAGE)
        self.closed = asyncio.Event()
        self.closed_at: float | None = None
        #: The session log's record of this socket (``SessionLog.open``).
        self.session = session
        self.opened = time.monotonic()
        self._lock = asyncio.Lock()

    @property
    def age(self) -> float:
        """Seconds since the socket opened."""
        return time.monotonic() - self.opened

    async def handshake(self, request: Request) -> bool:
        """Answers the upgrade (``101``, or the library's refusal); whether it
        opened. The HTTP server read the request's head: the protocol is given
        it again, as it came, so that it parses the frames that follow."""
        from websockets.http11 import Request as WsRequest

        target = request.path + (f"?{request.query}" if request.query else "")
        head = [f"GET {target} HTTP/1.1", *(f"{n}: {v}" for n, v in request.headers)]
        self.protocol.receive_data(("\r\n".join(head) + "\r\n\r\n").encode("latin-1"))
        events = self.protocol.events_received()
        parsed = next((e for e in events if isinstance(e, WsRequest)), None)
        if parsed is None:
            return False
        response = self.protocol.accept(parsed)
        self.protocol.send_response(response)
        await self._flush()
        return response.status_code == 101

    async def messages(self) -> AsyncIterator[str | bytes]:
        """Each whole message the client sends (``str`` or ``bytes``), until it
        closes, the connection ends, or ``SESSION_IDLE`` passes without a byte."""
        from websockets.frames import Frame, Opcode
        from websockets.protocol import State

        parts: list[bytes] = []
        text = True
        try:
            while True:
                data = await self.conn.read(SESSION_IDLE)
                if not data:
                    self.protocol.receive_eof()
                else:
                    self.protocol.receive_data(data)
                for frame in self.protocol.events_received():
                    if not isinstance(frame, Frame):
                        continue
                    if frame.opcode in (Opcode.TEXT, Opcode.BINARY):
                        parts, text = [bytes(frame.data)], frame.opcode is Opcode.TEXT
                    elif frame.opcode is Opcode.CONT:
                        parts.append(bytes(frame.data))
                    else:
                        continue
                    if frame.fin:
                        whole = b"".join(parts)
                        parts = []
                        message = whole.decode("utf-8", "replace") if text else whole
                        if self.session is not None:
                            _noted(self.session, "in", message)
                        yield message
                await self._flush()  # pongs, and the close's answer
                if not data or self.protocol.state in (State.CLOSING, State.CLOSED):
                    self._peer_closed()
                    return
        except HttpTimeout:  # no byte for SESSION_IDLE: the mock ends it
            await self.close(1001, "idle")
        except (TransportError, OSError):
            self._peer_closed()
        finally:
            self._gone()

    def _peer_closed(self) -> None:
        """The client's side ended: by its close frame, or without one (1006)."""
        if self.session is None:
            return
        got = self.protocol.close_rcvd
        if got is not None:
            _closed(self.session, "client", int(got.code), got.reason)
        else:
            _closed(self.session, "connection", 1006, "")

    async def send(self, message: str) -> bool:
        """Sends one text message; False once the socket is closed."""
        if self.closed.is_set():
            return False
        async with self._lock:
            try:
                self.protocol.send_text(message.encode())
            except Exception:  # the library's "the socket is closing": nothing to send on
                self._gone()
                return False
            if not await self._flush():
                return False
            if self.session is not None:
                _noted(self.session, "out", message)
            return True

    async def close(self, code: int = 1000, reason: str = "") -> None:
        """The mock closes the socket with ``code`` and ``reason`` (unless the
        client closed it first: its close is the session's)."""
        if self.session is not None and not self.closed.is_set():
            _closed(self.session, "mock", code, reason)
        async with self._lock:
            with contextlib.suppress(Exception):
                self.protocol.send_close(code, reason)
                await self._flush()
        self._gone()
        self.conn.close()

    async def _flush(self) -> bool:
        data = b"".join(self.protocol.data_to_send())
        if not data:
            return not self.closed.is_set()
        try:
            await self.conn.write(data)
        except TransportError:
            self._gone()
            return False
        return True

    def _gone(self) -> None:
        if not self.closed.is_set():
            self.closed_at = time.time()
            self.closed.set()


def message_request(request: Request, raw: bytes, received: float) -> Request:
    """A session's request as the mock logs it: the upgrade's path, query,
    headers and connection, the message's body and arrival time."""
    return Request(
        "WS",
        request.path,
        request.query,
        request.headers,
        raw,
        received,
        request.peer,
        request.connection,
    )


async def either(one: asyncio.Event, other: asyncio.Event) -> None:
    """Returns once either event is set."""
    waits = [asyncio.ensure_future(one.wait()), asyncio.ensure_future(other.wait())]
    try:
        await asyncio.wait(waits, return_when=asyncio.FIRST_COMPLETED)
    finally:
        for wait in waits:
            wait.cancel()
