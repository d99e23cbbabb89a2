"""``streamwire record`` against the loopback server, and replaying what it saved.

* The request goes out with the body given and the headers from the
  environment (``STREAMWIRE_HEADERS``, ``--key-env``); nothing of a key
  reaches the saved files or the output.
* Events are printed as they arrive: the first one is on standard output
  before the server has sent the rest.
* The recording replays and reproduces; the fixture and its manifest pass
  the project's own fixture checks under every chunking.
* ``--hash-content`` saves hashes, and replaying that recording says so
  plainly and shows the original verdicts.
* ``streamwire replay`` without a file replays the bundled sample.
"""

from __future__ import annotations

import io
import json
import sys
import threading
import time
from pathlib import Path

import pytest

from chunking import chunkings
from conftest import FIXTURES_DIR
from fixture_replay import Fixture, check_expect
from servers.stream_server import Scenario, shared_server
from streamwire.cli import main

TOOLS = FIXTURES_DIR / "providers" / "anthropic" / "prism-tools.sse"
SECRET = "sk-ant-test-0123456789"


def _chunks(body: bytes) -> list[bytes]:
    parts = body.split(b"\n\n")
    return [p + b"\n\n" for p in parts[:-1]]


def _record(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, url: str, *extra: str
) -> tuple[int, str, str]:
    request = tmp_path / "request.json"
    request.write_text(json.dumps({"model": "claude-x", "stream": True, "max_tokens": 64}))
    monkeypatch.setenv("TEST_ANTHROPIC_KEY", SECRET)
    monkeypatch.setenv("STREAMWIRE_HEADERS", "anthropic-beta: tools-x\nX-Trace-Id: t-1")
    argv = ["record", url, "--protocol", "anthropic", "--data", str(request)]
    argv += ["--key-env", "TEST_ANTHROPIC_KEY", "--out", str(tmp_path / "case"), *extra]
    out, err = io.StringIO(), io.StringIO()
    monkeypatch.setattr(sys, "stdout", out)
    monkeypatch.setattr(sys, "stderr", err)
    status = main(argv)
    monkeypatch.undo()
    return status, out.getvalue(), err.getvalue()


def test_record_sends_env_headers_and_saves_a_replayable_recording(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    server = shared_server()
    url = server.add(
        Scenario(chunks=_chunks(TOOLS.read_bytes()), headers={"request-id": "req_rec"})
    )
    status, out, err = _record(monkeypatch, tmp_path, url)
    assert status == 0, err
    (visit,) = server.visits_of(url)
    assert visit.method == "POST"
    assert json.loads(visit.body)["model"] == "claude-x"
    sent = visit.request_headers
    assert sent["x-api-key"] == SECRET and sent["anthropic-version"] == "2023-06-01"
    assert sent["anthropic-beta"] == "tools-x" and sent["x-trace-id"] == "t-1"
    assert "MessageStarted" in out and "status       completed" in out
    saved = sorted(p.name for p in tmp_path.iterdir())
    assert saved == ["case.json", "case.recording.jsonl", "case.sse", "request.json"]
    for name in ("case.json", "case.recording.jsonl", "case.sse"):
        assert SECRET not in (tmp_path / name).read_text()
    assert SECRET not in out + err

    recording = tmp_path / "case.recording.jsonl"
    assert main(["replay", str(recording)]) == 0
    assert "replay       reproduces the recording" in capsys.readouterr().out

    fixture = Fixture(tmp_path / "case.json")
    assert fixture.raw == TOOLS.read_bytes()
    assert fixture.manifest["recording"]["request_id"] == "req_rec"
    for label, chunks in chunkings(fixture.raw):
        stream, events = fixture.replay(chunks)
        check_expect(fixture, stream.result, events, label)


@pytest.mark.timed
def test_record_prints_each_event_as_it_arrives(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    server = shared_server()
    body = TOOLS.read_bytes()
    url = server.add(Scenario(chunks=_chunks(body), delay=0.05))
    seen: list[tuple[float, str]] = []

    class Watch(io.StringIO):
        def write(self, text: str) -> int:
            seen.append((time.monotonic(), text))
            return super().write(text)

    result: list[int] = []
    monkeypatch.setenv("STREAMWIRE_HEADERS", "")
    monkeypatch.setattr(sys, "stdout", Watch())
    worker = threading.Thread(
        target=lambda: result.append(
            main(["record", url, "--protocol", "anthropic", "--out", str(tmp_path / "r")])
        )
    )
    worker.start()
    worker.join(30)
    monkeypatch.undo()
    assert result == [0]
    (visit,) = server.visits_of(url)
    first = next(t for t, text in seen if "MessageStarted" in text)
    assert visit.completed is not None and first < visit.completed - 0.5


def test_a_hashed_recording_says_what_was_hashed(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    url = shared_server().add(Scenario(chunks=_chunks(TOOLS.read_bytes())))
    status, out, err = _record(monkeypatch, tmp_path, url, "--hash-content")
    assert status == 0, err
    assert "content hashed" in out
    recording = tmp_path / "case.recording.jsonl"
    text = recording.read_text()
    assert "Detroit Tigers" not in text  # the stream's text and arguments are hashed
    assert main(["replay", "--no-events", str(recording)]) == 0
    shown = capsys.readouterr().out
    assert "content      HASHED before saving" in shown
    assert "its calls read as rejected" in shown
    assert "original     before hashing: status completed, stop reason tool_calls" in shown
    assert "call toolu_014cZKakAghgvhi4Y99XBUru search: valid, executable" in shown
    assert main(["replay", "--json", str(recording)]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["content_hashed"] is True and doc["original"]["executable"] is True


def test_record_refuses_what_it_cannot_do(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["record", "http://127.0.0.1:9/unknown-path"]) == 2
    assert "cannot tell the protocol" in capsys.readouterr().err
    monkeypatch.delenv("NO_SUCH_KEY_VAR", raising=False)
    argv = ["record", "http://127.0.0.1:9/v1/messages", "--key-env", "NO_SUCH_KEY_VAR"]
    assert main(argv) == 2
    assert "NO_SUCH_KEY_VAR: the variable is not set" in capsys.readouterr().err
    monkeypatch.setenv("STREAMWIRE_HEADERS", "not a header line")
    assert main(["record", "http://127.0.0.1:9/v1/messages"]) == 2
    assert "STREAMWIRE_HEADERS line 1 is not 'Name: value'" in capsys.readouterr().err
    monkeypatch.setenv("STREAMWIRE_HEADERS", "")
    assert main(["record", "http://127.0.0.1:9/v1/messages", "--out", "/nonexistent/x"]) == 2
    assert "ConnectError" in capsys.readouterr().err


def test_an_http_error_is_recorded_but_is_no_fixture(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    url = shared_server().add(
        Scenario(
            status=529,
            content_type="application/json",
            body=b'{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}',
        )
    )
    status, out, _ = _record(monkeypatch, tmp_path, url)
    assert status == 0
    assert "error        provider overloaded_error: Overloaded" in out
    assert "no fixture: an HTTP error answer is not a stream body" in out
    assert (tmp_path / "case.recording.jsonl").exists() and not (tmp_path / "case.json").exists()


def test_replay_without_a_file_replays_the_bundled_sample(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert main(["replay"]) == 0
    out = capsys.readouterr().out
    assert "(bundled sample anthropic-tool-use.jsonl)" in out
    assert "replay       reproduces the recording" in out
    assert "tool calls   1, executable" in out


def test_version(capsys: pytest.CaptureFixture[str]) -> None:
    import streamwire

    with pytest.raises(SystemExit) as done:
        main(["--version"])
    assert done.value.code == 0
    assert capsys.readouterr().out == f"streamwire {streamwire.__version__}\n"
