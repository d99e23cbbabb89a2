"""A real HTTP server on 127.0.0.1 that serves stream bodies with controlled chunking and timing.

Built on ``aiohttp.web`` (aiohttp 3.9+): a well-kept asyncio server that the
client tests need anyway (aiohttp is one of the two client libraries under
test), so the test server adds no dependency. It writes each planned chunk
with its own ``write()`` (one HTTP/1.1 chunk, TCP_NODELAY on), sleeps between
chunks as told, can cut the connection after N body bytes, and, with
``handler_cancellation=True``, has its handler cancelled the moment the
client disconnects, which is when a ``Visit`` records ``disconnected``.

The server runs its own event loop in a daemon thread, started once per test
session (``shared_server()``) on a free port; tests register a ``Scenario``
and get its URL. Times are ``time.monotonic()``, the clock the client side
uses too, so the tests compare them directly.
"""

from __future__ import annotations

import asyncio
import itertools
import threading
import time
from dataclasses import dataclass, field

from aiohttp import web

__all__ = ["Scenario", "StreamServer", "Visit", "shared_server"]


@dataclass
class Scenario:
    """What one URL answers."""

    body: bytes = b""
    status: int = 200
    content_type: str | None = "text/event-stream"
    headers: dict[str, str] = field(default_factory=dict)
    #: The body's chunks (each written separately); default: the body whole.
    chunks: list[bytes] | None = None
    #: Seconds before the first body chunk (after the headers).
    first_delay: float = 0.0
    #: Seconds between chunks.
    delay: float = 0.0
    #: Abort the connection (no proper end of the body) after this many body bytes.
    cut_at: int | None = None
    #: Seconds to keep the connection open after the last chunk, before ending.
    hold: float = 0.0
    #: Send a Content-Length instead of chunked encoding.
    content_length: bool = False

    def planned_chunks(self) -> list[bytes]:
        chunks = self.chunks if self.chunks is not None else [self.body]
        if self.cut_at is None:
            return chunks
        out: list[bytes] = []
        left = self.cut_at
        for chunk in chunks:
            if left <= 0:
                break
            out.append(chunk[:left])
            left -= len(chunk)
        return out


@dataclass
class Visit:
    """What the server saw of one request."""

    started: float
    headers_sent: float | None = None
    chunk_times: list[float] = field(default_factory=list)
    bytes_sent: int = 0
    completed: float | None = None
    disconnected: float | None = None
    cut: bool = False
    #: The request as received: method, path, headers (names lower-cased), body.
    method: str = ""
    path: str = ""
    request_headers: dict[str, str] = field(default_factory=dict)
    body: bytes = b""


class StreamServer:
    """The server; ``add(scenario)`` returns the URL that serves it."""

    def __init__(self) -> None:
        self.scenarios: dict[str, Scenario] = {}
        self.visits: dict[str, list[Visit]] = {}
        self._ids = itertools.count(1)
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self._runner: web.AppRunner | None = None
        self.port = 0

    # --- lifecycle ---------------------------------------------------------

    def start(self) -> StreamServer:
        ready = threading.Event()
        errors: list[BaseException] = []
        self._thread = threading.Thread(
            target=self._serve, args=(ready, errors), name="stream-server", daemon=True
        )
        self._thread.start()
        if not ready.wait(10):
            raise RuntimeError("the test server did not start within 10 s")
        if errors:
            raise errors[0]
        return self

    def _serve(self, ready: threading.Event, errors: list[BaseException]) -> None:
        loop = self._loop = asyncio.new_event_loop()
        asyncio.set_event_loop(loop)
        try:
            app = web.Application()
            app.router.add_route("*", "/s/{sid}", self._handle)
            # An SDK's base URL is a scenario's URL: it appends its own path.
            app.router.add_route("*", "/s/{sid}/{tail:.*}", self._handle)
            runner = self._runner = web.AppRunner(
                app, handler_cancellation=True, access_log=None, shutdown_timeout=0.1
            )
            loop.run_until_complete(runner.setup())
            site = web.TCPSite(runner, "127.0.0.1", 0)
            loop.run_until_complete(site.start())
            self.port = runner.addresses[0][1]
        except BaseException as exc:  # pragma: no cover - reported to start()
            errors.append(exc)
            ready.set()
            return
        ready.set()
        try:
            loop.run_forever()
        finally:
            loop.run_until_complete(runner.cleanup())
            loop.close()

    def stop(self) -> None:
        loop = self._loop
        if loop is not None and self._thread is not None:
            loop.call_soon_threadsafe(loop.stop)
            self._thread.join(5)

    # --- scenarios ---------------------------------------------------------

    def add(self, scenario: Scenario) -> str:
        sid = str(next(self._ids))
        self.scenarios[sid] = scenario
        self.visits[sid] = []
        return f"http://127.0.0.1:{self.port}/s/{sid}"

    def visits_of(self, url: str) -> list[Visit]:
        return self.visits[url.rsplit("/", 1)[1]]

    def wait_for(self, url: str, what: str, timeout: float = 3.0) -> Visit:
        """The first visit of ``url`` once its ``what`` (e.g. ``disconnected``) is set."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            for visit in self.visits_of(url):
                if getattr(visit, what) is not None:
                    return visit
            time.sleep(0.002)
        raise AssertionError(f"{url}: no visit with {what} within {timeout} s")

    # --- serving -----------------------------------------------------------

    async def _handle(self, request: web.Request) -> web.StreamResponse:
        sid = request.match_info["sid"]
        scenario = self.scenarios[sid]
        visit = Visit(started=time.monotonic(), method=request.method, path=request.path)
        visit.request_headers = {k.lower(): v for k, v in request.headers.items()}
        self.visits[sid].append(visit)
        visit.body = await request.read()
        headers = dict(scenario.headers)
        if scenario.content_type is None:
            return self._without_content_type(request, scenario, visit)
        headers["Content-Type"] = scenario.content_type
        response = web.StreamResponse(status=scenario.status, headers=headers)
        if scenario.content_length:
            response.content_length = len(scenario.body)
        else:
            response.enable_chunked_encoding()
        chunks = scenario.planned_chunks()
        try:
            await response.prepare(request)
            visit.headers_sent = time.monotonic()
            if scenario.first_delay:
                await asyncio.sleep(scenario.first_delay)
            for i, chunk in enumerate(chunks):
                if i and scenario.delay:
                    await asyncio.sleep(scenario.delay)
                if chunk:
                    await response.write(chunk)
                visit.chunk_times.append(time.monotonic())
                visit.bytes_sent += len(chunk)
            if scenario.hold:
                await asyncio.sleep(scenario.hold)
            if scenario.cut_at is not None:
                visit.cut = True
                transport = request.transport
                if transport is not None:
                    transport.abort()
                raise asyncio.CancelledError
            await response.write_eof()
            visit.completed = time.monotonic()
        except (asyncio.CancelledError, ConnectionError):
            if not visit.cut:
                visit.disconnected = time.monotonic()
            raise
        return response

    def _without_content_type(
        self, request: web.Request, scenario: Scenario, visit: Visit
    ) -> web.StreamResponse:
        # aiohttp always sends a Content-Type; write this response by hand.
        transport = request.transport
        assert transport is not None
        head = [f"HTTP/1.1 {scenario.status} X", f"Content-Length: {len(scenario.body)}"]
        head += [f"{k}: {v}" for k, v in scenario.headers.items()]
        head += ["Connection: close", "", ""]
        transport.write("\r\n".join(head).encode("latin-1") + scenario.body)
        visit.headers_sent = visit.completed = time.monotonic()
        visit.bytes_sent = len(scenario.body)
        transport.close()
        raise asyncio.CancelledError


_SHARED: StreamServer | None = None
_LOCK = threading.Lock()


def shared_server() -> StreamServer:
    """The session's server, started on first use (stopped at interpreter exit)."""
    global _SHARED
    with _LOCK:
        if _SHARED is None:
            _SHARED = StreamServer().start()
        return _SHARED
