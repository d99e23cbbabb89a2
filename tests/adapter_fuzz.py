"""The adapters' never-raise properties, shared: seeded mutations of a wire
body, and the check that a stream fed any bytes at all ends without raising.

Each adapter's tests feed these to their own protocol; what differs between
them is a parameter here (how many mutations, what they insert, which tool
calls an executable result must hold valid, one more check of the result).
"""

from __future__ import annotations

import random
from collections.abc import Callable, Iterator, Sequence
from typing import Literal

import streamwire as sw

__all__ = ["SSE_INSERTIONS", "mutations", "never_raises"]

#: What ``mutations`` inserts by default: SSE event ends, JSON punctuation, an
#: SSE ``[DONE]``, a byte that is never UTF-8 and a JSON null.
SSE_INSERTIONS = (b"\n\n", b'"', b"}", b"data: [DONE]\n\n", b"\xff", b"null")


def mutations(
    data: bytes, seed: int, *, count: int = 20, insertions: Sequence[bytes] = SSE_INSERTIONS
) -> Iterator[bytes]:
    """``count`` seeded mutations of ``data``, each of 1 to 4 edits: a byte
    replaced, up to 8 bytes deleted, or one of ``insertions`` inserted."""
    rng = random.Random(seed)
    for _ in range(count):
        buf = bytearray(data)
        for _ in range(rng.randint(1, 4)):
            op = rng.randrange(3)
            at = rng.randrange(len(buf) or 1)
            if op == 0 and buf:
                buf[at] = rng.randrange(256)
            elif op == 1 and buf:
                del buf[at : at + rng.randint(1, 8)]
            else:
                buf[at:at] = rng.choice(insertions)
        yield bytes(buf)


def never_raises(
    protocol: str,
    chunks: list[bytes],
    *,
    valid_calls: Literal["all", "client"],
    check: Callable[[sw.StreamResult], object] | None = None,
) -> None:
    """Feeds ``chunks`` to a new ``protocol`` stream and closes it: nothing
    raises, the result is final and not in progress, the last event is
    ``MessageCompleted``, and an executable result completed with its calls
    valid (``"all"`` of them, or those the ``"client"`` executes); then
    ``check(result)``, if given."""
    stream = sw.stream(protocol)
    events: list[sw.Event] = []
    for chunk in chunks:
        events += stream.feed(chunk)
    events += stream.close()
    result = stream.result
    assert result.final and result.status != "in_progress"
    assert isinstance(events[-1], sw.MessageCompleted)
    if result.executable:
        assert result.status == "completed"
        assert all(
            c.state == "valid"
            for c in result.tool_calls
            if valid_calls == "all" or c.executor == "client"
        )
    if check is not None:
        check(result)
