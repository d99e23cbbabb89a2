"""A case in an upstream's own wire format: the units the mock writes, and non-streaming bodies.

The SSE protocols are encoded by streamwire's own encoders (``sw.encoder``,
layer [4]) from the case's unified events (``cases.script``); Gemini's JSON
array (``streamGenerateContent`` without ``alt=sse``) is the same chunks as
one array; Bedrock is ``upstream/eventstream.py``. A body is a list of ``Unit``: one wire
event each (an SSE event, an array element, an EventStream frame), which is
what the deliveries (``vocab/delivery.py``) cut, merge and pace.

What an encoder never produces, because no correct upstream stream needs it
from unified events, is added here at the wire level, as each provider sends
it (API references checked 2026-12-01):

* keep-alives: an SSE comment line (OpenAI, Gemini), Anthropic's ``ping``
  event, a blank line; whitespace between the elements of Gemini's array.
  Bedrock's EventStream has none: its keep-alive case is the silence alone;
* an unknown event: a chat chunk with a delta field and a top-level field
  nobody knows, a Responses event type ``response.sw_future.added`` (with the
  sequence numbers after it renumbered, as a real new event would be
  numbered), an Anthropic event type ``sw_future_event`` (Anthropic: "we may
  add new event types"), a Gemini part and field of unknown names, a Bedrock
  frame of an unknown ``:event-type``.
"""

from __future__ import annotations

import json
import time
from collections.abc import Mapping
from dataclasses import dataclass, replace
from datetime import datetime, timezone
from functools import lru_cache
from typing import Any

from ..._core import (
    DEFAULT_MAX_EVENT_BYTES,
    DEFAULT_MAX_LINE_BYTES,
    DEFAULT_MAX_MESSAGE_BYTES,
    SseDecoder,
)
from ...events import (
    ErrorReceived,
    Event,
    ReasoningDelta,
    StopReason,
    TextDelta,
    ToolCallArgumentsDelta,
)
from ...io._wire import framing_of
from ...result import Usage
from ...translate._base import dumps as _dumps
from ...translate._base import sse as _sse_event
from ...translate._usage import figures
from ..vocab.cases import (
    CASES,
    MAX_SLOW_DELTAS,
    SLOW_DELTAS,
    UPSTREAM_ERRORS,
    Case,
    script,
    sized,
    truth,
    upstream_error,
    usage_of,
)
from ..vocab.delivery import Unit
from ..vocab.kinds.silence import DEFAULT_SILENCE
from ..vocab.names import NO_KEEPALIVE, adapter, encoder
from .eventstream import (
    converse_units,
    converse_usage,
    event_unit,
    exception_unit,
    invoke_unit,
    invoke_units,
)

__all__ = [
    "DEFAULT_SILENCE",
    "FAILURE_ANSWERS",
    "RETRY_AFTER_S",
    "RETRY_ERRORS",
    "Unit",
    "failure_answer",
    "render_json",
    "render_stream",
    "retry_error",
    "slow_reader_deltas",
    "usage_requested",
]

#: Seconds of silence before each keep-alive of the ``keepalive`` case.
KEEPALIVE_PAUSE = 0.1


def usage_requested(upstream: str, body: Any) -> bool:
    """Whether the upstream reports usage for this request: every protocol but
    Chat Completions always does; chat only with ``stream_options.include_usage``
    (OpenAI "Create chat completion", checked 2026-12-01)."""
    if upstream != "openai-chat":
        return True
    if not isinstance(body, dict):
        return False
    if body.get("stream") is not True:
        return True  # a non-streaming completion always carries usage
    options = body.get("stream_options")
    return isinstance(options, dict) and options.get("include_usage") is True


def _split_sse(body: bytes) -> list[bytes]:
    # The encoders write LF line endings and never a blank line inside an
    # event, so the events are the pieces between blank lines.
    return [piece + b"\n\n" for piece in body.split(b"\n\n") if piece.strip()]


def _encode(
    case: Case, events: list[Event], target: str, model: str, usage: bool, follow: bool
) -> list[bytes]:
    enc = encoder(
        target,
        model=model,
        response_id=f"{_ID_HEAD[target]}sw{case.name.replace('-', '')}{int(follow)}",
        created=1764547200,
        include_usage=usage,
        source=target,
    )
    # The start and its input usage in one feed (an Anthropic message_start
    # carries the input tokens), then one event per feed.
    out = [enc.feed(events[:2])]
    out += [enc.feed([e]) for e in events[2:]]
    out.append(enc.close())
    return _split_sse(b"".join(out))


_ID_HEAD = {
    "openai-chat": "chatcmpl-",
    "openai-responses": "resp_",
    "anthropic": "msg_",
    "gemini": "",
}


def render_stream(
    case: Case,
    upstream: str,
    *,
    model: str,
    usage: bool,
    follow_up: bool = False,
    attempt: int = 1,
    silence: float | None = None,
) -> list[Unit]:
    """The streamed body of ``case`` from ``upstream``, as units (``attempt``: a
    retry case's attempt; ``silence``: a silence case's seconds, the kind's
    default when None). The first answer is as its kind writes it
    (``Kind.events``, ``Kind.units``); the follow-up's is plain."""
    events = script(
        case, upstream, model=model, usage_sent=usage, follow_up=follow_up, attempt=attempt
    )
    if not follow_up:
        events = case.kind.events(events, attempt, UPSTREAM_ERRORS[upstream])
    units = _units(case, upstream, events, model, usage, follow_up)
    units = _with_content(upstream, units)
    if not follow_up:
        keepalives = _keepalives(upstream) if case.keepalive else []
        units = case.kind.units(units, keepalives, silence)
        if case.unknown:
            units = _with_unknown(upstream, units, model)
    return units


#: Room under streamwire's default caps (one SSE line or event, one EventStream
#: message) that the largest event of a sized slow-reader answer leaves.
_CAP_ROOM = 64 * 1024
_LARGEST_EVENT = (
    min(DEFAULT_MAX_LINE_BYTES, DEFAULT_MAX_EVENT_BYTES, DEFAULT_MAX_MESSAGE_BYTES) - _CAP_ROOM
)


@lru_cache(maxsize=16)
def _slow_growth(upstream: str) -> tuple[float, float, float]:
    """What one more delta of the slow-reader answer adds to ``upstream``'s
    wire (bytes), and to its largest event (a Responses done event repeats the
    whole text; a chat chunk is one delta's), and that event's fixed part:
    measured on answers of two and four deltas."""
    sizes = []
    for deltas in (2, 4):
        units = render_stream(sized(CASES["slow-reader"], deltas), upstream, model="m", usage=True)
        sizes.append((sum(len(u.data) for u in units), max(len(u.data) for u in units)))
    (wire2, big2), (wire4, big4) = sizes
    per_delta, big_per_delta = (wire4 - wire2) / 2, (big4 - big2) / 2
    return per_delta, big_per_delta, big2 - 2 * big_per_delta


def slow_reader_deltas(upstream: str, answer_bytes: int) -> int:
    """The deltas of a slow-reader answer (``cases.sized``) that ``upstream``
    writes as at least ``answer_bytes`` on its wire, never fewer than
    ``SLOW_DELTAS`` nor more than ``MAX_SLOW_DELTAS``, and never so many that
    one of its events passes streamwire's default caps: a hop that parses the
    upstream with the defaults must take every event of it. A Responses
    stream writes five bytes a byte of text (its four done events repeat the
    whole text), so its 4,096 deltas are 83 MB already; a chat or Anthropic
    stream writes one."""
    per_delta, big_per_delta, big_fixed = _slow_growth(upstream)
    deltas = max(SLOW_DELTAS, min(MAX_SLOW_DELTAS, -(-answer_bytes // max(1, int(per_delta)))))
    if big_per_delta > 0:
        deltas = min(deltas, int((_LARGEST_EVENT - big_fixed) // big_per_delta))
    return max(1, deltas)


def _units(
    case: Case, upstream: str, events: list[Event], model: str, usage: bool, follow_up: bool
) -> list[Unit]:
    error = any(isinstance(e, ErrorReceived) for e in events)
    if framing_of(upstream) == "sse":
        units = [Unit(u) for u in _encode(case, events, upstream, model, usage, follow_up)]
        if error:
            units = [replace(u, kind="error") if _is_error(u.data) else u for u in units]
    elif upstream == "gemini-json":
        sse = _encode(case, events, "gemini", model, usage, follow_up)
        units = _gemini_array(_sse_payloads(sse))
        if error:
            units[-2] = replace(units[-2], kind="error")
    elif upstream == "bedrock-converse":
        units = converse_units(events)
    elif upstream == "bedrock-invoke":
        sse = _encode(case, events, "anthropic", model, usage, follow_up)
        billed = usage_of(case, upstream, final=True)
        units = invoke_units(_sse_payloads(sse), (billed.input_tokens or 0, case.usage[1]))
        if case.error_kind is not None:
            # Bedrock's own errors: an exception frame, not Anthropic's event.
            kind, _code, message = upstream_error(case, upstream)
            units = [exception_unit(kind, message) if u.kind == "error" else u for u in units]
    else:
        raise ValueError(f"the mock does not speak {upstream!r}")
    return units


def _is_error(data: bytes) -> bool:
    return data.startswith(b"event: error") or b'"error":{' in data[:64]


def _sse_payloads(events: list[bytes]) -> list[str]:
    return [ev.data for ev in SseDecoder().feed(b"".join(events))]


def _gemini_array(elements: list[str]) -> list[Unit]:
    units = [
        Unit(("[" if i == 0 else ",\r\n").encode() + e.encode()) for i, e in enumerate(elements)
    ]
    return [*units, Unit(b"]")]


def _keepalives(upstream: str) -> list[Unit]:
    if upstream in NO_KEEPALIVE:
        return [Unit(b"", "keepalive", KEEPALIVE_PAUSE * 3)]
    pieces = [b": keepalive\n\n", b"\n", b": keepalive\n\n"]
    if upstream == "anthropic":
        pieces[1] = b'event: ping\ndata: {"type": "ping"}\n\n'
    return [Unit(p, "keepalive", KEEPALIVE_PAUSE) for p in pieces]


def _with_unknown(upstream: str, units: list[Unit], model: str) -> list[Unit]:
    # After the second text event: the gateway is mid-message when it arrives.
    seen = 0
    at = len(units) - 1
    for i, unit in enumerate(units):
        if unit.kind == "text":
            seen += 1
            if seen == 2:
                at = i + 1
                break
    if upstream == "openai-responses":
        seq = _sequence(units[at - 1].data) + 1
        tail = [replace(u, data=_renumber(u.data, 1)) for u in units[at:]]
        payload: dict[str, Any] = {
            "type": "response.sw_future.added",
            "sequence_number": seq,
            "item_id": "sw_future_1",
            "payload": {"kind": "future"},
        }
        return [
            *units[:at],
            Unit(_sse_event(_dumps(payload), "response.sw_future.added"), "unknown"),
            *tail,
        ]
    return [*units[:at], *_unknown_units(upstream, model), *units[at:]]


def _with_content(upstream: str, units: list[Unit]) -> list[Unit]:
    """Each unit with the content it carries, as the upstream's own adapter
    reads it (``delivery.Unit.content``), and the kind of the content
    (``text``, ``reasoning``, ``arguments``) where the unit is a plain event:
    what the judge times the client's arrivals against."""
    reader = adapter(upstream)
    out = []
    for unit in units:
        content: dict[str, int] = {}
        for event in reader.feed(unit.data):
            if isinstance(event, TextDelta) and event.text:
                content["text"] = content.get("text", 0) + len(event.text)
            elif isinstance(event, ReasoningDelta) and event.text:
                content["reasoning"] = content.get("reasoning", 0) + len(event.text)
            elif isinstance(event, ToolCallArgumentsDelta) and event.delta:
                key = f"arguments:{event.index}"
                content[key] = content.get(key, 0) + len(event.delta)
        kind = unit.kind
        if kind in ("event", "text") and content:
            kind = next(
                k
                for k in ("text", "reasoning", "arguments")
                if any(c == k or c.startswith(f"{k}:") for c in content)
            )
        out.append(replace(unit, kind=kind, content=tuple(content.items())))
    return out


def _unknown_units(upstream: str, model: str) -> list[Unit]:
    if upstream == "openai-chat":
        payload: dict[str, Any] = {
            "id": "chatcmpl-swunknown",
            "object": "chat.completion.chunk",
            "created": 1764547200,
            "model": model,
            "choices": [
                {
                    "index": 0,
                    "delta": {"sw_future": {"kind": "annotation"}},
                    "logprobs": None,
                    "finish_reason": None,
                }
            ],
            "usage": None,
            "sw_future_top": {"kind": "future"},
        }
        return [Unit(_sse_event(_dumps(payload)), "unknown")]
    if upstream == "anthropic":
        payload = {"type": "sw_future_event", "index": 0, "payload": {"kind": "future"}}
        return [Unit(_sse_event(_dumps(payload), "sw_future_event"), "unknown")]
    if upstream in ("gemini", "gemini-json"):
        payload = {
            "candidates": [
                {
                    "content": {"parts": [{"swFuturePart": {"kind": "future"}}], "role": "model"},
                    "index": 0,
                }
            ],
            "swFutureField": {"kind": "future"},
            "modelVersion": model,
        }
        if upstream == "gemini":
            return [Unit(_sse_event(_dumps(payload)), "unknown")]
        return [Unit(b",\r\n" + _dumps(payload).encode(), "unknown")]
    if upstream == "bedrock-converse":
        return [_bedrock_unknown()]
    if upstream == "bedrock-invoke":
        return [invoke_unit({"type": "sw_future_event", "index": 0}, kind="unknown")]
    raise ValueError(upstream)


def _bedrock_unknown() -> Unit:
    return event_unit("swFutureEvent", {"kind": "future"}, kind="unknown")


def _sequence(data: bytes) -> int:
    (event,) = SseDecoder().feed(data)
    value = json.loads(event.data).get("sequence_number")
    return value if isinstance(value, int) else 0


def _renumber(data: bytes, shift: int) -> bytes:
    (event,) = SseDecoder().feed(data)
    payload = json.loads(event.data)
    if isinstance(payload.get("sequence_number"), int):
        payload["sequence_number"] += shift
    return _sse_event(_dumps(payload), None if event.event == "message" else event.event)


# --- non-streaming bodies ------------------------------------------------------------

#: The HTTP status a non-streaming request gets for the error case.
ERROR_STATUS = {
    "openai-chat": 500,
    "openai-responses": 500,
    "anthropic": 529,
    "gemini": 503,
    "gemini-json": 503,
    "bedrock-converse": 503,
    "bedrock-invoke": 529,
}
#: ... and for an error of a kind (``cases.ERROR_KINDS``): a provider's own
#: failure is 500, a rate limit 429, and Bedrock's model stream error 424
#: (its "ModelStreamErrorException"; checked 2026-12-01).
KIND_STATUS: Mapping[str, int] = {"internal": 500, "throttled": 429, "model": 500}


@dataclass(frozen=True)
class _Answer:
    """What a non-streaming body says: the first answer, or the follow-up's."""

    text: str
    reasoning: str
    signature: str | None
    calls: tuple[tuple[str | None, str, Any], ...]
    stop: StopReason
    usage: Usage


def render_json(
    case: Case, upstream: str, *, model: str, follow_up: bool = False, attempt: int = 1
) -> tuple[int, list[tuple[str, str]], bytes]:
    """The non-streaming answer (``stream: false``, ``:generateContent``, ``/converse``)."""
    facts = truth(case, upstream, attempt=attempt)
    if case.error and not follow_up:
        kind, code, message = upstream_error(case, upstream)
        status = ERROR_STATUS[upstream]
        if case.error_kind is not None:
            status = KIND_STATUS[case.error_kind]
            if case.error_kind == "model" and upstream.startswith("bedrock"):
                status = 424
        return _error_body(upstream, status, kind, code, message)
    usage = usage_of(case, upstream, final=True)
    if follow_up:
        answer = _Answer(facts.follow_up, "", None, (), "stop", usage)
    else:
        stop = facts.stop_reason or "stop"
        answer = _Answer(facts.text, facts.reasoning, facts.signature, facts.calls, stop, usage)
    body = _JSON_BODIES[upstream](case.name, answer, model)
    return 200, [("content-type", "application/json")], _dumps(body).encode()


#: A first attempt that fails before any byte: (status, type, code, message) as
#: each provider answers an overloaded or rate-limited request (OpenAI "Error
#: codes" 429, Anthropic "Errors" 529, Gemini 503, Bedrock ThrottlingException;
#: checked 2026-12-01).
RETRY_ERRORS: Mapping[str, tuple[int, str, str | int | None, str]] = {
    "openai-chat": (429, "requests", "rate_limit_exceeded", "Rate limit reached for requests."),
    "openai-responses": (
        429,
        "requests",
        "rate_limit_exceeded",
        "Rate limit reached for requests.",
    ),
    "anthropic": (529, "overloaded_error", None, "Overloaded"),
    "bedrock-invoke": (529, "overloaded_error", None, "Overloaded"),
    "gemini": (503, "UNAVAILABLE", 503, "The model is overloaded. Please try again later."),
    "gemini-json": (503, "UNAVAILABLE", 503, "The model is overloaded. Please try again later."),
    "bedrock-converse": (
        429,
        "throttlingException",
        None,
        "Too many requests, please wait before trying again.",
    ),
}


def retry_error(upstream: str) -> tuple[int, list[tuple[str, str]], bytes]:
    """The answer of a retry case's first attempt that fails before any byte."""
    status, kind, code, message = RETRY_ERRORS[upstream]
    return _error_body(upstream, status, kind, code, message)


#: The seconds a rate-limited attempt's answer asks the client to wait
#: (``Retry-After``; OpenAI's ``retry-after-ms`` says the same in ms).
RETRY_AFTER_S = 1

#: The refused cases' answers (``kinds/refused.py``): (status, type, code,
#: message) as each provider answers a rate limit, an invalid request and an
#: overload before any byte. Rate limits: OpenAI "Error codes" (429
#: ``rate_limit_exceeded``, its type the limit's unit), Anthropic "Errors"
#: (429 ``rate_limit_error``), Gemini "API troubleshooting" (429
#: ``RESOURCE_EXHAUSTED``), Bedrock ``ThrottlingException`` (429). Invalid
#: requests: OpenAI 400 ``invalid_request_error``, Anthropic 400
#: ``invalid_request_error``, Gemini 400 ``INVALID_ARGUMENT``, Bedrock
#: ``ValidationException`` (400). Overloads: OpenAI 503 "The engine is
#: currently overloaded", Anthropic 529 ``overloaded_error`` (Anthropic
#: documents no 503: its overload is 529), Gemini 503 ``UNAVAILABLE``,
#: Bedrock ``ServiceUnavailableException`` (503). Checked 2026-12-07.
FAILURE_ANSWERS: Mapping[str, Mapping[str, tuple[int, str, str | int | None, str]]] = {
    "rate_limited": {
        "openai-chat": (
            429,
            "requests",
            "rate_limit_exceeded",
            "Rate limit reached for requests per min (RPM): Limit 60, Used 60, Requested 1. "
            "Please try again in 1s.",
        ),
        "openai-responses": (
            429,
            "requests",
            "rate_limit_exceeded",
            "Rate limit reached for requests per min (RPM): Limit 60, Used 60, Requested 1. "
            "Please try again in 1s.",
        ),
        "anthropic": (
            429,
            "rate_limit_error",
            None,
            "Number of requests has exceeded your per-minute rate limit.",
        ),
        "gemini": (
            429,
            "RESOURCE_EXHAUSTED",
            429,
            "Resource has been exhausted (e.g. check quota).",
        ),
        "gemini-json": (
            429,
            "RESOURCE_EXHAUSTED",
            429,
            "Resource has been exhausted (e.g. check quota).",
        ),
        "bedrock-converse": (
            429,
            "throttlingException",
            None,
            "Too many requests, please wait before trying again.",
        ),
        "bedrock-invoke": (
            429,
            "throttlingException",
            None,
            "Too many requests, please wait before trying again.",
        ),
    },
    "bad_request": {
        "openai-chat": (
            400,
            "invalid_request_error",
            None,
            "Invalid request: the streamwire bad-request case refuses every attempt.",
        ),
        "openai-responses": (
            400,
            "invalid_request_error",
            None,
            "Invalid request: the streamwire bad-request case refuses every attempt.",
        ),
        "anthropic": (
            400,
            "invalid_request_error",
            None,
            "Invalid request: the streamwire bad-request case refuses every attempt.",
        ),
        "gemini": (400, "INVALID_ARGUMENT", 400, "Request contains an invalid argument."),
        "gemini-json": (400, "INVALID_ARGUMENT", 400, "Request contains an invalid argument."),
        "bedrock-converse": (
            400,
            "validationException",
            None,
            "Invalid request: the streamwire bad-request case refuses every attempt.",
        ),
        "bedrock-invoke": (
            400,
            "validationException",
            None,
            "Invalid request: the streamwire bad-request case refuses every attempt.",
        ),
    },
    "overloaded": {
        "openai-chat": (
            503,
            "server_error",
            None,
            "The engine is currently overloaded, please try again later.",
        ),
        "openai-responses": (
            503,
            "server_error",
            None,
            "The engine is currently overloaded, please try again later.",
        ),
        "anthropic": (529, "overloaded_error", None, "Overloaded"),
        "gemini": (503, "UNAVAILABLE", 503, "The model is overloaded. Please try again later."),
        "gemini-json": (
            503,
            "UNAVAILABLE",
            503,
            "The model is overloaded. Please try again later.",
        ),
        "bedrock-converse": (
            503,
            "serviceUnavailableException",
            None,
            "Bedrock is unable to process your request.",
        ),
        "bedrock-invoke": (
            503,
            "serviceUnavailableException",
            None,
            "Bedrock is unable to process your request.",
        ),
    },
}


def _rate_limit_headers(upstream: str) -> list[tuple[str, str]]:
    """A rate-limited answer's headers: ``Retry-After`` for every provider,
    and each provider's own limits: OpenAI "Rate limits" (``x-ratelimit-
    limit|remaining|reset-requests|tokens``, resets as durations) and the
    ``retry-after-ms`` its SDKs read; Anthropic "Rate limits"
    (``anthropic-ratelimit-requests|tokens-limit|remaining|reset``, resets as
    RFC 3339 times). Gemini and Bedrock document no limit headers (Gemini's
    retry information is in the body). Checked 2026-12-07."""
    headers = [("retry-after", str(RETRY_AFTER_S))]
    if upstream.startswith("openai"):
        headers += [
            ("retry-after-ms", str(RETRY_AFTER_S * 1000)),
            ("x-ratelimit-limit-requests", "60"),
            ("x-ratelimit-remaining-requests", "0"),
            ("x-ratelimit-reset-requests", f"{RETRY_AFTER_S}s"),
            ("x-ratelimit-limit-tokens", "150000"),
            ("x-ratelimit-remaining-tokens", "149984"),
            ("x-ratelimit-reset-tokens", "6m0s"),
        ]
    elif upstream == "anthropic":
        reset = datetime.fromtimestamp(time.time() + RETRY_AFTER_S, timezone.utc)
        when = reset.isoformat(timespec="seconds").replace("+00:00", "Z")
        headers += [
            ("anthropic-ratelimit-requests-limit", "50"),
            ("anthropic-ratelimit-requests-remaining", "0"),
            ("anthropic-ratelimit-requests-reset", when),
            ("anthropic-ratelimit-tokens-limit", "40000"),
            ("anthropic-ratelimit-tokens-remaining", "39988"),
            ("anthropic-ratelimit-tokens-reset", when),
        ]
    return headers


def failure_answer(upstream: str, answer: str | None) -> tuple[int, list[tuple[str, str]], bytes]:
    """The answer of an attempt that fails before any byte: ``answer``'s
    (``FAILURE_ANSWERS``, a rate limit with its headers and, from Gemini, its
    ``RetryInfo``), or the retry cases' own (``retry_error``) when None."""
    if answer is None:
        return retry_error(upstream)
    status, kind, code, message = FAILURE_ANSWERS[answer][upstream]
    status, headers, body = _error_body(upstream, status, kind, code, message)
    if answer != "rate_limited":
        return status, headers, body
    if upstream.startswith("gemini"):
        # Google's error model: the wait in a RetryInfo detail ("API
        # troubleshooting", google.rpc.RetryInfo; checked 2026-12-07).
        error = json.loads(body)
        error["error"]["details"] = [
            {
                "@type": "type.googleapis.com/google.rpc.RetryInfo",
                "retryDelay": f"{RETRY_AFTER_S}s",
            }
        ]
        body = _dumps(error).encode()
    return status, [*headers, *_rate_limit_headers(upstream)], body


def _error_body(
    upstream: str, status: int, kind: str, code: str | int | None, message: str
) -> tuple[int, list[tuple[str, str]], bytes]:
    headers = [("content-type", "application/json")]
    body: Any
    aws = upstream == "bedrock-converse" or kind.endswith("Exception")
    if upstream in ("anthropic", "bedrock-invoke") and not aws:
        body = {"type": "error", "error": {"type": kind, "message": message}}
    elif upstream.startswith("gemini"):
        body = {"error": {"code": code, "message": message, "status": kind}}
    elif aws:
        # An AWS API's error: its type in a header, in UpperCamelCase.
        body = {"message": message}
        headers.append(("x-amzn-errortype", f"{kind[0].upper()}{kind[1:]}"))
    else:
        body = {"error": {"message": message, "type": kind, "param": None, "code": code}}
    return status, headers, _dumps(body).encode()


_CHAT_FINISH = {"stop": "stop", "length": "length", "tool_calls": "tool_calls"}
_ANTHROPIC_STOP = {"stop": "end_turn", "length": "max_tokens", "tool_calls": "tool_use"}
_GEMINI_FINISH = {"stop": "STOP", "length": "MAX_TOKENS", "tool_calls": "STOP"}


def _chat(name: str, a: _Answer, model: str) -> Any:
    message: dict[str, Any] = {"role": "assistant", "content": a.text or None}
    if a.reasoning:
        # Not OpenAI's (Chat Completions has no reasoning field): the field
        # the gateways and providers that stream reasoning as chat use.
        message["reasoning_content"] = a.reasoning
    tool_calls = [
        {"id": cid, "type": "function", "function": {"name": tool, "arguments": _dumps(args)}}
        for cid, tool, args in a.calls
    ]
    if tool_calls:
        message["tool_calls"] = tool_calls
    return {
        "id": f"chatcmpl-sw{name}",
        "object": "chat.completion",
        "created": 1764547200,
        "model": model,
        "choices": [{"index": 0, "message": message, "finish_reason": _CHAT_FINISH[a.stop]}],
        "usage": _usage_body("openai-chat", a.usage),
    }


def _responses(name: str, a: _Answer, model: str) -> Any:
    output: list[dict[str, Any]] = []
    if a.reasoning:
        output.append(
            {
                "id": "rs_sw0",
                "type": "reasoning",
                "summary": [],
                "content": [{"type": "reasoning_text", "text": a.reasoning}],
            }
        )
    if a.text:
        output.append(
            {
                "id": "msg_sw0",
                "type": "message",
                "status": "completed",
                "role": "assistant",
                "content": [{"type": "output_text", "text": a.text, "annotations": []}],
            }
        )
    for n, (cid, tool, args) in enumerate(a.calls):
        output.append(
            {
                "id": f"fc_sw{n}",
                "type": "function_call",
                "status": "completed",
                "call_id": cid,
                "name": tool,
                "arguments": _dumps(args),
            }
        )
    truncated = a.stop == "length"
    return {
        "id": f"resp_sw{name}",
        "object": "response",
        "created_at": 1764547200,
        "status": "incomplete" if truncated else "completed",
        "incomplete_details": {"reason": "max_output_tokens"} if truncated else None,
        "model": model,
        "output": output,
        "usage": _usage_body("openai-responses", a.usage),
    }


def _anthropic(name: str, a: _Answer, model: str) -> Any:
    content: list[dict[str, Any]] = []
    if a.reasoning:
        content.append({"type": "thinking", "thinking": a.reasoning, "signature": a.signature})
    if a.text:
        content.append({"type": "text", "text": a.text})
    content += [
        {"type": "tool_use", "id": cid, "name": tool, "input": args} for cid, tool, args in a.calls
    ]
    return {
        "id": f"msg_sw{name}",
        "type": "message",
        "role": "assistant",
        "model": model,
        "content": content,
        "stop_reason": _ANTHROPIC_STOP[a.stop],
        "stop_sequence": None,
        "usage": _usage_body("anthropic", a.usage),
    }


def _gemini(name: str, a: _Answer, model: str) -> Any:
    parts: list[dict[str, Any]] = []
    if a.reasoning:
        thought: dict[str, Any] = {"text": a.reasoning, "thought": True}
        if a.signature:
            thought["thoughtSignature"] = a.signature
        parts.append(thought)
    if a.text:
        parts.append({"text": a.text})
    parts += [{"functionCall": {"name": tool, "args": args}} for _, tool, args in a.calls]
    return {
        "candidates": [
            {
                "content": {"parts": parts, "role": "model"},
                "finishReason": _GEMINI_FINISH[a.stop],
                "index": 0,
            }
        ],
        "usageMetadata": _usage_body("gemini", a.usage),
        "modelVersion": model,
    }


def _converse(name: str, a: _Answer, model: str) -> Any:
    content: list[dict[str, Any]] = []
    if a.reasoning:
        reasoning: dict[str, Any] = {"text": a.reasoning}
        if a.signature:
            reasoning["signature"] = a.signature
        content.append({"reasoningContent": {"reasoningText": reasoning}})
    if a.text:
        content.append({"text": a.text})
    content += [
        {"toolUse": {"toolUseId": cid, "name": tool, "input": args}} for cid, tool, args in a.calls
    ]
    return {
        "output": {"message": {"role": "assistant", "content": content}},
        "stopReason": _ANTHROPIC_STOP[a.stop],
        "usage": converse_usage(a.usage, "bedrock-converse"),
        "metrics": {"latencyMs": 42},
    }


def _usage_body(protocol: str, usage: Usage) -> dict[str, Any]:
    """The usage object of ``protocol``'s non-streaming answer, for a report
    in that protocol's own convention (``usage_of``): each part in the field
    the provider documents for it, none that it does not."""
    f = figures(usage, protocol)
    body: dict[str, Any]
    if protocol == "anthropic":
        body = {"input_tokens": f.input_fresh or 0, "output_tokens": f.output or 0}
        if f.cache_read is not None:
            body["cache_read_input_tokens"] = f.cache_read
        if f.cache_write is not None:
            body["cache_creation_input_tokens"] = f.cache_write
    elif protocol == "gemini":
        body = {
            "promptTokenCount": f.input_total or 0,
            "candidatesTokenCount": max(0, (f.output or 0) - (f.reasoning or 0)),
            "totalTokenCount": f.total_or_sum,
        }
        if f.cache_read is not None:
            body["cachedContentTokenCount"] = f.cache_read
        if f.reasoning is not None:
            body["thoughtsTokenCount"] = f.reasoning
    else:
        chat = protocol == "openai-chat"
        body = {
            "prompt_tokens" if chat else "input_tokens": f.input_total or 0,
            "completion_tokens" if chat else "output_tokens": f.output or 0,
            "total_tokens": f.total_or_sum,
        }
        if f.cache_read is not None:
            body["prompt_tokens_details" if chat else "input_tokens_details"] = {
                "cached_tokens": f.cache_read
            }
        if f.reasoning is not None:
            body["completion_tokens_details" if chat else "output_tokens_details"] = {
                "reasoning_tokens": f.reasoning
            }
    return body


_JSON_BODIES = {
    "openai-chat": _chat,
    "openai-responses": _responses,
    "anthropic": _anthropic,
    "bedrock-invoke": _anthropic,
    "gemini": _gemini,
    "gemini-json": _gemini,
    "bedrock-converse": _converse,
}
