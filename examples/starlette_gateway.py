"""The Starlette recipe: OpenAI Chat Completions streams served from an Anthropic upstream.

One endpoint, ``POST /v1/chat/completions``, of an ASGI app (Starlette; the
same code runs under FastAPI, whose ``StreamingResponse`` is Starlette's).
It sends the request on to Anthropic's Messages API, reads the answer with
``sw.aiter_events`` and re-encodes each unified event for the client with
``sw.encoder("openai-chat")`` as it arrives. Three things a gateway needs,
and where they happen:

* **translation**: ``_relay`` writes each event's bytes at once;
* **cancellation**: when the client disconnects, Starlette cancels the task
  that iterates ``_relay``; its ``finally`` closes the upstream response at
  once (``events.aclose()``), so the upstream stops generating and billing.
  The close is shielded: in a cancelled anyio scope every ``await`` would be
  cancelled again before it could close anything;
* **metrics**: ``on_result`` gets the final ``StreamResult`` of every
  request, ended, cancelled or failed: status, usage, time to first event,
  gaps, burst flag (here: logged as OpenTelemetry attributes).

The request mapping is the least a demo needs (model, text of the turns,
``max_tokens``); ``examples/gateway`` maps more, in plain ASGI. Run it::

    pip install 'streamwire[httpx]' starlette uvicorn
    ANTHROPIC_API_KEY=... uvicorn --factory starlette_gateway:app_from_env --app-dir examples
"""

from __future__ import annotations

import logging
import os
import time
from collections.abc import AsyncIterator, Callable
from typing import Any

import anyio
import httpx
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response, StreamingResponse
from starlette.routing import Route

import streamwire as sw

__all__ = ["app_from_env", "create_app", "log_result"]

log = logging.getLogger("starlette_gateway")

OnResult = Callable[[sw.StreamResult], None]


def log_result(result: sw.StreamResult) -> None:
    """The default ``on_result``: one log line per request, with its span attributes."""
    log.info("upstream %s: %s", result.protocol, result.status, extra=sw.otel_attributes(result))


def to_anthropic(body: dict[str, Any]) -> dict[str, Any]:
    """A chat request as an Anthropic Messages request (text turns only)."""
    system = [m["content"] for m in body.get("messages", []) if m.get("role") == "system"]
    turns = [
        {"role": m["role"], "content": m["content"]}
        for m in body.get("messages", [])
        if m.get("role") in ("user", "assistant") and isinstance(m.get("content"), str)
    ]
    request: dict[str, Any] = {
        "model": body.get("model"),
        "max_tokens": body.get("max_completion_tokens") or body.get("max_tokens") or 1024,
        "messages": turns,
        "stream": True,
    }
    if system:
        request["system"] = "\n".join(system)
    return request


async def _relay(
    events: sw.AsyncEventIterator, model: str | None, on_result: OnResult
) -> AsyncIterator[bytes]:
    encoder = sw.encoder("openai-chat", source="anthropic", model=model)
    try:
        async for event in events:
            out = encoder.feed([event])
            if out:
                yield out
        out = encoder.close()
        if out:
            yield out
    finally:
        # The client left (Starlette cancelled us) or the stream ended: close the
        # upstream now. Shielded, or the await itself would be cancelled.
        with anyio.CancelScope(shield=True):
            await events.aclose()
        on_result(events.result)


def create_app(
    upstream_url: str,
    api_key: str,
    *,
    http: httpx.AsyncClient | None = None,
    on_result: OnResult = log_result,
) -> Starlette:
    """The app: ``upstream_url`` is the Messages API's base (``https://api.anthropic.com/v1``)."""
    client = http or httpx.AsyncClient(timeout=httpx.Timeout(10.0, read=300.0))

    async def chat_completions(request: Request) -> Response:
        body = await request.json()
        started = time.monotonic()
        upstream_request = client.build_request(
            "POST",
            f"{upstream_url}/messages",
            json=to_anthropic(body),
            headers={"x-api-key": api_key, "anthropic-version": "2023-06-01"},
        )
        upstream = await client.send(upstream_request, stream=True)
        events = sw.aiter_events(upstream, "anthropic", started_at=started, idle_timeout=60.0)
        if upstream.status_code != 200:
            async with events:  # reads the error body (bounded) into the result
                async for _ in events:
                    pass
            on_result(events.result)
            error = events.result.error
            message = error.message if error is not None else None
            return JSONResponse({"error": {"message": message}}, status_code=upstream.status_code)
        return StreamingResponse(
            _relay(events, body.get("model"), on_result),
            media_type="text/event-stream",
            headers={"cache-control": "no-cache, no-transform", "x-accel-buffering": "no"},
        )

    return Starlette(routes=[Route("/v1/chat/completions", chat_completions, methods=["POST"])])


def app_from_env() -> Starlette:
    """The app configured by ``ANTHROPIC_API_KEY`` (and ``ANTHROPIC_BASE_URL``)."""
    base = os.environ.get("ANTHROPIC_BASE_URL", "https://api.anthropic.com/v1")
    return create_app(base, os.environ["ANTHROPIC_API_KEY"])
