"""The ``streamwire`` command on every bundled fixture, recordings, and bad input.

* ``inspect`` on every fixture's manifest (its protocol and options) exits 0
  and states the manifest's expected status, stop reason and text; ``--json``
  gives the same facts to machines.
* ``inspect`` on every raw fixture file detects the fixture's protocol from
  the content, or says it cannot tell (exit 1, suggesting ``--protocol``):
  it never names a wrong protocol.
* ``replay`` reproduces a recording (exit 0) and reports a tampered one
  (exit 1); an unreadable file exits 2 with a clear message.
"""

from __future__ import annotations

import io
import json
import subprocess
import sys
from pathlib import Path

import pytest

from fixture_replay import Fixture, manifests
from streamwire.cli import main
from streamwire.io._wire import http_protocols
from streamwire.io.record import RecordedChunk, Recording
from streamwire.io.replay import replay

FIXTURES = [f for f in manifests() if f.protocol in http_protocols()]


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    status = main(list(argv))
    out, err = capsys.readouterr()
    return status, out, err


@pytest.mark.parametrize("fixture", FIXTURES, ids=[f.name for f in FIXTURES])
def test_inspect_every_fixture_manifest(
    capsys: pytest.CaptureFixture[str], fixture: Fixture
) -> None:
    status, out, err = run(capsys, "inspect", str(fixture.path))
    assert status == 0, err
    assert f"protocol     {fixture.protocol} (given)" in out
    expect = fixture.expect
    if fixture.manifest.get("replay", {}).get("end") == "cancel":
        # inspect reads the whole file; the manifest's expectations are for a cancel.
        return
    if "status" in expect:
        assert f"status       {expect['status']}\n" in out
    if expect.get("stop_reason"):
        assert f"stop reason  {expect['stop_reason']}" in out
    if expect.get("tool_call_count"):
        assert f"tool calls   {expect['tool_call_count']}, " in out

    status, out, err = run(capsys, "inspect", "--json", str(fixture.path))
    assert status == 0, err
    doc = json.loads(out)
    assert doc["protocol"] == fixture.protocol
    for key in ("status", "stop_reason", "provider_stop_reason", "executable", "text"):
        if key in expect:
            assert doc["result"][key] == expect[key], key
    assert len(doc["events"]) == doc["result"]["metrics"]["events"]


@pytest.mark.parametrize("fixture", FIXTURES, ids=[f.name for f in FIXTURES])
def test_inspect_every_raw_file_detects_its_protocol_or_says_so(
    capsys: pytest.CaptureFixture[str], fixture: Fixture
) -> None:
    status, out, err = run(capsys, "inspect", "--no-events", str(fixture.raw_path))
    if status == 0 and "(from the shape of the error body" in out:
        # An error object: every adapter reads it alike; the shape names the provider.
        assert "status       error\n" in out
        told = out.split("protocol     ", 1)[1].split(" ", 1)[0]
        same = {
            "openai-responses": "openai-chat",
            "bedrock-invoke": "bedrock-converse",
            "gemini-json": "gemini",
        }
        assert told == same.get(fixture.protocol, fixture.protocol)
    elif status == 0:
        assert f"protocol     {fixture.protocol} (detected: " in out
        assert "status       " in out
    else:
        assert status == 1
        assert "cannot tell the protocol" in err and "--protocol" in err
        status, out, err = run(
            capsys, "inspect", "--no-events", "--protocol", fixture.protocol, str(fixture.raw_path)
        )
        assert status == 0, err


def test_inspect_shows_events_tool_calls_and_verdicts(capsys: pytest.CaptureFixture[str]) -> None:
    path = next(f.raw_path for f in FIXTURES if f.name == "openai-chat/oaipy-tool-single")
    status, out, _ = run(capsys, "inspect", str(path))
    assert status == 0
    lines = out.splitlines()
    assert lines[0].startswith("events of ")
    assert "MessageStarted" in lines[1]
    assert any("ToolCallCompleted" in line and "valid" in line for line in lines)
    assert "tool calls   1, executable" in out
    assert "usage        input 76 · output 24 · total 100" in out


def test_inspect_check_fails_an_incomplete_stream(capsys: pytest.CaptureFixture[str]) -> None:
    path = next(f.raw_path for f in FIXTURES if f.name == "openai-chat/eof-without-finish")
    assert run(capsys, "inspect", "--no-events", str(path))[0] == 0
    status, out, _ = run(capsys, "inspect", "--check", "--no-events", str(path))
    assert status == 3 and "status       incomplete" in out


def test_inspect_options_reach_the_adapter(capsys: pytest.CaptureFixture[str]) -> None:
    path = next(f.raw_path for f in FIXTURES if f.name == "openai-chat/oaipy-tool-nonstrict")
    fixture = next(f for f in FIXTURES if f.name == "openai-chat/oaipy-tool-nonstrict")
    if fixture.expect.get("warnings") and "missing_done" in fixture.expect["warnings"]:
        status, out, _ = run(capsys, "inspect", "--json", "--option", "strict_done=true", str(path))
        assert json.loads(out)["result"]["status"] == "incomplete"
    status, _, err = run(capsys, "inspect", "--option", "no_such_option=1", str(path))
    assert status == 2 and "bad --option" in err


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["inspect", "does/not/exist.sse"], "cannot read does/not/exist.sse: No such file"),
        (["inspect", "."], "cannot read .: Is a directory"),
        (["replay", "does/not/exist.jsonl"], "cannot read does/not/exist.jsonl"),
        (["sse", "does/not/exist.sse"], "cannot read does/not/exist.sse"),
    ],
    ids=["missing", "directory", "replay-missing", "sse-missing"],
)
def test_unreadable_file_exits_2_with_a_clear_message(
    capsys: pytest.CaptureFixture[str], argv: list[str], message: str
) -> None:
    status, out, err = run(capsys, *argv)
    assert status == 2
    assert out == ""
    assert message in err and err.startswith("streamwire: ")


def test_undetectable_input_and_unknown_protocol_exit_1(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    junk = tmp_path / "junk.bin"
    junk.write_bytes(b"hello, not a stream\n")
    status, _, err = run(capsys, "inspect", str(junk))
    assert status == 1 and "cannot tell the protocol" in err
    status, _, err = run(capsys, "inspect", "--protocol", "nope", str(junk))
    assert status == 1 and "unknown protocol 'nope'" in err


def test_progress_goes_to_stderr(capsys: pytest.CaptureFixture[str]) -> None:
    path = next(f.raw_path for f in FIXTURES if f.name == "openai-chat/02-long-text")
    status, out, err = run(
        capsys, "inspect", "--progress", "--no-events", "--chunk-size", "4096", str(path)
    )
    assert status == 0
    assert "streamwire: reading " in err and "MiB" in err
    assert "reading" not in out


def _recording(tmp_path: Path) -> Path:
    fixture = next(f for f in FIXTURES if f.name == "openai-chat/oaipy-tool-single")
    raw = fixture.raw
    draft = Recording(
        protocol="openai-chat",
        status=200,
        headers=[("Content-Type", "text/event-stream")],
        chunks=[RecordedChunk(0.01 * i, raw[i * 900 : (i + 1) * 900]) for i in range(6)],
        end="eof",
        end_t=0.06,
    )
    it = replay(draft, record=True)
    list(it)
    assert it.recording is not None
    path = tmp_path / "tool.jsonl"
    it.recording.save(path)
    return path


def test_replay_reproduces_a_recording(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    path = _recording(tmp_path)
    status, out, err = run(capsys, "replay", str(path))
    assert status == 0, err
    assert "replay       reproduces the recording" in out
    assert "timing       headers" in out and "burst no" in out
    status, out, _ = run(capsys, "replay", "--json", str(path))
    assert status == 0 and json.loads(out)["differences"] == []
    # inspect also reads recordings
    status, out, _ = run(capsys, "inspect", "--no-events", str(path))
    assert status == 0 and "(recorded)" in out


def test_replay_reports_a_tampered_recording(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    path = _recording(tmp_path)
    lines = path.read_text().splitlines()
    result = json.loads(lines[-1])
    result["result"]["executable"] = False
    lines[-1] = json.dumps(result)
    path.write_text("\n".join(lines) + "\n")
    status, out, err = run(capsys, "replay", str(path))
    assert status == 1
    assert "DIFFERS" in out and "result.executable" in err


def test_a_broken_recording_is_a_clear_error(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    path = tmp_path / "broken.jsonl"
    path.write_text(
        json.dumps({"format": "streamwire-recording/1", "protocol": "openai-chat"}) + "\n{oops\n"
    )
    status, _, err = run(capsys, "replay", str(path))
    assert status == 1 and "not a valid streamwire recording" in err


def test_standard_input_and_the_entry_point(tmp_path: Path) -> None:
    path = next(f.raw_path for f in FIXTURES if f.name == "openai-chat/01-short-text")
    done = subprocess.run(
        [sys.executable, "-m", "streamwire.cli", "inspect", "--json", "--no-events", "-"],
        input=path.read_bytes(),
        capture_output=True,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["result"]["status"] == "completed"


def test_sse_command_still_prints_json_lines(capsys: pytest.CaptureFixture[str]) -> None:
    path = next(f.raw_path for f in FIXTURES if f.name == "openai-chat/01-short-text")
    status, out, err = run(capsys, "sse", str(path))
    assert status == 0 and "events" in err
    assert all(json.loads(line)["event"] for line in io.StringIO(out))
