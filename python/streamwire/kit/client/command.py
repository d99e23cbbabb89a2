"""A cell's request as one ``curl`` command line: what an engineer runs to see a defect by hand.

The command sends what the kit's client sent for the cell
(``client.client_request``): the URL, the headers, the body with the model
named for the cell (``sw-<case>.<delivery>.<tag>`` through the route's
template) and the prompt naming it too, so the mock answers the same case
the same way, ``-N`` so that
curl writes each piece as it arrives. The key to the gateway is left to the
shell as ``"$VAR"`` (``KEY_VAR``, or the variable ``--key-env`` named): the
kit's own key and a real one never appear in the command, the report, or a
CI log. Every word is quoted for a POSIX shell (``shlex.quote``). An SDK
cell (``<protocol> via <sdk>``) is reproduced by its protocol's raw request.
A case with a follow-up request (``tool-error-result``) is reproduced by its
first request.
"""

from __future__ import annotations

import json
import re
import shlex
from collections.abc import Sequence
from typing import Any

from ..vocab.cases import Case
from ..vocab.transport import split_label
from .raw import client_request

__all__ = ["KEY_VAR", "cell_command", "curl_command", "key_variable", "websocat_command"]

#: The variable a command reads the key from when the run was given none
#: (``--key-env``): ``STREAMWIRE_KEY=... sh -c '<command>'``.
KEY_VAR = "STREAMWIRE_KEY"
_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def key_variable(name: str | None) -> str:
    """The shell variable a command names for the key: ``name`` when a shell
    can expand it, else ``KEY_VAR``."""
    return name if name and _NAME.fullmatch(name) else KEY_VAR


def _word(text: str, key: str | None, var: str) -> str:
    """``text`` as one shell word, each occurrence of ``key`` left to the
    shell as ``"$var"`` (quoted apart from the rest, so it expands)."""
    if not key or key not in text:
        return shlex.quote(text)
    return f'"${var}"'.join(shlex.quote(part) if part else "" for part in text.split(key))


def curl_command(
    url: str,
    headers: Sequence[tuple[str, str]],
    body: dict[str, Any],
    *,
    key: str | None,
    var: str = KEY_VAR,
    http2: bool = False,
) -> str:
    """``curl -N`` sending ``body`` as JSON to ``url`` with ``headers``; ``key``,
    wherever it occurs, becomes ``"$var"``. A compressed answer is decoded
    (``--compressed``, curl's own ``Accept-Encoding`` then); ``http2``: over
    HTTP/2 (ALPN for https, prior knowledge for http), else over HTTP/1.1
    (``--http1.1`` for https, where curl would offer h2 in ALPN too, as the
    kit's HTTP/1.1 client does not)."""
    payload = json.dumps(body, ensure_ascii=True, separators=(",", ":"))
    words = ["curl", "-N", "-sS", _word(url, key, var)]
    https = url.startswith("https:")
    if http2:
        words.append("--http2" if https else "--http2-prior-knowledge")
    elif https:
        words.append("--http1.1")
    for name, value in headers:
        if name.lower() == "accept-encoding" and value != "identity":
            words.append("--compressed")
            continue
        words += ["-H", _word(f"{name}: {value}", key, var)]
    # curl waits a second for "100 Continue" before a larger body; no hop sends it.
    words += ["-H", "Expect:", "--data-binary", _word(payload, key, var)]
    return " ".join(words)


def websocat_command(
    url: str,
    headers: Sequence[tuple[str, str]],
    message: dict[str, Any] | Sequence[dict[str, Any]],
    *,
    key: str | None,
    var: str = KEY_VAR,
) -> str:
    """A WebSocket cell's request as ``websocat`` sends it: the upgrade to
    ``url`` with ``headers`` (``key`` left to the shell as ``"$var"``), the
    request's messages on standard input, a line each (``echo`` for one,
    ``printf`` for several), each message the gateway sends printed as it
    arrives."""
    messages = [message] if isinstance(message, dict) else list(message)
    payloads = [
        _word(json.dumps(m, ensure_ascii=True, separators=(",", ":")), key, var) for m in messages
    ]
    words = ["websocat", "-t"]
    for name, value in headers:
        words += ["-H", _word(f"{name}: {value}", key, var)]
    words.append(_word(url, key, var))
    if len(payloads) == 1:
        return f"echo {payloads[0]} | " + " ".join(words)
    return "printf '%s\\n' " + " ".join(payloads) + " | " + " ".join(words)


def cell_command(
    client: str,
    case: Case,
    model: str,
    base_url: str,
    *,
    key: str | None,
    var: str = KEY_VAR,
    canary: str | None = None,
    stream: bool = True,
    cell: str | None = None,
) -> str:
    """The command of a cell that ``client`` (a protocol, ``<protocol> over
    <transport>`` or ``<protocol> via <sdk>``) asked for ``case`` with
    ``model`` at ``base_url``."""
    protocol, transport = split_label(client.split(" via ", 1)[0])
    url, headers, body = client_request(
        protocol,
        case,
        model,
        base_url,
        key,
        canary=canary,
        stream=stream,
        accept_encoding=transport.accept_encoding,
        cell=cell,
    )
    return curl_command(url, headers, body, key=key, var=var, http2=transport.http2)
