"""A real nginx as a reverse proxy on loopback, with a generated config in a temp dir.

nginx is the Debian package (``.ci/run`` installs it when missing). The test
starts its own process (``daemon off``, ``master_process off``: one process,
no privilege switch, nothing written outside the temp dir; no system service
is involved) listening on a free 127.0.0.1 port, with two locations in front
of the stream server:

* ``/unbuffered/``: ``proxy_buffering off`` (what an SSE gateway must use):
  each upstream write is passed on as it arrives.
* ``/buffered/``: ``proxy_buffering on`` (nginx's default): the response is
  collected in the proxy buffers and passed on when they fill or the
  upstream finishes, so a slow, small stream arrives late and all at once.

Both speak HTTP/1.1 to the upstream (``proxy_http_version 1.1``) so the
upstream may use chunked encoding. ``find_nginx()`` locates the binary;
callers skip (or, under CI, fail) when it is missing.
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import tempfile
import time
from pathlib import Path

__all__ = ["Nginx", "find_nginx", "free_port"]

_CONFIG = """\
daemon off;
master_process off;
worker_processes 1;
pid {tmp}/nginx.pid;
error_log {tmp}/error.log warn;
events {{
    worker_connections 64;
}}
http {{
    access_log off;
    client_body_temp_path {tmp}/client_body;
    proxy_temp_path {tmp}/proxy;
    fastcgi_temp_path {tmp}/fastcgi;
    uwsgi_temp_path {tmp}/uwsgi;
    scgi_temp_path {tmp}/scgi;
    server {{
        listen 127.0.0.1:{port};
{locations}
    }}
}}
"""
#: The two locations the proxy tests use (``Nginx(locations=...)`` gives others).
_LOCATIONS = """\
        location /unbuffered/ {
            proxy_pass http://127.0.0.1:{upstream}/;
            proxy_http_version 1.1;
            proxy_set_header Connection "";
            proxy_buffering off;
        }
        location /buffered/ {
            proxy_pass http://127.0.0.1:{upstream}/;
            proxy_http_version 1.1;
            proxy_set_header Connection "";
            proxy_buffering on;
        }"""


def find_nginx() -> str | None:
    """The nginx binary, or None."""
    found = shutil.which("nginx")
    if found:
        return found
    for candidate in ("/usr/sbin/nginx", "/usr/local/sbin/nginx"):
        if os.access(candidate, os.X_OK):
            return candidate
    return None


def free_port() -> int:
    """A port that was free on 127.0.0.1 a moment ago."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


class Nginx:
    """One nginx process proxying to ``127.0.0.1:upstream``."""

    def __init__(self, binary: str, upstream: int, locations: str = _LOCATIONS) -> None:
        self.binary = binary
        self.upstream = upstream
        #: The server's location blocks; ``{upstream}`` is the upstream's port.
        self.locations = locations
        self.port = 0
        self._tmp = tempfile.TemporaryDirectory(prefix="streamwire-nginx-")
        self._proc: subprocess.Popen[bytes] | None = None

    @property
    def error_log(self) -> str:
        path = Path(self._tmp.name) / "error.log"
        return path.read_text(errors="replace") if path.exists() else ""

    def url(self, mode: str, upstream_url: str) -> str:
        """The proxied URL of an upstream URL (``mode``: ``buffered`` or ``unbuffered``)."""
        path = upstream_url.split("/", 3)[3]
        return f"http://127.0.0.1:{self.port}/{mode}/{path}"

    def start(self) -> Nginx:
        tmp = self._tmp.name
        for attempt in range(3):
            self.port = free_port()
            conf = Path(tmp) / "nginx.conf"
            locations = self.locations.replace("{upstream}", str(self.upstream))
            conf.write_text(_CONFIG.format(tmp=tmp, port=self.port, locations=locations))
            self._proc = subprocess.Popen(
                [self.binary, "-p", tmp, "-c", str(conf), "-e", f"{tmp}/error.log"],
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.PIPE,
            )
            if self._wait_ready(5.0):
                return self
            self.stop()
            if attempt == 2:
                raise RuntimeError(f"nginx did not start:\n{self.error_log}")
        return self

    def _wait_ready(self, timeout: float) -> bool:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self._proc is not None and self._proc.poll() is not None:
                return False
            try:
                with socket.create_connection(("127.0.0.1", self.port), timeout=0.2):
                    return True
            except OSError:
                time.sleep(0.02)
        return False

    def stop(self) -> None:
        proc = self._proc
        self._proc = None
        if proc is not None and proc.poll() is None:
            proc.terminate()
            try:
                proc.wait(5)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait(5)
        if proc is not None and proc.stderr is not None:
            proc.stderr.close()

    def close(self) -> None:
        self.stop()
        self._tmp.cleanup()
