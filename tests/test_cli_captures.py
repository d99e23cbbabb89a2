"""``streamwire inspect`` on what people capture: curl -i output, HAR files, compressed bodies.

The captures in ``fixtures/captures/`` were written by curl and by mitmproxy's
``mitmdump`` against the loopback test server (``tests/make_captures.py``,
``fixtures/captures/PROVENANCE.md``); each served body is a provider fixture
whose manifest states the facts the capture must still give. A live test
runs curl against the server again, when curl is on PATH.

* A ``curl -i`` capture: the status, content type and request id are
  reported; gzip, deflate and br bodies are decoded (and a body curl already
  decoded, ``--compressed``, is read as it is); a 429 or 500 answer is an
  ``error`` result with the provider's type and message.
* A HAR file: the entries whose response is a stream, or ``--entry N``.
* A raw error object with ``--protocol`` is an ``error`` result, not
  ``incomplete``; a protocol that finds only unknown events gets a hint.
* A gzip body file is recognized; a cut or corrupt one is read as far as it goes.
* br without the brotli package: a clear error naming the extra.
"""

from __future__ import annotations

import gzip
import json
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from conftest import FIXTURES_DIR
from fixture_replay import Fixture
from servers.stream_server import Scenario, shared_server
from streamwire.cli import main

CAPTURES = FIXTURES_DIR / "captures"


def inspect_json(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, Any, str]:
    status = main(["inspect", "--json", *argv])
    out, err = capsys.readouterr()
    return status, json.loads(out) if out else None, err


def served(name: str) -> Fixture:
    return Fixture(FIXTURES_DIR / "providers" / f"{name}.json")


def assert_facts(doc: dict[str, Any], fixture: Fixture) -> None:
    """The capture's result states its served fixture's facts."""
    expect = fixture.expect
    result = doc["result"]
    for key in ("status", "stop_reason", "provider_stop_reason", "text", "executable"):
        if key in expect:
            assert result[key] == expect[key], key
    if "tool_call_count" in expect:
        calls = [c for choice in result["choices"] for c in choice["tool_calls"]]
        assert len(calls) == expect["tool_call_count"]
    assert doc["protocol"] == fixture.protocol


@pytest.mark.parametrize(
    ("capture", "fixture", "note"),
    [
        ("curl-anthropic-tools.http", "anthropic/prism-tools", None),
        ("curl-openai-chat-gzip.http", "openai-chat/oaipy-tool-single", "Content-Encoding gzip"),
        (
            "curl-openai-chat-gzip-compressed.http",
            "openai-chat/oaipy-tool-single",
            "already decoded",
        ),
        ("curl-gemini-br.http", "gemini/pyd-text", "Content-Encoding br decoded"),
        ("curl-bedrock-deflate.http", "bedrock-converse/pyd-nova-tool", "deflate decoded"),
    ],
)
def test_a_curl_capture_of_a_stream_reads_as_its_body(
    capsys: pytest.CaptureFixture[str], capture: str, fixture: str, note: str | None
) -> None:
    status, doc, err = inspect_json(capsys, str(CAPTURES / capture))
    assert status == 0, err
    assert_facts(doc, served(fixture))
    assert doc["source"] == "curl -i capture"
    assert doc["http"]["status"] == 200
    assert doc["result"]["http_ok"] is True
    if note is None:
        assert doc["notes"] == []
    else:
        assert any(note in n for n in doc["notes"]), doc["notes"]


def test_the_request_id_and_content_type_are_reported(capsys: pytest.CaptureFixture[str]) -> None:
    status, doc, _ = inspect_json(capsys, str(CAPTURES / "curl-anthropic-tools.http"))
    assert status == 0
    assert doc["http"]["request_id"] == "req_cap1"
    assert doc["http"]["content_type"].startswith("text/event-stream")
    assert main(["inspect", "--no-events", str(CAPTURES / "curl-anthropic-tools.http")]) == 0
    out = capsys.readouterr().out
    assert "response     HTTP 200, text/event-stream" in out and "request req_cap1" in out


@pytest.mark.parametrize(
    ("capture", "status", "phase", "type_", "request_id", "retryable"),
    [
        ("curl-openai-429.http", 429, "provider", "tokens", "req_cap6", True),
        (
            "curl-anthropic-500.http",
            500,
            "provider",
            "api_error",
            "req_011CSHoEeqs5C35K2UUqR7Fy",
            True,
        ),
        (
            "curl-openai-not-streamed.http",
            200,
            "transport",
            "unexpected_content_type",
            "req_cap8",
            False,
        ),
    ],
)
def test_an_error_answer_is_an_error_result(
    capsys: pytest.CaptureFixture[str],
    capture: str,
    status: int,
    phase: str,
    type_: str,
    request_id: str,
    retryable: bool,
) -> None:
    code, doc, err = inspect_json(capsys, str(CAPTURES / capture))
    assert code == 0, err
    result = doc["result"]
    assert result["status"] == "error"
    assert result["http_ok"] is (200 <= status < 300)
    error = result["error"]
    assert (error["phase"], error["type"]) == (phase, type_)
    assert error["request_id"] == request_id
    assert error["retryable"] is retryable
    assert doc["http"]["status"] == status


def test_check_fails_an_error_capture(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["inspect", "--check", "--no-events", str(CAPTURES / "curl-openai-429.http")]) == 3
    assert "status       error" in capsys.readouterr().out


# --- HAR -----------------------------------------------------------------------------


def test_a_har_file_gives_its_stream_entries(capsys: pytest.CaptureFixture[str]) -> None:
    status, doc, err = inspect_json(capsys, str(CAPTURES / "mitmdump.har"))
    assert status == 0, err
    entries = doc["entries"]
    assert [e["source"] for e in entries] == ["HAR entry 1 of 4", "HAR entry 2 of 4"]
    assert_facts(entries[0], served("anthropic/prism-tools"))
    assert_facts(entries[1], served("openai-chat/oaipy-tool-single"))
    # mitmproxy keeps the Content-Encoding header; HAR's text is the decoded body.
    headers = {k.lower(): v for k, v in entries[1]["http"]["headers"]}
    assert headers["content-encoding"] == "gzip" and entries[1]["notes"] == []


def test_a_har_entry_by_number(capsys: pytest.CaptureFixture[str]) -> None:
    status, doc, _ = inspect_json(capsys, "--entry", "3", str(CAPTURES / "mitmdump.har"))
    assert status == 0
    (entry,) = doc["entries"]
    assert entry["result"]["error"]["type"] == "tokens"
    assert entry["http"]["status"] == 429
    status = main(["inspect", "--entry", "9", str(CAPTURES / "mitmdump.har")])
    assert status == 1 and "there is no entry 9: the file has 4" in capsys.readouterr().err


def test_a_har_without_streams_lists_its_entries(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    doc = json.loads((CAPTURES / "mitmdump.har").read_text())
    doc["log"]["entries"] = doc["log"]["entries"][2:]  # the 429 and the non-streamed answer
    path = tmp_path / "no-streams.har"
    path.write_text(json.dumps(doc))
    status = main(["inspect", str(path)])
    err = capsys.readouterr().err
    assert status == 1 and "no entry's response is a stream; pick one with --entry N" in err
    assert "429  application/json  GET http://127.0.0.1:" in err


def test_a_har_timeline_says_what_it_keeps(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["inspect", "--timeline", "--entry", "1", str(CAPTURES / "mitmdump.har")]) == 0
    out = capsys.readouterr().out
    assert "keeps only wait " in out and "no arrival time per chunk" in out


# --- raw bodies -----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("protocol", "body", "type_"),
    [
        (
            "openai-chat",
            {"error": {"message": "slow", "type": "requests", "code": "x"}},
            "requests",
        ),
        (
            "openai-responses",
            {"error": {"message": "bad", "type": "invalid_request_error"}},
            "invalid_request_error",
        ),
        (
            "anthropic",
            {"type": "error", "error": {"type": "overloaded_error", "message": "o"}},
            "overloaded_error",
        ),
        (
            "bedrock-converse",
            {"message": "Too many requests", "__type": "ThrottlingException"},
            "ThrottlingException",
        ),
    ],
)
def test_an_error_object_given_with_protocol_is_an_error(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, protocol: str, body: Any, type_: str
) -> None:
    path = tmp_path / "error.json"
    path.write_text(json.dumps(body, indent=2))
    status, doc, err = inspect_json(capsys, "--protocol", protocol, str(path))
    assert status == 0, err
    result = doc["result"]
    assert result["status"] == "error"
    # The provider's type, as the type (the HTTP driver's reading) or as the
    # code (the bedrock adapter's own: a not_eventstream framing error).
    assert type_ in (result["error"]["type"], result["error"]["code"])
    assert result["http_ok"] is None  # the status line was not captured


@pytest.mark.parametrize(
    ("fixture", "given"),
    [
        ("anthropic/prism-tools", "openai-chat"),
        ("openai-chat/oaipy-tool-single", "anthropic"),
        ("gemini/pyd-text", "openai-responses"),
    ],
)
def test_the_wrong_protocol_gets_a_hint(
    capsys: pytest.CaptureFixture[str], fixture: str, given: str
) -> None:
    case = served(fixture)
    status, doc, _ = inspect_json(capsys, "--protocol", given, str(case.raw_path))
    assert status == 0
    assert doc["result"]["status"] == "incomplete"
    hint = doc["hint"]
    assert f"the input looks like {case.protocol}" in hint and f"--protocol {case.protocol}" in hint
    status, doc, _ = inspect_json(capsys, "--protocol", case.protocol, str(case.raw_path))
    assert doc["hint"] is None


def test_a_gzip_body_file_is_recognized(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    case = served("anthropic/prism-tools")
    path = tmp_path / "body.sse.gz"
    path.write_bytes(gzip.compress(case.raw))
    status, doc, _ = inspect_json(capsys, str(path))
    assert status == 0
    assert_facts(doc, case)
    assert doc["notes"] == ["Content-Encoding gzip decoded"]


def test_a_cut_gzip_body_reads_as_far_as_it_goes(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    case = served("anthropic/prism-tools")
    packed = gzip.compress(case.raw)
    cut = tmp_path / "cut.gz"
    cut.write_bytes(packed[: len(packed) // 2])
    status, doc, _ = inspect_json(capsys, str(cut))
    assert status == 0
    assert doc["result"]["status"] == "incomplete"
    assert doc["result"]["text"] and case.expect["text"].startswith(doc["result"]["text"][:20])
    assert any("ends before its end marker" in n for n in doc["notes"])
    corrupt = tmp_path / "corrupt.gz"
    corrupt.write_bytes(packed[:200] + bytes(b ^ 0x55 for b in packed[200:]))
    status, doc, _ = inspect_json(capsys, "--protocol", "anthropic", str(corrupt))
    assert status == 0 and doc["result"]["status"] == "incomplete"
    assert any("corrupt" in n for n in doc["notes"])


def test_br_without_brotli_names_the_extra(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(sys.modules, "brotli", None)  # import brotli -> ImportError
    status = main(["inspect", str(CAPTURES / "curl-gemini-br.http")])
    out, err = capsys.readouterr()
    assert status == 2 and out == ""
    assert "Content-Encoding: br" in err and "pip install 'streamwire[brotli]'" in err


def test_an_unknown_content_encoding_is_refused(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    head = (CAPTURES / "curl-anthropic-tools.http").read_bytes()
    path = tmp_path / "compress.http"
    path.write_bytes(head.replace(b"\r\n\r\n", b"\r\nContent-Encoding: compress\r\n\r\n", 1))
    assert main(["inspect", str(path)]) == 2
    assert "unsupported Content-Encoding 'compress'" in capsys.readouterr().err


def test_zstd_without_its_package_names_the_package(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(sys.modules, "zstandard", None)  # import zstandard -> ImportError
    head = (CAPTURES / "curl-anthropic-tools.http").read_bytes()
    path = tmp_path / "zstd.http"
    path.write_bytes(head.replace(b"\r\n\r\n", b"\r\nContent-Encoding: zstd\r\n\r\n", 1))
    assert main(["inspect", str(path)]) == 2
    assert "Content-Encoding: zstd" in capsys.readouterr().err


# --- live curl ----------------------------------------------------------------------------


@pytest.mark.skipif(shutil.which("curl") is None, reason="curl is not installed")
def test_curl_against_the_loopback_server_now(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    case = served("openai-chat/oaipy-tool-single")
    url = shared_server().add(
        Scenario(
            body=gzip.compress(case.raw),
            headers={"Content-Encoding": "gzip", "x-request-id": "req_live"},
        )
    )
    capture = subprocess.run(["curl", "-s", "-i", "-N", url], capture_output=True, check=True)
    path = tmp_path / "live.http"
    path.write_bytes(capture.stdout)
    status, doc, err = inspect_json(capsys, str(path))
    assert status == 0, err
    assert_facts(doc, case)
    assert doc["http"]["request_id"] == "req_live"
