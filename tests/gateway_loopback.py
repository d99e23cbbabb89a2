"""The example gateway over loopback: uvicorn servers in a background loop, and an upstream stub.

``Loopback`` runs ASGI apps with uvicorn (``uvicorn.Server.serve()``, the
documented way to embed it in a running event loop) on one event loop in a
daemon thread, each bound to port 0 on 127.0.0.1 (the kernel picks a free
port, so parallel runs never collide). Signal handlers are only installed by
uvicorn in the main thread, so nothing of the test process changes.
``close()`` asks every server to exit, waits (bounded) and stops the loop.

``UpstreamStub`` is the upstream provider: a plain ASGI app that answers a
streaming request with a registered case's bytes, chunk by chunk. The case
is chosen by the model the request names (the body's ``model``, or gemini's
``/models/{model}:streamGenerateContent`` path), so the stub also proves the
gateway carried the model through. A case may hold its stream at a gate
until the test opens it (or ``gate_timeout`` passes), which shows whether
bytes before the gate reached the client before the upstream finished; and
each visit records the request and whether the gateway hung up early.
"""

from __future__ import annotations

import asyncio
import itertools
import json
import threading
import time
from collections.abc import Awaitable, Callable, MutableMapping
from concurrent.futures import Future
from dataclasses import dataclass, field
from typing import Any

import uvicorn

__all__ = ["Loopback", "StubCase", "StubVisit", "UpstreamStub", "lifespan", "wait_for_disconnect"]

Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]

START_TIMEOUT = 10.0
STOP_TIMEOUT = 5.0


class Loopback:
    """ASGI apps served by uvicorn on 127.0.0.1, on one background event loop."""

    def __init__(self) -> None:
        self.loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._run, name="loopback-servers", daemon=True)
        self._servers: list[tuple[uvicorn.Server, Future[None]]] = []
        self._thread.start()

    def _run(self) -> None:
        asyncio.set_event_loop(self.loop)
        self.loop.run_forever()
        self.loop.close()

    def serve(self, app: Any) -> int:
        """Starts ``app`` and returns its port once it accepts connections."""
        config = uvicorn.Config(
            app,
            host="127.0.0.1",
            port=0,
            lifespan="on",
            log_config=None,
            log_level="warning",
            access_log=False,
            ws="none",
            timeout_graceful_shutdown=1,
        )
        server = uvicorn.Server(config)
        future = asyncio.run_coroutine_threadsafe(server.serve(), self.loop)
        self._servers.append((server, future))
        deadline = time.monotonic() + START_TIMEOUT
        while not server.started:
            if future.done():
                future.result()  # raises why it stopped
                raise RuntimeError("uvicorn exited before it started")
            if time.monotonic() > deadline:
                raise RuntimeError(f"uvicorn did not start within {START_TIMEOUT} s")
            time.sleep(0.005)
        return int(server.servers[0].sockets[0].getsockname()[1])

    def call(self, coro: Awaitable[Any], timeout: float = STOP_TIMEOUT) -> Any:
        """Runs a coroutine on the servers' loop and returns its result."""

        async def wrap() -> Any:
            return await coro

        return asyncio.run_coroutine_threadsafe(wrap(), self.loop).result(timeout)

    def close(self) -> None:
        for server, _ in self._servers:
            server.should_exit = True
        for server, future in self._servers:
            try:
                future.result(STOP_TIMEOUT)
            except Exception:
                server.force_exit = True
        self.loop.call_soon_threadsafe(self.loop.stop)
        self._thread.join(STOP_TIMEOUT)


@dataclass
class StubCase:
    """What the stub answers for one model name."""

    chunks: list[bytes]
    status: int = 200
    content_type: str = "text/event-stream"
    headers: dict[str, str] = field(default_factory=dict)
    #: Hold the stream after this many chunks until ``gate`` is set.
    gate_after: int | None = None
    gate: threading.Event = field(default_factory=threading.Event)
    gate_timeout: float = 5.0


@dataclass
class StubVisit:
    """What the stub saw of one request."""

    path: str
    query: str
    headers: dict[str, str]
    body: Any
    chunks_sent: int = 0
    completed: bool = False
    disconnected: bool = False
    done: threading.Event = field(default_factory=threading.Event)


class UpstreamStub:
    """The upstream provider; ``add(case)`` returns the model name that selects it."""

    def __init__(self) -> None:
        self.cases: dict[str, StubCase] = {}
        self.visits: dict[str, list[StubVisit]] = {}
        self._ids = itertools.count(1)

    def add(self, case: StubCase) -> str:
        model = f"stub-{next(self._ids)}"
        self.cases[model] = case
        self.visits[model] = []
        return model

    def visit(self, model: str, timeout: float = 5.0) -> StubVisit:
        """The first finished visit for ``model`` (completed or disconnected)."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            for visit in self.visits[model]:
                if visit.done.wait(max(0.0, deadline - time.monotonic())):
                    return visit
            time.sleep(0.002)
        raise AssertionError(f"no finished upstream visit for {model} within {timeout} s")

    async def __call__(self, scope: Message, receive: Receive, send: Send) -> None:
        if scope["type"] == "lifespan":
            await lifespan(receive, send)
            return
        if scope["type"] != "http":
            return
        raw = bytearray()
        while True:
            message = await receive()
            raw += message.get("body", b"")
            if not message.get("more_body", False):
                break
        body = json.loads(raw) if raw else None
        model = _model_of(scope["path"], body)
        case = self.cases.get(model or "")
        if case is None:
            await _json(send, 404, {"error": {"message": f"no stub case for {model!r}"}})
            return
        headers = {k.decode("latin-1"): v.decode("latin-1") for k, v in scope["headers"]}
        visit = StubVisit(scope["path"], scope["query_string"].decode(), headers, body)
        self.visits[model or ""].append(visit)
        try:
            await self._stream(case, visit, receive, send)
        finally:
            visit.done.set()

    async def _stream(self, case: StubCase, visit: StubVisit, receive: Receive, send: Send) -> None:
        head = [(b"content-type", case.content_type.encode())]
        head += [(k.encode(), v.encode()) for k, v in case.headers.items()]
        await send({"type": "http.response.start", "status": case.status, "headers": head})
        hangup = asyncio.ensure_future(wait_for_disconnect(receive))
        try:
            for i, chunk in enumerate(case.chunks):
                if i == case.gate_after and not await _gate(case, hangup):
                    visit.disconnected = True
                    return
                await send({"type": "http.response.body", "body": chunk, "more_body": True})
                visit.chunks_sent += 1
            await send({"type": "http.response.body", "body": b"", "more_body": False})
            visit.completed = True
        except OSError:
            visit.disconnected = True
        finally:
            hangup.cancel()


def _model_of(path: str, body: Any) -> str | None:
    if "/models/" in path and path.endswith(":streamGenerateContent"):
        return path.rpartition("/models/")[2].removesuffix(":streamGenerateContent")
    return body.get("model") if isinstance(body, dict) else None


async def _gate(case: StubCase, hangup: asyncio.Future[None]) -> bool:
    """Waits for the case's gate; False if the client hung up meanwhile."""
    deadline = time.monotonic() + case.gate_timeout
    while not case.gate.is_set() and time.monotonic() < deadline:
        if hangup.done():
            return False
        await asyncio.sleep(0.002)
    return not hangup.done()


async def lifespan(receive: Receive, send: Send) -> None:
    """Answers ASGI's lifespan messages (the servers run with ``lifespan="on"``)."""
    while True:
        message = await receive()
        kind = message["type"].rpartition(".")[2]
        await send({"type": f"lifespan.{kind}.complete"})
        if kind == "shutdown":
            return


async def wait_for_disconnect(receive: Receive) -> None:
    """Returns when the client hung up (``http.disconnect``)."""
    while (await receive())["type"] != "http.disconnect":
        pass


async def _json(send: Send, status: int, data: Any) -> None:
    body = json.dumps(data).encode()
    await send(
        {
            "type": "http.response.start",
            "status": status,
            "headers": [(b"content-type", b"application/json")],
        }
    )
    await send({"type": "http.response.body", "body": body})
