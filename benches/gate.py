"""The release gate: every protocol's pipeline and the framing suites against their peers.

docs/design.md asks for benchmarks that track throughput and peak buffer
before every release. ``python benches/report.py --all`` runs this gate:
each *group* (one workload) times its implementations (streamwire and its
peers, the benches' own functions) with ``rounds.best_times`` (interleaved
rounds, best CPU time of each), checks every implementation's output once,
and measures streamwire's peak memory on the stream. What is compared
across runs is never an absolute time, only **ratios** measured within one
group: how many times longer a peer takes than streamwire (``vs naive``,
``vs httpx-sse``, ...), or, for the cost of being correct, how many times
longer the chat pipeline takes than framing the same bytes.

``--check baseline.json`` compares the run with a committed baseline: it
fails when a ratio to a peer fell too far below its baseline, when a peak
memory ratio grew by more than ``MEMORY_SLACK``, when streamwire's output was
wrong, or when a group or ratio of the baseline is missing. How far is too
far depends on the mode (``floor``):

* **full** (before a release, on a machine kept quiet for it): the margin the
  baseline took from the spread of its own runs. ``--baseline N`` runs the
  gate N times and writes the median of each ratio with the margin
  ``max(MIN_MARGIN, SPREAD_FACTOR x its largest relative drop below the
  median)``.
* **quick** (CI, on whatever machine the work was done on, right after the
  builds): only a fall below ``CI_FLOOR`` of the baseline, whatever the
  margin. A real regression that matters crosses it (one protocol made 2x
  slower halves its ratios); the noise measured on a busy 2-core machine,
  up to a third below the baseline in one run, and the difference between
  two CPUs of the same kind, do not.

A group whose ratio fell is measured again (``report/document.py``), ``RETRIES``
times, each in a fresh process (a new interpreter, allocator and page
cache state: the rows that fell after the builds were the memory-heavy
ones), and each ratio is judged by the median of its measurements: a
neighbour's burst of load does not repeat itself on demand, a regression
does. Ratios between two streamwire variants (``vs streamwire-stdlib-json``,
...) are reported, not checked: they measure only the noise; so is the str
floor against httpx-sse (``sse-floor/...``: no streamwire in it).

Modes: ``full`` (every workload whole, every peer) and ``quick`` (for CI:
the same groups without the SDK paths and the 1-byte and 64 KiB chunkings,
fewer rounds). Both time the translation against LiteLLM when its venv
exists (``build/litellm-venv``, made by ``.ci/litellm.sh`` or
``benches/litellm_venv.sh``); without it those groups are left out of the
run and of the check, which says so. A baseline holds one section per mode.
"""

from __future__ import annotations

import json
import os
import platform
import statistics
import subprocess
import sys
import time
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

from group import Group
from rounds import best_times

BENCHES = Path(__file__).resolve().parent
ROOT = BENCHES.parent

#: A ratio may fall this much below its baseline at least (a noisy machine).
MIN_MARGIN = 0.15
#: The quick mode (CI) fails a ratio only below this share of its baseline
#: (a lower-is-better one only above baseline / CI_FLOOR). Seen on unchanged
#: code in clean-clone CI runs: ratios 26-30% below the baseline
#: (``pipeline/anthropic-tools`` vs naive 2.01-2.13x against 2.85x; the CRLF
#: chat framing vs the openai SDK 14.85x against 24.72x); a protocol made 2x
#: slower is at 0.5x.
CI_FLOOR = 0.6
#: How many times a group that fell is measured again, each in a new process.
RETRIES = 2
#: Ratios reported but never gated: two streamwire variants (their ratio is
#: the noise, not a peer), and the str floor against a peer (no streamwire in
#: it at all).
UNGATED = ("vs streamwire", "str floor")
#: The margin is this many times the largest drop seen in the baseline runs.
SPREAD_FACTOR = 2.0
#: A peak memory ratio may grow this much (allocator rounding) before failing.
MEMORY_SLACK = 0.10
ROUNDS = {"full": 5, "quick": 3}
#: LiteLLM's venv, shared with the acceptance kit's worked example (.ci/litellm.sh).
LITELLM_VENV = "build/litellm-venv"


# --- running a group ----------------------------------------------------------------------


def run_group(group: Group, rounds: int) -> dict[str, Any]:
    correct = {impl: bool(group.check(impl, run())) for impl, run in group.runs.items()}
    best = best_times(group.runs, rounds, group.settle)
    ratios: dict[str, float] = {}
    targets: dict[str, dict[str, Any]] = {}
    for r in group.ratios:
        if r.numerator in best and r.denominator in best:
            ratios[r.label] = best[r.numerator] / best[r.denominator]
            if r.target is not None:
                targets[r.label] = {"target": r.target, "lower_is_better": r.lower_is_better}
    out: dict[str, Any] = {
        "suite": group.suite,
        "name": group.name,
        "unit": group.unit,
        "units": group.units,
        "seconds": best,
        "correct": correct,
        "ratios": ratios,
        "targets": targets,
        **group.notes,
    }
    if group.memory is not None:
        peak, largest = group.memory()
        out["memory"] = {"peak_bytes": peak, "largest_bytes": largest, "ratio": peak / largest}
    return out


def gate(mode: str, only: Sequence[str] = (), litellm: Path | None = None) -> dict[str, Any]:
    """Runs every group (or those whose suite or name starts with one of ``only``)."""
    from groups import all_groups

    rounds = ROUNDS[mode]
    started = time.time()
    results = []
    for group in all_groups(mode):
        if only and not any(f"{group.suite}/{group.name}".startswith(o) for o in only):
            continue
        print(f"gate: {group.suite}/{group.name}", file=sys.stderr, flush=True)
        result = run_group(group, rounds)
        if not all(ok for impl, ok in result["correct"].items() if impl.startswith("streamwire")):
            result["failed"] = "streamwire's output is wrong"
        results.append(result)
    with_litellm = litellm is not None and (litellm / "bin" / "python").exists()
    if with_litellm and (not only or any(o.startswith("translate") for o in only)):
        assert litellm is not None
        results += litellm_groups(litellm, mode, rounds)
    return {
        "litellm": with_litellm,
        "mode": mode,
        "rounds": rounds,
        "python": platform.python_version(),
        "machine": platform.machine(),
        "load_average": os.getloadavg()[0],
        "started": time.strftime("%Y-%m-%d %H:%M:%S", time.gmtime(started)),
        "seconds": round(time.time() - started, 1),
        "groups": results,
    }


def litellm_groups(venv: Path, mode: str, rounds: int) -> list[dict[str, Any]]:
    """The translation groups timed against LiteLLM, in LiteLLM's own venv
    (``bench_litellm.py``, with this checkout's package on its path)."""
    python = venv / "bin" / "python"
    env = dict(os.environ, PYTHONPATH=f"{ROOT / 'python'}{os.pathsep}{BENCHES}")
    cmd = [str(python), str(BENCHES / "bench_litellm.py"), "--json", "-", "--mode", mode]
    cmd += ["--rounds", str(rounds)]
    done = subprocess.run(cmd, env=env, capture_output=True, text=True, check=False)
    sys.stderr.write(done.stderr)
    if done.returncode != 0:
        raise RuntimeError(f"bench_litellm.py failed ({done.returncode})")
    groups: list[dict[str, Any]] = json.loads(done.stdout)
    return groups


# --- comparing with a baseline -----------------------------------------------------------------


def _key(group: dict[str, Any]) -> str:
    return f"{group['suite']}/{group['name']}"


def check(run: dict[str, Any], baseline: dict[str, Any]) -> list[str]:
    """What fails the gate: each a line saying why."""
    section = baseline.get(run["mode"])
    if section is None:
        return [f"the baseline has no {run['mode']!r} section"]
    problems = []
    current = {_key(g): g for g in run["groups"]}
    for group in run["groups"]:
        if "failed" in group:
            problems.append(f"{_key(group)}: {group['failed']}")
    for key, base in section["groups"].items():
        group = current.get(key)
        if group is None and key.startswith("translate/") and not run.get("litellm"):
            print(f"gate: {key} not checked (no LiteLLM venv)", file=sys.stderr)
            continue
        if group is None:
            problems.append(f"{key}: missing from this run")
            continue
        for label, expected in base.get("ratios", {}).items():
            if label.startswith(UNGATED):
                continue
            got = group["ratios"].get(label)
            lower = label in base.get("lower_is_better", ())
            if got is None:
                problems.append(f"{key}: ratio {label!r} missing from this run")
                continue
            margin = base.get("margins", {}).get(label, MIN_MARGIN)
            least = floor(run["mode"], margin, lower)
            if health(got, expected, lower) < least:
                way = "rose" if lower else "fell"
                problems.append(
                    f"{key}: {label} {way} to {got:.2f}x (baseline {expected:.2f}x, "
                    f"{_allowed(run['mode'], margin)})"
                )
        memory = base.get("memory")
        if memory is not None:
            got_memory = group.get("memory", {}).get("ratio")
            if got_memory is None:
                problems.append(f"{key}: peak memory not measured")
            elif got_memory > memory * (1 + MEMORY_SLACK) + 0.01:
                problems.append(
                    f"{key}: peak memory grew to {got_memory:.2f}x its largest unit "
                    f"(baseline {memory:.2f}x)"
                )
    return problems


def health(got: float, expected: float, lower_is_better: bool = False) -> float:
    """How the ratio ``got`` stands against its baseline: 1.0 as before, 0.5
    when streamwire became twice as slow against the peer (either way round)."""
    if got <= 0 or expected <= 0:
        return 0.0 if expected > 0 else 1.0
    return expected / got if lower_is_better else got / expected


def floor(mode: str, margin: float, lower_is_better: bool = False) -> float:
    """The least ``health`` a ratio may have in ``mode`` (module docstring):
    in the full mode a fall by ``margin`` (a rise by it, for a lower-is-better
    ratio), in the quick mode ``CI_FLOOR``."""
    if mode == "quick":
        return CI_FLOOR
    return 1.0 / (1.0 + margin) if lower_is_better else 1.0 - margin


def _allowed(mode: str, margin: float) -> str:
    return f"CI floor {CI_FLOOR:.0%} of it" if mode == "quick" else f"margin {margin:.0%}"


def failing_groups(problems: list[str]) -> list[str]:
    """The groups whose ratios fell (what ``report/document.py`` measures again)."""
    return sorted({p.split(":", 1)[0] for p in problems if " fell to " in p or " rose to " in p})


def median_run(runs: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """One run whose groups' ratios are the medians of ``runs``' (the same
    groups, measured again): what a fall is judged by once it was re-measured.
    A group's other facts (its output's correctness, its memory) are the
    worst of the runs'."""
    first = runs[0]
    out = {**first, "groups": []}
    for group in first["groups"]:
        seen = [g for r in runs for g in r["groups"] if _key(g) == _key(group)]
        merged = {**group, "ratios": {}, "measured": {}}
        for label in group["ratios"]:
            values = [g["ratios"][label] for g in seen if label in g["ratios"]]
            merged["ratios"][label] = statistics.median(values)
            merged["measured"][label] = [round(v, 3) for v in values]
        failed = [g["failed"] for g in seen if "failed" in g]
        if failed:
            merged["failed"] = failed[0]
        memories = [g["memory"] for g in seen if "memory" in g]
        if memories:
            merged["memory"] = max(memories, key=lambda m: m["ratio"])
        out["groups"].append(merged)
    return out


def make_baseline(runs: list[dict[str, Any]]) -> dict[str, Any]:
    """One mode's baseline section from repeated runs: each ratio's median and
    its margin from the spread (see the module docstring)."""
    groups: dict[str, Any] = {}
    for key in [_key(g) for g in runs[0]["groups"]]:
        seen = [next(g for g in r["groups"] if _key(g) == key) for r in runs]
        ratios, margins, lower = {}, {}, []
        for label in seen[0]["ratios"]:
            values = [g["ratios"][label] for g in seen if label in g["ratios"]]
            median = statistics.median(values)
            is_lower = seen[0]["targets"].get(label, {}).get("lower_is_better", False)
            worst = max(values) if is_lower else min(values)
            drop = abs(worst - median) / median if median else 0.0
            ratios[label] = round(median, 4)
            margins[label] = round(max(MIN_MARGIN, SPREAD_FACTOR * drop), 3)
            if is_lower:
                lower.append(label)
        entry: dict[str, Any] = {"ratios": ratios, "margins": margins}
        if lower:
            entry["lower_is_better"] = lower
        if "memory" in seen[0]:
            entry["memory"] = round(max(g["memory"]["ratio"] for g in seen), 3)
        groups[key] = entry
    return {"runs": len(runs), "groups": groups}


def iter_ratios(run: dict[str, Any]) -> Iterator[tuple[str, str, float]]:
    for group in run["groups"]:
        for label, value in group["ratios"].items():
            yield _key(group), label, value
