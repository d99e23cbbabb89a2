"""The refused kind: attempts answered with the provider's error status, and what a gateway does.

Each of the first attempts of a cell gets the provider's own error answer
before any byte (a rate limit with ``Retry-After``, an invalid request, an
overload), as ``answers`` lists them; ``every``: the last one answers every
attempt after them too (a request that will never succeed). The attempts
after them answer, each with its own text (``Attempt <n>: ...``). The judge
reads the mock's log of the attempts with their times (``retries``): how
many there were, how far apart, whether a ``Retry-After`` was waited out and
a client error left alone, and what reached the client.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from .base import Failure, Kind

__all__ = ["Answer", "Refused"]

#: The upstream's error answers (``wire.FAILURE_ANSWERS`` writes each in its
#: provider's terms): HTTP 429 with ``Retry-After``, HTTP 400, and the
#: provider's overloaded answer (503; Anthropic's own 529).
Answer = Literal["rate_limited", "bad_request", "overloaded"]

_FAILURES: dict[str, Failure] = {
    name: Failure(name, before_output=True, answer=name)
    for name in ("rate_limited", "bad_request", "overloaded")
}


@dataclass(frozen=True)
class Refused(Kind):
    """Attempt ``n`` gets ``answers[n - 1]`` (the last one again after them
    when ``every``), the attempts after them the answer."""

    answers: tuple[Answer, ...] = ("rate_limited",)
    every: bool = False

    layers = frozenset({"retries"})
    per_attempt = True

    def failure(self, attempt: int) -> Failure | None:
        if attempt <= len(self.answers):
            return _FAILURES[self.answers[attempt - 1]]
        return _FAILURES[self.answers[-1]] if self.every and self.answers else None
