"""The judge's vocabulary: what a layer rule reads, what it returns, and a judged cell.

A cell is one (case, client protocol, upstream protocol, delivery). Each of
its layers, names fixed (``LAYERS``), gets a ``Check``: a verdict (``pass``,
``fail``, ``degraded``, ``not_applicable``; names fixed), why, and the tags
the degradation verdicts read (``judge/verdicts.py``). A rule reads ``Inputs``:
the case and its facts (``cases.truth``), what the client saw
(``raw.Observation``), what the mock logged of the request, and
streamwire's own translation of the upstream's stream into the client's
protocol (``Reference``), which says what the client protocol cannot carry.
The rules themselves are ``judge/rules.py`` (content) and ``judge/timed.py`` (timing).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, Literal

from ...result import StreamResult
from ..client.raw import Observation
from ..vocab.cases import Case, Truth

__all__ = [
    "FIRM_MARGIN",
    "LAYERS",
    "TIMING_TAGS",
    "Cell",
    "Check",
    "Inputs",
    "Reference",
    "Verdict",
    "clock_decided",
    "repeated",
]

Verdict = Literal["pass", "fail", "degraded", "not_applicable"]
#: The tags of the timed layers' findings (``judge/timed.py``; the slow reader's
#: ``unblocked``, a hold under the bound whose upstream never blocked; the
#: head-of-line case's ``head_of_line``) that a clock decided
#: (the others: ``not_streamed``, the gateway's request to the mock said
#: ``stream: false``, and ``kept_open``, the mock wrote its whole answer after
#: the hang-up, are facts of the log whatever the machine's load).
TIMING_TAGS = frozenset({"held", "delayed", "arguments_held", "slow", "unblocked", "head_of_line"})
#: A timed finding this far past its bound (``details["margin_ms"]``) is a fact
#: of the hop, not of the clock (``details["firm"]``).
FIRM_MARGIN = 0.5


def clock_decided(tags: Sequence[str], details: Mapping[str, Any]) -> bool:
    """A finding a clock alone raised, too near its bound to be a fact: all its
    tags are ``TIMING_TAGS`` and it is not ``firm``."""
    found = set(tags)
    return bool(found) and found <= TIMING_TAGS and details.get("firm") is not True


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
    "head_of_line",
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
    #: The cell's runs when it ran more than once (``--repeat``), oldest first:
    #: this cell is the worst of them (``repeated``).
    runs: list[Cell] = field(default_factory=list)
    #: A ``curl`` command that sends the cell's request again, the key left to
    #: the shell (``report/reproduce.py``): in the JSON of a failing or flaky cell.
    reproduce: str | None = None
    #: How the client reached the gateway (``vocab/transport.py``; ``sdk``:
    #: the SDK's own HTTP client).
    transport: str = "http1"

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

    @property
    def flaky(self) -> bool:
        """Its repeated runs differ in a verdict no clock decided (``outcome``)."""
        outcomes = {run.outcome for run in self.runs if not run.inconclusive}
        return len(outcomes) > 1

    @property
    def outcome(self) -> tuple[tuple[str, str], ...]:
        """What the cell found, less what a clock decided: each layer's verdict,
        a clock-decided finding (``timed.clock_decided``) counted as a pass."""
        return tuple(
            (layer, "pass" if _clocked(c) else c.verdict) for layer, c in self.checks.items()
        )

    @property
    def state(self) -> str:
        """``flaky``, ``fail``, ``degraded``, ``inconclusive`` or ``pass``."""
        if self.flaky:
            return "flaky"
        if self.failed:
            return "fail"
        if self.degraded:
            return "degraded"
        return "inconclusive" if self.inconclusive else "pass"

    def repeat_record(self) -> dict[str, Any] | None:
        """The repeated runs in brief: each one's layers and failing reasons,
        how many failed, and each layer's verdicts counted."""
        if not self.runs:
            return None
        per_layer: dict[str, dict[str, int]] = {}
        for run in self.runs:
            for layer, verdict in run.layers.items():
                counts = per_layer.setdefault(layer, {})
                counts[verdict] = counts.get(verdict, 0) + 1
        return {
            "count": len(self.runs),
            "failed": sum(run.failed for run in self.runs),
            "flaky": self.flaky,
            "layers": {k: v for k, v in per_layer.items() if len(v) > 1},
            "runs": [
                {
                    "tag": run.evidence.get("tag"),
                    "layers": run.layers,
                    "inconclusive": run.inconclusive,
                    "failing": {
                        layer: c.why
                        for layer, c in run.checks.items()
                        if c.verdict in ("fail", "degraded")
                    },
                }
                for run in self.runs
            ],
        }

    def as_dict(self) -> dict[str, Any]:
        notes = {
            layer: {"verdict": c.verdict, "why": c.why, "tags": list(c.tags), **c.details}
            for layer, c in self.checks.items()
            if c.verdict != "not_applicable" or c.why
        }
        out = {
            "case": self.case,
            "client": self.client,
            "upstream": self.upstream,
            "delivery": self.delivery,
            "transport": self.transport,
            "route": self.route,
            "inconclusive": self.inconclusive,
            "layers": self.layers,
            "evidence": {"layers": notes, **self.evidence},
        }
        repeat = self.repeat_record()
        if repeat is not None:
            out["flaky"] = self.flaky
            out["repeat"] = repeat
        if self.reproduce and self.state in ("fail", "flaky"):
            out["reproduce"] = self.reproduce
        return out


def _clocked(check: Check) -> bool:
    return clock_decided(check.tags, check.details)


def repeated(runs: list[Cell]) -> Cell:
    """One cell from its repeated runs: the worst conclusive run (a failing
    layer first, then a degraded one), carrying them all."""
    rank = {"fail": 2, "degraded": 1}

    def badness(run: Cell) -> tuple[int, int, int]:
        worst = max((rank.get(c.verdict, 0) for c in run.checks.values()), default=0)
        bad = sum(rank.get(c.verdict, 0) for c in run.checks.values())
        return (not run.inconclusive, worst, bad)

    chosen = max(runs, key=badness)
    return replace(chosen, runs=list(runs))


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
    #: The head-of-line case's request beside the stream (``kinds.head_of_line``):
    #: what its client saw, and its mock log entry.
    beside_obs: Observation | None = None
    beside_entry: dict[str, Any] | None = None
