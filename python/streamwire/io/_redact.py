"""Replacing the content of a recording with sha256 hashes, keeping its shape;
masking the credentials of its request wherever its bytes repeat them.

docs/design.md ("Fixtures"): recorded streams are redacted, prompts and tool
arguments replaceable by hashes. ``hash_chunks`` rewrites the recorded *wire
bytes*, chunk by chunk, by framing: SSE events are decoded, their JSON
payloads redacted and re-encoded with the same event name, id and retry
(other payloads such as ``[DONE]`` kept, comments dropped); EventStream
messages are re-encoded with the same headers and fresh CRCs (the base64
``bytes`` of ``bedrock-invoke`` chunks decoded, redacted and re-encoded);
each element of a ``gemini-json`` array is redacted.

``redact_json``: every string under a content key (``CONTENT_KEYS``, and
``TYPED_CONTENT_KEYS`` by object type), strings in lists under them too,
becomes ``"sha256:<hex>"``; an object given whole as tool input
(``STRUCTURED_KEYS``, ``TYPED_INPUT_KEYS``) becomes ``{"sha256": "<hex of
its canonical JSON>"}``; logprob ``bytes`` become ``[]``. Ids, names, types,
stop reasons, usage and error objects are kept.

Each rewritten unit (event, message, array element) goes into the chunk in
which the original unit ended, so the chunk count and arrival times survive;
bytes that never completed a unit become filler of the same length (``x``;
spaces for JSON). The redacted recording's events and result are re-derived
by replaying its own bytes (hashed fragments are no longer one JSON text, so
calls are not executable there); the unredacted result's ``facts`` are kept
under ``original``. ``mask_chunks``, applied to every recording, replaces a
credential the request carried that the body repeats with as many ``*``.
The recording around the bytes, and the replay, are ``record.py``'s.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import json
from collections.abc import Callable, Sequence
from typing import Any
from urllib.parse import quote

from .._core import EventStreamDecoder, SseDecoder, encode_eventstream, encode_sse
from .._json import dumps, loads
from ..errors import FramingError
from ._wire import Framing

__all__ = ["facts", "hash_chunks", "hash_text", "mask_chunks", "redact_json"]

CONTENT_KEYS = frozenset(
    {
        "text",
        "content",
        "thinking",
        "reasoning",
        "reasoning_content",
        "refusal",
        "delta",
        "partial_json",
        "arguments",
        "input",
        "args",
        "instructions",
        "system",
        "prompt",
        "summary",
        "token",
        "transcript",
        "cited_text",
        "stringValue",
        "query",
        "queries",
        "output",
        "command",
        "commands",
        "diff",
    }
)
#: Keys whose object value is tool input given whole.
STRUCTURED_KEYS = frozenset({"input", "args", "arguments"})


def hash_text(text: str) -> str:
    """``"sha256:<hex>"`` of the text's UTF-8 bytes."""
    return "sha256:" + hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


def _hash_value(value: Any) -> dict[str, str]:
    canonical = json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return {"sha256": hashlib.sha256(canonical.encode("utf-8", "surrogatepass")).hexdigest()}


#: Content under other keys in objects of a given ``type``.
TYPED_CONTENT_KEYS = {"code_interpreter_call": frozenset({"code"})}
#: Tool input given whole under other keys in objects of a given ``type``.
TYPED_INPUT_KEYS = {
    "computer_call": frozenset({"action", "actions"}),
    "local_shell_call": frozenset({"action"}),
}
_NONE: frozenset[str] = frozenset()


def redact_json(value: Any) -> Any:
    """A JSON value with its content replaced by hashes (see the module docstring)."""
    if isinstance(value, dict):
        kind = value.get("type")
        if not isinstance(kind, str):
            return {key: _member(key, item) for key, item in value.items()}
        typed = TYPED_CONTENT_KEYS.get(kind, _NONE)
        whole = TYPED_INPUT_KEYS.get(kind, _NONE)
        return {
            key: _hash_value(item)
            if key in whole and isinstance(item, dict | list)
            else _content(key, item)
            if key in typed
            else _member(key, item)
            for key, item in value.items()
        }
    if isinstance(value, list):
        return [redact_json(item) for item in value]
    return value


def _content(key: str, value: Any) -> Any:
    """Under a content key: every string is hashed; objects keep their other keys."""
    if isinstance(value, str):
        return hash_text(value)
    if isinstance(value, list):
        return [_content(key, item) for item in value]
    if key in STRUCTURED_KEYS and isinstance(value, dict):
        return _hash_value(value)
    return redact_json(value)


def _member(key: str, value: Any) -> Any:
    if key in CONTENT_KEYS:
        return _content(key, value)
    if key == "bytes":
        if isinstance(value, list):
            return []  # logprob token bytes
        if isinstance(value, str):
            return _redact_b64_json(value)
    if key == "functionResponse" and isinstance(value, dict):
        return {k: _hash_value(v) if k == "response" else redact_json(v) for k, v in value.items()}
    return redact_json(value)


def _redact_b64_json(value: str) -> str:
    try:
        inner = redact_json(loads(base64.b64decode(value, validate=True).decode("utf-8")))
    except (binascii.Error, ValueError, RecursionError):
        return hash_text(value)
    return base64.b64encode(_dump(inner).encode("utf-8")).decode("ascii")


def _dump(value: Any) -> str:
    return dumps(value)


def _redact_payload(data: str) -> str:
    """A payload with its content hashed; one that is not JSON (or that nests
    too deep to walk) is hashed whole."""
    try:
        return _dump(redact_json(loads(data)))
    except (ValueError, RecursionError):
        stripped = data.strip()
        return data if stripped in ("", "[DONE]") else hash_text(data)


# --- by framing -------------------------------------------------------------


def hash_chunks(chunks: Sequence[bytes], framing: Framing, *, error_body: bool) -> list[bytes]:
    """The chunks' bytes with their content hashed, one new chunk for each, by
    the body's ``framing`` (``error_body``: an HTTP error's body, one JSON
    object or text, whatever the protocol's framing)."""
    if error_body:
        return [_redact_payload(data.decode("utf-8", "replace")).encode() for data in chunks]
    if framing == "eventstream":
        return _eventstream(chunks)
    if framing == "json":
        return _json_array(chunks)
    return _sse(chunks)


def _sse(chunks: Sequence[bytes]) -> list[bytes]:
    decoder = SseDecoder()
    out: list[bytes] = []
    last_id: str | None = None
    failed_at: int | None = None
    for i, chunk in enumerate(chunks):
        try:
            events = decoder.feed(chunk)
        except FramingError as exc:
            events = list(exc.partial)  # type: ignore[arg-type]
            failed_at = i
        piece = bytearray()
        for ev in events:
            event_id = ev.id if ev.id != last_id else None
            last_id = ev.id
            piece += encode_sse(
                _redact_payload(ev.data),
                event=None if ev.event == "message" else ev.event,
                id=event_id,
                retry=ev.retry,
            )
        out.append(bytes(piece))
        if failed_at is not None:
            break
    pending = decoder.buffered_bytes if failed_at is None else 0
    _fill_tail(out, chunks, failed_at, pending, b"x")
    return out


def _hash_payload(payload: bytes) -> bytes:
    try:
        text = payload.decode("utf-8")
    except UnicodeDecodeError:
        return b"x" * len(payload)
    return _redact_payload(text).encode("utf-8") if text.strip() else payload


def _eventstream(
    chunks: Sequence[bytes],
    payload: Callable[[bytes], bytes] = _hash_payload,
    header: Callable[[str], str] | None = None,
) -> list[bytes]:
    """Each message re-encoded with ``payload(its payload)`` (and, given
    ``header``, each string header value changed by it), into the chunk where
    it ended; fresh CRCs."""
    decoder = EventStreamDecoder()
    out: list[bytes] = []
    failed_at: int | None = None
    for i, chunk in enumerate(chunks):
        try:
            messages = decoder.feed(chunk)
        except FramingError as exc:
            messages = list(exc.partial)  # type: ignore[arg-type]
            failed_at = i
        piece = bytearray()
        for msg in messages:
            headers = msg.headers
            if header is not None:
                headers = {k: header(v) if type(v) is str else v for k, v in headers.items()}
            piece += encode_eventstream(headers, payload(msg.payload))
        out.append(bytes(piece))
        if failed_at is not None:
            break
    pending = _eventstream_pending(chunks) if failed_at is None else 0
    _fill_tail(out, chunks, failed_at, pending, b"x")
    return out


def _eventstream_pending(chunks: Sequence[bytes]) -> int:
    # The bytes of an unfinished message at the end: decode again, counting
    # the bytes of complete messages (each message's length is in its prelude).
    decoder = EventStreamDecoder()
    done = 0
    for chunk in chunks:
        try:
            for msg in decoder.feed(chunk):
                done += len(encode_eventstream(msg.headers, msg.payload))
        except FramingError:
            return 0
    return sum(len(c) for c in chunks) - done


def _json_array(chunks: Sequence[bytes]) -> list[bytes]:
    body = b"".join(chunks)
    ends = []
    offset = 0
    for chunk in chunks:
        offset += len(chunk)
        ends.append(offset)
    text = body.decode("utf-8", "replace")
    # Byte offsets: re-encode the text prefix (body is UTF-8; replacement keeps positions close).
    decoder = json.JSONDecoder()
    pieces: list[tuple[int, str]] = []  # (end byte offset of the original unit, new text)
    pos = 0
    length = len(text)

    def skip(p: int) -> int:
        while p < length and text[p] in " \t\r\n":
            p += 1
        return p

    def at_byte(p: int) -> int:
        return len(text[:p].encode("utf-8"))

    pos = skip(pos)
    parsed_to = 0
    if pos < length and text[pos] == "[":
        pieces.append((at_byte(pos + 1), "["))
        pos = parsed_to = pos + 1
        first = True
        while True:
            pos = skip(pos)
            if pos < length and text[pos] == "]":
                pieces.append((at_byte(pos + 1), "]"))
                parsed_to = pos + 1
                break
            if not first:
                if pos < length and text[pos] == ",":
                    pos = skip(pos + 1)
                else:
                    break
            try:
                value, end = decoder.raw_decode(text, pos)
                redacted = _dump(redact_json(value))
            except (ValueError, RecursionError):
                break
            pieces.append((at_byte(end), ("" if first else ",\r\n") + redacted))
            pos = parsed_to = end
            first = False
    out = [bytearray() for _ in chunks]
    index = 0
    for end, piece in pieces:
        while index < len(ends) - 1 and ends[index] < end:
            index += 1
        out[index] += piece.encode("utf-8")
    tail = len(body) - at_byte(parsed_to)
    if out and tail > 0:
        out[-1] += b" " * tail  # a cut-off tail stays cut off, its content gone
    return [bytes(p) for p in out]


def _fill_tail(
    out: list[bytes],
    chunks: Sequence[bytes],
    failed_at: int | None,
    pending: int,
    filler: bytes,
) -> None:
    if failed_at is not None:
        # After a framing error nothing is parsed: mask the rest, same lengths.
        rest = chunks[failed_at]
        out[failed_at] += filler * len(rest)
        for chunk in chunks[failed_at + 1 :]:
            out.append(filler * len(chunk))
        return
    while len(out) < len(chunks):
        out.append(b"")
    if pending > 0 and out:
        out[-1] += filler * pending


def mask_chunks(
    chunks: Sequence[bytes], secrets: Sequence[str], *, eventstream: bool
) -> list[bytes] | None:
    """The chunks' bytes with every occurrence of a credential value of the
    request (``_wire.credentials``) masked by as many ``*`` (as written,
    JSON-escaped or percent-encoded, across chunk boundaries too), one new
    chunk for each; None when the bytes hold none. ``eventstream``: the body
    is EventStream frames, re-encoded with fresh CRCs."""
    forms = sorted(_forms(secrets), key=len, reverse=True)
    body = b"".join(chunks)
    if not any(form in body for form in forms):
        return None
    if eventstream:

        def mask_text(value: str) -> str:
            return _mask(value.encode("utf-8", "surrogatepass"), forms).decode(
                "utf-8", "surrogatepass"
            )

        return _eventstream(chunks, payload=lambda payload: _mask(payload, forms), header=mask_text)
    masked = _mask(body, forms)
    new_data, at = [], 0
    for chunk in chunks:
        new_data.append(masked[at : at + len(chunk)])
        at += len(chunk)
    return new_data


def _forms(secrets: Sequence[str]) -> set[bytes]:
    out: set[bytes] = set()
    for secret in secrets:
        for text in (secret, json.dumps(secret)[1:-1], quote(secret, safe="")):
            out.add(text.encode("utf-8", "surrogatepass"))
    return {form for form in out if form}


def _mask(data: bytes, forms: Sequence[bytes]) -> bytes:
    for form in forms:
        if form in data:
            data = data.replace(form, b"*" * len(form))
    return data


def facts(result: dict[str, Any] | None) -> dict[str, Any] | None:
    """The facts of an unredacted result (``result_dict`` form) a hashed
    recording keeps under ``original``: statuses, lengths and hashes."""
    if result is None:
        return None
    calls = [
        {
            "id": c.get("id"),
            "name": c.get("name"),
            "state": c.get("state"),
            "executable": c.get("executable"),
            "arguments_sha256": hash_text(c.get("raw_arguments") or "")[7:],
        }
        for choice in result.get("choices", [])
        for c in choice.get("tool_calls", [])
    ]
    error = result.get("error")
    return {
        "status": result.get("status"),
        "stop_reason": result.get("stop_reason"),
        "provider_stop_reason": result.get("provider_stop_reason"),
        "executable": result.get("executable"),
        "text_length": len(result.get("text") or ""),
        "text_sha256": hash_text(result.get("text") or "")[7:],
        "tool_calls": calls,
        "usage": result.get("usage"),
        "error": None if error is None else {k: error.get(k) for k in ("phase", "type", "code")},
    }
