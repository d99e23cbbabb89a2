"""The judge's client: one request in a client protocol, its answer read with streamwire and timed.

``client_request`` builds the request a user of each SDK would send for a
case (OpenAI "Create chat completion" and "Create a model response",
Anthropic "Messages", Gemini "models.streamGenerateContent" with
``alt=sse``; checked 2026-12-01), declaring the practice's side-effect-free
tools when the case calls one and asking for the model's reasoning when the
case has some (``reasoning_effort``; ``reasoning.summary``; ``thinking``
with a budget; ``thinkingConfig.includeThoughts``), since a provider streams
it only when asked. ``observe`` sends it and reads the answer:
every body piece with its arrival time, the framing events (``sw.SseDecoder``)
and the unified events (``sw.stream(client)``) beside the raw bytes, so that
the judge can say which layer lost what. What it keeps is bounded: the first
and last bytes, events and wire events, the arrival times of the first
``MAX_TIMES`` pieces; counts and hashes of the rest.
"""

from __future__ import annotations

import hashlib
import json
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from .._core import SseDecoder
from ..errors import FramingError
from ..events import Event, TextDelta
from ..io._wire import media_type
from ..metrics import Timing
from ..result import StreamResult
from .cases import TOOLS, Case
from .httpio import HttpTimeout, TransportError, open_request
from .names import CLIENTS, adapter
from .names import media_type as media_type_of

__all__ = ["Observation", "client_request", "observe", "tool_declarations"]

KEEP_BYTES = 4096
KEEP_EVENTS = 24
MAX_TIMES = 4000
#: The most of an answer the judge reads: 64 times the largest case's body.
MAX_READ_BYTES = 64 * 1024 * 1024
#: The most of it live mode keeps whole.
MAX_KEPT_BODY = 16 * 1024 * 1024
_PROMPT = "streamwire acceptance case {case}: answer as the case says."


def tool_declarations(client: str) -> list[dict[str, Any]]:
    """The practice's tools (``cases.TOOLS``) as ``client``'s request declares them."""
    out: list[dict[str, Any]] = []
    for name, spec in TOOLS.items():
        if client == "openai-chat":
            out.append({"type": "function", "function": {"name": name, **spec}})
        elif client == "openai-responses":
            out.append({"type": "function", "name": name, **spec})
        elif client == "anthropic":
            out.append(
                {
                    "name": name,
                    "description": spec["description"],
                    "input_schema": spec["parameters"],
                }
            )
    if client == "gemini":
        out.append({"functionDeclarations": [{"name": n, **s} for n, s in TOOLS.items()]})
    return out


def client_request(
    client: str, case: Case, model: str, base_url: str, key: str | None = None
) -> tuple[str, list[tuple[str, str]], dict[str, Any]]:
    """(URL, headers, JSON body) of ``case``'s request in ``client``'s protocol."""
    base = base_url.rstrip("/")
    prompt = _PROMPT.format(case=case.name)
    headers = [("content-type", "application/json"), ("accept", "text/event-stream")]
    headers.append(("accept-encoding", "identity"))
    body: dict[str, Any]
    if client == "openai-chat":
        url = f"{base}/v1/chat/completions"
        body = {"model": model, "messages": [{"role": "user", "content": prompt}], "stream": True}
        if case.wants_usage:
            body["stream_options"] = {"include_usage": True}
        if case.max_tokens:
            body["max_tokens"] = case.max_tokens
        if case.wants_reasoning:
            body["reasoning_effort"] = "low"
        headers.append(("authorization", f"Bearer {key or 'sk-streamwire-kit'}"))
    elif client == "openai-responses":
        url = f"{base}/v1/responses"
        body = {"model": model, "input": prompt, "stream": True}
        if case.max_tokens:
            body["max_output_tokens"] = max(case.max_tokens, 16)
        if case.wants_reasoning:
            body["reasoning"] = {"effort": "low", "summary": "auto"}
        headers.append(("authorization", f"Bearer {key or 'sk-streamwire-kit'}"))
    elif client == "anthropic":
        url = f"{base}/v1/messages"
        body = {
            "model": model,
            "max_tokens": case.max_tokens or 2048,
            "messages": [{"role": "user", "content": prompt}],
            "stream": True,
        }
        if case.wants_reasoning:
            # The budget is at least 1,024 tokens and below max_tokens.
            body["thinking"] = {"type": "enabled", "budget_tokens": 1024}
        headers += [("x-api-key", key or "sk-streamwire-kit"), ("anthropic-version", "2023-06-01")]
    elif client == "gemini":
        url = f"{base}/v1beta/models/{model}:streamGenerateContent?alt=sse"
        body = {"contents": [{"role": "user", "parts": [{"text": prompt}]}]}
        config: dict[str, Any] = {}
        if case.max_tokens:
            config["maxOutputTokens"] = case.max_tokens
        if case.wants_reasoning:
            config["thinkingConfig"] = {"includeThoughts": True}
        if config:
            body["generationConfig"] = config
        headers.append(("x-goog-api-key", key or "streamwire-kit"))
    else:
        raise ValueError(f"unknown client protocol {client!r}; one of {', '.join(CLIENTS)}")
    if case.calls:
        body["tools"] = tool_declarations(client)
    return url, headers, body


@dataclass
class Observation:
    """What the client saw of one request (bounded; see the module docstring).

    Times are ``time.time()`` seconds, the clock the mock stamps its writes
    with; ``timing`` holds the stream's timings relative to ``sent_at``
    (``streamwire.metrics.Timing``, as the HTTP edge keeps them).
    """

    client: str
    url: str
    request: dict[str, Any]
    sent_at: float
    status: int | None = None
    headers: list[tuple[str, str]] = field(default_factory=list)
    content_type: str | None = None
    #: A transport failure or timeout, in words (None when the body was read).
    failure: str | None = None
    #: The failure was a read (or connect) that took longer than its timeout.
    timed_out: bool = False
    timing: Timing | None = None
    raw_bytes: int = 0
    raw_head: bytes = b""
    raw_tail: bytes = b""
    raw_sha256: str = ""
    #: (arrival time, size) of the first ``MAX_TIMES`` body pieces.
    pieces: list[tuple[float, int]] = field(default_factory=list)
    piece_count: int = 0
    #: Arrival times of the first and the last piece that completed a text delta.
    first_text_at: float | None = None
    last_text_at: float | None = None
    wire_events: list[dict[str, Any]] = field(default_factory=list)
    wire_event_count: int = 0
    events: list[dict[str, Any]] = field(default_factory=list)
    event_count: int = 0
    framing_error: str | None = None
    cancelled_at: float | None = None
    result: StreamResult | None = None
    #: The whole body, when ``observe(keep_body=True)`` (live mode).
    body: bytes | None = None

    def evidence(self) -> dict[str, Any]:
        """The observation as JSON-ready evidence."""
        timing = self.timing
        return {
            "url": self.url,
            "status": self.status,
            "content_type": self.content_type,
            "failure": self.failure,
            "raw": {
                "bytes": self.raw_bytes,
                "sha256": self.raw_sha256,
                "head": self.raw_head.decode("utf-8", "replace"),
                "tail": self.raw_tail.decode("utf-8", "replace"),
                "pieces": self.piece_count,
            },
            "time_to_headers": _seconds(timing.time_to_headers if timing else None),
            "time_to_first_event": _seconds(timing.first_event if timing else None),
            "time_to_first_content": _seconds(timing.first_content if timing else None),
            "duration": _seconds(timing.duration if timing else None),
            "largest_gap": _seconds(timing.largest_gap if timing else None),
            "burst": timing.burst if timing else None,
            "cancelled_at": _seconds(
                None if self.cancelled_at is None else self.cancelled_at - self.sent_at
            ),
            "provider_events": {"count": self.wire_event_count, "sample": self.wire_events},
            "unified_events": {"count": self.event_count, "sample": self.events},
            "framing_error": self.framing_error,
        }


def _seconds(value: float | None) -> float | None:
    return None if value is None else round(value, 4)


def _short(value: Any, limit: int = 300) -> Any:
    if isinstance(value, str) and len(value) > limit:
        return value[:limit] + f"…(+{len(value) - limit})"
    return value


def _event_dict(event: Event) -> dict[str, Any]:
    out = event.as_dict()
    for key in ("raw",):
        out.pop(key, None)
    if isinstance(out.get("usage"), dict):
        out["usage"].pop("raw", None)
    return {k: _short(v) for k, v in out.items()}


class _Sample:
    """The first and the last ``KEEP_EVENTS`` items of a sequence, and its length.

    Items are kept as they come and turned into dicts only at the end: a
    1 MiB stream has 8,200 events, and building a dict (and an SSE event's
    ``str``) for each would cost the judge's event loop more than reading them.
    """

    def __init__(self, convert: Callable[[Any], dict[str, Any]]) -> None:
        self.convert = convert
        self.head: list[Any] = []
        self.tail: deque[Any] = deque(maxlen=KEEP_EVENTS)
        self.count = 0

    def add(self, item: Any) -> None:
        self.count += 1
        if len(self.head) < KEEP_EVENTS:
            self.head.append(item)
        else:
            self.tail.append(item)

    def items(self) -> list[dict[str, Any]]:
        skipped = self.count - len(self.head) - len(self.tail)
        gap = [{"skipped": skipped}] if skipped > 0 else []
        return [*map(self.convert, self.head), *gap, *map(self.convert, self.tail)]


def _sse_dict(ev: Any) -> dict[str, Any]:
    return {"event": ev.event, "data": _short(ev.data)}


async def observe(
    client: str,
    url: str,
    headers: list[tuple[str, str]],
    body: dict[str, Any],
    *,
    cancel_after: int | None = None,
    connect_timeout: float = 10.0,
    read_timeout: float = 20.0,
    total_timeout: float = 120.0,
    stream_options: dict[str, Any] | None = None,
    keep_body: bool = False,
) -> Observation:
    """Sends the request and reads the answer (``cancel_after``: hang up after that many
    text deltas). Never raises for anything the server does: it is all in the result.

    Every read has ``read_timeout``; the whole answer ``total_timeout`` and
    ``MAX_READ_BYTES``."""
    payload = json.dumps(body, ensure_ascii=False).encode()
    obs = Observation(client, url, body, time.time())
    try:
        response = await open_request(
            url,
            headers=headers,
            body=payload,
            connect_timeout=connect_timeout,
            read_timeout=read_timeout,
        )
    except TransportError as exc:
        obs.failure = str(exc)
        obs.timed_out = isinstance(exc, HttpTimeout)
        return obs
    obs.status = response.status
    obs.headers = response.headers
    obs.content_type = response.header("content-type")
    timing = obs.timing = Timing(time.time, started_at=obs.sent_at)
    start = obs.sent_at
    stream = adapter(client, http_status=response.status, **(stream_options or {}))
    sse = SseDecoder()
    wire = _Sample(_sse_dict)
    unified = _Sample(_event_dict)
    digest = hashlib.sha256()
    tail = bytearray()
    whole = bytearray() if keep_body else None
    texts = 0
    deadline = start + total_timeout
    # Not the protocol's stream (an error status, a JSON or HTML page): the
    # adapter reads nothing of it, and the judge reports what it was.
    streamed = response.status == 200 and media_type(obs.content_type) == media_type_of(client)
    try:
        async for at, data in response.pieces():
            obs.raw_bytes += len(data)
            digest.update(data)
            if whole is not None and len(whole) < MAX_KEPT_BODY:
                whole += data
            if len(obs.raw_head) < KEEP_BYTES:
                obs.raw_head += data[: KEEP_BYTES - len(obs.raw_head)]
            tail += data
            del tail[: -KEEP_BYTES // 2]
            obs.piece_count += 1
            if len(obs.pieces) < MAX_TIMES:
                obs.pieces.append((at, len(data)))
            timing.on_data(len(data), at - start)
            if not streamed:
                if obs.raw_bytes >= 64 * 1024:
                    break
                continue
            if obs.framing_error is None:
                try:
                    for ev in sse.feed(data):
                        wire.add(ev)
                except FramingError as exc:
                    obs.framing_error = f"{exc.kind} at byte {exc.offset}"
            events = stream.feed(data)
            timing.on_events(events, at - start)
            text = False
            for event in events:
                unified.add(event)
                if type(event) is TextDelta:
                    texts += 1
                    text = True
            if text:
                if obs.first_text_at is None:
                    obs.first_text_at = at
                obs.last_text_at = at
            if cancel_after is not None and texts >= cancel_after:
                obs.cancelled_at = time.time()
                response.close()
                for event in stream.cancel():
                    unified.add(event)
                break
            if at > deadline or obs.raw_bytes > MAX_READ_BYTES:
                obs.failure = (
                    f"the stream was still running after {total_timeout} s"
                    if at > deadline
                    else f"the answer passed {MAX_READ_BYTES} bytes; the judge stopped reading"
                )
                obs.timed_out = at > deadline
                break
    except TransportError as exc:
        obs.failure = str(exc)
        obs.timed_out = isinstance(exc, HttpTimeout)
    finally:
        response.close()
        timing.on_end(time.time() - start)
    if streamed and obs.cancelled_at is None:
        for event in stream.close():
            unified.add(event)
    obs.raw_tail = bytes(tail) if obs.raw_bytes > KEEP_BYTES else b""
    obs.raw_sha256 = digest.hexdigest()
    obs.body = bytes(whole) if whole is not None else None
    obs.wire_events = wire.items()
    obs.wire_event_count = wire.count
    obs.events = unified.items()
    obs.event_count = unified.count
    obs.result = stream.result if streamed else None
    return obs
