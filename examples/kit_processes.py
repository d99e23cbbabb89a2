"""What the kit's worked examples share: free ports, servers started as processes, stopped by pid.

``examples/kit_gateway.py`` and ``examples/kit_proxies.py`` start the mock
upstream and the hops in front of it as processes of their own, wait until
each listens, and stop every one when they end::

    with processes() as procs:
        mock = procs.mock()
        url = procs.gateway(mock + "/v1", "openai-chat")
        procs.ready()  # every gateway started listens

``make_ca(folder)`` makes a test CA and a certificate for 127.0.0.1 it
signed (an HTTPS front's), with openssl.
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path

HERE = Path(__file__).resolve().parent

__all__ = ["Processes", "free_port", "make_ca", "wait_listening"]


def make_ca(folder: Path) -> dict[str, Path] | None:
    """Writes ``ca.pem`` (the CA a client trusts), ``server.pem`` and
    ``server.key`` (what a TLS server on 127.0.0.1 presents) into ``folder``,
    valid for two days; None when openssl is not installed."""
    if shutil.which("openssl") is None:
        return None

    def run(*args: str) -> None:
        subprocess.run(["openssl", *args], cwd=folder, check=True, capture_output=True)

    run("req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", "ca.key", "-out", "ca.pem",
        "-days", "2", "-subj", "/CN=streamwire test CA")  # fmt: skip
    run("req", "-newkey", "rsa:2048", "-nodes", "-keyout", "server.key", "-out", "server.csr",
        "-subj", "/CN=127.0.0.1")  # fmt: skip
    (folder / "ext.cnf").write_text("subjectAltName=IP:127.0.0.1\n")
    run("x509", "-req", "-in", "server.csr", "-CA", "ca.pem", "-CAkey", "ca.key",
        "-CAcreateserial", "-out", "server.pem", "-days", "2", "-extfile", "ext.cnf")  # fmt: skip
    return {"ca": folder / "ca.pem", "cert": folder / "server.pem", "key": folder / "server.key"}


def free_port() -> int:
    """A port that was free on 127.0.0.1 a moment ago."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def wait_listening(
    port: int, proc: subprocess.Popen[bytes], name: str, timeout: float = 30
) -> None:
    """Returns once something listens on ``port``; exits if ``proc`` died first."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise SystemExit(f"{name} exited with status {proc.returncode}")
        with socket.socket() as sock:
            if sock.connect_ex(("127.0.0.1", port)) == 0:
                return
        time.sleep(0.05)
    raise SystemExit(f"{name}: nothing listens on port {port} after {timeout} s")


class Processes:
    """The processes an example started, stopped (newest first) when it ends."""

    def __init__(self) -> None:
        self.procs: list[subprocess.Popen[bytes]] = []
        #: (port, process, name) of each server started and not yet seen listening.
        self._starting: list[tuple[int, subprocess.Popen[bytes], str]] = []

    def start(self, cmd: Sequence[str], **options: object) -> subprocess.Popen[bytes]:
        proc: subprocess.Popen[bytes] = subprocess.Popen(cmd, **options)  # type: ignore[call-overload]
        self.procs.append(proc)
        return proc

    def mock(self, python: str = sys.executable) -> str:
        """Starts ``streamwire mock-upstream`` and returns its URL."""
        proc = self.start(
            [python, "-m", "streamwire.kit.cli", "mock-upstream"], stdout=subprocess.PIPE
        )
        assert proc.stdout is not None
        return proc.stdout.readline().decode().strip().rpartition(" ")[2]

    def gateway(self, upstream_url: str, protocol: str, python: str = sys.executable) -> str:
        """Starts examples/gateway (uvicorn) in front of ``upstream_url``, which
        speaks ``protocol``, and returns its URL; ``ready()`` waits until it listens."""
        port = free_port()
        env = dict(
            os.environ,
            PYTHONPATH=str(HERE),
            GATEWAY_UPSTREAM_URL=upstream_url,
            GATEWAY_UPSTREAM_PROTOCOL=protocol,
        )
        cmd = [
            python,
            "-m",
            "uvicorn",
            "--factory",
            "gateway:app_from_env",
            "--host",
            "127.0.0.1",
            "--port",
            str(port),
            "--log-level",
            "warning",
            "--no-access-log",
        ]
        self._starting.append((port, self.start(cmd, env=env), f"examples/gateway ({protocol})"))
        return f"http://127.0.0.1:{port}"

    def ready(self) -> None:
        """Returns once every server started by ``gateway`` listens."""
        for port, proc, name in self._starting:
            wait_listening(port, proc, name)
        self._starting.clear()

    def stop(self) -> None:
        for proc in reversed(self.procs):
            proc.terminate()
        for proc in self.procs:
            try:
                proc.wait(10)
            except subprocess.TimeoutExpired:
                proc.kill()


@contextmanager
def processes() -> Iterator[Processes]:
    """``with processes() as procs: ...``: every process started is stopped at the end."""
    procs = Processes()
    try:
        yield procs
    finally:
        procs.stop()
