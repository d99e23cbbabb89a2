"""The release gate's groups (``gate.py``), built from the benches' own workloads and runs.

Each group is one workload of a bench module, its implementations exactly as
that module times and checks them, the ratios docs/performance.md reports
(with the targets of the issue that set them), and streamwire's peak memory on it:
SSE framing (``bench_sse.py``; each workload's ``sse-floor`` group times the
str floor against httpx-sse apart from it), AWS EventStream framing
(``bench_eventstream.py``), the pipeline of every protocol
(``bench_pipeline_*.py``), and the pipelines on streams shaped as the
providers send them today (``bench_pipeline_shapes.py``: Gemini SSE and
JSON with changing usage snapshots and a signed function call, a Realtime
voice session, a Live session of binary frames with a tool-call turn). The
quick mode leaves out the SDK paths (seconds each) and the 1-byte and 64 KiB
chunkings.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from functools import partial
from typing import Any

import bench_eventstream
import bench_pipeline_anthropic
import bench_pipeline_bedrock
import bench_pipeline_chat
import bench_pipeline_gemini
import bench_pipeline_responses
import bench_pipeline_shapes
import bench_pipeline_websocket
import bench_sse
import streamwire as sw
from group import Group, Ratio, peak_memory
from rounds import release_free_memory
from workloads import CHUNKINGS, ES_CHUNKINGS, WORKLOADS, chunked, es_chunked

#: The SDK paths: reported as ``vs <name>`` with the other peers, left out of the quick mode.
SDKS = ("openai-sdk", "anthropic-sdk", "botocore", "google-genai")


def largest_event(wire: bytes) -> int:
    """The largest SSE event of a body, blank line included."""
    sep = b"\r\n\r\n" if b"\r\n\r\n" in wire[:4096] else b"\n\n"
    return max(len(part) + len(sep) for part in wire.split(sep))


def _peers(base: str, impls: Sequence[str], targets: dict[str, float]) -> list[Ratio]:
    return [Ratio(f"vs {p}", p, base, targets.get(p)) for p in impls if p != base]


def sse_groups(mode: str) -> Iterator[Group]:
    for name in WORKLOADS:
        for chunking in CHUNKINGS:
            if chunking.prefix is not None and (mode == "quick" or name == "one-8mib-event"):
                continue
            # The 8 MiB event's time is mostly page faults: its ratios spread by
            # more than 2x between quick runs (no useful margin); the full gate
            # keeps it, with its peak memory.
            if mode == "quick" and (chunking.label != "4KiB" or name == "one-8mib-event"):
                continue
            load, chunks = chunked(name, chunking)
            impls: dict[str, bench_sse.Implementation] = {}
            for impl_name, cls in bench_sse.IMPLEMENTATIONS.items():
                try:
                    impls[impl_name] = cls()
                except ModuleNotFoundError:
                    continue
            runs = {n: partial(impl.decode, chunks) for n, impl in impls.items()}

            def check(n: str, events: Any, impls: Any = impls, load: Any = load) -> bool:
                return bench_sse._check(impls[n], events, load.expected)

            # The +data row's target is stated against the str floor (a group of
            # its own, sse-floor/...: readme.py's "+data / str floor").
            ratios = _peers("streamwire", list(impls), {})
            ratios += [
                Ratio(f"+data vs {p}", p, "streamwire+data")
                for p in impls
                if not p.startswith("streamwire")
            ]
            largest = max(
                b - a for a, b in zip((0, *load.event_ends), load.event_ends, strict=False)
            )

            def memory(
                chunks: Any = chunks, unit: int = max(largest, chunking.size)
            ) -> tuple[int, int]:
                decoder = sw.SseDecoder()
                steps = [partial(decoder.feed, chunk) for chunk in chunks]
                return peak_memory(steps, lambda: decoder.peak_buffered_bytes), unit

            yield Group(
                "sse",
                f"{name}/{chunking.label}",
                "events",
                len(load.expected),
                runs,
                check,
                ratios,
                memory,
                {"bytes": len(load.wire)},
                # Each run from the same allocator state (see release_free_memory).
                settle=release_free_memory if name == "one-8mib-event" else None,
            )
            if "httpx-sse" in impls and name != "one-8mib-event":
                yield _str_floor_group(f"{name}/{chunking.label}", load, runs["httpx-sse"])


def _str_floor_group(name: str, load: Any, httpx_sse: Callable[[], Any]) -> Group:
    """The str floor (``bench_sse.STR_FLOOR``) against httpx-sse on one SSE
    workload, in a group of its own: its allocations then leave the SSE
    group's implementations alone (a single 8 MiB str is page faults, so
    that workload has none)."""
    datas = tuple(data.encode() for data in load.expected)
    runs = {"httpx-sse": httpx_sse, bench_sse.STR_FLOOR: partial(bench_sse.str_floor, datas)}

    def check(n: str, out: Any) -> bool:
        if n == bench_sse.STR_FLOOR:
            return list(out) == list(load.expected)
        return bench_sse._check(bench_sse.HttpxSse(), out, load.expected)

    ratio = Ratio("str floor vs httpx-sse", "httpx-sse", bench_sse.STR_FLOOR)
    return Group("sse-floor", name, "events", len(load.expected), runs, check, [ratio])


def eventstream_groups(mode: str) -> Iterator[Group]:
    cases = [("bedrock-converse", c) for c in ES_CHUNKINGS]
    if mode == "quick":
        cases = [c for c in cases if c[1].label in ("4KiB", "whole")]
    for name, chunking in cases:
        load, chunks = es_chunked(name, chunking)
        impls: dict[str, bench_eventstream.Implementation] = {}
        for impl_name, cls in bench_eventstream.IMPLEMENTATIONS.items():
            try:
                impls[impl_name] = cls()
            except ModuleNotFoundError:
                continue
        runs = {n: partial(impl.decode, chunks) for n, impl in impls.items()}

        def check(n: str, messages: Any, impls: Any = impls, load: Any = load) -> bool:
            return bench_eventstream._check(impls[n], messages, load)

        target = {"botocore": 20.0} if chunking.label == "4KiB" else {}

        def memory(
            chunks: Any = chunks, unit: int = max(load.largest_message, len(chunks[0]))
        ) -> tuple[int, int]:
            decoder = sw.EventStreamDecoder()
            steps = [partial(decoder.feed, chunk) for chunk in chunks]
            return peak_memory(steps, lambda: decoder.peak_buffered_bytes), unit

        yield Group(
            "eventstream",
            f"{name}/{chunking.label}",
            "messages",
            len(load.expected),
            runs,
            check,
            _peers("streamwire", list(impls), target),
            memory,
            {"bytes": len(load.wire)},
        )


def _stream_memory(
    protocol: str, chunks: Sequence[bytes], largest: int
) -> Callable[[], tuple[int, int]]:
    def memory() -> tuple[int, int]:
        stream = sw.stream(protocol)
        steps = [partial(stream.feed, chunk) for chunk in chunks]
        peak = peak_memory(steps, lambda: stream.result.metrics.peak_buffered_bytes)
        return peak, max(largest, max(len(c) for c in chunks))

    return memory


#: (module, protocol, workload, targets: peer -> x streamwire)
PIPELINES: list[tuple[Any, str, str, dict[str, float]]] = [
    (bench_pipeline_chat, "openai-chat", "openai-chat", {"openai-sdk": 50.0, "naive": 1.5}),
    (bench_pipeline_chat, "openai-chat", "openai-chat-tools", {"openai-sdk": 50.0, "naive": 1.5}),
    (
        bench_pipeline_responses,
        "openai-responses",
        "openai-responses",
        {"openai-sdk": 20.0, "naive": 1.5},
    ),
    (bench_pipeline_anthropic, "anthropic", "anthropic", {"anthropic-sdk": 20.0, "naive": 1.5}),
    (
        bench_pipeline_anthropic,
        "anthropic",
        "anthropic-tools",
        {"anthropic-sdk": 20.0, "naive": 1.5},
    ),
]


def _framing(chunks: Sequence[bytes]) -> None:
    decoder = sw.SseDecoder()
    for chunk in chunks:
        decoder.feed(chunk)


def pipeline_groups(mode: str) -> Iterator[Group]:
    for module, protocol, name, targets in PIPELINES:
        data = module.load(name)
        impls = {
            n: fn for n, fn in module.IMPLEMENTATIONS.items() if not (mode == "quick" and n in SDKS)
        }
        runs: dict[str, Callable[[], Any]] = {
            n: partial(fn, data.chunks) for n, fn in impls.items()
        }
        ratios = _peers("streamwire", list(impls), targets)
        if name == "openai-chat":
            # The cost of being correct: the pipeline against framing the same bytes.
            runs["framing"] = partial(_framing, data.chunks)
            ratios.append(Ratio("pipeline / framing", "streamwire", "framing", 3.0, True))

        def check(n: str, output: Any, data: Any = data) -> bool:
            return n == "framing" or output == data.expected

        yield Group(
            "pipeline",
            name,
            "events",
            data.events,
            runs,
            check,
            ratios,
            _stream_memory(protocol, data.chunks, largest_event(data.wire)),
        )
    yield from _gemini_groups(mode)
    yield from _bedrock_groups(mode)
    yield from _websocket_groups(mode)
    yield from _shaped_groups(mode)


def _gemini_groups(mode: str) -> Iterator[Group]:
    sse, array = bench_pipeline_gemini.load("gemini"), bench_pipeline_gemini.load("gemini-json")
    runs: dict[str, Callable[[], Any]] = {
        n: partial(fn, sse.chunks)
        for n, fn in bench_pipeline_gemini.IMPLEMENTATIONS.items()
        if not (mode == "quick" and n in SDKS)
    }
    runs["streamwire-json"] = partial(bench_pipeline_gemini.run_streamwire_json, array.chunks)

    def check(n: str, output: Any) -> bool:
        return bool(output == sse.expected)

    ratios = _peers("streamwire", [n for n in runs if n != "streamwire-json"], {"naive": 1.5})
    ratios.append(Ratio("json vs naive", "naive", "streamwire-json", 1.5))
    yield Group(
        "pipeline",
        "gemini",
        "events",
        sse.events,
        runs,
        check,
        ratios,
        _stream_memory("gemini", sse.chunks, largest_event(sse.wire)),
    )
    largest = max(len(e) for e in bench_pipeline_gemini.workload("gemini").expected) + 5
    yield Group(
        "pipeline",
        "gemini-json",
        "elements",
        array.events,
        {"streamwire-json": runs["streamwire-json"]},
        check,
        [],
        _stream_memory("gemini-json", array.chunks, largest),
    )


def _bedrock_groups(mode: str) -> Iterator[Group]:
    data = bench_pipeline_bedrock.load()
    impls = {
        n: fn
        for n, fn in bench_pipeline_bedrock.IMPLEMENTATIONS.items()
        if not (mode == "quick" and n in SDKS)
    }
    runs: dict[str, Callable[[], Any]] = {n: partial(fn, data.chunks) for n, fn in impls.items()}

    def check(n: str, output: Any) -> bool:
        return bool(output == data.expected)

    largest = bench_pipeline_bedrock.es_workload(bench_pipeline_bedrock.WORKLOAD).largest_message
    yield Group(
        "pipeline",
        "bedrock-converse",
        "messages",
        data.events,
        runs,
        check,
        _peers("streamwire", list(impls), {"botocore": 15.0}),
        _stream_memory("bedrock-converse", data.chunks, largest),
    )


def _websocket_groups(mode: str) -> Iterator[Group]:
    ws = bench_pipeline_websocket
    for name in ws.WORKLOADS:
        messages, expected = ws.load(name)
        impls = {
            n: fn
            for n, fn in ws.IMPLEMENTATIONS.items()
            if ws.runs_on(n, name) and not (mode == "quick" and n in SDKS)
        }
        runs: dict[str, Callable[[], Any]] = {
            n: partial(fn, name, messages) for n, fn in impls.items()
        }

        def check(n: str, output: Any, expected: Any = expected) -> bool:
            return bool(output == expected)

        def memory(name: str = name, messages: Any = messages) -> tuple[int, int]:
            session = sw.stream(name)
            steps = [partial(session.feed_message, m) for m in messages]
            return peak_memory(steps, lambda: 0), max(len(m.encode()) for m in messages)

        yield Group(
            "pipeline",
            name,
            "messages",
            len(messages),
            runs,
            check,
            _peers("streamwire", list(impls), {"naive": SHAPED_TARGETS.get(name, 1.5)}),
            memory,
        )


#: streamwire's target against the naive reader on a provider-shaped
#: workload, where it is not the 1.5x of the others: the Anthropic pipeline
#: with thinking, pings, tools and cache usage is held to 3x.
SHAPED_TARGETS = {"anthropic-thinking-tools": 3.0}


def _shaped_groups(mode: str) -> Iterator[Group]:
    """The pipelines on the provider-shaped streams (``bench_pipeline_shapes.py``)."""
    shapes = bench_pipeline_shapes
    for name in shapes.WORKLOADS:
        data = shapes.load(name)
        impls = {
            n: fn
            for n, fn in shapes.IMPLEMENTATIONS[name].items()
            if not (mode == "quick" and n in SDKS)
        }
        runs: dict[str, Callable[[], Any]] = {n: partial(fn, data.units) for n, fn in impls.items()}

        def check(n: str, output: Any, data: Any = data) -> bool:
            return bool(output == data.expected)

        if data.protocol in ("gemini", "gemini-json", "anthropic"):
            memory = _stream_memory(data.protocol, data.units, data.largest)
        else:

            def memory(data: Any = data) -> tuple[int, int]:
                session = sw.stream(data.protocol)
                steps = [partial(session.feed_message, m) for m in data.units]
                return peak_memory(steps, lambda: 0), data.largest

        yield Group(
            "pipeline",
            name,
            "messages" if data.protocol in ("openai-realtime", "gemini-live") else "events",
            data.events,
            runs,
            check,
            _peers("streamwire", list(impls), {"naive": SHAPED_TARGETS.get(name, 1.5)}),
            memory,
        )


def all_groups(mode: str) -> Iterator[Group]:
    yield from sse_groups(mode)
    yield from eventstream_groups(mode)
    yield from pipeline_groups(mode)
