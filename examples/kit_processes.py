"""What the kit's worked examples share: free ports, servers started as processes, stopped by pid.

``examples/kit_gateway.py`` and ``examples/kit_proxies.py`` start the mock
upstream and the hops in front of it as processes of their own, wait until
each listens, and stop every one when they end.
"""

from __future__ import annotations

import socket
import subprocess
import sys
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager

__all__ = ["Processes", "free_port", "wait_listening"]


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
