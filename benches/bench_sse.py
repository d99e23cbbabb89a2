"""SSE framing benchmarks: workload x chunking x implementation.

Every benchmark decodes a whole workload (see ``workloads.py``) and then checks
the output: the event count and the data of every event against the expected
list. ``extra_info`` records ``correct``, ``events``, ``bytes`` and
``peak_buffer_bytes``; streamwire must be correct (the test fails otherwise), a
peer's result is only recorded, so a peer that mis-frames CRLF shows up as
``correct: false`` in the report instead of failing the run.

Peers, each used the way its library uses it:

* ``openai-sdk``: ``openai._streaming.SSEDecoder.iter_bytes`` over the chunk
  iterator, which is what the SDK's ``Stream`` does with ``response.iter_bytes()``;
* ``httpx-sse``: ``httpx_sse._decoders.SSELineDecoder`` and ``SSEDecoder`` fed the
  text of an incremental UTF-8 decoder, as ``EventSource.iter_sse`` does with
  ``response.iter_text()``;
* ``sseclient-py``: ``sseclient.SSEClient(chunks).events()``;
* ``naive-split``: a ``bytes.find(b"\\n\\n")`` splitter, the usual hand-rolled
  loop, kept as a speed floor; knowingly wrong for CR and CRLF line endings.

Not a parser, for the release gate's ``sse-floor`` groups (``groups.py``):
``str_floor``, CPython's ``str(data, "utf-8")`` of every event's data, already
framed: the least that building the ``str`` objects of a ``+data`` row costs.

Peak buffer: streamwire reports its own ``peak_buffered_bytes``. For peers it is
the peak of Python allocations (``tracemalloc``) in a separate, untimed run
that consumes the events one at a time; measured always for the 8 MiB event and,
for the other workloads, when benchmarking is enabled (tracemalloc is slow).
For the 8 MiB event every implementation also gets ``peak_memory_bytes`` and
``peak_memory_ratio`` (to the wire size) from that run; streamwire's adds its
Rust-side buffer peak, which tracemalloc cannot see.

Run once each as tests: ``pytest benches`` (``--benchmark-disable`` is the
default). Measure: ``python benches/report.py``.
"""

from __future__ import annotations

import codecs
import importlib
import importlib.util
import sys
import tracemalloc
import types
from collections.abc import Iterable, Iterator
from typing import Any

import pytest

import streamwire as sw
from workloads import CHUNKINGS, WORKLOADS, Chunking, Workload, chunked


class Implementation:
    """An SSE parser under test: decode everything, or stream events one by one."""

    name = ""

    def decode(self, chunks: Iterable[bytes]) -> list[Any]:
        """Decodes all chunks; returns the library's own event objects (timed)."""
        return list(self.iter_events(chunks))

    def iter_events(self, chunks: Iterable[bytes]) -> Iterator[Any]:
        raise NotImplementedError

    def data(self, event: Any) -> str:
        return str(event.data)

    #: The implementation's own count of bytes held at peak in its last run, if it has one.
    last_peak_buffered: int | None = None


class Streamwire(Implementation):
    name = "streamwire"

    def decode(self, chunks: Iterable[bytes]) -> list[Any]:
        decoder = sw.SseDecoder()
        events: list[Any] = []
        for chunk in chunks:
            events += decoder.feed(chunk)
        events += decoder.finish()
        self.last_peak_buffered = decoder.peak_buffered_bytes
        return events

    def iter_events(self, chunks: Iterable[bytes]) -> Iterator[Any]:
        decoder = sw.SseDecoder()
        for chunk in chunks:
            yield from decoder.feed(chunk)
        yield from decoder.finish()
        self.last_peak_buffered = decoder.peak_buffered_bytes


class StreamwireDataRead(Streamwire):
    """streamwire with every event's ``data`` read as a ``str`` inside the timing.

    ``SseEvent.data`` of a small event is built on first access; the peers
    build theirs while decoding, so this is the like-for-like row.
    """

    name = "streamwire+data"

    def decode(self, chunks: Iterable[bytes]) -> list[Any]:
        events = super().decode(chunks)
        for event in events:
            event.data  # noqa: B018 - materializes the str being measured
        return events


class OpenAISdk(Implementation):
    name = "openai-sdk"

    def __init__(self) -> None:
        from openai._streaming import SSEDecoder

        self._decoder_class = SSEDecoder

    def iter_events(self, chunks: Iterable[bytes]) -> Iterator[Any]:
        return self._decoder_class().iter_bytes(iter(chunks))


def _httpx_sse_decoders() -> types.ModuleType:
    try:
        return importlib.import_module("httpx_sse._decoders")
    except ModuleNotFoundError as err:
        if err.name != "httpx":
            raise
    # httpx-sse's package __init__ imports httpx for its connect helpers only;
    # the decoders are pure Python. Without httpx installed, load them under a
    # bare package object so that their relative imports resolve.
    spec = importlib.util.find_spec("httpx_sse")
    if spec is None or not spec.submodule_search_locations:
        raise ModuleNotFoundError("httpx_sse")
    package = types.ModuleType("httpx_sse")
    package.__path__ = list(spec.submodule_search_locations)
    sys.modules["httpx_sse"] = package
    return importlib.import_module("httpx_sse._decoders")


class HttpxSse(Implementation):
    name = "httpx-sse"

    def __init__(self) -> None:
        self._decoders = _httpx_sse_decoders()

    def iter_events(self, chunks: Iterable[bytes]) -> Iterator[Any]:
        # httpx's Response.iter_text(): an incremental UTF-8 decoder with
        # replacement, empty strings dropped; then httpx-sse's own line splitter.
        text_decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
        lines = self._decoders.SSELineDecoder()
        sse = self._decoders.SSEDecoder()
        for chunk in chunks:
            text = text_decoder.decode(chunk)
            if text:
                for line in lines.decode(text):
                    event = sse.decode(line)
                    if event is not None:
                        yield event
        tail = text_decoder.decode(b"", True)
        for line in (lines.decode(tail) if tail else []) + lines.flush():
            event = sse.decode(line)
            if event is not None:
                yield event


class SseClientPy(Implementation):
    name = "sseclient-py"

    def __init__(self) -> None:
        import sseclient

        self._client_class = sseclient.SSEClient

    def iter_events(self, chunks: Iterable[bytes]) -> Iterator[Any]:
        return iter(self._client_class(iter(chunks)).events())


class NaiveSplit(Implementation):
    """Blocks split at b"\\n\\n"; "data:" lines joined. Wrong for CR and CRLF."""

    name = "naive-split"

    def iter_events(self, chunks: Iterable[bytes]) -> Iterator[str]:
        buffer = bytearray()
        scan = 0
        for chunk in chunks:
            buffer += chunk
            start = 0
            while (end := buffer.find(b"\n\n", scan)) >= 0:
                block = bytes(buffer[start:end])
                start = scan = end + 2
                values = [line[5:] for line in block.split(b"\n") if line.startswith(b"data:")]
                if values:
                    data = b"\n".join(v[1:] if v[:1] == b" " else v for v in values)
                    yield data.decode("utf-8", "replace")
            del buffer[:start]
            scan = max(0, len(buffer) - 1)

    def data(self, event: Any) -> str:
        return str(event)


#: Not a parser: the ``str`` of every event's data, built by CPython from its
#: UTF-8 (``str(data, "utf-8")``) and nothing else; what building the same
#: ``str`` objects costs at the least, the floor of any ``+data`` row.
STR_FLOOR = "str-floor"


def str_floor(datas: Iterable[bytes]) -> list[str]:
    """Each event's data (its UTF-8 bytes, already framed) as a ``str``."""
    return [str(data, "utf-8") for data in datas]


IMPLEMENTATIONS = {
    cls.name: cls
    for cls in (Streamwire, StreamwireDataRead, OpenAISdk, HttpxSse, SseClientPy, NaiveSplit)
}


def _implementation(name: str) -> Implementation:
    try:
        return IMPLEMENTATIONS[name]()
    except ModuleNotFoundError as err:
        pytest.skip(f"{name} is not installed ({err.name})")


def _check(impl: Implementation, events: Iterable[Any], expected: tuple[str, ...]) -> bool:
    got = [impl.data(e) for e in events]
    return len(got) == len(expected) and all(a == b for a, b in zip(got, expected, strict=True))


def _peak_memory(
    impl: Implementation, load: Workload, chunks: tuple[bytes, ...]
) -> tuple[int, bool]:
    """Peak Python allocations while streaming the events (untimed), and correctness."""
    expected = load.expected
    correct = True
    count = 0
    tracemalloc.start()
    try:
        tracemalloc.reset_peak()
        for event in impl.iter_events(chunks):
            # Compare then drop each event: the peak is the parser's, not a result list's.
            correct = correct and count < len(expected) and impl.data(event) == expected[count]
            count += 1
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    return peak, correct and count == len(expected)


CASES = [
    pytest.param(name, chunking, id=f"{name}/{chunking.label}")
    for name in WORKLOADS
    for chunking in CHUNKINGS
    # The 8 MiB event has no whole event within the 1-byte prefix.
    if not (name == "one-8mib-event" and chunking.prefix is not None)
]


@pytest.mark.parametrize("impl_name", list(IMPLEMENTATIONS))
@pytest.mark.parametrize(("workload_name", "chunking"), CASES)
def test_sse_decode(benchmark: Any, workload_name: str, chunking: Chunking, impl_name: str) -> None:
    impl = _implementation(impl_name)
    load, chunks = chunked(workload_name, chunking)
    benchmark.group = f"{workload_name}/{chunking.label}"

    events = benchmark(impl.decode, chunks)

    correct = _check(impl, events, load.expected)
    info = benchmark.extra_info
    info.update(
        implementation=impl.name,
        workload=workload_name,
        chunking=chunking.label,
        chunk_size=chunking.size,
        correct=correct,
        events=len(events),
        expected_events=len(load.expected),
        bytes=len(load.wire),
        peak_buffer_bytes=impl.last_peak_buffered,
    )
    del events
    big = workload_name == "one-8mib-event"
    if big or (impl.name != "streamwire" and not benchmark.disabled):
        peak, streamed_ok = _peak_memory(impl, load, chunks)
        info["correct"] = correct = correct and streamed_ok
        if impl.last_peak_buffered is None:
            info["peak_buffer_bytes"] = peak
        else:
            peak += impl.last_peak_buffered  # Rust-side buffers, invisible to tracemalloc
        if big:
            info["peak_memory_bytes"] = peak
            info["peak_memory_ratio"] = round(peak / len(load.wire), 3)

    if impl.name.startswith("streamwire"):
        assert correct, f"streamwire decoded {workload_name}/{chunking.label} wrongly"
        # Memory held is O(largest event), whatever the stream length.
        largest = max(b - a for a, b in zip((0, *load.event_ends), load.event_ends, strict=False))
        assert impl.last_peak_buffered is not None
        assert impl.last_peak_buffered <= 2 * largest
