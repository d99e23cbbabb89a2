"""The whole ``anthropic`` pipeline: body bytes -> unified events -> final result.

Workloads (4 KiB chunks, as a socket delivers them):

* ``anthropic``: the foundation benches' Anthropic Messages stream
  (``workloads.py``: ``message_start``, a text block of 20,000
  ``text_delta`` events in ASCII, CJK and emoji, ``message_delta``,
  ``message_stop``, each with its ``event:`` line);
* ``anthropic-tools``: generated here, about 20,000 events: a short text
  block, then 16 ``tool_use`` blocks one after the other (Anthropic streams
  blocks sequentially), each input streamed as ``input_json_delta``
  fragments (the first one empty, as the API sends it), then
  ``message_delta`` with ``stop_reason: tool_use`` and ``message_stop``
  (streaming reference checked 2026-11-29).

Implementations, in the same run:

* ``streamwire``: ``sw.stream("anthropic")``, ``feed`` per chunk, ``close``,
  ``result`` (JSON via orjson when installed, see ``streamwire/_json.py``);
* ``streamwire-stdlib-json``: the same with the standard library's decoder
  forced, i.e. streamwire with no optional package installed;
* ``anthropic-sdk``: what ``client.messages.stream(...)`` does with a
  response, up to its final message: the SDK's ``SSEDecoder.iter_bytes``, the
  ``Stream.__stream__`` checks (``ping`` skipped, ``error`` raised),
  ``sse.json()`` (``json.loads``), ``construct_type(RawMessageStreamEvent)``
  (the client's ``_process_response_data``), then, as
  ``MessageStream.__stream__`` does per event,
  ``lib.streaming._messages.accumulate_event`` and ``build_events`` (the
  SDK's own events, as streamwire builds its own);
* ``naive``: a ``bytes.find(b"\\n\\n")`` splitter, ``orjson.loads`` of the
  ``data:`` line and a plain-dict accumulator: fast and not correct (no CR /
  CRLF, no errors, no statuses, no caps, no conflicts), kept as the speed
  reference.

Each run checks its output (final text, and every call's id, name and parsed
input) against what the generator put in, and records ``correct`` in
``extra_info``; streamwire must be correct. Throughput is SSE events per
second (the same count for every implementation).

Run once each as tests: ``pytest benches/bench_pipeline_anthropic.py``.
Measure with pytest-benchmark (``--benchmark-enable``), or print the ratios
against the issue's targets (>= 20x the SDK path, >= 1.5x naive) with
``python benches/bench_pipeline_anthropic.py``; ``--profile`` prints a
cProfile of streamwire on each workload.
"""

from __future__ import annotations

import json
import random
import sys
from collections.abc import Callable, Iterable, Sequence
from functools import cache
from typing import Any

import orjson
import pytest

from pipeline import CHUNK, Load, print_rates, replaced, stream_result
from rounds import bench_case
from streamwire import _json
from streamwire.protocols import anthropic, anthropic_machine
from workloads import PREAMBLE, cut, tool_arguments, workload

Call = tuple[str | None, str | None, Any]
Output = tuple[str, list[Call]]


def _text_load() -> Load:
    load = workload("anthropic")
    text = []
    for data in load.expected:
        event = json.loads(data)
        if event["type"] == "content_block_delta":
            text.append(event["delta"]["text"])
    return Load("anthropic", load.wire, ("".join(text), []), load.wire.count(b"\n\n"))


def _tools_load(events: int = 20_000, calls: int = 16) -> Load:
    rng = random.Random(20261129)

    def frame(obj: dict[str, Any]) -> bytes:
        data = json.dumps(obj, ensure_ascii=False, separators=(",", ":"))
        return f"event: {obj['type']}\ndata: {data}\n\n".encode()

    def delta(index: int, body: dict[str, Any]) -> bytes:
        return frame({"type": "content_block_delta", "index": index, "delta": body})

    message = {
        "id": "msg_01benchtools",
        "type": "message",
        "role": "assistant",
        "model": "claude-sonnet-4-5-20250929",
        "content": [],
        "stop_reason": None,
        "stop_sequence": None,
        "usage": {"input_tokens": 812, "output_tokens": 1},
    }
    out = [frame({"type": "message_start", "message": message})]
    out.append(
        frame(
            {
                "type": "content_block_start",
                "index": 0,
                "content_block": {"type": "text", "text": ""},
            }
        )
    )
    out.append(frame({"type": "ping"}))
    out += [delta(0, {"type": "text_delta", "text": t}) for t in PREAMBLE]
    out.append(frame({"type": "content_block_stop", "index": 0}))
    specs: list[Call] = []
    budget = (events - len(out) - 2) // calls - 3  # start, empty fragment, stop
    for i in range(calls):
        args = tool_arguments(rng, i)
        text = json.dumps(args, ensure_ascii=False)
        call_id, name, index = f"toolu_bench_{i:02d}", f"tool_{i % 4}", i + 1
        specs.append((call_id, name, args))
        block = {"type": "tool_use", "id": call_id, "name": name, "input": {}}
        out.append(frame({"type": "content_block_start", "index": index, "content_block": block}))
        out.append(delta(index, {"type": "input_json_delta", "partial_json": ""}))
        for piece in cut(rng, text, budget):
            out.append(delta(index, {"type": "input_json_delta", "partial_json": piece}))
        out.append(frame({"type": "content_block_stop", "index": index}))
    end = {"stop_reason": "tool_use", "stop_sequence": None}
    out.append(frame({"type": "message_delta", "delta": end, "usage": {"output_tokens": 9000}}))
    out.append(frame({"type": "message_stop"}))
    wire = b"".join(out)
    return Load("anthropic-tools", wire, ("".join(PREAMBLE), specs), wire.count(b"\n\n"))


@cache
def load(name: str) -> Load:
    return _text_load() if name == "anthropic" else _tools_load()


# --- implementations -----------------------------------------------------------------


def run_streamwire(chunks: Sequence[bytes]) -> Output:
    result = stream_result("anthropic", chunks)
    return result.text, [(c.id, c.name, c.arguments) for c in result.tool_calls]


def run_streamwire_stdlib(chunks: Sequence[bytes]) -> Output:
    with replaced(_json._loads_stdlib, (anthropic, "loads"), (anthropic_machine, "loads")):
        return run_streamwire(chunks)


def anthropic_sdk_snapshot(chunks: Iterable[bytes]) -> Any:
    """The final message ``client.messages.stream(...)`` builds from a body."""
    from anthropic._models import construct_type
    from anthropic._streaming import SSEDecoder
    from anthropic.lib.streaming._messages import accumulate_event, build_events
    from anthropic.types import RawMessageStreamEvent

    snapshot: Any = None
    json_bufs: dict[int, bytes] = {}
    for sse in SSEDecoder().iter_bytes(iter(chunks)):
        # Stream.__stream__
        if sse.event == "ping" or sse.event is None:
            continue
        if sse.event == "error":
            raise RuntimeError(sse.data)
        if not sse.data:
            continue
        event = construct_type(type_=RawMessageStreamEvent, value=sse.json())
        # MessageStream.__stream__
        if snapshot is None and event.type != "message_start":
            continue
        snapshot = accumulate_event(event=event, current_snapshot=snapshot, json_bufs=json_bufs)
        for _ in build_events(event=event, message_snapshot=snapshot):
            pass
    return snapshot


def run_anthropic_sdk(chunks: Sequence[bytes]) -> Output:
    snapshot = anthropic_sdk_snapshot(chunks)
    text = "".join(b.text for b in snapshot.content if b.type == "text")
    calls = [(b.id, b.name, b.input) for b in snapshot.content if b.type == "tool_use"]
    return text, calls


def run_naive(chunks: Sequence[bytes]) -> Output:
    buffer = b""
    blocks: dict[int, dict[str, Any]] = {}
    for chunk in chunks:
        buffer += chunk
        start = 0
        while (end := buffer.find(b"\n\n", start)) >= 0:
            event = buffer[start:end]
            start = end + 2
            at = event.find(b"data: ")
            if at < 0:
                continue
            obj = orjson.loads(event[at + 6 :])
            kind = obj["type"]
            if kind == "content_block_delta":
                delta = obj["delta"]
                block = blocks[obj["index"]]
                if delta["type"] == "text_delta":
                    block["parts"].append(delta["text"])
                elif delta["type"] == "input_json_delta":
                    block["parts"].append(delta["partial_json"])
            elif kind == "content_block_start":
                blocks[obj["index"]] = {**obj["content_block"], "parts": []}
        buffer = buffer[start:]
    text = "".join("".join(b["parts"]) for b in blocks.values() if b["type"] == "text")
    calls = [
        (b["id"], b["name"], orjson.loads("".join(b["parts"]) or "{}"))
        for b in blocks.values()
        if b["type"] == "tool_use"
    ]
    return text, calls


IMPLEMENTATIONS: dict[str, Callable[[Sequence[bytes]], Output]] = {
    "streamwire": run_streamwire,
    "streamwire-stdlib-json": run_streamwire_stdlib,
    "anthropic-sdk": run_anthropic_sdk,
    "naive": run_naive,
}
WORKLOADS = ("anthropic", "anthropic-tools")


@pytest.mark.parametrize("impl_name", list(IMPLEMENTATIONS))
@pytest.mark.parametrize("workload_name", WORKLOADS)
def test_pipeline_anthropic(benchmark: Any, workload_name: str, impl_name: str) -> None:
    run = IMPLEMENTATIONS[impl_name]
    bench_case(benchmark, load(workload_name), workload_name, impl_name, run, chunk_size=CHUNK)


def _profile() -> None:
    import cProfile
    import pstats

    for name in WORKLOADS:
        data = load(name)
        profiler = cProfile.Profile()
        profiler.enable()
        run_streamwire(data.chunks)
        profiler.disable()
        print(f"--- {name}")
        pstats.Stats(profiler).sort_stats("tottime").print_stats(12)


def main(argv: list[str]) -> None:
    """Prints events/s and the ratios to the targets, all implementations in one run.

    Rounds are interleaved (each round times every implementation once) and
    the best round of each counts, so that a load change on the machine
    affects every implementation alike. Times are the process's CPU time
    (``time.process_time``): the code is single-threaded, and on a shared
    machine wall time measures the neighbours too.
    """
    if argv and argv[0] == "--profile":
        _profile()
        return
    rounds = int(argv[0]) if argv else 5
    targets = {"anthropic-sdk": 20.0, "naive": 1.5}
    print_rates([load(n) for n in WORKLOADS], IMPLEMENTATIONS, rounds, targets)


if __name__ == "__main__":
    main(sys.argv[1:])
