"""The judge's vocabulary: what a layer rule reads, what it returns, and a judged cell.

A cell is one (case, client protocol, upstream protocol, delivery). Each of
its layers, names fixed (``LAYERS``), gets a ``Check``: a verdict (``pass``,
``fail``, ``degraded``, ``not_applicable``; names fixed), why, and the tags
the degradation verdicts read (``verdicts.py``). A rule reads ``Inputs``:
the case and its facts (``cases.truth``), what the client saw
(``client.Observation``), what the mock logged of the request, and
streamwire's own translation of the upstream's stream into the client's
protocol (``Reference``), which says what the client protocol cannot carry.
The rules themselves are ``judge.py`` (content) and ``timing.py`` (timing).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

from ..result import StreamResult
from .cases import Case, Truth
from .client import Observation

__all__ = ["LAYERS", "Cell", "Check", "Inputs", "Reference", "Verdict"]

Verdict = Literal["pass", "fail", "degraded", "not_applicable"]
LAYERS = (
    "http",
    "framing",
    "deltas",
    "tool_calls",
    "tool_results",
    "completion",
    "usage",
    "streaming",
    "cancel",
    "backpressure",
    "retries",
    "request",
    "credentials",
    "request_id",
    "sdk",
)


@dataclass
class Check:
    """One layer's verdict, why, and tags the verdict rules read (``missing``, ...)."""

    verdict: Verdict
    why: str = ""
    tags: tuple[str, ...] = ()
    details: dict[str, Any] = field(default_factory=dict)


@dataclass
class Reference:
    """streamwire's own translation of the upstream's stream into the client protocol."""

    result: StreamResult
    downgrades: dict[str, str]


@dataclass
class Cell:
    """The judgement of one (case, client, upstream, delivery)."""

    case: str
    client: str
    upstream: str | None
    delivery: str
    #: Every layer's check, in ``LAYERS`` order.
    checks: dict[str, Check]
    evidence: dict[str, Any]
    route: str = ""

    @property
    def layers(self) -> dict[str, Verdict]:
        """Every layer's verdict."""
        return {layer: check.verdict for layer, check in self.checks.items()}

    @property
    def failed(self) -> bool:
        """Some layer failed."""
        return any(c.verdict == "fail" for c in self.checks.values())

    @property
    def failing(self) -> list[str]:
        """The layers that failed, in ``LAYERS`` order."""
        return [layer for layer, c in self.checks.items() if c.verdict == "fail"]

    @property
    def inconclusive(self) -> bool:
        """The kit's own limit (a timeout) cut the cell short: no gateway verdict."""
        return any("kit_limit" in c.tags for c in self.checks.values())

    @property
    def degraded(self) -> bool:
        """No layer failed and some layer is a declared downgrade."""
        return not self.failed and any(c.verdict == "degraded" for c in self.checks.values())

    def as_dict(self) -> dict[str, Any]:
        notes = {
            layer: {"verdict": c.verdict, "why": c.why, "tags": list(c.tags), **c.details}
            for layer, c in self.checks.items()
            if c.verdict != "not_applicable" or c.why
        }
        return {
            "case": self.case,
            "client": self.client,
            "upstream": self.upstream,
            "delivery": self.delivery,
            "route": self.route,
            "inconclusive": self.inconclusive,
            "layers": self.layers,
            "evidence": {"layers": notes, **self.evidence},
        }


@dataclass
class Inputs:
    """Everything one layer rule may look at."""

    case: Case
    client: str
    upstream: str | None
    delivery: str
    obs: Observation
    entry: dict[str, Any] | None
    follow_obs: Observation | None
    follow_entry: dict[str, Any] | None
    truth: Truth
    ref: Reference | None
    http_ok: bool = False
    #: The layers judged so far, in ``LAYERS`` order (a rule may read an earlier one's).
    checks: dict[str, Check] = field(default_factory=dict)
    #: A retry case's attempts, as the mock logged them, oldest first.
    attempts: list[dict[str, Any]] = field(default_factory=list)
    #: The fingerprint (``mock.fingerprint``) of the kit's key to the gateway.
    key_sha256: str | None = None
    #: The route passes the client's key on by design (``Route.key_passthrough``).
    key_passthrough: bool = False
