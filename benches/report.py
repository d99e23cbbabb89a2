"""The release gate, and the framing benchmarks' pytest-benchmark tables.

The release gate (``gate.py``: every protocol's pipeline and the framing
suites against their peers, in one run; docs/performance.md's tables are made
from its JSON by ``readme.py``)::

    python benches/report.py --all --json gate.json             # run it, keep its JSON
    python benches/report.py --all --check benches/baseline.json  # compare: exit 1 on a fall
    python benches/report.py --all --quick --check benches/baseline.json   # CI's form
    python benches/report.py --all --baseline 5 --write benches/baseline.json  # a new baseline

The framing suites alone, through pytest-benchmark::

    python benches/report.py                  # run, then print the tables
    python benches/report.py --suite eventstream  # only these benches (repeatable)
    python benches/report.py --json out.json  # keep the raw pytest-benchmark JSON
    python benches/report.py --from out.json  # print tables from an earlier run

Suites: ``sse`` (``bench_sse.py``, SSE events) and ``eventstream``
(``bench_eventstream.py``, AWS EventStream messages); both by default.

Times are medians over the rounds pytest-benchmark ran (at least
``--min-rounds``); "vs streamwire" is the peer's median divided by
streamwire's (how many times longer the peer takes). A lone absolute time means
little across machines, so the tables always show the ratio beside it.
"""

from __future__ import annotations

import argparse
import json
import platform
import subprocess
import sys
import tempfile
from collections import defaultdict
from collections.abc import Sequence
from pathlib import Path
from typing import Any

BENCHES = Path(__file__).resolve().parent
SUITES = {"sse": "bench_sse.py", "eventstream": "bench_eventstream.py"}
ORDER = ["streamwire", "openai-sdk", "httpx-sse", "sseclient-py", "naive-split", "botocore"]


def _rank(implementation: str) -> int:
    # Implementations not listed in ORDER go last, in the order pytest ran them.
    return ORDER.index(implementation) if implementation in ORDER else len(ORDER)


def run(json_path: Path, min_rounds: int, extra: list[str], suites: list[str]) -> None:
    cmd = [
        sys.executable,
        "-m",
        "pytest",
        *(str(BENCHES / SUITES[suite]) for suite in suites),
        "-q",
        "-p",
        "no:cacheprovider",
        "--benchmark-enable",
        f"--benchmark-min-rounds={min_rounds}",
        "--benchmark-warmup=on",
        "--benchmark-warmup-iterations=1",
        f"--benchmark-json={json_path}",
        *extra,
    ]
    # pytest's own report goes to stderr: stdout carries only the tables.
    subprocess.run(cmd, check=True, cwd=BENCHES.parent, stdout=sys.stderr)


def _size(n: float) -> str:
    for unit, scale in (("MiB", 1 << 20), ("KiB", 1 << 10)):
        if n >= scale:
            return f"{n / scale:.1f} {unit}"
    return f"{n:.0f} B"


def _peak(info: dict[str, Any]) -> str:
    ratio = info.get("peak_memory_ratio")
    peak = info.get("peak_buffer_bytes")
    if ratio is not None:
        return f"{_size(info['peak_memory_bytes'])} ({ratio:.2f}× wire)"
    return "—" if peak is None else _size(peak)


def tables(data: dict[str, Any]) -> str:
    groups: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for bench in data["benchmarks"]:
        groups[bench["group"]].append(bench)
    out: list[str] = []
    for group, benches in groups.items():
        benches.sort(key=lambda b: _rank(b["extra_info"]["implementation"]))
        medians = {b["extra_info"]["implementation"]: b["stats"]["median"] for b in benches}
        base = medians.get(ORDER[0])
        first = benches[0]["extra_info"]
        count = first["expected_events"]
        unit = first.get("unit", "events")  # "messages" for EventStream
        out.append(
            f"### {group} ({_size(first['bytes'])}, {count:,} {unit.rstrip('s')}"
            f"{'s' * (count != 1)}, {first['chunk_size']:,}-byte chunks)\n"
        )
        out.append(
            f"| implementation | median | {unit}/s | MB/s | vs streamwire | correct | peak buffer |"
        )
        out.append("|---|---:|---:|---:|---:|:---:|---:|")
        for bench in benches:
            info, median = bench["extra_info"], bench["stats"]["median"]
            ratio = "1.00×" if base is None or median == base else f"{median / base:.2f}×"
            out.append(
                f"| {info['implementation']} | {median * 1e6:,.0f} µs "
                f"| {info['events'] / median:,.0f} | {info['bytes'] / median / 1e6:,.1f} "
                f"| {ratio} | {'yes' if info['correct'] else '**no**'} | {_peak(info)} |"
            )
        out.append("")
    machine = data.get("machine_info", {})
    cpu = machine.get("cpu", {}).get("brand_raw", "")
    notes = [
        f"Python {machine.get('python_version', platform.python_version())} on "
        f"{machine.get('machine', platform.machine())}, {cpu}; "
        f"medians of at least {min(b['stats']['rounds'] for b in data['benchmarks'])} rounds."
    ]
    if any(not g.startswith("eventstream/") for g in groups):
        notes.append(
            "SSE: 1-byte chunks cover only the first 200 KB of a workload (whole events); "
            "peak buffer: streamwire's own counter, peers' Python allocations (tracemalloc); "
            "for the 8 MiB event, peak memory of a streaming run (streamwire: Python "
            "allocations plus its Rust buffers) and its ratio to the wire size."
        )
    if any(g.startswith("eventstream/") for g in groups):
        notes.append(
            "EventStream: peak buffer is streamwire's own counter and, for botocore, the "
            "largest length of `EventStreamBuffer._data` (its buffer of undecoded bytes); "
            "`whole` feeds the body as one chunk."
        )
    out.append(" ".join(notes))
    return "\n".join(out)


def run_gate(args: argparse.Namespace) -> int:
    """``--all``: the release gate (see ``gate.py``); returns the exit status."""
    import gate

    mode = "quick" if args.quick else "full"
    litellm = args.litellm if args.litellm is not None else gate.ROOT / gate.LITELLM_VENV
    if args.baseline:
        # Each run in a process of its own, as a gate runs: in one process a
        # later run of a group measured streamwire's side of sse/openai-chat/64KiB
        # twice as slow as the first (the heap the earlier runs left), so a
        # baseline of repeated in-process runs held a gate run to half its ratio.
        runs = []
        for n in range(args.baseline):
            print(f"gate: baseline run {n + 1} of {args.baseline}", file=sys.stderr, flush=True)
            runs.append(fresh_run(args, mode, args.only))
        target = args.write or Path("baseline.json")
        data = json.loads(target.read_text(encoding="utf-8")) if target.exists() else {}
        section = gate.make_baseline(runs)
        if args.only and mode in data:
            # Only these groups were run: the section's others stay as they were.
            data[mode]["groups"].update(section["groups"])
        else:
            data[mode] = section
        target.write_text(json.dumps(data, indent=1, sort_keys=True) + "\n", encoding="utf-8")
        run = runs[-1]
    else:
        run = gate.gate(mode, args.only, litellm)
    for key, label, value in gate.iter_ratios(run):
        print(f"{key:42s} {label:28s} {value:9.2f}x", file=sys.stderr)
    if args.check is None:
        _write_json(args.json, run)
        return 0
    baseline = json.loads(args.check.read_text(encoding="utf-8"))
    problems = gate.check(run, baseline)
    again = gate.failing_groups(problems)
    if again:
        # Measured again in fresh processes, each ratio judged by the median of
        # its measurements: a burst of load does not repeat on demand.
        for problem in problems:
            print(f"gate: {problem}; measuring it again", file=sys.stderr)
        runs = [run] + [remeasure(args, mode, again) for _ in range(gate.RETRIES)]
        run = gate.median_run(runs)
        for group in run["groups"]:
            if gate._key(group) in again:
                for label, values in group["measured"].items():
                    if len(values) > 1:
                        shown = ", ".join(f"{v:.2f}x" for v in values)
                        print(f"gate: {gate._key(group)} {label}: {shown}", file=sys.stderr)
        problems = gate.check(run, baseline)
    _write_json(args.json, run)
    for problem in problems:
        print(f"GATE: {problem}", file=sys.stderr)
    print(f"gate: {'FAILED' if problems else 'passed'} ({run['seconds']} s)", file=sys.stderr)
    return 1 if problems else 0


def _write_json(path: Path | None, run: dict[str, Any]) -> None:
    text = json.dumps(run, indent=1)
    if path == Path("-"):
        print(text)
    elif path is not None:
        path.write_text(text + "\n", encoding="utf-8")


def fresh_run(args: argparse.Namespace, mode: str, only: Sequence[str]) -> dict[str, Any]:
    """The gate's run (of the groups starting with one of ``only``, or all), in a new process."""
    cmd = [sys.executable, str(Path(__file__).resolve()), "--all", "--json", "-"]
    cmd += ["--quick"] if mode == "quick" else []
    cmd += ["--litellm", str(args.litellm)] if args.litellm is not None else []
    for prefix in only:
        cmd += ["--only", prefix]
    done = subprocess.run(cmd, check=True, stdout=subprocess.PIPE, text=True)
    data: dict[str, Any] = json.loads(done.stdout)
    return data


def remeasure(args: argparse.Namespace, mode: str, groups: list[str]) -> dict[str, Any]:
    """The gate's run of ``groups`` alone, in a new process."""
    data = fresh_run(args, mode, groups)
    wanted = set(groups)
    data["groups"] = [g for g in data["groups"] if f"{g['suite']}/{g['name']}" in wanted]
    return data


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n")[0])
    parser.add_argument("--all", action="store_true", help="run the release gate (gate.py)")
    parser.add_argument("--quick", action="store_true", help="the gate's quick form (CI)")
    parser.add_argument("--check", type=Path, help="compare the gate's run with this baseline")
    parser.add_argument("--baseline", type=int, help="run the gate N times, write its baseline")
    parser.add_argument("--write", type=Path, help="the baseline file --baseline writes")
    parser.add_argument("--only", action="append", default=[], help="gate groups by prefix")
    parser.add_argument("--litellm", type=Path, help="LiteLLM's venv (default build/litellm-venv)")
    parser.add_argument("--json", type=Path, help="where to keep the JSON ('-': stdout)")
    parser.add_argument("--from", dest="source", type=Path, help="print tables from this JSON")
    parser.add_argument("--min-rounds", type=int, default=5)
    parser.add_argument(
        "--suite", action="append", choices=list(SUITES), help="run only these (repeatable)"
    )
    args, extra = parser.parse_known_args()
    if args.all:
        sys.exit(run_gate(args))
    source = args.source
    if source is None:
        with tempfile.TemporaryDirectory() as tmp:
            source = args.json or Path(tmp) / "bench.json"
            run(source, args.min_rounds, extra, args.suite or list(SUITES))
            data = json.loads(source.read_text(encoding="utf-8"))
    else:
        data = json.loads(source.read_text(encoding="utf-8"))
    print(tables(data))


if __name__ == "__main__":
    main()
