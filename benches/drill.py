"""A drill for the release gate: does its CI form pass unchanged code, and fail a regression?

    python benches/drill.py --runs 20                       # unchanged code, 20 quick gates
    python benches/drill.py --runs 5 --regression anthropic-2x
    python benches/drill.py --runs 10 --before 'python tools/wheels.py ci'   # each after builds

Each run is ``benches/report.py --all --quick --check benches/baseline.json``
in a process of its own (its re-measurements too), with this checkout's
package, or a copy of it with one regression written into its source, first
on ``PYTHONPATH``. A regression is a real change to the code a user runs,
not a change to the gate: the copy's module is edited, the edit checked to
have taken (its anchor must be there), and each run checks that the copy
is the package it imported. The drill prints each run's verdict and what
fell, then how many of the runs failed; its exit status is 0 when the
verdicts are the expected ones (every run passed unchanged code, every run
failed a regression).

Regressions (``REGRESSIONS``):

* ``anthropic-2x``: every ``feed`` of an Anthropic stream does its work
  twice (a second, discarded stream is fed the same bytes): one protocol
  made twice as slow, which the CI floor must catch;
* ``chat-2x``: the same for OpenAI Chat Completions.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

BENCHES = Path(__file__).resolve().parent
ROOT = BENCHES.parent
PACKAGE = ROOT / "python" / "streamwire"


@dataclass(frozen=True)
class Regression:
    """An edit of one source file of the package: ``anchor`` becomes ``anchor + added``."""

    path: str
    anchor: str
    added: str


def _twice(cls: str) -> str:
    return f"""
    def feed(self, data: bytes | bytearray | memoryview) -> list[Event]:
        # DRILL: the same bytes fed to a second, discarded stream (twice the work).
        shadow = self.__dict__.get("_drill_shadow", 0)
        if shadow == 0:
            shadow = self._drill_shadow = {cls}()
            shadow._drill_shadow = None
        if shadow is not None:
            shadow.feed(data)
        return super().feed(data)
"""


REGRESSIONS = {
    "anthropic-2x": Regression(
        "protocols/anthropic.py",
        "        self._machine = AnthropicMachine(self._acc)\n",
        _twice("AnthropicStream"),
    ),
    "chat-2x": Regression(
        "protocols/openai_chat.py",
        '    protocol = "openai-chat"\n',
        _twice("OpenAIChatStream"),
    ),
}


def _copy_with(regression: Regression, into: Path) -> Path:
    """A copy of the package (its built extension included) with ``regression`` in it."""
    target = into / "streamwire"
    shutil.copytree(PACKAGE, target, ignore=shutil.ignore_patterns("__pycache__"))
    path = target / regression.path
    source = path.read_text(encoding="utf-8")
    if source.count(regression.anchor) != 1:
        raise SystemExit(f"drill: the anchor of the regression is not once in {regression.path}")
    path.write_text(source.replace(regression.anchor, regression.anchor + regression.added))
    return target


def main() -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n")[0])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--regression", choices=sorted(REGRESSIONS))
    parser.add_argument("--before", help="a shell command run before each gate (e.g. builds)")
    parser.add_argument("--baseline", type=Path, default=BENCHES / "baseline.json")
    args = parser.parse_args()
    env = dict(os.environ)
    with tempfile.TemporaryDirectory() as tmp:
        expect = "streamwire"
        if args.regression:
            copy = _copy_with(REGRESSIONS[args.regression], Path(tmp))
            env["PYTHONPATH"] = os.pathsep.join(filter(None, [tmp, env.get("PYTHONPATH")]))
            expect = str(copy)
        check = [sys.executable, "-c", "import streamwire; print(streamwire.__file__)"]
        seen = subprocess.run(check, env=env, capture_output=True, text=True, check=True).stdout
        if expect not in seen:
            raise SystemExit(f"drill: the runs would import {seen.strip()}, not {expect}")
        failed = 0
        for n in range(1, args.runs + 1):
            if args.before:
                subprocess.run(args.before, shell=True, check=True, cwd=ROOT)
            started = time.monotonic()
            cmd = [sys.executable, str(BENCHES / "report.py"), "--all", "--quick"]
            cmd += ["--check", str(args.baseline)]
            done = subprocess.run(cmd, env=env, cwd=ROOT, capture_output=True, text=True)
            lines = done.stderr.splitlines()
            fell = [line for line in lines if line.startswith("GATE: ")]
            again = sum("measuring it again" in line for line in lines)
            verdict = "FAILED" if done.returncode else "passed"
            failed += bool(done.returncode)
            print(
                f"run {n}: {verdict} in {time.monotonic() - started:.0f} s "
                f"({again} ratios measured again)",
                flush=True,
            )
            for line in fell:
                print(f"    {line}", flush=True)
        print(f"drill: {failed} of {args.runs} runs failed ({args.regression or 'unchanged code'})")
    ok = failed == args.runs if args.regression else failed == 0
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
