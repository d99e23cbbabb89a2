"""``EventIterator``: unified events from a blocking HTTP response (or a replayed recording).

The iterator pulls one body chunk at a time from a *source* (``_httpx.py``
adapts an httpx response; ``replay.py`` a recording), feeds it to the
``Driver`` and hands out the events. It reads nothing ahead: the next chunk is
read only when the caller asks for an event and none is pending.

Ending early closes the upstream response at once: ``close()``, the ``with``
block's exit, or dropping the iterator (CPython finalizes it as soon as the
last reference goes, e.g. after ``break`` in ``for e in sw.iter_events(...)``,
and the garbage collector finalizes one caught in a reference cycle). The
result is then ``cancelled`` unless the stream had already ended. An
iterator that is neither closed nor dropped (``break`` while a name still
holds it) cannot know that its reader left: its response stays open and its
result ``in_progress`` until it is closed, or until the response's owner
closes the response (the client's ``with`` block), after which the result
reads ``cancelled``.

Once the result is decided (``Driver.decided``) the iterator reads no further
events: it gives the rest of the body ``DRAIN_SECONDS`` (through the
watchdog below) to end, so the connection can be reused, then closes the
response and ends.

Timeouts: a blocking read cannot be abandoned, so a watchdog thread (started
only when a timeout is set) interrupts it at the deadline: the source shuts
the connection's socket down (httpx over HTTP/1.1), the read returns, and the
stream ends ``incomplete`` with the timeout's warning. Where the socket is out
of reach (HTTP/2, a custom transport) the deadline is checked between chunks
only; keep the client's own read timeout as a backstop there.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from types import TracebackType
from typing import Literal, Protocol

from ..events import Event
from ._driver import (
    DRAIN_BYTES,
    DRAIN_SECONDS,
    DrivenIterator,
    Driver,
    EndKind,
    TimeoutKind,
    TransportFailure,
)
from ._wire import MAX_ERROR_BODY, Headers

__all__ = ["EventIterator", "SyncSource"]

#: What a watchdog's deadline is for: a timeout, or the end of a drain.
Deadline = TimeoutKind | Literal["drain"]


class SyncSource(Protocol):
    """A blocking response body, as the iterator needs it."""

    status: int
    headers: Headers

    def read(self) -> bytes:
        """The next chunk as it arrived (b"" at the end); raises ``TransportFailure``."""

    def close(self) -> None:
        """Closes the response (and its connection, if the body was not read to the end)."""

    def interrupt(self) -> bool:
        """Unblocks a read in progress from another thread; False if it cannot."""

    @property
    def interruptible(self) -> bool:
        """True if ``interrupt`` can unblock a read (e.g. HTTP/1.1 with its socket in reach)."""

    @property
    def closed_elsewhere(self) -> bool:
        """True if the response was closed by its owner, not by the iterator."""


class _Watchdog:
    """A thread that calls ``interrupt`` when the armed deadline passes."""

    def __init__(self, clock: Callable[[], float], interrupt: Callable[[], bool]) -> None:
        self._clock = clock
        self._interrupt = interrupt
        self._cond = threading.Condition()
        self._deadline: tuple[float, Deadline] | None = None
        self._stopped = False
        self.fired: Deadline | None = None
        self._thread = threading.Thread(target=self._run, name="streamwire-watchdog", daemon=True)
        self._thread.start()

    def arm(self, deadline: tuple[float, Deadline]) -> None:
        with self._cond:
            self._deadline = deadline
            self._cond.notify()

    def disarm(self) -> None:
        with self._cond:
            self._deadline = None

    def stop(self) -> None:
        with self._cond:
            self._stopped = True
            self._cond.notify()

    def _run(self) -> None:
        with self._cond:
            while not self._stopped:
                deadline = self._deadline
                if deadline is None:
                    self._cond.wait()
                    continue
                remaining = deadline[0] - self._clock()
                if remaining > 0:
                    self._cond.wait(remaining)
                    continue
                self.fired = deadline[1]
                self._deadline = None
                self._interrupt()


class EventIterator(DrivenIterator):
    """Iterates the unified events of one response; ``result`` says how it ended."""

    _source: SyncSource

    def __init__(self, source: SyncSource, driver: Driver) -> None:
        super().__init__(driver, source)
        self._watchdog: _Watchdog | None = None

    # --- public ------------------------------------------------------------

    def __iter__(self) -> EventIterator:
        return self

    def __next__(self) -> Event:
        pending = self._pending
        if pending:
            return pending.popleft()
        waiting_since = self._driver.timing.now()
        while not pending:
            if self._done:
                raise StopIteration
            try:
                self._step(waiting_since)
            except BaseException:
                # KeyboardInterrupt, a bug: nothing is left half-open.
                self._abort()
                raise
        return pending.popleft()

    def close(self) -> None:
        """Stops reading: closes the response at once; the result is ``cancelled``
        unless the stream had already ended. Idempotent."""
        self._pending.clear()
        self._stop()
        self._release()

    def __enter__(self) -> EventIterator:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    def __del__(self) -> None:
        if not getattr(self, "_source_closed", True):
            try:
                self.close()
            except Exception:
                pass

    # --- reading -----------------------------------------------------------

    def _step(self, waiting_since: float) -> None:
        driver = self._driver
        if not self._started:
            self._started = True
            if driver.on_headers(self._source.status, self._source.headers) == "error_body":
                self._read_error_body()
            return
        if driver.decided:
            self._finish("eof" if self._drain() else "decided")
            return
        deadline = driver.deadline(waiting_since)
        if deadline is not None and driver.clock() >= deadline[0]:
            self._finish(deadline[1])
            return
        watchdog = self._arm(deadline)
        try:
            chunk = self._source.read()
        except TransportFailure as exc:
            if watchdog is not None and watchdog.fired is not None:
                self._finish(watchdog.fired)  # type: ignore[arg-type]
            else:
                self._finish("transport_error", str(exc))
            return
        finally:
            if watchdog is not None:
                watchdog.disarm()
        if chunk:
            self._pending.extend(driver.feed(chunk))
        if watchdog is not None and watchdog.fired is not None:
            self._finish(watchdog.fired)  # type: ignore[arg-type]
        elif not chunk:
            self._finish("eof")

    def _drain(self) -> bool:
        """Reads what is left of a decided body for at most ``DRAIN_SECONDS``
        and ``DRAIN_BYTES``: a body that ends in time leaves its connection
        reusable. What it brings is fed on (the adapter only notes it: the
        result is decided). True if the body ended. Skipped (False) where a
        read cannot be interrupted."""
        source = self._source
        if not source.interruptible:
            return False
        watchdog = self._arm((self._driver.clock() + DRAIN_SECONDS, "drain"))
        assert watchdog is not None
        left = DRAIN_BYTES
        try:
            while left > 0 and watchdog.fired is None:
                chunk = source.read()
                if not chunk:
                    return True
                left -= len(chunk)
                self._pending.extend(self._driver.feed(chunk))
        except TransportFailure:
            pass  # interrupted at the deadline, or the peer left: closed either way
        finally:
            watchdog.disarm()
        return False

    def _arm(self, deadline: tuple[float, Deadline] | None) -> _Watchdog | None:
        if deadline is None:
            return None
        if self._watchdog is None:
            self._watchdog = _Watchdog(self._driver.clock, self._source.interrupt)
        self._watchdog.arm(deadline)
        return self._watchdog

    def _finish(self, kind: EndKind, detail: str | None = None) -> None:
        self._end(kind, detail)
        self._release()

    def _read_error_body(self) -> None:
        body = bytearray()
        try:
            while len(body) < MAX_ERROR_BODY:
                chunk = self._source.read()
                if not chunk:
                    break
                body += chunk
        except TransportFailure:
            pass  # what arrived is the message; the rest is lost either way
        self._end_with_error_body(bytes(body))
        self._release()

    def _abort(self) -> None:
        self._stop()
        self._release()

    def _release(self) -> None:
        if self._watchdog is not None:
            self._watchdog.stop()
            self._watchdog = None
        if not self._source_closed:
            self._source_closed = True
            self._source.close()
