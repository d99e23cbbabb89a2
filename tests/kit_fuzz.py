"""The kit against hostile gateways: answers wrong at every level, each a verdict, never a crash.

    python tests/kit_fuzz.py --seconds 60 [--seed N]

A gateway of our own (raw asyncio, no HTTP library) answers each request
with one of ``ANSWERS``, chosen by a seeded generator: random and truncated
bytes, a status line and nothing else, broken chunked coding, huge and
endless headers, a head or body that trickles a byte at a time, a body that
never ends, SSE that never ends an event, a body that lies about its
encoding, redirects, 1xx responses, a JSON error where a stream belongs,
random mutations of a real stream. The kit's check (its HTTP client and the
judge) runs a cell against each, with short limits, and every cell must end
within them, with a failing (or inconclusive) layer and JSON-ready evidence,
the run going on to the next; the process's Python memory must stay
bounded (tracemalloc's peak). The summary: answers tried, the longest cell,
the peak memory.
"""

from __future__ import annotations

import argparse
import asyncio
import gzip
import json
import random
import sys
import time
import tracemalloc
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from streamwire.kit import CLIENTS
from streamwire.kit.run.check import SETTLE, CheckPlan, Route, run_check
from streamwire.kit.upstream.mock import MockUpstream
from streamwire.kit.upstream.wire import render_stream
from streamwire.kit.vocab.cases import CASES

__all__ = ["ANSWERS", "Figures", "fuzz"]

#: Limits the fuzzed cells run with: each read, the whole answer.
READ_TIMEOUT = 0.4
TOTAL_TIMEOUT = 1.5
#: A cell may take this much longer than its limits before it is a hang.
SLACK = 3.0
#: The most Python memory the whole run may have allocated at its peak.
MAX_PEAK = 96 * 1024 * 1024


def _stream(rng: random.Random) -> bytes:
    units = render_stream(CASES["short-text"], "openai-chat", model="sw-short-text", usage=True)
    return b"".join(u.data for u in units)


def _chunked(body: bytes) -> bytes:
    return b"%x\r\n%s\r\n0\r\n\r\n" % (len(body), body)


_HEAD = b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\n"

Writer = Callable[[asyncio.StreamWriter, random.Random], Any]


async def _send(writer: asyncio.StreamWriter, *parts: bytes) -> None:
    for part in parts:
        writer.write(part)
        await writer.drain()


async def _random_bytes(w: asyncio.StreamWriter, rng: random.Random) -> None:
    await _send(w, rng.randbytes(rng.randint(0, 4096)))


async def _truncated(w: asyncio.StreamWriter, rng: random.Random) -> None:
    whole = _HEAD + b"transfer-encoding: chunked\r\n\r\n" + _chunked(_stream(rng))
    await _send(w, whole[: rng.randint(0, len(whole) - 1)])


async def _status_only(w: asyncio.StreamWriter, rng: random.Random) -> None:
    await _send(w, rng.choice([b"HTTP/1.1 200 OK\r\n", b"HTTP/1.1 200 OK", b"HTTP/1.1 ", b"H"]))


async def _bad_chunks(w: asyncio.StreamWriter, rng: random.Random) -> None:
    body = _stream(rng)
    bad = rng.choice(
        [
            b"zz\r\n" + body,
            b"%x\r\n%s" % (len(body) + 50, body),
            b"%x\r\n%sXX" % (len(body), body),
            b"-1\r\n" + body,
            b"%x;ext=" % len(body) + b"\x00" * 100 + b"\r\n" + body,
            b"ffffffffffffffff\r\n" + body,
        ]
    )
    await _send(w, _HEAD + b"transfer-encoding: chunked\r\n\r\n", bad)


async def _huge_headers(w: asyncio.StreamWriter, rng: random.Random) -> None:
    await _send(w, _HEAD)
    for _ in range(rng.randint(10, 200)):
        await _send(w, b"x-sw-" + rng.randbytes(8).hex().encode() + b": " + b"v" * 2000 + b"\r\n")


async def _endless_headers(w: asyncio.StreamWriter, rng: random.Random) -> None:
    await _send(w, _HEAD)
    while True:
        await _send(w, b"x-more: " + b"a" * 1000 + b"\r\n")
        await asyncio.sleep(0)


async def _trickle_head(w: asyncio.StreamWriter, rng: random.Random) -> None:
    for byte in _HEAD + b"\r\n":
        await _send(w, bytes([byte]))
        await asyncio.sleep(READ_TIMEOUT / 2)


async def _trickle_body(w: asyncio.StreamWriter, rng: random.Random) -> None:
    await _send(w, _HEAD + b"\r\n")
    while True:
        await _send(w, b": ")
        await asyncio.sleep(READ_TIMEOUT / 2)


async def _never_ends(w: asyncio.StreamWriter, rng: random.Random) -> None:
    await _send(w, _HEAD + b"transfer-encoding: chunked\r\n\r\n")
    while True:
        data = b"data: " + json.dumps({"choices": [{"delta": {"content": "x"}}]}).encode() + b"\n\n"
        await _send(w, b"%x\r\n%s\r\n" % (len(data), data))
        await asyncio.sleep(0.01)


async def _endless_event(w: asyncio.StreamWriter, rng: random.Random) -> None:
    await _send(w, _HEAD + b"\r\ndata: ")
    while True:
        await _send(w, b"y" * 65536)
        await asyncio.sleep(0)


async def _lying_encoding(w: asyncio.StreamWriter, rng: random.Random) -> None:
    body = _stream(rng)
    kind = rng.choice(["gzip-plain", "plain-gzip", "br"])
    if kind == "gzip-plain":
        await _send(
            w, _HEAD + b"content-encoding: gzip\r\ncontent-length: %d\r\n\r\n" % len(body), body
        )
    elif kind == "plain-gzip":
        packed = gzip.compress(body)
        await _send(w, _HEAD + b"content-length: %d\r\n\r\n" % len(packed), packed)
    else:
        await _send(
            w, _HEAD + b"content-encoding: br\r\ncontent-length: 5\r\n\r\n\x00\x01\x02\x03\x04"
        )


async def _redirect(w: asyncio.StreamWriter, rng: random.Random) -> None:
    code = rng.choice([b"301 Moved", b"302 Found", b"307 Temporary Redirect", b"308 Permanent"])
    await _send(
        w,
        b"HTTP/1.1 "
        + code
        + b"\r\nlocation: http://127.0.0.1:1/elsewhere\r\ncontent-length: 0\r\n\r\n",
    )


async def _informational(w: asyncio.StreamWriter, rng: random.Random) -> None:
    interim = rng.choice(
        [b"HTTP/1.1 100 Continue\r\n\r\n", b"HTTP/1.1 103 Early Hints\r\nlink: </x>\r\n\r\n"]
    )
    rest = rng.choice([b"", _HEAD + b"transfer-encoding: chunked\r\n\r\n" + _chunked(_stream(rng))])
    await _send(w, interim, rest)


async def _json_error(w: asyncio.StreamWriter, rng: random.Random) -> None:
    body = json.dumps(
        {"error": {"type": "<script>x</script>", "message": "\x1b[31m|`[a](b)`"}}
    ).encode()
    status = rng.choice([b"200 OK", b"500 Oops", b"429 Slow down"])
    await _send(
        w,
        b"HTTP/1.1 "
        + status
        + b"\r\ncontent-type: application/json\r\ncontent-length: %d\r\n\r\n" % len(body),
        body,
    )


async def _mutated(w: asyncio.StreamWriter, rng: random.Random) -> None:
    body = bytearray(_stream(rng))
    for _ in range(rng.randint(1, 40)):
        at = rng.randrange(len(body))
        op = rng.randrange(3)
        if op == 0:
            body[at] = rng.randrange(256)
        elif op == 1:
            del body[at : at + rng.randint(1, 30)]
        else:
            body[at:at] = rng.choice([b"\r", b"\n\n", b"\xff\xfe", b'"', b"}", b"data: [DONE]\n\n"])
    await _send(w, _HEAD + b"transfer-encoding: chunked\r\n\r\n", _chunked(bytes(body)))


async def _hostile_text(w: asyncio.StreamWriter, rng: random.Random) -> None:
    # A well-formed stream whose every string is markup and control characters.
    nasty = "<script>alert(1)</script><img onerror=x>|`x`[l](javascript:x)\x1b[2J\u202e"
    chunk = {
        "id": nasty,
        "choices": [{"index": 0, "delta": {"content": nasty}, "finish_reason": None}],
    }
    end = {"id": nasty, "choices": [{"index": 0, "delta": {}, "finish_reason": nasty}]}
    body = (
        b"".join(b"data: %s\n\n" % json.dumps(c).encode() for c in (chunk, end))
        + b"data: [DONE]\n\n"
    )
    await _send(w, _HEAD + b"transfer-encoding: chunked\r\n\r\n", _chunked(body))


ANSWERS: dict[str, Writer] = {
    "random_bytes": _random_bytes,
    "truncated": _truncated,
    "status_only": _status_only,
    "bad_chunks": _bad_chunks,
    "huge_headers": _huge_headers,
    "endless_headers": _endless_headers,
    "trickle_head": _trickle_head,
    "trickle_body": _trickle_body,
    "never_ends": _never_ends,
    "endless_event": _endless_event,
    "lying_encoding": _lying_encoding,
    "redirect": _redirect,
    "informational": _informational,
    "json_error": _json_error,
    "mutated": _mutated,
    "hostile_text": _hostile_text,
}


@dataclass
class Figures:
    """What a fuzzing run tried and saw."""

    answers: int = 0
    by_kind: dict[str, int] = field(default_factory=dict)
    longest_cell: float = 0.0
    peak_bytes: int = 0
    problems: list[str] = field(default_factory=list)
    #: The cells judged (for the report's renderings).
    cells: list[Any] = field(default_factory=list)


class HostileGateway:
    """Answers each connection with the next answer its generator picks."""

    def __init__(self, seed: int) -> None:
        self.rng = random.Random(seed)
        self.picked: list[str] = []
        self.url = ""
        self._server: asyncio.base_events.Server | None = None

    async def __aenter__(self) -> HostileGateway:
        self._server = await asyncio.start_server(self._serve, "127.0.0.1", 0)
        self.url = f"http://127.0.0.1:{self._server.sockets[0].getsockname()[1]}"
        return self

    async def __aexit__(self, *exc: object) -> None:
        assert self._server is not None
        self._server.close()

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        kind = self.rng.choice(sorted(ANSWERS))
        self.picked.append(kind)
        rng = random.Random(self.rng.random())
        try:
            await reader.readuntil(b"\r\n\r\n")
            await asyncio.wait_for(ANSWERS[kind](writer, rng), TOTAL_TIMEOUT + SLACK)
        except (
            OSError,
            asyncio.IncompleteReadError,
            asyncio.TimeoutError,
            asyncio.LimitOverrunError,
        ):
            pass
        finally:
            writer.transport.abort()


async def fuzz(seconds: float, seed: int) -> Figures:
    figures = Figures()
    tracemalloc.start()
    deadline = time.monotonic() + seconds
    try:
        async with MockUpstream() as mock, HostileGateway(seed) as gateway:
            while time.monotonic() < deadline:
                plan = CheckPlan(
                    routes=[Route(gateway.url, label="hostile", key_passthrough=True)],
                    clients=list(CLIENTS),
                    cases=["short-text"],
                    deliveries=["whole"],
                    mock_url=mock.url,
                    read_timeout=READ_TIMEOUT,
                    connect_timeout=1.0,
                    total_timeout=TOTAL_TIMEOUT,
                    concurrency=len(CLIENTS),
                )
                started = time.monotonic()
                cells = await run_check(plan)
                took = time.monotonic() - started
                figures.longest_cell = max(figures.longest_cell, took)
                kinds = gateway.picked[-len(cells) :]
                figures.cells += cells
                for cell, kind in zip(cells, kinds, strict=False):
                    figures.answers += 1
                    figures.by_kind[kind] = figures.by_kind.get(kind, 0) + 1
                    json.dumps(cell.as_dict(), default=str)
                    if not (cell.failed or cell.inconclusive) and kind not in (
                        "informational",
                        "mutated",
                        "hostile_text",
                    ):
                        figures.problems.append(f"{kind}: judged clean: {cell.layers}")
                if took > TOTAL_TIMEOUT + SETTLE + 2 * SLACK:
                    figures.problems.append(f"a check of {len(cells)} cells took {took:.1f} s")
    finally:
        figures.peak_bytes = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
    if figures.peak_bytes > MAX_PEAK:
        figures.problems.append(f"peak Python memory {figures.peak_bytes:,} bytes")
    return figures


def main() -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n")[0])
    parser.add_argument("--seconds", type=float, default=60.0)
    parser.add_argument("--seed", type=int, default=int(time.time()))
    args = parser.parse_args()
    figures = asyncio.run(fuzz(args.seconds, args.seed))
    print(
        f"seed {args.seed}: {figures.answers} answers ({len(figures.by_kind)} kinds), longest "
        f"check {figures.longest_cell:.2f} s, "
        f"peak Python memory {figures.peak_bytes / 2**20:.1f} MiB"
    )
    for problem in figures.problems:
        print(f"PROBLEM: {problem}")
    return 1 if figures.problems else 0


if __name__ == "__main__":
    sys.exit(main())
