"""What the pipeline benchmarks share: their timer, one case as a test, one measurement.

Timing for the script mode: interleaved best-of rounds. Each round times
every implementation once, in turn, and each keeps its best round. On a
shared machine a load change then affects every implementation alike; timing
one implementation's rounds after another's skewed the ratios by up to 2x
here. Times are the process's CPU time (``time.process_time``): the code
under test is single-threaded and does no I/O, so time spent descheduled
belongs to the neighbours, not to the parser.

A byte-stream pipeline workload (``Workload``) is its wire bytes, those bytes
in chunks, the output a parser must give, and its number of wire events.
"""

from __future__ import annotations

import ctypes
import time
from collections.abc import Callable, Mapping, Sequence
from functools import partial
from typing import Any, Protocol

from streamwire import _json

__all__ = [
    "Workload",
    "bench_case",
    "best_times",
    "json_decoder",
    "measure",
    "release_free_memory",
]

Run = Callable[[Sequence[bytes]], Any]


class Workload(Protocol):
    wire: bytes
    chunks: Sequence[bytes]
    expected: Any
    events: int


def best_times(
    runs: Mapping[str, Callable[[], object]],
    rounds: int,
    before: Callable[[], object] | None = None,
) -> dict[str, float]:
    """The best CPU time, in seconds, of each run over ``rounds`` interleaved
    rounds; ``before``, if given, is called (untimed) before each run."""
    best = dict.fromkeys(runs, float("inf"))
    for _ in range(max(1, rounds)):
        for name, run in runs.items():
            if before is not None:
                before()
            start = time.process_time()
            run()
            best[name] = min(best[name], time.process_time() - start)
    return best


def _malloc_trim() -> Callable[[int], int] | None:
    try:
        trim: Callable[[int], int] = ctypes.CDLL(None).malloc_trim
    except (AttributeError, OSError):  # not glibc (musl, macOS): nothing to call
        return None
    return trim


_MALLOC_TRIM = _malloc_trim()


def release_free_memory() -> None:
    """Gives the C allocator's free memory back to the system (glibc's
    ``malloc_trim(0)``; a no-op elsewhere).

    A ``best_times`` step for workloads whose time is mostly page faults (an
    8 MiB event): each run then starts from the same allocator state and pays
    for every page it touches. Without it, whether glibc kept the previous
    run's freed pages decided the time: streamwire's framing of the 8 MiB
    event took 2 ms after streamwire+data (no page faults) and 14 ms after the
    peers (4,066 faults), and its ratios moved by 1.5x between runs.
    """
    if _MALLOC_TRIM is not None:
        _MALLOC_TRIM(0)


def json_decoder(impl: str) -> str:
    """The JSON decoder an implementation's general (or only) path uses."""
    if impl == "naive":
        return "orjson"
    if impl.startswith("streamwire") and not impl.endswith("stdlib-json"):
        return "orjson" if _json.ACCELERATED else "stdlib"
    return "stdlib"  # streamwire forced to it, and the SDK paths (json.loads)


def bench_case(
    benchmark: Any,
    data: Workload,
    workload: str,
    impl: str,
    run: Run,
    *,
    chunk_size: int,
    **extra: Any,
) -> None:
    """One (workload, implementation) pair as a pytest-benchmark test: timed,
    its output checked (streamwire must be correct), described in ``extra_info``."""
    benchmark.group = f"pipeline/{workload}/{chunk_size // 1024}KiB"
    output = benchmark(run, data.chunks)
    correct = output == data.expected
    benchmark.extra_info.update(
        implementation=impl,
        workload=workload,
        chunk_size=chunk_size,
        events=data.events,
        expected_events=data.events,  # for report.py's tables
        bytes=len(data.wire),
        correct=correct,
        json=json_decoder(impl),
        **extra,
    )
    if impl.startswith("streamwire"):
        assert correct, f"{impl} got {workload} wrong"


def measure(
    data: Workload, implementations: Mapping[str, Run], rounds: int
) -> tuple[dict[str, bool], dict[str, float]]:
    """Whether each implementation's output is right, and its events/s (the
    best CPU time of ``rounds`` interleaved rounds)."""
    correct = {impl: run(data.chunks) == data.expected for impl, run in implementations.items()}
    runs = {impl: partial(run, data.chunks) for impl, run in implementations.items()}
    best = best_times(runs, rounds)
    return correct, {impl: data.events / seconds for impl, seconds in best.items()}
