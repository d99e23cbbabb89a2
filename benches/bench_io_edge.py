"""What the HTTP edge (``streamwire.io``) adds per chunk over the bare adapter.

The workload is the ``openai-chat/02-long-text`` fixture (388 KB, ~3,800 SSE
events) cut into 256-byte chunks, as a slow network delivers it. Two ways:

* ``adapter``: ``sw.stream("openai-chat")``, ``feed`` per chunk, ``close``;
* ``edge``: the same chunks through the edge's ``Driver`` (status and
  content-type check, ``Timing`` with a clock read per chunk, the per-event
  metrics, the result's timing fields) by ``streamwire.io.replay`` on its
  virtual clock: everything ``sw.iter_events`` does except the socket reads.

Both must produce the same unified events (``extra_info["correct"]``).
Run once each as tests: ``pytest benches/bench_io_edge.py``; measure:
``pytest benches/bench_io_edge.py --benchmark-enable``.
"""

from __future__ import annotations

from pathlib import Path

import pytest

import streamwire as sw
from streamwire.io.record import RecordedChunk, Recording
from streamwire.io.replay import ReplayIterator

RAW = (
    Path(__file__).resolve().parent.parent
    / "fixtures"
    / "regression"
    / "openai-chat"
    / "02-long-text.sse"
).read_bytes()
CHUNK = 256
CHUNKS = [RAW[i : i + CHUNK] for i in range(0, len(RAW), CHUNK)]
RECORDING = Recording(
    protocol="openai-chat",
    status=200,
    headers=[("content-type", "text/event-stream")],
    chunks=[RecordedChunk(0.001 * i, c) for i, c in enumerate(CHUNKS)],
    end="eof",
    end_t=0.001 * len(CHUNKS),
)


def _adapter() -> list[sw.Event]:
    stream = sw.stream("openai-chat")
    events: list[sw.Event] = []
    for chunk in CHUNKS:
        events += stream.feed(chunk)
    return events + stream.close()


def _edge() -> list[sw.Event]:
    return list(ReplayIterator(RECORDING))


@pytest.mark.parametrize("way", ["adapter", "edge"])
def test_edge_overhead(benchmark, way: str) -> None:  # type: ignore[no-untyped-def]
    run = _adapter if way == "adapter" else _edge
    events = benchmark(run)
    benchmark.extra_info["correct"] = events == _adapter()
    benchmark.extra_info["chunks"] = len(CHUNKS)
    benchmark.extra_info["bytes"] = len(RAW)
    assert benchmark.extra_info["correct"]
