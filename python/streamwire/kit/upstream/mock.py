"""The mock upstream: a real HTTP server that speaks the providers' endpoints and streams the cases.

Its endpoints are the providers' own paths, as their API references give them
(checked 2026-12-01), under any prefix, since gateways differ in where they
put the version; docs/kit/running.md ("The mock upstream") lists them, with
the mock's own ``/_sw/...`` ones.

The model a request names (the body's, or the path's for Gemini and Bedrock)
chooses the case: ``sw-<case>[.<delivery>[.<tag>]]`` (``parse_model``). The
tag is the judge's id for one cell, by which it finds the cell in the log, so
a model that breaks the grammar is refused (HTTP 400), never run untagged.
A follow-up of ``tool-error-result`` gets the answer text if its tool result
answers the call (``vocab/toolturn.py``), else the call again, as a model
that never saw the result would. A request its provider would refuse
(``upstream/contract.py``) is refused as the provider would refuse it,
unless the mock is lenient.

With ``compress`` (``mock-upstream --compress``) the mock answers as a
provider's own front does: a request whose ``Accept-Encoding`` takes gzip
(or br, with the ``brotli`` package) gets its answer in that coding, with
``Vary: Accept-Encoding``, a stream flushed after every write so that each
event decodes on arrival (``upstream/coding.py``). Every answer of a
provider's endpoint is coded: the streams (AWS EventStream's too: its
frames are bytes like any other body's, and a gateway that decodes must do
so for any media type), the whole JSON answers and the errors; the mock's
own ``/_sw/...`` answers never are, nor the slow reader's (its hold is
judged in bytes, and its text compresses so well that the sockets' buffers
alone would hold it all).

The log (``GET /_sw/log``) is bounded (``MAX_LOG``, ``MAX_LOG_BYTES``,
``MAX_LOGGED_BODY``, ``MAX_LOGGED_WRITES``) and keeps no secret: prompts,
tool arguments and results as a hash and a length (``hashed_body``), each
credential as a ``fingerprint``. Its times are ``time.time()`` seconds. A
request still running, and each open connection's newest request, stay known
past those bounds (``GET /_sw/connections``): a leak is seen however long a
load has run.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import itertools
import json
import math
import re
import secrets
import time
import zlib
from collections import deque
from collections.abc import Callable, Mapping
from functools import partial
from typing import Any
from urllib.parse import parse_qsl, unquote, urlsplit

from ...io._wire import credentials, framing_of, is_secret_header, redact_text, redact_url
from ...translate._base import dumps
from ..vocab.cases import CASE_NAMES, CASES, MAX_SLOW_BYTES, PROMPT_LEAD, Case, salted, sized
from ..vocab.delivery import DELIVERIES, UNARY, Write, schedule
from ..vocab.httpio import HttpServer, Request, Responder, TransportError, within
from ..vocab.kinds.base import Failure
from ..vocab.kinds.retry import DEFAULT_STALL
from ..vocab.names import UPSTREAM_PROTOCOLS, media_type, wire_of
from ..vocab.toolturn import declared_tools
from .coding import CODINGS, Encoder, brotli_available, choose
from .contract import Problem, problems, refusal
from .wire import failure_answer, render_json, render_stream, slow_reader_deltas, usage_requested
from .ws import WS_PROTOCOLS, is_upgrade, serve_websocket, ws_protocol
from .ws_socket import LIFETIMES, SessionLog, responded

__all__ = [
    "DEFAULT_STALL",
    "MAX_LOG",
    "MAX_LOG_BYTES",
    "MODEL_GRAMMAR",
    "MockUpstream",
    "ModelError",
    "RequestLog",
    "fingerprint",
    "hashed_body",
    "is_entry",
    "parse_model",
    "prompt_cell",
    "redact_headers",
]

#: The log keeps the last this many requests ...
MAX_LOG = 5000
#: ... and at most about this many bytes of them (bodies, and each logged
#: write counted as ``_WRITE_BYTES``): the oldest go first.
MAX_LOG_BYTES = 64 * 1024 * 1024
MAX_LOGGED_BODY = 256 * 1024
#: The most writes a request's entry keeps: the first half, and the latest
#: (the ones between folded into one, ``RequestLog.wrote``).
MAX_LOGGED_WRITES = 2000
# How many ended requests the index of running ones may hold past the log's
# bound before it is swept.
_RUNNING_SLACK = 1024
#: What one logged write ``[time, size, kinds]`` costs, roughly, in memory.
_WRITE_BYTES = 128

#: The options the check may set for a tag's requests (``PUT /_sw/tags/<tag>``),
#: each a number of seconds from the first to the second figure.
TAG_OPTIONS: Mapping[str, tuple[float, float]] = {
    "silence": (0.0, 600.0),
    "stall": (0.0, 600.0),
    # A non-streaming answer waits this long before its head (a model that
    # takes its time over a whole answer: the head-of-line case's request beside).
    "answer_after": (0.0, 60.0),
    # 1: the case's text carries the tag (``cases.salted``), so that a stream's
    # text found in another's names the stream it came from (load runs).
    "salt": (0.0, 1.0),
    # The least the slow-reader answer writes on the upstream's wire, in bytes:
    # as many deltas as that takes in its protocol (``wire.slow_reader_deltas``;
    # its own 4,096 otherwise), logged as the entry's ``deltas``.
    "answer_bytes": (1.0, float(MAX_SLOW_BYTES)),
}
#: ``load_state`` lists at most this many connections and requests in flight.
MAX_STATE_ROWS = 20000
#: Tags whose options are kept (the oldest go first).
MAX_TAG_OPTIONS = 10000
_TAG = re.compile(r"[A-Za-z0-9_]{1,64}")
_CASE = re.compile(r"sw-([a-z][a-z-]*[a-z])")
_FIELD = re.compile(r"\.([A-Za-z0-9_]*)")
#: The grammar, as the mock's errors state it.
MODEL_GRAMMAR = (
    "sw-<case>[.<delivery>[.<tag>]], the delivery one of "
    + ", ".join((*DELIVERIES, UNARY))
    + ", the tag letters, digits and _ (at most 64)"
)


class ModelError(ValueError):
    """A model names a case but breaks the grammar after it (``MODEL_GRAMMAR``)."""


def parse_model(model: str) -> tuple[Case, str, str | None] | None:
    """(case, delivery, tag) named by a model string, or None when it names no case.

    Anything before ``sw-`` is ignored (a gateway's routing prefix), and so
    is anything after the tag that cannot continue it (``-v1:0``, ``@latest``).
    A case followed by a field that is no delivery, an empty or overlong tag,
    or a field after the tag raises ``ModelError``: a mistyped model must not
    run a cell that the judge then cannot find."""
    text = unquote(model)
    for match in _CASE.finditer(text):
        case = CASES.get(match.group(1))
        if case is None:
            continue
        fields = []
        pos = match.end()
        while (field := _FIELD.match(text, pos)) is not None:
            fields.append(field.group(1))
            pos = field.end()
        if not fields:
            return case, "whole", None
        if fields[0] not in DELIVERIES and fields[0] != UNARY:
            raise ModelError(
                f"model {model!r} names no delivery {fields[0]!r}: use {MODEL_GRAMMAR}"
            )
        if len(fields) > 2 or (len(fields) == 2 and not 0 < len(fields[1]) <= 64):
            raise ModelError(f"model {model!r} is not {MODEL_GRAMMAR}")
        return case, fields[0], fields[1] if len(fields) == 2 else None
    return None


#: ``prompt_cell`` reads at most this many strings of a body, and this deep.
_PROMPT_STRINGS = 256
_PROMPT_DEPTH = 12


def prompt_cell(body: Any) -> str | None:
    """The cell a request's prompt names (``cases.PROMPT``: the words
    ``PROMPT_LEAD`` and then ``sw-<case>...``), or None: the first of the
    body's strings (at most ``_PROMPT_STRINGS``, ``_PROMPT_DEPTH`` deep) that
    carries them, whatever the protocol's shape of a message."""
    seen = 0
    stack: list[tuple[Any, int]] = [(body, 0)]
    while stack and seen < _PROMPT_STRINGS:
        value, depth = stack.pop()
        if isinstance(value, str):
            seen += 1
            at = value.find(PROMPT_LEAD)
            if at >= 0:
                rest = value[at + len(PROMPT_LEAD) :]
                name = rest.split(":", 1)[0].split(None, 1)[0] if rest.strip() else ""
                if name.startswith("sw-"):
                    return name
        elif depth < _PROMPT_DEPTH and isinstance(value, dict):
            values = list(itertools.islice(value.values(), _PROMPT_STRINGS))
            stack.extend((v, depth + 1) for v in reversed(values))
        elif depth < _PROMPT_DEPTH and isinstance(value, list):
            stack.extend((v, depth + 1) for v in reversed(value[:_PROMPT_STRINGS]))
    return None


def _chosen(entry: dict[str, Any], model: str, body: Any) -> tuple[Case, str, str | None] | None:
    """The (case, delivery, tag) the model names, or, for a gateway that sends
    one fixed model, the prompt (noted in ``entry``); None when neither does.
    Raises ``ModelError`` for a model or prompt that breaks the grammar."""
    chosen = parse_model(model)
    if chosen is None and (named := prompt_cell(body)) is not None:
        chosen = parse_model(named)
        entry["case_from"] = "prompt"
    return chosen


def _no_case(model: str) -> str:
    """What a request whose model and prompt name no case is told."""
    return (
        f"model {model!r} is not a case, and no prompt names one: use sw-<case>, one "
        f"of {', '.join(CASE_NAMES)}, or a prompt '{PROMPT_LEAD}sw-<case>...'"
    )


def redact_headers(headers: list[tuple[str, str]]) -> list[tuple[str, str]]:
    """The headers with the values of credentials replaced by ``[removed]`` (the
    names kept, to show what was sent); which headers are credentials is the
    HTTP edge's rule (``streamwire.io``, the one recordings follow), and so is
    the scan of the other values for a credential the request carried."""
    known = credentials(headers, None)
    return [(k, "[removed]" if is_secret_header(k) else redact_text(v, known)) for k, v in headers]


def fingerprint(secret: str) -> dict[str, Any]:
    """What the log keeps of a credential: the first 16 hex digits of its
    SHA-256 and its length (enough to tell whether a known key arrived)."""
    digest = hashlib.sha256(secret.encode("utf-8", "surrogatepass")).hexdigest()
    return {"sha256": digest[:16], "length": len(secret)}


#: Body members whose string values the log keeps as they are: names, roles,
#: types, ids and settings, never what a user or a tool wrote.
_KEPT_MEMBERS = frozenset(
    {
        "model",
        "role",
        "type",
        "name",
        "id",
        "call_id",
        "tool_call_id",
        "tool_use_id",
        "toolUseId",
        "status",
        "anthropic_version",
        "effort",
        "summary",
        "stream",
        "mimeType",
        "finish_reason",
        "previous_response_id",
    }
)
_MAX_DEPTH = 64


def hashed_body(value: Any, key: str = "", depth: int = 0) -> Any:
    """A request body as the log keeps it: its structure, numbers, booleans and
    the strings of ``_KEPT_MEMBERS``; every other string (a prompt, a system
    prompt, a tool's arguments or result) as ``"[sha256:<12 hex> len <n>]"``."""
    if depth > _MAX_DEPTH:
        return "[deeper than the log keeps]"
    if isinstance(value, dict):
        return {k: hashed_body(v, k, depth + 1) for k, v in value.items()}
    if isinstance(value, list):
        return [hashed_body(v, key, depth + 1) for v in value]
    if isinstance(value, str) and key not in _KEPT_MEMBERS:
        digest = hashlib.sha256(value.encode("utf-8", "surrogatepass")).hexdigest()
        return f"[sha256:{digest[:12]} len {len(value)}]"
    return value


def _redacted(path: str, query: str) -> tuple[str, str]:
    """The path and query as the log keeps them: secret-named parameters
    removed, by the HTTP edge's rule (``&`` or ``;`` separated, and a path
    segment's ``;key=`` parameters)."""
    parts = urlsplit(redact_url(f"http://mock{path}?{query}"))
    return parts.path, parts.query


def _route(method: str, path: str, query: str, body: Any) -> tuple[str, bool, str] | None:
    """(upstream protocol, streamed, model) of a request, or None."""
    if method != "POST":
        return None
    model = body.get("model") if isinstance(body, dict) else None
    model = model if isinstance(model, str) else ""
    stream = isinstance(body, dict) and body.get("stream") is True
    if path.endswith("/chat/completions"):
        return "openai-chat", stream, model
    if path.endswith("/responses"):
        return "openai-responses", stream, model
    if path.endswith("/messages"):
        return "anthropic", stream, model
    if ":streamGenerateContent" in path or ":generateContent" in path:
        head, _, verb = path.rpartition(":")
        name = unquote(head.rpartition("/models/")[2])
        sse = "alt=sse" in query
        streamed = verb == "streamGenerateContent"
        return ("gemini" if sse or not streamed else "gemini-json"), streamed, name
    parts = path.split("/")
    if len(parts) >= 4 and parts[-3] == "model":
        name, verb = unquote(parts[-2]), parts[-1]
        if verb in ("converse-stream", "converse"):
            return "bedrock-converse", verb == "converse-stream", name
        if verb in ("invoke-with-response-stream", "invoke"):
            return "bedrock-invoke", verb == "invoke-with-response-stream", name
    return None


def _json(value: Any) -> bytes:
    return dumps(value).encode()


async def _send(
    responder: Responder,
    entry: dict[str, Any],
    coder: Encoder,
    status: int,
    headers: list[tuple[str, str]],
    payload: bytes,
) -> None:
    """Sends a whole body, coded whole, and logs its status and wire bytes."""
    entry["status"] = status
    body = coder.whole(payload)
    entry["wire_bytes"] = len(body)
    await responder.send(status, _with_request_id(entry, [*headers, *coder.headers()]), body)


async def _refuse(
    responder: Responder,
    entry: dict[str, Any],
    coder: Encoder,
    status: int,
    kind: str,
    message: str,
) -> None:
    """Answers a request the mock cannot serve, and logs its status."""
    error = {"error": {"type": kind, "message": message, "code": status}}
    headers = [("content-type", "application/json")]
    await _send(responder, entry, coder, status, headers, _json(error))


async def _answer(
    responder: Responder,
    entry: dict[str, Any],
    coder: Encoder,
    status: int,
    headers: list[tuple[str, str]],
    payload: bytes,
) -> None:
    """Sends a whole answer (a refusal, an error, a non-streaming body), and logs it."""
    await _send(responder, entry, coder, status, headers, payload)
    entry["completed"] = True
    entry["ended_at"] = time.time()


async def _whole_answer(
    responder: Responder,
    entry: dict[str, Any],
    coder: Encoder,
    upstream: str,
    render: Callable[[], tuple[int, list[tuple[str, str]], bytes]],
    failure: Failure | None,
    stall: float | None,
) -> None:
    """A non-streaming answer (``render``), after the stall if the client is
    still there; a failed attempt fails as a whole, as the provider's error."""
    if stall is not None and await _hung_up_within(responder, stall):
        entry["disconnected_at"] = responder.disconnected_at
        entry["ended_at"] = time.time()
        return
    if failure is not None and not failure.stall:
        await _fail(responder, entry, coder, upstream, failure)
        return
    await _answer(responder, entry, coder, *render())


async def _fail(
    responder: Responder, entry: dict[str, Any], coder: Encoder, upstream: str, failure: Failure
) -> None:
    """Answers an attempt that fails before any byte with the provider's error
    (``wire.failure_answer``), and logs how it failed and the ``Retry-After``
    it gave (seconds, None without one): the judge holds the next attempt to it."""
    entry["failed"] = failure.name
    status, headers, body = failure_answer(upstream, failure.answer)
    wait = next((v for k, v in headers if k == "retry-after"), None)
    entry["retry_after"] = float(wait) if wait is not None else None
    await _answer(responder, entry, coder, status, headers, body)


async def _hung_up_within(responder: Responder, seconds: float) -> bool:
    """Waits ``seconds`` without a byte; whether the other end hung up meanwhile."""
    responder.watch()
    with contextlib.suppress(asyncio.TimeoutError):
        await within(responder.disconnected.wait(), seconds)
    return responder.disconnected.is_set()


#: The header each provider names its request id in (OpenAI "Debugging
#: requests" ``x-request-id``, Anthropic "Errors" ``request-id``, AWS
#: ``x-amzn-RequestId``; checked 2026-12-02). Gemini's API documents none.
REQUEST_ID_HEADER: Mapping[str, str] = {
    "openai-chat": "x-request-id",
    "openai-responses": "x-request-id",
    "anthropic": "request-id",
    "bedrock-converse": "x-amzn-requestid",
    "bedrock-invoke": "x-amzn-requestid",
}


def _with_request_id(
    entry: dict[str, Any], headers: list[tuple[str, str]]
) -> list[tuple[str, str]]:
    """``headers`` and the upstream's request id header, when the entry has one."""
    name = REQUEST_ID_HEADER.get(entry.get("upstream") or "")
    rid = entry.get("request_id")
    return [*headers, (name, rid)] if name and isinstance(rid, str) else headers


_NUMBER = (int, float)
_NONE = type(None)
#: What the judge reads of a log entry, and the types it must have: the log
#: comes over HTTP from whatever ``--mock`` names, so it is checked on arrival.
_ENTRY_FIELDS: Mapping[str, tuple[type, ...]] = {
    "id": (int,),
    "t": _NUMBER,
    "path": (str,),
    "upstream": (str, _NONE),
    "stream": (bool, _NONE),
    "status": (int, _NONE),
    "writes": (list,),
    "writes_dropped": (int,),
    "bytes_sent": (int,),
    "completed": (bool,),
    "disconnected_at": (*_NUMBER, _NONE),
    "ended_at": (*_NUMBER, _NONE),
    "usage_sent": (bool, _NONE),
    "tool_result": (dict, _NONE),
    "tools": (list, _NONE),
    "attempt": (int,),
    "failed": (str, _NONE),
    "retry_after": (*_NUMBER, _NONE),
    "credentials": (list, _NONE),
    "request_problems": (list, _NONE),
    "request_id": (str, _NONE),
    "deltas": (int, _NONE),
}
#: The fields of ``tool_result`` (``toolturn.check_tool_result``).
_RESULT_FIELDS: Mapping[str, tuple[type, ...]] = {
    "found": (bool,),
    "expected": (str, _NONE),
    "seen": (list,),
    "correlated": (bool,),
    "call_in_history": (bool,),
    "is_error": (bool, _NONE),
    "flag_exists": (bool,),
}


def _fields_ok(value: Mapping[str, Any], fields: Mapping[str, tuple[type, ...]]) -> bool:
    return all(isinstance(value.get(k), types) for k, types in fields.items())


def is_entry(value: Any) -> bool:
    """Whether ``value`` is a log entry as the mock writes it (the fields the judge reads)."""
    if not isinstance(value, dict) or not _fields_ok(value, _ENTRY_FIELDS):
        return False
    upstream = value.get("upstream")
    if upstream is not None and upstream not in UPSTREAM_PROTOCOLS and upstream not in WS_PROTOCOLS:
        return False
    result = value.get("tool_result")
    if result is not None and not _fields_ok(result, _RESULT_FIELDS):
        return False
    for found in value.get("request_problems") or ():
        if not (
            isinstance(found, list) and len(found) == 2 and all(isinstance(x, str) for x in found)
        ):
            return False
    for credential in value.get("credentials") or ():
        if not (
            isinstance(credential, dict)
            and isinstance(credential.get("sha256"), str)
            and isinstance(credential.get("length"), int)
        ):
            return False
    return all(_write_ok(w) for w in value["writes"])


def _write_ok(write: Any) -> bool:
    # [time, size, kinds, content] and, in a coded answer, its wire bytes:
    # content maps a kind to its characters.
    if not (isinstance(write, list) and len(write) in (4, 5)):
        return False
    at, size, kinds, content = write[:4]
    return (
        isinstance(at, _NUMBER)
        and isinstance(size, int)
        and (len(write) == 4 or type(write[4]) is int)
        and isinstance(kinds, list)
        and all(isinstance(k, str) for k in kinds)
        and isinstance(content, dict)
        and all(isinstance(k, str) and type(v) is int for k, v in content.items())
    )


class RequestLog:
    """The mock's record of requests, bounded by ``MAX_LOG`` and ``MAX_LOG_BYTES``."""

    def __init__(self) -> None:
        self._entries: deque[dict[str, Any]] = deque()
        self._by_tag: dict[str, list[dict[str, Any]]] = {}
        self._ids = itertools.count(1)
        self._bytes = 0
        #: Entries dropped to keep within the bounds.
        self.dropped = 0
        # Kept apart from the bounded log, so that a request still running, or
        # the last request of a connection still open, is never forgotten (a
        # leak seen an hour into a load): entry id -> entries not known to have
        # ended, and connection -> its newest request, until it closes.
        self._running: dict[int, dict[str, Any]] = {}
        self._last: dict[int, dict[str, Any]] = {}

    def add(self, request: Request, body: Any) -> dict[str, Any]:
        """A new entry for ``request`` (its parsed JSON ``body``), kept as the newest."""
        kept = len(request.body) <= MAX_LOGGED_BODY
        entry: dict[str, Any] = {
            "id": next(self._ids),
            "t": request.received_at,
            "method": request.method,
            "path": _redacted(request.path, request.query)[0],
            "query": _redacted(request.path, request.query)[1],
            "headers": redact_headers(request.headers),
            "body": hashed_body(body) if kept else None,
            "body_bytes": len(request.body),
            "credentials": [
                fingerprint(c)
                for c in credentials(request.headers, f"http://mock{request.path}?{request.query}")
            ],
            "request_problems": [],
            "request_id": None,
            "upstream": None,
            "case": None,
            "delivery": None,
            "tag": None,
            "status": None,
            "writes": [],
            "writes_dropped": 0,
            "bytes_sent": 0,
            "coding": "identity",
            "wire_bytes": 0,
            "completed": False,
            "disconnected_at": None,
            "ended_at": None,
            "attempt": 1,
            "failed": None,
            "retry_after": None,
            "connection": request.connection,
        }
        self._entries.append(entry)
        self._running[entry["id"]] = entry
        if len(self._running) > MAX_LOG + _RUNNING_SLACK:
            self._forget_ended()
        if request.connection:
            self._last[request.connection] = entry
        self._grow(len(request.body) if kept else 0)
        return entry

    def closed(self, connection: int) -> None:
        """``connection`` has closed: its newest request is no longer kept for it."""
        self._last.pop(connection, None)

    def _forget_ended(self) -> None:
        self._running = {k: e for k, e in self._running.items() if e["ended_at"] is None}

    def tagged(self, entry: dict[str, Any], tag: str) -> None:
        """``entry`` is the request of ``tag``: ``entries(tag)`` finds it without a scan."""
        entry["tag"] = tag
        self._by_tag.setdefault(tag, []).append(entry)

    def wrote(
        self,
        entry: dict[str, Any],
        size: int,
        kinds: tuple[str, ...],
        content: tuple[tuple[str, int], ...] = (),
        wire: int | None = None,
    ) -> None:
        """The mock wrote ``size`` bytes carrying ``kinds`` (and ``content``:
        characters by kind) for ``entry``'s request; ``wire``: the bytes they
        took on the wire once coded (``--compress``), None when not coded."""
        entry["bytes_sent"] += size
        entry["wire_bytes"] += size if wire is None else wire
        writes = entry["writes"]
        logged: list[Any] = [round(time.time(), 6), size, list(kinds), dict(content)]
        writes.append(logged if wire is None else [*logged, wire])
        if len(writes) <= MAX_LOGGED_WRITES:
            self._grow(_WRITE_BYTES)
            return
        # Both ends stay: the first half (how the answer began) and the latest
        # writes (its last write, the writes after a hang-up); the oldest of
        # the latest is folded into the one before it (its time the later
        # write's, sizes and characters summed), so the content written up to
        # any write still adds up, as the timed layers read it.
        into, folded = writes[MAX_LOGGED_WRITES // 2], writes.pop(MAX_LOGGED_WRITES // 2 + 1)
        into[0] = folded[0]
        into[1] += folded[1]
        into[2] = list(dict.fromkeys([*into[2], *folded[2]]))
        for key, chars in folded[3].items():
            into[3][key] = into[3].get(key, 0) + chars
        if len(into) > 4 and len(folded) > 4:
            into[4] += folded[4]
        entry["writes_dropped"] += 1

    def _grow(self, size: int) -> None:
        self._bytes += size
        entries = self._entries
        while len(entries) > 1 and (len(entries) > MAX_LOG or self._bytes > MAX_LOG_BYTES):
            old = entries.popleft()
            tagged = self._by_tag.get(old["tag"]) if old["tag"] is not None else None
            if tagged is not None:
                tagged[:] = [e for e in tagged if e is not old]
                if not tagged:
                    del self._by_tag[old["tag"]]
            self._bytes -= len(old["writes"]) * _WRITE_BYTES
            self._bytes -= old["body_bytes"] if old["body"] is not None else 0
            if old["ended_at"] is not None:
                self._running.pop(old["id"], None)
            self.dropped += 1

    def entries(self, tag: str | None = None, since: int = 0) -> list[dict[str, Any]]:
        """The logged requests (of one tag, after id ``since``), oldest first."""
        if tag is not None:
            return [e for e in self._by_tag.get(tag, ()) if e["id"] > since]
        return [e for e in self._entries if e["id"] > since]

    def in_flight(self) -> list[dict[str, Any]]:
        """The requests whose answer has not ended, oldest first (those the log
        has dropped included)."""
        self._forget_ended()
        return list(self._running.values())

    def last_of_connections(self, connections: list[int]) -> dict[int, dict[str, Any]]:
        """The newest request of each of ``connections`` (``Request.connection``)
        that is open."""
        return {n: self._last[n] for n in connections if n in self._last}


class MockUpstream:
    """The mock upstream; ``async with MockUpstream() as mock: mock.url``.

    ``lenient``: a request the provider would refuse (``upstream/contract.py``) is
    logged with its problems and streamed all the same, for a gateway under
    construction; by default it is refused as the provider would.

    ``compress``: an answer to a request whose ``Accept-Encoding`` takes gzip
    (or br, when the ``brotli`` package is installed: ``codings``) is sent
    compressed in the coding it prefers, a stream flushed after every write,
    as providers' own fronts do (``upstream/coding.py``); by default every
    answer is identity. The log keeps each write's uncompressed size and
    content, as always, and its wire bytes, and each request's ``coding``."""

    def __init__(
        self,
        host: str = "127.0.0.1",
        port: int = 0,
        *,
        lenient: bool = False,
        compress: bool = False,
        ws_lifetime: float | None = None,
    ) -> None:
        if ws_lifetime is not None and not 0 < ws_lifetime < math.inf:
            raise ValueError(f"ws_lifetime: a finite number of seconds, not {ws_lifetime!r}")
        self.log = RequestLog()
        #: The WebSocket sessions, message by message (``GET /_sw/sessions``).
        self.sessions = SessionLog()
        #: How long a WebSocket connection lasts (None: each provider's, ``ws_socket.LIFETIMES``).
        self.lifetime = ws_lifetime
        self._server = HttpServer(self._handle, host=host, port=port, on_close=self.log.closed)
        self.lenient = lenient
        self.compress = compress
        #: The codings the mock answers in under ``compress``.
        self.codings: tuple[str, ...] = CODINGS if brotli_available() else ("gzip",)
        self._tag_options: dict[str, dict[str, float]] = {}
        self._id_prefix = secrets.token_hex(4)

    async def start(self) -> MockUpstream:
        await self._server.start()
        return self

    async def close(self) -> None:
        await self._server.close()

    async def __aenter__(self) -> MockUpstream:
        return await self.start()

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    @property
    def url(self) -> str:
        return self._server.url

    def entries(self, tag: str | None = None, since: int = 0) -> list[dict[str, Any]]:
        """The logged requests (of one tag, after id ``since``), oldest first."""
        return self.log.entries(tag, since)

    def load_state(self) -> dict[str, Any]:
        """What a load run reads of the mock (``GET /_sw/connections``): each open
        connection with its newest request's tag, and the requests in flight
        (the first ``MAX_STATE_ROWS`` of each)."""

        def row(entry: dict[str, Any] | None) -> dict[str, Any] | None:
            if entry is None:
                return None
            return {
                "tag": entry["tag"],
                "case": entry["case"],
                "ended": entry["ended_at"] is not None,
                "disconnected": entry["disconnected_at"] is not None,
            }

        connections = self.connections()
        flying = self.log.in_flight()
        return {
            "open_connections": len(connections),
            "connections": [
                {"connection": n, "last": row(e)}
                for n, e in itertools.islice(connections.items(), MAX_STATE_ROWS)
            ],
            "in_flight": len(flying),
            "requests": [
                {"tag": e["tag"], "case": e["case"], "since": e["t"]}
                for e in flying[:MAX_STATE_ROWS]
            ],
        }

    def connections(self) -> dict[int, dict[str, Any] | None]:
        """Each connection open now (``Request.connection``) -> its newest logged
        request (None when it has sent none, or the log has dropped it)."""
        numbers = self._server.open_connections()
        last = self.log.last_of_connections(numbers)
        return {n: last.get(n) for n in numbers}

    # --- requests -------------------------------------------------------------------

    def set_tag_options(self, tag: str, options: Mapping[str, Any]) -> None:
        """What the requests of ``tag`` get (``TAG_OPTIONS``: ``silence``, ``stall``
        seconds, ``salt``, the slow reader's ``answer_bytes``); ValueError for an
        unknown option or a value out of range."""
        checked: dict[str, float] = {}
        for key, value in options.items():
            low, high = TAG_OPTIONS.get(key, (None, None))
            if low is None or high is None:
                raise ValueError(f"unknown tag option {key!r}; known: {', '.join(TAG_OPTIONS)}")
            if isinstance(value, bool) or not isinstance(value, int | float):
                raise ValueError(f"tag option {key!r} must be a number")
            if not low <= value <= high:
                raise ValueError(f"tag option {key!r} must be from {low} to {high}")
            checked[key] = float(value)
        if not _TAG.fullmatch(tag):
            raise ValueError(f"not a tag: {tag!r}")
        self._tag_options[tag] = checked
        while len(self._tag_options) > MAX_TAG_OPTIONS:
            self._tag_options.pop(next(iter(self._tag_options)))

    def _encoder(self, request: Request, entry: dict[str, Any]) -> Encoder:
        """How the answer to ``request`` is coded (``compress``), logged in
        ``entry``: its ``coding``, and a ``coding_note`` when the request
        preferred br and this mock cannot send it."""
        if not self.compress:
            return Encoder(None, vary=False)
        accept = ", ".join(v for k, v in request.headers if k == "accept-encoding")
        coding = choose(accept, self.codings)
        if coding != "br" and choose(accept, CODINGS) == "br":
            entry["coding_note"] = (
                f"br was asked for, but the brotli package is not installed: "
                f"answered {coding or 'identity'}"
            )
        entry["coding"] = coding or "identity"
        return Encoder(coding, vary=True)

    async def _handle(self, request: Request, responder: Responder) -> None:
        if is_upgrade(request):
            if ws_protocol(request.path) is None:
                # Logged, as every request is: a gateway's upgrade at a path the
                # mock serves no session at.
                entry = self.log.add(request, None)
                message = f"no WebSocket endpoint {request.path}"
                coder = Encoder(None, vary=False)
                await _refuse(responder, entry, coder, 404, "not_found_error", message)
                return
            await serve_websocket(self, request, responder)
            return
        if request.method == "GET":
            await self._get(request, responder)
            return
        if request.method == "PUT" and request.path.startswith("/_sw/tags/"):
            await self._put_tag(request, responder)
            return
        try:
            body: Any = json.loads(request.body) if request.body else None
        except (UnicodeDecodeError, ValueError):
            body = None
        route = _route(request.method, request.path, request.query, body)
        entry = self.log.add(request, body)
        coder = self._encoder(request, entry)
        if route is None:
            await _refuse(
                responder, entry, coder, 404, "not_found_error", f"no endpoint {request.path}"
            )
            return
        upstream, streamed, model = route
        entry.update(upstream=upstream, stream=streamed, model=model)
        if upstream in REQUEST_ID_HEADER:
            # Unique to this mock and request: the judge looks for it in the answer.
            entry["request_id"] = f"req_sw{self._id_prefix}{entry['id']}"
        try:
            chosen = _chosen(entry, model, body)
        except ModelError as exc:
            await _refuse(responder, entry, coder, 400, "invalid_request_error", str(exc))
            return
        if chosen is None:
            await _refuse(responder, entry, coder, 404, "not_found_error", _no_case(model))
            return
        case, delivery, tag = chosen
        options = self._tag_options.get(tag or "", {})
        if options.get("answer_bytes"):
            # The slow reader's answer, as many deltas as the tag's bytes take here.
            case = sized(case, slow_reader_deltas(upstream, int(options["answer_bytes"])))
        entry.update(case.kind.logged(case))
        if case.kind.send_buffer is not None and coder.coding is not None:
            # The slow reader's bound is in the answer's bytes, and its repeated
            # text compresses a thousandfold: coded, a socket's buffer would
            # hold the whole answer, and the judge count it as the hop's.
            coder = Encoder(None, vary=True)
            entry["coding"] = "identity"
            entry["coding_note"] = (
                "the slow reader's answer is never compressed: its hold is judged in bytes"
            )
        if tag is not None and options.get("salt"):
            case = salted(case, tag)
        attempt = self._entered(entry, case, delivery, tag)
        found: list[Problem] = problems(upstream, body, request.headers)
        entry["request_problems"] = [p.as_list() for p in found]
        if found and not self.lenient:
            entry["refused"] = True
            await _answer(responder, entry, coder, *refusal(upstream, found[0]))
            return
        if case.calls:
            # What a provider's model could call (the mock streams the case's
            # calls anyway, so that the stream is judged too).
            entry["tools"] = declared_tools(upstream, body)
        follow_up = entry["follow_up"] = case.kind.tool_turn(upstream, body, case, entry)
        failure = case.kind.failure(attempt)
        stall = options.get("stall", DEFAULT_STALL) if failure and failure.stall else None
        if not streamed:
            if stall is None and options.get("answer_after"):
                stall = entry["answer_after"] = options["answer_after"]
            render = partial(
                render_json, case, upstream, model=model, follow_up=follow_up, attempt=attempt
            )
            await _whole_answer(responder, entry, coder, upstream, render, failure, stall)
            return
        usage = entry["usage_sent"] = usage_requested(upstream, body)
        if failure is not None:
            entry["failed"] = failure.name
            if failure.before_output:
                await _fail(responder, entry, coder, upstream, failure)
                return
        units = render_stream(
            case,
            upstream,
            model=model,
            usage=usage,
            follow_up=follow_up,
            attempt=attempt,
            silence=options.get("silence"),
        )
        writes = schedule(
            failure.cut(units) if failure is not None else units,
            "whole" if delivery == UNARY else delivery,
            sse=framing_of(upstream) == "sse",
            shaping="events" if follow_up else case.shaping,
            gap=None if follow_up else case.gap,
            seed=zlib.crc32(f"{case.name}/{upstream}/{delivery}".encode()),
        )
        entry["status"] = 200
        if case.kind.send_buffer is not None:
            responder.send_buffer(case.kind.send_buffer)
        reset = failure is not None and failure.reset_after_texts is not None
        await self._stream(
            responder, upstream, writes, entry, coder, stall=stall or 0.0, reset=reset
        )

    def _entered(self, entry: dict[str, Any], case: Case, delivery: str, tag: str | None) -> int:
        """Logs ``entry`` as an attempt at the tag's ``case``, and returns its
        number (1 + the tag's earlier entries of the same case)."""
        attempt = 1
        if tag is not None:
            attempt += sum(
                1 for e in self.log.entries(tag) if e is not entry and e["case"] == case.name
            )
        entry.update(case=case.name, delivery=delivery, attempt=attempt)
        if tag is not None:
            self.log.tagged(entry, tag)
        return attempt

    def ws_session(self, protocol: str, request: Request) -> dict[str, Any]:
        """A new WebSocket session's record in the session log."""
        return self.sessions.open(protocol, request, *_redacted(request.path, request.query))

    def ws_lifetime(self, protocol: str) -> float:
        """How long a WebSocket connection of ``protocol`` lasts, in seconds."""
        return self.lifetime if self.lifetime is not None else LIFETIMES[protocol]

    async def ws_case(
        self,
        request: Request,
        body: dict[str, Any],
        upstream: str,
        session: dict[str, Any] | None = None,
        refuse: str | None = None,
    ) -> tuple[dict[str, Any], list[Write]] | str:
        """One response of a WebSocket session (``upstream/ws.py``): its log
        entry and its writes, or the error message the session sends instead
        (a model and a prompt that name no case). ``request`` is the
        session's upgrade with the message as its body; ``session`` its
        record in the session log, which the entry names and which names it.
        ``refuse``: the session refuses the message with this error code
        (its rules'), logged as its case's entry, ``failed`` so."""
        entry = self.log.add(request, body)
        given = body.get("model")
        model = given if isinstance(given, str) else ""
        entry.update(upstream=upstream, stream=True, model=model)
        if session is not None:
            entry["session"] = session["id"]
            responded(session, entry["id"], None)
        try:
            chosen = _chosen(entry, model, body)
        except ModelError as exc:
            chosen, refused = None, str(exc)
        else:
            refused = _no_case(model)
        if chosen is None:
            entry.update(status=400, refused=True, ended_at=time.time())
            return refused
        case, delivery, tag = chosen
        if session is not None:
            responded(session, entry["id"], tag)
        options = self._tag_options.get(tag or "", {})
        if tag is not None and options.get("salt"):
            case = salted(case, tag)
        attempt = self._entered(entry, case, delivery, tag)
        if refuse is not None:
            entry.update(status=400, failed=refuse, ended_at=time.time())
            return refuse
        wire = wire_of(upstream)
        if case.calls:
            entry["tools"] = declared_tools(wire, body)
        follow_up = entry["follow_up"] = case.kind.tool_turn(wire, body, case, entry)
        entry["usage_sent"] = True
        units = render_stream(
            case,
            wire,
            model=model,
            usage=True,
            follow_up=follow_up,
            attempt=attempt,
            silence=options.get("silence"),
        )
        writes = schedule(
            units,
            "paced" if delivery == "paced" else "whole",
            sse=True,
            shaping="events",
            gap=None if follow_up else case.gap,
            seed=zlib.crc32(f"{case.name}/{upstream}/{delivery}".encode()),
        )
        return entry, writes

    async def _put_tag(self, request: Request, responder: Responder) -> None:
        headers = [("content-type", "application/json")]
        tag = request.path.removeprefix("/_sw/tags/")
        try:
            options = json.loads(request.body or b"{}")
            if not isinstance(options, dict):
                raise ValueError("the body must be a JSON object of options")
            self.set_tag_options(tag, options)
        except (ValueError, UnicodeDecodeError) as exc:
            error = {"error": {"type": "invalid_request_error", "message": str(exc)}}
            await responder.send(400, headers, _json(error))
            return
        await responder.send(200, headers, _json({"tag": tag, "options": options}))

    async def _stream(
        self,
        responder: Responder,
        upstream: str,
        writes: list[Any],
        entry: dict[str, Any],
        coder: Encoder,
        *,
        stall: float = 0.0,
        reset: bool = False,
    ) -> None:
        headers = _with_request_id(
            entry,
            [
                ("content-type", media_type(upstream)),
                ("cache-control", "no-cache"),
                *coder.headers(),
            ],
        )
        coded = coder.coding is not None
        try:
            if stall and await _hung_up_within(responder, stall):
                # Not a byte, not even the head, for ``stall`` seconds (a gateway
                # that hangs up meanwhile is seen going).
                return
            await responder.start(200, headers)
            for write in writes:
                if write.delay:
                    with contextlib.suppress(asyncio.TimeoutError):
                        await within(responder.disconnected.wait(), write.delay)
                if responder.disconnected.is_set():
                    break
                # Coded, each write is flushed: it decodes as soon as it arrives.
                data = coder.chunk(write.data)
                await responder.write(data)
                wire = len(data) if coded else None
                self.log.wrote(entry, len(write.data), write.kinds, write.content, wire)
            else:
                if reset:
                    responder.abort()  # the upstream breaks off mid-stream
                    entry["reset"] = True
                    return
                tail = coder.finish()  # not a write of the answer's: only its wire bytes
                entry["wire_bytes"] += len(tail)
                await responder.write(tail)
                await responder.end()
                entry["completed"] = True
        except TransportError:
            pass
        finally:
            entry["ended_at"] = time.time()
            if responder.disconnected.is_set():
                entry["disconnected_at"] = responder.disconnected_at
                responder.abort()

    async def _get(self, request: Request, responder: Responder) -> None:
        headers = [("content-type", "application/json")]
        if request.path == "/_sw/log":
            params = dict(parse_qsl(request.query))
            after = params.get("since", "")
            since = int(after) if after.isascii() and after.isdigit() else 0
            doc = {"requests": self.entries(params.get("tag"), since), "dropped": self.log.dropped}
            await responder.send(200, headers, _json(doc))
        elif request.path == "/_sw/sessions":
            params = dict(parse_qsl(request.query))
            after = params.get("since", "")
            since = int(after) if after.isascii() and after.isdigit() else 0
            sessions = self.sessions.sessions(params.get("tag"), since)
            doc = {"sessions": sessions, "dropped": self.sessions.dropped}
            await responder.send(200, headers, _json(doc))
        elif request.path == "/_sw/connections":
            await responder.send(200, headers, _json(self.load_state()))
        elif request.path == "/_sw/cases":
            doc = {"cases": {n: c.purpose for n, c in CASES.items()}, "deliveries": DELIVERIES}
            await responder.send(200, headers, _json(doc))
        elif request.path.endswith("/models"):
            data = [{"id": f"sw-{n}", "object": "model", "owned_by": "streamwire"} for n in CASES]
            await responder.send(200, headers, _json({"object": "list", "data": data}))
        else:
            await responder.send(404, headers, _json({"error": {"message": "not found"}}))
