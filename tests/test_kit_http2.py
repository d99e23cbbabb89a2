"""The http2 transport: the kit's HTTP/2 client against fronts that speak it.

* hops of the tests' own (``servers/h2relay.py``, h2c): an honest relay, on
  which every case passes over HTTP/2 (the slow reader through the
  flow-control window), and one that hears a stream's RST_STREAM and reads
  its upstream on, which the kit names ``cancel_not_propagated`` and nothing
  else: over HTTP/2 the reset alone is the client's cancel;
* a server that speaks no HTTP/2 (the mock itself): the run ends, exit 2,
  naming h2c and what to do, never a gateway verdict;
* a real nghttpx (Debian's nghttp2-proxy, installed by ``.ci/run``) as an
  HTTPS front with a CA the test makes, ALPN h2: ground truth first, from a
  reader of the test's own (``h2`` driven by hand, each event timed as its
  frame arrives), then the kit over http1 and http2;
* fronts that speak HTTP/2 alone, read over HTTP/1.1 (the default
  transports): the h2c relay (its SETTINGS and GOAWAY where a status line
  should be), the relay over TLS (ALPN agrees nothing, then HTTP/2 frames),
  and nghttpx with h2 alone in ALPN (agrees nothing, then closes): the run
  ends, exit 2, naming ``--transport http2``, never a gateway verdict; beside
  a route that speaks HTTP/1.1, the front's HTTP/1.1 cells are left out and
  named; each front read with ``--transport http2`` passes.
"""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import socket
import ssl
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("h2")

from h2.config import H2Configuration
from h2.connection import H2Connection
from h2.events import DataReceived, ResponseReceived, StreamEnded

from servers.background import MockInBackground
from servers.h2relay import H2Relay
from servers.processes import free_port, make_ca, wait_listening
from streamwire.kit.cli import main as kit_main
from streamwire.kit.judge.verdicts import verdicts
from streamwire.kit.run.check import CheckPlan, Route, run_check
from streamwire.kit.vocab.httpio import Http2Only, Trust, open_request


@pytest.fixture
def background() -> Iterator[MockInBackground]:
    mock = MockInBackground()
    try:
        yield mock
    finally:
        mock.close()


def _check(
    background: MockInBackground,
    url: str,
    cases: list[str],
    deliveries: tuple[str, ...] = ("paced",),
    **options: Any,
) -> dict[tuple[str, str, str], Any]:
    plan = CheckPlan(
        routes=[Route(url)],
        mock_url=background.mock.url,
        clients=["openai-chat", "anthropic"],
        cases=cases,
        deliveries=list(deliveries),
        unary=False,
        key="sk-test",
        transports=["http2"],
        **options,
    )
    cells: list[Any] = background.run(run_check(plan))
    return {(c.case, c.client, c.delivery): c for c in cells}


def _firm(cell: Any) -> list[tuple[str, str]]:
    """The layers a cell failed that no clock decided (a busy machine's
    timings are not gated: ``Cell.outcome``)."""
    return [(layer, verdict) for layer, verdict in cell.outcome if verdict in ("fail", "degraded")]


def _firm_verdicts(cells: Any) -> list[dict[str, Any]]:
    return [v for v in verdicts(cells) if set(v["cases"]) - set(v["timed_cases"])]


def test_an_honest_h2_relay_passes_every_case_over_http2(background: MockInBackground) -> None:
    relay = H2Relay(background.port, on_reset="cancel")
    try:
        cells = _check(
            background,
            f"http://127.0.0.1:{relay.port}",
            ["short-text", "single-tool", "cancel", "slow-reader"],
            ("paced", "whole"),
            # The relay shares this process (and its GIL) with the client and
            # the slow-reader cells' 83 MB through it: beside a busy loop a CI
            # run saw a connection wait over the default 10 s.
            connect_timeout=60.0,
        )
    finally:
        relay.close()
    assert {case for case, _, _ in cells} == {"short-text", "single-tool", "cancel", "slow-reader"}
    for cell in cells.values():
        assert cell.transport == "http2"
        client = cell.evidence["client"]
        if cell.case == "cancel" and client["status"] is None:
            # On a busy machine the cancel case's timer can fire before the
            # head arrives: no response, so no version (a CI run saw it).
            assert client["http_version"] is None
        else:
            assert client["http_version"] == "2", client
        assert "--http2-prior-knowledge" in (cell.reproduce or ""), cell.reproduce
        assert _firm(cell) == [], (cell.case, cell.client)
    assert not _firm_verdicts(cells.values())


def test_a_hop_deaf_to_rst_stream_is_cancel_not_propagated_alone(
    background: MockInBackground,
) -> None:
    relay = H2Relay(background.port, on_reset="ignore")
    try:
        cells = _check(background, f"http://127.0.0.1:{relay.port}", ["short-text", "cancel"])
    finally:
        relay.close()
    found = {(v["name"], v["client"]) for v in _firm_verdicts(cells.values())}
    assert found == {
        ("cancel_not_propagated", "openai-chat over http2"),
        ("cancel_not_propagated", "anthropic over http2"),
    }
    for client in ("openai-chat over http2", "anthropic over http2"):
        assert _firm(cells[("short-text", client, "paced")]) == []


def test_http2_against_a_server_without_it_ends_the_run_naming_h2c(
    background: MockInBackground, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = [
        "check", background.mock.url, "--mock", background.mock.url, "--client", "openai-chat",
        "--cases", "short-text", "--delivery", "paced", "--no-unary", "--quiet",
        "--transport", "http2", "--key-passthrough",
    ]  # fmt: skip
    assert kit_main(argv) == 2
    err = capsys.readouterr().err
    assert "does not speak HTTP/2 with prior knowledge (h2c)" in err
    assert "leave http2 out of --transport" in err


def test_a_route_without_http2_beside_one_with_it_is_named_and_its_http2_cells_left_out(
    background: MockInBackground, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    relay = H2Relay(background.port)
    try:
        report = tmp_path / "r.json"
        argv = [
            "check", "--path", f"direct={background.mock.url}",
            "--path", f"relay=http://127.0.0.1:{relay.port}", "--mock", background.mock.url,
            "--client", "openai-chat", "--cases", "short-text", "--delivery", "paced",
            "--no-unary", "--quiet", "--transport", "http2", "--key-passthrough",
            "--json", str(report),
        ]  # fmt: skip
        assert kit_main(argv) == 0
    finally:
        relay.close()
    err = capsys.readouterr().err
    assert "route direct:" in err and "its http2 cells were not run" in err
    cells = json.loads(report.read_text())["cells"]
    assert [(c["route"], c["transport"]) for c in cells] == [("relay", "http2")]


def test_the_http2_transport_asks_for_h2_when_h2_is_missing(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import builtins

    real_import = builtins.__import__

    def no_h2(name: str, *args: Any, **kwargs: Any) -> Any:
        if name == "h2" or name.startswith("h2."):
            raise ImportError(name)
        return real_import(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", no_h2)
    with pytest.raises(ValueError, match=r"streamwire\[kit-h2\]"):
        CheckPlan(routes=[Route("http://127.0.0.1:1")], transports=["http1", "http2"])
    CheckPlan(routes=[Route("http://127.0.0.1:1")], transports=["http1"])


# --- a real nghttpx as an HTTPS front -------------------------------------------------------


@pytest.fixture
def nghttpx_front(
    background: MockInBackground, tmp_path: Path, request: pytest.FixtureRequest
) -> Iterator[tuple[int, dict[str, Path]]]:
    """nghttpx on a free port, its options (``request.param``) added."""
    options: tuple[str, ...] = getattr(request, "param", ())
    binary = shutil.which("nghttpx") or (
        "/usr/sbin/nghttpx" if Path("/usr/sbin/nghttpx").exists() else None
    )
    files = make_ca(tmp_path)
    if binary is None or files is None:
        message = "nghttpx or openssl is not installed (apt-get install nghttp2-proxy openssl)"
        if os.environ.get("CI"):
            pytest.fail(message + " - required under CI")
        pytest.skip(message)
    port = free_port()
    proc = subprocess.Popen(
        [
            binary,
            "--conf=/dev/null",
            f"--frontend=127.0.0.1,{port}",
            f"--backend=127.0.0.1,{background.port}",
            "--workers=1",
            "--no-ocsp",
            f"--errorlog-file={tmp_path / 'error.log'}",
            "--accesslog-file=/dev/null",
            *options,
            str(files["key"]),
            str(files["cert"]),
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        wait_listening(port, proc, "nghttpx", timeout=10)
        yield port, files
    finally:
        proc.terminate()
        proc.wait(10)


def _raw_h2_events(port: int, ca: Path) -> tuple[list[float], str]:
    """Ground truth without the kit: one HTTP/2 request over TLS with ``h2``
    driven by hand; each SSE event's arrival, timed as its frame arrives."""
    context = ssl.create_default_context(cafile=str(ca))
    context.set_alpn_protocols(["h2"])
    body = json.dumps(
        {
            "model": "sw-short-text.paced",
            "stream": True,
            "messages": [{"role": "user", "content": "hi"}],
        }
    ).encode()
    conn = H2Connection(H2Configuration(client_side=True, header_encoding="utf-8"))
    times: list[float] = []
    with (
        socket.create_connection(("127.0.0.1", port), timeout=30) as raw,
        context.wrap_socket(raw, server_hostname="127.0.0.1") as sock,
    ):
        protocol = sock.selected_alpn_protocol() or ""
        conn.initiate_connection()
        conn.send_headers(
            1,
            [
                (":method", "POST"), (":scheme", "https"), (":authority", f"127.0.0.1:{port}"),
                (":path", "/v1/chat/completions"), ("content-type", "application/json"),
                ("authorization", "Bearer k"), ("content-length", str(len(body))),
            ],
        )  # fmt: skip
        conn.send_data(1, body, end_stream=True)
        sock.sendall(conn.data_to_send())
        started = time.monotonic()
        text = b""
        while True:
            data = sock.recv(65536)
            if not data:
                return times, protocol
            for event in conn.receive_data(data):
                if isinstance(event, ResponseReceived):
                    assert dict(event.headers)[":status"] == "200"
                elif isinstance(event, DataReceived):
                    conn.acknowledge_received_data(event.flow_controlled_length, 1)
                    text += event.data
                    while b"\n\n" in text:
                        _, _, text = text.partition(b"\n\n")
                        times.append(time.monotonic() - started)
                elif isinstance(event, StreamEnded):
                    return times, protocol
            sock.sendall(conn.data_to_send())


@pytest.mark.timed
def test_nghttpx_as_an_https_h2_front_streams_and_the_kit_says_so(
    background: MockInBackground, nghttpx_front: tuple[int, dict[str, Path]]
) -> None:
    port, files = nghttpx_front
    # Ground truth: over h2, the paced events spread as the mock paces them.
    times, protocol = _raw_h2_events(port, files["ca"])
    assert protocol == "h2"
    assert len(times) >= 8 and times[-1] - times[0] > 1.0
    url = f"https://127.0.0.1:{port}"
    cells = _check(
        background,
        url,
        ["short-text", "cancel", "slow-reader"],
        ("paced", "whole"),
        tls=Trust(cafile=str(files["ca"])),
    )
    for cell in cells.values():
        assert cell.evidence["client"]["http_version"] == "2"
        assert _firm(cell) == [], (cell.case, cell.client)
    # The reset reached the mock: the cancel cells' upstream requests ended
    # as the client hung up, with the connection to nghttpx still open.
    assert not _firm_verdicts(cells.values())


# --- fronts that speak HTTP/2 alone, read over HTTP/1.1 -------------------------------------


def _kit(background: MockInBackground, *routes: str, options: tuple[str, ...] = ()) -> list[str]:
    """``streamwire check``'s arguments for one paced short-text cell per route and transport."""
    return [
        "check", *routes, "--mock", background.mock.url, "--client", "openai-chat",
        "--cases", "short-text", "--delivery", "paced", "--no-unary", "--quiet",
        "--key-passthrough", *options,
    ]  # fmt: skip


def test_an_h2c_only_front_read_over_http1_ends_the_run_naming_transport_http2(
    background: MockInBackground, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    relay = H2Relay(background.port)
    url = f"http://127.0.0.1:{relay.port}"
    report = tmp_path / "r.json"
    try:
        assert kit_main(_kit(background, url)) == 2  # the default transports: HTTP/1.1
        err = capsys.readouterr().err
        http2 = ("--transport", "http2", "--json", str(report))
        assert kit_main(_kit(background, url, options=http2)) == 0
    finally:
        relay.close()
    assert f"{url} speaks HTTP/2 alone" in err
    assert "HTTP/2 frames (SETTINGS, GOAWAY)" in err
    assert "check it with --transport http2" in err
    assert "gateway_unreachable" not in err
    cells = json.loads(report.read_text())["cells"]
    assert [(c["transport"], c["evidence"]["client"]["http_version"]) for c in cells] == [
        ("http2", "2")
    ]


def test_a_route_that_speaks_http2_alone_beside_one_that_speaks_http1_is_named(
    background: MockInBackground, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    # Each route is read over what it speaks: the mock over http1 (its http2
    # cells left out: no h2c), the relay over http2 (its http1 cells left out).
    relay = H2Relay(background.port)
    report = tmp_path / "r.json"
    try:
        argv = _kit(
            background,
            options=(
                "--path", f"direct={background.mock.url}",
                "--path", f"relay=http://127.0.0.1:{relay.port}",
                "--transport", "http1,http2", "--json", str(report),
            ),
        )  # fmt: skip
        assert kit_main(argv) == 0
    finally:
        relay.close()
    err = capsys.readouterr().err
    assert "route relay:" in err and "its HTTP/1.1 cells were not run" in err
    assert "route direct:" in err and "its http2 cells were not run" in err
    cells = json.loads(report.read_text())["cells"]
    assert [(c["route"], c["transport"]) for c in cells] == [
        ("direct", "http1"),
        ("relay", "http2"),
    ]


def test_an_https_front_that_agrees_no_alpn_then_speaks_h2_is_http2_only(
    background: MockInBackground, tmp_path: Path
) -> None:
    files = make_ca(tmp_path)
    if files is None:
        pytest.skip("openssl is not installed")
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(files["cert"], files["key"])
    context.set_alpn_protocols(["h2"])
    relay = H2Relay(background.port, tls=context)
    url = f"https://127.0.0.1:{relay.port}/_sw/cases"
    trust = Trust(cafile=str(files["ca"]))

    async def read(http2: bool) -> tuple[int, str]:
        response = await open_request(url, method="GET", context=trust, http2=http2)
        await response.read()
        return response.status, response.http_version

    try:
        with pytest.raises(Http2Only) as refused:
            asyncio.run(read(http2=False))
        assert asyncio.run(read(http2=True)) == (200, "2")
    finally:
        relay.close()
    message = str(refused.value)
    assert message.startswith(f"https://127.0.0.1:{relay.port} speaks HTTP/2 alone")
    assert "HTTP/2 frames (SETTINGS" in message and "--transport http2" in message


@pytest.mark.parametrize("nghttpx_front", [("--npn-list=h2",)], indirect=True)
def test_nghttpx_with_h2_alone_in_alpn_read_over_http1_ends_the_run_naming_transport_http2(
    background: MockInBackground,
    nghttpx_front: tuple[int, dict[str, Path]],
    capsys: pytest.CaptureFixture[str],
    tmp_path: Path,
) -> None:
    # nghttpx agrees no protocol with a client that offers only http/1.1, then
    # closes the connection without a byte: its choosing h2 is the evidence.
    port, files = nghttpx_front
    url = f"https://127.0.0.1:{port}"
    trust = ("--cacert", str(files["ca"]))
    assert kit_main(_kit(background, url, options=trust)) == 2
    err = capsys.readouterr().err
    assert f"{url} speaks HTTP/2 alone" in err
    assert "chose no protocol for http/1.1 in ALPN and chooses h2" in err
    assert "check it with --transport http2" in err
    report = tmp_path / "r.json"
    http2 = (*trust, "--transport", "http2", "--json", str(report))
    assert kit_main(_kit(background, url, options=http2)) == 0
    cells = json.loads(report.read_text())["cells"]
    assert [(c["transport"], c["evidence"]["client"]["http_version"]) for c in cells] == [
        ("http2", "2")
    ]
