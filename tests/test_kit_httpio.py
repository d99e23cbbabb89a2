"""The kit's HTTP client: compressed bodies decoded as they arrive, and TLS trust.

A server of the test's own (asyncio streams, no kit code) writes an SSE body
compressed per event and flushed (``Z_SYNC_FLUSH``), as a streaming hop that
compresses does, with pauses between the events. The kit's client must give
each event when its compressed bytes arrive, decoded, and fail with a
``TransportError`` that names the coding on corrupt data. TLS: a server whose
certificate comes from a CA the test makes (``openssl``) is refused with a
``CertificateError`` that names ``--cacert``, and read with that CA trusted.
"""

from __future__ import annotations

import asyncio
import ssl
import time
import zlib
from collections.abc import Awaitable, Callable
from pathlib import Path

import pytest

from servers.tls import make_ca
from streamwire.kit.vocab.httpio import CertificateError, TransportError, open_request

EVENTS = [f'data: {{"n": {i}, "text": "{"word " * 20}"}}\n\n'.encode() for i in range(6)]
GAP = 0.15


def _compressor(coding: str) -> Callable[[bytes, bool], bytes]:
    if coding == "br":
        brotli = pytest.importorskip("brotli")
        c = brotli.Compressor()

        def br(data: bytes, last: bool) -> bytes:
            return bytes(c.process(data) + (c.finish() if last else c.flush()))

        return br
    wbits = {"gzip": 31, "deflate": 15, "raw-deflate": -15}[coding]
    z = zlib.compressobj(6, zlib.DEFLATED, wbits)

    def zl(data: bytes, last: bool) -> bytes:
        return z.compress(data) + z.flush(zlib.Z_FINISH if last else zlib.Z_SYNC_FLUSH)

    return zl


Handler = Callable[[asyncio.StreamReader, asyncio.StreamWriter], Awaitable[None]]


async def _serve(
    handler: Handler, context: ssl.SSLContext | None = None
) -> tuple[asyncio.AbstractServer, int]:
    server = await asyncio.start_server(handler, "127.0.0.1", 0, ssl=context)
    return server, server.sockets[0].getsockname()[1]


async def _drain_request(reader: asyncio.StreamReader) -> bytes:
    head = await reader.readuntil(b"\r\n\r\n")
    return head


def _sse_handler(coding: str, corrupt: bool = False) -> Handler:
    async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await _drain_request(reader)
        label = "deflate" if coding == "raw-deflate" else coding
        writer.write(
            b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\n"
            + f"content-encoding: {label}\r\n".encode()
            + b"transfer-encoding: chunked\r\n\r\n"
        )
        compress = _compressor(coding)
        for i, event in enumerate(EVENTS):
            data = compress(event, i == len(EVENTS) - 1)
            if corrupt and i == 3:
                data = b"\x00\xff" * 8 + data
            writer.write(f"{len(data):x}\r\n".encode() + data + b"\r\n")
            await writer.drain()
            await asyncio.sleep(GAP)
        writer.write(b"0\r\n\r\n")
        await writer.drain()
        writer.close()

    return handle


async def _read(url: str, decode: bool, **options: object) -> tuple[list[float], bytes, int]:
    started = time.monotonic()
    response = await open_request(
        url, headers=[("accept-encoding", "gzip, deflate")], decode=decode, **options
    )
    times, body = [], b""
    async for _, data in response.pieces():
        body += data
        times.append(time.monotonic() - started)
    return times, body, response.wire_bytes


@pytest.mark.parametrize("coding", ["gzip", "deflate", "raw-deflate", "br"])
def test_a_compressed_stream_is_decoded_event_by_event_as_it_arrives(coding: str) -> None:
    async def main() -> None:
        server, port = await _serve(_sse_handler(coding))
        async with server:
            times, body, wire = await _read(f"http://127.0.0.1:{port}/", decode=True)
        assert body == b"".join(EVENTS)
        assert wire < len(body)  # the wire carried the compressed bytes
        # Each event decoded when its own bytes came, not all at the end.
        assert len(times) >= len(EVENTS)
        assert times[-1] - times[0] >= GAP * (len(EVENTS) - 2)

    asyncio.run(main())


def test_without_decode_the_body_is_the_wire_bytes() -> None:
    async def main() -> None:
        server, port = await _serve(_sse_handler("gzip"))
        async with server:
            _, body, wire = await _read(f"http://127.0.0.1:{port}/", decode=False)
        assert body.startswith(b"\x1f\x8b") and len(body) == wire
        assert zlib.decompress(body, 31) == b"".join(EVENTS)

    asyncio.run(main())


def test_corrupt_compressed_data_is_a_transport_error_naming_the_coding() -> None:
    async def main() -> None:
        server, port = await _serve(_sse_handler("gzip", corrupt=True))
        async with server:
            with pytest.raises(TransportError, match="gzip body cannot be decoded"):
                await _read(f"http://127.0.0.1:{port}/", decode=True)

    asyncio.run(main())


# --- TLS --------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def test_ca(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """A CA and a certificate for 127.0.0.1 it signed (``servers/tls.py``)."""
    files = make_ca(tmp_path_factory.mktemp("ca"))
    if files is None:
        pytest.skip("openssl is not installed")
    return files


def _tls_server_context(files: dict[str, Path]) -> ssl.SSLContext:
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(files["cert"], files["key"])
    return context


def test_an_untrusted_certificate_names_cacert_and_a_trusted_one_is_read(
    test_ca: dict[str, Path],
) -> None:
    async def main() -> None:
        server, port = await _serve(_sse_handler("gzip"), _tls_server_context(test_ca))
        url = f"https://127.0.0.1:{port}/"
        async with server:
            with pytest.raises(CertificateError, match="--cacert"):
                await _read(url, decode=True)
            trusted = ssl.create_default_context(cafile=str(test_ca["ca"]))
            _, body, _ = await _read(url, decode=True, context=trusted)
            assert body == b"".join(EVENTS)

    asyncio.run(main())
