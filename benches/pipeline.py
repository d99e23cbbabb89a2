"""What the pipeline benches (``bench_pipeline_*.py``) share beyond their
timer (``rounds.py``) and their workloads (``workloads.py``): a workload's
body in the chunks a socket delivers, streamwire's run of a body or of a
WebSocket session, the variants that swap one of its functions for another
(the standard library's JSON decoder, the fast path off), and the script
mode's printout.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

import streamwire as sw
from rounds import measure
from streamwire import _json
from workloads import chunks_of

__all__ = [
    "CHUNK",
    "Load",
    "final_usage",
    "print_rates",
    "replaced",
    "session_after",
    "stream_result",
]

#: The pipeline benches' chunk size: 4 KiB, as a socket delivers a body.
CHUNK = 4096


@dataclass(frozen=True, eq=False)
class Load:
    """A workload's wire bytes, in ``CHUNK``-byte chunks, and the output a
    parser must give; ``events``: its wire events, the throughput's unit."""

    name: str
    wire: bytes
    expected: Any
    events: int
    chunks: tuple[bytes, ...] = field(init=False, repr=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "chunks", chunks_of(self.wire, CHUNK))


# --- streamwire ---------------------------------------------------------------------------


def stream_result(protocol: str, chunks: Iterable[bytes]) -> sw.StreamResult:
    """streamwire's whole pipeline on a body: ``sw.stream(protocol)``,
    ``feed`` per chunk, ``close``; its result, which must have completed."""
    stream = sw.stream(protocol)
    feed = stream.feed
    for chunk in chunks:
        feed(chunk)
    stream.close()
    result: sw.StreamResult = stream.result
    assert result.status == "completed", result.status
    return result


def session_after(protocol: str, messages: Iterable[str | bytes]) -> Any:
    """streamwire's whole pipeline on a WebSocket session: ``sw.stream(protocol)``,
    ``feed_message`` per message, ``close``; the session (``result``, ``results``)."""
    session = sw.stream(protocol)
    feed = session.feed_message
    for message in messages:
        feed(message)
    session.close()
    return session


def final_usage(result: sw.StreamResult) -> sw.Usage:
    """The result's usage, which must be there and final."""
    usage = result.usage
    assert usage is not None and usage.final
    return usage


# --- the variants and the script mode -----------------------------------------------------


@contextmanager
def replaced(value: Any, *places: tuple[Any, str]) -> Iterator[None]:
    """Each ``(object, attribute)`` of ``places`` set to ``value`` for the
    block, and back to what it was after (a streamwire variant: the standard
    library's JSON decoder forced, the fast path's shapes off)."""
    previous = [getattr(owner, name) for owner, name in places]
    for owner, name in places:
        setattr(owner, name, value)
    try:
        yield
    finally:
        for (owner, name), old in zip(places, previous, strict=True):
            setattr(owner, name, old)


def print_rates(
    loads: Sequence[Load],
    implementations: Mapping[str, Callable[[Sequence[bytes]], Any]],
    rounds: int,
    targets: Mapping[str, float],
    variants: Sequence[str] = ("streamwire", "streamwire-stdlib-json"),
) -> None:
    """The script mode: each implementation's events/s on each load (the best
    CPU time of ``rounds`` interleaved rounds: a machine whose load changes
    during the run then slows all of them alike) and whether its output was
    right, then how many times faster each streamwire variant is than each
    peer of ``targets``, beside the target."""
    decoder = "orjson" if _json.ACCELERATED else "stdlib"
    print(f"json decoder for streamwire: {decoder}; best CPU time of {rounds} interleaved rounds")
    width = max(len(load.name) for load in loads) + 1
    for load in loads:
        correct, rates = measure(load, implementations, rounds)
        for impl, rate in rates.items():
            print(
                f"{load.name:{width}s} {impl:24s} {rate:>12,.0f} events/s"
                f" {1e9 / rate:7.0f} ns/event  correct={correct[impl]}"
            )
        for impl in variants:
            cells = "  ".join(
                f"{rates[impl] / rates[peer]:6.2f}x {peer} (target {target:g}x)"
                for peer, target in targets.items()
            )
            print(f"{load.name:{width}s} {impl:24s} {cells}")
