"""How the mock writes a body: the deliveries ``whole``, ``tiny`` and ``paced``.

A body is a list of ``Unit`` (one wire event each, ``upstream/wire.py``); a delivery
turns it into ``Write``s: bytes and the pause before them. The gateway is the
one that has to cope:

* ``whole``: one write per wire event, as fast as the connection takes them
  (a body of more than ``WHOLE_WRITES`` events: that many writes of whole
  events); the case's own shaping still applies: ``merged`` puts eight
  events in one write, ``split`` cuts each event at hostile offsets;
* ``tiny``: pieces of 1 to 7 bytes (seeded, so a run is reproducible), with
  SSE line endings as CRLF so that cuts fall inside CRLF pairs, UTF-8
  characters and JSON tokens. A body over ``TINY_BUDGET`` bytes is cut that
  fine for its first ``TINY_BUDGET`` bytes (hundreds of events) and in 4 KiB
  pieces after: the 1 MiB case in 1-7 byte writes would take minutes per
  cell and prove nothing the first 16 KiB do not;
* ``paced``: one event a write, ``PACE_GAP`` seconds apart (50 events a
  second, a fast provider's token rate), and never over less than
  ``PACE_SPAN`` seconds: a short answer's events are spread further apart,
  so that a hop which holds the answer until the upstream ends (its first
  byte after the mock's last write) is told from one that adds a fixed
  delay or batches small writes (haproxy's defaults: ~200 ms). A body of
  more than ``PACE_WRITES`` events is paced in that many writes of whole
  events.

A case's own ``gap`` (``cancel``) and a unit's ``pause`` (``keepalive``) come
on top of any delivery. Each unit says what content it carries (``content``:
characters of text, reasoning and each call's arguments, as the upstream's
own adapter reads it), and each write sums its units', so that the judge can
match what the mock sent when with what the client received when
(``judge/timed.py``).
"""

from __future__ import annotations

import random
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, replace

__all__ = [
    "DELIVERIES",
    "PACE_GAP",
    "PACE_SPAN",
    "PACE_WRITES",
    "TINY_BUDGET",
    "UNARY",
    "Content",
    "Unit",
    "Write",
    "schedule",
]

DELIVERIES = ("whole", "tiny", "paced")
#: Not a delivery of a stream: a unary cell's client asks for the whole answer
#: at once (``stream: false``) and the mock answers it whole (``client/unary.py``).
#: A gateway that streams from the upstream for it gets ``whole``.
UNARY = "unary"
PACE_GAP = 0.02
PACE_SPAN = 1.5
PACE_WRITES = 240
TINY_BUDGET = 16 * 1024
_TAIL_PIECE = 4096
_MERGE = 8
#: ``whole`` writes one event per write up to this many events; a longer body
#: goes out in this many writes of whole events (the 1 MiB case: 17 per write).
WHOLE_WRITES = 512


#: Characters of content by kind: ``text``, ``reasoning``, ``arguments:<call index>``.
Content = tuple[tuple[str, int], ...]


@dataclass(frozen=True)
class Unit:
    """One wire event of a body, and how the mock treats it."""

    data: bytes
    #: ``event``, ``text`` (an event carrying a text delta), ``reasoning``,
    #: ``arguments`` (a fragment of a call's arguments), ``keepalive``,
    #: ``unknown`` or ``error`` (the in-stream error event).
    kind: str = "event"
    #: Seconds the mock waits before writing it, whatever the delivery.
    pause: float = 0.0
    content: Content = ()


@dataclass(frozen=True)
class Write:
    """One write of the mock: wait ``delay`` seconds, then send ``data``."""

    data: bytes
    delay: float = 0.0
    #: The kinds of the units it carries (``text``, ``error``, ...), for the log.
    kinds: tuple[str, ...] = ()
    #: The content of the units whose last byte it carries.
    content: Content = ()


def _sum(units: Sequence[Unit]) -> Content:
    total: dict[str, int] = {}
    for unit in units:
        for key, chars in unit.content:
            total[key] = total.get(key, 0) + chars
    return tuple(total.items())


def _crlf(unit: Unit, sse: bool) -> Unit:
    if not sse:
        return unit
    return replace(unit, data=unit.data.replace(b"\n", b"\r\n"))


def _hostile_cuts(data: bytes, sse: bool) -> list[int]:
    """Offsets inside CRLF pairs, inside UTF-8 characters, and every 11th byte
    (inside keys, numbers and escapes); EventStream: inside the prelude."""
    cuts = set(range(11, len(data), 11))
    if sse:
        cuts.update(i + 1 for i in range(len(data) - 1) if data[i : i + 2] == b"\r\n")
    else:
        cuts.update(c for c in (2, 5, 9, 13) if c < len(data))
    cuts.update(i for i in range(1, len(data)) if data[i] & 0xC0 == 0x80 and data[i - 1] & 0x80)
    return sorted(c for c in cuts if 0 < c < len(data))


def _pieces(data: bytes, cuts: Sequence[int]) -> Iterator[bytes]:
    start = 0
    for cut in cuts:
        yield data[start:cut]
        start = cut
    yield data[start:]


def schedule(
    units: Sequence[Unit],
    delivery: str,
    *,
    sse: bool,
    shaping: str = "events",
    gap: float | None = None,
    seed: int = 0,
) -> list[Write]:
    """The writes of ``units`` under ``delivery`` (see the module docstring)."""
    if delivery not in DELIVERIES:
        raise ValueError(f"unknown delivery {delivery!r}; one of {', '.join(DELIVERIES)}")
    crlf = delivery == "tiny" or shaping == "split"
    units = [_crlf(u, sse) if crlf else u for u in units]
    case_gap = gap or 0.0
    if delivery == "tiny":
        return _tiny(units, case_gap, seed)
    groups = _group(units, shaping, delivery)
    gap_paced = PACE_GAP
    if delivery == "paced" and len(groups) > 1:
        gap_paced = max(PACE_GAP, PACE_SPAN / (len(groups) - 1))
    writes: list[Write] = []
    for n, group in enumerate(groups):
        delay = max(u.pause for u in group) if group else 0.0
        if n and case_gap:
            delay = max(delay, case_gap)
        if n and delivery == "paced":
            delay = max(delay, gap_paced)
        kinds = tuple(sorted({u.kind for u in group}))
        data = b"".join(u.data for u in group)
        content = _sum(group)
        if shaping == "split":
            pieces = list(_pieces(data, _hostile_cuts(data, sse)))
            for i, piece in enumerate(pieces):
                last = i == len(pieces) - 1
                writes.append(
                    Write(piece, delay if i == 0 else 0.0, kinds, content if last else ())
                )
        else:
            writes.append(Write(data, delay, kinds, content))
    return writes


def _group(units: Sequence[Unit], shaping: str, delivery: str) -> list[list[Unit]]:
    # A unit with a pause of its own (a keep-alive after a silence) starts a
    # group, so that the silence is real whatever the grouping.
    size = _MERGE if shaping == "merged" else 1
    if delivery == "paced":
        size = max(size, -(-len(units) // PACE_WRITES))
    else:
        size = max(size, -(-len(units) // WHOLE_WRITES))
    groups: list[list[Unit]] = []
    for unit in units:
        if not groups or unit.pause or len(groups[-1]) >= size or groups[-1][-1].pause:
            groups.append([unit])
        else:
            groups[-1].append(unit)
    return groups


def _tiny(units: Sequence[Unit], gap: float, seed: int) -> list[Write]:
    rng = random.Random(seed)
    writes: list[Write] = []
    sent = 0
    for n, unit in enumerate(units):
        delay = max(unit.pause, gap if n else 0.0)
        data = unit.data
        pos = 0
        first = True
        while pos < len(data) or (first and not data):
            size = rng.randint(1, 7) if sent < TINY_BUDGET else _TAIL_PIECE
            piece = data[pos : pos + size]
            last = pos + len(piece) >= len(data)
            content = unit.content if last else ()
            writes.append(Write(piece, delay if first else 0.0, (unit.kind,), content))
            first = False
            pos += len(piece)
            sent += len(piece)
            if not data:
                break
    return writes
