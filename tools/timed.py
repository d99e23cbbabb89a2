"""Runs the suite's timed tests again and again, quiet or under a CPU load, and tallies them.

    python tools/timed.py --runs 20                 # a quiet machine
    python tools/timed.py --runs 10 --load          # a busy loop on every core meanwhile
    python tools/timed.py --runs 3 -k gil           # extra arguments go to pytest

A timed test asserts on a clock or on a ratio of CPU times (``@pytest.mark.timed``:
the kit's timed cells, the traps' growth limits, the GIL test, the HTTP
edge's disconnect and pacing tests). Each must pass every run, quiet and
loaded; a test that does not is fixed, not skipped. Each run is
``pytest -m timed`` in a process of its own; a failing run's whole output is
kept (``--logs``, default ``build/timed/run-<n>.log``), to see why; ``--load`` starts one busy
process per core (``os.cpu_count()``), at the machine's normal priority,
for the whole of the runs, and stops them at the end. The exit status is 1
when any run had a failure; the tally names each failing test and how often.
"""

from __future__ import annotations

import argparse
import collections
import multiprocessing
import os
import re
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
_FAILED = re.compile(r"^(?:FAILED|ERROR) (\S+)")


def _spin() -> None:
    while True:
        pass


def main() -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n")[0])
    parser.add_argument("--runs", type=int, default=20)
    parser.add_argument("--load", action="store_true", help="a busy process on every core")
    parser.add_argument(
        "--logs", default=str(ROOT / "build" / "timed"), help="where a failing run's output goes"
    )
    args, extra = parser.parse_known_args()
    spinners = []
    if args.load:
        for _ in range(os.cpu_count() or 1):
            proc = multiprocessing.Process(target=_spin, daemon=True)
            proc.start()
            spinners.append(proc)
    failures: collections.Counter[str] = collections.Counter()
    bad_runs = 0
    try:
        for n in range(1, args.runs + 1):
            started = time.monotonic()
            cmd = [sys.executable, "-m", "pytest", "-m", "timed", "-q", "-p", "no:cacheprovider"]
            done = subprocess.run([*cmd, *extra], cwd=ROOT, capture_output=True, text=True)
            failed = [m.group(1) for line in done.stdout.splitlines() if (m := _FAILED.match(line))]
            summary = (done.stdout.strip().splitlines() or ["(no output)"])[-1]
            print(f"run {n}: {summary} [{time.monotonic() - started:.0f} s]", flush=True)
            for test in failed:
                print(f"    {test}", flush=True)
            if done.returncode != 0:
                logs = Path(args.logs)
                logs.mkdir(parents=True, exist_ok=True)
                kept = logs / f"run-{n}.log"
                kept.write_text(done.stdout + done.stderr)
                print(f"    output: {kept}", flush=True)
            failures.update(failed)
            bad_runs += done.returncode != 0
    finally:
        for proc in spinners:
            proc.terminate()
    load = "under load" if args.load else "quiet"
    print(f"timed: {bad_runs} of {args.runs} runs failed ({load})")
    for test, count in failures.most_common():
        print(f"  {count:3d}x {test}")
    return 1 if bad_runs else 0


if __name__ == "__main__":
    sys.exit(main())
