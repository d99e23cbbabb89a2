"""Load: many streams at once, each judged as a cell is, and what the gateway added.

A load run keeps ``concurrency`` streams in flight until ``streams`` were
sent or ``duration`` passed, cycling through the plan's (case, client,
delivery) cells. Every stream is a cell of its own (``check.judged_stream``),
judged by the same rules; its text carries its tag (``cases.salted``), so
text written for another stream is caught by name (``cross_talk``), not only
as a text that differs.

The same load runs straight to the mock first (``DIRECT``): the reference
for what the gateway adds to each latency percentile, and the generator's
own measure, which tells a clock-decided verdict that is the generator's
(``GENERATOR_SHARE``, ``BUSY_CORE``, ``LATE_LOOP``) from the gateway's.
While a target runs, the mock's connections are sampled
(``MockUpstream.load_state``); a request still in flight after ``settle``,
or a connection the gateway never closed after its client hung up, is
``upstream_leaked``. Without a mock URL the mock runs in a process of its
own, so that its CPU is not the generator's.

Everything a run keeps is bounded however long it runs (``LATENCY_SAMPLE``
through ``Reservoir``, ``EVIDENCE_PER_VERDICT``, ``KNOWN_TAGS``).
docs/kit/load.md says which verdicts fail under load, and why.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import json
import math
import os
import random
import statistics
import sys
import time
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import IO, Any

from ..client.raw import Observation
from ..judge.cell import Cell, Check
from ..judge.timed import HELD_SPAN, TIMING_TAGS
from ..judge.verdicts import ACCEPTABLE, cell_verdicts
from ..upstream.mock import MockUpstream
from ..vocab.cases import CASES, SALT_MARK
from ..vocab.httpio import within
from .check import CheckPlan, Route, _Log, judged_stream, tag_number

__all__ = [
    "LOAD_CASES",
    "LOAD_DELIVERIES",
    "LoadPlan",
    "LoadReport",
    "Reservoir",
    "StreamRecord",
    "TargetRun",
    "percentiles",
    "run_load",
]

#: The cases a load run mixes unless told: text, calls, usage and a hang-up,
#: the shapes whose mix-ups under load the cells can tell apart.
LOAD_CASES = ("short-text", "split-anywhere", "single-tool", "parallel-tools", "usage", "cancel")
#: ... written whole and paced (a paced stream takes 1.5 s: the load's long-lived ones).
LOAD_DELIVERIES = ("whole", "paced")
#: The gaps between arrivals a stream's record keeps.
MAX_GAPS = 64
#: The latency metrics: to the head, to the first event, between events, to the end.
_METRICS = ("headers", "first_event", "gap", "total")
#: The values of each latency metric a target keeps (a uniform sample beyond).
LATENCY_SAMPLE = 20_000
#: The streams whose case and client a run remembers, to name a stream whose
#: text turns up in another (the newest; an older one is named by its tag only).
KNOWN_TAGS = 100_000
#: The evidence (the cell, as a check reports it) kept for each verdict.
EVIDENCE_PER_VERDICT = 3
#: How often the mock's connections are sampled (seconds).
SAMPLE_EVERY = 0.25
#: The samples a target keeps (the oldest thinned out beyond).
MAX_SAMPLES = 2400
#: A clock-decided verdict is the generator's when the direct run shows it at
#: least this share as often as the gateway's.
GENERATOR_SHARE = 0.5
#: The generator is the bound when its process was busy this share of a core ...
BUSY_CORE = 0.85
#: ... or its event loop ran this late (seconds, 95th percentile of the samples).
LATE_LOOP = 0.1
#: Under load, a stream that streamed but late is a latency (the added
#: latency's percentiles), not a fault: only content held back fails.
LATENCY_VERDICTS = frozenset({"stream_delayed"})
#: A hop that holds a call's arguments holds them in every call it relays; a
#: stall of a busy gateway holds the few calls it overlaps. Under load,
#: ``arguments_buffered`` fails in at least this share of the streams whose
#: arguments were judged (below it, the stalls are latency).
ARGUMENTS_HELD_SHARE = 0.2
#: ... and a clock's verdict is nobody's when the machine's CPUs (all of them,
#: the gateway's and the mock's included) were busy this share of a run.
MACHINE_BUSY = 0.9
#: How often a stream's judge reads the mock's log while it waits (seconds;
#: the verdicts are taken from the log's timestamps, not from when it was read).
LOAD_POLL = 0.1
#: How long a hang-up's upstream request may take to end before it is judged:
#: past the cancel case's whole answer, so that an upstream still open is a
#: fact of the log (the mock wrote to its end) and a late close a clock's.
LOAD_CANCEL_WAIT = 12.0
#: The name of the target straight to the mock.
DIRECT = "direct"
#: The verdict of a leak after the settle.
UPSTREAM_LEAKED = "upstream_leaked"
LEAK_ADVICE = (
    "the gateway left upstream connections open, or requests running, after its client "
    "hung up: each is a socket and a slot held (and, at a provider, billed) for nobody; "
    "under steady load they add up until the pool or the provider's limit runs dry. Close "
    "the upstream request when the client goes, on every path (a cancel, a timeout, an "
    "error), and count open upstream connections in the gateway's metrics"
)


@dataclass
class LoadPlan:
    """What ``run_load`` runs: the check's routes, clients, cases and deliveries
    as the mix, at ``concurrency`` streams in flight, ``streams`` per target or
    for ``duration`` seconds (the first reached; neither: ten per slot)."""

    check: CheckPlan
    concurrency: int = 50
    streams: int | None = None
    duration: float | None = None
    #: The same load straight to the mock first (the reference and the generator's figures).
    direct: bool = True
    #: After a target's last stream, how long the mock's connections may take to close.
    settle: float = 6.0

    def __post_init__(self) -> None:
        if self.concurrency < 1:
            raise ValueError("a load needs a concurrency of at least 1")
        if self.streams is not None and self.streams < 1:
            raise ValueError("a load needs at least one stream")
        if self.duration is not None and not self.duration > 0:
            raise ValueError("a load's duration must be positive")
        if not self.check.routes:
            raise ValueError("a load needs a route to the gateway")
        if not self.mix():
            raise ValueError("the plan's cases, clients and deliveries give no streamed cell")

    def mix(self) -> list[tuple[str, str, str]]:
        """(case, client, delivery) of each stream, in the order they cycle."""
        first = self.check.routes[0].name
        return [(k[1], k[2], k[3]) for k in self.check.keys() if k[0].name == first]

    @property
    def count(self) -> int | None:
        """Streams per target: ``streams``, or ten per slot without a duration."""
        if self.streams is not None:
            return self.streams
        return None if self.duration is not None else 10 * self.concurrency


@dataclass
class StreamRecord:
    """What a load run keeps of one stream."""

    target: str
    case: str
    client: str
    delivery: str
    tag: str
    #: (verdict, layer) of each failing or degraded layer (``cross_talk`` included).
    verdicts: list[tuple[str, str]]
    status: int | None
    error_type: str | None
    #: Seconds after the request was sent: the head, the first content, the end.
    headers: float | None
    first_event: float | None
    total: float | None
    gaps: list[float]
    events: int
    cancelled: bool
    #: The kit's own limit (a timeout) cut the stream short: no gateway verdict.
    inconclusive: bool
    #: Some verdict that fails a run (any but the acceptable ones).
    failed: bool
    #: The verdicts a clock decided (each of its layers' tags is a timing's).
    timed: list[str]
    #: The streaming layer judged a call's arguments (the mock spread them over
    #: ``ARGUMENTS_SPAN``): the streams ``arguments_buffered`` could be.
    arguments_judged: bool = False


class Reservoir:
    """A uniform sample of at most ``size`` of the values added, each as likely
    kept as any other (Vitter's algorithm R, seeded: the same values added keep
    the same sample); ``n`` counts every value."""

    def __init__(self, size: int = LATENCY_SAMPLE, seed: int = 0) -> None:
        self.size = size
        self.values: list[float] = []
        self.n = 0
        self._random = random.Random(seed)

    def add(self, value: float) -> None:
        self.n += 1
        if len(self.values) < self.size:
            self.values.append(value)
            return
        slot = self._random.randrange(self.n)
        if slot < self.size:
            self.values[slot] = value

    def percentiles(self, points: Sequence[int] = (50, 95, 99)) -> dict[str, Any]:
        """``percentiles`` of the sample; ``n`` all values, ``sampled`` the
        sample's size when it is not all of them."""
        out = percentiles(self.values, points)
        if self.n > len(self.values):
            out["sampled"] = out["n"]
        out["n"] = self.n
        return out


@dataclass
class VerdictTally:
    """A verdict's count over a target's streams."""

    streams: int = 0
    layers: Counter[str] = field(default_factory=Counter)
    cases: Counter[str] = field(default_factory=Counter)
    #: Every stream's clock decided it.
    timed: bool = True


@dataclass
class TargetRun:
    """One target's streams (counted as they are judged), samples and what
    stayed open after them."""

    name: str
    route: Route
    #: Streams judged, those the kit cut short, their events, and the hang-ups.
    judged: int = 0
    inconclusive: int = 0
    events: int = 0
    #: Each set of verdict names a stream had -> the streams with exactly it.
    verdict_sets: Counter[frozenset[str]] = field(default_factory=Counter)
    verdicts: dict[str, VerdictTally] = field(default_factory=dict)
    #: Statuses other than 200 and in-stream error types, of streams of cases
    #: that expect none (``LoadReport.errors``).
    statuses: Counter[str] = field(default_factory=Counter)
    error_types: Counter[str] = field(default_factory=Counter)
    #: Each latency metric over the streams that ran to their end.
    latencies: dict[str, Reservoir] = field(
        default_factory=lambda: {m: Reservoir(seed=i) for i, m in enumerate(_METRICS)}
    )
    #: The lowest and highest sequence number of the run's tags (``tag_number``).
    tag_span: tuple[int, int] | None = None
    #: The tags of streams the client hung up on whose connection may still be
    #: open, with when they were added (``monotonic``).
    hung_up: dict[str, float] = field(default_factory=dict)
    #: (verdict, layer) -> the first few streams' evidence.
    evidence: dict[tuple[str, str], list[dict[str, Any]]] = field(default_factory=dict)
    #: [seconds since the start, open connections, in flight, loop lateness].
    samples: list[list[float]] = field(default_factory=list)
    wall: float = 0.0
    cpu: float = 0.0
    #: After the settle: the mock's open connections, and the leaks among them.
    after: dict[str, Any] = field(default_factory=dict)
    leaks: list[dict[str, Any]] = field(default_factory=list)
    mock_answered: bool = True
    #: The share of the machine's CPU time busy while the run ran (None: not known).
    machine_busy: float | None = None
    #: Time to the response head of the whole-delivery streams (a hop that holds
    #: has nothing to hold there: they time how late it answers at all), and the
    #: latest head of a stream held (``not_streaming``).
    whole_heads: Reservoir = field(default_factory=lambda: Reservoir(seed=99))
    latest_held_head: float | None = None
    #: Streams the kit itself failed to run (an exception of its own), and the first few.
    kit_errors: int = 0
    kit_error_examples: list[str] = field(default_factory=list)
    #: Streams whose calls' arguments the streaming layer judged.
    arguments_judged: int = 0

    def add(self, record: StreamRecord) -> None:
        """Counts one judged stream."""
        self.judged += 1
        self.arguments_judged += record.arguments_judged
        self.inconclusive += record.inconclusive
        self.events += record.events
        names = frozenset(v for v, _ in record.verdicts)
        self.verdict_sets[names] += 1
        for name in names:
            tally = self.verdicts.setdefault(name, VerdictTally())
            tally.streams += 1
            tally.cases[record.case] += 1
            tally.timed = tally.timed and name in record.timed
        for name, layer in record.verdicts:
            self.verdicts[name].layers[layer] += 1
        if not CASES[record.case].error and not record.cancelled:
            # (a hang-up may come before the answer)
            if record.status is None:
                self.statuses["no answer"] += 1
            elif record.status != 200:
                self.statuses[str(record.status)] += 1
            elif record.error_type is not None:
                self.error_types[record.error_type] += 1
        if record.headers is not None and not record.cancelled:
            if record.delivery == "whole":
                self.whole_heads.add(record.headers)
            if "not_streaming" in names:
                latest = self.latest_held_head or 0.0
                self.latest_held_head = max(latest, record.headers)
        if not record.cancelled and record.status == 200:
            for metric in ("headers", "first_event", "total"):
                value = getattr(record, metric)
                if value is not None:
                    self.latencies[metric].add(value)
            for gap in record.gaps:
                self.latencies["gap"].add(gap)
        number = tag_number(record.tag)
        if number is not None:
            low, high = self.tag_span or (number, number)
            self.tag_span = (min(low, number), max(high, number))
        if record.cancelled:
            self.hung_up[record.tag] = time.monotonic()

    def ours(self, tag: object) -> bool:
        """``tag`` is of a stream this run sent."""
        number = tag_number(tag) if isinstance(tag, str) else None
        return (
            number is not None
            and self.tag_span is not None
            and (self.tag_span[0] <= number <= self.tag_span[1])
        )

    def forget_closed(self, state: dict[str, Any], asked: float) -> None:
        """Drops the hang-ups whose connection ``state`` (the mock's, asked for
        at ``asked``) shows closed, or carrying a later request: those can no
        longer leak. Nothing is dropped when the state lists only some."""
        rows = state.get("connections")
        if not isinstance(rows, list) or len(rows) < state.get("open_connections", 0):
            return
        last = {tag for row in rows if (tag := _last_tag(row)) is not None}
        self.hung_up = {t: at for t, at in self.hung_up.items() if at >= asked or t in last}


def _last_tag(row: object) -> str | None:
    """The tag of the last request on one of the mock's connection rows, if
    it is a string: the rows come over HTTP (``--mock URL``), and a value of
    another type (a list is unhashable) names no stream of ours."""
    last = row.get("last") if isinstance(row, dict) else None
    tag = last.get("tag") if isinstance(last, dict) else None
    return tag if isinstance(tag, str) else None


def percentiles(values: Sequence[float], points: Sequence[int] = (50, 95, 99)) -> dict[str, Any]:
    """Nearest-rank percentiles (``p50``...) of ``values``, rounded to 0.1 ms, and the count."""
    ordered = sorted(v for v in values if isinstance(v, int | float) and math.isfinite(v))
    out: dict[str, Any] = {"n": len(ordered)}
    for p in points:
        out[f"p{p}"] = (
            round(ordered[max(0, math.ceil(p / 100 * len(ordered)) - 1)], 4) if ordered else None
        )
    return out


def _foreign_tags(text: str, own: str) -> list[str]:
    return sorted({m.group(1) for m in SALT_MARK.finditer(text) if m.group(1) != own})


def _cross_talk(cell: Cell, obs: Observation, known: dict[str, tuple[str, str]]) -> None:
    """Marks the cell's ``deltas`` layer ``cross_talk`` when its text carries
    another stream's tag, naming that stream."""
    own = str(cell.evidence.get("tag", ""))
    texts = [obs.result.text] if obs.result is not None else []
    foreign = _foreign_tags("".join(texts), own)
    if not foreign:
        return
    names = []
    for tag in foreign[:3]:
        case, client = known.get(tag, ("?", "?"))
        if case != "?":
            names.append(f"{tag} ({case}, {client})")
        elif tag_number(tag) is not None:
            names.append(f"{tag} (an earlier stream of this run)")
        else:
            names.append(f"{tag} (not this process's)")
    more = f" and {len(foreign) - 3} more" if len(foreign) > 3 else ""
    why = f"text written for stream {', '.join(names)}{more} arrived in this stream ({own})"
    old = cell.checks.get("deltas") or Check("not_applicable")
    cell.checks["deltas"] = Check(
        "fail", why, (*old.tags, "cross_talk"), {**old.details, "foreign_tags": foreign[:20]}
    )


def _record(target: str, cell: Cell, obs: Observation) -> StreamRecord:
    times = obs.times()
    arrivals = [t for t, _, _ in obs.content]
    gaps = [round(b - a, 5) for a, b in itertools.pairwise(arrivals[: MAX_GAPS + 1])]
    found = cell_verdicts(cell)
    timed = sorted(
        {
            name
            for name, _ in found
            if all(
                set(cell.checks[layer].tags) and set(cell.checks[layer].tags) <= TIMING_TAGS
                for v, layer in found
                if v == name
            )
        }
    )
    error = obs.result.error if obs.result is not None else None
    streaming = cell.checks.get("streaming")
    judged_calls = streaming.details.get("arguments_streamed") if streaming else None
    return StreamRecord(
        target=target,
        case=cell.case,
        client=cell.client,
        delivery=cell.delivery,
        tag=str(cell.evidence.get("tag", "")),
        verdicts=found,
        status=obs.status,
        error_type=error.type if error is not None and isinstance(error.type, str) else None,
        headers=times.get("headers"),
        first_event=times.get("first_content"),
        total=None if obs.ended_at is None else round(obs.ended_at - obs.sent_at, 4),
        gaps=gaps,
        events=obs.event_count,
        cancelled=obs.cancelled_at is not None,
        inconclusive=cell.inconclusive,
        failed=any(name not in ACCEPTABLE for name, _ in found),
        timed=timed,
        arguments_judged=bool(judged_calls),
    )


class _Sampler:
    """Samples the mock's state and the loop's lateness every ``SAMPLE_EVERY`` seconds."""

    def __init__(self, log: _Log, run: TargetRun, started: float) -> None:
        self.log, self.run, self.started = log, run, started
        self.stopped = False

    async def stop(self, sampling: asyncio.Future[None]) -> None:
        """Ends ``sampling`` (this sampler's task). Its cancel alone did not:
        a poll of the mock in flight swallowed it (``asyncio.wait_for``, which
        the kit's limits used, returns the inner result when it completes as
        the cancel arrives; they now go through ``httpio.within``, but 3.10's
        still does), and the loop then polled the mock for ever after the run;
        the flag ends it at its next turn."""
        self.stopped = True
        sampling.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await sampling

    async def __call__(self) -> None:
        while not self.stopped:
            asked = time.monotonic()
            await asyncio.sleep(SAMPLE_EVERY)
            late = max(0.0, time.monotonic() - asked - SAMPLE_EVERY)
            asked = time.monotonic()
            state = await self.log.state()
            if state is None:
                self.run.mock_answered = False
                opened, flying = -1.0, -1.0
            else:
                opened, flying = float(state["open_connections"]), float(state["in_flight"])
                self.run.forget_closed(state, asked)
            self.run.samples.append(
                [round(time.monotonic() - self.started, 3), opened, flying, round(late, 4)]
            )
            if len(self.run.samples) > MAX_SAMPLES:
                del self.run.samples[::2]


async def _settle(
    log: _Log, run: TargetRun, settle: float
) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """The mock's state once nothing the run started is open (or ``settle``
    passed), and the leaks in it."""
    deadline = time.monotonic() + settle
    while True:
        state = await log.state()
        if state is None:
            return {}, []
        leaks = _leaks(state, run)
        if (not leaks and state["in_flight"] == 0) or time.monotonic() > deadline:
            return {
                "open_connections": state["open_connections"],
                "in_flight": state["in_flight"],
            }, leaks
        await asyncio.sleep(0.1)


def _leaks(state: dict[str, Any], run: TargetRun) -> list[dict[str, Any]]:
    """The run's requests still in flight, and the open connections whose last
    request was a stream the client hung up on and the gateway never closed."""
    out: list[dict[str, Any]] = []
    for row in state.get("requests", []):
        if isinstance(row, dict) and run.ours(row.get("tag")):
            out.append({"kind": "in flight", "tag": row["tag"], "case": row.get("case")})
    for row in state.get("connections", []):
        tag = _last_tag(row)
        if tag is None or tag not in run.hung_up:
            continue
        last = row["last"]
        if last.get("ended") and not last.get("disconnected"):
            out.append({"kind": "connection open", "tag": tag, "case": last.get("case")})
    return out


async def _target(
    plan: LoadPlan,
    log: _Log,
    name: str,
    route: Route,
    known: dict[str, tuple[str, str]],
    on_stream: Callable[[StreamRecord], None] | None,
) -> TargetRun:
    run = TargetRun(name, route)
    mix = plan.mix()
    order = itertools.cycle(mix)
    count = plan.count
    started = time.monotonic()
    cpu0 = time.process_time()
    stop_at = started + plan.duration if plan.duration is not None else math.inf
    sent = 0

    async def worker() -> None:
        nonlocal sent
        while (count is None or sent < count) and time.monotonic() < stop_at:
            sent += 1
            case_name, client, delivery = next(order)
            try:
                cell, obs = await judged_stream(
                    plan.check,
                    log,
                    route,
                    CASES[case_name],
                    client,
                    delivery,
                    salt=True,
                    cancel_wait=LOAD_CANCEL_WAIT,
                )
            except Exception as exc:  # the kit's own fault: said, and the load goes on
                run.kit_errors += 1
                if len(run.kit_error_examples) < EVIDENCE_PER_VERDICT:
                    run.kit_error_examples.append(f"{case_name} {client} {delivery}: {exc!r}")
                continue
            cell.route = name
            tag = str(cell.evidence.get("tag", ""))
            known[tag] = (case_name, client)
            if len(known) > KNOWN_TAGS:
                del known[next(iter(known))]
            _cross_talk(cell, obs, known)
            record = _record(name, cell, obs)
            run.add(record)
            for verdict in record.verdicts:
                kept = run.evidence.setdefault(verdict, [])
                if len(kept) < EVIDENCE_PER_VERDICT:
                    kept.append(cell.as_dict())
            if on_stream is not None:
                on_stream(record)

    sampler = _Sampler(log, run, started)
    sampling = asyncio.ensure_future(sampler())
    machine0 = _machine_times()
    try:
        await asyncio.gather(*(worker() for _ in range(plan.concurrency)))
        run.wall = time.monotonic() - started
        run.cpu = time.process_time() - cpu0
        run.machine_busy = _busy_share(machine0, _machine_times())
        run.after, run.leaks = await _settle(log, run, plan.settle)
    finally:
        await sampler.stop(sampling)
    return run


def _machine_times() -> tuple[int, int] | None:
    """(busy, all) CPU time of the whole machine so far, in ticks (Linux's
    ``/proc/stat``); None elsewhere."""
    try:
        with open("/proc/stat", encoding="ascii") as stat:
            fields = stat.readline().split()
    except OSError:
        return None
    if not fields or fields[0] != "cpu":
        return None
    try:
        ticks = [int(f) for f in fields[1:9]]
    except ValueError:
        return None
    idle = sum(ticks[3:5])  # idle, iowait
    return sum(ticks) - idle, sum(ticks)


def _late_to_answer(run: TargetRun, name: str) -> str | None:
    """Why a run's held streams are its gateway's lateness to answer at all, or
    None: every held stream's head came no later than the whole answers' heads
    did at the 90th percentile (a hop that holds answers whole sends those at
    once; one too busy to start is as late with them)."""
    if name != "not_streaming" or run.latest_held_head is None:
        return None
    heads = run.whole_heads.values
    if len(heads) < 10:
        return None
    p90 = statistics.quantiles(heads, n=10)[-1]
    if run.latest_held_head > p90 or p90 < HELD_SPAN:
        return None
    return (
        f"the gateway was late to answer at all: the whole answers' heads came {p90:.2f} s "
        f"after their requests at the 90th percentile, and no held stream's later "
        f"({run.latest_held_head:.2f} s): a short paced answer was written whole before "
        "its head left. That is latency under load (the added latency says how much), "
        "not a hop that holds"
    )


def _stalled_calls(run: TargetRun, name: str) -> str | None:
    """Why a run's held arguments are its gateway's stalls, or None: they were
    held in fewer than ``ARGUMENTS_HELD_SHARE`` of the streams whose arguments
    were judged."""
    tally = run.verdicts.get(name)
    if name != "arguments_buffered" or tally is None or not run.arguments_judged:
        return None
    share = tally.streams / run.arguments_judged
    if share >= ARGUMENTS_HELD_SHARE:
        return None
    return (
        f"held in {tally.streams} of the {run.arguments_judged} streams whose arguments were "
        f"judged ({share:.0%}): a hop that holds a call's arguments holds them in every "
        "call, a busy gateway's stall in the few it overlaps. That is latency under load "
        "(the added latency says how much)"
    )


def _busy_share(before: tuple[int, int] | None, after: tuple[int, int] | None) -> float | None:
    if before is None or after is None or after[1] <= before[1]:
        return None
    return round((after[0] - before[0]) / (after[1] - before[1]), 3)


async def _mock_process(
    lenient: bool, compress: bool = False
) -> tuple[asyncio.subprocess.Process, str]:
    """The mock in a process of its own, and its URL."""
    command = [sys.executable, "-m", "streamwire.cli", "mock-upstream", "--port", "0"]
    if lenient:
        command.append("--lenient-mock")
    if compress:
        command.append("--compress")
    proc = await asyncio.create_subprocess_exec(
        *command, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.DEVNULL
    )
    assert proc.stdout is not None
    try:
        line = await within(proc.stdout.readline(), 30.0)
    except asyncio.TimeoutError:
        line = b""
    text = line.decode("utf-8", "replace").strip()
    if not text.startswith("listening on "):
        proc.kill()
        await proc.wait()
        raise OSError(f"the mock did not start: {text or 'no output'}")
    return proc, text.removeprefix("listening on ")


async def run_load(
    plan: LoadPlan,
    *,
    on_stream: Callable[[StreamRecord], None] | None = None,
    on_target: Callable[[str], None] | None = None,
) -> LoadReport:
    """Runs the load on each target (direct first, then each route) and judges it."""
    check = plan.check
    proc: asyncio.subprocess.Process | None = None
    mock: MockUpstream | None = None
    async with contextlib.AsyncExitStack() as stack:
        if check.mock_url is None and check.mock_port == 0:
            proc, url = await _mock_process(check.lenient_mock, check.mock_compress)
        elif check.mock_url is None:
            mock = await stack.enter_async_context(
                MockUpstream(
                    port=check.mock_port, lenient=check.lenient_mock, compress=check.mock_compress
                )
            )
            url = mock.url
        else:
            url = check.mock_url
        try:
            log = _Log(mock, url, poll=LOAD_POLL)
            known: dict[str, tuple[str, str]] = {}
            targets: list[tuple[str, Route]] = []
            if plan.direct:
                targets.append((DIRECT, Route(url, "{model}", DIRECT, key_passthrough=True)))
            targets += [(r.name, r) for r in check.routes]
            runs = []
            for name, route in targets:
                if on_target is not None:
                    on_target(name)
                runs.append(await _target(plan, log, name, route, known, on_stream))
        finally:
            if proc is not None:
                with contextlib.suppress(ProcessLookupError):
                    proc.terminate()
                await proc.wait()
    return LoadReport(plan, runs, peak_rss_bytes=_peak_rss(), cores=os.cpu_count() or 1)


def _peak_rss() -> int:
    """The process's peak resident memory in bytes (0 where the platform does not say)."""
    try:
        import resource
    except ImportError:
        return 0
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return int(peak) if sys.platform == "darwin" else int(peak) * 1024  # KiB on Linux


# --- the report ------------------------------------------------------------------------

FORMAT = "streamwire-load/1"


@dataclass
class LoadReport:
    """A load run's findings: per target, the streams judged, failures by verdict
    and layer, errors, latency percentiles, the mock's connections; the
    gateway's added latency against direct; the generator's own figures."""

    plan: LoadPlan
    runs: list[TargetRun]
    peak_rss_bytes: int = 0
    cores: int = 1
    title: str = "streamwire load"
    _summary: dict[str, Any] | None = field(default=None, repr=False)

    def latency(self, run: TargetRun) -> dict[str, dict[str, Any]]:
        """Percentiles of each metric over the streams that ran to their end."""
        return {metric: run.latencies[metric].percentiles() for metric in _METRICS}

    def _direct(self) -> TargetRun | None:
        return next((r for r in self.runs if r.name == DIRECT), None)

    def generator(self) -> dict[str, Any]:
        """The generator's own figures, from the direct run (or the first)."""
        run = self._direct() or (self.runs[0] if self.runs else None)
        if run is None or run.wall <= 0:
            return {}
        cpu = max(run.cpu, 1e-6)
        return {
            "measured_on": run.name,
            "streams": run.judged,
            "streams_per_second": round(run.judged / run.wall, 1),
            "streams_per_cpu_second": round(run.judged / cpu, 1),
            "events_judged_per_cpu_second": round(run.events / cpu, 1),
            "busy_core_share": round(run.cpu / run.wall, 3),
            "peak_rss_bytes": self.peak_rss_bytes,
        }

    def bounded_by_generator(self, run: TargetRun) -> str | None:
        """Why ``run`` was bounded by the generator rather than the gateway, if it was."""
        if run.wall <= 0:
            return None
        busy = run.cpu / run.wall
        lateness = percentiles([s[3] for s in run.samples], (95,))["p95"]
        reasons = []
        if busy >= BUSY_CORE:
            reasons.append(f"the generator's process was busy {busy:.0%} of a core")
        if lateness is not None and lateness >= LATE_LOOP:
            reasons.append(f"its event loop ran {lateness * 1000:.0f} ms late (p95)")
        return "; ".join(reasons) or None

    def findings(self, run: TargetRun) -> list[dict[str, Any]]:
        """Each verdict of ``run``: streams, layers, the first streams' evidence,
        and whether it fails the run (a clock's verdict the direct run shows as
        often is the generator's)."""
        direct = self._direct()
        direct_rates = None
        if direct is not None and direct is not run:
            direct_rates = {name: tally.streams for name, tally in direct.verdicts.items()}
        total = max(1, run.judged)
        out = []
        for name, tally in sorted(run.verdicts.items()):
            entry: dict[str, Any] = {
                "verdict": name,
                "streams": tally.streams,
                "layers": dict(tally.layers),
                "cases": dict(tally.cases),
                "timed": tally.timed,
                "share": round(tally.streams / total, 4),
            }
            entry["evidence"] = [
                e for (v, _), kept in run.evidence.items() if v == name for e in kept
            ][:EVIDENCE_PER_VERDICT]
            fails = name not in ACCEPTABLE
            if fails and run is direct:
                # Straight to the kit's own mock: a clock's verdict is the
                # generator's; any other is a fault of the kit, said as such.
                entry["not_failing"] = (
                    "straight to the mock: the generator's clock"
                    if entry["timed"]
                    else "straight to the mock: the kit's own fault, please report it"
                )
                fails = False
            elif fails and name in LATENCY_VERDICTS:
                entry["not_failing"] = (
                    "under load, content that streams late is latency, not a fault: "
                    "the added latency says how much"
                )
                fails = False
            elif fails and entry["timed"] and (stalls := _stalled_calls(run, name)):
                entry["not_failing"] = stalls
                fails = False
            elif fails and entry["timed"] and (late := _late_to_answer(run, name)):
                entry["not_failing"] = late
                fails = False
            elif fails and entry["timed"] and (bound := self.bounded_by_generator(run)):
                entry["not_failing"] = (
                    f"the generator was the bound ({bound}): its clock, not the gateway's"
                )
                fails = False
            elif fails and entry["timed"] and (run.machine_busy or 0.0) >= MACHINE_BUSY:
                entry["not_failing"] = (
                    f"the machine's CPUs were {run.machine_busy:.0%} busy: a clock's verdict "
                    "cannot be told from the machine's load"
                )
                fails = False
            elif fails and entry["timed"] and direct_rates is not None and direct is not None:
                direct_share = direct_rates.get(name, 0) / max(1, direct.judged)
                entry["direct_share"] = round(direct_share, 4)
                if direct_share >= GENERATOR_SHARE * entry["share"]:
                    entry["not_failing"] = (
                        f"the direct run shows it in {direct_share:.1%} of its streams: "
                        "the generator's clock, not the gateway"
                    )
                    fails = False
            entry["fails"] = fails
            out.append(entry)
        if run.leaks:
            cases = Counter(str(leak.get("case")) for leak in run.leaks)
            out.append(
                {
                    "verdict": UPSTREAM_LEAKED,
                    "streams": len(run.leaks),
                    "layers": {"cancel": len(run.leaks)},
                    "cases": dict(cases),
                    "timed": False,
                    "share": round(len(run.leaks) / total, 4),
                    "evidence": run.leaks[:20],
                    "advice": LEAK_ADVICE,
                    "fails": True,
                }
            )
        return out

    def errors(self, run: TargetRun) -> dict[str, Any]:
        """HTTP statuses other than 200 and in-stream error types, of the cases
        that expect none; 429s apart."""
        statuses = dict(run.statuses)
        limited = statuses.pop("429", 0)
        return {"rate_limited": limited, "statuses": statuses, "types": dict(run.error_types)}

    def summary(self) -> dict[str, Any]:
        if self._summary is not None:
            return self._summary
        direct = self._direct()
        direct_latency = self.latency(direct) if direct is not None else None
        targets = []
        for run in self.runs:
            latency = self.latency(run)
            added: dict[str, Any] | None = None
            if direct_latency is not None and run is not direct:
                added = {
                    metric: {
                        p: (
                            round(latency[metric][p] - direct_latency[metric][p], 4)
                            if latency[metric][p] is not None
                            and direct_latency[metric][p] is not None
                            else None
                        )
                        for p in ("p50", "p95", "p99")
                    }
                    for metric in _METRICS
                }
            findings = self.findings(run)
            failing = {f["verdict"] for f in findings if f["fails"]}
            targets.append(
                {
                    "target": run.name,
                    "base_url": run.route.base_url,
                    "model": run.route.model,
                    "streams": run.judged + run.kit_errors,
                    "judged": run.judged,
                    "inconclusive": run.inconclusive,
                    "kit_errors": run.kit_errors,
                    "kit_error_examples": run.kit_error_examples,
                    "failing_streams": sum(
                        n for names, n in run.verdict_sets.items() if names & failing
                    ),
                    "seconds": round(run.wall, 2),
                    "streams_per_second": round(run.judged / run.wall, 1) if run.wall else None,
                    "findings": findings,
                    "errors": self.errors(run),
                    "latency": latency,
                    "added_latency": added,
                    "mock": {
                        "answered": run.mock_answered,
                        "peak_open_connections": max((s[1] for s in run.samples), default=None),
                        "peak_in_flight": max((s[2] for s in run.samples), default=None),
                        "after_settle": run.after,
                    },
                    "bounded_by_generator": self.bounded_by_generator(run),
                    "machine_busy": run.machine_busy,
                    "fails": any(f["fails"] for f in findings),
                }
            )
        self._summary = {
            "concurrency": self.plan.concurrency,
            "streams_per_target": self.plan.count,
            "duration": self.plan.duration,
            "mix": [list(m) for m in self.plan.mix()],
            "targets": targets,
            "generator": self.generator(),
            "cores": self.cores,
        }
        return self._summary

    @property
    def exit_status(self) -> int:
        """1 when a target has a verdict that fails the run; 3 when none has but
        the kit failed to run some streams itself, or cut some short (its own
        timeouts); else 0."""
        targets = self.summary()["targets"]
        if any(t["fails"] for t in targets):
            return 1
        return 3 if any(t["kit_errors"] or t["inconclusive"] for t in targets) else 0

    def as_dict(self) -> dict[str, Any]:
        from ... import __version__

        return {
            "format": FORMAT,
            "streamwire": __version__,
            "title": self.title,
            "summary": self.summary(),
            "samples": {run.name: run.samples for run in self.runs},
        }

    def write_json(self, out: IO[str]) -> None:
        json.dump(self.as_dict(), out, indent=1, default=str)
        out.write("\n")

    # --- text renderings --------------------------------------------------------------

    def metric_values(self, run: TargetRun, metric: str) -> list[float]:
        """The values of ``metric`` the latency percentiles are taken over (its sample)."""
        return list(run.latencies[metric].values)
