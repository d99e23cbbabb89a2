"""The example gateway: a plain ASGI app that serves one protocol from an upstream of another.

A client speaks its own protocol to the gateway (``POST /v1/chat/completions``,
``/v1/responses``, ``/v1/messages``, or gemini's
``/v1beta/models/{model}:streamGenerateContent``); the gateway maps the request
minimally (``mapping.py``), calls the configured upstream with httpx's async
client, and relays the upstream's body as it arrives: each chunk goes through
``sw.stream(upstream_protocol)`` (unified events) and
``sw.encoder(client_protocol)`` (the client's wire format), and whatever
bytes the encoder returns are written at once. Nothing is collected first.

The response carries the headers that keep proxies from holding a stream
back: ``Content-Type: text/event-stream`` (the encoder's), ``Cache-Control:
no-cache, no-transform`` (no caching, no compressing intermediary), and
``X-Accel-Buffering: no`` (nginx's per-response switch for
``proxy_buffering``, nginx.org/en/docs/http/ngx_http_proxy_module.html,
checked 2026-11-29); no ``Content-Length``, so the server uses chunked
transfer encoding.

When the client goes away (``http.disconnect``, or ``send`` raising
``OSError`` as ASGI servers do since the spec said so; asgi.readthedocs.io
"HTTP & WebSocket ASGI Message Format", checked 2026-11-29) the relay is
cancelled and the upstream response closed, so the upstream stops generating.
An upstream error status becomes the same status with an error body in the
client's shape; an unreachable upstream becomes 502. What the target
protocol could not carry is in ``encoder.downgrades``, logged per request.

Plain ASGI on purpose: the whole HTTP surface is these few messages, and a
framework would hide exactly the parts an example should show. Any ASGI
server runs it (uvicorn in the README and the tests).
"""

from __future__ import annotations

import asyncio
import json
import logging
import os
from collections.abc import Awaitable, Callable, MutableMapping
from dataclasses import dataclass, replace
from typing import Any, cast

import httpx

import streamwire as sw

from .mapping import (
    CLIENT_PROTOCOLS,
    UPSTREAM_PROTOCOLS,
    Prompt,
    RequestError,
    error_body,
    parse_request,
)
from .mapping import upstream_request as build_upstream_request

__all__ = ["Gateway", "GatewayConfig", "app_from_env", "create_app"]

log = logging.getLogger("gateway")

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]

#: Request bodies above this are refused (413): a prompt, not an upload.
MAX_REQUEST_BYTES = 4 * 1024 * 1024
#: How much of an upstream error body is read to find its message.
MAX_ERROR_BYTES = 64 * 1024

_ROUTES: dict[str, sw.TargetName] = {
    "/v1/chat/completions": "openai-chat",
    "/v1/responses": "openai-responses",
    "/v1/messages": "anthropic",
}
_GEMINI_PREFIX = "/v1beta/models/"
_GEMINI_SUFFIX = ":streamGenerateContent"


@dataclass(frozen=True)
class GatewayConfig:
    """Where the upstream is and how to call it."""

    #: The upstream's base URL with its version prefix, e.g. ``https://api.anthropic.com/v1``.
    upstream_url: str
    #: The upstream's protocol: one of ``mapping.UPSTREAM_PROTOCOLS``.
    upstream_protocol: sw.TargetName
    #: The upstream's API key (clients' keys are never forwarded).
    upstream_api_key: str | None = None
    #: Call the upstream with this model instead of the one the client named.
    model: str | None = None
    #: Seconds to connect to the upstream, and the longest silence while streaming.
    connect_timeout: float = 10.0
    read_timeout: float = 300.0

    def __post_init__(self) -> None:
        if self.upstream_protocol not in UPSTREAM_PROTOCOLS:
            known = ", ".join(UPSTREAM_PROTOCOLS)
            raise ValueError(f"upstream protocol {self.upstream_protocol!r}: one of {known}")


def _route(path: str) -> tuple[sw.TargetName, str | None] | None:
    """(client protocol, model named in the path) for a request path, or None."""
    protocol = _ROUTES.get(path.rstrip("/"))
    if protocol is not None:
        return protocol, None
    if path.startswith(_GEMINI_PREFIX) and path.endswith(_GEMINI_SUFFIX):
        model = path[len(_GEMINI_PREFIX) : -len(_GEMINI_SUFFIX)]
        return ("gemini", model) if model else None
    return None


def _stream_headers(content_type: str) -> list[tuple[bytes, bytes]]:
    return [
        (b"content-type", content_type.encode("latin-1")),
        (b"cache-control", b"no-cache, no-transform"),
        (b"x-accel-buffering", b"no"),
    ]


#: The upstream's request id goes back to the client under this header: what
#: the provider's support asks for when a client reports a failed request.
UPSTREAM_ID_HEADER = b"x-upstream-request-id"
#: Where the providers put theirs (OpenAI, Anthropic, AWS).
_PROVIDER_ID_HEADERS = ("x-request-id", "request-id", "x-amzn-requestid")


def _upstream_id(response: httpx.Response) -> list[tuple[bytes, bytes]]:
    """The upstream's request id as a response header for the client (none when
    the upstream sent none, or one that is not printable ASCII)."""
    rid = next((response.headers[n] for n in _PROVIDER_ID_HEADERS if n in response.headers), None)
    if rid is None or not rid.isascii() or not rid.isprintable() or len(rid) > 200:
        return []
    return [(UPSTREAM_ID_HEADER, rid.encode("ascii"))]


class _ClientGone(Exception):
    """The client disconnected while the gateway was writing to it."""


class Gateway:
    """The ASGI application; see the module docstring."""

    def __init__(self, config: GatewayConfig, *, http_client: httpx.AsyncClient | None = None):
        self.config = config
        self._client = http_client
        self._owns_client = http_client is None

    # --- ASGI entry ----------------------------------------------------------

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "lifespan":
            await self._lifespan(receive, send)
        elif scope["type"] == "http":
            await self._http(scope, receive, send)

    async def _lifespan(self, receive: Receive, send: Send) -> None:
        while True:
            message = await receive()
            if message["type"] == "lifespan.startup":
                self._http_client()
                await send({"type": "lifespan.startup.complete"})
            elif message["type"] == "lifespan.shutdown":
                await self.aclose()
                await send({"type": "lifespan.shutdown.complete"})
                return

    async def aclose(self) -> None:
        """Closes the upstream client if the gateway made it."""
        if self._owns_client and self._client is not None:
            await self._client.aclose()
            self._client = None

    def _http_client(self) -> httpx.AsyncClient:
        if self._client is None:
            timeout = httpx.Timeout(self.config.connect_timeout, read=self.config.read_timeout)
            self._client = httpx.AsyncClient(timeout=timeout)
        return self._client

    # --- one request -----------------------------------------------------------

    async def _http(self, scope: Scope, receive: Receive, send: Send) -> None:
        route = _route(scope["path"])
        if route is None:
            await _send_error(send, "openai-chat", 404, f"no route for {scope['path']}")
            return
        protocol, path_model = route
        if scope["method"] != "POST":
            await _send_error(send, protocol, 405, "use POST")
            return
        try:
            body = await _read_body(receive)
            prompt = parse_request(protocol, body, path_model)
        except RequestError as exc:
            await _send_error(send, protocol, exc.status, str(exc))
            return
        if self.config.model:
            prompt = replace(prompt, model=self.config.model)
        relay = asyncio.ensure_future(self._relay(protocol, prompt, send))
        watcher = asyncio.ensure_future(_wait_for_disconnect(receive))
        try:
            await asyncio.wait({relay, watcher}, return_when=asyncio.FIRST_COMPLETED)
        finally:
            for task in (relay, watcher):
                if not task.done():
                    task.cancel()
            await asyncio.gather(relay, watcher, return_exceptions=True)
        if not relay.cancelled() and relay.exception() is not None:
            raise relay.exception()  # type: ignore[misc]

    async def _relay(self, client_protocol: sw.TargetName, prompt: Prompt, send: Send) -> None:
        config = self.config
        url, headers, payload = build_upstream_request(
            config.upstream_protocol, prompt, config.upstream_url, config.upstream_api_key
        )
        client = self._http_client()
        try:
            response = await client.send(
                client.build_request("POST", url, headers=headers, json=payload), stream=True
            )
        except httpx.TransportError as exc:
            log.warning("upstream %s unreachable: %r", url, exc)
            await _send_error(send, client_protocol, 502, f"upstream unreachable: {exc!r}")
            return
        try:
            if not 200 <= response.status_code < 300:
                await self._relay_error(client_protocol, response, send)
                return
            await self._relay_stream(client_protocol, response, send)
        except _ClientGone:
            log.info("client disconnected; upstream closed")
        finally:
            # Shielded: a disconnect noticed while closing must not leave the
            # upstream connection half closed.
            await asyncio.shield(response.aclose())

    async def _relay_stream(
        self, client_protocol: sw.TargetName, response: httpx.Response, send: Send
    ) -> None:
        decoder = sw.stream(self.config.upstream_protocol)
        # ``source``: the encoder converts usage figures between the two
        # protocols' conventions (whether input counts cached tokens).
        encoder = sw.encoder(client_protocol, source=self.config.upstream_protocol)
        await _send(
            send,
            {
                "type": "http.response.start",
                "status": 200,
                "headers": _stream_headers(encoder.content_type) + _upstream_id(response),
            },
        )
        try:
            async for chunk in response.aiter_bytes():
                out = encoder.feed(decoder.feed(chunk))
                if out:
                    await _send(
                        send, {"type": "http.response.body", "body": out, "more_body": True}
                    )
            tail = decoder.close()
        except httpx.TransportError as exc:
            # The upstream broke off: the client is told so with an error in its
            # own protocol (an end without the terminal signal is one a client
            # may take for a whole answer; the acceptance kit's retry-after-text
            # case found that).
            log.warning("upstream stream broke off: %r", exc)
            decoder.close()
            tail = [
                sw.ErrorReceived(
                    phase="transport",
                    type="upstream_disconnected",
                    code=None,
                    message="the upstream's stream broke off before its end",
                    retryable=True,
                ),
                sw.MessageCompleted(status="error", stop_reason=None, provider_stop_reason=None),
            ]
        out = encoder.feed(tail) + encoder.close()
        await _send(send, {"type": "http.response.body", "body": out, "more_body": False})
        result = decoder.result
        log.info(
            "%s -> %s: %s (%s); downgrades: %s",
            self.config.upstream_protocol,
            client_protocol,
            result.status,
            result.stop_reason,
            list(encoder.downgrades) or "none",
        )

    async def _relay_error(
        self, client_protocol: sw.TargetName, response: httpx.Response, send: Send
    ) -> None:
        raw = bytearray()
        async for chunk in response.aiter_bytes():
            raw += chunk
            if len(raw) >= MAX_ERROR_BYTES:
                break
        message = _error_message(bytes(raw)) or f"upstream answered HTTP {response.status_code}"
        extra = _upstream_id(response)
        retry_after = response.headers.get("retry-after")
        if retry_after:
            extra.append((b"retry-after", retry_after.encode("latin-1")))
        await _send_error(send, client_protocol, response.status_code, message, extra)


def _error_message(body: bytes) -> str | None:
    """The message of a provider's JSON error body (``error.message`` or ``message``)."""
    try:
        data = json.loads(body)
    except (UnicodeDecodeError, json.JSONDecodeError):
        return None
    if isinstance(data, list) and data:  # gemini may wrap the error in a list
        data = data[0]
    if not isinstance(data, dict):
        return None
    error = data.get("error")
    if isinstance(error, dict) and isinstance(error.get("message"), str):
        return str(error["message"])
    return data["message"] if isinstance(data.get("message"), str) else None


async def _read_body(receive: Receive) -> bytes:
    body = bytearray()
    while True:
        message = await receive()
        if message["type"] == "http.disconnect":
            raise RequestError("the client went away", 499)
        body += message.get("body", b"")
        if len(body) > MAX_REQUEST_BYTES:
            raise RequestError("request body too large", 413)
        if not message.get("more_body", False):
            return bytes(body)


async def _wait_for_disconnect(receive: Receive) -> None:
    while (await receive())["type"] != "http.disconnect":
        pass


async def _send(send: Send, message: Message) -> None:
    try:
        await send(message)
    except OSError as exc:  # the ASGI server's "client disconnected"
        raise _ClientGone from exc


async def _send_error(
    send: Send,
    protocol: str,
    status: int,
    message: str,
    extra: list[tuple[bytes, bytes]] | None = None,
) -> None:
    body = error_body(protocol, status, message)
    headers = [(b"content-type", b"application/json"), (b"content-length", b"%d" % len(body))]
    try:
        await send(
            {"type": "http.response.start", "status": status, "headers": headers + (extra or [])}
        )
        await send({"type": "http.response.body", "body": body})
    except OSError:
        pass


def create_app(config: GatewayConfig, *, http_client: httpx.AsyncClient | None = None) -> Gateway:
    """The gateway for ``config`` (``http_client``: the upstream client to use, else its own)."""
    for protocol in CLIENT_PROTOCOLS:
        if protocol not in sw.known_encoders():
            raise RuntimeError(f"streamwire has no {protocol!r} encoder")
    return Gateway(config, http_client=http_client)


def app_from_env() -> Gateway:
    """The gateway configured by ``GATEWAY_UPSTREAM_URL``, ``GATEWAY_UPSTREAM_PROTOCOL``,
    ``GATEWAY_UPSTREAM_API_KEY`` and ``GATEWAY_UPSTREAM_MODEL`` (for ``uvicorn --factory``)."""
    try:
        url = os.environ["GATEWAY_UPSTREAM_URL"]
        protocol = os.environ["GATEWAY_UPSTREAM_PROTOCOL"]
    except KeyError as exc:
        raise SystemExit(f"set {exc.args[0]} (see examples/gateway/README.md)") from None
    config = GatewayConfig(
        upstream_url=url,
        # GatewayConfig refuses a name outside UPSTREAM_PROTOCOLS.
        upstream_protocol=cast(sw.TargetName, protocol),
        upstream_api_key=os.environ.get("GATEWAY_UPSTREAM_API_KEY") or None,
        model=os.environ.get("GATEWAY_UPSTREAM_MODEL") or None,
    )
    return create_app(config)
