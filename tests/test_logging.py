"""The ``streamwire`` logger: silent by default; a record per conflict, warning, error; no payload.

Each stream below carries a secret-looking marker in its text, its error
message and its tool arguments; no log record may contain it, in its
message or its arguments.
"""

from __future__ import annotations

import json
import logging
import subprocess
import sys

import pytest

import streamwire as sw
from fixture_replay import manifests

SECRET = "sk-live-SECRET-0123456789"


def _chunk(payload: dict[str, object]) -> bytes:
    return b"data: " + json.dumps(payload).encode() + b"\n\n"


def _delta(delta: dict[str, object], finish: str | None = None) -> bytes:
    return _chunk(
        {
            "id": "c1",
            "object": "chat.completion.chunk",
            "model": "m",
            "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
        }
    )


def _records(caplog: pytest.LogCaptureFixture) -> list[logging.LogRecord]:
    return [r for r in caplog.records if r.name == "streamwire"]


def _assert_no_payload(records: list[logging.LogRecord]) -> None:
    for record in records:
        assert SECRET not in record.getMessage(), record.getMessage()
        assert SECRET not in repr(record.args)


def test_the_logger_has_a_null_handler_and_prints_nothing_unconfigured() -> None:
    assert any(isinstance(h, logging.NullHandler) for h in logging.getLogger("streamwire").handlers)
    code = (
        "import streamwire as sw\n"
        "s = sw.stream('openai-chat', max_event_bytes=64)\n"
        "s.feed(b'data: ' + b'x' * 200 + b'\\n\\n'); s.close()\n"
        "assert s.result.status == 'error'\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stderr
    assert done.stderr == "" and done.stdout == ""


def test_a_conflict_is_a_warning_record_without_its_description(
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.INFO, logger="streamwire")
    s = sw.stream("anthropic", request_id="req_42")
    s.feed(b'event: content_block_delta\ndata: {"type": "content_block_delta", "index": 0, ')
    s.feed(f'"delta": {{"type": "text_delta", "text": "{SECRET}"}}}}\n\n'.encode())
    s.close()
    assert s.result.status == "protocol_conflict"
    records = _records(caplog)
    conflicts = [r for r in records if r.streamwire_code == "protocol_conflict"]  # type: ignore[attr-defined]
    assert conflicts and conflicts[0].levelno == logging.WARNING
    assert conflicts[0].streamwire_request_id == "req_42"  # type: ignore[attr-defined]
    assert "anthropic (request req_42)" in conflicts[0].getMessage()
    _assert_no_payload(records)


def test_a_framing_error_warns_with_its_kind(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.INFO, logger="streamwire")
    s = sw.stream("openai-chat", max_event_bytes=64)
    s.feed(_delta({"content": "hi"}) + b"data: " + SECRET.encode() * 10 + b"\n\n")
    s.close()
    (record,) = [r for r in _records(caplog) if r.levelno == logging.WARNING]
    assert record.streamwire_code == "event_too_large"  # type: ignore[attr-defined]
    assert "framing error event_too_large" in record.getMessage()
    _assert_no_payload(_records(caplog))


def test_warnings_and_provider_errors_inform_by_code(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.INFO, logger="streamwire")
    s = sw.stream("openai-chat")
    s.feed(_delta({"content": SECRET}, finish="stop"))  # no [DONE]: missing_done
    s.close()
    s = sw.stream("openai-chat")
    error = {"error": {"type": "server_error", "code": "e1", "message": f"bad key {SECRET}"}}
    s.feed(_chunk(error))
    s.close()
    records = _records(caplog)
    assert [(r.levelno, r.streamwire_code) for r in records] == [  # type: ignore[attr-defined]
        (logging.INFO, "missing_done"),
        (logging.INFO, "server_error"),
    ]
    _assert_no_payload(records)


@pytest.mark.parametrize(
    ("name", "codes"),
    [
        ("openai-responses/vercel-copilot-id-rotation", {"response_id_rotated", "item_id_rotated"}),
        ("bedrock-converse/pyd-nova-tool-no-message-start", {"missing_message_start"}),
        ("openai-chat/synthetic-no-finish-reason", {"missing_finish_reason"}),
    ],
)
def test_the_warnings_of_recorded_provider_shapes_inform_by_code_only(
    name: str, codes: set[str], caplog: pytest.LogCaptureFixture
) -> None:
    # The warnings' descriptions quote the provider's ids and what it sent;
    # the records give the codes alone.
    fixture = next(f for f in manifests() if f.name == name)
    caplog.set_level(logging.INFO, logger="streamwire")
    s = sw.stream(fixture.protocol, **fixture.manifest.get("options", {}))
    s.feed(fixture.raw)
    s.close()
    records = _records(caplog)
    assert {r.streamwire_code for r in records} == codes  # type: ignore[attr-defined]
    described = [w.message for w in s.result.warnings] + [s.result.text]
    for record in records:
        assert (record.levelno, record.getMessage()) == (
            logging.INFO,
            f"{fixture.protocol} stream: warning {record.streamwire_code}",  # type: ignore[attr-defined]
        )
        assert not any(text and text in repr(record.args) for text in described)


def test_rebuilding_a_result_from_events_logs_nothing_again(
    caplog: pytest.LogCaptureFixture,
) -> None:
    s = sw.stream("openai-chat", max_event_bytes=64)
    events = s.feed(b"data: " + b"x" * 200 + b"\n\n") + s.close()
    caplog.clear()
    caplog.set_level(logging.INFO, logger="streamwire")
    assert sw.result_from_events(events, protocol="openai-chat").status == "error"
    assert _records(caplog) == []


def test_a_flood_of_errors_logs_a_bounded_number_of_records(
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.INFO, logger="streamwire")
    s = sw.stream("openai-chat")
    s.feed(_chunk({"error": {"type": "server_error", "message": "boom"}}) * 5000)
    s.close()
    records = _records(caplog)
    assert records[0].streamwire_code == "server_error"  # type: ignore[attr-defined]
    assert len(records) <= 101, len(records)  # the first error and MAX_RECORDS warnings
