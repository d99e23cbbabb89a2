"""WebSocket hops of our own, each one behaviour, between the kit's client and the mock.

A hop accepts a client's WebSocket (``websockets``' asyncio server), opens
one to the upstream at the same path and query with the client's
credentials, and relays messages both ways:

=================== ======================================================
behaviour           what it does
=================== ======================================================
``pass``            relays every message as it comes; the client's close
                    closes the upstream's socket, the upstream's closes the
                    client's with its code and reason
``hold``            holds the upstream's messages of a response until its
                    last one (a Live turn's: until ``turnComplete`` or the
                    ``toolCall``), then sends them all
``drop_errors``     drops the upstream's ``error`` events (the response's
                    ``response.failed`` still goes on) and the error a
                    Realtime ``response.done`` carries (its status kept);
                    a Live upstream's error close becomes a
                    ``turnComplete``, then a normal closure
``one_call_id``     gives every call of a response the first call's
                    ``call_id`` (a Live ``toolCall``'s, its first ``id``)
``keep_upstream``   when the client closes, keeps the upstream's socket
                    open and reads it to its end
``drop_cancel``     drops the client's ``response.cancel`` (Realtime)
``socket_per_response``
                    opens a new upstream socket for each of the client's
                    messages, the last one closed (Responses: a gateway
                    that spreads one client socket over several)
``last_delta_done`` gives the ``.done`` events of a text (the text's, its
                    part's, its item's) the last delta's text alone, not
                    the whole (OpenAI's protocols; LiteLLM 1.108.7's
                    Realtime route from Gemini Live does so)
=================== ======================================================

The paths are the client's (``/v1/responses``, ``/v1/realtime?model=...``,
Live's ``.../BidiGenerateContent``): a hop relays each protocol.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
from typing import Any

from websockets.asyncio.client import connect
from websockets.asyncio.server import ServerConnection, serve
from websockets.exceptions import ConnectionClosed

__all__ = ["BEHAVIOURS", "WsRelay"]

BEHAVIOURS = (
    "pass",
    "hold",
    "drop_errors",
    "one_call_id",
    "keep_upstream",
    "drop_cancel",
    "last_delta_done",
    "socket_per_response",
)
_ENDS = {"response.completed", "response.incomplete", "response.failed", "response.done"}
_PASSED = ("authorization", "x-api-key", "x-goog-api-key")
#: The close codes that are no error (RFC 6455).
_NORMAL = (1000, 1005)


class WsRelay:
    """``async with WsRelay(mock_url, behaviour) as relay: relay.url``."""

    def __init__(self, upstream_url: str, behaviour: str = "pass") -> None:
        if behaviour not in BEHAVIOURS:
            raise ValueError(behaviour)
        self.upstream = upstream_url.rstrip("/").replace("http://", "ws://", 1)
        self.behaviour = behaviour
        self.url = ""
        self._server: Any = None
        self._tasks: set[asyncio.Task[None]] = set()

    async def __aenter__(self) -> WsRelay:
        self._server = await serve(self._session, "127.0.0.1", 0, ping_interval=None)
        port = self._server.sockets[0].getsockname()[1]
        self.url = f"http://127.0.0.1:{port}"
        return self

    async def __aexit__(self, *exc: object) -> None:
        for task in list(self._tasks):
            task.cancel()
        await asyncio.gather(*self._tasks, return_exceptions=True)
        self._server.close()
        await self._server.wait_closed()

    async def _session(self, client: ServerConnection) -> None:
        request = client.request
        assert request is not None
        headers = [(k, v) for k, v in request.headers.raw_items() if k.lower() in _PASSED]
        if self.behaviour == "socket_per_response":
            await self._per_message(client, self.upstream + request.path, headers)
            return
        async with connect(
            self.upstream + request.path, additional_headers=headers, ping_interval=None
        ) as upstream:
            down = asyncio.ensure_future(self._down(upstream, client))
            try:
                async for message in client:
                    if self.behaviour == "drop_cancel" and '"response.cancel"' in str(message):
                        continue
                    await upstream.send(message)
            except ConnectionClosed:
                pass
            if self.behaviour == "keep_upstream":
                # The client went; the upstream is read to its end, for nobody.
                task = asyncio.ensure_future(_drain(upstream, down))
                self._tasks.add(task)
                await asyncio.shield(task)
                return
            down.cancel()
            with contextlib.suppress(asyncio.CancelledError, ConnectionClosed):
                await down

    async def _per_message(
        self, client: ServerConnection, url: str, headers: list[tuple[str, str]]
    ) -> None:
        """Each client message on an upstream socket of its own."""
        upstream: Any = None
        down: asyncio.Future[None] | None = None

        async def close() -> None:
            if down is not None:
                down.cancel()
                with contextlib.suppress(asyncio.CancelledError, ConnectionClosed):
                    await down
            if upstream is not None:
                await upstream.close()

        try:
            async for message in client:
                await close()
                upstream = await connect(url, additional_headers=headers, ping_interval=None)
                down = asyncio.ensure_future(self._down(upstream, client))
                await upstream.send(message)
        except ConnectionClosed:
            pass
        finally:
            await close()

    async def _down(self, upstream: Any, client: ServerConnection) -> None:
        held: list[str] = []
        ids: dict[str, str] = {}
        with contextlib.suppress(ConnectionClosed):
            async for message in upstream:
                text = message if isinstance(message, str) else message.decode()
                event = json.loads(text)
                kind = event.get("type")
                if self.behaviour == "drop_errors" and kind == "error":
                    continue
                if self.behaviour == "drop_errors" and kind == "response.done":
                    details = event["response"].get("status_details") or {}
                    if details.pop("error", None) is not None:
                        text = json.dumps(event)
                if self.behaviour == "one_call_id":
                    text = _one_call_id(event, ids) or text
                if self.behaviour == "last_delta_done":
                    text = _last_delta_done(event, ids) or text
                if self.behaviour == "hold":
                    held.append(text)
                    if kind not in _ENDS and not _live_end(event):
                        continue
                    for each in held:
                        await client.send(each)
                    held.clear()
                    continue
                await client.send(text)
        code, reason = upstream.close_code, upstream.close_reason
        if self.behaviour == "drop_errors" and code not in (None, *_NORMAL):
            # A Live error (its close) masked as the turn's end.
            await client.send(json.dumps({"serverContent": {"turnComplete": True}}))
            code, reason = 1000, ""
        with contextlib.suppress(ConnectionClosed):
            await client.close(code if code not in (None, 1005, 1006) else 1000, reason or "")


def _live_end(event: dict[str, Any]) -> bool:
    """A Live message that ends the model's turn (``turnComplete``, ``toolCall``)."""
    content = event.get("serverContent")
    ended = isinstance(content, dict) and content.get("turnComplete") is True
    return ended or "toolCall" in event


def _one_call_id(event: dict[str, Any], ids: dict[str, str]) -> str | None:
    """``event`` with every call's id the response's first (None: unchanged)."""
    changed = False

    def fix(value: Any) -> None:
        nonlocal changed
        if isinstance(value, dict):
            call = value.get("call_id")
            if isinstance(call, str):
                first = ids.setdefault("first", call)
                if call != first:
                    value["call_id"] = first
                    changed = True
            for child in value.values():
                fix(child)
        elif isinstance(value, list):
            for child in value:
                fix(child)

    if event.get("type") == "response.created":
        ids.clear()
    tool_call = event.get("toolCall")
    if isinstance(tool_call, dict):  # Live: its calls' ``id``, the batch's first
        calls = tool_call.get("functionCalls") or []
        for call in calls[1:]:
            call["id"] = calls[0]["id"]
        return json.dumps(event) if len(calls) > 1 else None
    fix(event)
    return json.dumps(event) if changed else None


#: The text fields of OpenAI's text events: the delta's, the done's.
_TEXT_FIELDS = {
    "response.output_text.delta": "delta",
    "response.output_audio_transcript.delta": "delta",
    "response.output_text.done": "text",
    "response.output_audio_transcript.done": "transcript",
}


def _last_delta_done(event: dict[str, Any], last: dict[str, str]) -> str | None:
    """``event`` with a done text the last delta's (None: unchanged)."""
    kind = event.get("type")
    field = _TEXT_FIELDS.get(kind) if isinstance(kind, str) else None
    if field == "delta":
        last["text"] = event.get("delta") or ""
        return None
    if "text" not in last:
        return None
    if field is not None:
        event[field] = last["text"]
    elif kind == "response.content_part.done" and isinstance(event.get("part"), dict):
        part = event["part"]
        for key in ("text", "transcript"):
            if key in part:
                part[key] = last["text"]
    elif kind == "response.output_item.done" and isinstance(event.get("item"), dict):
        for part in event["item"].get("content") or []:
            for key in ("text", "transcript"):
                if isinstance(part, dict) and key in part:
                    part[key] = last["text"]
    else:
        return None
    return json.dumps(event)


async def _drain(upstream: Any, down: asyncio.Future[None]) -> None:
    down.cancel()
    with contextlib.suppress(asyncio.CancelledError, ConnectionClosed):
        await down
    with contextlib.suppress(ConnectionClosed):
        async for _ in upstream:
            pass
