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

import asyncio
import hashlib
import itertools
import json
import ssl
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import quote

from ..._core import EventStreamDecoder, SseDecoder
from ...errors import FramingError
from ...events import Event, ReasoningDelta, TextDelta, ToolCallArgumentsDelta
from ...io._wire import framing_of, media_type
from ...metrics import Timing
from ...result import StreamResult
from ..vocab.cases import TOOLS, Case, prompt_for
from ..vocab.httpio import (
    ClientResponse,
    HttpTimeout,
    SetupError,
    TransportError,
    Trust,
    open_request,
    within,
)
from ..vocab.kinds.base import Conduct
from ..vocab.kinds.cancel import CANCEL_TIMER
from ..vocab.kinds.slow_reader import SLOW_READER_AFTER, SLOW_READER_PAUSE, SLOW_READER_RCVBUF
from ..vocab.names import CLIENTS, adapter
from ..vocab.names import media_type as media_type_of
from .unary import MAX_BODY, read_answer, unary_result

__all__ = [
    "CANCEL_TIMER",
    "SLOW_READER_AFTER",
    "SLOW_READER_PAUSE",
    "SLOW_READER_RCVBUF",
    "Observation",
    "client_request",
    "observe",
    "tool_declarations",
]

KEEP_BYTES = 4096
#: What a watched secret becomes in the evidence.
ECHO_MARK = "[the kit's key]"
#: The most places of an echo ``Observation.echoed`` lists.
MAX_ECHOES = 4
KEEP_EVENTS = 24
MAX_TIMES = 4000
#: The most of an answer the judge reads: more than the largest case's body in
#: its most verbose protocol (a sized slow-reader answer as Responses events,
#: whose done events repeat the whole text: five bytes of events a byte of
#: text, ~83 MB for the 16 MB of 4,096 deltas, ~250 MB where the sockets take
#: 38 MB; ``cases.MAX_SLOW_DELTAS`` is 131 MB of text).
MAX_READ_BYTES = 1024 * 1024 * 1024
#: The most of it live mode keeps whole.
MAX_KEPT_BODY = 16 * 1024 * 1024


def tool_declarations(client: str, described: bool = True) -> list[dict[str, Any]]:
    """The practice's tools (``cases.TOOLS``) as ``client``'s request declares
    them; without their descriptions unless ``described``."""
    out: list[dict[str, Any]] = []
    tools = {
        name: spec if described else {k: v for k, v in spec.items() if k != "description"}
        for name, spec in TOOLS.items()
    }
    for name, spec in tools.items():
        if client == "openai-chat":
            out.append({"type": "function", "function": {"name": name, **spec}})
        elif client == "openai-responses":
            out.append({"type": "function", "name": name, **spec})
        elif client in ("anthropic", "bedrock-invoke"):
            described_as = {"description": spec["description"]} if described else {}
            out.append({"name": name, **described_as, "input_schema": spec["parameters"]})
        elif client == "bedrock-converse":
            described_as = {"description": spec["description"]} if described else {}
            out.append(
                {
                    "toolSpec": {
                        "name": name,
                        **described_as,
                        "inputSchema": {"json": spec["parameters"]},
                    }
                }
            )
    if client == "gemini":
        out.append({"functionDeclarations": [{"name": n, **s} for n, s in tools.items()]})
    return out


def client_request(
    client: str,
    case: Case,
    model: str,
    base_url: str,
    key: str | None = None,
    canary: str | None = None,
    *,
    stream: bool = True,
    accept_encoding: str = "identity",
    cell: str | None = None,
) -> tuple[str, list[tuple[str, str]], dict[str, Any]]:
    """(URL, headers, JSON body) of ``case``'s request in ``client``'s protocol;
    the prompt names ``cell`` (``cases.cell_model``; the case's name when not
    given), which the mock reads when a gateway sends it one fixed model;
    ``canary``, a string unique to the run, ends the prompt (a team greps its
    gateway's logs for it: docs/kit/running.md). ``stream=False``: the protocol's
    non-streaming request for the whole answer (``stream: false``,
    ``:generateContent``, ``/converse``, ``/invoke``). ``accept_encoding``: the
    codings the client accepts (its transport's)."""
    base = base_url.rstrip("/")
    prompt = prompt_for(cell or case.name, canary)
    accept = "text/event-stream" if stream else "application/json"
    headers = [("content-type", "application/json"), ("accept", accept)]
    headers.append(("accept-encoding", accept_encoding))
    body: dict[str, Any]
    if client == "openai-chat":
        url = f"{base}/v1/chat/completions"
        body = {"model": model, "messages": [{"role": "user", "content": prompt}], "stream": stream}
        if case.wants_usage and stream:
            body["stream_options"] = {"include_usage": True}
        if case.max_tokens:
            body["max_tokens"] = case.max_tokens
        if case.wants_reasoning:
            body["reasoning_effort"] = "low"
        headers.append(("authorization", f"Bearer {key or 'sk-streamwire-kit'}"))
    elif client == "openai-responses":
        url = f"{base}/v1/responses"
        body = {"model": model, "input": prompt, "stream": stream}
        if case.max_tokens:
            body["max_output_tokens"] = case.max_tokens
        if case.wants_reasoning:
            body["reasoning"] = {"effort": "low", "summary": "auto"}
        headers.append(("authorization", f"Bearer {key or 'sk-streamwire-kit'}"))
    elif client == "anthropic":
        url = f"{base}/v1/messages"
        body = {
            "model": model,
            "max_tokens": case.max_tokens or 2048,
            "messages": [{"role": "user", "content": prompt}],
        }
        if stream:
            body["stream"] = True
        if case.wants_reasoning:
            # The budget is at least 1,024 tokens and below max_tokens.
            body["thinking"] = {"type": "enabled", "budget_tokens": 1024}
        headers += [("x-api-key", key or "sk-streamwire-kit"), ("anthropic-version", "2023-06-01")]
    elif client == "gemini":
        url = f"{base}/v1beta/models/{model}:streamGenerateContent?alt=sse"
        if not stream:
            url = f"{base}/v1beta/models/{model}:generateContent"
        body = {"contents": [{"role": "user", "parts": [{"text": prompt}]}]}
        config: dict[str, Any] = {}
        if case.max_tokens:
            config["maxOutputTokens"] = case.max_tokens
        if case.wants_reasoning:
            config["thinkingConfig"] = {"includeThoughts": True}
        if config:
            body["generationConfig"] = config
        headers.append(("x-goog-api-key", key or "streamwire-kit"))
    elif client == "bedrock-converse":
        # Bedrock "ConverseStream" (checked 2026-12-01): the model in the path.
        verb = "converse-stream" if stream else "converse"
        url = f"{base}/model/{quote(model, safe='')}/{verb}"
        body = {
            "messages": [{"role": "user", "content": [{"text": prompt}]}],
            "inferenceConfig": {"maxTokens": case.max_tokens or 2048},
        }
        if case.wants_reasoning:
            body["additionalModelRequestFields"] = {
                "thinking": {"type": "enabled", "budget_tokens": 1024}
            }
        if stream:
            headers[1] = ("accept", "application/vnd.amazon.eventstream")
        headers.append(("authorization", f"Bearer {key or 'sk-streamwire-kit'}"))
    elif client == "bedrock-invoke":
        # Bedrock "InvokeModelWithResponseStream" with a Claude model: the
        # Messages body, with Bedrock's anthropic_version and no model.
        verb = "invoke-with-response-stream" if stream else "invoke"
        url = f"{base}/model/{quote(model, safe='')}/{verb}"
        body = {
            "anthropic_version": "bedrock-2023-05-31",
            "max_tokens": case.max_tokens or 2048,
            "messages": [{"role": "user", "content": prompt}],
        }
        if case.wants_reasoning:
            body["thinking"] = {"type": "enabled", "budget_tokens": 1024}
        if stream:
            headers[1] = ("accept", "application/vnd.amazon.eventstream")
        headers.append(("authorization", f"Bearer {key or 'sk-streamwire-kit'}"))
    else:
        raise ValueError(f"unknown client protocol {client!r}; one of {', '.join(CLIENTS)}")
    if case.calls:
        if client == "bedrock-converse":
            body["toolConfig"] = {"tools": tool_declarations(client, case.tools_described)}
        else:
            body["tools"] = tool_declarations(client, case.tools_described)
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
    #: When the connection was made, and when the response head arrived.
    connected_at: float | None = None
    head_at: float | None = None
    #: A transport failure or timeout, in words (None when the body was read).
    failure: str | None = None
    #: The failure was a read (or connect) that took longer than its timeout.
    timed_out: bool = False
    #: Which of the kit's own limits cut the answer short, if one did:
    #: ``connect_timeout``, ``read_timeout``, ``total_timeout``, ``max_read_bytes``.
    kit_limit: str | None = None
    timing: Timing | None = None
    raw_bytes: int = 0
    #: The body's content codings, when the client accepted any and the
    #: answer used one (``raw_bytes`` then counts the decoded bytes, and
    #: ``wire_bytes`` what came over the wire).
    content_encoding: str | None = None
    #: The HTTP version the answer came over ("1.1", "2"); None without one.
    http_version: str | None = None
    wire_bytes: int | None = None
    #: The request's ``Accept-Encoding``.
    accept_encoding: str = "identity"
    raw_head: bytes = b""
    raw_tail: bytes = b""
    raw_sha256: str = ""
    #: (arrival time, size) of the first ``MAX_TIMES`` body pieces.
    pieces: list[tuple[float, int]] = field(default_factory=list)
    piece_count: int = 0
    #: Arrival times of the first and the last piece that completed a text delta.
    first_text_at: float | None = None
    last_text_at: float | None = None
    #: (arrival time, kind, characters) of content as it arrived, a row per
    #: piece and kind (``text``, ``reasoning``, ``arguments:<call index>``):
    #: the first ``MAX_TIMES`` rows.
    content: list[tuple[float, str, int]] = field(default_factory=list)
    wire_events: list[dict[str, Any]] = field(default_factory=list)
    wire_event_count: int = 0
    events: list[dict[str, Any]] = field(default_factory=list)
    event_count: int = 0
    framing_error: str | None = None
    cancelled_at: float | None = None
    #: Why the client hung up: ``deltas`` (the case's count arrived) or
    #: ``timer`` (``CANCEL_TIMER`` passed first).
    cancel_reason: str | None = None
    #: A slow reader's pause: when it stopped reading, when it read on, and
    #: how many body bytes it had read by then.
    paused_at: float | None = None
    resumed_at: float | None = None
    read_at_resume: int | None = None
    #: When reading ended (the body's end, a failure, the hang-up).
    ended_at: float | None = None
    result: StreamResult | None = None
    #: The whole body, when ``observe(keep_body=True)`` (live mode).
    body: bytes | None = None
    #: Where the answer carried one of the secrets ``observe`` watched for (the
    #: kit's key): ``header <name>`` or ``body at byte <n>``, the first few.
    echoed: list[str] = field(default_factory=list)
    #: The watched secrets, replaced in the evidence by ``[the kit's key]``.
    secrets: tuple[str, ...] = ()
    #: Read over a WebSocket (``client/ws.py``): its upgrade's ``101`` is the
    #: answer's success, each message a piece, and there is no content type.
    websocket: bool = False

    @property
    def succeeded(self) -> bool:
        """The answer's status is its success: ``200``, or a WebSocket's ``101``."""
        return self.status == (101 if self.websocket else 200)

    def times(self) -> dict[str, float | None]:
        """The request's time points, in seconds after it was sent: the
        connection, the response head, the first and the last content, and
        the longest wait between two body pieces."""
        t0 = self.sent_at
        content = [t for t, _, _ in self.content]
        arrivals = [t for t, _ in self.pieces]
        gaps = [b - a for a, b in itertools.pairwise(arrivals)]

        def rel(t: float | None) -> float | None:
            return None if t is None else round(t - t0, 4)

        return {
            "connected": rel(self.connected_at),
            "headers": rel(self.head_at),
            "first_content": rel(content[0] if content else None),
            "last_content": rel(content[-1] if content else None),
            "last_byte": rel(arrivals[-1] if arrivals else None),
            "longest_gap": round(max(gaps), 4) if gaps else None,
        }

    def evidence(self) -> dict[str, Any]:
        """The observation as JSON-ready evidence (a watched secret it carried, replaced)."""
        return self.redacted(self._evidence())

    def redacted(self, found: dict[str, Any]) -> dict[str, Any]:
        """``found`` (JSON-ready) with every watched secret the answer carried
        replaced by ``ECHO_MARK``."""
        if not self.echoed:
            return found
        text = json.dumps(found)
        for secret in self.secrets:
            text = text.replace(json.dumps(secret)[1:-1], ECHO_MARK)
        redacted: dict[str, Any] = json.loads(text)
        return redacted

    def _evidence(self) -> dict[str, Any]:
        timing = self.timing
        return {
            "url": self.url,
            "status": self.status,
            "content_type": self.content_type,
            "failure": self.failure,
            "kit_limit": self.kit_limit,
            "content_encoding": self.content_encoding,
            "wire_bytes": self.wire_bytes,
            "http_version": self.http_version,
            "raw": {
                "bytes": self.raw_bytes,
                "sha256": self.raw_sha256,
                "head": self.raw_head.decode("utf-8", "replace"),
                "tail": self.raw_tail.decode("utf-8", "replace"),
                "pieces": self.piece_count,
            },
            "times": self.times(),
            "time_to_headers": _seconds(timing.time_to_headers if timing else None),
            "time_to_first_event": _seconds(timing.first_event if timing else None),
            "time_to_first_content": _seconds(timing.first_content if timing else None),
            "duration": _seconds(timing.duration if timing else None),
            "largest_gap": _seconds(timing.largest_gap if timing else None),
            "burst": timing.burst if timing else None,
            "cancelled_at": _seconds(
                None if self.cancelled_at is None else self.cancelled_at - self.sent_at
            ),
            "cancel_reason": self.cancel_reason,
            "paused_at": _seconds(
                None if self.paused_at is None else self.paused_at - self.sent_at
            ),
            "resumed_at": _seconds(
                None if self.resumed_at is None else self.resumed_at - self.sent_at
            ),
            "read_at_resume": self.read_at_resume,
            "provider_events": {"count": self.wire_event_count, "sample": self.wire_events},
            "unified_events": {"count": self.event_count, "sample": self.events},
            "framing_error": self.framing_error,
            "echoed": self.echoed,
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


def _frame_dict(message: Any) -> dict[str, Any]:
    headers = message.headers
    return {
        "event": headers.get(":event-type") or headers.get(":exception-type"),
        "message_type": headers.get(":message-type"),
        "data": _short(bytes(message.payload).decode("utf-8", "replace")),
    }


def _content_of(events: list[Event]) -> dict[str, int]:
    """Characters of content in ``events`` by kind (the keys ``render`` gives
    the mock's writes: ``text``, ``reasoning``, ``arguments:<call index>``)."""
    out: dict[str, int] = {}
    for event in events:
        kind = type(event)
        if kind is TextDelta:
            key, size = "text", len(event.text)  # type: ignore[union-attr]
        elif kind is ReasoningDelta and event.text:  # type: ignore[union-attr]
            key, size = "reasoning", len(event.text)  # type: ignore[union-attr]
        elif kind is ToolCallArgumentsDelta:
            key = f"arguments:{event.index}"  # type: ignore[union-attr]
            size = len(event.delta)  # type: ignore[union-attr]
        else:
            continue
        if size:
            out[key] = out.get(key, 0) + size
    return out


def _scan_echoes(
    obs: Observation, needles: list[bytes], seen: bytes, data: bytes, overlap: int
) -> bytes:
    """Record each needle found in this piece, or across its boundary with the last.

    ``seen`` is the previous pieces' last ``overlap`` bytes; only a match that
    starts in them is looked for in ``seen + data[:overlap]``, so no byte of the
    piece is copied beyond those. Returns the new ``seen``."""
    for needle in needles:
        at = -1
        if seen:
            edge = (seen + data[:overlap]).find(needle)
            if 0 <= edge < len(seen):
                at = obs.raw_bytes - len(seen) + edge
        if at < 0:
            inside = data.find(needle)
            if inside >= 0:
                at = obs.raw_bytes + inside
        if at >= 0:
            obs.echoed.append(f"body at byte {at}")
    if not overlap:
        return b""
    if len(data) >= overlap:
        return bytes(data[-overlap:])
    return (seen + data)[-overlap:]


#: A client that reads the answer through, as it comes.
_READS_THROUGH = Conduct()


async def _opened(
    obs: Observation,
    url: str,
    headers: list[tuple[str, str]],
    payload: bytes,
    conduct: Conduct,
    hang_up_at: float | None,
    timeouts: tuple[float, float, float],
    *,
    decode: bool,
    tls: ssl.SSLContext | Trust | None,
    http2: bool,
) -> ClientResponse | None:
    """The response, its head read; None when there is none (``obs`` says why)."""
    connect_timeout, read_timeout, total_timeout = timeouts
    connected: list[float] = []
    try:
        opening = open_request(
            url,
            headers=headers,
            body=payload,
            connect_timeout=connect_timeout,
            read_timeout=read_timeout,
            on_connect=lambda: connected.append(time.time()),
            recv_buffer=conduct.recv_buffer,
            decode=decode,
            context=tls,
            http2=http2,
        )
        # The whole answer's limit holds for its head too (a head that trickles
        # in a byte at a time never trips the per-read timeout).
        limit = total_timeout if hang_up_at is None else max(0.0, hang_up_at - time.time())
        return await within(opening, limit)
    except asyncio.TimeoutError:
        if hang_up_at is None:
            obs.failure = f"no response head within the kit's {total_timeout} s limit"
            obs.timed_out = True
            obs.kit_limit = "total_timeout"
        else:
            # The hang-up timer: the client hangs up before the head.
            obs.cancelled_at = time.time()
            obs.cancel_reason = "timer"
        return None
    except SetupError:
        raise
    except TransportError as exc:
        obs.failure = str(exc)
        obs.timed_out = isinstance(exc, HttpTimeout)
        if obs.timed_out:
            obs.kit_limit = "connect_timeout" if not connected else "read_timeout"
        return None
    finally:
        obs.connected_at = connected[0] if connected else None


async def _conduct(
    conduct: Conduct, obs: Observation, texts: int, hang_up: Callable[[str], None]
) -> bool:
    """What the client does once ``texts`` text deltas arrived; True: it hung up."""
    if conduct.hang_up_after is not None and texts >= conduct.hang_up_after:
        hang_up("deltas")
        return True
    if conduct.pause_after is not None and obs.paused_at is None and texts >= conduct.pause_after:
        # The slow reader: nothing read meanwhile, the window closes.
        obs.paused_at = time.time()
        await asyncio.sleep(conduct.pause_for)
        obs.resumed_at = time.time()
        obs.read_at_resume = obs.raw_bytes
    return False


def _whole_answer(
    obs: Observation, client: str, body: bytes, timing: Timing, unified: _Sample
) -> StreamResult | None:
    """A unary answer's JSON body read as the events its stream would give."""
    events, problem = read_answer(client, body)
    if problem is not None:
        obs.framing_error = problem
        return None
    at = obs.pieces[-1][0] if obs.pieces else obs.ended_at or obs.sent_at
    timing.on_events(events, at - obs.sent_at)
    for event in events:
        unified.add(event)
    content = _content_of(events)
    if "text" in content:
        obs.first_text_at = obs.last_text_at = at
    obs.content += [(at, key, chars) for key, chars in content.items()]
    return unary_result(client, events)


async def observe(
    client: str,
    url: str,
    headers: list[tuple[str, str]],
    body: dict[str, Any],
    *,
    conduct: Conduct = _READS_THROUGH,
    connect_timeout: float = 10.0,
    read_timeout: float = 20.0,
    total_timeout: float = 120.0,
    stream_options: dict[str, Any] | None = None,
    keep_body: bool = False,
    secrets: tuple[str, ...] = (),
    unary: bool = False,
    decode: bool = False,
    tls: ssl.SSLContext | Trust | None = None,
    http2: bool = False,
) -> Observation:
    """Sends the request and reads the answer. Never raises for anything the
    server does: it is all in the result (a certificate the kit cannot verify,
    a server that speaks no HTTP/2 when asked to, are the kit's problem, not
    the server's: ``SetupError`` is raised).

    ``conduct``: what the case's kind has the client do while it reads
    (``kinds.base.Conduct``): hang up after some text deltas, or on a timer
    after sending, whichever comes first (before the response head, if the
    hop holds that too); stop reading after some, with a small receive
    buffer, then read on. Every read has ``read_timeout``; the whole answer
    ``total_timeout`` and ``MAX_READ_BYTES``. ``secrets``: strings the answer
    must not carry (the kit's key), looked for in its headers and its whole
    body, across piece boundaries (``Observation.echoed``). ``unary``: the
    request asked for the whole answer at once; its JSON body is read whole
    (up to ``unary.MAX_BODY``) and as the events its stream would give
    (``unary.read_answer``; a body that is no answer of the protocol is
    ``framing_error``). ``decode``: the request accepted content codings,
    and the body is decoded as it arrives, each event timed when it decodes
    (``httpio.ClientResponse.pieces``). ``tls``: the TLS context of an https
    URL, or the ``httpio.Trust`` to make it from (None: the system's trust
    store). ``http2``: over HTTP/2 (``h2io``; a cancel resets the stream)."""
    payload = json.dumps(body, ensure_ascii=False).encode()
    obs = Observation(client, url, body, time.time(), secrets=secrets)
    obs.accept_encoding = next(
        (v for k, v in headers if k.lower() == "accept-encoding"), "identity"
    )
    needles = [s.encode() for s in secrets if s]
    overlap = max((len(n) for n in needles), default=1) - 1
    seen = b""
    timer_on = conduct.hang_up_after is not None
    hang_up_at = obs.sent_at + conduct.hang_up_timer if timer_on else None
    timeouts = (connect_timeout, read_timeout, total_timeout)
    response = await _opened(
        obs,
        url,
        headers,
        payload,
        conduct,
        hang_up_at,
        timeouts,
        decode=decode,
        tls=tls,
        http2=http2,
    )
    if response is None:
        return obs
    obs.http_version = response.http_version
    if decode and response.codings:
        obs.content_encoding = ", ".join(response.codings)
    obs.head_at = response.head_at
    obs.status = response.status
    obs.headers = response.headers
    obs.content_type = response.header("content-type")
    for name, value in response.headers:
        if any(n.decode() in value for n in needles):
            obs.echoed.append(f"header {name}")
    timing = obs.timing = Timing(time.time, started_at=obs.sent_at)
    start = obs.sent_at
    frames = framing_of(client) == "eventstream"
    caps: dict[str, int] = {}
    if conduct.event_bytes is not None and not frames:
        caps = {"max_line_bytes": conduct.event_bytes, "max_event_bytes": conduct.event_bytes}
    framer: Any = EventStreamDecoder() if frames else SseDecoder(**caps)
    stream = adapter(client, http_status=response.status, **caps, **(stream_options or {}))
    wire = _Sample(_frame_dict if frames else _sse_dict)
    unified = _Sample(_event_dict)
    digest = hashlib.sha256()
    tail = bytearray()
    whole = bytearray() if keep_body or unary else None
    kept = MAX_BODY + 1 if unary else MAX_KEPT_BODY
    texts = 0
    deadline = start + total_timeout
    # Not the protocol's stream (an error status, a JSON or HTML page): the
    # adapter reads nothing of it, and the judge reports what it was.
    streamed = (
        not unary
        and response.status == 200
        and media_type(obs.content_type) == media_type_of(client)
    )

    def hang_up(reason: str) -> None:
        if obs.cancelled_at is None:
            obs.cancelled_at = time.time()
            obs.cancel_reason = reason
            response.close()

    timer = None
    if hang_up_at is not None:
        loop = asyncio.get_running_loop()
        timer = loop.call_later(max(0.0, hang_up_at - time.time()), hang_up, "timer")
    try:
        async for at, data in response.pieces():
            if needles and len(obs.echoed) < MAX_ECHOES:
                seen = _scan_echoes(obs, needles, seen, data, overlap)
            obs.raw_bytes += len(data)
            digest.update(data)
            if whole is not None and len(whole) < kept:
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
                if at > deadline:
                    # A body that trickles in is bounded by the whole answer's limit too.
                    obs.failure = (
                        f"the body was still arriving after the kit's {total_timeout} s limit"
                    )
                    obs.timed_out = True
                    obs.kit_limit = "total_timeout"
                    break
                if obs.raw_bytes >= (kept if unary and response.status == 200 else 64 * 1024):
                    break
                continue
            if obs.framing_error is None:
                try:
                    for ev in framer.feed(data):
                        wire.add(ev)
                except FramingError as exc:
                    obs.framing_error = f"{exc.kind} at byte {exc.offset}"
            events = stream.feed(data)
            timing.on_events(events, at - start)
            for event in events:
                unified.add(event)
            content = _content_of(events)
            if content:
                if "text" in content:
                    texts += sum(type(e) is TextDelta for e in events)
                    if obs.first_text_at is None:
                        obs.first_text_at = at
                    obs.last_text_at = at
                for key, chars in content.items():
                    if len(obs.content) < MAX_TIMES:
                        obs.content.append((at, key, chars))
            if await _conduct(conduct, obs, texts, hang_up):
                break
            if at > deadline or obs.raw_bytes > MAX_READ_BYTES:
                obs.failure = (
                    f"the stream was still running after the kit's {total_timeout} s limit"
                    if at > deadline
                    else f"the answer passed {MAX_READ_BYTES} bytes; the judge stopped reading"
                )
                obs.timed_out = at > deadline
                obs.kit_limit = "total_timeout" if at > deadline else "max_read_bytes"
                break
    except TransportError as exc:
        if obs.cancel_reason != "timer":
            obs.failure = str(exc)
            obs.timed_out = isinstance(exc, HttpTimeout)
            obs.kit_limit = "read_timeout" if obs.timed_out else None
    finally:
        if timer is not None:
            timer.cancel()
        response.close()
        obs.ended_at = time.time()
        timing.on_end(obs.ended_at - start)
    if streamed:
        ending = stream.cancel() if obs.cancelled_at is not None else stream.close()
        for event in ending:
            unified.add(event)
    answer = None
    if unary and response.status == 200 and whole is not None and obs.failure is None:
        answer = _whole_answer(obs, client, bytes(whole), timing, unified)
    obs.raw_tail = bytes(tail) if obs.raw_bytes > KEEP_BYTES else b""
    obs.raw_sha256 = digest.hexdigest()
    if obs.content_encoding is not None:
        obs.wire_bytes = response.wire_bytes
    obs.body = bytes(whole) if keep_body and whole is not None else None
    obs.wire_events = wire.items()
    obs.wire_event_count = wire.count
    obs.events = unified.items()
    obs.event_count = unified.count
    obs.result = stream.result if streamed else answer
    return obs
