"""The head-of-line kind: a stream asked for while a non-streaming request waits beside it.

A gateway that calls its upstream with a blocking client on its event loop
(a synchronous HTTP call in an ``async`` handler), or that serves one
request at a time, holds every other request for as long as that call
waits: a stream beside a slow non-streaming answer gets nothing until the
answer comes. The kit's own unary answers are instant, and its cells run
beside each other, so no other cell can show it. Here the client first
asks for a whole answer (``stream: false``) that the mock holds for
``HOL_WAIT`` seconds (tag option ``answer_after``), and once the mock has
that request, asks for the case's stream; the ``head_of_line`` layer
compares when the stream's first content arrived with how long the two
requests overlapped (``judge/timed.head_of_line``). The cell runs with no
other cell of its gateway in flight (``run/check.py``): a gateway that
blocks would hold those too, and they would carry this cell's verdict.
"""

from __future__ import annotations

from dataclasses import dataclass

from .base import Kind

__all__ = ["BESIDE_CASE", "HOL_REACH", "HOL_SHARE", "HOL_WAIT", "HeadOfLine"]

#: The mock holds the whole answer beside the stream this long (seconds).
HOL_WAIT = 1.5
#: The stream is blocked when its first content came at least this share of
#: the overlap (from its request to the answer beside) after its request: an
#: honest gateway's first content takes milliseconds of it.
HOL_SHARE = 0.5
#: How long the client waits for the request beside to reach the mock before
#: it asks for the stream anyway (the layer then says what it could judge).
HOL_REACH = 3.0
#: The case the request beside asks for, whole.
BESIDE_CASE = "short-text"


@dataclass(frozen=True)
class HeadOfLine(Kind):
    """The case's stream, asked for while a whole answer waits beside it."""

    layers = frozenset({"head_of_line"})
