"""The mock's WebSocket, shared by its sessions (``ws.py``'s Responses
session, ``ws_realtime.py``'s Realtime one, ``ws_live.py``'s Gemini Live
one): what a session asks of the mock, and one socket over a connection the
HTTP server handed over."""

from __future__ import annotations

import asyncio
import contextlib
import time
from typing import Any, Protocol

from ..vocab.delivery import Write
from ..vocab.httpio import Request, TransportError, Upgraded

__all__ = ["MAX_CLIENT_MESSAGE", "SESSION_IDLE", "Mock", "Socket", "either", "message_request"]

#: The largest message the mock takes from a client (a Responses body's worth).
MAX_CLIENT_MESSAGE = 16 * 1024 * 1024
#: How long the mock waits for a client's next bytes before it closes the session.
SESSION_IDLE = 120.0


class Mock(Protocol):
    """What a session asks of the mock (``MockUpstream``): each response's
    case, log entry and writes, and the log to note each write in."""

    log: Any

    async def ws_case(
        self, request: Request, body: dict[str, Any], upstream: str
    ) -> tuple[dict[str, Any], list[Write]] | str: ...


class Socket:
    """One WebSocket over a taken-over connection (``websockets``' sans-I/O
    server protocol): the handshake, whole text messages in, messages out."""

    def __init__(self, conn: Upgraded) -> None:
        from websockets.server import ServerProtocol

        self.conn = conn
        self.protocol = ServerProtocol(max_size=MAX_CLIENT_MESSAGE)
        self.closed = asyncio.Event()
        self.closed_at: float | None = None
        self._lock = asyncio.Lock()

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

    async def messages(self) -> Any:
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
                        yield whole.decode("utf-8", "replace") if text else whole
                await self._flush()  # pongs, and the close's answer
                if not data or self.protocol.state in (State.CLOSING, State.CLOSED):
                    return
        except (TransportError, OSError):
            return
        finally:
            self._gone()

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
            return await self._flush()

    async def close(self, code: int = 1000, reason: str = "") -> None:
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
