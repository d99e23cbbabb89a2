"""The silence kind: the upstream says nothing for a while, and the hop must not cut the stream."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Any, Literal

from ..delivery import Unit
from .base import Kind, Limits, at_least

__all__ = ["DEFAULT_SILENCE", "KEEPALIVE_EVERY", "SHORT_SILENCE", "Silence", "Where"]

#: Where a silence case is silent: before its first event, or after a call.
Where = Literal["start", "after_tool"]
#: A silence's seconds when the request's tag sets none: past the common
#: proxies' idle timeouts, nginx's 60 s ``proxy_read_timeout`` first.
DEFAULT_SILENCE = 75.0
#: The silence of the cells that do not probe the route's idle timeout (each
#: route's first client protocol does, with ``--silence``): long enough for a
#: few keep-alives, short enough that every protocol's cells cost little.
SHORT_SILENCE = 3.0
#: Keep-alives during a silence come this often (at most), as the providers'
#: own do (Anthropic's pings, OpenAI's and Gemini's comment lines).
KEEPALIVE_EVERY = 15.0


@dataclass(frozen=True)
class Silence(Kind):
    """The upstream says nothing for ``--silence`` seconds at ``where``; the
    client's own reads outwait it, so that a cut is the hop's, and the
    ``completion`` layer says when the hop cut it (``silent_since``)."""

    where: Where = "start"

    silent = True

    @property
    def clock_events(self) -> str | None:
        return "how many keep-alives a silence holds is the clock's"

    def units(self, units: list[Unit], keepalives: list[Unit], silence: float | None) -> list[Unit]:
        """The silence before the first unit (``start``), or right after the
        call's last fragment (``after_tool``: its end and the finish follow
        it), with ``keepalives`` spread over it (Bedrock's EventStream has
        none: silence alone)."""
        seconds = DEFAULT_SILENCE if silence is None else silence
        if self.where == "start":
            at = 0
        else:
            at = max(i for i, u in enumerate(units) if u.kind == "arguments") + 1
        beats = [p for p in keepalives if p.data]
        if beats:
            count = max(1, int(seconds // min(KEEPALIVE_EVERY, max(seconds / 4, 0.05))))
            step = seconds / (count + 1)
            silent = [replace(beats[i % len(beats)], pause=step) for i in range(count)]
            resume = replace(units[at], pause=max(units[at].pause, step))
        else:
            silent = []
            resume = replace(units[at], pause=max(units[at].pause, seconds))
        return [*units[:at], *silent, resume, *units[at + 1 :]]

    def tag_options(self, limits: Limits) -> dict[str, float]:
        return {"silence": limits.silence}

    def limits(self, limits: Limits) -> Limits:
        # The kit's own reads outwait the silence: a cut is the hop's.
        return at_least(limits, read=limits.silence + 10.0, total=limits.silence + 60.0)

    def silent_since(self, entry: Mapping[str, Any]) -> float | None:
        """At the response's head for a silence before the first event, after
        the call's last fragment for one after it."""
        if self.where == "start":
            value = entry.get("t")
            return float(value) if isinstance(value, int | float) else None
        times = [
            w[0] for w in entry.get("writes") or [] if any(k.startswith("arguments") for k in w[3])
        ]
        return float(times[-1]) if times else None
