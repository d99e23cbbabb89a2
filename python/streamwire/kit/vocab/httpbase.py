"""What the kit's HTTP/1.1 client (``httpio``) and HTTP/2 client (``h2io``) share.

The errors a connection raises, the one way every limit is kept
(``within``), and ``BodySource``, where a response's body comes from: the two
clients differ only there.
"""

from __future__ import annotations

import asyncio
import sys
from collections.abc import AsyncIterator, Awaitable
from typing import TypeVar

__all__ = [
    "READ_SIZE",
    "BodySource",
    "CertificateError",
    "Http2Only",
    "Http2Unsupported",
    "HttpTimeout",
    "SetupError",
    "TransportError",
    "within",
]

#: The most one read takes from a connection.
READ_SIZE = 64 * 1024

_T = TypeVar("_T")


async def within(awaitable: Awaitable[_T], seconds: float | None) -> _T:
    """``await awaitable``, given up after ``seconds`` (None: no limit) with
    ``asyncio.TimeoutError``.

    Every limit in the kit goes through here, not through ``asyncio.wait_for``:
    on Python 3.11 ``wait_for`` returns the awaitable's result when it completes
    just as the awaiting task is cancelled, and the cancel is lost (the load's
    sampler polled the mock for ever that way). ``asyncio.timeout`` (3.11+)
    never loses one; on 3.10, which has no ``asyncio.timeout``, ``wait_for``.
    """
    if sys.version_info >= (3, 11):
        async with asyncio.timeout(seconds):
            return await awaitable
    return await asyncio.wait_for(awaitable, seconds)  # pragma: no cover - 3.10


class TransportError(Exception):
    """The connection failed: refused, reset, closed early, or spoke no HTTP."""


class SetupError(TransportError):
    """The client cannot read the server the way it was asked to: a problem of
    the client's setup (its trust, the HTTP version asked for), not of the
    server's answers. The kit ends the run on it (exit 2), with no verdict."""


class CertificateError(SetupError):
    """The server's TLS certificate cannot be verified: a problem of the
    client's trust, not of the server's answers."""


class Http2Unsupported(SetupError):
    """HTTP/2 was asked for and the server does not speak it (h2c over http)."""


class Http2Only(SetupError):
    """HTTP/1.1 was asked for and the server speaks HTTP/2 alone: it answered
    with HTTP/2 frames, or its TLS chose h2 and refused http/1.1."""


class HttpTimeout(TransportError):
    """A read or a connect took longer than its timeout."""


class BodySource:
    """Where a response's body comes from: a connection speaking HTTP/1.1 or
    HTTP/2 (``h2io``)."""

    def pieces(self) -> AsyncIterator[tuple[float, bytes]]:
        """Body bytes as sent, as they arrive: ``(time.time() of arrival, data)``."""
        raise NotImplementedError

    def close(self) -> None:
        """The client gives up on the response at once (a cancel)."""
        raise NotImplementedError
