"""Gateways of our own that treat a failing upstream each one way, for the refused cases.

Each serves Chat Completions and calls a Chat Completions upstream (the
mock), on the kit's own HTTP server and client (``streamwire.kit.vocab.httpio``),
and relays a 200 answer as it streams. What each does when an attempt gets
an error status before any byte:

* ``never_retry``: passes the upstream's error on, its status, headers
  (``Retry-After`` among them) and body. No verdict.
* ``careful``: waits a 429's ``Retry-After`` and tries again; tries a 5xx
  again once, after a pause (``CAREFUL_PAUSE``); never a 4xx. No verdict.
* ``eager``: tries every error again at once, up to ``EAGER_ATTEMPTS``
  attempts: ``retry_after_ignored`` (``rate-limited``),
  ``client_error_retried`` (``bad-request``), ``retry_storm`` (``flapping``).
* ``mask_429``: never retries, and answers a 429 as its own 500:
  ``rate_limit_masked`` (``rate-limited``).

Every one passes the upstream's ``x-request-id`` on, so that each is judged
for its conduct alone.
"""

from __future__ import annotations

import asyncio
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

__all__ = ["BEHAVIOURS", "CAREFUL_PAUSE", "EAGER_ATTEMPTS", "ConductGateway"]

BEHAVIOURS = ("never_retry", "careful", "eager", "mask_429")
#: The careful gateway's pause before it tries a 5xx again.
CAREFUL_PAUSE = 0.5
#: The eager gateway's most attempts of one request.
EAGER_ATTEMPTS = 4
#: The most a careful gateway waits for a ``Retry-After``; longer, it passes the 429 on.
_LONGEST_WAIT = 5.0
_SSE = [("content-type", "text/event-stream"), ("cache-control", "no-cache")]
#: Response headers a relay of a whole body does not copy (its own framing).
_FRAMING = frozenset({"content-length", "transfer-encoding", "connection", "keep-alive"})


class ConductGateway:
    """``async with ConductGateway(mock_url, behaviour) as gateway: gateway.url``."""

    def __init__(self, upstream_url: str, behaviour: str = "never_retry") -> None:
        if behaviour not in BEHAVIOURS:
            raise ValueError(behaviour)
        self.upstream = upstream_url.rstrip("/") + "/v1/chat/completions"
        self.behaviour = behaviour
        self._server = HttpServer(self._handle)
        self.url = ""

    async def __aenter__(self) -> ConductGateway:
        await self._server.start()
        self.url = self._server.url
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self._server.close()

    async def _attempt(self, body: bytes) -> ClientResponse:
        return await open_request(
            self.upstream,
            headers=[("content-type", "application/json")],
            body=body,
            read_timeout=30.0,
        )

    def _wait_before_retry(
        self, response: ClientResponse, retried_5xx: int, made: int
    ) -> float | None:
        """Seconds to wait before the next attempt, or None: pass this answer on."""
        status = response.status
        if self.behaviour == "eager":
            return 0.0 if made < EAGER_ATTEMPTS else None
        if self.behaviour != "careful":
            return None
        if status == 429:
            given = response.header("retry-after") or ""
            try:
                wait = float(given)
            except ValueError:
                return None
            return wait if 0 <= wait <= _LONGEST_WAIT and made < 3 else None
        if status >= 500 and retried_5xx == 0:
            return CAREFUL_PAUSE
        return None

    async def _handle(self, request: Request, responder: Responder) -> None:
        made, retried_5xx = 0, 0
        while True:
            response = await self._attempt(request.body)
            made += 1
            if response.status == 200:
                break
            body = await response.read()
            response.close()
            wait = self._wait_before_retry(response, retried_5xx, made)
            if wait is None:
                await self._pass_on(responder, response, body)
                return
            retried_5xx += response.status >= 500
            await asyncio.sleep(wait)
        rid = response.header("x-request-id")
        await responder.start(200, _SSE + ([("x-request-id", rid)] if rid else []))
        try:
            async for _, data in response.pieces():
                await responder.write(data)
        except (TransportError, HttpTimeout):
            error = {"error": {"type": "upstream_failed", "message": "the upstream broke off"}}
            await responder.write(f"data: {json.dumps(error)}\n\n".encode())
        finally:
            response.close()
        await responder.end()

    async def _pass_on(self, responder: Responder, response: ClientResponse, body: bytes) -> None:
        """The upstream's error to the client: as it came, or (``mask_429``) a
        429 as the gateway's own 500."""
        headers = [(k, v) for k, v in response.headers if k.lower() not in _FRAMING]
        if self.behaviour == "mask_429" and response.status == 429:
            own: dict[str, Any] = {
                "error": {"message": "upstream call failed", "type": "server_error", "code": None}
            }
            rid = response.header("x-request-id")
            keep = [("content-type", "application/json")]
            keep += [("x-request-id", rid)] if rid else []
            await responder.send(500, keep, json.dumps(own).encode())
            return
        await responder.send(response.status, headers, body)
