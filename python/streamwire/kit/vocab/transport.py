"""How the kit's client reaches the gateway: the HTTP version and the codings it accepts.

A hop can treat clients differently by what they ask for. The most reported
case is compression: a proxy that compresses ``text/event-stream`` holds the
answer for a client that accepts gzip and streams it to curl, which asks for
none. So the kit reads the cases the way real clients do, by transport:

* ``http1``: HTTP/1.1 with ``Accept-Encoding: identity``, as curl;
* ``http1-gzip``: HTTP/1.1 with ``Accept-Encoding: gzip, deflate``, what the
  Python SDKs (httpx) send; the body is decoded as it arrives, each event
  timed when it decodes;
* ``http2``: HTTP/2 with a browser's ``gzip, deflate, br, zstd`` (the codings
  this installation decodes: br with ``brotli``, zstd with ``zstandard``),
  ALPN ``h2`` over TLS for https URLs (a front that picks HTTP/1.1 is read
  over it, as a browser would, and the cell says so), prior-knowledge h2c
  for http URLs; python-hyper's ``h2`` reads it (``h2io``). A cancel is an
  ``RST_STREAM``; every DATA frame is timed as it arrives.

A cell read over a transport other than ``http1`` names it in its client
label (``openai-chat over http1-gzip``), so that the matrix, the reports
and comparisons keep the two apart, and every cell's JSON says its
``transport``. The first transport of a run reads every case; the others
read the cases a transport can change, the plain ones (no conduct of their
own: ``Kind.plain``, where what arrives and when is all that is judged), in
the paced delivery, where streaming is judged.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..._coding import available

__all__ = [
    "DEFAULT_TRANSPORTS",
    "HTTP1",
    "HTTP2",
    "TRANSPORTS",
    "Transport",
    "client_label",
    "parse_transports",
    "split_label",
]


@dataclass(frozen=True)
class Transport:
    """One way of reaching the gateway."""

    name: str
    #: The request's ``Accept-Encoding``.
    accept_encoding: str
    #: What it is, for the reports.
    summary: str
    #: HTTP/2 (``h2io``), not HTTP/1.1.
    http2: bool = False

    @property
    def decodes(self) -> bool:
        """The client accepts a content coding, and undoes it as the body arrives."""
        return self.accept_encoding != "identity"


HTTP1 = Transport("http1", "identity", "HTTP/1.1, Accept-Encoding: identity (curl)")
HTTP1_GZIP = Transport(
    "http1-gzip", "gzip, deflate", "HTTP/1.1, Accept-Encoding: gzip, deflate (the Python SDKs)"
)
#: A browser's codings, those this installation can decode.
_BROWSER = ("gzip", "deflate", "br", "zstd")
HTTP2 = Transport(
    "http2",
    ", ".join(c for c in _BROWSER if c in available()),
    "HTTP/2 (ALPN h2 over TLS, h2c over http), Accept-Encoding as a browser's",
    http2=True,
)
#: Every transport, by name.
TRANSPORTS: dict[str, Transport] = {t.name: t for t in (HTTP1, HTTP1_GZIP, HTTP2)}
#: What a run reads over unless told: curl's way and the SDKs' (compressed).
DEFAULT_TRANSPORTS: tuple[str, ...] = ("http1", "http1-gzip")
_OVER = " over "


def parse_transports(text: str) -> tuple[str, ...]:
    """``--transport``'s names (comma-separated, or ``all``), checked."""
    names = [n.strip() for n in text.split(",") if n.strip()]
    if names == ["all"]:
        return tuple(TRANSPORTS)
    unknown = [n for n in names if n not in TRANSPORTS]
    if unknown or not names:
        raise ValueError(
            f"unknown transport {', '.join(unknown) or repr(text)}; known: "
            f"{', '.join(TRANSPORTS)} (or all)"
        )
    return tuple(dict.fromkeys(names))


def client_label(client: str, transport: str) -> str:
    """A cell's client label: the protocol, with the transport unless ``http1``."""
    return client if transport == HTTP1.name else f"{client}{_OVER}{transport}"


def split_label(label: str) -> tuple[str, Transport]:
    """The protocol and transport of a client label (``client_label``'s inverse)."""
    client, _, name = label.partition(_OVER)
    return client, TRANSPORTS.get(name, HTTP1)
