"""What the HTTP edge knows about each protocol's response: framing, content type, errors.

Facts, with the provider documents they come from (checked 2026-11-29):

* Framing and content type. The SSE protocols (``openai-chat``,
  ``openai-responses``, ``anthropic``, ``gemini`` with ``alt=sse``) answer
  ``text/event-stream``; ``gemini-json`` (``streamGenerateContent`` without
  ``alt=sse``) answers ``application/json``, one JSON array written
  incrementally; the Bedrock streaming APIs (``ConverseStream``,
  ``InvokeModelWithResponseStream``) answer
  ``application/vnd.amazon.eventstream``, binary AWS EventStream frames.
* Error bodies. OpenAI: ``{"error": {"message", "type", "param", "code"}}``
  with an ``x-request-id`` header (platform.openai.com/docs/guides/error-codes).
  Anthropic: ``{"type": "error", "error": {"type", "message"}, "request_id"}``
  with a ``request-id`` header (docs.claude.com/en/api/errors). Gemini:
  ``{"error": {"code", "message", "status"}}`` (ai.google.dev, "API
  troubleshooting"), inside a one-element array on the JSON stream endpoint.
  Bedrock: ``{"message": ...}`` with the error's name in the
  ``x-amzn-ErrorType`` header (``ThrottlingException:http://...``) and an
  ``x-amzn-RequestId`` header (AWS JSON protocol).
* Secrets in headers, removed from recordings: ``Authorization`` and
  ``Proxy-Authorization``, ``x-api-key`` (Anthropic), ``api-key`` (Azure
  OpenAI), ``x-goog-api-key`` (Gemini), ``Cookie`` and ``Set-Cookie``, and
  any header whose name says token, secret, password, key, signature,
  credential or session (``x-amz-security-token``).
* Secrets in URLs, removed from recorded URLs by the same pattern of names,
  in the query and in a path segment's parameters (``;key=``): Gemini's
  ``key``; AWS SigV4 presigned requests' ``X-Amz-Credential``,
  ``X-Amz-Signature`` and ``X-Amz-Security-Token`` (AWS "Authenticating
  Requests: Using Query Parameters", checked 2026-12-01); OAuth's
  ``client_secret``, ``refresh_token``, ``access_token``; ``password``.
* Secrets elsewhere: the values of the headers kept are scanned for such a
  name's ``name=value`` and for a ``Bearer``/``Basic`` token, and every value
  a credential of the request had (``credentials``) is masked wherever it
  appears in a recording: a provider's error body that echoes the key, the
  error message made of it, a redirect's ``Location``.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from typing import Any, Literal
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

from .._json import loads

__all__ = [
    "Framing",
    "Headers",
    "HttpError",
    "content_types",
    "credentials",
    "framing_of",
    "header",
    "http_error",
    "http_protocols",
    "is_http_protocol",
    "is_secret_name",
    "media_type",
    "redact_headers",
    "redact_text",
    "redact_url",
    "request_id",
]

Framing = Literal["sse", "eventstream", "json"]
#: Response headers as received: (name, value) pairs in order, repeats kept.
Headers = tuple[tuple[str, str], ...]

_FRAMING: Mapping[str, Framing] = {
    "gemini-json": "json",
    "bedrock-converse": "eventstream",
    "bedrock-invoke": "eventstream",
}
_CONTENT_TYPES: Mapping[Framing, tuple[str, ...]] = {
    "sse": ("text/event-stream",),
    "json": ("application/json",),
    "eventstream": ("application/vnd.amazon.eventstream",),
}
#: Where providers put the request id, most specific first.
REQUEST_ID_HEADERS = ("x-request-id", "request-id", "x-amzn-requestid", "x-amz-request-id")
#: Headers never recorded (lower case), besides any that match ``_SECRET_NAME``.
SECRET_HEADERS = frozenset(
    {
        "authorization",
        "proxy-authorization",
        "x-api-key",
        "api-key",
        "x-goog-api-key",
        "cookie",
        "set-cookie",
        "set-cookie2",
    }
)
_SECRET_NAME = re.compile(
    r"token|secret|passw|api[-_]?key|auth|cookie|signature|credential|session"
    r"|^key$|[-_.]key$|^sig$"
)
#: ``name=value`` pairs in a header value or a URL (after ``?``, ``&``, ``;``,
#: ``,`` or a space, as in SigV4's ``Credential=...``), and auth-scheme tokens.
_PAIR = re.compile(r"(^|[?&;,\s])([^=&;,?#\s]+)=([^&;,#\s\"']*)")
#: What separates query parameters: ``&``, or ``;`` (the HTML 4 alternative).
_QUERY_SEPARATOR = re.compile(r"([&;])")
_SCHEME_TOKEN = re.compile(r"(?i)\b(bearer|basic|token)\s+([^\s,;\"']+)")
#: Credentials shorter than this are not looked for elsewhere: too likely to
#: match ordinary text, and no provider's key is that short.
MIN_CREDENTIAL_CHARS = 8
REDACTED = "[redacted]"
#: How much of an error body is read, at most.
MAX_ERROR_BODY = 64 * 1024


def is_http_protocol(protocol: str) -> bool:
    """True for a protocol whose adapter reads an HTTP body (``feed``), not
    WebSocket messages (an adapter of its own ``feed_message``)."""
    from ..protocols import Stream, adapter_class

    return adapter_class(protocol).feed_message is Stream.feed_message


def http_protocols() -> tuple[str, ...]:
    """The registered protocols the HTTP edge can read, sorted."""
    from ..protocols import known_protocols

    out = []
    for protocol in known_protocols():
        try:
            if is_http_protocol(protocol):
                out.append(protocol)
        except (ImportError, AttributeError, TypeError):
            continue  # registered, but its adapter cannot be loaded here
    return tuple(out)


def framing_of(protocol: str) -> Framing:
    """The wire framing of a protocol's HTTP body (SSE unless listed)."""
    return _FRAMING.get(protocol, "sse")


def content_types(protocol: str) -> tuple[str, ...]:
    """The media types a protocol's streaming body may have."""
    return _CONTENT_TYPES[framing_of(protocol)]


def to_headers(items: Iterable[tuple[Any, Any]]) -> Headers:
    """Normalizes (name, value) pairs (str or bytes) to ``Headers``."""
    out = []
    for name, value in items:
        if isinstance(name, bytes):
            name = name.decode("latin-1")
        if isinstance(value, bytes):
            value = value.decode("latin-1")
        out.append((str(name), str(value)))
    return tuple(out)


def header(headers: Headers, name: str) -> str | None:
    """The first value of a header, by case-insensitive name."""
    name = name.lower()
    for key, value in headers:
        if key.lower() == name:
            return value
    return None


def media_type(value: str | None) -> str | None:
    """``text/event-stream; charset=utf-8`` -> ``text/event-stream``."""
    if value is None:
        return None
    return value.split(";", 1)[0].strip().lower() or None


def request_id(headers: Headers) -> str | None:
    """The provider's request id from the response headers, if any."""
    for name in REQUEST_ID_HEADERS:
        value = header(headers, name)
        if value:
            return value
    return None


def is_secret_header(name: str) -> bool:
    """True for a header a recording must never keep."""
    lower = name.lower()
    return lower in SECRET_HEADERS or bool(_SECRET_NAME.search(lower))


def is_secret_name(name: str) -> bool:
    """True for a query or ``name=value`` parameter a recording must never keep."""
    return bool(_SECRET_NAME.search(name.lower()))


def redact_headers(headers: Headers, credentials: Iterable[str] = ()) -> Headers:
    """The headers without credentials and cookies; the values of the others
    scanned (``redact_text``)."""
    known = tuple(credentials)
    return tuple((k, redact_text(v, known)) for k, v in headers if not is_secret_header(k))


def redact_text(text: str, credentials: Iterable[str] = ()) -> str:
    """``text`` (a header value, an error detail) with every known credential,
    every secret-named ``name=value`` value and every auth-scheme token
    replaced by ``[redacted]``."""
    for secret in credentials:
        if secret in text:
            text = text.replace(secret, REDACTED)
    text = _PAIR.sub(_redact_pair, text)
    return _SCHEME_TOKEN.sub(lambda m: f"{m[1]} {REDACTED}", text)


def _redact_pair(match: re.Match[str]) -> str:
    if match[3] and match[3] != REDACTED and is_secret_name(match[2]):
        return f"{match[1]}{match[2]}={REDACTED}"
    return match[0]


def redact_url(url: str) -> str:
    """The URL without credentials: user info, and secret-named query
    parameters and path-segment parameters (``;key=...``), removed. Query
    parameters are separated by ``&`` or ``;`` (``?alt=sse;key=...``, the
    HTML 4 form servers still accept): both are read, and each separator
    kept stays as it was."""
    parts = urlsplit(url)
    netloc = parts.netloc.rpartition("@")[2]
    kept: list[str] = []
    for separator, piece in _query_pieces(parts.query):
        pairs = parse_qsl(piece, keep_blank_values=True)
        if pairs and not any(is_secret_name(k) for k, _ in pairs):
            kept.append((separator if kept else "") + urlencode(pairs))
    query = "".join(kept)
    path = "/".join(_drop_params(segment) for segment in parts.path.split("/"))
    return urlunsplit((parts.scheme, netloc, path, query, ""))


def _query_pieces(query: str) -> list[tuple[str, str]]:
    """``(separator before it, piece)`` for each ``name=value`` piece of a
    query, whether ``&`` or ``;`` separates them."""
    tokens = _QUERY_SEPARATOR.split(query)
    return [("&" if n == 0 else tokens[n - 1], tokens[n]) for n in range(0, len(tokens), 2)]


def _query_pairs(query: str) -> list[tuple[str, str]]:
    """The query's non-blank ``(name, value)`` pairs, ``&`` or ``;`` separated."""
    return [pair for _, piece in _query_pieces(query) for pair in parse_qsl(piece)]


def _drop_params(segment: str) -> str:
    name, *params = segment.split(";")
    kept = [p for p in params if not is_secret_name(p.partition("=")[0])]
    return ";".join([name, *kept])


def credentials(headers: Iterable[tuple[str, str]], url: str | None) -> list[str]:
    """The credential values a request carried, longest first: the values of
    its secret headers (and the token after an auth scheme, the values of
    SigV4's ``Credential=`` and ``Signature=``, each cookie), and of its URL's
    password and secret-named parameters. Values shorter than
    ``MIN_CREDENTIAL_CHARS`` are left out."""
    found: set[str] = set()
    for name, value in headers:
        if is_secret_header(name):
            found.add(value.strip())
            found.update(m[2] for m in _SCHEME_TOKEN.finditer(value))
            found.update(m[3] for m in _PAIR.finditer(value))
            _scheme, _, rest = value.strip().partition(" ")
            if rest and " " not in rest.strip():
                found.add(rest.strip())
    if url:
        parts = urlsplit(url)
        if parts.password:
            found.add(parts.password)
        found.update(v for k, v in _query_pairs(parts.query) if is_secret_name(k))
        for segment in parts.path.split("/"):
            for param in segment.split(";")[1:]:
                name, _, value = param.partition("=")
                if is_secret_name(name):
                    found.add(value)
    kept = {value for value in found if len(value) >= MIN_CREDENTIAL_CHARS}
    return sorted(kept, key=lambda value: (-len(value), value))


class HttpError:
    """What a non-streaming (error) response said, in ``StreamError`` terms."""

    __slots__ = ("code", "message", "phase", "raw", "request_id", "type")

    def __init__(
        self,
        *,
        phase: Literal["provider", "transport"],
        type: str | None,
        code: str | int | None,
        message: str | None,
        request_id: str | None,
        raw: Any,
    ) -> None:
        self.phase: Literal["provider", "transport"] = phase
        self.type = type
        self.code = code
        self.message = message
        self.request_id = request_id
        self.raw = raw


def _str(value: Any) -> str | None:
    return value if isinstance(value, str) and value else None


def _code(value: Any) -> str | int | None:
    if isinstance(value, bool):
        return None
    return value if isinstance(value, str | int) else None


def http_error(status: int, headers: Headers, body: bytes) -> HttpError:
    """Reads a provider's error body (any of the shapes in the module docstring).

    A body that is a provider error object gives phase ``provider`` and the
    provider's type, code and message; anything else (an HTML page from a
    proxy, plain text, an empty body) gives phase ``transport``, type
    ``http_<status>`` and the start of the body as the message.
    """
    rid = request_id(headers)
    text = body.decode("utf-8", "replace")
    aws_type = header(headers, "x-amzn-errortype")
    aws_type = aws_type.split(":", 1)[0] or None if aws_type else None
    try:
        payload: Any = loads(text) if text.strip() else None
    except ValueError:
        payload = None
    if isinstance(payload, list) and payload and isinstance(payload[0], dict):
        payload = payload[0]  # gemini's JSON stream endpoint wraps the error in an array
    if isinstance(payload, dict):
        error = payload.get("error")
        if isinstance(error, dict):
            return HttpError(
                phase="provider",
                type=_str(error.get("type")) or _str(error.get("status")) or aws_type,
                code=_code(error.get("code")),
                message=_str(error.get("message")),
                request_id=_str(payload.get("request_id")) or _str(error.get("request_id")) or rid,
                raw=payload,
            )
        message = (
            _str(error)
            or _str(payload.get("message"))
            or _str(payload.get("Message"))
            or _str(payload.get("detail"))
        )
        kind = _str(payload.get("__type")) or aws_type
        if kind is not None and "#" in kind:
            kind = kind.rsplit("#", 1)[1]  # AWS "com.amazon...#ThrottlingException"
        if message is not None or kind is not None:
            return HttpError(
                phase="provider",
                type=kind,
                code=_code(payload.get("code")),
                message=message,
                request_id=rid,
                raw=payload,
            )
    excerpt = " ".join(text.split())[:300] or None
    return HttpError(
        phase="transport",
        type=aws_type or f"http_{status}",
        code=None,
        message=excerpt,
        request_id=rid,
        raw=text[:2000] if text else None,
    )
