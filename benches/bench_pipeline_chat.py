"""The whole ``openai-chat`` pipeline: body bytes -> unified events -> final result.

Workloads (4 KiB chunks, as a socket delivers them):

* ``openai-chat``: the foundation benches' chat-like stream (``workloads.py``:
  20,000 text chunks, ASCII, CJK and emoji, then ``[DONE]``);
* ``openai-chat-tools``: generated here, 20,000 chunks of which most are
  tool-call argument fragments of 16 parallel calls, interleaved, plus a text
  preamble, a usage chunk and ``[DONE]`` (the shape of OpenAI's parallel tool
  calls, API reference checked 2026-11-29).

Implementations, in the same run:

* ``streamwire``: ``sw.stream("openai-chat")``, ``feed`` per chunk, ``close``,
  ``result``. Chunks of the adapter's fast-path shapes (``SHAPES``: one
  running choice's text, one arguments fragment of an open call) are matched
  in Rust while framing and never become Python dicts; any other chunk is
  decoded by ``streamwire/_json.py`` (orjson when installed) for the general
  path;
* ``streamwire-stdlib-json``: the same with the standard library's decoder
  forced for the general path, i.e. streamwire with no optional package
  installed;
* ``streamwire-general-path``: the fast path off (``shapes = None``): every
  chunk through ``json.loads`` (orjson) and the general path, as before the
  Rust matcher; kept to show what the fast path buys, in the same run;
* ``openai-sdk``: what ``client.chat.completions.create(stream=True)`` does
  with a response, plus its stream-accumulation helper: the SDK's
  ``SSEDecoder.iter_bytes``, ``sse.json()`` (``json.loads``), the legacy
  ``error`` check, ``construct_type(ChatCompletionChunk)``, then
  ``ChatCompletionStreamState.handle_chunk`` and ``get_final_completion``;
* ``naive``: a ``bytes.find(b"\\n\\n")`` splitter, ``orjson.loads`` and a
  plain-dict accumulator: fast and not correct (no CR/CRLF, no errors, no
  statuses, no caps), kept as the speed reference.

Each run checks its output (final text, and every call's id, name and
arguments) against what the generator put in, and records ``correct`` in
``extra_info``; streamwire must be correct. Throughput is SSE events per
second (the same count for every implementation).

Run once each as tests: ``pytest benches/bench_pipeline_chat.py``. Measure
with pytest-benchmark (``--benchmark-enable``), or print the ratios against
the issue's targets (>= 50x the SDK path, >= 1.5x naive) with
``python benches/bench_pipeline_chat.py [rounds]``: the implementations take
turns round by round (a shared machine's changing load then slows all of them
alike) and each keeps its best round. ``--breakdown [rounds]`` prints the
cost of each layer in ns per event (the profile behind the fast path).
"""

from __future__ import annotations

import json
import random
import sys
from collections.abc import Callable, Sequence
from functools import cache, partial
from typing import Any

import orjson
import pytest

import streamwire as sw
from pipeline import CHUNK, Load, print_rates, replaced, stream_result
from rounds import bench_case, best_times, json_decoder
from streamwire import _json
from streamwire.protocols import openai_chat
from workloads import PREAMBLE, cut, tool_arguments, workload

Output = tuple[str, list[tuple[str | None, str | None, str]]]


def _chat_load() -> Load:
    load = workload("openai-chat")
    text = []
    for data in load.expected:
        if data != "[DONE]":
            for choice in json.loads(data)["choices"]:
                text.append(choice["delta"].get("content") or "")
    return Load("openai-chat", load.wire, ("".join(text), []), load.wire.count(b"\n\n"))


def _tools_load(events: int = 20_000, calls: int = 16) -> Load:
    rng = random.Random(20261129)
    base = {
        "id": "chatcmpl-benchtools",
        "object": "chat.completion.chunk",
        "created": 1764412800,
        "model": "gpt-4o-2024-08-06",
        "system_fingerprint": "fp_bench",
    }

    def frame(choices: list[Any], **extra: Any) -> bytes:
        body = {**base, "choices": choices, **extra}
        return (
            b"data: "
            + json.dumps(body, ensure_ascii=False, separators=(",", ":")).encode()
            + b"\n\n"
        )

    def delta(d: dict[str, Any], finish: str | None = None) -> bytes:
        return frame([{"index": 0, "delta": d, "logprobs": None, "finish_reason": finish}])

    out = [delta({"role": "assistant", "content": ""})] + [delta({"content": t}) for t in PREAMBLE]
    specs = []
    for i in range(calls):
        args = json.dumps(tool_arguments(rng, i), ensure_ascii=False)
        specs.append((f"call_bench_{i:02d}", f"tool_{i % 4}", args))
    budget = events - len(out) - calls - 3
    pieces = [cut(rng, args, budget // calls) for _, _, args in specs]
    for i, (call_id, name, _) in enumerate(specs):
        head = {
            "index": i,
            "id": call_id,
            "type": "function",
            "function": {"name": name, "arguments": ""},
        }
        out.append(delta({"tool_calls": [head]}))
    cursors = [0] * calls
    while any(c < len(p) for c, p in zip(cursors, pieces, strict=True)):
        i = rng.choice([k for k in range(calls) if cursors[k] < len(pieces[k])])
        fragment = {"index": i, "function": {"arguments": pieces[i][cursors[i]]}}
        cursors[i] += 1
        out.append(delta({"tool_calls": [fragment]}))
    out.append(delta({}, "tool_calls"))
    usage = {"prompt_tokens": 812, "completion_tokens": 9000, "total_tokens": 9812}
    out.append(frame([], usage=usage))
    out.append(b"data: [DONE]\n\n")
    wire = b"".join(out)
    return Load("openai-chat-tools", wire, ("".join(PREAMBLE), specs), wire.count(b"\n\n"))


@cache
def load(name: str) -> Load:
    return _chat_load() if name == "openai-chat" else _tools_load()


# --- implementations -----------------------------------------------------------------


def run_streamwire(chunks: Sequence[bytes]) -> Output:
    result = stream_result("openai-chat", chunks)
    return result.text, [(c.id, c.name, c.raw_arguments) for c in result.tool_calls]


def run_streamwire_stdlib(chunks: Sequence[bytes]) -> Output:
    with replaced(_json._loads_stdlib, (openai_chat, "loads")):
        return run_streamwire(chunks)


def run_streamwire_general(chunks: Sequence[bytes]) -> Output:
    with replaced(None, (openai_chat.OpenAIChatStream, "shapes")):
        return run_streamwire(chunks)


def run_openai_sdk(chunks: Sequence[bytes]) -> Output:
    from openai._models import construct_type
    from openai._streaming import SSEDecoder
    from openai._utils import is_mapping
    from openai.lib.streaming.chat._completions import ChatCompletionStreamState
    from openai.types.chat import ChatCompletionChunk

    state: ChatCompletionStreamState[Any] = ChatCompletionStreamState()
    for sse in SSEDecoder().iter_bytes(iter(chunks)):
        if sse.data.startswith("[DONE]"):
            break
        data = sse.json()
        if is_mapping(data) and data.get("error"):
            raise RuntimeError(data["error"])
        chunk = construct_type(type_=ChatCompletionChunk, value=data)
        for _ in state.handle_chunk(chunk):  # type: ignore[arg-type]
            pass
    message = state.get_final_completion().choices[0].message
    calls = [(c.id, c.function.name, c.function.arguments) for c in message.tool_calls or ()]
    return message.content or "", calls


def run_naive(chunks: Sequence[bytes]) -> Output:
    buffer = b""
    text: list[str] = []
    calls: dict[int, dict[str, Any]] = {}
    for chunk in chunks:
        buffer += chunk
        start = 0
        while (end := buffer.find(b"\n\n", start)) >= 0:
            event = buffer[start:end]
            start = end + 2
            if not event.startswith(b"data: ") or event == b"data: [DONE]":
                continue
            for choice in orjson.loads(event[6:])["choices"]:
                delta = choice.get("delta") or {}
                if content := delta.get("content"):
                    text.append(content)
                for fragment in delta.get("tool_calls") or ():
                    slot = calls.setdefault(
                        fragment["index"], {"id": None, "name": None, "args": []}
                    )
                    slot["id"] = fragment.get("id") or slot["id"]
                    function = fragment.get("function") or {}
                    slot["name"] = function.get("name") or slot["name"]
                    if arguments := function.get("arguments"):
                        slot["args"].append(arguments)
        buffer = buffer[start:]
    ordered = [calls[k] for k in sorted(calls)]
    return "".join(text), [(c["id"], c["name"], "".join(c["args"])) for c in ordered]


IMPLEMENTATIONS: dict[str, Callable[[Sequence[bytes]], Output]] = {
    "streamwire": run_streamwire,
    "streamwire-stdlib-json": run_streamwire_stdlib,
    "streamwire-general-path": run_streamwire_general,
    "openai-sdk": run_openai_sdk,
    "naive": run_naive,
}
WORKLOADS = ("openai-chat", "openai-chat-tools")


@pytest.mark.parametrize("impl_name", list(IMPLEMENTATIONS))
@pytest.mark.parametrize("workload_name", WORKLOADS)
def test_pipeline_chat(benchmark: Any, workload_name: str, impl_name: str) -> None:
    stats: dict[str, int] = {}
    if impl_name.startswith("streamwire"):
        stats = dict(_streamwire_stats(workload_name))
        if impl_name == "streamwire-general-path":
            stats["shape_matched_events"] = 0
    run = IMPLEMENTATIONS[impl_name]
    data = load(workload_name)
    bench_case(benchmark, data, workload_name, impl_name, run, chunk_size=CHUNK, **stats)


@cache
def _streamwire_stats(name: str) -> dict[str, int]:
    """Events the fast path's shapes match (a few then fall back), and the peak buffer."""
    data = load(name)
    decoder = sw.SseDecoder()
    matched = sum(
        type(item) is tuple
        for chunk in data.chunks
        for item in decoder.feed_matched(chunk, openai_chat.SHAPES)
    )
    return {
        "shape_matched_events": matched,
        "peak_buffer_bytes": stream_result("openai-chat", data.chunks).metrics.peak_buffered_bytes,
    }


def breakdown(rounds: int) -> None:
    """Prints where streamwire's time goes, in ns per event, layer by layer.

    Each line adds one step to the one above it, so the differences are the
    steps' costs: SSE framing into ``SseEvent`` objects; reading each
    ``.data`` (a ``str``); decoding it as JSON; and, for the fast path,
    framing with the shapes matched in Rust (a tuple of captures instead of an
    ``SseEvent``), then the whole pipeline with the fast path on and off.
    """
    shapes = openai_chat.SHAPES
    loads = _json.loads

    def framing(chunks: Sequence[bytes]) -> None:
        decoder = sw.SseDecoder()
        for chunk in chunks:
            decoder.feed(chunk)

    def framing_data(chunks: Sequence[bytes]) -> None:
        decoder = sw.SseDecoder()
        for chunk in chunks:
            for event in decoder.feed(chunk):
                event.data  # noqa: B018 - the str is built on first access

    def framing_json(chunks: Sequence[bytes]) -> None:
        decoder = sw.SseDecoder()
        for chunk in chunks:
            for event in decoder.feed(chunk):
                try:
                    loads(event.data)
                except ValueError:
                    pass

    def framing_matched(chunks: Sequence[bytes]) -> None:
        decoder = sw.SseDecoder()
        for chunk in chunks:
            decoder.feed_matched(chunk, shapes)

    steps: dict[str, Callable[[Sequence[bytes]], object]] = {
        "framing (SseEvent objects)": framing,
        "  + .data str": framing_data,
        f"  + .data str + JSON ({json_decoder('streamwire')})": framing_json,
        "framing + shapes matched in Rust": framing_matched,
        "whole pipeline, fast path": run_streamwire,
        "whole pipeline, general path": run_streamwire_general,
        "naive reference": run_naive,
    }
    for name in WORKLOADS:
        data = load(name)
        best = best_times({step: partial(fn, data.chunks) for step, fn in steps.items()}, rounds)
        for step, seconds in best.items():
            print(f"{name:18s} {step:36s} {seconds / data.events * 1e9:7.0f} ns/event")


def main(argv: list[str]) -> None:
    """Prints events/s and the ratios to the targets, all implementations in one run.

    The implementations take turns, round by round, and each keeps its best
    round: a machine whose load changes during the run (shared CI runners)
    then slows all of them alike instead of skewing the ratios.
    """
    if argv[:1] == ["--breakdown"]:
        breakdown(int(argv[1]) if len(argv) > 1 else 5)
        return
    rounds = int(argv[0]) if argv else 5
    variants = ("streamwire", "streamwire-stdlib-json", "streamwire-general-path")
    targets = {"openai-sdk": 50.0, "naive": 1.5}
    print_rates([load(n) for n in WORKLOADS], IMPLEMENTATIONS, rounds, targets, variants)


if __name__ == "__main__":
    main(sys.argv[1:])
