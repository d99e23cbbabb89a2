"""Timing for the pipeline benchmarks' script mode: interleaved best-of rounds.

Each round times every implementation once, in turn, and each keeps its best
round. On a shared machine a load change then affects every implementation
alike; timing one implementation's rounds after another's skewed the ratios
by up to 2x here. Times are the process's CPU time (``time.process_time``):
the code under test is single-threaded and does no I/O, so time spent
descheduled belongs to the neighbours, not to the parser.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping

__all__ = ["best_times"]


def best_times(runs: Mapping[str, Callable[[], object]], rounds: int) -> dict[str, float]:
    """The best CPU time, in seconds, of each run over ``rounds`` interleaved rounds."""
    best = dict.fromkeys(runs, float("inf"))
    for _ in range(max(1, rounds)):
        for name, run in runs.items():
            start = time.process_time()
            run()
            best[name] = min(best[name], time.process_time() - start)
    return best
