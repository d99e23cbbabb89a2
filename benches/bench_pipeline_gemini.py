"""The whole ``gemini`` pipeline: body bytes -> unified events -> final result.

Workload (``workloads.py``, ``gemini``): 20,000 SSE events with CRLF
separators, each a ``GenerateContentResponse`` with one text part and a
``usageMetadata`` snapshot, the last with ``finishReason: STOP``; fed in
4 KiB chunks, as a socket delivers them. The same chunks re-serialized as the
JSON array of ``streamGenerateContent`` without ``alt=sse`` (``[e1\\r\\n,\\r\\ne2
...]``) make the ``gemini-json`` workload.

Implementations, in the same run:

* ``streamwire``: ``sw.stream("gemini")``, ``feed`` per chunk, ``close``,
  ``result`` (JSON via orjson when installed, see ``streamwire/_json.py``);
* ``streamwire-stdlib-json``: the same with the standard library's decoder
  forced, i.e. streamwire with no optional package installed;
* ``naive``: a ``bytes.find(b"\\r\\n\\r\\n")`` splitter, ``orjson.loads`` and a
  plain-dict accumulator (text parts joined, last ``usageMetadata``, last
  ``finishReason``): fast and not correct (no LF or CR endings, no comments,
  no errors, no statuses, no calls, no caps), kept as the speed reference.
  There is no SDK stream accumulator for Gemini to compare with
  (google-genai parses chunks but does not accumulate them).
* ``streamwire-json`` (workload ``gemini-json``): ``sw.stream("gemini-json")``
  over the array, for the incremental array scanner's cost.

Each run checks its output (final text, finish reason, final usage figures)
against what the generator put in, and records ``correct`` in
``extra_info``; streamwire must be correct. Throughput is chunks (events or
array elements) per second, the same count for every implementation.

Run once each as tests: ``pytest benches/bench_pipeline_gemini.py``. Measure
with pytest-benchmark (``--benchmark-enable``), or print events/s and the
ratio to the naive reference with ``python benches/bench_pipeline_gemini.py``.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable, Sequence
from functools import cache, partial
from typing import Any

import orjson
import pytest

import streamwire as sw
from rounds import bench_case, best_times
from streamwire import _json
from streamwire.protocols import gemini, gemini_chunks
from workloads import workload

CHUNK = 4096
#: (text, finishReason, (promptTokenCount, candidatesTokenCount, totalTokenCount))
Output = tuple[str, str | None, tuple[int | None, int | None, int | None]]


class Load:
    """A workload's wire bytes in 4 KiB chunks and the output a parser must give."""

    def __init__(self, name: str, wire: bytes, chunks_count: int, expected: Output) -> None:
        self.name = name
        self.wire = wire
        self.chunks = tuple(wire[i : i + CHUNK] for i in range(0, len(wire), CHUNK))
        self.events = chunks_count
        self.expected = expected


def _expected(datas: Sequence[str]) -> Output:
    text = []
    finish = None
    usage: dict[str, Any] = {}
    for data in datas:
        body = json.loads(data)
        for candidate in body["candidates"]:
            text += [part["text"] for part in candidate["content"]["parts"]]
            finish = candidate.get("finishReason", finish)
        usage = body["usageMetadata"]
    figures = (
        usage.get("promptTokenCount"),
        usage.get("candidatesTokenCount"),
        usage.get("totalTokenCount"),
    )
    return "".join(text), finish, figures


@cache
def load(name: str) -> Load:
    source = workload("gemini")
    expected = _expected(source.expected)
    if name == "gemini":
        return Load(name, source.wire, len(source.expected), expected)
    array = "[" + "\r\n,\r\n".join(source.expected) + "]"
    return Load(name, array.encode(), len(source.expected), expected)


# --- implementations -----------------------------------------------------------------


def _run(protocol: str, chunks: Sequence[bytes]) -> Output:
    stream = sw.stream(protocol)
    feed = stream.feed
    for chunk in chunks:
        feed(chunk)
    stream.close()
    result = stream.result
    assert result.status == "completed"
    usage = result.usage
    assert usage is not None and usage.final
    candidates = usage.output_tokens  # no thoughts in this workload
    return (
        result.text,
        result.provider_stop_reason,
        (
            usage.input_tokens,
            candidates,
            usage.total_tokens,
        ),
    )


def run_streamwire(chunks: Sequence[bytes]) -> Output:
    return _run("gemini", chunks)


def run_streamwire_stdlib(chunks: Sequence[bytes]) -> Output:
    modules = (gemini, gemini_chunks)
    previous = [module.loads for module in modules]
    for module in modules:
        module.loads = _json._loads_stdlib
    try:
        return _run("gemini", chunks)
    finally:
        for module, loads in zip(modules, previous, strict=True):
            module.loads = loads


def run_streamwire_json(chunks: Sequence[bytes]) -> Output:
    return _run("gemini-json", chunks)


def run_naive(chunks: Sequence[bytes]) -> Output:
    buffer = b""
    text: list[str] = []
    finish = None
    usage: dict[str, Any] = {}
    for chunk in chunks:
        buffer += chunk
        start = 0
        while (end := buffer.find(b"\r\n\r\n", start)) >= 0:
            event = buffer[start:end]
            start = end + 4
            if not event.startswith(b"data: "):
                continue
            body = orjson.loads(event[6:])
            for candidate in body.get("candidates") or ():
                for part in (candidate.get("content") or {}).get("parts") or ():
                    if "text" in part:
                        text.append(part["text"])
                finish = candidate.get("finishReason") or finish
            usage = body.get("usageMetadata") or usage
        buffer = buffer[start:]
    figures = (
        usage.get("promptTokenCount"),
        usage.get("candidatesTokenCount"),
        usage.get("totalTokenCount"),
    )
    return "".join(text), finish, figures


IMPLEMENTATIONS: dict[str, Callable[[Sequence[bytes]], Output]] = {
    "streamwire": run_streamwire,
    "streamwire-stdlib-json": run_streamwire_stdlib,
    "naive": run_naive,
}
CASES = [("gemini", impl) for impl in IMPLEMENTATIONS] + [("gemini-json", "streamwire-json")]
_ALL = {**IMPLEMENTATIONS, "streamwire-json": run_streamwire_json}


@pytest.mark.parametrize(("workload_name", "impl_name"), CASES)
def test_pipeline_gemini(benchmark: Any, workload_name: str, impl_name: str) -> None:
    run = _ALL[impl_name]
    bench_case(benchmark, load(workload_name), workload_name, impl_name, run, chunk_size=CHUNK)


def main(argv: list[str]) -> None:
    """Prints events/s and the ratio to the naive reference, all in one run.

    Rounds are interleaved (each round times every implementation once) and
    the best round of each counts, so that a load change on the machine
    affects every implementation alike.
    """
    rounds = int(argv[0]) if argv else 5
    decoder = "orjson" if _json.ACCELERATED else "stdlib"
    print(f"json decoder for streamwire: {decoder}; best CPU time of {rounds} interleaved rounds")
    correct = {impl: _ALL[impl](load(name).chunks) == load(name).expected for name, impl in CASES}
    best = best_times(
        {impl: partial(_ALL[impl], load(name).chunks) for name, impl in CASES}, rounds
    )
    for name, impl in CASES:
        events = load(name).events
        rate = events / best[impl]
        per = best[impl] / events * 1e9
        print(
            f"{name:12s} {impl:24s} {rate:>12,.0f} events/s {per:7.0f} ns/event  "
            f"correct={correct[impl]}"
        )
    for impl in ("streamwire", "streamwire-stdlib-json", "streamwire-json"):
        print(f"{impl:24s} {best['naive'] / best[impl]:5.2f}x naive")


if __name__ == "__main__":
    main(sys.argv[1:])
