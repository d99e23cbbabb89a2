"""A test CA and a certificate for 127.0.0.1 it signed, made with openssl.

``make_ca(folder)`` writes ``ca.pem`` (the CA a client trusts), ``server.pem``
and ``server.key`` (what a TLS server on 127.0.0.1 presents) into ``folder``,
valid for two days; None when openssl is not installed. It is the worked
examples' own (``examples/kit_processes.py``, through ``processes``).
"""

from __future__ import annotations

from .processes import make_ca

__all__ = ["make_ca"]
