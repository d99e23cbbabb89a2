"""The mock's WebSocket sessions: OpenAI's Responses API in WebSocket mode, Realtime, Gemini Live.

A ``GET`` that asks to upgrade (``Upgrade: websocket``) at a path ending in
``/responses`` is a Responses WebSocket session (OpenAI "WebSocket mode",
checked 2026-12-07): the client sends ``response.create`` messages, each the
body a ``POST /v1/responses`` would carry with ``"type": "response.create"``
added, and the server answers each with the events the streamed API sends,
one JSON message per event. The model (or, for a gateway that sends one of
its own, the prompt) picks the case as it does over HTTP, and each response
is one entry of the mock's log, its writes each a message with its time
(a write that sent nothing, such as a keep-alive comment, is none).

The session keeps the rules a gateway meets at the provider: one response
in flight per socket (a second ``response.create`` before the first ended
gets an ``error`` event, ``concurrent_request``, and the socket stays open);
a message that is not a JSON object, or of an unknown type, gets an
``error`` event and the socket stays open; the client closing the socket
ends the response in flight (``disconnected_at`` in its entry). A
``response.create`` with a ``previous_response_id`` continues that
response, as WebSocket mode's connection-local state does: the mock answers
it as if its ``input`` followed the previous response's whole conversation
(its input, then its output items: the calls the model made), so a tool's
result sent with only the new items is read against the call it answers.
An id this connection never answered gets an ``error`` event,
``previous_response_not_found`` (logged as an entry of the cell the model
names, ``failed`` so): a gateway that spreads one client's socket over
several upstream sockets is seen losing its state. A
connection lasts 60 minutes (``MockUpstream``'s ``ws_lifetime``): a
``response.create`` on an older one gets an ``error`` event,
``websocket_connection_limit_reached``, and the mock closes the socket
(1000), so that the client opens another.

An upgrade at a path ending in ``/realtime`` is an OpenAI Realtime session
(``ws_realtime.py``: its own client events, the same cases as Realtime
server events); one at a path ending in ``BidiGenerateContent`` (Google's
``/ws/google.ai.generativelanguage.v1beta.GenerativeService.BidiGenerateContent``,
and the ``v1alpha`` one) is a Gemini Live session (``ws_live.py``).

The framing is the ``websockets`` library's sans-I/O protocol
(``websockets.server.ServerProtocol``) over the connection the HTTP server
hands over (``Responder.take_over``): nothing here frames a message.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import time
from typing import Any

from ..vocab.delivery import Write
from ..vocab.httpio import Request, Responder
from ..vocab.names import WS_WIRE
from .realtime import sse_payloads
from .ws_live import LiveSession
from .ws_realtime import RealtimeSession
from .ws_socket import Mock, Socket, message_request

__all__ = ["WS_PROTOCOLS", "WS_WIRE", "is_upgrade", "serve_websocket", "ws_protocol"]

#: The WebSocket protocols the mock serves.
WS_PROTOCOLS: tuple[str, ...] = tuple(WS_WIRE)


def is_upgrade(request: Request) -> bool:
    """The request asks to become a WebSocket."""
    return request.method == "GET" and (request.header("upgrade") or "").lower() == "websocket"


def ws_protocol(path: str) -> str | None:
    """The WebSocket protocol a session at ``path`` speaks, or None."""
    path = path.rstrip("/")
    if path.endswith("/responses"):
        return "openai-responses-ws"
    if path.endswith("/realtime"):
        return "openai-realtime"
    if path.endswith("BidiGenerateContent"):
        return "gemini-live"
    return None


#: The events that end a response, whose ``response`` is whole.
_ENDS = frozenset({"response.completed", "response.incomplete", "response.failed"})
#: The responses a session keeps for ``previous_response_id`` (the latest).
MAX_KEPT = 64


def _error(code: str, message: str) -> str:
    return json.dumps(
        {
            "type": "error",
            "status": 400,
            "error": {"type": "invalid_request_error", "code": code, "message": message},
        }
    )


class _ResponsesSession:
    """A Responses WebSocket session: each ``response.create`` answered with its case."""

    upstream = "openai-responses-ws"

    def __init__(self, mock: Mock, request: Request, socket: Socket) -> None:
        self.mock = mock
        self.request = request
        self.socket = socket
        self.running: asyncio.Task[None] | None = None
        #: Each response's whole conversation (its input, then its output
        #: items), by response id: the latest ``MAX_KEPT``.
        self.conversations: dict[str, list[Any]] = {}

    async def run(self) -> None:
        try:
            async for message in self.socket.messages():
                await self._on_message(message)
                if self.socket.closed.is_set():
                    return
        finally:
            if self.running is not None:
                await asyncio.gather(self.running, return_exceptions=True)

    async def _on_message(self, message: str | bytes) -> None:
        try:
            body = json.loads(message)
        except (UnicodeDecodeError, ValueError, RecursionError):
            body = None
        if not isinstance(body, dict):
            await self.socket.send(_error("invalid_json", "a message must be a JSON object"))
            return
        kind = body.get("type")
        if kind != "response.create":
            await self.socket.send(
                _error("unknown_event_type", f"unknown client event type {str(kind)[:80]!r}")
            )
            return
        lifetime = self.mock.ws_lifetime(self.upstream)
        if self.socket.age >= lifetime:
            why = f"the connection reached its limit of {lifetime:g} s: open a new one"
            await self.socket.send(_error("websocket_connection_limit_reached", why))
            await self.socket.close(1000, "connection limit reached")
            return
        if self.running is not None and not self.running.done():
            await self.socket.send(
                _error(
                    "concurrent_request",
                    "a response is already in progress on this connection: one at a time",
                )
            )
            return
        received = time.time()
        raw = message.encode() if isinstance(message, str) else message
        plain = {k: v for k, v in body.items() if k != "type"}
        previous = plain.get("previous_response_id")
        if previous is not None:
            before = self.conversations.get(previous) if isinstance(previous, str) else None
            if before is None:
                logged = message_request(self.request, raw, received)
                why = f"previous response {str(previous)[:80]!r} not found on this connection"
                code = "previous_response_not_found"
                await self.mock.ws_case(logged, plain, self.upstream, self.socket.session, code)
                await self.socket.send(_error(code, why))
                return
            plain["input"] = [*before, *_items(plain.get("input"))]
        task = self._respond(plain, raw, received)
        self.running = asyncio.get_running_loop().create_task(task)

    async def _respond(self, plain: dict[str, Any], raw: bytes, received: float) -> None:
        logged = message_request(self.request, raw, received)
        chosen = await self.mock.ws_case(logged, plain, self.upstream, self.socket.session)
        if isinstance(chosen, str):
            await self.socket.send(_error("model_not_found", chosen))
            return
        entry, writes = chosen
        for response, output in _responses(writes):
            self.conversations[response] = [*_items(plain.get("input")), *output]
            while len(self.conversations) > MAX_KEPT:
                del self.conversations[next(iter(self.conversations))]
        entry["status"] = 101
        try:
            for write in writes:
                if write.delay:
                    with contextlib.suppress(asyncio.TimeoutError):
                        await asyncio.wait_for(self.socket.closed.wait(), write.delay)
                if self.socket.closed.is_set():
                    break
                sent = 0
                for payload in sse_payloads(write.data):
                    if not await self.socket.send(payload):
                        break
                    sent += len(payload.encode())
                if sent:  # a keep-alive comment is no message: nothing went
                    self.mock.log.wrote(entry, sent, write.kinds, write.content)
            else:
                entry["completed"] = True
        finally:
            entry["ended_at"] = time.time()
            if self.socket.closed.is_set():
                entry["disconnected_at"] = self.socket.closed_at


def _responses(writes: list[Write]) -> list[tuple[str, list[Any]]]:
    """The responses the writes end (``response.completed``, ``.incomplete``,
    ``.failed``): each one's id and output items."""
    out = []
    for write in writes:
        for payload in sse_payloads(write.data):
            with contextlib.suppress(ValueError):
                event = json.loads(payload)
                response = event.get("response") if isinstance(event, dict) else None
                if event.get("type") in _ENDS and isinstance(response, dict):
                    output = response.get("output")
                    out.append((str(response.get("id") or ""), list(output or [])))
    return out


def _items(value: Any) -> list[Any]:
    """A Responses ``input`` as a list of items (a string is the user's message)."""
    if isinstance(value, str):
        return [{"role": "user", "content": value}]
    return list(value) if isinstance(value, list) else []


async def serve_websocket(mock: Mock, request: Request, responder: Responder) -> None:
    """The session an upgrade asks for, until the client closes it; a path
    that is no WebSocket protocol's gets 404 over plain HTTP."""
    protocol = ws_protocol(request.path)
    if protocol is None:
        body = json.dumps({"error": {"message": f"no WebSocket endpoint {request.path}"}})
        await responder.send(404, [("content-type", "application/json")], body.encode())
        return
    try:
        import websockets.server  # noqa: F401
    except ImportError:
        message = "the mock's WebSocket sessions need: pip install 'streamwire[kit-ws]'"
        body = json.dumps({"error": {"message": message}})
        await responder.send(501, [("content-type", "application/json")], body.encode())
        return
    socket = Socket(responder.take_over(), mock.ws_session(protocol, request))
    try:
        if not await socket.handshake(request):
            return
        if protocol == "openai-realtime":
            await RealtimeSession(mock, request, socket).run()
        elif protocol == "gemini-live":
            await LiveSession(mock, request, socket).run()
        else:
            await _ResponsesSession(mock, request, socket).run()
    finally:
        await socket.close()
