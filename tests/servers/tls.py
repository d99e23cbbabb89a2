"""A test CA and a certificate for 127.0.0.1 it signed, made with openssl.

``make_ca(folder)`` writes ``ca.pem`` (the CA a client trusts), ``server.pem``
and ``server.key`` (what a TLS server on 127.0.0.1 presents) into ``folder``,
valid for two days; None when openssl is not installed. It is the worked
examples' own (``examples/kit_processes.py``), loaded from there.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path

__all__ = ["make_ca"]

_spec = importlib.util.spec_from_file_location(
    "streamwire_example_kit_processes_tls",
    Path(__file__).resolve().parents[2] / "examples" / "kit_processes.py",
)
assert _spec is not None and _spec.loader is not None
_module = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(_module)
make_ca = _module.make_ca
