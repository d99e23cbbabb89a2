"""The kit's streams under Locust (``streamwire.kit.locust_user``): a master and two workers.

Locust runs headless in processes of its own (its pinned venv, made by
``.ci/locust.sh``: Locust patches the standard library and registers a pytest
plugin, so it never shares this process), with ``examples/locustfile.py``,
for a few seconds on loopback: against examples/gateway every stream is
counted and none fails; against a hop that mixes concurrent streams up
(``kit_hops.py``'s ``mix_above``), Locust's failure table names
``cross_talk``. Its CSV reports are what the test reads, as a team's CI would.
"""

from __future__ import annotations

import csv
import importlib.util
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from kit_hops import MIX_ABOVE

ROOT = Path(__file__).resolve().parent.parent
LOCUST_PYTHON = ROOT / "build" / "locust-venv" / "bin" / "python"
LOCUSTFILE = ROOT / "examples" / "locustfile.py"


def _kit_processes() -> Any:
    spec = importlib.util.spec_from_file_location(
        "streamwire_example_kit_processes_locust", ROOT / "examples" / "kit_processes.py"
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


_procs = _kit_processes()


def _locust_python() -> Path:
    if not LOCUST_PYTHON.exists():
        if os.environ.get("CI"):
            pytest.fail("Locust's venv is missing: .ci/run makes it (bash .ci/locust.sh)")
        pytest.skip("Locust's venv is not made here: bash .ci/locust.sh")
    return LOCUST_PYTHON


def _distributed(
    host: str, mock: str, out: Path, *, users: int, seconds: int, cases: str
) -> tuple[int, dict[tuple[str, str], dict[str, str]], list[dict[str, str]]]:
    """Locust's exit status, its stats rows by (type, name), its failure rows."""
    python = str(_locust_python())
    port = _procs.free_port()
    env = dict(
        os.environ,
        PYTHONPATH=str(ROOT / "python"),
        SW_MOCK_URL=mock,
        SW_CLIENTS="openai-chat,anthropic",
        SW_CASES=cases,
    )
    base = [python, "-m", "locust", "-f", str(LOCUSTFILE)]
    with _procs.processes() as procs:
        master = procs.start(
            [
                *base,
                "--master",
                "--master-bind-host",
                "127.0.0.1",
                "--master-bind-port",
                str(port),
                "--headless",
                "--expect-workers",
                "2",
                "-u",
                str(users),
                "-r",
                str(users),
                "-t",
                f"{seconds}s",
                "--csv",
                str(out),
                "--host",
                host,
                "--only-summary",
                "--loglevel",
                "WARNING",
            ],
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        for _ in range(2):
            procs.start(
                [*base, "--worker", "--master-host", "127.0.0.1", "--master-port", str(port)],
                env=env,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
            )
        status = master.wait(timeout=seconds + 90)
    with open(f"{out}_stats.csv", newline="") as f:
        stats = {(row["Type"], row["Name"]): row for row in csv.DictReader(f)}
    with open(f"{out}_failures.csv", newline="") as f:
        failures = list(csv.DictReader(f))
    return status, stats, failures


def _streams(stats: dict[tuple[str, str], dict[str, str]], kind: str = "STREAM") -> int:
    return sum(int(row["Request Count"]) for (t, _), row in stats.items() if t == kind)


@pytest.mark.timed
def test_locust_master_and_two_workers_count_examples_gateway_s_streams(tmp_path: Path) -> None:
    with _procs.processes() as procs:
        mock = procs.mock()
        url = procs.gateway(mock + "/v1", "openai-chat")
        procs.ready()
        status, stats, failures = _distributed(
            url,
            mock,
            tmp_path / "gateway",
            users=40,
            seconds=8,
            cases="short-text,split-anywhere,single-tool,parallel-tools,usage,cancel",
        )
    assert failures == [], failures
    assert status == 0
    streams = _streams(stats)
    assert streams >= 40, stats
    names = {name for kind, name in stats if kind == "STREAM"}
    assert {"split-anywhere anthropic paced", "cancel openai-chat whole"} <= names, names
    # Time to the first event is Locust's custom metric beside each stream.
    assert _streams(stats, "FIRST_EVENT") >= streams // 2


@pytest.mark.timed
def test_locust_reports_a_hop_that_mixes_streams_as_cross_talk(tmp_path: Path) -> None:
    with _procs.processes() as procs:
        mock = procs.mock()
        hop = procs.start(
            [sys.executable, str(ROOT / "tests" / "kit_hops.py"), mock, "mix_above"],
            stdout=subprocess.PIPE,
        )
        assert hop.stdout is not None
        line = hop.stdout.readline().decode()
        assert line.startswith("listening on "), line
        status, stats, failures = _distributed(
            line.split()[-1],
            mock,
            tmp_path / "mixed",
            users=4 * MIX_ABOVE,
            seconds=6,
            cases="short-text,split-anywhere",
        )
    assert status == 1  # Locust's own status when requests failed
    crossed = [row for row in failures if "cross_talk (deltas)" in row["Error"]]
    assert crossed, failures
    assert sum(int(row["Occurrences"]) for row in crossed) >= 2
    assert all(row["Method"] == "STREAM" for row in crossed)
    assert _streams(stats) > 0


def test_import_streamwire_never_imports_locust() -> None:
    probe = (
        "import sys, streamwire, streamwire.kit, streamwire.kit.run.load, streamwire.kit.cli; "
        "print(sorted(m for m in sys.modules if m.split('.')[0] in ('locust', 'gevent')))"
    )
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "[]", done.stdout
