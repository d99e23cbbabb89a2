"""The kit's HTTP/2 client: one request on a connection, with python-hyper's ``h2``.

``h2`` (what httpx uses) is sans-IO: it turns bytes into events and events
into bytes, and this module moves them over the asyncio connection
``httpio`` opened, so that the HTTP/1.1 and HTTP/2 reads share everything
else (the connect, its timeouts, TLS, the decoding of content codings). It
keeps what the judge relies on:

* every DATA frame is a piece of the body, timed when the read that brought
  it returned (a frame is what a hop sends at once);
* the receive window opens only as the reader takes the data: a client that
  stops reading stops the stream at its window (``recv_buffer`` is the
  window then), as the slow reader needs;
* a cancel is an ``RST_STREAM`` (``CANCEL``) and nothing else: the
  connection stays open for ``LINGER`` seconds after it, as a browser's
  shared connection would, so a hop is judged on whether the reset alone
  reaches its upstream.

``h2`` is an optional dependency (``pip install 'streamwire[kit-h2]'``);
``require()`` says so before a run starts.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections import deque
from collections.abc import AsyncIterator
from typing import TYPE_CHECKING, Any

from .httpbase import (
    READ_SIZE,
    BodySource,
    Http2Unsupported,
    HttpTimeout,
    TransportError,
    within,
)

if TYPE_CHECKING:
    from h2.connection import H2Connection

__all__ = ["LINGER", "MISSING", "exchange", "require"]

#: How long the connection stays open after the client reset its stream.
LINGER = 15.0
#: The receive window of a client that reads as it goes (a browser's is larger
#: still; a hop must not be held back by the kit's window).
WINDOW = 4 * 1024 * 1024
#: What ``require()`` says when ``h2`` is missing.
MISSING = "the http2 transport needs python-hyper's h2: pip install 'streamwire[kit-h2]'"
#: Headers HTTP/2 forbids (RFC 9113 section 8.2.2); ``host`` becomes ``:authority``.
_HOP_BY_HOP = frozenset(
    ("connection", "keep-alive", "proxy-connection", "transfer-encoding", "upgrade", "host")
)
_STREAM = 1
#: Connections of reset streams, kept open for LINGER (a reference each).
_lingering: set[asyncio.Task[None]] = set()


def require() -> None:
    """Raises ValueError (``MISSING``) when ``h2`` cannot be imported."""
    try:
        import h2.connection  # noqa: F401
    except ImportError:
        raise ValueError(MISSING) from None


class _H2Body(BodySource):
    """Stream 1 of a connection: its head, its DATA frames, its end."""

    def __init__(
        self,
        conn: H2Connection,
        reader: asyncio.StreamReader,
        writer: asyncio.StreamWriter,
        read_timeout: float,
        origin: str,
    ) -> None:
        self._h2 = conn
        self._origin = origin
        self._reader = reader
        self._writer = writer
        self._read_timeout = read_timeout
        self.status: int | None = None
        self.headers: list[tuple[str, str]] = []
        self._frames: deque[tuple[float, bytes, int]] = deque()
        self._ended = False
        self._closed = False
        #: The server sent HTTP/2 frames (before, its bytes may be HTTP/1.1).
        self._heard = False
        self._window_open = asyncio.Event()

    # --- moving bytes -------------------------------------------------------------

    def _flush(self) -> None:
        data = self._h2.data_to_send()
        if data and not self._writer.is_closing():
            self._writer.write(data)

    async def _pump(self, timeout: float | None) -> None:
        """Reads once and handles what arrived; TransportError when the
        connection ends before the stream does."""
        from h2.exceptions import ProtocolError

        try:
            data = await within(self._reader.read(READ_SIZE), timeout)
        except asyncio.TimeoutError:
            raise HttpTimeout(f"no data within {timeout} s") from None
        except (ConnectionError, OSError) as exc:
            raise self.lost(exc) from None
        at = time.time()
        if not data and not self._heard:
            raise self.lost(None)
        if not data:
            raise TransportError(
                "the connection closed before the stream ended"
                if self.status is not None
                else "the server closed the connection without a response"
            )
        try:
            events = self._h2.receive_data(data)
        except ProtocolError as exc:
            if not self._heard:
                raise Http2Unsupported(
                    f"{self._origin} does not speak HTTP/2 with prior knowledge (h2c): its "
                    f"answer began {data[:40]!r}; reach it over https, or leave http2 out "
                    "of --transport"
                ) from None
            raise TransportError(f"HTTP/2 protocol error: {exc}") from None
        # A whole frame (a server's SETTINGS comes first) is HTTP/2; bytes that
        # h2 keeps waiting on may be another protocol's.
        self._heard = self._heard or bool(events)
        self._handle(events, at)
        self._flush()

    def lost(self, exc: BaseException | None) -> TransportError:
        """The error for a connection that failed (``exc``) or closed (None):
        before the server sent any HTTP/2, it does not speak it."""
        if not self._heard:
            how = "closed" if exc is None else f"reset ({exc!r})"
            return Http2Unsupported(
                f"{self._origin} does not speak HTTP/2 with prior knowledge (h2c): the "
                f"connection {how} on the HTTP/2 preface; reach it over https, or leave "
                "http2 out of --transport"
            )
        return TransportError(f"connection failed: {exc!r}")

    def _handle(self, events: list[Any], at: float) -> None:
        from h2 import events as ev

        for event in events:
            if isinstance(event, ev.ResponseReceived) and event.stream_id == _STREAM:
                self._head(event.headers)
            elif isinstance(event, ev.DataReceived) and event.stream_id == _STREAM:
                self._frames.append((at, bytes(event.data), event.flow_controlled_length))
            elif isinstance(event, ev.StreamEnded) and event.stream_id == _STREAM:
                self._ended = True
            elif isinstance(event, ev.StreamReset) and event.stream_id == _STREAM:
                raise TransportError(
                    f"the server reset the stream (RST_STREAM {_code(event.error_code)})"
                )
            elif isinstance(event, ev.ConnectionTerminated) and not self._ended:
                raise TransportError(
                    f"the server ended the connection (GOAWAY {_code(event.error_code)}) "
                    "before the stream ended"
                )
            elif isinstance(event, ev.WindowUpdated | ev.RemoteSettingsChanged):
                self._window_open.set()

    def _head(self, headers: list[tuple[bytes, bytes]]) -> None:
        fields = [(k.decode("latin-1"), v.decode("latin-1")) for k, v in headers]
        status = next((v for k, v in fields if k == ":status"), "")
        if not (len(status) == 3 and status.isascii() and status.isdigit()):
            raise TransportError(f"a response without a valid :status ({status[:20]!r})")
        self.status = int(status)
        self.headers = [(k, v) for k, v in fields if not k.startswith(":")]

    # --- the exchange ---------------------------------------------------------------

    async def send(self, headers: list[tuple[str, str]], body: bytes, timeout: float) -> None:
        """The request: HEADERS, then DATA as the send windows allow."""
        self._h2.send_headers(_STREAM, headers, end_stream=not body)
        self._flush()
        sent = 0
        while sent < len(body):
            room = min(
                self._h2.local_flow_control_window(_STREAM),
                self._h2.max_outbound_frame_size,
                len(body) - sent,
            )
            if room <= 0:
                self._window_open.clear()
                await self._pump(timeout)
                continue
            end = sent + room == len(body)
            self._h2.send_data(_STREAM, body[sent : sent + room], end_stream=end)
            sent += room
            self._flush()
        await within(self._writer.drain(), timeout)

    async def head(self, timeout: float) -> None:
        """Waits for the final response head (a 1xx is not one)."""
        while self.status is None:
            await self._pump(timeout)

    async def pieces(self) -> AsyncIterator[tuple[float, bytes]]:
        while True:
            while self._frames:
                at, data, counted = self._frames.popleft()
                if data:
                    yield at, data
                # Taken: its room in the window is given back (h2 sends the
                # WINDOW_UPDATEs once enough was taken).
                if not self._closed:
                    self._h2.acknowledge_received_data(counted, _STREAM)
                    self._flush()
            if self._ended:
                return
            await self._pump(self._read_timeout)

    def close(self) -> None:
        if self._closed:
            return
        self._closed = True
        if self._ended or self._writer.is_closing():
            self._writer.close()
            return
        from h2.errors import ErrorCodes

        with contextlib.suppress(Exception):
            self._h2.reset_stream(_STREAM, ErrorCodes.CANCEL)
            self._flush()
        task = asyncio.get_running_loop().create_task(self._linger())
        _lingering.add(task)
        task.add_done_callback(_lingering.discard)

    async def _linger(self) -> None:
        """The connection after a reset: read (pings answered, frames of the
        reset stream dropped) until LINGER, then GOAWAY and close."""
        deadline = time.monotonic() + LINGER
        try:
            while (left := deadline - time.monotonic()) > 0:
                try:
                    data = await within(self._reader.read(READ_SIZE), left)
                except (asyncio.TimeoutError, ConnectionError, OSError):
                    break
                if not data:
                    break
                with contextlib.suppress(Exception):
                    self._h2.receive_data(data)
                    self._flush()
            with contextlib.suppress(Exception):
                self._h2.close_connection()
                self._flush()
        finally:
            self._writer.close()


def _code(code: object) -> str:
    name = getattr(code, "name", None)
    return f"{name} ({int(code)})" if isinstance(name, str) and isinstance(code, int) else str(code)


async def exchange(
    reader: asyncio.StreamReader,
    writer: asyncio.StreamWriter,
    *,
    scheme: str,
    authority: str,
    method: str,
    target: str,
    headers: list[tuple[str, str]],
    body: bytes,
    read_timeout: float,
    recv_buffer: int | None,
) -> tuple[int, list[tuple[str, str]], float, BodySource]:
    """Sends one request as stream 1 of a new HTTP/2 connection and returns once
    the response head arrived: its status, headers, arrival time and body.
    ``recv_buffer``: the stream's receive window (a slow reader's); otherwise
    ``WINDOW``, the connection's too."""
    from h2.config import H2Configuration
    from h2.connection import H2Connection
    from h2.settings import SettingCodes, Settings

    conn = H2Connection(H2Configuration(client_side=True, header_encoding=None))
    window = recv_buffer if recv_buffer is not None else WINDOW
    conn.local_settings = Settings(
        client=True,
        initial_values={
            SettingCodes.INITIAL_WINDOW_SIZE: window,
            SettingCodes.ENABLE_PUSH: 0,
            SettingCodes.MAX_CONCURRENT_STREAMS: 100,
        },
    )
    conn.initiate_connection()
    if recv_buffer is None:
        # The connection's window starts at 65,535 whatever the settings say.
        conn.increment_flow_control_window(WINDOW - 65_535)
    stream = _H2Body(conn, reader, writer, read_timeout, f"{scheme}://{authority}")
    fields = [(":method", method), (":scheme", scheme), (":authority", authority)]
    fields.append((":path", target))
    fields += [(k.lower(), v) for k, v in headers if k.lower() not in _HOP_BY_HOP]
    if body or method not in ("GET", "HEAD"):
        fields.append(("content-length", str(len(body))))
    try:
        await stream.send(fields, body, read_timeout)
        await stream.head(read_timeout)
    except asyncio.TimeoutError:
        writer.close()
        raise HttpTimeout(f"sending the request took over {read_timeout} s") from None
    except (ConnectionError, OSError) as exc:
        writer.close()
        raise stream.lost(exc) from None
    except TransportError:
        writer.close()
        raise
    except asyncio.CancelledError:
        stream.close()
        raise
    assert stream.status is not None
    return stream.status, stream.headers, time.time(), stream
