"""A TLS front for a plain-HTTP server on loopback: the bytes of each
connection, decrypted, relayed both ways, nothing read or changed.

    python .ci/tls_front.py --cert server.pem --key server.key --upstream 127.0.0.1:9000

A gateway that will only call an ``https`` (``wss``) upstream is pointed at
it, with the test CA that signed the certificate to trust (``SSL_CERT_FILE``):
.ci/litellm.sh puts it before the mock for LiteLLM's Responses WebSocket
route. The first line printed is ``listening on https://127.0.0.1:PORT``.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import ssl

#: The most a read takes at once.
READ_SIZE = 64 * 1024


async def _pipe(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    """Copies ``reader`` to ``writer`` until the reader's end, then ends the writer's side."""
    with contextlib.suppress(ConnectionError, OSError, ssl.SSLError):
        while data := await reader.read(READ_SIZE):
            writer.write(data)
            await writer.drain()
    with contextlib.suppress(ConnectionError, OSError, ssl.SSLError, RuntimeError):
        if writer.can_write_eof():
            writer.write_eof()
        else:
            writer.close()


async def _serve(
    host: str, port: int, client_r: asyncio.StreamReader, client_w: asyncio.StreamWriter
) -> None:
    try:
        up_r, up_w = await asyncio.open_connection(host, port)
    except OSError:
        client_w.close()
        return
    try:
        await asyncio.gather(_pipe(client_r, up_w), _pipe(up_r, client_w))
    finally:
        for writer in (up_w, client_w):
            with contextlib.suppress(Exception):
                writer.close()


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cert", required=True)
    parser.add_argument("--key", required=True)
    parser.add_argument("--upstream", required=True, metavar="HOST:PORT")
    parser.add_argument("--port", type=int, default=0)
    args = parser.parse_args()
    host, _, port = args.upstream.rpartition(":")
    context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    context.load_cert_chain(args.cert, args.key)

    async def serve(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await _serve(host, int(port), reader, writer)

    server = await asyncio.start_server(serve, "127.0.0.1", args.port, ssl=context)
    bound = server.sockets[0].getsockname()[1]
    print(f"listening on https://127.0.0.1:{bound}", flush=True)
    async with server:
        await server.serve_forever()


if __name__ == "__main__":
    with contextlib.suppress(KeyboardInterrupt):
        asyncio.run(main())
