"""Gateways that retry, of our own, for the kit's retry cases: one honest, one broken per rule.

Each serves Chat Completions and calls a Chat Completions upstream (the
mock), on the kit's own HTTP server and client (``streamwire.kit.vocab.httpio``,
the standard library's asyncio streams), and decides what to do when an
attempt fails:

* ``honest``: an error status before any byte: try again; a stall (no head
  within ``STALL_TIMEOUT``): close it, try again; a failure after output: end
  the stream with an error chunk. No verdict.
* ``splice``: after output too, try again, and relay the new attempt's events
  after the old one's: ``retry_spliced``.
* ``repair``: an error after a call's fragments: finish the call and the
  stream as if it were whole, no retry: ``failed_attempt_call``.
* ``leave_open``: a stall: try again, and leave the stalled attempt open:
  ``attempt_left_open``.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
from typing import Any

from streamwire.kit.vocab.httpio import (
    ClientResponse,
    HttpServer,
    HttpTimeout,
    Request,
    Responder,
    TransportError,
    open_request,
)

__all__ = ["BEHAVIOURS", "STALL_TIMEOUT", "RetryGateway"]

BEHAVIOURS = ("honest", "splice", "repair", "leave_open")
#: A first byte later than this starts another attempt.
STALL_TIMEOUT = 1.0
_SSE = [("content-type", "text/event-stream"), ("cache-control", "no-cache")]


def _chunk(payload: dict[str, Any]) -> bytes:
    return f"data: {json.dumps(payload)}\n\n".encode()


class RetryGateway:
    """``async with RetryGateway(mock_url, behaviour) as gateway: gateway.url``."""

    def __init__(self, upstream_url: str, behaviour: str = "honest") -> None:
        if behaviour not in BEHAVIOURS:
            raise ValueError(behaviour)
        self.upstream = upstream_url.rstrip("/") + "/v1/chat/completions"
        self.behaviour = behaviour
        self._server = HttpServer(self._handle)
        self._abandoned: list[ClientResponse] = []
        self.url = ""

    async def __aenter__(self) -> RetryGateway:
        await self._server.start()
        self.url = self._server.url
        return self

    async def __aexit__(self, *exc: object) -> None:
        for response in self._abandoned:
            response.close()
        await self._server.close()

    async def _attempt(self, body: bytes) -> ClientResponse | None:
        """One attempt: its response once the head came, or None on a stall."""
        opening = open_request(
            self.upstream,
            headers=[("content-type", "application/json")],
            body=body,
            read_timeout=30.0,
        )
        task = asyncio.ensure_future(opening)
        done, _ = await asyncio.wait({task}, timeout=STALL_TIMEOUT)
        if done:
            return task.result()
        if self.behaviour == "leave_open":
            # Abandoned, not closed: the connection stays open, its answer unread.
            task.add_done_callback(lambda t: self._keep(t))
        else:
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError, TransportError):
                await task
        return None

    def _keep(self, task: asyncio.Task[ClientResponse]) -> None:
        if not task.cancelled() and task.exception() is None:
            self._abandoned.append(task.result())

    async def _handle(self, request: Request, responder: Responder) -> None:
        response: ClientResponse | None = None
        for _ in range(3):
            response = await self._attempt(request.body)
            if response is not None and response.status == 200:
                break
            if response is not None:
                # An error before any byte: the next attempt, if any is left.
                await response.read()
                response.close()
                response = None
        if response is None:
            error = {"error": {"type": "upstream_unavailable", "message": "no attempt answered"}}
            headers = [("content-type", "application/json")]
            await responder.send(502, headers, json.dumps(error).encode())
            return
        rid = response.header("x-request-id")
        await responder.start(200, _SSE + ([("x-upstream-request-id", rid)] if rid else []))
        retried = False
        while True:
            failure = await self._relay(response, responder)
            response.close()
            if failure is None:
                return
            if self.behaviour == "splice" and not retried:
                retried = True
                again = await self._attempt(request.body)
                if again is not None and again.status == 200:
                    response = again
                    continue
            if self.behaviour == "repair" and failure == "error":
                finish = {
                    "id": "gw",
                    "object": "chat.completion.chunk",
                    "choices": [{"index": 0, "delta": {}, "finish_reason": "tool_calls"}],
                }
                await responder.write(_chunk(finish) + b"data: [DONE]\n\n")
                return
            error = {"error": {"type": "upstream_failed", "message": f"the upstream {failure}"}}
            await responder.write(_chunk(error))
            return

    async def _relay(self, response: ClientResponse, responder: Responder) -> str | None:
        """Relays an attempt's events; why it failed (``error``, ``broke``) or None."""
        pending = b""
        try:
            async for _, data in response.pieces():
                pending += data
                *events, pending = pending.split(b"\n\n")
                for event in events:
                    if event.startswith(b'data: {"error"'):
                        return "error"
                    if event.strip():
                        await responder.write(event + b"\n\n")
        except (TransportError, HttpTimeout):
            return "broke"
        return None
