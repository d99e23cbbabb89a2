"""What a hostile upstream costs: peak memory of each attack, time of each trap.

Each attack is fed to a fresh adapter in 64 KiB chunks generated on the fly
(so the input itself weighs nothing), and reports how the stream ended and
its peak memory: Python allocations by tracemalloc, and the growth of the
process's resident set (``ru_maxrss``; each attack runs in its own process,
so the peak is its own). Each trap reports its CPU time (``time.process_time``)
at two sizes, ten times apart: a linear cost grows ~10x.

    python benches/bench_hostile.py              # every attack and trap, default sizes
    python benches/bench_hostile.py blocks 1000000   # one, at the issue's size

It uses only options every version has, so that the same script measures an
older build too. As a test (``pytest benches/bench_hostile.py``) it runs
each case once, small, and checks how it ended.
"""

from __future__ import annotations

import base64
import gc
import json
import resource
import subprocess
import sys
import time
import tracemalloc
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import streamwire as sw

CHUNK = 64 * 1024


def _dumps(value: Any) -> str:
    return json.dumps(value, separators=(",", ":"))


def _sse(
    payloads: Iterator[Any], event: Callable[[Any], str | None] = lambda p: None
) -> Iterator[bytes]:
    buffer = bytearray()
    for payload in payloads:
        buffer += sw.encode_sse(
            payload if isinstance(payload, str) else _dumps(payload), event=event(payload)
        )
        if len(buffer) >= CHUNK:
            yield bytes(buffer)
            buffer.clear()
    if buffer:
        yield bytes(buffer)


def _anthropic_type(payload: Any) -> str | None:
    return payload.get("type") if isinstance(payload, dict) else None


def _message_start() -> dict[str, Any]:
    message = {"id": "m", "type": "message", "role": "assistant", "model": "x", "content": []}
    return {"type": "message_start", "message": {**message, "usage": {"input_tokens": 1}}}


def _stream(protocol: str, **options: Any) -> sw.Stream:
    try:
        return sw.stream(protocol, **options)
    except TypeError:  # an option this version does not have
        return sw.stream(protocol)


def _feed(stream: sw.Stream, chunks: Iterator[bytes]) -> str:
    try:
        for chunk in chunks:
            stream.feed(chunk)
        stream.close()
        result = stream.result
    except BaseException as exc:  # what the attack made escape
        return f"raised {type(exc).__name__}"
    error = f" {result.error.phase}/{result.error.type}" if result.error else ""
    return f"{result.status}{error}"


# --- attacks -----------------------------------------------------------------


def attack_deep_json(depth: int) -> str:
    """``data: [[[...`` nested ``depth`` deep, then a whole text stream."""
    head = "[" * depth
    chunks = _sse(iter([head, {"id": "c", "choices": [{"index": 0, "delta": {"content": "hi"}}]}]))
    return _feed(sw.stream("openai-chat"), chunks)


def attack_blocks(blocks: int) -> str:
    """``blocks`` empty anthropic text blocks (the issue: 1,000,000, 191 MiB)."""

    def payloads() -> Iterator[Any]:
        yield _message_start()
        start = {"type": "text", "text": ""}
        for i in range(blocks):
            yield {"type": "content_block_start", "index": i, "content_block": start}
            yield {"type": "content_block_stop", "index": i}
        yield {"type": "message_delta", "delta": {"stop_reason": "end_turn"}}
        yield {"type": "message_stop"}

    return _feed(sw.stream("anthropic"), _sse(payloads(), _anthropic_type))


def attack_invoke_blocks(blocks: int) -> str:
    """The same inside Bedrock ``InvokeModelWithResponseStream`` chunks."""

    def frames() -> Iterator[bytes]:
        buffer = bytearray()
        payloads = [_message_start()]
        headers = {":event-type": "chunk", ":message-type": "event"}
        start = {"type": "text", "text": ""}

        def frame(payload: Any) -> bytes:
            inner = base64.b64encode(_dumps(payload).encode()).decode()
            return sw.encode_eventstream(headers, _dumps({"bytes": inner}).encode())

        for payload in payloads:
            buffer += frame(payload)
        for i in range(blocks):
            buffer += frame({"type": "content_block_start", "index": i, "content_block": start})
            buffer += frame({"type": "content_block_stop", "index": i})
            if len(buffer) >= CHUNK:
                yield bytes(buffer)
                buffer.clear()
        buffer += frame({"type": "message_stop"})
        yield bytes(buffer)

    return _feed(sw.stream("bedrock-invoke"), frames())


def attack_unknown_names(count: int, size: int = 1 << 20) -> str:
    """``count`` unknown SSE event names of ``size`` bytes each (the issue: 100 of 8 MiB)."""
    names = (f"{i:04d}" + "x" * size for i in range(count))
    body = (sw.encode_sse("{}", event=name) for name in names)
    return _feed(sw.stream("openai-chat"), body)


def _call_fragments(calls: int, chars: int, width: int, piece: str = "") -> Iterator[bytes]:
    def payloads() -> Iterator[Any]:
        fragment_text = piece or "a" * width
        for i in range(calls):
            head = {"index": i, "id": f"call_{i}", "type": "function", "function": {"name": "f"}}
            yield {"id": "c", "choices": [{"index": 0, "delta": {"tool_calls": [head]}}]}
            fragment = {"index": i, "function": {"arguments": fragment_text}}
            chunk = _dumps(
                {"id": "c", "choices": [{"index": 0, "delta": {"tool_calls": [fragment]}}]}
            )
            for _ in range(chars // width):
                yield chunk
        yield {"id": "c", "choices": [{"index": 0, "delta": {}, "finish_reason": "tool_calls"}]}

    return _sse(payloads())


def attack_small_fragments(chars: int) -> str:
    """One call of ``chars`` characters in two-character fragments (the issue:
    8 Mi characters held ~300 MB)."""
    return _feed(sw.stream("openai-chat"), _call_fragments(1, chars, 2))


def attack_many_calls(calls: int, chars: int = 1 << 20) -> str:
    """``calls`` calls of ``chars`` characters each, in 4 KiB fragments: each
    within its own cap, together past the stream's."""
    return _feed(_stream("openai-chat", max_tool_calls=calls), _call_fragments(calls, chars, 4096))


ATTACKS: dict[str, tuple[Callable[[int], str], int]] = {
    "deep-json": (attack_deep_json, 1_000_000),
    "blocks": (attack_blocks, 200_000),
    "invoke-blocks": (attack_invoke_blocks, 200_000),
    "unknown-names": (attack_unknown_names, 100),
    "small-fragments": (attack_small_fragments, 8 << 20),
    "many-calls": (attack_many_calls, 48),
}


def run_attack(name: str, size: int) -> dict[str, Any]:
    fn, _ = ATTACKS[name]
    gc.collect()
    rss_before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    tracemalloc.start()
    start = time.process_time()
    outcome = fn(size)
    seconds = time.process_time() - start
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    rss_after = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return {
        "attack": name,
        "size": size,
        "outcome": outcome,
        "tracemalloc_peak_mib": round(peak / 2**20, 1),
        "rss_growth_mib": round((rss_after - rss_before) / 1024, 1),
        "cpu_seconds": round(seconds, 2),
    }


# --- traps -------------------------------------------------------------------


def trap_duplicate_ids(calls: int) -> float:
    """Completing ``calls`` tool calls (their ids checked for duplicates: only
    those whose arguments parse reach the check)."""
    chunks = list(_call_fragments(calls, 2, 2, piece="{}"))
    stream = _stream("openai-chat", max_tool_calls=calls)
    start = time.process_time()
    for chunk in chunks:
        stream.feed(chunk)
    stream.close()
    assert len(stream.result.tool_calls) == calls
    assert stream.result.tool_calls[-1].state == "valid"
    return time.process_time() - start


def trap_result_per_chunk(blocks: int) -> float:
    """An anthropic stream of ``blocks`` short text blocks, ``.result`` read after each."""
    units = [_message_start()]
    for i in range(blocks):
        units.append(
            {
                "type": "content_block_start",
                "index": i,
                "content_block": {"type": "text", "text": ""},
            }
        )
        units.append(
            {
                "type": "content_block_delta",
                "index": i,
                "delta": {"type": "text_delta", "text": "ab"},
            }
        )
        units.append({"type": "content_block_stop", "index": i})
    wire = [sw.encode_sse(_dumps(u), event=u["type"]) for u in units]
    stream = _stream("anthropic", max_content_blocks=blocks)
    start = time.process_time()
    for piece in wire:
        stream.feed(piece)
        stream.result  # noqa: B018 - the trap: reading per chunk
    stream.close()
    assert len(stream.result.provider_content) == blocks
    return time.process_time() - start


TRAPS: dict[str, tuple[Callable[[int], float], int]] = {
    "duplicate-ids": (trap_duplicate_ids, 2_000),
    "result-per-chunk": (trap_result_per_chunk, 2_000),
}


def run_trap(name: str, size: int) -> dict[str, Any]:
    fn, _ = TRAPS[name]
    small, large = fn(size), fn(10 * size)
    return {
        "trap": name,
        "sizes": [size, 10 * size],
        "cpu_seconds": [round(small, 3), round(large, 3)],
        "growth": round(large / small, 1) if small else None,
    }


# --- running -----------------------------------------------------------------


def test_every_case_runs() -> None:
    assert attack_deep_json(5000) == "error framing/json_too_deep"
    assert attack_blocks(5000) == "error limit/too_many_content_blocks"
    assert attack_invoke_blocks(5000) == "error limit/too_many_content_blocks"
    assert attack_unknown_names(3, 1000).startswith("incomplete")
    assert attack_small_fragments(2000) == "completed"
    assert attack_many_calls(3, 8 << 20) == "error limit/tool_arguments_too_large"
    assert trap_duplicate_ids(50) >= 0 and trap_result_per_chunk(50) >= 0


def main(argv: list[str]) -> None:
    if len(argv) >= 2 and argv[0] == "--one":  # in a process of its own
        name, size = argv[1], int(argv[2])
        row = run_attack(name, size) if name in ATTACKS else run_trap(name, size)
        print(json.dumps(row))
        return
    wanted = {argv[0]: int(argv[1])} if argv else {}
    for name, (_, default) in {**ATTACKS, **TRAPS}.items():
        if wanted and name not in wanted:
            continue
        size = wanted.get(name, default)
        done = subprocess.run(
            [sys.executable, str(Path(__file__).resolve()), "--one", name, str(size)],
            capture_output=True,
            text=True,
            check=False,
        )
        print(done.stdout.strip() or f'{{"case": "{name}", "failed": {done.stderr[-300:]!r}}}')


if __name__ == "__main__":
    main(sys.argv[1:])
