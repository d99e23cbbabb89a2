"""Ground truth for a hop: timestamped raw reads beside the mock's own log of its writes.

    python tools/hop_probe.py URL --mock MOCK_URL --case cancel --delivery paced
    python tools/hop_probe.py http://127.0.0.1:8080 --mock http://127.0.0.1:9100 \\
        --case short-text --delivery paced --hang-up-after 0.5 --runs 3

Independent of the acceptance kit's client and judge: one blocking socket
(the standard library's, no HTTP library), a POST of the case's request in
the client protocol's shape (``--client``, default openai-chat), every
``recv`` stamped with ``time.time()`` as it returns, optionally a hang-up
(``close()``) after a number of seconds; then the mock's log for the
request's tag (``GET /_sw/log?tag=``). It prints, relative to the moment
the request was sent: the connection, the response head, each read (size,
and whether it holds a text delta's marker), the mock's writes, when the
mock saw the client side close, and the figures the kit's timed verdicts
rest on (first byte after the mock's last write, largest gap, close delay).
Run it three times before trusting a verdict on a hop.
"""

from __future__ import annotations

import argparse
import itertools
import json
import socket
import sys
import time
import urllib.request
from typing import Any
from urllib.parse import urlsplit

_PATHS = {
    "openai-chat": "/v1/chat/completions",
    "openai-responses": "/v1/responses",
    "anthropic": "/v1/messages",
}
_TEXT = (b'"content":"', b"output_text.delta", b"text_delta")


def _request(client: str, base: str, model: str) -> tuple[str, int, bytes]:
    parts = urlsplit(base)
    host, port = parts.hostname or "127.0.0.1", parts.port or 80
    body: dict[str, Any] = {"model": model, "stream": True}
    if client == "openai-responses":
        body["input"] = "hop probe"
    else:
        body["messages"] = [{"role": "user", "content": "hop probe"}]
    if client == "anthropic":
        body["max_tokens"] = 256
    payload = json.dumps(body).encode()
    path = parts.path.rstrip("/") + _PATHS[client]
    head = (
        f"POST {path} HTTP/1.1\r\nhost: {host}:{port}\r\ncontent-type: application/json\r\n"
        f"accept: text/event-stream\r\naccept-encoding: identity\r\n"
        f"authorization: Bearer sk-probe\r\nx-api-key: sk-probe\r\n"
        f"anthropic-version: 2023-06-01\r\ncontent-length: {len(payload)}\r\n"
        "connection: close\r\n\r\n"
    )
    return host, port, head.encode() + payload


def probe(args: argparse.Namespace, run: int) -> None:
    tag = f"kprobe{int(time.time()) % 100000}r{run}"
    model = args.model.replace("{model}", f"sw-{args.case}.{args.delivery}.{tag}")
    host, port, request = _request(args.client, args.url, model)
    t0 = time.time()
    sock = socket.create_connection((host, port), timeout=args.timeout)
    connected = time.time()
    sock.sendall(request)
    reads: list[tuple[float, int, bool]] = []
    buffer = b""
    hung_up: float | None = None
    sock.settimeout(0.05 if args.hang_up_after else args.timeout)
    while True:
        now = time.time()
        if args.hang_up_after and now - t0 >= args.hang_up_after:
            sock.close()
            hung_up = time.time()
            break
        try:
            data = sock.recv(65536)
        except TimeoutError:
            if not args.hang_up_after:
                break
            continue
        at = time.time()
        if not data:
            break
        buffer += data
        reads.append((at, len(data), any(m in data for m in _TEXT)))
    if hung_up is None:
        sock.close()
    time.sleep(args.settle)
    with urllib.request.urlopen(f"{args.mock.rstrip('/')}/_sw/log?tag={tag}", timeout=5) as r:
        entries = json.loads(r.read())["requests"]
    head_end = buffer.find(b"\r\n\r\n")
    print(f"run {run}: {model}")
    print(f"  connected      {1000 * (connected - t0):8.1f} ms")
    cumulative = 0
    for at, size, _text in reads:
        cumulative += size
        if head_end >= 0 and cumulative - size <= head_end < cumulative:
            print(f"  head arrived   {1000 * (at - t0):8.1f} ms")
    if not entries:
        print("  the mock logged no request with this tag")
        return
    entry = entries[-1]
    writes = entry["writes"]
    print(f"  mock received  {1000 * (entry['t'] - t0):8.1f} ms; {len(writes)} writes")
    merged = [(w[0], "mock ", w[1], "text" in w[2]) for w in writes]
    merged += [(at, "read ", size, text) for at, size, text in reads]
    for at, who, size, text in sorted(merged)[: args.lines]:
        print(f"    {1000 * (at - t0):8.1f} ms {who} {size:6d} B{'  text' if text else ''}")
    last_write = writes[-1][0] if writes else None
    first_read = reads[0][0] if reads else None
    gaps = [b[0] - a[0] for a, b in itertools.pairwise(reads)]
    if last_write is not None and first_read is not None:
        print(f"  first read - mock's last write: {1000 * (first_read - last_write):8.1f} ms")
    if gaps:
        print(f"  largest gap between reads:      {1000 * max(gaps):8.1f} ms")
    gone = entry.get("disconnected_at")
    if hung_up is not None:
        if gone is None:
            print(
                f"  hung up at {1000 * (hung_up - t0):.1f} ms; the mock never saw it close "
                f"(completed: {entry.get('completed')})"
            )
        else:
            print(
                f"  hung up at {1000 * (hung_up - t0):.1f} ms; the mock saw the close "
                f"{1000 * (gone - hung_up):.1f} ms later"
            )


def main() -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n")[0])
    parser.add_argument("url", help="the hop's base URL")
    parser.add_argument("--mock", required=True, help="the mock upstream the hop calls")
    parser.add_argument("--client", default="openai-chat", choices=sorted(_PATHS))
    parser.add_argument("--case", default="short-text")
    parser.add_argument("--delivery", default="paced")
    parser.add_argument("--model", default="{model}", help="model template, e.g. openai/{model}")
    parser.add_argument("--hang-up-after", type=float, default=0.0, metavar="SECONDS")
    parser.add_argument("--runs", type=int, default=1)
    parser.add_argument("--timeout", type=float, default=30.0)
    parser.add_argument("--settle", type=float, default=1.5, help="wait before reading the log")
    parser.add_argument("--lines", type=int, default=60, help="timeline lines to print")
    args = parser.parse_args()
    for run in range(1, args.runs + 1):
        probe(args, run)
    return 0


if __name__ == "__main__":
    sys.exit(main())
