"""httpx and httpx2 responses as sources of the event iterators (checked 2026-12-01).

Versions: httpx >= 0.27, httpx2 >= 2.

httpx2 is the continuation of httpx (pydantic/httpx2; the current openai
and anthropic SDKs are built on it) with the same response interface, so one
source class serves both: it is given the library's module, and takes the
exception classes from it. Neither library is imported here: the module
comes from the response the caller passed in (``streamwire.io`` recognizes
it by its class), so ``import streamwire`` imports neither.

The body is read with ``Response.iter_bytes()`` / ``aiter_bytes()`` without a
``chunk_size``: each chunk is what one socket read returned (httpcore reads at
most 64 KiB at a time), decoded from any ``Content-Encoding``. A
``chunk_size`` would make httpx hold data back until that many bytes arrived,
which delays events; none is ever asked for. The library's transport errors
(``TransportError``: a reset, a peer that closed mid-body, a read timeout of
the client) and ``DecodingError`` become ``TransportFailure``.

Closing an unfinished response closes its HTTP/1.1 connection (httpcore does
not return a connection with an unread body to the pool), which the server
sees as a disconnect. To interrupt a blocked read (timeouts, cancellation)
the source shuts the connection's socket down, reached through the
response's ``network_stream`` extension. Only on HTTP/1.1: an HTTP/2
connection carries other requests' streams too (httpcore exposes its
``network_stream`` as well), so there nothing is shut down.
"""

from __future__ import annotations

import socket
from collections.abc import AsyncIterator, Iterator
from types import ModuleType
from typing import Any

from ._driver import TransportFailure
from ._wire import to_headers

__all__ = ["HttpxAsyncSource", "HttpxSource", "is_async_response"]


def _failures(library: ModuleType) -> tuple[type[BaseException], ...]:
    return (library.TransportError, library.DecodingError)


def is_async_response(response: Any, library: ModuleType) -> bool:
    """True for a response of the library's ``AsyncClient`` (an async byte stream)."""
    return isinstance(response.stream, library.AsyncByteStream) and not isinstance(
        response.stream, library.SyncByteStream
    )


def _socket(response: Any) -> socket.socket | None:
    """The socket of the response's own HTTP/1.1 connection, or None."""
    if response.extensions.get("http_version") != b"HTTP/1.1":
        return None
    stream: Any = response.extensions.get("network_stream")
    if stream is None:
        return None
    try:
        sock = stream.get_extra_info("socket")
    except Exception:
        return None
    return sock if isinstance(sock, socket.socket) else None


def _shutdown(response: Any) -> bool:
    sock = _socket(response)
    if sock is None:
        return False
    try:
        sock.shutdown(socket.SHUT_RDWR)
    except OSError:
        pass  # already closed
    return True


class HttpxSource:
    """A response of ``Client.stream(...)`` (httpx or httpx2)."""

    def __init__(self, response: Any, library: ModuleType) -> None:
        self.response = response
        self.status: int = response.status_code
        self.headers = to_headers(response.headers.raw)
        self._failures = _failures(library)
        self._chunks: Iterator[bytes] | None = None

    def read(self) -> bytes:
        if self._chunks is None:
            self._chunks = self.response.iter_bytes()
        try:
            return next(self._chunks, b"")
        except self._failures as exc:
            raise TransportFailure(f"{type(exc).__name__}: {exc}") from exc

    def close(self) -> None:
        self.response.close()

    def interrupt(self) -> bool:
        return _shutdown(self.response)

    @property
    def interruptible(self) -> bool:
        return _socket(self.response) is not None

    @property
    def closed_elsewhere(self) -> bool:
        return bool(self.response.is_closed)


class HttpxAsyncSource:
    """A response of ``AsyncClient.stream(...)`` (httpx or httpx2)."""

    def __init__(self, response: Any, library: ModuleType) -> None:
        self.response = response
        self.status: int = response.status_code
        self.headers = to_headers(response.headers.raw)
        self._failures = _failures(library)
        self._chunks: AsyncIterator[bytes] | None = None

    async def read(self) -> bytes:
        if self._chunks is None:
            self._chunks = self.response.aiter_bytes()
        try:
            return await anext(self._chunks, b"")
        except self._failures as exc:
            raise TransportFailure(f"{type(exc).__name__}: {exc}") from exc

    async def aclose(self) -> None:
        await self.response.aclose()

    def close_now(self) -> bool:
        # Drop the connection at once; aclose() still releases httpx's resources.
        _shutdown(self.response)
        return False

    @property
    def closed_elsewhere(self) -> bool:
        return bool(self.response.is_closed)
