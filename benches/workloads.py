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

Chunkings: 4 KiB and 64 KiB over the whole body; 1-byte chunks over a prefix of
at most 200,000 bytes cut at an event boundary (the whole body one byte at a
time would take minutes in the pure-Python peers), never for the 8 MiB event.
"""

from __future__ import annotations

import json
import random
from dataclasses import dataclass
from functools import cache

__all__ = [
    "CHUNKINGS",
    "ONE_BYTE_PREFIX",
    "WORKLOADS",
    "Chunking",
    "Workload",
    "chunked",
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
    wire, size = load.wire, chunking.size
    return load, tuple(wire[i : i + size] for i in range(0, len(wire), size))
