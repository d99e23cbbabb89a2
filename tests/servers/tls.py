"""A test CA and a certificate for 127.0.0.1 it signed, made with openssl.

``make_ca(folder)`` writes ``ca.pem`` (the CA a client trusts), ``server.pem``
and ``server.key`` (what a TLS server on 127.0.0.1 presents) into ``folder``,
valid for two days; None when openssl is not installed.
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

__all__ = ["make_ca"]


def make_ca(folder: Path) -> dict[str, Path] | None:
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
