"""The kit in CI: JUnit XML, GitHub annotations, ``reproduce`` commands, ``--config``, the Action.

Ground truth is the check's own JSON and summary line, and hops of our own
(``kit_hops.py``) that each alter one thing: the JUnit XML is read back with
a real XML parser and held to the JSON (one testcase per cell, the counts
of the summary line, failure messages that are the verdicts' names); every
annotation line is held to GitHub's workflow-command syntax, a hostile
verdict's text included; every failing cell's ``curl`` command, run against
its hop, shows the hop's defect, and against the mock the bytes it altered,
with the key coming from the shell and never written anywhere; the options
of a TOML file, ``${VAR}`` and ``pyproject.toml`` resolve as documented, and
the command line wins; ``action.yml`` is a composite action whose scripts
run.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import xml.etree.ElementTree as ET
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from conftest import REPO_ROOT
from streamwire.kit.cli import main as kit_main
from streamwire.kit.cli import parse_check
from streamwire.kit.client.raw import client_request
from streamwire.kit.config import ConfigError
from streamwire.kit.judge.cell import LAYERS, Cell, Check, repeated
from streamwire.kit.judge.verdicts import ACCEPTABLE
from streamwire.kit.report.document import Report, build_report
from streamwire.kit.report.github import escape_data, escape_property, workflow_commands
from streamwire.kit.report.junit import write_junit
from streamwire.kit.report.reproduce import cell_command, curl_command
from streamwire.kit.vocab.cases import CASES

CURL = shutil.which("curl")
needs_curl = pytest.mark.skipif(CURL is None, reason="curl is not installed")
#: A real key given with --key-env: it must appear nowhere the run writes.
SECRET = "sk-real-do-not-leak-7f3c9a"
#: GitHub's workflow command: ``::level [name=value[,name=value]...]::message``,
#: a value holding no ``,`` or ``:`` and the message no line break (escaped).
WORKFLOW_COMMAND = re.compile(r"::(error|warning)( [a-z]+=[^,:]*(,[a-z]+=[^,:]*)*)?::[^\r\n]*")
#: A verdict's reason as a hostile gateway could make it.
HOSTILE = "50% off\r\n::error title=x::injected, a:b\x00\x1b[31m \ud800 <b>&</b>"


# --- a run through two hops, each altering one thing --------------------------------------


def _started(argv: list[str]) -> tuple[subprocess.Popen[str], str]:
    """A server process of ours and the URL of its first line (``listening on URL``)."""
    proc = subprocess.Popen(argv, stdout=subprocess.PIPE, text=True, cwd=REPO_ROOT / "tests")
    assert proc.stdout is not None
    first = proc.stdout.readline().strip()
    assert first.startswith("listening on http://"), first
    return proc, first.rpartition(" ")[2]


@dataclass
class HopRun:
    """The check's outputs through the hops, and the servers, still running."""

    status: int
    out: str
    folder: Path
    doc: dict[str, Any]
    mock: str
    hops: dict[str, str]

    def text(self, name: str) -> str:
        return (self.folder / name).read_text(encoding="utf-8")


@pytest.fixture(scope="module")
def hop_run(tmp_path_factory: pytest.TempPathFactory) -> Iterator[HopRun]:
    folder = tmp_path_factory.mktemp("ci")
    servers: list[subprocess.Popen[str]] = []
    try:
        mock, mock_url = _started([sys.executable, "-m", "streamwire.kit.cli", "mock-upstream"])
        servers.append(mock)
        hops = {}
        for label, behaviour in (("retyped", "retype_error"), ("dropped", "drop_usage")):
            hop, url = _started([sys.executable, "kit_hops.py", mock_url, behaviour])
            servers.append(hop)
            hops[label] = url
        argv = [
            "check",
            *hops.values(),
            *("--label", "retyped", "--label", "dropped"),
            *("--mock", mock_url, "--client", "openai-chat,anthropic"),
            *("--cases", "short-text,usage,in-stream-error", "--delivery", "whole"),
            *("--no-unary", "--key-passthrough", "--key-env", "GATEWAY_KEY"),
            # One transport: the cells these tests name (tests/test_kit_transport.py
            # has the others).
            *("--transport", "http1"),
            *("--json", str(folder / "r.json"), "--junit", str(folder / "r.xml")),
            *("--markdown", str(folder / "r.md"), "--html", str(folder / "r.html")),
        ]
        environ = {
            "GITHUB_ACTIONS": "true",
            "GITHUB_STEP_SUMMARY": str(folder / "summary.md"),
            "GATEWAY_KEY": SECRET,
        }
        stdout = io.StringIO()
        with pytest.MonkeyPatch.context() as patch, contextlib.redirect_stdout(stdout):
            for name, value in environ.items():
                patch.setenv(name, value)
            status = kit_main(argv)
        doc = json.loads((folder / "r.json").read_text(encoding="utf-8"))
        yield HopRun(status, stdout.getvalue(), folder, doc, mock_url, hops)
    finally:
        for server in servers:
            server.terminate()
            server.wait(10)


def test_the_hops_fail_the_cells_they_alter(hop_run: HopRun) -> None:
    failing = {(c["route"], c["client"], c["case"]) for c in hop_run.doc["cells"] if _fails(c)}
    assert failing == {
        ("retyped", "openai-chat", "in-stream-error"),
        ("retyped", "anthropic", "in-stream-error"),
        ("dropped", "openai-chat", "usage"),
    }
    assert hop_run.status == 1 == hop_run.doc["summary"]["exit_status"]


def _fails(cell: Mapping[str, Any]) -> bool:
    return "fail" in cell["layers"].values() or bool(cell.get("flaky"))


def _junit(text: str) -> ET.Element:
    root = ET.fromstring(text)
    assert root.tag == "testsuites"
    (suite,) = root.findall("testsuite")
    return suite


def test_junit_has_a_testcase_per_cell_and_the_summary_s_counts(hop_run: HopRun) -> None:
    suite = _junit(hop_run.text("r.xml"))
    summary = hop_run.doc["summary"]
    cases = suite.findall("testcase")
    assert len(cases) == summary["cells"] == len(hop_run.doc["cells"])
    assert int(suite.get("tests", "")) == summary["cells"]
    assert int(suite.get("failures", "")) == summary["failed"] + summary.get("flaky", 0)
    assert int(suite.get("skipped", "")) == summary["inconclusive"]
    assert suite.get("errors") == "0"
    # One testcase per cell, in the JSON's order: route and client, case and delivery.
    for case, cell in zip(cases, hop_run.doc["cells"], strict=True):
        assert case.get("classname") == f"{cell['route']} <- {cell['client']}"
        assert case.get("name") == f"{cell['case']}[{cell['delivery']}]"
        failure = case.find("failure")
        assert (failure is not None) == _fails(cell)
        if failure is None:
            continue
        # The message: the verdicts of the cell's pair, by name.
        names = set(failure.get("message", "").split(", "))
        raised = {
            v["name"]
            for v in hop_run.doc["verdicts"]
            if (v["route"], v["client"]) == (cell["route"], cell["client"])
            and cell["case"] in v["cases"]
        }
        assert names and names <= raised, (names, raised)
        text = failure.text or ""
        layer = next(k for k, v in cell["layers"].items() if v == "fail")
        assert cell["evidence"]["layers"][layer]["why"] in text
        assert "do: " in text and f"reproduce: {cell['reproduce']}" in text


def test_junit_failures_name_the_verdicts(hop_run: HopRun) -> None:
    suite = _junit(hop_run.text("r.xml"))
    messages = {
        (case.get("classname"), case.get("name")): failure.get("message")
        for case in suite.findall("testcase")
        if (failure := case.find("failure")) is not None
    }
    assert messages == {
        ("retyped <- openai-chat", "in-stream-error[whole]"): "error_masked",
        ("retyped <- anthropic", "in-stream-error[whole]"): "error_masked",
        ("dropped <- openai-chat", "usage[whole]"): "usage_incomplete",
    }


def test_github_annotations_follow_the_workflow_command_syntax(hop_run: HopRun) -> None:
    lines = [line for line in hop_run.out.splitlines() if line.startswith("::")]
    assert lines and all(WORKFLOW_COMMAND.fullmatch(line) for line in lines), lines
    # One per verdict: an error for each that fails the run.
    errors = [line for line in lines if line.startswith("::error ")]
    assert len(errors) == len(lines) == len(hop_run.doc["verdicts"])
    for verdict in hop_run.doc["verdicts"]:
        title = escape_property(f"{verdict['name']}: {verdict['route']} <- {verdict['client']}")
        assert any(line.startswith(f"::error title={title}::") for line in errors), title
    # The message: why, where, what to do and the command, its lines escaped.
    assert all("%0Ado: " in line and "%0Areproduce: curl -N " in line for line in lines)
    summary = hop_run.text("summary.md")
    assert summary.startswith("# streamwire check") and "## Verdicts" in summary
    assert "`error_masked`" in summary and "`usage_incomplete`" in summary


def test_the_real_key_is_written_nowhere(hop_run: HopRun) -> None:
    for name in ("r.json", "r.xml", "r.md", "r.html", "summary.md"):
        assert SECRET not in hop_run.text(name), name
    assert SECRET not in hop_run.out
    failing = [c for c in hop_run.doc["cells"] if _fails(c)]
    assert failing and all('"$GATEWAY_KEY"' in c["reproduce"] for c in failing)
    assert all("reproduce" not in c for c in hop_run.doc["cells"] if not _fails(c))


def _curl(command: str, **env: str) -> str:
    done = subprocess.run(
        ["sh", "-c", command],
        capture_output=True,
        text=True,
        timeout=30,
        env={**os.environ, **env},
        check=False,
    )
    assert done.returncode == 0, done.stderr
    return done.stdout


@needs_curl
def test_each_reproduce_command_shows_its_cell_s_defect(hop_run: HopRun) -> None:
    for cell in hop_run.doc["cells"]:
        if not _fails(cell):
            continue
        command = cell["reproduce"]
        hop = hop_run.hops[cell["route"]]
        assert f" {hop}/" in command
        seen = _curl(command, GATEWAY_KEY="sk-from-the-shell")
        # The same request straight to the mock: the bytes the hop altered.
        direct = _curl(command.replace(hop, hop_run.mock), GATEWAY_KEY="sk-from-the-shell")
        if cell["case"] == "in-stream-error":
            assert '"gateway_error"' in seen and '"gateway_error"' not in direct
            original = "server_error" if cell["client"] == "openai-chat" else "overloaded_error"
            assert f'"{original}"' in direct and f'"{original}"' not in seen
        else:
            assert '"prompt_tokens"' in direct and '"prompt_tokens"' not in seen
        assert "data: " in seen  # a stream, as the cell's client asked


def test_reproduce_is_beside_the_verdict_in_every_rendering(hop_run: HopRun) -> None:
    commands = {c["reproduce"] for c in hop_run.doc["cells"] if _fails(c)}
    verdicts = len(hop_run.doc["verdicts"])
    # The terminal: a line under each verdict, unwrapped.
    shown = [
        line.split("reproduce: ", 1)[1]
        for line in hop_run.out.splitlines()
        if line.startswith("      reproduce: ")
    ]
    assert len(shown) == verdicts and set(shown) <= commands
    markdown = hop_run.text("r.md")
    assert markdown.count("Reproduce its first failing cell") == verdicts
    assert all(command in markdown for command in shown)
    # The HTML: beside each verdict, and in each failing cell's row.
    page = hop_run.text("r.html")
    assert page.count('<pre class="repro">') == verdicts + len(commands)


# --- a direct run: the kit's own key, an SDK cell --------------------------------------------


@needs_curl
def test_the_kit_s_own_key_stays_in_the_shell() -> None:
    import asyncio

    from streamwire.kit.run.check import CheckPlan, Route, run_check
    from streamwire.kit.upstream.mock import MockUpstream

    async def go() -> tuple[list[Cell], str, str]:
        async with MockUpstream() as mock:
            plan = CheckPlan(
                routes=[Route(mock.url)],
                clients=["anthropic"],
                cases=["short-text"],
                deliveries=["whole"],
                unary=False,
                mock_url=mock.url,
            )
            cells = await run_check(plan)
            assert plan.key is not None
            command = cells[0].reproduce or ""
            out = await asyncio.to_thread(_curl, command, STREAMWIRE_KEY="anything")
            return cells, plan.key, out

    cells, key, out = asyncio.run(go())
    command = cells[0].reproduce or ""
    assert '"$STREAMWIRE_KEY"' in command and key not in command
    assert "event: message_stop" in out and "text_delta" in out


def test_an_sdk_cell_reproduces_with_its_protocol_s_raw_request() -> None:
    case = CASES["single-tool"]
    for client in ("openai-chat via openai", "anthropic via anthropic", "gemini via google-genai"):
        protocol = client.split(" via ")[0]
        command = cell_command(client, case, "sw-m", "http://gw", key="k-1", var="V", canary="c")
        url, headers, body = client_request(protocol, case, "sw-m", "http://gw", "k-1", "c")
        assert command == curl_command(url, headers, body, key="k-1", var="V")
        assert "k-1" not in command and '"$V"' in command and " -N " in command


def test_a_curl_command_speaks_the_http_version_of_its_cell() -> None:
    # curl offers h2 in ALPN over https unless told: an HTTP/1.1 cell says --http1.1.
    def flags(url: str, http2: bool) -> list[str]:
        words = curl_command(url, [], {}, key=None, http2=http2).split()
        return [w for w in words if w.startswith("--http")]

    assert flags("https://gw/v1", http2=False) == ["--http1.1"]
    assert flags("http://gw/v1", http2=False) == []
    assert flags("https://gw/v1", http2=True) == ["--http2"]
    assert flags("http://gw/v1", http2=True) == ["--http2-prior-knowledge"]


def test_a_curl_command_is_quoted_for_the_shell() -> None:
    body = {"model": "it's $HOME `id`", "text": "a'b"}
    command = curl_command(
        "http://gw/v1?x=1&y=2", [("x-api-key", "KEY"), ("x", "pre-KEY-post")], body, key="KEY"
    )
    assert "KEY" not in command.replace("STREAMWIRE_KEY", "")
    # The shell reads back exactly the words, the key from its environment.
    echoed = subprocess.run(
        ["sh", "-c", command.replace("curl", "printf '%s\\n'", 1)],
        capture_output=True,
        text=True,
        env={**os.environ, "STREAMWIRE_KEY": "sk-shell"},
        check=True,
    ).stdout.splitlines()
    assert echoed[:3] == ["-N", "-sS", "http://gw/v1?x=1&y=2"]
    assert "x-api-key: sk-shell" in echoed and "x: pre-sk-shell-post" in echoed
    assert json.loads(echoed[-1]) == body


# --- JUnit and annotations for every state, with hostile text ---------------------------------


def _cell(case: str, route: str, *failing: tuple[str, Check], **evidence: Any) -> Cell:
    checks = {layer: Check("pass") for layer in LAYERS}
    checks.update(failing)
    return Cell(case, "openai-chat", "openai-chat", "whole", checks, dict(evidence), route)


def _states_report() -> Report:
    route = "gw:1,2"
    failed = _cell("short-text", route, ("deltas", Check("fail", HOSTILE, ("altered",))))
    failed.reproduce = "curl -N http://gw/v1/chat/completions"
    degraded = _cell("reasoning", route, ("deltas", Check("degraded", "signature lost", ("lost",))))
    cut = _cell("long-text", route, ("http", Check("fail", "read timeout", ("kit_limit",))))
    cut.checks["http"] = Check("not_applicable", "the kit's read timeout", ("kit_limit",))
    runs = [
        _cell("usage", route, ("usage", Check("fail", "usage lost", ("missing",))), tag="k1"),
        _cell("usage", route, tag="k2"),
    ]
    flaky = repeated(runs)
    return build_report([_cell("single-tool", route), failed, degraded, cut, flaky])


def test_junit_shows_every_state_as_ci_reads_it() -> None:
    report = _states_report()
    assert [c.state for c in report.cells] == ["pass", "fail", "degraded", "inconclusive", "flaky"]
    out = io.StringIO()
    write_junit(report, out)
    suite = _junit(out.getvalue())
    summary = report.summary()
    assert int(suite.get("failures", "")) == summary["failed"] + summary["flaky"] == 2
    assert int(suite.get("skipped", "")) == summary["inconclusive"] == 1
    assert int(suite.get("tests", "")) == summary["cells"] == 5
    passed, failed, degraded, cut, flaky = suite.findall("testcase")
    assert list(passed) == []
    failure = failed.find("failure")
    assert failure is not None and failure.get("type") == "fail"
    assert failure.get("message") in {v["name"] for v in report.verdicts}
    assert "50% off" in (failure.text or "") and "\\x00" in (failure.text or "")
    assert "reproduce: curl -N http://gw/v1/chat/completions" in (failure.text or "")
    assert degraded.find("failure") is None and degraded.find("skipped") is None
    props = {p.get("name"): p.get("value") for p in degraded.iter("property")}
    assert props["state"] == "degraded" and props["verdict"] in ACCEPTABLE
    assert "degraded" in (degraded.findtext("system-out") or "")
    skipped = cut.find("skipped")
    assert skipped is not None and "inconclusive" in skipped.get("message", "")
    unstable = flaky.find("failure")
    assert unstable is not None and unstable.get("type") == "flaky"
    assert unstable.get("message", "").startswith("flaky: 1 of 2 runs failed")
    assert "run 1 (k1): fail" in (flaky.findtext("failure") or "")
    assert "run 2 (k2): pass" in (flaky.findtext("failure") or "")


def test_junit_names_the_transport_when_the_cells_ran_over_several() -> None:
    cells = [_cell("short-text", "gw") for _ in range(2)]
    cells[0].transport, cells[1].transport = "http1", "http1-gzip"
    out = io.StringIO()
    write_junit(build_report(cells), out)
    names = [c.get("name") for c in _junit(out.getvalue()).findall("testcase")]
    assert names == ["short-text[whole-http1]", "short-text[whole-http1-gzip]"]


def test_hostile_text_cannot_break_an_annotation() -> None:
    report = _states_report()
    lines = workflow_commands(report)
    assert lines and all(WORKFLOW_COMMAND.fullmatch(line) for line in lines), lines
    levels = {
        v["name"]: ("warning" if v["name"] in ACCEPTABLE else "error") for v in report.verdicts
    }
    assert "warning" in levels.values() and "error" in levels.values()
    hostile = next(line for line in lines if "50%25 off" in line)
    assert "%0D%0A::error title=x::injected, a:b" in hostile
    assert hostile.startswith("::error title=") and "gw%3A1%2C2" in hostile.split("::")[1]
    # The flaky cell has an error of its own.
    assert any(line.startswith("::error title=flaky%3A usage gw%3A1%2C2") for line in lines)
    assert escape_data("a%\r\nb") == "a%25%0D%0Ab"
    assert escape_property("a%\r\n:,b") == "a%25%0D%0A%3A%2Cb"


# --- --config and pyproject.toml -------------------------------------------------------------


def _toml(path: Path, text: str) -> Path:
    path.write_text(text, encoding="utf-8")
    return path


def test_a_config_file_gives_options_and_the_command_line_wins(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("SW_GATEWAY", "http://127.0.0.1:4000")
    monkeypatch.setenv("SW_OUT", str(tmp_path))
    config = _toml(
        tmp_path / "kit.toml",
        'base_url = ["${SW_GATEWAY}"]\n'
        'client = ["openai-chat", "anthropic"]\n'
        'cases = "short-text,usage"\n'
        'label = ["gateway"]\n'
        "key_passthrough = true\n"
        "unary = false\n"
        "repeat = 2\n"
        "timeout = 2.5\n"
        'json = "${SW_OUT}/report.json"\n',
    )
    args = parse_check(["--config", str(config)])
    assert args.base_url == ["http://127.0.0.1:4000"]
    assert args.client == ["openai-chat", "anthropic"] and args.cases == ["short-text", "usage"]
    assert args.label == ["gateway"] and args.key_passthrough is True and args.unary is False
    assert args.repeat == 2 and args.timeout == 2.5
    assert args.json == f"{tmp_path}/report.json"
    assert args.delivery == ["whole", "tiny", "paced"] and args.models == "{model}"
    # The command line overrides, even with an option's default value.
    again = parse_check(
        ["--config", str(config), "--repeat", "3", "--unary", "--cases", "all", "--label", "x"]
    )
    assert again.repeat == 3 and again.unary is True and len(again.cases) == len(CASES)
    assert again.label == ["x"] and again.client == ["openai-chat", "anthropic"]
    positional = parse_check(["http://elsewhere", "--config", str(config)])
    assert positional.base_url == ["http://elsewhere"]


def test_pyproject_gives_the_options_when_no_base_url_or_config_does(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _toml(
        tmp_path / "pyproject.toml",
        '[project]\nname = "gw"\n\n[tool.streamwire.check]\n'
        'base_url = ["http://127.0.0.1:4000"]\nclient = "gemini"\n',
    )
    monkeypatch.chdir(tmp_path)
    args = parse_check([])
    assert args.base_url == ["http://127.0.0.1:4000"] and args.client == ["gemini"]
    # BASE_URL given: the project's table is not read.
    assert parse_check(["http://other"]).client is None
    # --config given: that file only.
    other = _toml(tmp_path / "other.toml", 'client = "anthropic"\n')
    assert parse_check(["--config", str(other)]).base_url == []


@pytest.mark.parametrize(
    ("text", "said"),
    [
        ("bogus_option = 1\n", "'bogus_option'"),
        ("repeat = 0\n", "repeat"),
        ("key_passthrough = 'yes'\n", "key_passthrough"),
        ('json = "${SW_NOT_SET_ANYWHERE}"\n', "SW_NOT_SET_ANYWHERE"),
        ("client = [\n", "no TOML"),
        ('client = "klingon"\n', "klingon"),
        ('config = "other.toml"\n', "'config'"),
    ],
)
def test_a_bad_config_is_a_usage_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], text: str, said: str
) -> None:
    config = _toml(tmp_path / "kit.toml", text)
    with pytest.raises(ConfigError, match=re.escape(said)):
        parse_check(["--config", str(config)])
    assert kit_main(["check", "--config", str(config)]) == 2
    err = capsys.readouterr().err
    assert err.startswith("streamwire: ") and said in err


def test_an_unknown_key_in_pyproject_is_a_usage_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    _toml(tmp_path / "pyproject.toml", "[tool.streamwire.check]\nclients = 'anthropic'\n")
    monkeypatch.chdir(tmp_path)
    assert kit_main(["check"]) == 2
    assert "unknown option 'clients'" in capsys.readouterr().err


def test_a_config_file_drives_a_whole_check(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    monkeypatch.setenv("SW_OUT", str(tmp_path))
    config = _toml(
        tmp_path / "kit.toml",
        f'base_url = ["http://127.0.0.1:{port}"]\nmock_port = {port}\n'
        'client = "openai-chat"\ncases = ["short-text"]\ndelivery = "whole"\n'
        'unary = false\nquiet = true\njunit = "${SW_OUT}/kit.xml"\n',
    )
    assert kit_main(["check", "--config", str(config)]) == 0
    # short-text, whole, over each default transport (http1, http1-gzip).
    assert len(_junit((tmp_path / "kit.xml").read_text()).findall("testcase")) == 2


def test_a_missing_key_variable_is_a_usage_error() -> None:
    with pytest.raises(SystemExit) as exited:
        kit_main(["check", "http://127.0.0.1:9", "--client", "anthropic", "--key-env", "SW_NONE"])
    assert exited.value.code == 2


def test_help_ends_with_the_exit_statuses(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        kit_main(["check", "--help"])
    lines = capsys.readouterr().out.rstrip().splitlines()
    assert lines[-5] == "exit status:"
    statuses = lines[-4:]
    assert [line.split()[0] for line in statuses] == ["0", "1", "2", "3"]
    assert "semantic_downgrade" in statuses[0] and "sdk_limit" in statuses[0]
    assert "flaky" in statuses[1] and "usage error" in statuses[2]
    assert "inconclusive" in statuses[3]
    assert set(ACCEPTABLE) == {"semantic_downgrade", "sdk_limit"}


# --- action.yml --------------------------------------------------------------------------------


def _action() -> dict[str, Any]:
    yaml = pytest.importorskip("yaml")
    doc: dict[str, Any] = yaml.safe_load((REPO_ROOT / "action.yml").read_text())
    return doc


def test_action_yml_is_a_composite_action() -> None:
    action = _action()
    assert action["name"] and action["description"]
    assert action["runs"]["using"] == "composite"
    steps = action["runs"]["steps"]
    for step in steps:
        assert ("run" in step) != ("uses" in step), step
        if "run" in step:
            assert step.get("shell") == "bash", step
    inputs = action["inputs"]
    assert {"base-url", "client", "cases", "config", "args", "mock"} <= set(inputs)
    assert all("description" in spec for spec in inputs.values())
    used = set(re.findall(r"\$\{\{\s*inputs\.([a-z-]+)\s*\}\}", json.dumps(action)))
    assert used <= set(inputs), used - set(inputs)
    upload = next(s for s in steps if str(s.get("uses", "")).startswith("actions/upload-artifact"))
    assert upload["if"] == "always()"
    paths = upload["with"]["path"]
    assert all(f"inputs.{name}" in paths for name in ("json", "html"))
    scripts = "\n".join(s.get("run", "") for s in steps)
    assert "streamwire mock-upstream" in scripts and "--port" in scripts
    assert "streamwire check" in scripts


def _step(action: Mapping[str, Any], name: str) -> dict[str, Any]:
    return next(s for s in action["runs"]["steps"] if s["name"] == name)


def _env(step: Mapping[str, Any], inputs: Mapping[str, str]) -> dict[str, str]:
    """The step's environment, its ``${{ inputs.X }}`` as the runner substitutes them."""
    return {
        name: re.sub(r"\$\{\{\s*inputs\.([a-z-]+)\s*\}\}", lambda m: inputs[m.group(1)], value)
        for name, value in step.get("env", {}).items()
    }


@pytest.mark.skipif(shutil.which("streamwire") is None, reason="no streamwire command")
def test_action_scripts_start_the_mock_and_check(tmp_path: Path) -> None:
    action = _action()
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = str(s.getsockname()[1])
    inputs = {name: str(spec.get("default", "")) for name, spec in action["inputs"].items()}
    inputs |= {
        "mock": "true",
        "mock-port": port,
        "base-url": f"http://127.0.0.1:{port}",
        "client": "openai-chat",
        "cases": "short-text",
        "args": "--delivery whole --no-unary --quiet",
    }
    runner = {
        "RUNNER_TEMP": str(tmp_path),
        "GITHUB_OUTPUT": str(tmp_path / "output"),
        "GITHUB_STEP_SUMMARY": str(tmp_path / "summary.md"),
        "GITHUB_ACTIONS": "true",
    }
    bash = ["bash", "--noprofile", "--norc", "-eo", "pipefail", "-c"]
    mock_step = _step(action, "Start the mock upstream")
    # Its own process group: the mock it leaves running is ended with it.
    mock = subprocess.Popen(
        [*bash, mock_step["run"]],
        env={**os.environ, **runner, **_env(mock_step, inputs)},
        cwd=tmp_path,
        start_new_session=True,
    )
    try:
        assert mock.wait(60) == 0
        check_step = _step(action, "Check the gateway")
        done = subprocess.run(
            [*bash, check_step["run"]],
            env={**os.environ, **runner, **_env(check_step, inputs)},
            cwd=tmp_path,
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        )
        assert done.returncode == 0, done.stdout + done.stderr
        assert (tmp_path / "output").read_text() == "exit-status=0\n"
        for name in ("json", "html", "junit"):
            assert (tmp_path / inputs[name]).is_file(), name
        assert "| route | upstream |" in (tmp_path / "summary.md").read_text()
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(mock.pid, signal.SIGTERM)


def _schema_check(schema: str, path: Path) -> subprocess.CompletedProcess[str]:
    """check-jsonschema's vendored copy of one of GitHub's schemas, run on ``path``."""
    return subprocess.run(
        [sys.executable, "-m", "check_jsonschema", "--builtin-schema", schema, str(path)],
        capture_output=True,
        text=True,
        check=False,
    )


def test_the_action_and_a_workflow_using_it_match_github_s_schemas(tmp_path: Path) -> None:
    pytest.importorskip("check_jsonschema")
    done = _schema_check("vendor.github-actions", REPO_ROOT / "action.yml")
    assert done.returncode == 0, done.stdout + done.stderr
    workflow = tmp_path / "kit.yml"
    workflow.write_text(
        "on: push\njobs:\n  kit:\n    runs-on: ubuntu-latest\n    steps:\n"
        "      - uses: actions/checkout@v4\n      - uses: ./\n        with:\n"
        "          base-url: http://127.0.0.1:4000\n          client: openai-chat\n"
        '          mock: "true"\n'
    )
    done = _schema_check("vendor.github-workflows", workflow)
    assert done.returncode == 0, done.stdout + done.stderr
    # The schema check can fail: an action without its steps' shell is refused.
    broken = tmp_path / "action.yml"
    broken.write_text(
        (REPO_ROOT / "action.yml").read_text().replace("using: composite", "using: nothing")
    )
    assert _schema_check("vendor.github-actions", broken).returncode != 0


@pytest.mark.skipif(shutil.which("actionlint") is None, reason="actionlint is not installed")
def test_actionlint_accepts_a_workflow_using_the_action(tmp_path: Path) -> None:
    shutil.copy(REPO_ROOT / "action.yml", tmp_path / "action.yml")
    workflows = tmp_path / ".github" / "workflows"
    workflows.mkdir(parents=True)
    (workflows / "kit.yml").write_text(
        "on: push\njobs:\n  kit:\n    runs-on: ubuntu-latest\n    steps:\n"
        "      - uses: actions/checkout@v4\n      - uses: ./\n        with:\n"
        "          base-url: http://127.0.0.1:4000\n          client: openai-chat\n"
        '          mock: "true"\n'
    )
    subprocess.run(["git", "init", "-q"], cwd=tmp_path, check=True)
    done = subprocess.run(["actionlint"], cwd=tmp_path, capture_output=True, text=True)
    assert done.returncode == 0, done.stdout + done.stderr


def test_a_bad_argument_exits_2() -> None:
    with pytest.raises(SystemExit) as exited:
        kit_main(["check", "--repeat", "zero"])
    assert exited.value.code == 2


# --- what a report lists first ----------------------------------------------------------------


def test_every_verdict_has_exactly_one_cost() -> None:
    from streamwire.kit.judge.verdicts import COST_GROUPS, VERDICT_NAMES

    placed = [name for _, names in COST_GROUPS for name in names]
    assert sorted(placed) == sorted(VERDICT_NAMES)


def test_reports_list_what_costs_a_user_most_first() -> None:
    # The observability gap comes first in plan order and in the rules'
    # precedence; a corrupted call and a masked error cost more.
    lost_id = _cell("short-text", "gw", ("request_id", Check("fail", "no id", ("lost",))))
    masked = _cell("in-stream-error", "gw", ("completion", Check("fail", "success", ("masked",))))
    both = _cell(
        "single-tool",
        "gw",
        ("request_id", Check("fail", "no id", ("lost",))),
        ("tool_calls", Check("fail", "arguments altered", ("altered",))),
    )
    report = build_report([lost_id, masked, both])
    names = [v["name"] for v in report.verdicts]
    assert names.index("request_id_lost") == len(names) - 1, names
    failing = report.failing()
    assert [cell.case for cell, _, _ in failing] == ["single-tool", "in-stream-error", "short-text"]
    _, layers, why = failing[0]
    assert layers == ["tool_calls", "request_id"] and why == "arguments altered"


def test_advice_follows_the_cause_the_cells_show() -> None:
    def delayed(lag: int) -> Cell:
        check = Check("degraded", "late", ("delayed",), {"lag_median_ms": lag})
        return _cell("short-text", f"gw{lag}", ("streaming", check))

    def not_called(status: int) -> Cell:
        check = Check("fail", f"HTTP {status}", ("not_called",))
        return _cell("short-text", f"nc{status}", ("http", check), client={"status": status})

    def batched(route: str, *tags: str) -> Cell:
        check = Check("degraded", "late", ("delayed", *tags), {"lag_median_ms": 90})
        return _cell("long-text", route, ("streaming", check), server="Caddy")

    report = build_report(
        [
            delayed(120),
            delayed(19000),
            not_called(404),
            not_called(400),
            batched("gz", "compressed"),
            batched("half", "compressed"),
            batched("half"),
        ]
    )
    advice = {v["route"]: v["advice"] for v in report.verdicts}
    # Every cell came compressed: the compressor's batches, and Caddy's setting.
    assert "compressor" in advice["gz"] and "Caddy: encode's match" in advice["gz"]
    assert "compressor" not in advice["half"] and "http-no-delay" in advice["half"]
    assert "http-no-delay" in advice["gw120"] and "cannot keep up" not in advice["gw120"]
    assert "cannot keep up" in advice["gw19000"] and "http-no-delay" not in advice["gw19000"]
    assert "no such endpoint" in advice["nc404"] and "HTTP 404" in advice["nc404"]
    assert "no such endpoint" not in advice["nc400"] and "parameter" in advice["nc400"]


def test_advice_names_the_setting_of_the_hop_that_answered() -> None:
    def idle(route: str, server: str | None) -> Cell:
        check = Check("fail", "cut", ("idle_cut",), {"cut_after_s": 60.0})
        evidence = {"server": server} if server else {}
        return _cell("silence-start", route, ("completion", check), **evidence)

    report = build_report(
        [
            idle("nginx", "nginx/1.22.1"),
            idle("h2o", "h2o/2.2.6"),
            idle("mixed", "nginx/1.22.1"),
            idle("mixed", "Apache/2.4.57 (Debian)"),
            idle("unknown", None),
        ]
    )
    advice = {v["route"]: v["advice"] for v in report.verdicts if v["name"] == "idle_timeout"}
    assert "nginx: proxy_read_timeout" in advice["nginx"]
    assert "h2o: proxy.timeout.io" in advice["h2o"]
    # Two kinds of server answered: no one setting to name.
    assert "this route's hop" not in advice["mixed"] and "this route's hop" not in advice["unknown"]
