"""An HTTP/2 front of the tests' own (h2c, prior knowledge), relaying to an HTTP/1.1 upstream.

``H2Relay(upstream_port, on_reset=...)`` serves HTTP/2 on 127.0.0.1 in a
thread with its own loop, with python-hyper's ``h2`` (the server half), and
relays each stream as one HTTP/1.1 request to the upstream, its answer's
bytes sent as DATA frames as they arrive, within the client's flow-control
windows (a client that stops reading stops the relay's upstream reads).
It speaks HTTP/2 alone: an HTTP/1.1 request gets what HTTP/2 servers send
then, their SETTINGS and a GOAWAY (PROTOCOL_ERROR), and the close. With
``tls`` (a server context whose ALPN offers h2 alone) it serves HTTPS, and
speaks HTTP/2 whatever the handshake chose (Python's TLS agrees no protocol
with a client that offers only http/1.1).

``on_reset`` is what it does when the client resets a stream:

* ``"cancel"`` (an honest hop): the upstream request is closed at once;
* ``"ignore"``: the upstream answer is read to its end and dropped, the
  connection to the client kept, as a hop that frees its upstream only when
  the client's connection goes (the defect the kit's ``cancel`` layer names).
"""

from __future__ import annotations

import asyncio
import contextlib
import ssl
import threading
from typing import Literal

from h2.config import H2Configuration
from h2.connection import H2Connection
from h2.errors import ErrorCodes
from h2.events import (
    ConnectionTerminated,
    DataReceived,
    RemoteSettingsChanged,
    RequestReceived,
    StreamEnded,
    StreamReset,
    WindowUpdated,
)
from h2.exceptions import ProtocolError

from streamwire.kit.vocab.httpio import TransportError, open_request

__all__ = ["H2Relay"]

_SKIP = frozenset(("content-length", "transfer-encoding", "connection", "keep-alive"))


class _Connection:
    def __init__(
        self,
        reader: asyncio.StreamReader,
        writer: asyncio.StreamWriter,
        upstream: int,
        on_reset: str,
    ) -> None:
        self.reader, self.writer = reader, writer
        self.upstream, self.on_reset = upstream, on_reset
        self.h2 = H2Connection(H2Configuration(client_side=False, header_encoding=None))
        self.requests: dict[int, tuple[list[tuple[str, str]], bytearray]] = {}
        self.tasks: dict[int, asyncio.Task[None]] = {}
        self.reset: set[int] = set()
        self.window = asyncio.Event()

    def flush(self) -> None:
        data = self.h2.data_to_send()
        if data and not self.writer.is_closing():
            self.writer.write(data)

    async def serve(self) -> None:
        self.h2.initiate_connection()
        self.flush()
        try:
            while data := await self.reader.read(65536):
                for event in self.h2.receive_data(data):
                    self.handle(event)
                self.flush()
        except ProtocolError:
            # No HTTP/2 preface (an HTTP/1.1 request): a connection error.
            self.h2.close_connection(error_code=ErrorCodes.PROTOCOL_ERROR)
            self.flush()
        except (ConnectionError, OSError):
            pass
        finally:
            for task in self.tasks.values():
                task.cancel()
            self.writer.close()

    def handle(self, event: object) -> None:
        if isinstance(event, RequestReceived):
            fields = [(k.decode(), v.decode()) for k, v in event.headers]
            self.requests[event.stream_id] = (fields, bytearray())
        elif isinstance(event, DataReceived):
            self.requests[event.stream_id][1].extend(event.data)
            self.h2.acknowledge_received_data(event.flow_controlled_length, event.stream_id)
        elif isinstance(event, StreamEnded):
            fields, body = self.requests.pop(event.stream_id)
            task = asyncio.get_running_loop().create_task(
                self.relay(event.stream_id, fields, bytes(body))
            )
            self.tasks[event.stream_id] = task
        elif isinstance(event, StreamReset):
            self.reset.add(event.stream_id)
            task = self.tasks.get(event.stream_id)
            if task is not None and self.on_reset == "cancel":
                task.cancel()
        elif isinstance(event, WindowUpdated | RemoteSettingsChanged):
            self.window.set()
        elif isinstance(event, ConnectionTerminated):
            self.writer.close()

    async def relay(self, sid: int, fields: list[tuple[str, str]], body: bytes) -> None:
        pseudo = dict(f for f in fields if f[0].startswith(":"))
        headers = [(k, v) for k, v in fields if not k.startswith(":") and k not in _SKIP]
        url = f"http://127.0.0.1:{self.upstream}{pseudo.get(':path', '/')}"
        try:
            response = await open_request(
                url, method=pseudo.get(":method", "POST"), headers=headers, body=body
            )
        except TransportError:
            self.answer(sid, 502, [], b"")
            return
        try:
            out = [(":status", str(response.status))]
            out += [(k, v) for k, v in response.headers if k.lower() not in _SKIP]
            self.h2.send_headers(sid, out)
            self.flush()
            async for _, data in response.pieces():
                if sid in self.reset:
                    continue  # "ignore": read on, drop it
                await self.send(sid, data)
            if sid not in self.reset:
                self.h2.end_stream(sid)
                self.flush()
        except TransportError:
            if sid not in self.reset:
                with contextlib.suppress(Exception):
                    self.h2.reset_stream(sid)
                    self.flush()
        finally:
            response.close()

    async def send(self, sid: int, data: bytes) -> None:
        while data and sid not in self.reset:
            room = min(
                self.h2.local_flow_control_window(sid),
                self.h2.max_outbound_frame_size,
                len(data),
            )
            if room <= 0:
                self.window.clear()
                await self.window.wait()
                continue
            self.h2.send_data(sid, data[:room])
            data = data[room:]
            self.flush()
            await self.writer.drain()

    def answer(self, sid: int, status: int, headers: list[tuple[str, str]], body: bytes) -> None:
        self.h2.send_headers(sid, [(":status", str(status)), *headers], end_stream=not body)
        if body:
            self.h2.send_data(sid, body, end_stream=True)
        self.flush()


class H2Relay:
    """The front, in a thread; ``port`` once started; ``close()``."""

    def __init__(
        self,
        upstream: int,
        on_reset: Literal["cancel", "ignore"] = "cancel",
        tls: ssl.SSLContext | None = None,
    ) -> None:
        self.upstream, self.on_reset, self.tls = upstream, on_reset, tls
        self.loop = asyncio.new_event_loop()
        self.port = 0
        ready = threading.Event()
        self.thread = threading.Thread(target=self._run, args=(ready,), daemon=True)
        self.thread.start()
        ready.wait(10)

    def _run(self, ready: threading.Event) -> None:
        asyncio.set_event_loop(self.loop)

        async def serve(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
            await _Connection(reader, writer, self.upstream, self.on_reset).serve()

        server = self.loop.run_until_complete(
            asyncio.start_server(serve, "127.0.0.1", 0, ssl=self.tls)
        )
        self.port = server.sockets[0].getsockname()[1]
        ready.set()
        self.loop.run_forever()
        server.close()

    def close(self) -> None:
        async def stop() -> None:
            mine = asyncio.current_task()
            tasks = [t for t in asyncio.all_tasks() if t is not mine]
            for task in tasks:
                task.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)

        asyncio.run_coroutine_threadsafe(stop(), self.loop).result(10)
        self.loop.call_soon_threadsafe(self.loop.stop)
        self.thread.join(10)
