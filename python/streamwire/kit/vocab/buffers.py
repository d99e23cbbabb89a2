"""What this machine's sockets can hold: the slow-reader case's size and the bound a hop may hold.

A relay that passes a slow client's pace back to the upstream still holds
what its two sockets' kernel buffers take, and Linux sizes those from
``/proc/sys/net/ipv4/tcp_rmem`` and ``tcp_wmem``. The slow-reader case must
write more than that (``slow_reader_bytes``) and the judge may not blame a
hop for holding less (``hold_bound``): both read the machine here.
"""

from __future__ import annotations

from functools import lru_cache

__all__ = ["HOLD_BOUND", "HOLD_SLACK", "SLOW_MARGIN", "hold_bound", "slow_reader_bytes"]


#: The least the slow-reader case lets a hop hold (what the mock had written
#: beyond what the client had read when it read on: ``_held``). A relay that
#: passes the client's pace back holds what its sockets' kernel buffers take:
#: 6.5 MB for an asyncio relay on a loopback whose ``tcp_rmem`` tops out at
#: 6 MiB (Linux autotunes a send buffer up to ``tcp_wmem``'s 4 MiB and a
#: receive buffer up to ``tcp_rmem``'s maximum), and a hop that holds the
#: whole 16 MiB answer is told by the mock having written all of it while the
#: client read nothing.
HOLD_BOUND = 12 * 1024 * 1024
#: Room for the hop's own read and write buffers beside its kernel's.
HOLD_SLACK = 2 * 1024 * 1024


@lru_cache(maxsize=1)
def hold_bound() -> int:
    """The most a hop that passes the client's pace back may hold: what its two
    sockets' kernel buffers can take on this machine (the upstream socket's
    receive buffer, ``tcp_rmem``'s maximum, and the client socket's send
    buffer, ``tcp_wmem``'s), with ``HOLD_SLACK``, and never less than
    ``HOLD_BOUND``. On a machine whose ``tcp_rmem`` tops out at 32 MiB an
    asyncio relay that honours backpressure was measured holding 13.9 MB,
    above the 12 MiB a 6 MiB one needs."""
    total = 0
    for name in ("tcp_rmem", "tcp_wmem"):
        try:
            with open(f"/proc/sys/net/ipv4/{name}", encoding="ascii") as sysctl:
                total += int(sysctl.read().split()[2])
        except (OSError, ValueError, IndexError):
            return HOLD_BOUND
    return max(HOLD_BOUND, total + HOLD_SLACK)


#: How much more than ``hold_bound`` a sized slow-reader answer carries.
SLOW_MARGIN = 8 * 1024 * 1024


def slow_reader_bytes() -> int:
    """The least the slow-reader answer writes on the upstream's wire on this
    machine (the mock's ``answer_bytes``; ``wire.slow_reader_deltas`` turns it
    into deltas of the upstream's protocol): ``SLOW_MARGIN`` more than
    ``hold_bound``, so that an honest hop cannot take all of it into its
    sockets' buffers while the client reads nothing, and the mock finishing it
    then is the hop's own buffering. Sized to the machine because a pooled
    upstream connection's receive buffer grows to ``tcp_rmem``'s maximum, and
    where that is 32 MiB it takes the case's own 17 MB answer whole
    (docs/kit/verdicts.md, "What backpressure sees")."""
    return hold_bound() + SLOW_MARGIN
