"""Chunkings of a byte string, shared by every byte-level test.

A decoder fed over a network sees its input cut at arbitrary places: inside a
line terminator (CR | LF), inside a multi-byte UTF-8 sequence, inside a BOM,
inside a frame header. Every byte-level test therefore replays its input under
all of :func:`chunkings`: whole, one byte at a time, every single split point
(sampled for large inputs), seeded random splits, and a random split with empty
chunks interleaved. The helpers are decoder-agnostic: use :func:`feed_all` with
any object's ``feed`` method.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Iterable, Iterator
from typing import TypeVar

__all__ = ["EXHAUSTIVE_LIMIT", "chunkings", "feed_all", "split_at"]

T = TypeVar("T")

#: Inputs up to this many bytes are split at every point; larger ones at a sample.
EXHAUSTIVE_LIMIT = 2048
#: How many split points are sampled for an input above ``EXHAUSTIVE_LIMIT``.
SAMPLED_SPLITS = 96


def split_at(data: bytes, points: Iterable[int]) -> list[bytes]:
    """Cuts ``data`` at the given offsets (sorted here; repeats give empty chunks)."""
    chunks: list[bytes] = []
    start = 0
    for point in sorted(points):
        chunks.append(data[start:point])
        start = point
    chunks.append(data[start:])
    return chunks


def _random_points(rng: random.Random, size: int) -> list[int]:
    # Mix many small cuts (stress the carry-over state) with few large ones.
    if size < 2:
        return []
    count = rng.choice((1, 2, rng.randint(1, max(1, size // 8)), rng.randint(1, size)))
    return rng.sample(range(1, size), min(count, size - 1))


def _single_split_points(data: bytes, rng: random.Random) -> list[int]:
    size = len(data)
    if size <= EXHAUSTIVE_LIMIT:
        return list(range(size + 1))
    # Both ends, a seeded sample of all points, and the places most likely to
    # matter: before and after a seeded sample of the line terminators and
    # non-ASCII bytes (a split inside a CRLF or a multi-byte sequence).
    interesting = [i for i, b in enumerate(data) if b in (0x0A, 0x0D) or b >= 0x80]
    picked = set(rng.sample(interesting, min(len(interesting), SAMPLED_SPLITS // 2)))
    picked |= {p + 1 for p in picked}
    picked |= set(rng.sample(range(size + 1), SAMPLED_SPLITS // 2))
    picked |= {0, 1, size - 1, size}
    return sorted(p for p in picked if 0 <= p <= size)


def chunkings(
    data: bytes,
    *,
    seed: int = 0x5EED,
    random_rounds: int = 16,
) -> Iterator[tuple[str, list[bytes]]]:
    """Yields ``(label, chunks)`` pairs; each list of chunks joins back to ``data``.

    Labels name the chunking so a failing assertion says which one broke, e.g.
    ``"split@17"`` or ``"random#3"``. Deterministic: the same ``seed`` always
    gives the same chunkings.
    """
    rng = random.Random(seed)
    yield "whole", [data]
    if len(data) > 1:
        yield "bytewise", [data[i : i + 1] for i in range(len(data))]
    for point in _single_split_points(data, rng):
        yield f"split@{point}", [data[:point], data[point:]]
    for round_ in range(random_rounds):
        yield f"random#{round_}", split_at(data, _random_points(rng, len(data)))
    interleaved: list[bytes] = [b""]
    for chunk in split_at(data, _random_points(rng, len(data))):
        interleaved += [chunk, b""]
    yield "empty-interleaved", interleaved


def feed_all(feed: Callable[[bytes], list[T]], chunks: Iterable[bytes]) -> list[T]:
    """Feeds every chunk in order and concatenates what each call returned."""
    out: list[T] = []
    for chunk in chunks:
        out.extend(feed(chunk))
    return out
