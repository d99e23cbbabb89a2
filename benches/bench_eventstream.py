"""AWS EventStream framing benchmarks: workload x chunking x implementation.

The workload is a Bedrock-ConverseStream-like body of 20,000 messages (see
``workloads.py``), fed in 4 KiB and 64 KiB chunks and as one whole chunk; the
first 5,000 messages as one chunk too, so that the two one-chunk runs show how
each decoder's cost grows with the size of a chunk. Every benchmark decodes the
whole body and then checks the output: the message count, and the
``:event-type`` and payload of every message against the generator's list.
``extra_info`` records ``correct``, ``messages``, ``bytes`` and
``peak_buffer_bytes``; streamwire must be correct and hold at most one message
plus one chunk (the test fails otherwise), a peer's result is only recorded.

Implementations, each used the way its library uses it:

* ``streamwire``: ``sw.EventStreamDecoder().feed(chunk)`` per chunk, then
  ``finish()``; event types read from ``message.event_type``;
* ``botocore``: ``botocore.eventstream.EventStreamBuffer``: ``add_data(chunk)``
  then iterate the buffer for the messages it completed, as botocore's
  ``EventStream`` does with the HTTP body (what boto3's Bedrock streams use);
  event types read from ``message.headers[":event-type"]``.

Peak buffer: streamwire reports its own ``peak_buffered_bytes``. botocore keeps
the undecoded bytes in ``EventStreamBuffer._data`` (``add_data`` appends, every
decoded message re-slices the rest); its peak is the largest ``len(_data)``,
measured after each ``add_data`` in a separate, untimed run that also checks
that no bytes are left over.

Run once each as tests: ``pytest benches/bench_eventstream.py``
(``--benchmark-disable`` is the default). Measure:
``python benches/report.py --suite eventstream``.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import pytest

import streamwire as sw
from workloads import ES_CHUNKINGS, Chunking, EventStreamWorkload, es_chunked


class Implementation:
    """An EventStream decoder under test."""

    name = ""
    #: The implementation's own count of bytes held at peak in its last run.
    last_peak_buffered: int | None = None

    def decode(self, chunks: Iterable[bytes]) -> list[Any]:
        """Decodes all chunks; returns the library's own message objects (timed)."""
        raise NotImplementedError

    def event_type(self, message: Any) -> object:
        raise NotImplementedError

    def peak_buffer(self, chunks: Iterable[bytes]) -> tuple[int | None, bool]:
        """Peak bytes buffered in an untimed run, and whether the input was used up."""
        self.decode(chunks)
        return self.last_peak_buffered, True


class Streamwire(Implementation):
    name = "streamwire"

    def decode(self, chunks: Iterable[bytes]) -> list[Any]:
        decoder = sw.EventStreamDecoder()
        messages: list[Any] = []
        for chunk in chunks:
            messages += decoder.feed(chunk)
        decoder.finish()
        self.last_peak_buffered = decoder.peak_buffered_bytes
        return messages

    def event_type(self, message: Any) -> object:
        return message.event_type


class Botocore(Implementation):
    name = "botocore"

    def __init__(self) -> None:
        from botocore.eventstream import EventStreamBuffer

        self._buffer_class = EventStreamBuffer

    def decode(self, chunks: Iterable[bytes]) -> list[Any]:
        buffer = self._buffer_class()
        messages: list[Any] = []
        for chunk in chunks:
            buffer.add_data(chunk)
            messages.extend(buffer)
        return messages

    def event_type(self, message: Any) -> object:
        return message.headers.get(":event-type")

    def peak_buffer(self, chunks: Iterable[bytes]) -> tuple[int | None, bool]:
        buffer = self._buffer_class()
        if not isinstance(getattr(buffer, "_data", None), bytes):
            return None, True  # botocore changed its internals: nothing to measure
        peak = 0
        for chunk in chunks:
            buffer.add_data(chunk)
            peak = max(peak, len(buffer._data))
            for _ in buffer:
                pass
        return peak, len(buffer._data) == 0


IMPLEMENTATIONS = {cls.name: cls for cls in (Streamwire, Botocore)}


def _implementation(name: str) -> Implementation:
    try:
        return IMPLEMENTATIONS[name]()
    except ModuleNotFoundError as err:
        pytest.skip(f"{name} is not installed ({err.name})")


def _check(impl: Implementation, messages: list[Any], load: EventStreamWorkload) -> bool:
    if len(messages) != len(load.expected):
        return False
    return all(
        impl.event_type(m) == event_type and m.payload == payload
        for m, (event_type, payload) in zip(messages, load.expected, strict=True)
    )


CASES = [
    pytest.param("bedrock-converse", chunking, id=f"bedrock-converse/{chunking.label}")
    for chunking in ES_CHUNKINGS
] + [
    pytest.param(
        "bedrock-converse-5k", ES_CHUNKINGS[-1], id=f"bedrock-converse-5k/{ES_CHUNKINGS[-1].label}"
    )
]


@pytest.mark.parametrize("impl_name", list(IMPLEMENTATIONS))
@pytest.mark.parametrize(("workload_name", "chunking"), CASES)
def test_eventstream_decode(
    benchmark: Any, workload_name: str, chunking: Chunking, impl_name: str
) -> None:
    impl = _implementation(impl_name)
    load, chunks = es_chunked(workload_name, chunking)
    chunk_size = chunking.size or len(load.wire)
    benchmark.group = f"eventstream/{workload_name}/{chunking.label}"

    messages = benchmark(impl.decode, chunks)

    correct = _check(impl, messages, load)
    del messages
    peak, used_up = impl.peak_buffer(chunks)
    correct = correct and used_up
    benchmark.extra_info.update(
        implementation=impl.name,
        workload=workload_name,
        chunking=chunking.label,
        chunk_size=chunk_size,
        correct=correct,
        unit="messages",
        messages=len(load.expected) if correct else 0,
        events=len(load.expected),
        expected_events=len(load.expected),
        bytes=len(load.wire),
        largest_message_bytes=load.largest_message,
        peak_buffer_bytes=peak,
    )

    if impl.name == "streamwire":
        assert correct, f"streamwire decoded {workload_name}/{chunking.label} wrongly"
        # Memory held is one message plus one chunk at most, whatever the stream length.
        assert peak is not None
        assert peak <= load.largest_message + chunk_size
        assert peak <= load.largest_message
