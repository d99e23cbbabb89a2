"""``AsyncEventIterator``: unified events from an asyncio HTTP response.

The async twin of ``EventIterator`` (``_sync.py``), over an async *source*
(``_httpx.py`` for ``httpx.AsyncClient`` responses, ``_aiohttp.py`` for
``aiohttp.ClientResponse``). Reads happen only when the caller awaits the
next event; the event loop is never blocked (parsing a chunk is the only
synchronous work, bounded by the chunk size).

Ending early closes the upstream response at once: ``aclose()``, the
``async with`` block's exit, or cancelling the task that awaits an event
(the read is interrupted, the response closed, the result ``cancelled``, and
the ``CancelledError`` propagates). Dropping the iterator closes it too:
synchronously for aiohttp, through a task scheduled on the running loop for
httpx. Timeouts cancel the pending read at the deadline (``asyncio.timeout``
on Python 3.11+, ``asyncio.wait_for`` before), close the response, and end
the stream ``incomplete`` with the timeout's warning. As in ``_sync.py``, an
iterator neither closed nor dropped keeps its response open until the
response's owner closes it (the result then reads ``cancelled``), and once
the result is decided the iterator gives the rest of the body
``DRAIN_SECONDS`` to end, then closes the response and ends.
"""

from __future__ import annotations

import asyncio
import sys
from types import TracebackType
from typing import Protocol

from ..events import Event
from ._driver import DRAIN_BYTES, DRAIN_SECONDS, DrivenIterator, Driver, EndKind, TransportFailure
from ._wire import MAX_ERROR_BODY, Headers

__all__ = ["AsyncEventIterator", "AsyncSource"]


class AsyncSource(Protocol):
    """An asyncio response body, as the iterator needs it."""

    status: int
    headers: Headers

    async def read(self) -> bytes:
        """The next chunk as it arrived (b"" at the end); raises ``TransportFailure``."""

    async def aclose(self) -> None:
        """Closes the response (and its connection, if the body was not read to the end)."""

    def close_now(self) -> bool:
        """Closes without awaiting, if the library can; False if it cannot."""

    @property
    def closed_elsewhere(self) -> bool:
        """True if the response was closed by its owner, not by the iterator."""


#: Close tasks scheduled by finalizers, referenced until done.
_CLOSING: set[asyncio.Task[None]] = set()


class _Expired(Exception):
    """Internal: a read passed its deadline."""


async def _read_until(source: AsyncSource, remaining: float | None) -> bytes:
    if remaining is None:
        return await source.read()
    if sys.version_info >= (3, 11):
        try:
            async with asyncio.timeout(remaining):
                return await source.read()
        except TimeoutError:
            raise _Expired from None
    try:  # pragma: no cover - Python 3.10
        return await asyncio.wait_for(source.read(), remaining)
    except asyncio.TimeoutError:  # pragma: no cover
        raise _Expired from None


class AsyncEventIterator(DrivenIterator):
    """Iterates the unified events of one response asynchronously; ``result`` says how it ended."""

    _source: AsyncSource

    def __init__(self, source: AsyncSource, driver: Driver) -> None:
        super().__init__(driver, source)

    # --- public ------------------------------------------------------------

    def __aiter__(self) -> AsyncEventIterator:
        return self

    async def __anext__(self) -> Event:
        pending = self._pending
        if pending:
            return pending.popleft()
        waiting_since = self._driver.timing.now()
        while not pending:
            if self._done:
                raise StopAsyncIteration
            try:
                await self._step(waiting_since)
            except BaseException:
                # Task cancellation (or a bug): close at once, then let it propagate.
                await self._abort()
                raise
        return pending.popleft()

    async def aclose(self) -> None:
        """Stops reading: closes the response at once; the result is ``cancelled``
        unless the stream had already ended. Idempotent."""
        self._pending.clear()
        self._stop()
        await self._release()

    async def __aenter__(self) -> AsyncEventIterator:
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.aclose()

    def __del__(self) -> None:
        if getattr(self, "_source_closed", True):
            return
        try:
            self._stop()
            if self._source.close_now():
                self._source_closed = True
                return
            loop = asyncio.get_running_loop()
        except Exception:
            return
        self._source_closed = True
        task = loop.create_task(self._source.aclose())
        _CLOSING.add(task)  # keep a reference until it ran
        task.add_done_callback(_CLOSING.discard)

    # --- reading -----------------------------------------------------------

    async def _step(self, waiting_since: float) -> None:
        driver = self._driver
        if not self._started:
            self._started = True
            if driver.on_headers(self._source.status, self._source.headers) == "error_body":
                await self._read_error_body()
            return
        if driver.decided:
            await self._finish("eof" if await self._drain() else "decided")
            return
        deadline = driver.deadline(waiting_since)
        remaining = None if deadline is None else deadline[0] - driver.clock()
        if deadline is not None and remaining is not None and remaining <= 0:
            await self._finish(deadline[1])
            return
        try:
            chunk = await _read_until(self._source, remaining)
        except _Expired:
            assert deadline is not None
            await self._finish(deadline[1])
            return
        except TransportFailure as exc:
            await self._finish("transport_error", str(exc))
            return
        if chunk:
            self._pending.extend(driver.feed(chunk))
            return
        await self._finish("eof")

    async def _drain(self) -> bool:
        """Reads what is left of a decided body for at most ``DRAIN_SECONDS``
        and ``DRAIN_BYTES``: a body that ends in time leaves its connection
        reusable. What it brings is fed on (the adapter only notes it). True
        if the body ended."""
        clock = self._driver.clock
        deadline = clock() + DRAIN_SECONDS
        left = DRAIN_BYTES
        try:
            while left > 0:
                chunk = await _read_until(self._source, deadline - clock())
                if not chunk:
                    return True
                left -= len(chunk)
                self._pending.extend(self._driver.feed(chunk))
        except (_Expired, TransportFailure):
            pass  # too slow, or the peer left: closed either way
        return False

    async def _finish(self, kind: EndKind, detail: str | None = None) -> None:
        self._end(kind, detail)
        await self._release()

    async def _read_error_body(self) -> None:
        body = bytearray()
        try:
            while len(body) < MAX_ERROR_BODY:
                chunk = await self._source.read()
                if not chunk:
                    break
                body += chunk
        except TransportFailure:
            pass  # what arrived is the message; the rest is lost either way
        self._end_with_error_body(bytes(body))
        await self._release()

    async def _abort(self) -> None:
        self._stop()
        if not self._source_closed:
            self._source_closed = True
            if not self._source.close_now():
                await self._source.aclose()

    async def _release(self) -> None:
        if not self._source_closed:
            self._source_closed = True
            await self._source.aclose()
