"""The mock's compressed upstream leg (``mock-upstream --compress``), read by a client of our own.

The client here speaks HTTP/1.1 on asyncio streams and decodes with zlib
(and brotli) directly, not with the kit's helpers: what it checks is what a
gateway gets. A gzip answer's every write decodes on its own as it arrives
(a sync flush after each), to exactly the bytes the log says were written,
and the whole body to exactly the identity answer, whatever the pieces the
decoder is fed; the headers say the coding and ``Vary: Accept-Encoding``.
A request that asks for none, or a mock not told to compress, gets
identity. The ground truth: a hop of our own that asks the upstream for
gzip and decodes the whole answer before relaying it is judged
``not_streaming`` (held), and one that relays each piece as it decodes is
clean.
"""

from __future__ import annotations

import asyncio
import json
import random
import time
import zlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

import pytest

from kit_hops import Hop
from streamwire.kit.cli import parse_check
from streamwire.kit.client.raw import client_request
from streamwire.kit.judge.verdicts import cell_verdicts
from streamwire.kit.report.document import Report, build_report
from streamwire.kit.run.check import CheckPlan, Route, run_check
from streamwire.kit.upstream.coding import choose
from streamwire.kit.upstream.mock import MockUpstream, is_entry
from streamwire.kit.vocab.cases import CASES

Decode = Callable[[bytes], bytes]


@dataclass
class Answer:
    status: int
    headers: dict[str, str]
    #: Each piece of the body as it arrived (a chunk of the chunked coding,
    #: or a Content-Length body whole): (monotonic arrival, wire bytes, decoded).
    pieces: list[tuple[float, bytes, bytes]]
    #: What the decoder gave once the body ended.
    rest: bytes

    @property
    def wire(self) -> bytes:
        return b"".join(w for _, w, _ in self.pieces)

    @property
    def decoded(self) -> bytes:
        return b"".join(d for _, _, d in self.pieces) + self.rest


def _gunzip() -> tuple[Decode, Callable[[], bytes]]:
    d = zlib.decompressobj(31)
    return d.decompress, d.flush


def _unbrotli() -> tuple[Decode, Callable[[], bytes]]:
    brotli = pytest.importorskip("brotli")
    d = brotli.Decompressor()
    return d.process, lambda: b""


def _identity() -> tuple[Decode, Callable[[], bytes]]:
    return (lambda data: data), (lambda: b"")


DECODERS = {"gzip": _gunzip, "br": _unbrotli, None: _identity}


async def _ask(
    url: str, headers: Sequence[tuple[str, str]], body: bytes, accept: str | None
) -> Answer:
    """One request, its answer read piece by piece and decoded as each arrives."""
    parts = urlsplit(url)
    reader, writer = await asyncio.open_connection(parts.hostname, parts.port)
    target = parts.path + (f"?{parts.query}" if parts.query else "")
    lines = [f"POST {target} HTTP/1.1", f"host: {parts.netloc}"]
    lines += [f"{k}: {v}" for k, v in headers if k.lower() != "accept-encoding"]
    lines += [f"accept-encoding: {accept}"] if accept is not None else []
    lines += [f"content-length: {len(body)}", "connection: close"]
    writer.write(("\r\n".join(lines) + "\r\n\r\n").encode() + body)
    try:
        head = (await reader.readuntil(b"\r\n\r\n")).decode("latin-1")
        status_line, *header_lines = head[:-4].split("\r\n")
        fields = {}
        for line in header_lines:
            name, _, value = line.partition(":")
            fields[name.strip().lower()] = value.strip()
        coding = fields.get("content-encoding")
        feed, finish = DECODERS[coding]()
        pieces = []
        if fields.get("transfer-encoding") == "chunked":
            while size := int((await reader.readuntil(b"\r\n")).split(b";")[0], 16):
                data = await reader.readexactly(size)
                pieces.append((time.monotonic(), data, feed(data)))
                await reader.readexactly(2)
        else:
            data = await reader.readexactly(int(fields["content-length"]))
            pieces.append((time.monotonic(), data, feed(data)))
        return Answer(int(status_line.split()[1]), fields, pieces, finish())
    finally:
        writer.close()


def _request(
    mock: MockUpstream, client: str, case: str, delivery: str, *, stream: bool = True
) -> tuple[str, list[tuple[str, str]], bytes]:
    # Untagged: every request of a case gets the same answer, whatever its coding.
    url, headers, body = client_request(
        client, CASES[case], f"sw-{case}.{delivery}", mock.url, key="sk-test", stream=stream
    )
    return url, headers, json.dumps(body).encode()


def _run(coroutine: Any) -> Any:
    return asyncio.run(coroutine)


def _chunkings(data: bytes, seed: int = 47) -> list[list[bytes]]:
    """``data`` whole, byte by byte, and in random pieces (seeded)."""
    rng = random.Random(seed)
    cuts = sorted(rng.sample(range(1, len(data)), min(len(data) - 1, 40)))
    return [
        [data],
        [data[i : i + 1] for i in range(len(data))],
        [data[a:b] for a, b in zip([0, *cuts], [*cuts, len(data)], strict=True)],
    ]


def _decoded_in(coding: str, pieces: list[bytes]) -> bytes:
    feed, finish = DECODERS[coding]()
    return b"".join(feed(p) for p in pieces) + finish()


@pytest.mark.parametrize(
    ("accept", "offered", "chosen"),
    [
        ("gzip", ("gzip", "br"), "gzip"),
        ("gzip, deflate", ("gzip", "br"), "gzip"),
        ("br, gzip", ("gzip", "br"), "gzip"),  # the same weight: gzip
        ("gzip;q=0.5, br", ("gzip", "br"), "br"),
        ("br;q=0.9, gzip;q=0.8", ("gzip", "br"), "br"),
        ("br", ("gzip",), None),  # no brotli: identity
        ("br, gzip;q=0.1", ("gzip",), "gzip"),
        ("x-gzip", ("gzip",), "gzip"),
        ("GZIP;Q=1", ("gzip",), "gzip"),
        ("*", ("gzip", "br"), "gzip"),
        ("*;q=0.5, gzip;q=0", ("gzip", "br"), "br"),
        ("gzip;q=0", ("gzip", "br"), None),
        ("gzip;q=x", ("gzip",), None),
        ("identity", ("gzip", "br"), None),
        ("deflate", ("gzip", "br"), None),
        ("", ("gzip", "br"), None),
        (None, ("gzip", "br"), None),
    ],
)
def test_the_coding_is_the_one_the_request_weighs_highest(
    accept: str | None, offered: tuple[str, ...], chosen: str | None
) -> None:
    assert choose(accept, offered) == chosen


def _writes_decode_alone(answer: Answer, entry: dict[str, Any]) -> None:
    """Each write of the log arrived as one chunk that decoded to exactly its
    bytes (a flush after each), the wire bytes logged with it."""
    writes = entry["writes"]
    data = [p for p in answer.pieces if p[2]]
    assert [len(d) for _, _, d in data] == [w[1] for w in writes]
    assert [len(wire) for _, wire, _ in data] == [w[4] for w in writes]
    assert entry["bytes_sent"] == len(answer.decoded)
    assert entry["wire_bytes"] == len(answer.wire)
    assert is_entry(entry)


@pytest.mark.timed
def test_a_paced_gzip_stream_decodes_event_by_event_to_the_identity_answer() -> None:
    async def go() -> tuple[Answer, Answer, list[dict[str, Any]]]:
        async with MockUpstream(compress=True) as mock:
            url, headers, body = _request(mock, "openai-chat", "short-text", "paced")
            coded, plain = await asyncio.gather(
                _ask(url, headers, body, "gzip, deflate"), _ask(url, headers, body, "identity")
            )
            return coded, plain, mock.entries()

    coded, plain, entries = _run(go())
    assert coded.status == plain.status == 200
    assert coded.headers["content-encoding"] == "gzip"
    assert coded.headers["vary"] == "accept-encoding"
    assert coded.headers["content-type"] == "text/event-stream"
    assert "content-encoding" not in plain.headers
    assert plain.headers["vary"] == "accept-encoding"  # it depends on the request's codings
    assert coded.decoded == plain.decoded
    # Every chunk but the last (the finish: the gzip trailer) decodes to whole events.
    *events, finish = coded.pieces
    assert all(d.endswith(b"\n\n") for _, _, d in events)
    assert finish[2] == b"" and coded.rest == b""
    # Each event decoded when it arrived: the first long before the last.
    assert events[-1][0] - events[0][0] > 1.0, [round(t - events[0][0], 3) for t, _, _ in events]
    by_coding = {e["coding"]: e for e in entries}
    assert set(by_coding) == {"gzip", "identity"}
    _writes_decode_alone(coded, by_coding["gzip"])
    # The log's content is what the identity answer's is, write for write.
    strip = [[w[1], w[2], w[3]] for w in by_coding["gzip"]["writes"]]
    assert strip == [[w[1], w[2], w[3]] for w in by_coding["identity"]["writes"]]
    assert all(len(w) == 4 for w in by_coding["identity"]["writes"])
    assert by_coding["identity"]["wire_bytes"] == len(plain.wire)
    for pieces in _chunkings(coded.wire):
        assert _decoded_in("gzip", pieces) == plain.decoded


def test_br_and_eventstream_and_whole_answers_are_coded_too() -> None:
    pytest.importorskip("brotli")

    async def go() -> tuple[dict[str, tuple[Answer, Answer]], list[dict[str, Any]]]:
        async with MockUpstream(compress=True) as mock:
            asks = {
                "br sse": (
                    _request(mock, "anthropic", "single-tool", "tiny"),
                    "br;q=1, gzip;q=0.5",
                ),
                "gzip eventstream": (
                    _request(mock, "bedrock-converse", "short-text", "tiny"),
                    "gzip",
                ),
                "br eventstream": (_request(mock, "bedrock-invoke", "short-text", "whole"), "br"),
                "gzip unary": (
                    _request(mock, "openai-responses", "short-text", "unary", stream=False),
                    "gzip",
                ),
                "gzip error": (_request(mock, "openai-chat", "short-text", "pacde"), "gzip"),
            }
            out = {}
            for name, ((url, headers, body), accept) in asks.items():
                out[name] = await asyncio.gather(
                    _ask(url, headers, body, accept), _ask(url, headers, body, None)
                )
            return out, mock.entries()

    answers, entries = _run(go())
    for name, (coded, plain) in answers.items():
        coding = name.split()[0]
        assert coded.headers.get("content-encoding") == coding, name
        assert "content-encoding" not in plain.headers, name
        assert coded.status == plain.status, name
        assert coded.decoded == plain.decoded and plain.decoded, name
        for pieces in _chunkings(coded.wire):
            assert _decoded_in(coding, pieces) == plain.decoded, name
    assert answers["gzip error"][0].status == 400
    assert answers["gzip unary"][0].headers["content-length"] == str(
        len(answers["gzip unary"][0].wire)
    )
    assert json.loads(answers["gzip unary"][0].decoded)["object"] == "response"
    streamed = [
        e for e in entries if e["stream"] and e["status"] == 200 and e["coding"] != "identity"
    ]
    assert len(streamed) == 3
    for entry in streamed:
        assert is_entry(entry)
        assert all(len(w) == 5 for w in entry["writes"])
        assert sum(w[1] for w in entry["writes"]) == entry["bytes_sent"]
    # Every write of a coded stream decodes alone, EventStream's cut in 1-7 byte pieces too.
    for name, upstream in (("br sse", "anthropic"), ("gzip eventstream", "bedrock-converse")):
        (entry,) = [e for e in streamed if e["upstream"] == upstream]
        _writes_decode_alone(answers[name][0], entry)


def test_identity_unless_asked_and_unless_the_mock_compresses() -> None:
    async def go() -> tuple[list[Answer], list[Answer], list[dict[str, Any]]]:
        async with MockUpstream() as plain_mock, MockUpstream(compress=True) as mock:
            mock.codings = ("gzip",)  # as without the brotli package
            url, headers, body = _request(plain_mock, "openai-chat", "short-text", "whole")
            not_compressing = [await _ask(url, headers, body, a) for a in ("gzip", "gzip, br")]
            url, headers, body = _request(mock, "openai-chat", "short-text", "whole")
            compressing = [
                await _ask(url, headers, body, a)
                for a in (None, "identity", "gzip;q=0", "deflate", "br", "br, gzip;q=0.2")
            ]
            return not_compressing, compressing, mock.entries()

    not_compressing, compressing, entries = _run(go())
    for answer in not_compressing:
        assert "content-encoding" not in answer.headers and "vary" not in answer.headers
    *identity, gzipped = compressing
    for answer in identity:
        assert "content-encoding" not in answer.headers
        assert answer.decoded == not_compressing[0].decoded
    assert gzipped.headers["content-encoding"] == "gzip"
    assert gzipped.decoded == not_compressing[0].decoded
    assert [e["coding"] for e in entries] == [*["identity"] * 5, "gzip"]
    # br asked for and not sent: the log says so.
    assert "brotli package is not installed" in entries[4]["coding_note"]
    assert "coding_note" not in entries[3]


def test_the_slow_reader_s_answer_is_never_compressed() -> None:
    async def go() -> tuple[Answer, dict[str, Any]]:
        async with MockUpstream(compress=True) as mock:
            mock.set_tag_options("small", {"answer_bytes": 512})
            url, headers, body = client_request(
                "openai-chat", CASES["slow-reader"], "sw-slow-reader.whole.small", mock.url
            )
            answer = await _ask(url, headers, json.dumps(body).encode(), "gzip")
            (entry,) = mock.entries()
            return answer, entry

    answer, entry = _run(go())
    assert "content-encoding" not in answer.headers
    assert answer.headers["vary"] == "accept-encoding"
    assert entry["coding"] == "identity" and "slow reader" in entry["coding_note"]
    assert entry["wire_bytes"] == entry["bytes_sent"] == len(answer.decoded) >= 512


def test_the_option_reaches_the_mock_from_the_command_line_and_the_config(
    tmp_path: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert parse_check(["http://gw", "--mock-compress"]).mock_compress is True
    assert parse_check(["http://gw"]).mock_compress is False
    config = tmp_path / "check.toml"
    config.write_text('base_url = ["http://gw"]\nclient = "openai-chat"\nmock_compress = true\n')
    assert parse_check(["--config", str(config)]).mock_compress is True
    seen: list[bool] = []

    class Spy(MockUpstream):
        def __init__(self, *args: Any, **kwargs: Any) -> None:
            seen.append(kwargs.get("compress", False))
            super().__init__(*args, **kwargs)

    monkeypatch.setattr("streamwire.kit.run.check.MockUpstream", Spy)
    plan = CheckPlan(routes=[Route("http://127.0.0.1:9")], cases=[], mock_compress=True)
    _run(run_check(plan))
    assert seen == [True]


def _hop_check(behaviour: str) -> tuple[Report, list[dict[str, Any]]]:
    async def go() -> tuple[Report, list[dict[str, Any]]]:
        async with MockUpstream(compress=True) as mock, Hop(mock.url, behaviour) as hop:
            plan = CheckPlan(
                routes=[Route(hop.url, label=behaviour, key_passthrough=True)],
                clients=["openai-chat", "bedrock-converse"],
                cases=["short-text"],
                deliveries=["paced"],
                unary=False,
                mock_url=mock.url,
                read_timeout=8.0,
            )
            return build_report(await run_check(plan)), mock.entries()

    return _run(go())


@pytest.mark.timed
def test_a_hop_decoding_the_answer_whole_holds_it_one_decoding_as_it_reads_streams() -> None:
    async def both() -> list[tuple[Report, list[dict[str, Any]]]]:
        loop = asyncio.get_running_loop()
        return list(
            await asyncio.gather(
                *(loop.run_in_executor(None, _hop_check, b) for b in ("gunzip_hold", "gunzip"))
            )
        )

    (held, held_log), (honest, honest_log) = _run(both())
    for log in (held_log, honest_log):
        # The hop asked for gzip and got it: what it did with it is all that differs.
        assert {e["coding"] for e in log} == {"gzip"}
    assert {v["name"] for v in held.verdicts} == {"not_streaming"}, held.verdicts
    for cell in held.cells:
        assert {layer for _, layer in cell_verdicts(cell)} == {"streaming"}, cell.as_dict()
        assert "held" in cell.checks["streaming"].tags
    assert honest.verdicts == [], honest.verdicts
    for cell in honest.cells:
        assert not cell.failed and not cell.degraded, cell.as_dict()
        assert cell.checks["streaming"].verdict == "pass", cell.checks["streaming"]
