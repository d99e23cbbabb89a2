"""aiohttp responses as sources of the async event iterator (aiohttp >= 3.9; checked 2026-11-29).

The body is read with ``response.content.read(n)``, which returns as soon as
any data is buffered, at most ``n`` bytes (``CHUNK_SIZE``, 64 KiB): no
waiting for a full chunk, no read-ahead beyond aiohttp's own flow-control
buffer (it pauses the socket above twice its ``read_bufsize``). aiohttp
decompresses a ``Content-Encoding`` itself. Its client errors
(``aiohttp.ClientError``: ``ClientPayloadError`` for a body cut short,
``ServerDisconnectedError``, its own read timeouts) become
``TransportFailure``.

``ClientResponse.close()`` is synchronous and drops the connection at once
(a response with an unread body is never returned to the pool), so
cancellation closes without awaiting anything.
"""

from __future__ import annotations

import aiohttp

from ._driver import TransportFailure
from ._wire import to_headers

__all__ = ["CHUNK_SIZE", "AiohttpSource"]

#: The most bytes one read returns.
CHUNK_SIZE = 64 * 1024


class AiohttpSource:
    """An ``aiohttp.ClientResponse`` (from ``session.get/post/request``)."""

    def __init__(self, response: aiohttp.ClientResponse, chunk_size: int = CHUNK_SIZE) -> None:
        self.response = response
        self.status = response.status
        self.headers = to_headers(response.raw_headers)
        self._chunk_size = chunk_size

    async def read(self) -> bytes:
        try:
            return await self.response.content.read(self._chunk_size)
        except aiohttp.ClientError as exc:
            raise TransportFailure(f"{type(exc).__name__}: {exc}") from exc

    async def aclose(self) -> None:
        if self.response.content.at_eof():
            self.response.release()  # read to the end: the connection may be reused
        else:
            self.response.close()

    def close_now(self) -> bool:
        self.response.close()
        return True

    @property
    def closed_elsewhere(self) -> bool:
        # aiohttp marks a response closed at the end of its body too; only a
        # close before the end (the owner's release() or close()) counts.
        return bool(self.response.closed) and not self.response.content.is_eof()
