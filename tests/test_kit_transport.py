"""Transports: the cases read as curl reads them and as the SDKs do (compressed).

The plan's cells per transport, and a real nginx in front of the mock with
``gzip on; gzip_types text/event-stream;`` and its default buffering, the
configuration the field reports most ("curl streams fine, browsers do
not"), and the same with the fix (event streams left out of compression).

Ground truth first: a reader of the test's own (a socket, the chunked coding
and gzip undone here, each event timestamped as it decodes) measures what
the hop does for each ``Accept-Encoding``; then the kit must say the same:
``compression_buffered`` on the compressed transport where identity
streamed, and nothing where the fix is in.
"""

from __future__ import annotations

import asyncio
import itertools
import json
import os
import shutil
import socket
import ssl
import statistics
import subprocess
import threading
import time
import zlib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from servers.background import MockInBackground
from servers.nginx import Nginx, find_nginx
from servers.processes import free_port, make_ca, wait_listening
from streamwire.kit.cli import main as kit_main
from streamwire.kit.judge.verdicts import verdicts
from streamwire.kit.run.check import CheckPlan, Route, run_check
from streamwire.kit.vocab.cases import CASES
from streamwire.kit.vocab.transport import (
    DEFAULT_TRANSPORTS,
    TRANSPORTS,
    client_label,
    parse_transports,
    split_label,
)


def test_transport_names_parse_and_labels_round_trip() -> None:
    assert parse_transports("all") == tuple(TRANSPORTS)
    assert parse_transports("http1-gzip, http1,http1-gzip") == ("http1-gzip", "http1")
    with pytest.raises(ValueError, match="unknown transport h3"):
        parse_transports("http1,h3")
    assert DEFAULT_TRANSPORTS == ("http1", "http1-gzip")
    for name, transport in TRANSPORTS.items():
        label = client_label("anthropic", name)
        assert split_label(label) == ("anthropic", transport)
    assert client_label("anthropic", "http1") == "anthropic"


def test_the_other_transports_read_the_plain_cases_paced() -> None:
    plan = CheckPlan(
        routes=[Route("http://127.0.0.1:1")],
        clients=["openai-chat"],
        cases=["short-text", "cancel", "slow-reader", "long-text"],
        deliveries=["whole", "paced"],
        transports=["http1", "http1-gzip"],
    )
    keys = [(case, client, delivery) for _, case, client, delivery in plan.keys()]
    first = [k for k in keys if k[1] == "openai-chat"]
    gzip = [k for k in keys if k[1] == "openai-chat over http1-gzip"]
    assert {c for c, _, _ in first} == {"short-text", "cancel", "slow-reader", "long-text"}
    plain = {name for name in plan.cases if CASES[name].kind.plain}
    assert plain == {"short-text", "long-text"}
    assert gzip == [
        (name, "openai-chat over http1-gzip", "paced") for name in plan.cases if name in plain
    ]
    with pytest.raises(ValueError, match="unknown transport"):
        CheckPlan(routes=[Route("http://127.0.0.1:1")], transports=["h2c"])


# --- a real nginx that compresses event streams -------------------------------------------

_LOCATIONS = """\
        location /gzip/ {
            proxy_pass http://127.0.0.1:{upstream}/;
            gzip on;
            gzip_types text/event-stream;
        }
        location /gzip-fixed/ {
            proxy_pass http://127.0.0.1:{upstream}/;
            gzip on;
        }"""


@pytest.fixture
def mock_and_nginx() -> Iterator[tuple[MockInBackground, Nginx]]:
    binary = find_nginx()
    if binary is None:
        message = "nginx is not installed (apt-get install nginx; .ci/run installs it)"
        if os.environ.get("CI"):
            pytest.fail(message + " - required under CI")
        pytest.skip(message)
    background = MockInBackground()
    proxy = Nginx(binary, int(background.mock.url.rpartition(":")[2]), locations=_LOCATIONS)
    try:
        yield background, proxy.start()
    finally:
        proxy.close()
        background.close()


def _raw_events(
    port: int, path: str, accept: str, model: str = "sw-short-text.paced"
) -> tuple[list[float], str | None]:
    """Ground truth without the kit: each SSE event's arrival, the chunked
    coding and gzip undone here, timed from the request; the content coding."""
    body = json.dumps(
        {
            "model": model,
            "stream": True,
            "messages": [{"role": "user", "content": "hi"}],
        }
    ).encode()
    head = (
        f"POST {path}v1/chat/completions HTTP/1.1\r\nhost: 127.0.0.1:{port}\r\n"
        f"content-type: application/json\r\nauthorization: Bearer k\r\n"
        f"accept-encoding: {accept}\r\ncontent-length: {len(body)}\r\nconnection: close\r\n\r\n"
    ).encode()
    started = time.monotonic()
    times: list[float] = []
    with socket.create_connection(("127.0.0.1", port), timeout=30) as sock:
        sock.sendall(head + body)
        raw = b""
        while b"\r\n\r\n" not in raw:
            raw += sock.recv(65536)
        response_head, _, rest = raw.partition(b"\r\n\r\n")
        headers = dict(
            line.decode().lower().split(": ", 1) for line in response_head.split(b"\r\n")[1:]
        )
        coding = headers.get("content-encoding")
        gunzip = zlib.decompressobj(31) if coding == "gzip" else None
        chunked, text = rest, b""
        while True:
            # De-chunk what has arrived; decode it; count the events it completes.
            while True:
                size_line, sep, after = chunked.partition(b"\r\n")
                if not sep:
                    break
                size = int(size_line, 16)
                if len(after) < size + 2:
                    break
                data, chunked = after[:size], after[size + 2 :]
                if size == 0:
                    return times, coding
                text += gunzip.decompress(data) if gunzip else data
                while b"\n\n" in text:
                    _, _, text = text.partition(b"\n\n")
                    times.append(time.monotonic() - started)
            more = sock.recv(65536)
            if not more:
                return times, coding
            chunked += more


def _spread(times: list[float]) -> float:
    return times[-1] - times[0]


@pytest.mark.timed
def test_nginx_gzip_holds_what_it_compresses_and_the_kit_says_so(
    mock_and_nginx: tuple[MockInBackground, Nginx],
) -> None:
    background, proxy = mock_and_nginx
    mock = background.mock
    # Ground truth: identity streams (the events spread as the mock paces
    # them), gzip holds (every event at once, at the end).
    identity, coding = _raw_events(proxy.port, "/gzip/", "identity")
    assert coding is None and _spread(identity) > 1.0
    held, coding = _raw_events(proxy.port, "/gzip/", "gzip, deflate")
    assert coding == "gzip" and _spread(held) < 0.2 and held[0] > 1.0
    fixed, coding = _raw_events(proxy.port, "/gzip-fixed/", "gzip, deflate")
    assert coding is None and _spread(fixed) > 1.0

    def check(path: str) -> list[Any]:
        plan = CheckPlan(
            routes=[Route(f"http://127.0.0.1:{proxy.port}{path}", label=path.strip("/"))],
            mock_url=mock.url,
            clients=["openai-chat", "anthropic"],
            cases=["short-text"],
            deliveries=["paced"],
            unary=False,
            key="sk-test",
            transports=["http1", "http1-gzip"],
            sdks=["openai", "anthropic"],
        )
        cells: list[Any] = background.run(run_check(plan))
        return cells

    cells = {c.client: c for c in check("/gzip/")}
    assert set(cells) == {
        "openai-chat",
        "anthropic",
        "openai-chat over http1-gzip",
        "anthropic over http1-gzip",
        "openai-chat via openai",
        "anthropic via anthropic",
    }
    # The SDKs ask for gzip too (httpx): timed as they yield their events,
    # their answers are held for the same cause.
    for sdk in ("openai-chat via openai", "anthropic via anthropic"):
        streaming = cells[sdk].checks["streaming"]
        assert {"held", "compression_buffered"} <= set(streaming.tags), streaming.why
    for protocol in ("openai-chat", "anthropic"):
        assert cells[protocol].checks["streaming"].verdict == "pass"
        assert cells[protocol].transport == "http1"
        gzip = cells[f"{protocol} over http1-gzip"]
        streaming = gzip.checks["streaming"]
        assert gzip.transport == "http1-gzip" and streaming.verdict == "fail"
        assert {"held", "compressed", "compression_buffered"} <= set(streaming.tags)
        assert streaming.details["content_encoding"] == "gzip"
        assert gzip.evidence["client"]["content_encoding"] == "gzip"
        assert gzip.checks["deltas"].verdict == "pass"  # decoded, every delta there
        assert gzip.as_dict()["transport"] == "http1-gzip"
    found_verdicts = verdicts(cells.values())
    # nginx answered (its Server header): its own setting is named.
    assert all("this route's hop is nginx: gzip_types" in v["advice"] for v in found_verdicts)
    found = {(v["name"], v["client"]) for v in found_verdicts}
    assert found == {
        ("compression_buffered", "openai-chat over http1-gzip"),
        ("compression_buffered", "anthropic over http1-gzip"),
        ("compression_buffered", "openai-chat via openai"),
        ("compression_buffered", "anthropic via anthropic"),
    }
    fixed_cells = check("/gzip-fixed/")
    assert all(c.checks["streaming"].verdict == "pass" for c in fixed_cells)
    assert not verdicts(fixed_cells)


# --- a real caddy with encode gzip ------------------------------------------------------------

_CADDY_ENCODE = """\
{{
    admin off
    auto_https off
    storage file_system {tmp}/data
}}
http://127.0.0.1:{port} {{
    encode gzip
    reverse_proxy 127.0.0.1:{upstream}
}}
"""


@pytest.fixture
def mock_and_caddy_encode(tmp_path: Path) -> Iterator[tuple[MockInBackground, int]]:
    binary = shutil.which("caddy")
    if binary is None:
        message = "caddy is not installed (apt-get install caddy; .ci/run installs it)"
        if os.environ.get("CI"):
            pytest.fail(message + " - required under CI")
        pytest.skip(message)
    background = MockInBackground()
    port = free_port()
    conf = tmp_path / "Caddyfile"
    conf.write_text(_CADDY_ENCODE.format(tmp=tmp_path, port=port, upstream=background.port))
    proc = subprocess.Popen(
        [binary, "run", "--config", str(conf), "--adapter", "caddyfile"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        wait_listening(port, proc, "caddy", timeout=15)
        yield background, port
    finally:
        proc.terminate()
        proc.wait(10)
        background.close()


@pytest.mark.timed
def test_caddy_encode_batches_what_it_compresses_and_the_kit_says_so(
    mock_and_caddy_encode: tuple[MockInBackground, int],
) -> None:
    background, port = mock_and_caddy_encode
    # Ground truth: a long answer streams event by event with identity (the
    # mock writes every 20 ms); asked for gzip, caddy compresses it and sends
    # what its compressor flushed, in batches about 100 ms apart.
    plain, coding = _raw_events(port, "/", "identity", "sw-long-text.paced")
    assert coding is None
    packed, coding = _raw_events(port, "/", "gzip, deflate", "sw-long-text.paced")
    assert coding == "gzip" and len(packed) == len(plain)

    def median_gap(times: list[float]) -> float:
        # Between arrivals, not inside one: events a read decodes together
        # come microseconds to a millisecond apart.
        return statistics.median(b - a for a, b in itertools.pairwise(times) if b - a > 0.005)

    assert median_gap(plain) < 0.05 and median_gap(packed) > 0.06
    plan = CheckPlan(
        routes=[Route(f"http://127.0.0.1:{port}", label="caddy-encode")],
        mock_url=background.mock.url,
        clients=["openai-chat"],
        cases=["long-text"],
        deliveries=["paced"],
        unary=False,
        key="sk-test",
        transports=["http1", "http1-gzip"],
    )
    cells = {c.client: c for c in background.run(run_check(plan))}
    assert cells["openai-chat"].checks["streaming"].verdict == "pass"
    streaming = cells["openai-chat over http1-gzip"].checks["streaming"]
    assert streaming.verdict == "degraded"
    assert {"delayed", "compressed"} <= set(streaming.tags), streaming.why
    assert streaming.details["content_encoding"] == "gzip"
    (found,) = verdicts(cells.values())
    assert (found["name"], found["client"]) == ("stream_delayed", "openai-chat over http1-gzip")
    assert "compressor" in found["advice"] and "Caddy: encode's match" in found["advice"]


# --- TLS: a front the kit must be told to trust ---------------------------------------------


class _TlsFront:
    """A TLS front of the test's own (certificate from a CA the test makes)
    that relays every connection's bytes to the mock: HTTPS outside, the
    mock's HTTP/1.1 inside, in a thread with its own loop."""

    def __init__(self, files: dict[str, Path], upstream: int) -> None:
        self.context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        self.context.load_cert_chain(files["cert"], files["key"])
        self.upstream = upstream
        self.loop = asyncio.new_event_loop()
        self.port = 0
        ready = threading.Event()
        self.thread = threading.Thread(target=self._run, args=(ready,), daemon=True)
        self.thread.start()
        ready.wait(10)

    def _run(self, ready: threading.Event) -> None:
        asyncio.set_event_loop(self.loop)
        server = self.loop.run_until_complete(
            asyncio.start_server(self._relay, "127.0.0.1", 0, ssl=self.context)
        )
        self.port = server.sockets[0].getsockname()[1]
        ready.set()
        self.loop.run_forever()
        server.close()

    async def _relay(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            up_reader, up_writer = await asyncio.open_connection("127.0.0.1", self.upstream)
        except OSError:
            writer.close()
            return

        async def pipe(src: asyncio.StreamReader, dst: asyncio.StreamWriter) -> None:
            try:
                while data := await src.read(65536):
                    dst.write(data)
                    await dst.drain()
            except (ConnectionError, OSError):
                pass
            finally:
                dst.close()

        await asyncio.gather(pipe(reader, up_writer), pipe(up_reader, writer))

    def close(self) -> None:
        self.loop.call_soon_threadsafe(self.loop.stop)
        self.thread.join(10)


def test_an_https_front_the_kit_cannot_verify_ends_the_run_naming_cacert(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    files = make_ca(tmp_path)
    if files is None:
        pytest.skip("openssl is not installed")
    background = MockInBackground()
    mock = background.mock
    front = _TlsFront(files, int(mock.url.rpartition(":")[2]))
    try:
        argv = [
            "check", f"https://127.0.0.1:{front.port}", "--mock", mock.url,
            "--client", "openai-chat", "--cases", "short-text", "--delivery", "whole",
            "--no-unary", "--quiet", "--transport", "http1,http1-gzip", "--key-passthrough",
        ]  # fmt: skip
        assert kit_main(argv) == 2
        err = capsys.readouterr().err
        assert "cannot be verified" in err and "--cacert" in err and "--insecure" in err
        report = tmp_path / "r.json"
        assert kit_main([*argv, "--cacert", str(files["ca"]), "--json", str(report)]) == 0
        cells = json.loads(report.read_text())["cells"]
        assert {(c["client"], c["transport"]) for c in cells} == {
            ("openai-chat", "http1"),
            ("openai-chat over http1-gzip", "http1-gzip"),
        }
        assert kit_main([*argv, "--insecure"]) == 0
        assert kit_main([*argv, "--cacert", str(tmp_path / "missing.pem")]) == 2
        assert "--cacert" in capsys.readouterr().err
    finally:
        front.close()
        background.close()
