"""Re-encoding unified events into every target protocol: throughput and per-event latency.

Workloads (``workloads.py``), decoded once, outside the timing, by their own
adapter fed 4 KiB chunks (as a socket delivers them); the encoder is then fed
exactly the event list of each ``feed`` call, as a gateway does:

* ``openai-chat``: the chat-like stream (20,000 chunks of text in ASCII, CJK
  and emoji, ``finish_reason``, ``[DONE]``);
* ``anthropic``: the anthropic-like stream (``message_start``, 20,000
  ``text_delta`` events, ``message_delta``, ``message_stop``);
* ``anthropic-tools``: ``bench_pipeline_anthropic.py``'s tool workload (a short
  text, then 16 ``tool_use`` blocks whose inputs stream as ~20,000
  ``input_json_delta`` fragments).

Targets: every encoder (``sw.known_encoders()``): ``openai-chat``,
``openai-responses``, ``anthropic``, ``gemini``. Throughput is unified events
re-encoded per second (``feed`` per source chunk, then ``close``). Each run's
output is checked once, outside the timing: the target's own adapter reads it
back and must give the source's text and calls (``correct`` in
``extra_info``). ``naive-dumps`` (targets ``openai-chat`` and ``anthropic``,
text workloads only) is the speed reference: one ``json.dumps`` of a dict per
event, framed by hand; not correct (no calls, no usage, no errors, no
endings), like the decode benches' naive references.

Latency: the time from an upstream event's arrival to its re-encoded bytes:
``test_latency`` feeds each SSE event's bytes of a workload alone to the
source adapter and its unified events to the encoder, times the two calls
together, records the median and the 99th percentile (ns) in ``extra_info``,
and asserts that every event with content gave its bytes back from its own
call (no added buffering; Gemini holds a call's fragments until the call
completes, as its grammar requires).

Run once each as tests: ``pytest benches/bench_translate.py``. Measure with
pytest-benchmark (``--benchmark-enable``), or print events/s, the cost beside
decoding, and the latencies with ``python benches/bench_translate.py``.
"""

from __future__ import annotations

import json
import statistics
import sys
import time
from collections.abc import Callable, Sequence
from functools import cache
from typing import Any

import pytest

import streamwire as sw
from bench_pipeline_anthropic import load as anthropic_load
from workloads import workload

CHUNK = 4096
TARGETS = sw.known_encoders()
WORKLOADS = ("openai-chat", "anthropic", "anthropic-tools")
Groups = tuple[tuple[sw.Event, ...], ...]


class Source:
    """A workload decoded by its adapter: the event list of each 4 KiB feed."""

    def __init__(self, name: str) -> None:
        self.name = name
        self.protocol = "openai-chat" if name == "openai-chat" else "anthropic"
        wire = anthropic_load(name).wire if name == "anthropic-tools" else workload(name).wire
        self.chunks = tuple(wire[i : i + CHUNK] for i in range(0, len(wire), CHUNK))
        #: The wire cut after each SSE event (each one's bytes, as it arrives).
        self.sse_events = tuple(part + b"\n\n" for part in wire.split(b"\n\n")[:-1])
        adapter = sw.stream(self.protocol)
        groups = [tuple(adapter.feed(chunk)) for chunk in self.chunks]
        groups.append(tuple(adapter.close()))
        self.groups: Groups = tuple(groups)
        self.events = sum(len(g) for g in groups)
        result = adapter.result
        self.expected = (result.text, [(c.id, c.name, c.arguments) for c in result.tool_calls])


@cache
def source(name: str) -> Source:
    return Source(name)


def encode(target: str, src: Source) -> list[bytes]:
    """The timed work: every feed's events re-encoded, then close."""
    enc = sw.encoder(target, source=src.protocol, created=1764412800)
    feed = enc.feed
    out = [feed(group) for group in src.groups]
    out.append(enc.close())
    return out


def naive_dumps(target: str, src: Source) -> list[bytes]:
    """A dict per event through ``json.dumps``, framed by hand (text only)."""
    out = []
    dumps = json.dumps
    for group in src.groups:
        for event in group:
            if type(event) is not sw.TextDelta:
                continue
            if target == "openai-chat":
                obj: dict[str, Any] = {
                    "id": "chatcmpl-x",
                    "object": "chat.completion.chunk",
                    "created": 0,
                    "model": "m",
                    "choices": [
                        {"index": 0, "delta": {"content": event.text}, "finish_reason": None}
                    ],
                }
                out.append(f"data: {dumps(obj, ensure_ascii=False)}\n\n".encode())
            else:
                obj = {
                    "type": "content_block_delta",
                    "index": 0,
                    "delta": {"type": "text_delta", "text": event.text},
                }
                data = dumps(obj, ensure_ascii=False)
                out.append(f"event: content_block_delta\ndata: {data}\n\n".encode())
    return out


def read_back(target: str, pieces: Sequence[bytes]) -> tuple[str, list[Any]]:
    back = sw.stream(target)
    for piece in pieces:
        back.feed(piece)
    back.close()
    result = back.result
    return result.text, [(c.id, c.name, c.arguments) for c in result.tool_calls]


def _correct(target: str, src: Source, pieces: Sequence[bytes]) -> bool:
    text, calls = read_back(target, pieces)
    if target == "gemini":  # Gemini has no provider ids here: compare names and arguments
        return (text, [c[1:] for c in calls]) == (
            src.expected[0],
            [c[1:] for c in src.expected[1]],
        )
    return (text, calls) == src.expected


IMPLEMENTATIONS: dict[str, Callable[[str, Source], list[bytes]]] = {
    "streamwire": encode,
    "naive-dumps": naive_dumps,
}


def _cases() -> list[Any]:
    cases = []
    for name in WORKLOADS:
        for target in TARGETS:
            cases.append(pytest.param(name, target, "streamwire", id=f"{name}->{target}"))
            if name != "anthropic-tools" and target in ("openai-chat", "anthropic"):
                cases.append(
                    pytest.param(name, target, "naive-dumps", id=f"{name}->{target}-naive")
                )
    return cases


@pytest.mark.parametrize(("workload_name", "target", "impl_name"), _cases())
def test_translate(benchmark: Any, workload_name: str, target: str, impl_name: str) -> None:
    src = source(workload_name)
    benchmark.group = f"translate/{workload_name}/{target}"
    pieces = benchmark(IMPLEMENTATIONS[impl_name], target, src)
    correct = _correct(target, src, pieces) if impl_name == "streamwire" else False
    benchmark.extra_info.update(
        implementation=impl_name,
        workload=workload_name,
        target=target,
        events=src.events,
        bytes_out=sum(len(p) for p in pieces),
        correct=correct,
    )
    if impl_name == "streamwire":
        assert correct, f"{workload_name} -> {target} read back wrong"


_CONTENT = (sw.TextDelta, sw.ReasoningDelta, sw.RefusalDelta, sw.ToolCallArgumentsDelta)


def latencies(target: str, src: Source) -> tuple[list[int], int]:
    """Each upstream SSE event's bytes fed alone to the source adapter, its events to
    the encoder: ns from the bytes' arrival to the re-encoded bytes, per event, and
    how many events with content gave no bytes back."""
    adapter = sw.stream(src.protocol)
    enc = sw.encoder(target, source=src.protocol, created=0)
    decode, encode_ = adapter.feed, enc.feed
    clock = time.perf_counter_ns
    times = []
    held = 0
    for piece in src.sse_events:
        start = clock()
        events = decode(piece)
        out = encode_(events)
        times.append(clock() - start)
        if not out and any(_content(target, e) for e in events):
            held += 1
    enc.feed(adapter.close())
    enc.close()
    return times, held


def _content(target: str, event: sw.Event) -> bool:
    """An event the target must put on the wire at once (Gemini sends calls whole)."""
    if target == "gemini" and isinstance(event, sw.ToolCallArgumentsDelta):
        return False
    return isinstance(event, _CONTENT)


def _percentile(values: list[int], q: float) -> int:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("workload_name", WORKLOADS)
def test_latency(benchmark: Any, workload_name: str, target: str) -> None:
    src = source(workload_name)
    benchmark.group = f"translate-latency/{workload_name}"
    times, held = benchmark.pedantic(latencies, args=(target, src), rounds=1, iterations=1)
    benchmark.extra_info.update(
        target=target,
        workload=workload_name,
        sse_events=len(times),
        median_ns=int(statistics.median(times)),
        p99_ns=_percentile(times, 0.99),
        max_ns=max(times),
        held_content_events=held,
    )
    assert held == 0, f"{target} held {held} content events back"


def _decode_seconds(src: Source) -> float:
    start = time.process_time()
    adapter = sw.stream(src.protocol)
    for chunk in src.chunks:
        adapter.feed(chunk)
    adapter.close()
    return time.process_time() - start


def main(argv: list[str]) -> None:
    """Prints events/s per target and workload, beside the decode cost, and latencies.

    Best CPU time (``time.process_time``) of interleaved rounds, as the
    pipeline benches do.
    """
    rounds = int(argv[0]) if argv else 5
    print(f"best CPU time of {rounds} interleaved rounds; events = unified events")
    for name in WORKLOADS:
        src = source(name)
        best = {target: float("inf") for target in TARGETS}
        decode = float("inf")
        for _ in range(rounds):
            decode = min(decode, _decode_seconds(src))
            for target in TARGETS:
                start = time.process_time()
                encode(target, src)
                best[target] = min(best[target], time.process_time() - start)
        print(f"{name}: decode ({src.protocol}) {src.events / decode:>12,.0f} events/s")
        for target in TARGETS:
            rate = src.events / best[target]
            ok = _correct(target, src, encode(target, src))
            times, held = latencies(target, src)
            print(
                f"  -> {target:17s} {rate:>12,.0f} events/s  {best[target] / decode:4.2f}x "
                f"the decode time  latency median {statistics.median(times):,.0f} ns "
                f"p99 {_percentile(times, 0.99):,} ns  held={held} correct={ok}"
            )


if __name__ == "__main__":
    main(sys.argv[1:])
