"""Gateways for the kit's tests: a correct relay, and one deliberately broken copy per judge rule.

``Relay`` is a plain ASGI app that serves one client protocol from an
upstream of another (``sw.stream`` then ``sw.encoder``, as examples/gateway
does), watching for the client's disconnect. Each ``defect`` breaks one thing
the acceptance kit must catch, the way real gateways break it:

============== ===================================================== ==========================
defect         what it does                                          the verdict it must get
============== ===================================================== ==========================
``buffer``     collects the whole response, then sends it            ``not_streaming``
``hold``       collects the whole response, then sends it in slices   ``not_streaming``
               40 ms apart (spread, but only after the upstream ended)
``merge_calls`` concatenates every call's arguments into one call    ``chat_only``
``drop_tools`` sends the upstream the request without its ``tools``   ``chat_only``
``drop_ids``   sends calls without their ids                         ``chat_only``
``error_text`` turns the upstream's error into assistant text        ``error_masked``
``no_cancel``  ignores the client's disconnect, reads the upstream   ``cancel_not_propagated``
               to its end
``invent_usage`` reports usage estimated from the text's length      ``usage_invented``
``zero_usage`` asks a Chat upstream for no usage and reports zeros    ``usage_invented``
``crash_unknown`` raises on an event it does not know                ``compat_gate_failed``
``drop_reasoning`` drops the reasoning deltas                           ``reasoning_dropped``
``length_as_stop`` reports an answer the limit cut as a normal stop     ``truncation_masked``
``drop_error_flag`` sends the upstream the tool result without its flag ``tool_error_flag_lost``
``cut_midway`` resets the connection after the second text delta       ``stream_cut``
``length_as_tool_calls`` ends a call the limit cut as a tool-call    ``truncated_call_``
               finish                                                ``executable``
============== ===================================================== ==========================
"""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections.abc import Awaitable, Callable, MutableMapping
from dataclasses import replace
from typing import Any

import httpx

import streamwire as sw
from gateway_loopback import lifespan, wait_for_disconnect
from streamwire.kit.client.raw import tool_declarations

__all__ = ["DEFECTS", "Relay"]

Message = MutableMapping[str, Any]

DEFECTS = (
    "buffer",
    "hold",
    "merge_calls",
    "drop_tools",
    "drop_ids",
    "error_text",
    "no_cancel",
    "invent_usage",
    "zero_usage",
    "crash_unknown",
    "drop_reasoning",
    "length_as_stop",
    "drop_error_flag",
    "cut_midway",
    "length_as_tool_calls",
)
#: ``hold`` sends what it held in this many slices, this many seconds apart.
HOLD_SLICES = 16
HOLD_GAP = 0.04
_HEADERS = {"anthropic-version": "2023-06-01"}
_PATHS = {
    "openai-chat": "/chat/completions",
    "openai-responses": "/responses",
    "anthropic": "/messages",
}


def _mapped(request: dict[str, Any], client: str, upstream: str) -> dict[str, Any]:
    """The kit's request as ``upstream`` accepts it (``kit/upstream/contract.py``): its
    first turns are user text in Chat Completions and Anthropic alike, so only
    the settings differ; usage asked for from a Chat upstream."""
    if client == upstream:
        if upstream == "openai-chat":
            request["stream_options"] = {"include_usage": True}
        return request
    if upstream == "anthropic":
        limit = request.pop("max_tokens", None) or 1024
        request.pop("stream_options", None)
        if request.pop("reasoning_effort", None) is not None:
            request["thinking"] = {"type": "enabled", "budget_tokens": 1024}
            limit = max(limit, 2048)
        request["max_tokens"] = limit
    elif upstream == "openai-chat":
        if request.pop("thinking", None) is not None:
            request["reasoning_effort"] = "low"
        request["stream_options"] = {"include_usage": True}
    return request


class Relay:
    """client protocol -> the same request to ``upstream`` -> the answer re-encoded."""

    def __init__(self, upstream_url: str, upstream: str, client: str, defect: str | None = None):
        if defect is not None and defect not in DEFECTS:
            raise ValueError(defect)
        self.upstream_url = upstream_url.rstrip("/")
        self.upstream = upstream
        self.client = client
        self.defect = defect

    async def __call__(
        self,
        scope: Message,
        receive: Callable[[], Awaitable[Message]],
        send: Callable[[Message], Awaitable[None]],
    ) -> None:
        if scope["type"] == "lifespan":
            await lifespan(receive, send)
            return
        body = b""
        while True:
            message = await receive()
            body += message.get("body", b"")
            if not message.get("more_body"):
                break
        request = _mapped(json.loads(body), self.client, self.upstream)
        if "tools" in request:
            # The upstream's own shape; the rest of the kit's requests read
            # the same in these protocols.
            request["tools"] = tool_declarations(self.upstream)
        if self.defect == "zero_usage":
            request.pop("stream_options", None)
        if self.defect == "drop_tools":
            request.pop("tools", None)
        if self.defect == "drop_error_flag":
            for message in request.get("messages") or []:
                for block in message.get("content") if isinstance(message, dict) else []:
                    if isinstance(block, dict) and block.get("type") == "tool_result":
                        block.pop("is_error", None)
        relay = asyncio.ensure_future(self._cut_or_relay(request, send))
        if self.defect == "no_cancel":
            await relay
            return
        watcher = asyncio.ensure_future(_disconnected(receive))
        await asyncio.wait({relay, watcher}, return_when=asyncio.FIRST_COMPLETED)
        for task in (relay, watcher):
            task.cancel()
        await asyncio.gather(relay, watcher, return_exceptions=True)

    async def _cut_or_relay(
        self, request: dict[str, Any], send: Callable[[Message], Awaitable[None]]
    ) -> None:
        try:
            await self._relay(request, send)
        except _Cut:
            # Ends the response without its last chunk: the client sees the
            # connection break mid-stream (uvicorn closes it).
            raise RuntimeError("cut midway") from None

    async def _relay(
        self, request: dict[str, Any], send: Callable[[Message], Awaitable[None]]
    ) -> None:
        url = self.upstream_url + _PATHS[self.upstream]
        decoder = sw.stream(self.upstream)
        encoder = sw.encoder(self.client, source=self.upstream)
        held = bytearray()
        async with (
            httpx.AsyncClient(timeout=30) as client,
            client.stream("POST", url, json=request, headers=_HEADERS) as response,
        ):
            await send(
                {
                    "type": "http.response.start",
                    "status": 200,
                    "headers": [
                        (b"content-type", encoder.content_type.encode()),
                        *_upstream_id(response.headers),
                    ],
                }
            )
            texts = 0
            async for chunk in response.aiter_bytes():
                events = self._break(decoder.feed(chunk))
                texts += sum(isinstance(e, sw.TextDelta) for e in events)
                if self.defect == "cut_midway" and texts >= 2:
                    raise _Cut
                out = encoder.feed(events)
                if self.defect in ("buffer", "hold"):
                    held += out
                elif out:
                    await _send(send, out, self.defect)
            out = encoder.feed(self._break(decoder.close())) + encoder.close()
        held += out
        if self.defect == "hold":
            step = -(-len(held) // HOLD_SLICES) or 1
            while len(held) > step:
                await _send(send, bytes(held[:step]), self.defect)
                del held[:step]
                await asyncio.sleep(HOLD_GAP)
        await _send(send, bytes(held), self.defect, more=False)

    def _break(self, events: list[sw.Event]) -> list[sw.Event]:
        defect = self.defect
        out: list[sw.Event] = []
        for event in events:
            if defect == "crash_unknown" and isinstance(event, sw.UnknownEvent):
                raise RuntimeError(f"unexpected event {event.provider_type}")
            if defect == "merge_calls":
                if isinstance(event, sw.ToolCallArgumentsDelta):
                    event = replace(event, index=0)
                elif isinstance(event, sw.ToolCallStarted | sw.ToolCallCompleted) and event.index:
                    continue
                elif isinstance(event, sw.ToolCallCompleted):
                    continue  # the merged call completes at the finish
            if defect == "drop_ids" and isinstance(
                event, sw.ToolCallStarted | sw.ToolCallArgumentsDelta | sw.ToolCallCompleted
            ):
                event = replace(event, id=None)
            if defect == "error_text" and isinstance(event, sw.ErrorReceived):
                out.append(sw.TextDelta(text=f"\n[error: {event.message}]"))
                continue
            if defect == "error_text" and isinstance(event, sw.MessageCompleted):
                event = replace(event, status="completed", stop_reason="stop")
            if defect == "invent_usage" and isinstance(event, sw.UsageReported):
                continue
            if defect == "drop_reasoning" and isinstance(event, sw.ReasoningDelta):
                continue
            if (
                defect in ("length_as_stop", "length_as_tool_calls")
                and isinstance(event, sw.MessageCompleted)
                and event.status == "truncated"
            ):
                stop = "stop" if defect == "length_as_stop" else "tool_calls"
                event = replace(event, status="completed", stop_reason=stop)
            if defect == "zero_usage" and isinstance(event, sw.MessageCompleted):
                nothing = sw.Usage(input_tokens=0, output_tokens=0, total_tokens=0, final=True)
                out.append(sw.UsageReported(usage=nothing))
            if defect == "invent_usage" and isinstance(event, sw.MessageCompleted):
                guess = sw.Usage(input_tokens=10, output_tokens=99, total_tokens=109, final=True)
                out.append(sw.UsageReported(usage=guess))
            out.append(event)
        return out


class _Cut(Exception):
    """The relay breaks the stream off (``cut_midway``)."""


async def _send(
    send: Callable[[Message], Awaitable[None]], data: bytes, defect: str | None, more: bool = True
) -> None:
    try:
        await send({"type": "http.response.body", "body": data, "more_body": more})
    except OSError:
        if defect != "no_cancel":
            raise
        # no_cancel: the client is gone, and the relay reads on regardless.


async def _disconnected(receive: Callable[[], Awaitable[Message]]) -> None:
    with contextlib.suppress(Exception):
        await wait_for_disconnect(receive)


def _upstream_id(headers: httpx.Headers) -> list[tuple[bytes, bytes]]:
    """The upstream's request id, passed on as every honest gateway should."""
    for name in ("x-request-id", "request-id", "x-amzn-requestid"):
        if name in headers:
            return [(b"x-upstream-request-id", headers[name].encode())]
    return []
