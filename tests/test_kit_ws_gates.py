"""WebSocket cells through the gates a team runs: ``--repeat``, ``--against``
and the pytest plugin, each as a process of its own, as CI runs them.

The mock serves the three WebSocket protocols itself, so it is the route
here: every cell passes, and what is held is how the gates treat the cells
(each run of a repeated cell, a baseline's changed fact caught for its
cell, the plugin's items named and judged).
"""

from __future__ import annotations

import importlib.metadata
import json
import subprocess
import sys
import xml.etree.ElementTree as ET
from collections.abc import Iterator
from pathlib import Path

import pytest

pytest.importorskip("websockets")

CLIENTS = ("openai-responses-ws", "openai-realtime", "gemini-live")
CASES = ("short-text", "tool-error-result")


@pytest.fixture(scope="module")
def mock() -> Iterator[str]:
    proc = subprocess.Popen(
        [sys.executable, "-m", "streamwire.kit.cli", "mock-upstream"],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert proc.stdout is not None
        yield proc.stdout.readline().strip().rpartition(" ")[2]
    finally:
        proc.terminate()
        proc.wait(10)


def _check(mock: str, *args: str) -> subprocess.CompletedProcess[str]:
    command = [sys.executable, "-m", "streamwire.cli", "check", mock, "--mock", mock]
    command += ["--client", ",".join(CLIENTS), "--cases", ",".join(CASES), "--no-unary"]
    return subprocess.run([*command, *args], capture_output=True, text=True, timeout=300)


def test_repeat_runs_each_websocket_cell_and_against_gates_a_changed_fact(
    mock: str, tmp_path: Path
) -> None:
    base = tmp_path / "base.json"
    done = _check(mock, "--delivery", "whole,paced", "--repeat", "2", "--json", str(base))
    assert done.returncode == 0, done.stdout + done.stderr
    report = json.loads(base.read_text())
    cells = report["cells"]
    assert {(c["client"], c["case"], c["delivery"]) for c in cells} == {
        (client, case, delivery)
        for client in CLIENTS
        for case in CASES
        for delivery in ("whole", "paced")
    }
    for cell in cells:
        # Two runs, each its own socket and tag, alike.
        assert cell["repeat"]["count"] == 2 and cell["flaky"] is False, cell["repeat"]
        tags = {run["tag"] for run in cell["repeat"]["runs"]}
        assert len(tags) == 2
    assert set(report["matrix"]) and done.stdout.count("pass") >= len(CLIENTS)

    same = _check(mock, "--delivery", "whole,paced", "--against", str(base))
    assert same.returncode == 0, same.stdout + same.stderr
    # The baseline said a Live cell stopped on the output limit: the run's
    # own stop is a changed fact of that cell, and the gate fails on it.
    for cell in report["cells"]:
        if cell["client"] == "gemini-live" and cell["case"] == "short-text":
            cell["evidence"]["record"]["stop_reason"] = "length"
    changed = tmp_path / "changed.json"
    changed.write_text(json.dumps(report))
    gated = _check(mock, "--delivery", "whole,paced", "--against", str(changed))
    assert gated.returncode == 1, gated.stdout + gated.stderr
    assert "gemini-live" in gated.stdout and "stop_reason" in gated.stdout


def _registered() -> bool:
    return any(e.name == "streamwire" for e in importlib.metadata.entry_points(group="pytest11"))


def test_the_pytest_plugin_makes_each_websocket_cell_an_item(mock: str, tmp_path: Path) -> None:
    junit = tmp_path / "junit.xml"
    load = () if _registered() else ("-p", "streamwire.kit.pytest_plugin")
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            *load,
            "-p",
            "no:cacheprovider",
            "-q",
            "--rootdir",
            str(tmp_path),
            "--sw-gateway",
            mock,
            "--sw-label",
            "mock",
            "--sw-client",
            ",".join(CLIENTS),
            "--sw-cases",
            ",".join(CASES),
            "--sw-mock",
            mock,
            "--junitxml",
            str(junit),
        ],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        timeout=300,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    names = {case.get("name") for case in ET.parse(junit).getroot().iter("testcase")}
    assert names == {f"{case}[{client}-mock-whole]" for case in CASES for client in CLIENTS}
    assert f"{len(names)} passed" in done.stdout
