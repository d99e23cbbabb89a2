"""The load generator's own limit, and the mock's, at 1,000 streams in flight.

A load run (``streamwire check ... --load``) is only as honest as its
generator: this measures it straight to the mock, nothing between, each in a
process of its own (the command below, and the mock by ``streamwire
mock-upstream``):

* ``judge``: the load's own mix (``LOAD_CASES``, whole and paced) at 200
  streams in flight, so that the generator is the bound: the streams and
  events it judges per second of its own CPU are its limit.
* ``held``: 1,000 streams in flight that each stay open ``HELD_SILENCE``
  seconds (``silence-start``): the mock holds 1,000 concurrent streams, and
  the peak memory of both processes at that load is measured (the
  generator's ``ru_maxrss`` from its report, the mock's ``VmHWM``).

Checked, for each: every stream sent was judged, none fails, the kit ran
all of them, nothing leaked; for ``held``, the mock's peak of requests in
flight reached 1,000. The figures go to ``extra_info`` (and are printed,
``-s``). ``SW_LOAD_BENCH_STREAMS`` scales the streams per run, for the
memory bound: at 20,000 streams instead of 2,000 the generator's peak grew
by 8 MiB in each load (72 to 80 MiB judging, 102 to 110 MiB held), and the
mock's by what its log keeps to its bound (``mock.MAX_LOG`` entries, fewer
than the streams of either run: 94 to 157 MiB judging).

Run once as tests: ``pytest benches/bench_kit_load.py -s``; the command
each runs is printed with its figures.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

#: How long each ``held`` stream's upstream says nothing before it answers (seconds).
HELD_SILENCE = 10
#: The kit's own read limit here (seconds): what is measured is the generator's
#: throughput, not whether a starved machine (CI runs this at nice 19 beside a
#: busy foreground) serves each read within the default 20 s; a stream the
#: kit's own limit cut is inconclusive and fails the run (exit 3).
READ_LIMIT = 120
LOADS: dict[str, dict[str, Any]] = {
    "judge": {"concurrency": 200, "streams": 2000, "args": ["--timeout", str(READ_LIMIT)]},
    "held": {
        "concurrency": 1000,
        "streams": 2000,
        "args": [
            "--cases",
            "silence-start",
            "--silence",
            str(HELD_SILENCE),
            "--timeout",
            str(READ_LIMIT),
        ],
    },
}


@pytest.fixture
def mock() -> Iterator[tuple[str, int]]:
    """(the mock's URL, its pid), in a process of its own."""
    proc = subprocess.Popen(
        [sys.executable, "-m", "streamwire.cli", "mock-upstream", "--port", "0"],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
    )
    try:
        assert proc.stdout is not None
        line = proc.stdout.readline().decode().strip()
        assert line.startswith("listening on "), line
        yield line.removeprefix("listening on "), proc.pid
    finally:
        proc.terminate()
        proc.wait(timeout=30)


def _peak_kib(pid: int) -> int | None:
    """A process's peak resident memory (``VmHWM``, KiB; Linux only)."""
    try:
        with open(f"/proc/{pid}/status", encoding="ascii") as status:
            for line in status:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1])
    except OSError:
        pass
    return None


@pytest.mark.parametrize("load", list(LOADS))
def test_generator_limit(benchmark, mock: tuple[str, int], tmp_path: Path, load: str) -> None:  # type: ignore[no-untyped-def]
    url, pid = mock
    spec = LOADS[load]
    streams = int(os.environ.get("SW_LOAD_BENCH_STREAMS", spec["streams"]))
    out = tmp_path / "load.json"
    command = [
        sys.executable,
        "-m",
        "streamwire.cli",
        "check",
        url,
        "--mock",
        url,
        "--client",
        "openai-chat,anthropic",
        "--no-unary",
        "--load",
        "--no-load-direct",
        "--concurrency",
        str(spec["concurrency"]),
        "--load-streams",
        str(streams),
        *spec["args"],
        "--quiet",
        "--json",
        str(out),
    ]

    def run() -> subprocess.CompletedProcess[str]:
        return subprocess.run(command, capture_output=True, text=True, timeout=600, check=False)

    done = benchmark.pedantic(run, rounds=1, iterations=1)
    assert done.returncode == 0, done.stdout + done.stderr
    summary = json.loads(out.read_text())["summary"]
    (target,) = summary["targets"]
    assert target["judged"] == streams and target["kit_errors"] == 0, target
    assert not any(f["fails"] for f in target["findings"]), target["findings"]
    assert target["mock"]["after_settle"].get("in_flight") == 0, target["mock"]
    generator = summary["generator"]
    figures = {
        "streams": streams,
        "concurrency": spec["concurrency"],
        "streams_per_second": generator["streams_per_second"],
        "streams_per_cpu_second": generator["streams_per_cpu_second"],
        "events_judged_per_cpu_second": generator["events_judged_per_cpu_second"],
        "generator_busy_core_share": generator["busy_core_share"],
        "generator_peak_mib": round(generator["peak_rss_bytes"] / 2**20, 1),
        "mock_peak_in_flight": target["mock"]["peak_in_flight"],
        "mock_peak_open_connections": target["mock"]["peak_open_connections"],
    }
    mock_peak = _peak_kib(pid)
    if mock_peak is not None:
        figures["mock_peak_mib"] = round(mock_peak / 1024, 1)
    benchmark.extra_info.update(figures)
    port = "http://127.0.0.1:9200"
    shown = " ".join(["python", *(port if part == url else part for part in command[1:-2])])
    print(
        f"\n{load}: python -m streamwire.cli mock-upstream --port 9200 & "
        f"{shown} --json load.json\n  {figures}"
    )
    assert generator["streams_per_cpu_second"] > 0 and generator["events_judged_per_cpu_second"] > 0
    if load == "held":
        assert (target["mock"]["peak_in_flight"] or 0) >= spec["concurrency"], target["mock"]
