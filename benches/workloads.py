"""Deterministic SSE workloads for the benchmarks, generated once per process.

Each workload is the wire bytes of a whole response body plus the data of every
event a correct parser must dispatch, computed from the generator (never from a
parser), so a benchmark can check the output of every implementation it times.

* ``openai-chat``: 20,000 ``data: {chat.completion.chunk}`` events (LF endings),
  about 235 bytes each, text mixing ASCII, CJK and emoji, then ``data: [DONE]``.
  Shaped like OpenAI Chat Completions streaming (API reference checked 2025-06),
  without the optional ``system_fingerprint`` and ``service_tier`` fields.
* ``openai-chat-crlf``: the same events with CRLF line endings, which servers
  built on sse-starlette send by default (its ``DEFAULT_SEPARATOR`` is CRLF).
* ``anthropic``: an Anthropic Messages stream: ``message_start``,
  ``content_block_start``, ``ping``, 20,000 ``content_block_delta`` events,
  ``content_block_stop``, ``message_delta``, ``message_stop``, each as
  ``event: NAME\\ndata: {...}\\n\\n``, about 130 bytes each (streaming docs checked
  2025-06).
* ``one-8mib-event``: a single event whose only data line is 8 MiB of JSON (an
  image or a large tool result), for peak memory against wire size.
* ``openai-responses``: an OpenAI Responses stream (API reference "Responses
  streaming events" checked 2026-11-29): ``response.created``,
  ``response.in_progress``, ``output_item.added``, ``content_part.added``, 20,000
  ``response.output_text.delta`` events (``sequence_number``, ``item_id``,
  ``output_index``, ``content_index``, ``delta``, ``logprobs``, ``obfuscation``
  padding), ``output_text.done``, ``content_part.done``, ``output_item.done`` and
  ``response.completed`` with usage (the last four repeat the whole text, as the
  API does), each as ``event: NAME\\ndata: {...}\\n\\n``, about 270 bytes a delta.
  Built by :func:`workload`; not in ``WORKLOADS`` (the SSE framing benches).
* ``gemini``: a Gemini ``streamGenerateContent?alt=sse`` stream (API reference
  checked 2026-11-29): 20,000 ``data: {GenerateContentResponse}`` events with
  CRLF separators, each with one candidate holding one text part and a
  ``usageMetadata`` snapshot (``candidatesTokenCount`` growing), the last one
  with ``finishReason: STOP``; about 330 bytes an event. No end marker (Gemini
  sends none). Built by :func:`workload`; not in ``WORKLOADS``.
* ``gemini-tools``: a Gemini 2.5 ``streamGenerateContent?alt=sse`` answer as
  the API sends it today (API reference "GenerateContentResponse",
  "UsageMetadata", and the "Thought signatures" guide, checked 2026-12-02;
  the recorded streams in ``fixtures/providers/gemini/`` show the format):
  Google's JSON spacing (``"key": value,"next"``), CRLF separators, 20,000
  chunks each with one text part of 4 to 24 tokens and a ``usageMetadata``
  snapshot that changes on every chunk (``candidatesTokenCount`` and
  ``totalTokenCount`` grow; ``promptTokenCount``, a ``promptTokensDetails``
  list and ``thoughtsTokenCount`` as 2.5 models report them; the first
  chunk without ``candidatesTokenCount``, as the API's first chunk often
  is), ``modelVersion`` and ``responseId``; near the end a ``functionCall``
  part with a 1,200-character ``thoughtSignature``, then a last chunk with an
  empty text part and ``finishReason: STOP``. Built by :func:`workload`; not
  in ``WORKLOADS``. ``gemini-tools`` also gives :func:`gemini_tools_facts`,
  what a correct reader derives from it (from the generator).

One AWS EventStream workload (binary frames, not SSE; see :func:`es_workload`):

* ``bedrock-converse``: 20,000 messages shaped like Bedrock ``ConverseStream``
  (API reference checked 2026-11): ``messageStart``, 19,996
  ``contentBlockDelta``, ``contentBlockStop``, ``messageStop``, ``metadata``;
  each with the three headers Bedrock sends (``:event-type``,
  ``:content-type: application/json``, ``:message-type: event``) and a compact
  JSON payload of about 150 bytes that carries Bedrock's ``p`` padding member;
  framed by ``sw.encode_eventstream`` (about 247 bytes a message, 4.9 MB).
  ``bedrock-converse-5k`` is its first 5,000 messages, so that a one-chunk run
  at two sizes shows how a decoder scales with the chunk.

The pipeline benches' tool-call workloads (``openai-chat-tools`` in
``bench_pipeline_chat.py``, ``anthropic-tools`` in
``bench_pipeline_anthropic.py``) are built there from the same pieces: a
text ``PREAMBLE``, then 16 calls whose arguments are :func:`tool_arguments`
(a 400-word query of ``WORDS``), streamed in fragments :func:`cut` from
their JSON text.

Chunkings: 4 KiB and 64 KiB over the whole body; 1-byte chunks over a prefix of
at most 200,000 bytes cut at an event boundary (the whole body one byte at a
time would take minutes in the pure-Python peers), never for the 8 MiB event.
EventStream: 4 KiB, 64 KiB, and the whole body as one chunk (``ES_CHUNKINGS``).
"""

from __future__ import annotations

import json
import random
from dataclasses import dataclass
from functools import cache
from typing import Any

__all__ = [
    "CHUNKINGS",
    "ES_CHUNKINGS",
    "ES_WORKLOADS",
    "ONE_BYTE_PREFIX",
    "PREAMBLE",
    "WORDS",
    "WORKLOADS",
    "Chunking",
    "EventStreamWorkload",
    "GeminiFacts",
    "Workload",
    "chunked",
    "chunks_of",
    "cut",
    "es_chunked",
    "es_workload",
    "gemini_tools_facts",
    "tool_arguments",
    "workload",
]

EVENTS = 20_000
BIG_EVENT_BYTES = 8 * 1024 * 1024
#: 1-byte chunks are fed over at most this many leading bytes of a workload.
ONE_BYTE_PREFIX = 200_000
SEED = 20240601


@dataclass(frozen=True)
class Workload:
    """A response body and what a correct SSE parser dispatches from it."""

    name: str
    wire: bytes
    #: The data of every event, in order.
    expected: tuple[str, ...]
    #: Offset just past each event's blank line, in order.
    event_ends: tuple[int, ...]

    def prefix(self, limit: int) -> Workload:
        """The leading events that fit in ``limit`` bytes (whole events only)."""
        count = sum(1 for end in self.event_ends if end <= limit)
        end = self.event_ends[count - 1] if count else 0
        return Workload(
            f"{self.name}[:{end}]", self.wire[:end], self.expected[:count], self.event_ends[:count]
        )


@dataclass(frozen=True)
class Chunking:
    """How a workload is cut into ``feed`` calls."""

    label: str
    size: int
    #: Only this many leading bytes (at an event boundary) are fed; None: all.
    prefix: int | None = None


CHUNKINGS = (
    Chunking("4KiB", 4096),
    Chunking("64KiB", 65536),
    Chunking("1B", 1, prefix=ONE_BYTE_PREFIX),
)

# Token material: ASCII words, CJK, emoji (incl. a ZWJ sequence and a skin-tone
# modifier), punctuation JSON must escape, and a newline inside the text.
_TOKENS = (
    *[" the", " model", " stream", " parser", " token", " is", " a", " of", " and", " to"],
    *[" Hello", ",", ".", " JSON", " 42", " café", " naïve", ' "quoted"', " back\\slash"],
    *["你好", "世界", "模型", "流式", "解析", "こんにちは", "데이터"],
    *["🙂", "🚀", "👍🏽", "👩\u200d💻", "✨"],
    *["\n", "\n\n- ", " `code`"],
)


def _text(rng: random.Random) -> str:
    return "".join(rng.choice(_TOKENS) for _ in range(rng.randint(1, 4)))


def _dumps(obj: object) -> str:
    # As providers send it: compact, non-ASCII as raw UTF-8.
    return json.dumps(obj, ensure_ascii=False, separators=(",", ":"))


def _frame(payloads: list[tuple[str | None, str]], eol: str) -> Workload:
    parts: list[bytes] = []
    ends: list[int] = []
    size = 0
    for event, data in payloads:
        head = f"event: {event}{eol}" if event else ""
        part = f"{head}data: {data}{eol}{eol}".encode()
        parts.append(part)
        size += len(part)
        ends.append(size)
    return Workload("", b"".join(parts), tuple(d for _, d in payloads), tuple(ends))


def _chat_payloads() -> list[tuple[str | None, str]]:
    rng = random.Random(SEED)
    base = {
        "id": "chatcmpl-B9MBs8CjcvOU2jLn4n570S5qMJKcT",
        "object": "chat.completion.chunk",
        "created": 1741569952,
        "model": "gpt-4o-2024-08-06",
    }

    def chunk(delta: dict[str, object], finish: str | None = None) -> str:
        choice = {"index": 0, "delta": delta, "logprobs": None, "finish_reason": finish}
        return _dumps({**base, "choices": [choice]})

    out: list[tuple[str | None, str]] = [(None, chunk({"role": "assistant", "content": ""}))]
    out += [(None, chunk({"content": _text(rng)})) for _ in range(EVENTS - 2)]
    out.append((None, chunk({}, "stop")))
    out.append((None, "[DONE]"))
    return out


def _anthropic_payloads() -> list[tuple[str | None, str]]:
    rng = random.Random(SEED + 1)
    message: dict[str, object] = {
        "id": "msg_01XFDUDYJgAACzvnptvVoYEL",
        "type": "message",
        "role": "assistant",
        "content": [],
        "model": "claude-sonnet-4-20250514",
        "stop_reason": None,
        "stop_sequence": None,
        "usage": {"input_tokens": 472, "output_tokens": 2},
    }
    block = {"type": "text", "text": ""}
    out: list[tuple[str | None, str]] = [
        ("message_start", _dumps({"type": "message_start", "message": message})),
        (
            "content_block_start",
            _dumps({"type": "content_block_start", "index": 0, "content_block": block}),
        ),
        ("ping", _dumps({"type": "ping"})),
    ]
    for _ in range(EVENTS):
        delta = {
            "type": "content_block_delta",
            "index": 0,
            "delta": {"type": "text_delta", "text": _text(rng)},
        }
        out.append(("content_block_delta", _dumps(delta)))
    out += [
        ("content_block_stop", _dumps({"type": "content_block_stop", "index": 0})),
        (
            "message_delta",
            _dumps(
                {
                    "type": "message_delta",
                    "delta": {"stop_reason": "end_turn", "stop_sequence": None},
                    "usage": {"output_tokens": 15231},
                }
            ),
        ),
        ("message_stop", _dumps({"type": "message_stop"})),
    ]
    return out


def _big_payload() -> list[tuple[str | None, str]]:
    rng = random.Random(SEED + 2)
    alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"
    head = '{"type":"image","media_type":"image/png","data":"'
    body = "".join(rng.choices(alphabet, k=BIG_EVENT_BYTES - len(head) - 2))
    return [(None, head + body + '"}')]


def _responses_payloads() -> list[tuple[str | None, str]]:
    rng = random.Random(SEED + 4)
    rid = "resp_68c35098e6fc819e80fb94b25b7d031b0f2d670b80edc507"
    mid = "msg_68c350a75ddc819ea5406470460be7850f2d670b80edc507"
    seq = iter(range(EVENTS + 16))
    out: list[tuple[str | None, str]] = []

    def event(kind: str, **fields: object) -> None:
        out.append((kind, _dumps({"type": kind, "sequence_number": next(seq), **fields})))

    def response(status: str, output: list[object], usage: object = None) -> dict[str, object]:
        return {
            "id": rid,
            "object": "response",
            "created_at": 1764412800,
            "status": status,
            "background": False,
            "error": None,
            "incomplete_details": None,
            "instructions": None,
            "max_output_tokens": None,
            "model": "gpt-4.1-2025-04-14",
            "output": output,
            "parallel_tool_calls": True,
            "previous_response_id": None,
            "reasoning": {"effort": None, "summary": None},
            "service_tier": "default",
            "store": True,
            "temperature": 1.0,
            "text": {"format": {"type": "text"}, "verbosity": "medium"},
            "tool_choice": "auto",
            "tools": [],
            "top_p": 1.0,
            "truncation": "disabled",
            "usage": usage,
            "user": None,
            "metadata": {},
        }

    event("response.created", response=response("in_progress", []))
    event("response.in_progress", response=response("in_progress", []))
    item: dict[str, object] = {
        "id": mid,
        "type": "message",
        "status": "in_progress",
        "content": [],
        "role": "assistant",
    }
    event("response.output_item.added", output_index=0, item=item)
    empty = {"type": "output_text", "annotations": [], "logprobs": [], "text": ""}
    event("response.content_part.added", item_id=mid, output_index=0, content_index=0, part=empty)
    deltas = []
    for _ in range(EVENTS):
        delta = _text(rng)
        deltas.append(delta)
        event(
            "response.output_text.delta",
            item_id=mid,
            output_index=0,
            content_index=0,
            delta=delta,
            logprobs=[],
            obfuscation=_PADDING[: rng.randint(2, 16)],
        )
    text = "".join(deltas)
    part = {**empty, "text": text}
    event(
        "response.output_text.done",
        item_id=mid,
        output_index=0,
        content_index=0,
        text=text,
        logprobs=[],
    )
    event("response.content_part.done", item_id=mid, output_index=0, content_index=0, part=part)
    done = {**item, "status": "completed", "content": [part]}
    event("response.output_item.done", output_index=0, item=done)
    usage = {
        "input_tokens": 1024,
        "input_tokens_details": {"cached_tokens": 512},
        "output_tokens": EVENTS,
        "output_tokens_details": {"reasoning_tokens": 0},
        "total_tokens": 1024 + EVENTS,
    }
    event("response.completed", response=response("completed", [done], usage))
    return out


def _gemini_payloads() -> list[tuple[str | None, str]]:
    rng = random.Random(SEED + 4)
    out: list[tuple[str | None, str]] = []
    for i in range(EVENTS):
        candidate: dict[str, object] = {
            "content": {"parts": [{"text": _text(rng)}], "role": "model"},
            "index": 0,
        }
        if i == EVENTS - 1:
            candidate["finishReason"] = "STOP"
        usage = {
            "promptTokenCount": 1024,
            "candidatesTokenCount": i + 1,
            "totalTokenCount": 1025 + i,
            "promptTokensDetails": [{"modality": "TEXT", "tokenCount": 1024}],
        }
        chunk = {
            "candidates": [candidate],
            "usageMetadata": usage,
            "modelVersion": "gemini-2.5-flash",
            "responseId": "w1peaMz6INOvnvgPgYfPiQY",
        }
        out.append((None, _dumps(chunk)))
    return out


def _google_dumps(obj: object) -> str:
    # As the Gemini API sends it: a space after each colon, none after commas.
    return json.dumps(obj, ensure_ascii=False, separators=(",", ": "))


#: The function call near the end of ``gemini-tools``: name and arguments.
GEMINI_TOOLS_CALL = ("get_weather", {"city": "Paris", "unit": "celsius", "days": 3})
#: ``gemini-tools``' fixed usage figures: prompt tokens, thoughts tokens.
_GEMINI_PROMPT, _GEMINI_THOUGHTS = 1187, 1009


@dataclass(frozen=True)
class GeminiFacts:
    """What a correct reader derives from ``gemini-tools`` (from the generator)."""

    text: str
    #: ``(name, args)`` of each function call, in order.
    calls: tuple[tuple[str, dict[str, object]], ...]
    finish_reason: str
    #: ``(promptTokenCount, candidatesTokenCount + thoughtsTokenCount, totalTokenCount)``
    #: of the last snapshot.
    usage: tuple[int, int, int]


@cache
def _gemini_tools_chunks() -> tuple[list[str], GeminiFacts]:
    rng = random.Random(SEED + 5)
    response_id = "xYh1aPXqKpqVz7IPlrSn0Aw"
    b64 = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"
    signature = "".join(rng.choices(b64, k=1200))
    datas: list[str] = []
    texts: list[str] = []
    candidates = 0

    def chunk(parts: list[dict[str, object]], finish: str | None = None) -> str:
        candidate: dict[str, object] = {"content": {"parts": parts, "role": "model"}}
        if finish is not None:
            candidate["finishReason"] = finish
        candidate["index"] = 0
        usage: dict[str, object] = {"promptTokenCount": _GEMINI_PROMPT}
        reported = candidates if datas else 0  # the first chunk reports no candidates yet
        if reported:
            usage["candidatesTokenCount"] = reported
        usage["totalTokenCount"] = _GEMINI_PROMPT + reported + _GEMINI_THOUGHTS
        usage["promptTokensDetails"] = [{"modality": "TEXT", "tokenCount": _GEMINI_PROMPT}]
        usage["thoughtsTokenCount"] = _GEMINI_THOUGHTS
        body = {
            "candidates": [candidate],
            "usageMetadata": usage,
            "modelVersion": "gemini-2.5-flash",
            "responseId": response_id,
        }
        return _google_dumps(body)

    for _ in range(EVENTS - 2):
        count = rng.randint(4, 24)
        text = "".join(rng.choice(_TOKENS) for _ in range(count))
        candidates += count
        texts.append(text)
        datas.append(chunk([{"text": text}]))
    name, args = GEMINI_TOOLS_CALL
    candidates += 11
    call = {"functionCall": {"name": name, "args": args}, "thoughtSignature": signature}
    datas.append(chunk([call]))
    datas.append(chunk([{"text": ""}], "STOP"))
    total = _GEMINI_PROMPT + candidates + _GEMINI_THOUGHTS
    facts = GeminiFacts(
        "".join(texts),
        (GEMINI_TOOLS_CALL,),
        "STOP",
        (_GEMINI_PROMPT, candidates + _GEMINI_THOUGHTS, total),
    )
    return datas, facts


def gemini_tools_facts() -> GeminiFacts:
    """What a correct reader derives from ``gemini-tools`` (and its JSON array)."""
    return _gemini_tools_chunks()[1]


@cache
def workload(name: str) -> Workload:
    """Builds (once per process) the named workload."""
    if name == "openai-chat":
        built = _frame(_chat_payloads(), "\n")
    elif name == "openai-chat-crlf":
        built = _frame(_chat_payloads(), "\r\n")
    elif name == "anthropic":
        built = _frame(_anthropic_payloads(), "\n")
    elif name == "one-8mib-event":
        built = _frame(_big_payload(), "\n")
    elif name == "openai-responses":
        built = _frame(_responses_payloads(), "\n")
    elif name == "gemini":
        built = _frame(_gemini_payloads(), "\r\n")
    elif name == "gemini-tools":
        built = _frame([(None, data) for data in _gemini_tools_chunks()[0]], "\r\n")
    else:
        raise KeyError(name)
    return Workload(name, built.wire, built.expected, built.event_ends)


WORKLOADS = ("openai-chat", "anthropic", "openai-chat-crlf", "one-8mib-event")


@cache
def chunked(name: str, chunking: Chunking) -> tuple[Workload, tuple[bytes, ...]]:
    """The workload as fed under ``chunking`` (a prefix for 1-byte chunks) and its chunks."""
    load = workload(name)
    if chunking.prefix is not None:
        load = load.prefix(chunking.prefix)
    return load, chunks_of(load.wire, chunking.size)


def chunks_of(wire: bytes, size: int) -> tuple[bytes, ...]:
    """``wire`` cut every ``size`` bytes."""
    return tuple(wire[i : i + size] for i in range(0, len(wire), size))


# --- the pipeline benches' tool calls -------------------------------------------------------

#: The text a tool-call workload's answer opens with, before its calls.
PREAMBLE = ("I'll", " look", " that", " up", " in", " parallel", ".")
#: The words of its calls' queries: accents, CJK, an emoji, a quote, a
#: backslash and a newline among them (what a JSON string must escape or not).
WORDS = ("alpha", "beta", "ünïcode", "数据", "🙂", '"q"', "back\\slash", "42", "line\nbreak")


def tool_arguments(rng: random.Random, i: int) -> dict[str, Any]:
    """The arguments of a tool-call workload's call number ``i``."""
    return {
        "query": " ".join(rng.choice(WORDS) for _ in range(400)),
        "limit": i,
        "exact": bool(i % 2),
    }


def cut(rng: random.Random, text: str, pieces: int) -> list[str]:
    """``text`` cut in ``pieces`` pieces at seeded places, none empty."""
    cuts = sorted(rng.sample(range(1, len(text)), pieces - 1))
    return [text[a:b] for a, b in zip([0, *cuts], [*cuts, len(text)], strict=True)]


# --- AWS EventStream ------------------------------------------------------------------------

ES_MESSAGES = 20_000
#: Bedrock pads each event's JSON with a ``p`` member: a prefix of this alphabet.
_PADDING = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"


@dataclass(frozen=True)
class EventStreamWorkload:
    """An EventStream body and what a correct decoder yields from it."""

    name: str
    wire: bytes
    #: ``(:event-type, payload)`` of every message, in order.
    expected: tuple[tuple[str, bytes], ...]
    #: Offset just past each message, in order.
    message_ends: tuple[int, ...]

    @property
    def largest_message(self) -> int:
        """The longest frame's ``total_length``."""
        return max(b - a for a, b in zip((0, *self.message_ends), self.message_ends, strict=False))

    def first(self, count: int, name: str) -> EventStreamWorkload:
        """The first ``count`` messages, as a workload called ``name``."""
        end = self.message_ends[count - 1]
        return EventStreamWorkload(
            name, self.wire[:end], self.expected[:count], self.message_ends[:count]
        )


#: ``size`` 0 feeds the whole body as one chunk.
ES_CHUNKINGS = (Chunking("4KiB", 4096), Chunking("64KiB", 65536), Chunking("whole", 0))
ES_WORKLOADS = ("bedrock-converse", "bedrock-converse-5k")


def _converse_events() -> list[tuple[str, dict[str, object]]]:
    rng = random.Random(SEED + 3)

    def pad(low: int) -> str:
        return _PADDING[: rng.randint(low, len(_PADDING))]

    events: list[tuple[str, dict[str, object]]] = [
        ("messageStart", {"p": pad(1), "role": "assistant"})
    ]
    for _ in range(ES_MESSAGES - 4):
        text = _text(rng) + _text(rng) + _text(rng)
        delta = {"contentBlockIndex": 0, "delta": {"text": text}, "p": pad(40)}
        events.append(("contentBlockDelta", delta))
    usage = {
        "inputTokens": 1024,
        "outputTokens": ES_MESSAGES - 4,
        "totalTokens": ES_MESSAGES + 1020,
    }
    events += [
        ("contentBlockStop", {"contentBlockIndex": 0, "p": pad(1)}),
        ("messageStop", {"p": pad(1), "stopReason": "end_turn"}),
        ("metadata", {"metrics": {"latencyMs": 48213}, "p": pad(1), "usage": usage}),
    ]
    return events


@cache
def es_workload(name: str) -> EventStreamWorkload:
    """Builds (once per process) the named EventStream workload."""
    if name == "bedrock-converse-5k":
        return es_workload("bedrock-converse").first(5_000, name)
    if name != "bedrock-converse":
        raise KeyError(name)
    # Imported here: the SSE workloads need no extension module.
    import streamwire as sw

    frames: list[bytes] = []
    expected: list[tuple[str, bytes]] = []
    ends: list[int] = []
    size = 0
    for event_type, body in _converse_events():
        payload = _dumps(body).encode()
        headers = [
            (":event-type", event_type),
            (":content-type", "application/json"),
            (":message-type", "event"),
        ]
        frame = sw.encode_eventstream(headers, payload)
        frames.append(frame)
        expected.append((event_type, payload))
        size += len(frame)
        ends.append(size)
    return EventStreamWorkload(name, b"".join(frames), tuple(expected), tuple(ends))


@cache
def es_chunked(name: str, chunking: Chunking) -> tuple[EventStreamWorkload, tuple[bytes, ...]]:
    """The EventStream workload and its chunks under ``chunking`` (size 0: one chunk)."""
    load = es_workload(name)
    return load, chunks_of(load.wire, chunking.size or len(load.wire))
