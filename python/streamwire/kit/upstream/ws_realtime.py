"""The mock's OpenAI Realtime sessions: ``GET .../realtime?model=...``, upgraded.

The session as the Realtime API keeps it ("Realtime client events" and
"Realtime conversations", platform.openai.com/docs, GA names, checked
2026-12-08): on open the server sends ``session.created``; the client
configures the session (``session.update``: ``instructions``, ``tools``,
``output_modalities``, ``max_output_tokens``; answered ``session.updated``),
adds items to the conversation (``conversation.item.create``: a user
``message`` of ``input_text`` parts, or a ``function_call_output`` with the
``call_id`` and ``output`` of a call the model made; answered
``conversation.item.added`` and ``.done``) and asks for a response
(``response.create``, its ``response`` object's settings over the
session's). The conversation is the session's: each response reads every
item so far, the calls the mock made included.

Each ``response.create`` is answered with the case the model names (the
``model`` query parameter, or ``session.update``'s), or else the prompt, as
over HTTP (``MockUpstream.ws_case``, which logs the response as an entry):
the case's Responses events, each turned into its Realtime form by
``realtime.RealtimeWriter``, write by write with the delivery's timing. A
session whose output modalities include ``audio`` (the API's default) gets
the text as an audio part: audio deltas, each with its transcript.

The rules a gateway meets at the provider: one response at a time (a
second ``response.create`` gets an ``error`` event,
``conversation_already_has_active_response``); ``response.cancel`` ends
the response in flight with a ``response.done`` of status ``cancelled``
(``cancelled_at`` in its entry; with none in flight, an ``error``,
``response_cancel_not_active``); a message that is not a JSON object, of an
unknown type, or with an item the mock cannot read gets an ``error`` event;
the socket stays open after each. The client closing the socket ends the
response in flight (``disconnected_at``). A session lasts 60 minutes
(``MockUpstream``'s ``ws_lifetime``; ``session.created`` gives its
``expires_at``): then the mock sends an ``error`` event,
``session_expired``, and closes the socket with 1001, as the API does
(users' reports: openai/openai-realtime-twilio-demo#7 and livekit/agents#2341 quote the
event, and a client there saw the close code).
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import json
import secrets
import time
from typing import Any
from urllib.parse import parse_qsl

from ..vocab.httpio import Request
from .realtime import RealtimeWriter, sse_payloads
from .ws_socket import Mock, Socket, either, message_request

__all__ = ["RealtimeSession"]

#: Client events of the API the mock does not serve (audio input, editing
#: the conversation): answered with an ``error`` event, the socket open.
UNSERVED = frozenset(
    {
        "input_audio_buffer.append",
        "input_audio_buffer.commit",
        "input_audio_buffer.clear",
        "conversation.item.retrieve",
        "conversation.item.truncate",
        "conversation.item.delete",
        "output_audio_buffer.clear",
        "transcription_session.update",
    }
)
#: The conversation items a session keeps (the latest): a hostile client's
#: items cannot grow the mock.
MAX_ITEMS = 256
#: The session settings ``session.update`` may change, and a response's own.
_SETTINGS = frozenset(
    {
        "model",
        "instructions",
        "tools",
        "tool_choice",
        "output_modalities",
        "modalities",
        "max_output_tokens",
        "max_response_output_tokens",
        "temperature",
        "audio",
        "voice",
        "metadata",
        "tracing",
        "truncation",
        "prompt",
        "include",
    }
)


class RealtimeSession:
    """One Realtime session over an open socket (see the module docstring)."""

    upstream = "openai-realtime"

    def __init__(self, mock: Mock, request: Request, socket: Socket) -> None:
        self.mock = mock
        self.request = request
        self.socket = socket
        mark = secrets.token_hex(6)
        model = dict(parse_qsl(request.query)).get("model", "")
        self.session: dict[str, Any] = {
            "type": "realtime",
            "object": "realtime.session",
            "id": f"sess_sw{mark}",
            "model": model,
            "output_modalities": ["audio"],
            "instructions": "",
            "tools": [],
            "tool_choice": "auto",
            "max_output_tokens": "inf",
            "expires_at": int(time.time() + mock.ws_lifetime(self.upstream)),
        }
        self.conversation = f"conv_sw{mark}"
        #: The conversation, as a Responses request's ``input`` items.
        self.items: list[dict[str, Any]] = []
        self.running: asyncio.Task[None] | None = None
        self.cancel = asyncio.Event()
        self.cancelled_at: float | None = None
        self.ids = itertools.count(1)

    async def run(self) -> None:
        expiry = asyncio.ensure_future(self._expire())
        try:
            await self._send({"type": "session.created", "session": self.session})
            async for message in self.socket.messages():
                await self._on_message(message)
        finally:
            expiry.cancel()
            if self.running is not None:
                await asyncio.gather(self.running, return_exceptions=True)

    async def _expire(self) -> None:
        """At the session's lifetime: ``session_expired``, and the socket closed."""
        lifetime = self.mock.ws_lifetime(self.upstream)
        await asyncio.sleep(lifetime)
        why = f"the session reached its maximum duration of {lifetime:g} s"
        await self._error("session_expired", why)
        await self.socket.close(1001, "session expired")

    async def _send(self, event: dict[str, Any]) -> bool:
        head = {"type": event["type"], "event_id": f"event_sw{next(self.ids)}"}
        return await self.socket.send(json.dumps({**head, **event}))

    async def _error(self, code: str, message: str, event_id: Any = None) -> None:
        error = {
            "type": "invalid_request_error",
            "code": code,
            "message": message,
            "param": None,
            "event_id": event_id if isinstance(event_id, str) else None,
        }
        await self._send({"type": "error", "error": error})

    @property
    def responding(self) -> bool:
        return self.running is not None and not self.running.done()

    async def _on_message(self, message: str | bytes) -> None:
        try:
            body = json.loads(message)
        except (UnicodeDecodeError, ValueError, RecursionError):
            body = None
        if not isinstance(body, dict):
            await self._error("invalid_json", "a client event must be a JSON object")
            return
        kind, event_id = body.get("type"), body.get("event_id")
        if kind == "session.update":
            await self._update(body.get("session"), event_id)
        elif kind == "conversation.item.create":
            await self._add_item(body.get("item"), event_id)
        elif kind == "response.create":
            await self._create(body, message, event_id)
        elif kind == "response.cancel":
            if not self.responding:
                await self._error("response_cancel_not_active", "no response to cancel", event_id)
                return
            self.cancelled_at = time.time()
            self.cancel.set()
        elif isinstance(kind, str) and kind in UNSERVED:
            why = f"the mock serves text and tool turns: {kind} is not served"
            await self._error("unsupported_event_type", why, event_id)
        else:
            name = str(kind)[:80]
            await self._error("unknown_event_type", f"unknown client event type {name!r}", event_id)

    async def _update(self, session: Any, event_id: Any) -> None:
        if not isinstance(session, dict) or not _settings_ok(session):
            await self._error("invalid_value", "session: an object of session settings", event_id)
            return
        self.session.update({k: v for k, v in session.items() if k in _SETTINGS})
        await self._send({"type": "session.updated", "session": self.session})

    async def _add_item(self, item: Any, event_id: Any) -> None:
        read = _item(item)
        if read is None:
            why = (
                "item: a message of input_text parts, or a function_call_output "
                "with a call_id and an output"
            )
            await self._error("invalid_value", why, event_id)
            return
        self.items = [*self.items[-(MAX_ITEMS - 1) :], read]
        shown = {"id": f"item_sw{next(self.ids)}", "object": "realtime.item", **item}
        await self._send({"type": "conversation.item.added", "item": shown})
        await self._send({"type": "conversation.item.done", "item": shown})

    async def _create(self, body: dict[str, Any], message: str | bytes, event_id: Any) -> None:
        if self.responding:
            why = "the conversation already has an active response: one at a time"
            await self._error("conversation_already_has_active_response", why, event_id)
            return
        config = body.get("response", {})
        if not isinstance(config, dict) or not _settings_ok(config):
            await self._error("invalid_value", "response: an object of settings", event_id)
            return
        settings = {**self.session, **{k: v for k, v in config.items() if k in _SETTINGS}}
        items = self.items
        if isinstance(config.get("input"), list):  # an out-of-band response's own items
            items = [i for i in map(_item, config["input"]) if i is not None]
        asked: dict[str, Any] = {
            "model": settings.get("model") or "",
            "instructions": settings.get("instructions") or "",
            "input": list(items),
            "tools": settings.get("tools") or [],
        }
        limit = settings.get("max_output_tokens", settings.get("max_response_output_tokens"))
        if isinstance(limit, int) and not isinstance(limit, bool):
            asked["max_output_tokens"] = limit
        modalities = settings.get("output_modalities") or settings.get("modalities") or []
        audio = isinstance(modalities, list) and "audio" in modalities
        self.cancel = asyncio.Event()
        loop = asyncio.get_running_loop()
        self.running = loop.create_task(self._respond(asked, audio, time.time()))

    async def _respond(self, body: dict[str, Any], audio: bool, received: float) -> None:
        request = self.request
        logged = message_request(request, json.dumps(body).encode(), received)
        chosen = await self.mock.ws_case(logged, body, self.upstream, self.socket.session)
        if isinstance(chosen, str):
            await self._error("model_not_found", chosen)
            return
        entry, writes = chosen
        entry["status"] = 101
        writer = RealtimeWriter(audio=audio, ids=self.ids, conversation=self.conversation)
        stop = asyncio.ensure_future(either(self.socket.closed, self.cancel))
        try:
            for write in writes:
                if write.delay:
                    with contextlib.suppress(asyncio.TimeoutError):
                        await asyncio.wait_for(asyncio.shield(stop), write.delay)
                # A response the client cancelled before it began still begins:
                # its response.created goes first, as the API's would.
                if stop.done() and (self.socket.closed.is_set() or writer.response_id):
                    break
                sent = 0
                for payload in sse_payloads(write.data):
                    for event in writer.events(payload):
                        text = json.dumps(event)
                        if not await self.socket.send(text):
                            break
                        sent += len(text.encode())
                # Realtime has no reasoning: what was not sent is not logged,
                # nor a write that sent nothing.
                content = tuple((k, n) for k, n in write.content if k != "reasoning")
                if sent:
                    self.mock.log.wrote(entry, sent, write.kinds, content)
            else:
                entry["completed"] = True
            if self.cancel.is_set() and not self.socket.closed.is_set() and not writer.done:
                entry["cancelled_at"] = self.cancelled_at
                text = json.dumps(writer.cancelled())
                if await self.socket.send(text):
                    self.mock.log.wrote(entry, len(text.encode()), ("event",), ())
        finally:
            stop.cancel()
            entry["ended_at"] = time.time()
            if self.socket.closed.is_set():
                entry["disconnected_at"] = self.socket.closed_at
            # The conversation keeps the calls the model made, for their results.
            self.items = [*self.items, *writer.calls][-MAX_ITEMS:]


def _settings_ok(settings: dict[str, Any]) -> bool:
    """The settings the mock reads have the API's types."""
    tools = settings.get("tools", [])
    modalities = settings.get("output_modalities", settings.get("modalities", []))
    instructions = settings.get("instructions", "")
    return (
        isinstance(tools, list)
        and all(isinstance(t, dict) for t in tools)
        and isinstance(modalities, list)
        and isinstance(instructions, str)
    )


def _item(item: Any) -> dict[str, Any] | None:
    """A conversation item as a Responses ``input`` item, or None when the
    mock cannot read it: a ``message`` (its text parts joined) or a
    ``function_call_output`` (``call_id`` and ``output`` strings)."""
    if not isinstance(item, dict):
        return None
    kind = item.get("type", "message")
    if kind == "function_call_output":
        call_id, output = item.get("call_id"), item.get("output")
        if isinstance(call_id, str) and call_id and isinstance(output, str):
            return {"type": "function_call_output", "call_id": call_id, "output": output}
        return None
    if kind == "function_call":
        call_id, name = item.get("call_id"), item.get("name")
        arguments = item.get("arguments", "")
        if isinstance(call_id, str) and isinstance(name, str) and isinstance(arguments, str):
            return {
                "type": "function_call",
                "call_id": call_id,
                "name": name,
                "arguments": arguments,
            }
        return None
    role, content = item.get("role"), item.get("content")
    if kind != "message" or role not in ("user", "system", "assistant"):
        return None
    if not isinstance(content, list) or not content:
        return None
    texts = []
    for part in content:
        text = part.get("text") if isinstance(part, dict) else None
        if not isinstance(text, str) or part.get("type") not in (
            "input_text",
            "text",
            "output_text",
        ):
            return None
        texts.append(text)
    return {"role": role, "content": "".join(texts)}
