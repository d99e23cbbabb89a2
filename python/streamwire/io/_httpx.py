"""httpx responses as sources of the event iterators (httpx >= 0.27; checked 2026-11-29).

The body is read with ``Response.iter_bytes()`` / ``aiter_bytes()`` without a
``chunk_size``: each chunk is what one socket read returned (httpcore reads at
most 64 KiB at a time), decoded from any ``Content-Encoding``. A
``chunk_size`` would make httpx hold data back until that many bytes arrived,
which delays events; none is ever asked for. httpx's transport errors
(``httpx.TransportError``: a reset, a peer that closed mid-body, a read
timeout of the client) and ``httpx.DecodingError`` become ``TransportFailure``.

Closing an unfinished response closes its HTTP/1.1 connection (httpcore does
not return a connection with an unread body to the pool), which the server
sees as a disconnect. To interrupt a blocked read (timeouts, cancellation)
the source shuts the connection's socket down: the socket is reachable
through the response's ``network_stream`` extension on HTTP/1.1 only, so on
HTTP/2 (a connection shared by other requests) nothing is shut down.
"""

from __future__ import annotations

import socket
from collections.abc import AsyncIterator, Iterator
from typing import Any

import httpx

from ._driver import TransportFailure
from ._wire import to_headers

__all__ = ["HttpxAsyncSource", "HttpxSource", "is_async_response"]

_FAILURES = (httpx.TransportError, httpx.DecodingError)


def is_async_response(response: httpx.Response) -> bool:
    """True for a response of ``httpx.AsyncClient`` (an async byte stream)."""
    return isinstance(response.stream, httpx.AsyncByteStream) and not isinstance(
        response.stream, httpx.SyncByteStream
    )


def _shutdown(response: httpx.Response) -> bool:
    stream: Any = response.extensions.get("network_stream")
    if stream is None:
        return False
    try:
        sock = stream.get_extra_info("socket")
    except Exception:
        return False
    if not isinstance(sock, socket.socket):
        return False
    try:
        sock.shutdown(socket.SHUT_RDWR)
    except OSError:
        pass  # already closed
    return True


class HttpxSource:
    """A response of ``httpx.Client.stream(...)``."""

    def __init__(self, response: httpx.Response) -> None:
        self.response = response
        self.status = response.status_code
        self.headers = to_headers(response.headers.raw)
        self._chunks: Iterator[bytes] | None = None

    def read(self) -> bytes:
        if self._chunks is None:
            self._chunks = self.response.iter_bytes()
        try:
            return next(self._chunks, b"")
        except _FAILURES as exc:
            raise TransportFailure(f"{type(exc).__name__}: {exc}") from exc

    def close(self) -> None:
        self.response.close()

    def interrupt(self) -> bool:
        return _shutdown(self.response)


class HttpxAsyncSource:
    """A response of ``httpx.AsyncClient.stream(...)``."""

    def __init__(self, response: httpx.Response) -> None:
        self.response = response
        self.status = response.status_code
        self.headers = to_headers(response.headers.raw)
        self._chunks: AsyncIterator[bytes] | None = None

    async def read(self) -> bytes:
        if self._chunks is None:
            self._chunks = self.response.aiter_bytes()
        try:
            return await anext(self._chunks, b"")
        except _FAILURES as exc:
            raise TransportFailure(f"{type(exc).__name__}: {exc}") from exc

    async def aclose(self) -> None:
        await self.response.aclose()

    def close_now(self) -> bool:
        # Drop the connection at once; aclose() still releases httpx's resources.
        _shutdown(self.response)
        return False
