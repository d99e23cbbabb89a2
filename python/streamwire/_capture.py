"""Reading what people capture: ``curl -i`` output, HAR files, compressed bodies.

The formats, as checked on 2026-12-01:

* ``curl -i`` (curl's manual, ``--include``) writes each response head it
  received (status line, header lines, a blank line) before the body. A
  request through a proxy, or one that drew an interim ``100 Continue``,
  shows several heads: the last one that is not ``1xx`` (nor a proxy's
  ``200 Connection established``) is the response. curl removes the chunked
  transfer coding but not the ``Content-Encoding``, unless it was run with
  ``--compressed``, in which case the header stays while the body is already
  decoded; ``decoded_body`` tells the two apart by content.
* HAR 1.2 (W3C Web Performance WG draft, "HTTP Archive (HAR) format"): one
  JSON object, ``log.entries[]``, each with ``request`` (``method``, ``url``),
  ``response`` (``status``, ``headers[]`` of ``{name, value}``, ``content``:
  ``mimeType``, ``text``, optional ``encoding: "base64"``) and ``timings``
  (``wait`` and ``receive`` in milliseconds). ``content.text`` is the body
  after its ``Content-Encoding`` was undone.
* ``Content-Encoding`` (RFC 9110 section 8.4.1): ``gzip``, ``deflate`` (the
  zlib format of RFC 1950; some servers send bare RFC 1951 data, which is
  accepted too), ``br`` and ``zstd`` (``_coding``: each by its package),
  listed in the order they were applied. Decoding is incremental and its
  output bounded per step, so a small input that expands enormously is read
  in pieces like any other. A
  body cut short (a cancelled stream) yields what was decoded; corrupt data
  ends the body where it broke, with a note.
"""

from __future__ import annotations

import base64
import binascii
import json
import re
import zlib
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any, Literal

from ._coding import MissingDecoder, content_decoder
from .io._wire import Headers, header, media_type
from .io.detect import detect

__all__ = [
    "STREAM_MEDIA_TYPES",
    "Exchange",
    "InputKind",
    "MissingDecoder",
    "decoded_body",
    "har_exchanges",
    "kind_of",
    "parse_http_head",
    "protocol_from_url",
]

InputKind = Literal["recording", "manifest", "har", "http", "raw"]
#: Media types that only streaming responses have.
STREAM_MEDIA_TYPES = frozenset({"text/event-stream", "application/vnd.amazon.eventstream"})
#: The most bytes one decoding step returns.
#: The most bytes of a capture's response heads.
MAX_HEAD_BYTES = 64 * 1024
_STATUS_LINE = re.compile(rb"HTTP/(\d(?:\.\d)?) (\d{3})(?: ([^\r\n]*))?")


@dataclass(slots=True)
class Exchange:
    """One captured HTTP response: what the capture says, and its body."""

    #: What it is, for a person ("curl -i capture", "HAR entry 3 of 7", ...).
    label: str
    #: The HTTP status, None when the capture kept only the body.
    status: int | None
    headers: Headers = ()
    #: The body as captured (still content-encoded for ``curl -i``).
    body: Iterable[bytes] = ()
    #: Whether the body is still content-encoded (curl) or already decoded (HAR).
    encoded: bool = True
    #: The request's method and URL, when the capture has them.
    request: dict[str, str] | None = None
    #: What the capture keeps of timing (HAR: ``wait``, ``receive`` in seconds).
    timings: dict[str, float] = field(default_factory=dict)
    #: Things a person should know about how it was read.
    notes: list[str] = field(default_factory=list)


def kind_of(head: bytes) -> InputKind:
    """Which input format ``head`` (the first bytes of a file) begins."""
    stripped = head.lstrip()
    if stripped.startswith(b"HTTP/") and _STATUS_LINE.match(stripped):
        return "http"
    text = stripped[:4096].decode("utf-8", "replace")
    if not text.startswith("{"):
        return "raw"
    if '"streamwire-recording/1"' in text.partition("\n")[0]:
        return "recording"
    if '"streamwire-fixture/1"' in text:
        return "manifest"
    if re.match(r'\{\s*"log"\s*:\s*\{', text):
        return "har"
    return "raw"


# --- curl -i --------------------------------------------------------------------


def _heads_end(data: bytes, start: int) -> int | None:
    """The offset just past the blank line that ends the head at ``start``."""
    crlf = data.find(b"\r\n\r\n", start)
    lf = data.find(b"\n\n", start)
    ends = [e + 4 for e in (crlf,) if e >= 0] + [e + 2 for e in (lf,) if e >= 0]
    return min(ends) if ends else None


def parse_http_head(data: bytes) -> tuple[int, Headers, int, list[str]]:
    """The final response head of a ``curl -i`` capture that starts ``data``.

    Returns the status, the headers, the offset where the body starts and
    notes; ValueError if ``data`` does not start with a complete head.
    """
    offset = len(data) - len(data.lstrip())
    notes: list[str] = []
    while True:
        match = _STATUS_LINE.match(data, offset)
        if match is None:
            raise ValueError(f"no HTTP status line at byte {offset}")
        end = _heads_end(data, offset)
        if end is None or end > MAX_HEAD_BYTES:
            raise ValueError(f"the response head starting at byte {offset} does not end")
        status = int(match.group(2))
        lines = data[match.end() : end].decode("latin-1").splitlines()
        headers = tuple(
            (name.strip(), value.strip())
            for name, sep, value in (line.partition(":") for line in lines)
            if sep and name.strip()
        )
        reason = (match.group(3) or b"").decode("latin-1").strip().lower()
        interim = 100 <= status < 200 or (status == 200 and reason == "connection established")
        if interim and _STATUS_LINE.match(data, end):
            notes.append(f"skipped an interim response head (HTTP {status} {reason})")
            offset = end
            continue
        return status, headers, end, notes


# --- HAR --------------------------------------------------------------------------


def _text(value: Any) -> str:
    return value if isinstance(value, str) else "?"


def _har_headers(items: Any) -> Headers:
    if not isinstance(items, list):
        return ()
    return tuple(
        (item["name"], item["value"])
        for item in items
        if isinstance(item, dict)
        and isinstance(item.get("name"), str)
        and isinstance(item.get("value"), str)
    )


def _har_body(content: Any) -> tuple[bytes | None, str | None]:
    """A HAR ``content`` object's bytes, or None and why there are none."""
    if not isinstance(content, dict):
        return None, "no content object"
    text = content.get("text")
    if not isinstance(text, str):
        return None, "the HAR keeps no body for this entry"
    if content.get("encoding") == "base64":
        try:
            return base64.b64decode(text, validate=True), None
        except (binascii.Error, ValueError):
            return None, "its base64 body does not decode"
    return text.encode("utf-8", "surrogatepass"), None


def _seconds(timings: Any, key: str) -> float | None:
    value = timings.get(key) if isinstance(timings, dict) else None
    if isinstance(value, int | float) and not isinstance(value, bool) and value >= 0:
        return value / 1000
    return None


def _is_stream(headers: Headers, mime: Any, body: bytes | None) -> bool:
    kind = media_type(header(headers, "content-type")) or (
        media_type(mime) if isinstance(mime, str) else None
    )
    if kind in STREAM_MEDIA_TYPES:
        return True
    return body is not None and detect(body[:65536])[0] is not None


def har_exchanges(data: bytes, entry: int | None = None) -> tuple[list[Exchange], list[str]]:
    """The stream responses of a HAR file (or entry number ``entry``, from 1).

    Returns the exchanges and a line per entry (number, status, media type,
    URL), for telling a person what the file holds. ValueError if it is not
    a HAR file.
    """
    try:
        doc = json.loads(data)
    except (UnicodeDecodeError, ValueError) as exc:
        raise ValueError(f"not a HAR file: {exc}") from None
    log = doc.get("log") if isinstance(doc, dict) else None
    entries = log.get("entries") if isinstance(log, dict) else None
    if not isinstance(entries, list):
        raise ValueError("not a HAR file: no log.entries list")
    if entry is not None and not 1 <= entry <= len(entries):
        raise ValueError(f"there is no entry {entry}: the file has {len(entries)}")
    picked: list[Exchange] = []
    listing: list[str] = []
    for number, item in enumerate(entries, start=1):
        request = item.get("request") if isinstance(item, dict) else None
        response = item.get("response") if isinstance(item, dict) else None
        if not isinstance(response, dict) or not isinstance(request, dict):
            listing.append(f"{number:4d}  (not an entry with a request and a response)")
            continue
        method = _text(request.get("method"))
        url = _text(request.get("url"))
        status = response.get("status")
        status = status if isinstance(status, int) and not isinstance(status, bool) else None
        headers = _har_headers(response.get("headers"))
        content = response.get("content")
        mime = content.get("mimeType") if isinstance(content, dict) else None
        body, missing = _har_body(content)
        listing.append(f"{number:4d}  {status or '?'}  {mime or '-'}  {method} {url}")
        if entry != number and (entry is not None or not _is_stream(headers, mime, body)):
            continue
        exchange = Exchange(
            label=f"HAR entry {number} of {len(entries)}",
            status=status,
            headers=headers,
            body=[body] if body else [],
            encoded=False,
            request={"method": method, "url": url},
        )
        timings = item.get("timings")
        for key in ("wait", "receive"):
            seconds = _seconds(timings, key)
            if seconds is not None:
                exchange.timings[key] = seconds
        if missing is not None:
            exchange.notes.append(missing)
        picked.append(exchange)
    return picked, listing


# --- Content-Encoding -----------------------------------------------------------


def _looks_decoded(encoding: str, head: bytes) -> bool:
    """True when a body labelled ``encoding`` is plainly not (``curl --compressed``)."""
    if encoding == "gzip":
        return not head.startswith(b"\x1f\x8b")
    return detect(head)[0] is not None or head.lstrip()[:1] in (b"{", b"[")


def _one_encoding(chunks: Iterator[bytes], encoding: str, notes: list[str]) -> Iterator[bytes]:
    first = next(chunks, b"")
    if not first:
        return
    if _looks_decoded(encoding, first[:65536]):
        notes.append(
            f"Content-Encoding says {encoding}, but the body is already decoded "
            "(curl --compressed decodes it): read as it is"
        )
        yield first
        yield from chunks
        return
    decoder = content_decoder(encoding, first)
    consumed = 0
    try:
        for chunk in _chain(first, chunks):
            yield from decoder.feed(chunk)
            consumed += len(chunk)
    except zlib.error as exc:
        notes.append(f"the {encoding} data is corrupt near byte {consumed} ({exc}): read to there")
        return
    rest, problem = decoder.finish()
    if rest:
        yield rest
    if problem is not None:
        notes.append(f"{encoding}: {problem} (a stream cut short?)")
    else:
        notes.append(f"Content-Encoding {encoding} decoded")


def _chain(first: bytes, rest: Iterator[bytes]) -> Iterator[bytes]:
    yield first
    yield from rest


def decoded_body(
    chunks: Iterable[bytes], content_encoding: str | None, notes: list[str]
) -> Iterator[bytes]:
    """The body with its content codings undone, last applied first.

    MissingDecoder when a coding needs a package that is missing; ValueError
    for a coding not in ``_coding.CODINGS``.
    """
    codings = [c.strip().lower() for c in (content_encoding or "").split(",") if c.strip()]
    codings = [c for c in codings if c != "identity"]
    for coding in codings:
        content_decoder(coding, b"")  # fail now, before anything is printed
    out: Iterator[bytes] = iter(chunks)
    for coding in reversed(codings):
        out = _one_encoding(out, "gzip" if coding == "x-gzip" else coding, notes)
    return out


# --- which protocol ---------------------------------------------------------------

_URL_PROTOCOLS = (
    (re.compile(r"/chat/completions\b"), "openai-chat"),
    (re.compile(r"/responses\b"), "openai-responses"),
    (re.compile(r"/messages\b"), "anthropic"),
    (re.compile(r":streamGenerateContent\b.*[?&]alt=sse\b"), "gemini"),
    (re.compile(r":streamGenerateContent\b"), "gemini-json"),
    (re.compile(r"/converse-stream\b"), "bedrock-converse"),
    (re.compile(r"/invoke-with-response-stream\b"), "bedrock-invoke"),
)


def protocol_from_url(url: str) -> str | None:
    """The protocol a provider's streaming endpoint answers in, from its URL."""
    for pattern, protocol in _URL_PROTOCOLS:
        if pattern.search(url):
            return protocol
    return None
