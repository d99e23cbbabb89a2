"""The kit's HTTP client: compressed bodies decoded as they arrive, and TLS trust.

A server of the test's own (asyncio streams, no kit code) writes an SSE body
compressed per event and flushed (``Z_SYNC_FLUSH``), as a streaming hop that
compresses does, with pauses between the events. The kit's client must give
each event when its compressed bytes arrive, decoded, and fail with a
``TransportError`` that names the coding on corrupt data. TLS: a server whose
certificate comes from a CA the test makes (``openssl``) is refused with a
``CertificateError`` that names ``--cacert``, and read with that CA trusted.

A front that speaks HTTP/2 alone, read over HTTP/1.1, is ``Http2Only`` on
evidence only: a real ``openssl s_server`` whose ALPN offers h2 alone aborts
the handshake (alert ``no_application_protocol``) and chooses h2 when
offered it; bytes that only look like HTTP/2 (a SETTINGS frame on a stream,
a frame cut short), another protocol's greeting, and a TLS server without
ALPN that closes without a word stay the server's failure, a
``TransportError`` (the cell's verdict, as before). The fronts that speak h2
are in ``test_kit_http2.py``.
"""

from __future__ import annotations

import asyncio
import shutil
import ssl
import subprocess
import time
import zlib
from collections.abc import Awaitable, Callable
from pathlib import Path

import pytest

from servers.processes import free_port, wait_listening
from servers.tls import make_ca
from streamwire.kit.judge.verdicts import verdicts
from streamwire.kit.run.check import CheckPlan, Route, run_check
from streamwire.kit.upstream.mock import MockUpstream
from streamwire.kit.vocab.httpio import (
    CertificateError,
    Http2Only,
    TransportError,
    Trust,
    open_request,
)

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


# --- a front that speaks HTTP/2 alone, read over HTTP/1.1 --------------------------------


def test_a_tls_front_that_refuses_http1_in_alpn_and_chooses_h2_is_http2_only(
    test_ca: dict[str, Path],
) -> None:
    # openssl's own server with h2 alone in ALPN: a client that offers only
    # http/1.1 gets the no_application_protocol alert, one that offers h2 gets h2.
    if shutil.which("openssl") is None:
        pytest.skip("openssl is not installed")
    port = free_port()
    command = [
        "openssl", "s_server", "-accept", f"127.0.0.1:{port}", "-quiet", "-alpn", "h2",
        "-cert", str(test_ca["cert"]), "-key", str(test_ca["key"]),
    ]  # fmt: skip
    proc = subprocess.Popen(
        command,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        wait_listening(port, proc, "openssl s_server", timeout=10)
        url = f"https://127.0.0.1:{port}/v1/chat/completions"
        trust = Trust(cafile=str(test_ca["ca"]))
        with pytest.raises(Http2Only) as refused:
            asyncio.run(open_request(url, body=b"{}", context=trust))
    finally:
        proc.terminate()
        proc.wait(10)
    message = str(refused.value)
    assert message.startswith(f"https://127.0.0.1:{port} speaks HTTP/2 alone")
    assert "alert no_application_protocol" in message
    assert "--transport http2" in message


#: Answers where a status line belongs that are no HTTP/2 server's, whatever they look like.
NOT_HTTP2 = {
    # A SETTINGS frame, but on stream 1: no server's preface.
    "settings-on-a-stream": b"\x00\x00\x06\x04\x00\x00\x00\x00\x01\x00\x03\x00\x00\x00\x64",
    # A SETTINGS frame whose length is no whole number of settings.
    "settings-of-5-bytes": b"\x00\x00\x05\x04\x00\x00\x00\x00\x00\x00\x03\x00\x00\x00",
    # A SETTINGS frame cut short (12 bytes said, 6 sent).
    "settings-cut-short": b"\x00\x00\x0c\x04\x00\x00\x00\x00\x00\x00\x03\x00\x00\x00\x64",
    # Another protocol's greeting, and a TLS record on an http URL.
    "ssh": b"SSH-2.0-OpenSSH_9.6\r\n",
    "tls-record": b"\x15\x03\x03\x00\x02\x02\x46",
}


def _answering(answer: bytes) -> Handler:
    async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await _drain_request(reader)
        writer.write(answer)
        await writer.drain()
        writer.close()

    return handle


@pytest.mark.parametrize("answer", sorted(NOT_HTTP2))
def test_bytes_that_only_look_like_http2_stay_the_server_s_failure(answer: str) -> None:
    async def main() -> None:
        server, port = await _serve(_answering(NOT_HTTP2[answer]))
        async with server:
            with pytest.raises(TransportError) as failed:
                await open_request(f"http://127.0.0.1:{port}/", body=b"{}")
        assert not isinstance(failed.value, Http2Only), failed.value

    asyncio.run(main())


def test_a_cell_answered_with_near_http2_bytes_is_judged_as_before() -> None:
    # The run goes on and the cell is the gateway's verdict: no response at all.
    async def main() -> list[dict[str, object]]:
        server, port = await _serve(_answering(NOT_HTTP2["settings-on-a-stream"]))
        async with server, MockUpstream() as mock:
            plan = CheckPlan(
                routes=[Route(f"http://127.0.0.1:{port}")],
                clients=["openai-chat"],
                cases=["short-text"],
                deliveries=["whole"],
                mock_url=mock.url,
                read_timeout=2.0,
                unary=False,
            )
            cells = await run_check(plan)
        assert len(cells) == 1 and cells[0].failing
        assert cells[0].checks["http"].why.startswith("no response: ")
        return verdicts(cells)

    assert [v["name"] for v in asyncio.run(main())] == ["gateway_unreachable"]


def test_a_tls_server_without_alpn_that_says_nothing_stays_the_server_s_failure(
    test_ca: dict[str, Path],
) -> None:
    # ALPN chose no protocol and the server closed without a word, but it does
    # not choose h2 either: no evidence of HTTP/2, the gateway's failure.
    async def closes(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await _drain_request(reader)
        writer.close()

    async def main() -> None:
        server, port = await _serve(closes, _tls_server_context(test_ca))
        async with server:
            with pytest.raises(TransportError) as failed:
                await open_request(
                    f"https://127.0.0.1:{port}/", context=Trust(cafile=str(test_ca["ca"]))
                )
        assert not isinstance(failed.value, Http2Only), failed.value
        assert "without a response" in str(failed.value)

    asyncio.run(main())
