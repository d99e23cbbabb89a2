"""Decoding in threads: what releasing the GIL gains, and what it costs, by feed size.

A ``feed`` of an immutable ``bytes`` of at least ``_core.release_gil_bytes()``
(default 64 KiB) is framed in Rust with the GIL released
(``rust/py/src/buffer.rs``; ``feed_matched`` keeps it, see there). Setting
the threshold to 0 (always) or past any chunk (never) runs the same work
both ways. For each chunk size:

* ``cost``: one thread's CPU time with the release divided by without it
  (the price of releasing: above 1.0 it costs);
* ``other thread``: the steps a CPU-bound Python thread makes per feed
  while this one decodes, the GIL held / released: a release too short for
  the waiting thread to wake and take the GIL gives it nothing;
* ``2 threads``: two threads decoding a stream each, against one thread
  decoding both one after the other (wall time; 2.0 would be perfect
  scaling on two idle cores, 1.0 no gain). Only meaningful on an idle
  machine: on a busy one there is no second core to scale to.

Workloads: the chat stream of ``benches/workloads.py`` (20,000 events),
framed (``SseDecoder.feed``), and a Bedrock EventStream of 20,000 messages
(``EventStreamDecoder.feed``).
Medians of ``rounds`` interleaved rounds; the machine is shared, so read the
ratios. ``python benches/bench_gil.py [rounds]``; as a test (``pytest
benches/bench_gil.py``) it checks once that both paths decode the same.
"""

from __future__ import annotations

import statistics
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

import streamwire as sw
from streamwire._core import release_gil_bytes
from workloads import es_workload, workload

SIZES = (4096, 16 * 1024, 32 * 1024, 64 * 1024, 128 * 1024, 256 * 1024, 1024 * 1024)


def _decoders() -> dict[str, tuple[bytes, Callable[[], Any]]]:
    chat = workload("openai-chat").wire
    converse = es_workload("bedrock-converse").wire
    return {
        "sse feed": (chat, sw.SseDecoder),
        "eventstream feed": (converse, sw.EventStreamDecoder),
    }


def _run(chunks: list[bytes], make: Callable[[], Any]) -> int:
    decoder = make()
    count = 0
    for chunk in chunks:
        count += len(decoder.feed(chunk))
    return count


def _cut(body: bytes, size: int) -> list[bytes]:
    return [body[at : at + size] for at in range(0, len(body), size)]


def _release(always: bool) -> None:
    release_gil_bytes(0 if always else 1 << 62)


def _cpu(run: Callable[[], object]) -> float:
    start = time.process_time()
    run()
    return time.process_time() - start


def _seconds(run: Callable[[], object]) -> float:
    start = time.perf_counter()
    run()
    return time.perf_counter() - start


def _threads(run: Callable[[], object], n: int) -> float:
    threads = [threading.Thread(target=run) for _ in range(n)]
    start = time.perf_counter()
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return time.perf_counter() - start


def _busy_steps(chunks: list[bytes], make: Callable[[], Any]) -> float:
    """Steps a CPU-bound Python thread makes per feed while this one decodes."""
    state = {"running": True, "steps": 0}

    def busy() -> None:
        while state["running"]:
            state["steps"] += 1

    thread = threading.Thread(target=busy, daemon=True)
    thread.start()
    time.sleep(0.02)
    try:
        before = state["steps"]
        _run(chunks, make)
        return (state["steps"] - before) / len(chunks)
    finally:
        state["running"] = False
        thread.join()


def measure(rounds: int) -> list[tuple[str, int, float, float, float, float]]:
    rows = []
    previous = release_gil_bytes()
    try:
        for name, (body, make) in _decoders().items():
            for size in SIZES:
                chunks = _cut(body, size)

                def fed(chunks: list[bytes] = chunks, make: Any = make) -> None:
                    _run(chunks, make)

                released, held, busy_held, busy_released, one, two = [], [], [], [], [], []
                for _ in range(rounds):
                    _release(True)
                    released.append(_cpu(fed))
                    busy_released.append(_busy_steps(chunks, make))
                    one.append(_seconds(lambda: (fed(), fed())))
                    two.append(_threads(fed, 2))
                    _release(False)
                    held.append(_cpu(fed))
                    busy_held.append(_busy_steps(chunks, make))
                cost = statistics.median(released) / statistics.median(held)
                scaling = statistics.median(one) / statistics.median(two)
                steps = (statistics.median(busy_held), statistics.median(busy_released))
                rows.append((name, size, cost, *steps, scaling))
    finally:
        release_gil_bytes(previous)
    return rows


def test_both_paths_decode_the_same() -> None:
    previous = release_gil_bytes()
    try:
        for body, make in _decoders().values():
            chunks = _cut(body[: 1 << 20], 64 * 1024)
            _release(True)
            released = _run(chunks, make)
            _release(False)
            assert released == _run(chunks, make)
    finally:
        release_gil_bytes(previous)


def main() -> None:
    rounds = int(sys.argv[1]) if len(sys.argv) > 1 else 5
    head = f"{'workload':<20} {'chunk':>8} {'cost':>6} {'other thread held/released':>28}"
    print(head + f" {'2 threads':>10}")
    for name, size, cost, held, released, scaling in measure(rounds):
        other = f"{held:.0f} / {released:.0f}"
        print(f"{name:<20} {size:>8} {cost:>6.2f} {other:>28} {scaling:>9.2f}x")


if __name__ == "__main__":
    main()
