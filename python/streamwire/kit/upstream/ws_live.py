"""The mock's Gemini Live sessions: an upgrade at a path ending in ``BidiGenerateContent``.

The session as the Live API keeps it ("Live API - WebSockets API
reference", ai.google.dev/api/live, checked 2026-12-08): the client's first
message is ``setup`` (``model`` as ``models/<name>``, ``generationConfig``
with its ``responseModalities``, ``tools``, ``systemInstruction``), answered
``setupComplete``; each ``clientContent`` adds its ``turns`` to the
conversation and, with ``turnComplete: true``, asks for the model's turn; a
``toolResponse`` answers the calls of a ``toolCall`` (``functionResponses``
with the call's ``id``, ``name`` and ``response``) and the model goes on.
The conversation is the session's: each turn reads every turn so far, the
model's own calls included.

Each model turn is the case the setup's model names, or else the prompt,
as over HTTP (``MockUpstream.ws_case``, which logs the turn as an entry,
its request the conversation as a Gemini ``generateContent`` body): the
case's Gemini chunks turned into Live messages (``live.py``), write by
write with the delivery's timing, each write that sent messages logged as it
goes (the calls' fragments wait for the turn's ``toolCall`` and are logged
with it: the writes before it sent nothing on the wire). Messages go
as text frames; the client's may come as text or binary.

The Live API has no error message: it closes the socket with a code and a
reason, and so does the mock. A message that is not JSON, of no known
field, or that breaks the session's order (anything before ``setup``, a
second ``setup``, a ``toolResponse`` of no call) closes it with 1007 and
Google's words ("Request contains an invalid argument."); what the mock does
not serve (``realtimeInput``: audio and video) with 1008; a turn whose model
and prompt name no case with 1008 (Live's "not found"); a case's in-stream
error, mid-turn, with 1011 and its message. A ``clientContent`` that arrives
while the model's turn runs interrupts it, as a client's message interrupts
Live's generation: the turn stops (``cancelled_at`` in its entry), the mock
sends ``serverContent.interrupted`` and answers the new turn. The client
closing the socket ends the turn in flight (``disconnected_at``).

A connection lasts about 10 minutes (``MockUpstream``'s ``ws_lifetime``):
``GO_AWAY_BEFORE`` seconds before its end the mock sends ``goAway`` with
the ``timeLeft``, and at its end closes the socket with 1011 and Google's
words ("Deadline expired before operation could complete."), as a user's
log shows them (kizuna-ai-lab/sokuji#179).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import secrets
import time
from typing import Any

from ..vocab.httpio import Request
from .live import live_writes, reason_of
from .ws_socket import Mock, Socket, either, message_request

__all__ = ["EXPIRED", "GO_AWAY_BEFORE", "INVALID", "LiveSession"]

#: Live's close for a message it cannot take (RFC 6455 "invalid payload data").
INVALID = (1007, "Request contains an invalid argument.")
#: Live's close for what it does not serve (RFC 6455 "policy violation").
UNSERVED = (1008, "Operation is not implemented, or supported, or enabled.")
#: The client message fields of the API (``BidiGenerateContentClientMessage``).
_CLIENT_FIELDS = frozenset({"setup", "clientContent", "realtimeInput", "toolResponse"})
#: The conversation's turns a session keeps (the latest): a hostile client's
#: turns cannot grow the mock.
MAX_TURNS = 256
#: How long before a connection's end ``goAway`` comes (at most half its lifetime).
GO_AWAY_BEFORE = 50.0
#: Live's close at the end of a connection's lifetime.
EXPIRED = (1011, "Deadline expired before operation could complete.")


class LiveSession:
    """One Live session over an open socket (see the module docstring)."""

    upstream = "gemini-live"

    def __init__(self, mock: Mock, request: Request, socket: Socket) -> None:
        self.mock = mock
        self.request = request
        self.socket = socket
        self.mark = secrets.token_hex(4)
        self.setup: dict[str, Any] | None = None
        #: The conversation, as a Gemini request's ``contents``.
        self.contents: list[dict[str, Any]] = []
        #: The ids of the calls the model made and no response answered yet.
        self.open_calls: set[str] = set()
        self.calls = 0
        self.running: asyncio.Task[None] | None = None
        self.interrupt = asyncio.Event()
        self.interrupted_at: float | None = None

    async def run(self) -> None:
        expiry = asyncio.ensure_future(self._expire())
        try:
            async for message in self.socket.messages():
                refusal = await self._on_message(message)
                if refusal is not None:  # the turn in flight ends with the socket
                    await self.socket.close(*refusal)
                    return
        finally:
            expiry.cancel()
            if self.running is not None:
                await asyncio.gather(self.running, return_exceptions=True)

    async def _expire(self) -> None:
        """The connection's end: ``goAway`` with the time left, then the close."""
        lifetime = self.mock.ws_lifetime(self.upstream)
        warning = min(GO_AWAY_BEFORE, lifetime / 2)
        await asyncio.sleep(lifetime - warning)
        await self.socket.send(json.dumps({"goAway": {"timeLeft": f"{warning:g}s"}}))
        await asyncio.sleep(warning)
        await self.socket.close(*EXPIRED)

    @property
    def responding(self) -> bool:
        return self.running is not None and not self.running.done()

    async def _on_message(self, message: str | bytes) -> tuple[int, str] | None:
        """Reads one client message; the close it earns, or None."""
        try:
            body = json.loads(message)
        except (UnicodeDecodeError, ValueError, RecursionError):
            return (1007, "Invalid JSON payload received.")
        if not isinstance(body, dict) or len(body) != 1:
            return INVALID
        ((field, value),) = body.items()
        if field not in _CLIENT_FIELDS:
            return (1007, reason_of(f'Invalid JSON payload received. Unknown name "{field}".'))
        if not isinstance(value, dict):
            return INVALID
        if field == "setup":
            return await self._setup(value)
        if self.setup is None:
            return INVALID
        if field == "realtimeInput":
            return UNSERVED
        if field == "clientContent":
            return await self._content(value)
        return await self._tool_response(value)

    async def _setup(self, setup: dict[str, Any]) -> tuple[int, str] | None:
        model, tools = setup.get("model"), setup.get("tools", [])
        if self.setup is not None or not isinstance(model, str) or not isinstance(tools, list):
            return INVALID
        self.setup = setup
        await self.socket.send(json.dumps({"setupComplete": {}}))
        return None

    async def _content(self, content: dict[str, Any]) -> tuple[int, str] | None:
        turns = content.get("turns", [])
        if not isinstance(turns, list) or not all(_is_content(t) for t in turns):
            return INVALID
        await self._interrupt()
        self._add(turns)
        if content.get("turnComplete") is True:
            self._respond()
        return None

    async def _tool_response(self, response: dict[str, Any]) -> tuple[int, str] | None:
        answers = response.get("functionResponses")
        if not isinstance(answers, list) or not answers:
            return INVALID
        parts = []
        for answer in answers:
            if not isinstance(answer, dict) or not isinstance(answer.get("name"), str):
                return INVALID
            call = answer.get("id")
            if call is not None and (not isinstance(call, str) or call not in self.open_calls):
                return INVALID  # a response to no call of this session
            self.open_calls.discard(call or "")
            parts.append({"functionResponse": answer})
        self._add([{"role": "user", "parts": parts}])
        if not self.responding:
            self._respond()
        return None

    def _add(self, turns: list[dict[str, Any]]) -> None:
        self.contents = [*self.contents, *turns][-MAX_TURNS:]

    async def _interrupt(self) -> None:
        """A new turn interrupts the one in flight: it ends."""
        if not self.responding or self.running is None:
            return
        self.interrupted_at = time.time()
        self.interrupt.set()
        await asyncio.gather(self.running, return_exceptions=True)

    def _respond(self) -> None:
        setup = self.setup or {}
        model = str(setup.get("model") or "").removeprefix("models/")
        body: dict[str, Any] = {"model": model, "contents": list(self.contents)}
        for key in ("tools", "systemInstruction", "generationConfig", "toolConfig"):
            if key in setup:
                body[key] = setup[key]
        self.interrupt = asyncio.Event()
        self.interrupted_at = None
        loop = asyncio.get_running_loop()
        self.running = loop.create_task(self._turn(body, time.time()))

    async def _turn(self, body: dict[str, Any], received: float) -> None:
        request = self.request
        logged = message_request(request, json.dumps(body).encode(), received)
        chosen = await self.mock.ws_case(logged, body, self.upstream, self.socket.session)
        if isinstance(chosen, str):
            await self.socket.close(1008, reason_of(chosen))
            return
        entry, writes = chosen
        entry["status"] = 101
        first = self.calls
        ids = [f"call_sw{self.mark}_{first + n}" for n in range(16)]
        turn, history = live_writes(writes, ids)
        stop = asyncio.ensure_future(either(self.socket.closed, self.interrupt))
        made: list[str] = []
        try:
            for write in turn:
                if write.write.delay:
                    with contextlib.suppress(asyncio.TimeoutError):
                        await asyncio.wait_for(asyncio.shield(stop), write.write.delay)
                if stop.done():
                    break
                sent = 0
                for message in write.messages:
                    text = json.dumps(message)
                    if not await self.socket.send(text):
                        break
                    sent += len(text.encode())
                    calls = message.get("toolCall", {}).get("functionCalls", [])
                    made += [c["id"] for c in calls]
                if sent:  # a write whose calls wait for the toolCall sent nothing
                    self.mock.log.wrote(entry, sent, write.write.kinds, write.content)
                if write.close is not None:
                    await self.socket.close(*write.close)
                    break
            else:
                entry["completed"] = True
            if self.interrupt.is_set() and not self.socket.closed.is_set():
                entry["cancelled_at"] = self.interrupted_at
                text = json.dumps({"serverContent": {"interrupted": True}})
                if await self.socket.send(text):
                    self.mock.log.wrote(entry, len(text.encode()), ("event",), ())
        finally:
            stop.cancel()
            entry["ended_at"] = time.time()
            if self.socket.closed.is_set():
                entry["disconnected_at"] = self.socket.closed_at
            # The conversation keeps the model's turn, its calls for their responses.
            self.calls += len(made)
            self.open_calls.update(made)
            parts = [
                p for p in history if "functionCall" not in p or p["functionCall"]["id"] in made
            ]
            if parts:
                self._add([{"role": "model", "parts": parts}])


def _is_content(turn: Any) -> bool:
    """A ``Content`` the mock reads: a role, and a list of part objects."""
    if not isinstance(turn, dict):
        return False
    parts = turn.get("parts")
    return (
        turn.get("role", "user") in ("user", "model")
        and isinstance(parts, list)
        and all(isinstance(p, dict) for p in parts)
    )
