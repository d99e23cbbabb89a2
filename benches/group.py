"""One group of the release gate: a workload's implementations timed in the
same interleaved rounds, the ratios between them it reports, and how
streamwire's peak memory on the stream is measured (``peak_memory``).

``groups.py`` builds the gate's groups from the benches' own workloads and
runs; ``gate.py`` runs them and compares the run with a baseline.
"""

from __future__ import annotations

import tracemalloc
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

__all__ = ["Group", "Ratio", "peak_memory"]


@dataclass
class Ratio:
    """``numerator``'s time over ``denominator``'s, in one group."""

    label: str
    numerator: str
    denominator: str
    #: The issue's target for it, if any, and which way is better.
    target: float | None = None
    lower_is_better: bool = False


@dataclass
class Group:
    """One workload: implementations timed in the same interleaved rounds."""

    suite: str
    name: str
    unit: str
    units: int
    runs: dict[str, Callable[[], Any]]
    #: Whether an implementation's output is right.
    check: Callable[[str, Any], bool]
    ratios: list[Ratio]
    #: streamwire's peak memory on the stream (``peak_memory``): ``() -> (peak
    #: bytes, the largest unit a step holds: an event, or the chunk if larger)``.
    memory: Callable[[], tuple[int, int]] | None = None
    notes: dict[str, Any] = field(default_factory=dict)
    #: Called (untimed) before each timed run: ``rounds.release_free_memory``
    #: for the workloads whose time is mostly page faults.
    settle: Callable[[], object] | None = None


def peak_memory(steps: Iterable[Callable[[], Any]], rust_peak: Callable[[], int]) -> int:
    """The most memory one step of a stream (one ``feed`` call) needed beyond
    what the stream keeps: for each step, the peak of Python allocations
    (tracemalloc) during it less what is still allocated after it (the
    stream's state, its result so far: what the design lets grow), the
    largest of those, plus the Rust buffers' peak. ``close()`` is not a step:
    it joins the kept text once (docs/design.md "Limits and memory": O(the
    largest event) plus what the result must keep)."""
    worst = 0
    tracemalloc.start()
    try:
        for step in steps:
            tracemalloc.reset_peak()
            out = step()
            current, peak = tracemalloc.get_traced_memory()
            worst = max(worst, peak - current)
            del out
    finally:
        tracemalloc.stop()
    return worst + rust_peak()
