"""The pytest plugin (``streamwire.kit.pytest_plugin``), run as a team would: in a subprocess.

Against examples/gateway (uvicorn, pointed at ``streamwire mock-upstream``):
each cell is an item with its readable id, ``-k`` selects cells (and only
those run), junit XML lists them, ``--sw-against`` gates on the baseline,
and a route that does not answer fails its items with the layer's
evidence. The plugin is inert in a run that does not ask for it.
"""

from __future__ import annotations

import importlib.metadata
import importlib.util
import json
import statistics
import subprocess
import sys
import time
import xml.etree.ElementTree as ET
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parent.parent


def _kit_processes() -> Any:
    """examples/kit_processes.py, loaded from its file (``sys.path`` untouched)."""
    spec = importlib.util.spec_from_file_location(
        "streamwire_example_kit_processes", ROOT / "examples" / "kit_processes.py"
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


_procs = _kit_processes()
free_port, processes = _procs.free_port, _procs.processes


@pytest.fixture(scope="module")
def gateway() -> Iterator[tuple[str, str]]:
    """(the example gateway's URL, the mock's URL)."""
    with processes() as procs:
        mock = procs.mock()
        url = procs.gateway(mock + "/v1", "openai-chat")
        procs.ready()
        yield url, mock


def _registered() -> bool:
    """The package is installed with its entry point (pytest11: streamwire)."""
    return any(e.name == "streamwire" for e in importlib.metadata.entry_points(group="pytest11"))


#: Installed, pytest loads the plugin by its entry point (what this file proves
#: then); from a tree without it, by name.
_LOAD = () if _registered() else ("-p", "streamwire.kit.pytest_plugin")


def _pytest(tmp: Path, *args: str) -> subprocess.CompletedProcess[str]:
    # An empty directory of its own: the plugin's items are all there is.
    return subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            *_LOAD,
            "-p",
            "no:cacheprovider",
            "-q",
            "-rA",
            "--rootdir",
            str(tmp),
            *args,
        ],
        capture_output=True,
        text=True,
        cwd=tmp,
        timeout=300,
    )


def test_each_cell_is_an_item_with_its_id_and_junit_lists_them(
    gateway: tuple[str, str], tmp_path: Path
) -> None:
    url, mock = gateway
    junit = tmp_path / "junit.xml"
    done = _pytest(
        tmp_path,
        "--sw-gateway",
        url,
        "--sw-label",
        "gateway",
        "--sw-client",
        "openai-chat",
        "--sw-cases",
        "short-text,parallel-tools,usage",
        "--sw-mock",
        mock,
        "--junitxml",
        str(junit),
    )
    assert done.returncode == 0, done.stdout + done.stderr
    names = {case.get("name") for case in ET.parse(junit).getroot().iter("testcase")}
    assert names == {
        f"{case}[openai-chat-gateway-whole]" for case in ("short-text", "parallel-tools", "usage")
    }
    assert "3 passed" in done.stdout


def test_k_selects_cells_and_only_those_run(gateway: tuple[str, str], tmp_path: Path) -> None:
    url, mock = gateway
    report = tmp_path / "run.json"
    done = _pytest(
        tmp_path,
        "--sw-gateway",
        url,
        "--sw-label",
        "gateway",
        "--sw-client",
        "openai-chat",
        "--sw-cases",
        "short-text,usage",
        "--sw-mock",
        mock,
        "-k",
        "usage",
        "--sw-json",
        str(report),
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert "1 passed, 1 deselected" in done.stdout
    assert [c["case"] for c in json.loads(report.read_text())["cells"]] == ["usage"]


def test_a_route_that_does_not_answer_fails_with_the_layer_s_evidence(tmp_path: Path) -> None:
    dead = f"http://127.0.0.1:{free_port()}"
    done = _pytest(
        tmp_path,
        "--sw-gateway",
        dead,
        "--sw-label",
        "dead",
        "--sw-client",
        "anthropic",
        "--sw-cases",
        "short-text",
        "--sw-mock-port",
        str(free_port()),
    )
    assert done.returncode == 1
    assert "short-text[anthropic-dead-whole]" in done.stdout
    assert "http: fail: no response" in done.stdout
    assert "verdict gateway_unreachable" in done.stdout
    # ... and the command that sends the cell's request by hand, the key left to the shell.
    assert f"reproduce: curl -N -sS {dead}/v1/messages" in done.stdout
    assert '"$STREAMWIRE_KEY"' in done.stdout


def test_the_gate_against_a_baseline(gateway: tuple[str, str], tmp_path: Path) -> None:
    url, mock = gateway
    base = tmp_path / "base.json"
    common = (
        "--sw-gateway",
        url,
        "--sw-label",
        "gateway",
        "--sw-client",
        "openai-chat",
        "--sw-cases",
        "short-text,usage",
        "--sw-mock",
        mock,
    )
    assert _pytest(tmp_path, *common, "--sw-json", str(base)).returncode == 0
    same = _pytest(tmp_path, *common, "--sw-against", str(base))
    assert same.returncode == 0, same.stdout
    assert "3 passed" in same.stdout  # two cells and the comparison's own item
    edited = json.loads(base.read_text())
    for cell in edited["cells"]:
        if cell["case"] == "usage":
            cell["evidence"]["record"]["stop_reason"] = "length"
    changed = tmp_path / "changed.json"
    changed.write_text(json.dumps(edited))
    gated = _pytest(tmp_path, *common, "--sw-against", str(changed))
    assert gated.returncode == 1
    assert "usage[openai-chat-gateway-whole]" in gated.stdout
    assert "fact stop_reason: 'length' -> 'stop'" in gated.stdout
    assert "1 failed, 2 passed" in gated.stdout


def test_inert_unless_asked(tmp_path: Path) -> None:
    (tmp_path / "test_one.py").write_text("def test_one():\n    pass\n")
    done = _pytest(tmp_path)
    assert done.returncode == 0 and "1 passed" in done.stdout, done.stdout
    usage = _pytest(tmp_path, "--sw-gateway", "http://127.0.0.1:9")
    assert usage.returncode == 4 and "--sw-client" in usage.stderr


def test_the_fixture_runs_a_check_in_a_test_of_one_s_own(
    gateway: tuple[str, str], tmp_path: Path
) -> None:
    url, mock = gateway
    (tmp_path / "test_gateway.py").write_text(
        "def test_streams(streamwire_check):\n"
        f"    report = streamwire_check({url!r}, clients=['openai-chat'],\n"
        f"                              cases=['short-text'], mock_url={mock!r})\n"
        "    assert report.exit_status == 0, report.verdicts\n"
        "    assert [c.case for c in report.cells] == ['short-text']\n"
    )
    done = _pytest(tmp_path)
    assert done.returncode == 0 and "1 passed" in done.stdout, done.stdout + done.stderr


def test_recorded_fixtures_replay_as_items(tmp_path: Path) -> None:
    fixtures = tmp_path / "fixtures"
    fixtures.mkdir()
    source = ROOT / "fixtures" / "providers" / "anthropic"
    for name in ("asdk-basic.json", "asdk-basic.sse"):
        (fixtures / name).write_bytes((source / name).read_bytes())
    done = _pytest(tmp_path, "--sw-fixtures", str(fixtures))
    assert done.returncode == 0 and "1 passed" in done.stdout, done.stdout
    # A parser that read the text differently: the item fails, naming the fact.
    manifest = json.loads((fixtures / "asdk-basic.json").read_text())
    manifest["expect"]["text"] = "Hello there"
    (fixtures / "asdk-basic.json").write_text(json.dumps(manifest))
    failed = _pytest(tmp_path, "--sw-fixtures", str(fixtures))
    assert failed.returncode == 1
    assert "anthropic/asdk-basic" in failed.stdout and "[whole] text" in failed.stdout
    # A manifest without its raw bytes' name is a failing item that says so,
    # beside the others, not an error that stops the collection.
    broken = dict(manifest, case="broken")
    del broken["raw"]
    (fixtures / "broken.json").write_text(json.dumps(broken))
    both = _pytest(tmp_path, "--sw-fixtures", str(fixtures))
    assert both.returncode == 1, both.stdout
    assert "FAILED ::streamwire-fixtures::broken.json" in both.stdout, both.stdout
    assert "FAILED ::streamwire-fixtures::anthropic/asdk-basic" in both.stdout, both.stdout
    assert "the manifest has no str 'raw'" in both.stdout


def test_a_session_that_asks_nothing_of_the_kit_imports_nothing_of_streamwire(
    tmp_path: Path,
) -> None:
    # The entry point is _streamwire_pytest, outside the package: a team's
    # pytest run pays for streamwire only when it asks for the kit.
    (tmp_path / "test_one.py").write_text(
        "import sys\n"
        "def test_one(request):\n"
        "    assert request.config.pluginmanager.has_plugin('streamwire')\n"
        "    loaded = [m for m in sys.modules if m.split('.')[0] == 'streamwire']\n"
        "    assert loaded == [], loaded\n"
    )
    done = _pytest(tmp_path)
    assert done.returncode == 0 and "1 passed" in done.stdout, done.stdout + done.stderr


def _startup(tmp_path: Path, *args: str) -> float:
    started = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", *args, str(tmp_path)],
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    return time.perf_counter() - started


@pytest.mark.timed
def test_the_plugin_costs_a_pytest_session_at_most_150_ms(tmp_path: Path) -> None:
    (tmp_path / "test_one.py").write_text("def test_one():\n    pass\n")
    runs = [(_startup(tmp_path), _startup(tmp_path, "-p", "no:streamwire")) for _ in range(3)]
    extra = statistics.median(with_it - without for with_it, without in runs)
    assert extra <= 0.15, runs
