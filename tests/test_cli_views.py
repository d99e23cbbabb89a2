"""``--layers`` and ``--timeline``: the three layers of a body, and a recording in time.

* On every HTTP fixture, the layers view gives exactly the events of reading
  the body whole (feeding one wire event at a time changes nothing), one row
  per wire event (plus the end of input), with byte ranges that tile the body.
* A keep-alive row is ``ignored``, an unknown event names its type, a
  conflict quotes it; EventStream rows show their headers, bedrock-invoke's
  base64 payload is decoded for the provider column.
* The timeline model finds the gaps and bursts of a recording, and the
  terminal view draws them.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from fixture_replay import Fixture, manifests
from streamwire.cli import main
from streamwire.io._wire import http_protocols
from streamwire.io.record import RecordedChunk, Recording
from streamwire.io.replay import replay
from streamwire.io.timeline import Timeline

FIXTURES = [f for f in manifests() if f.protocol in http_protocols() and "replay" not in f.manifest]


def layers_of(capsys: pytest.CaptureFixture[str], *argv: str) -> dict[str, Any]:
    assert main(["inspect", "--json", "--layers", *argv]) == 0
    doc: dict[str, Any] = json.loads(capsys.readouterr().out)
    return doc


@pytest.mark.parametrize("fixture", FIXTURES, ids=[f.name for f in FIXTURES])
def test_layers_give_the_events_of_the_whole_body(
    capsys: pytest.CaptureFixture[str], fixture: Fixture
) -> None:
    argv = ["--protocol", fixture.protocol]
    for key, value in (fixture.manifest.get("options") or {}).items():
        argv += ["--option", f"{key}={json.dumps(value)}"]
    doc = layers_of(capsys, *argv, str(fixture.raw_path))
    assert main(["inspect", "--json", *argv, str(fixture.raw_path)]) == 0
    whole = json.loads(capsys.readouterr().out)
    rows = doc["layers"]
    if not rows:  # an error object, read whole by the HTTP driver
        assert doc["result"]["status"] == whole["result"]["status"] == "error"
        assert doc["events"] == whole["events"]
        return
    assert [e for row in rows for e in row["unified"]] == whole["events"] == doc["events"]
    assert doc["result"]["status"] == whole["result"]["status"]
    # The rows tile the body, in order; the last one is the end of input.
    ends = [0] + [row["bytes"][1] for row in rows[:-1]]
    assert [row["bytes"][0] for row in rows[:-1]] == ends[:-1]
    assert rows[-1]["wire"] == "end of input"
    assert rows[-1]["bytes"] == [len(fixture.raw), len(fixture.raw)]
    if fixture.raw and rows[:-1]:
        assert rows[-2]["bytes"][1] == len(fixture.raw)
    framed = all(not r["wire"].startswith(("(", "framing error")) for r in rows[:-1])
    if "wire_events" in fixture.expect and framed:
        assert len(rows) - 1 == fixture.expect["wire_events"]


def _fixture(name: str) -> Fixture:
    return next(f for f in manifests() if f.name == name)


def test_layers_say_what_a_wire_event_did(capsys: pytest.CaptureFixture[str]) -> None:
    rows = layers_of(capsys, str(_fixture("anthropic/05-keepalives-blank-lines").raw_path))[
        "layers"
    ]
    ping = next(r for r in rows if r["wire"] == "ping")
    assert ping["unified"] == [] and ping["notes"] == ["ignored"]
    assert ping["provider"] == "type=ping"

    rows = layers_of(capsys, str(_fixture("openai-chat/11-unknown-event").raw_path))["layers"]
    unknown = [n for r in rows for n in r["notes"] if n.startswith("unknown: ")]
    assert unknown, rows

    doc = layers_of(capsys, str(_fixture("openai-chat/tool-call-id-changed").raw_path))
    conflicts = [n for r in doc["layers"] for n in r["notes"] if n.startswith("conflict: ")]
    assert conflicts == [f"conflict: {c}" for c in doc["result"]["conflicts"]]


def test_layers_of_eventstream_show_headers_and_decoded_payloads(
    capsys: pytest.CaptureFixture[str],
) -> None:
    rows = layers_of(capsys, str(_fixture("bedrock-converse/pyd-nova-tool").raw_path))["layers"]
    assert [r["wire"] for r in rows[:2]] == ["messageStart", "contentBlockDelta"]
    stop = next(r for r in rows if r["wire"] == "messageStop")
    assert stop["unified"] == [] and stop["notes"] == [
        "stop reason tool_calls (provider: tool_use)"
    ]
    assert "p=" not in rows[0]["provider"]  # Bedrock's padding is left out
    invoke = next(f for f in manifests() if f.protocol == "bedrock-invoke" and f.raw)
    rows = layers_of(capsys, "--protocol", "bedrock-invoke", str(invoke.raw_path))["layers"]
    assert any(r["provider"].startswith("bytes→.") for r in rows), rows[:3]


def test_layers_in_the_terminal(capsys: pytest.CaptureFixture[str]) -> None:
    path = _fixture("anthropic/06-one-tool-call").raw_path
    assert main(["inspect", "--layers", str(path)]) == 0
    out = capsys.readouterr().out
    assert "── layers " in out and "provider event" in out
    line = next(x for x in out.splitlines() if x.startswith("0–"))
    assert "message_start" in line and "type=message_start" in line and "MessageStarted" in line
    assert "(ignored)" in out and "end of input" in out
    assert "── summary " in out


# --- timeline ----------------------------------------------------------------------


def _recording(times: list[float], chunk: bytes) -> Recording:
    draft = Recording(
        protocol="openai-chat",
        status=200,
        headers=[("Content-Type", "text/event-stream")],
        chunks=[RecordedChunk(t, chunk) for t in times],
        end="eof",
        end_t=times[-1],
        time_to_headers=0.05,
    )
    it = replay(draft, record=True)
    list(it)
    assert it.recording is not None
    return it.recording


_DELTA = b'data: {"choices":[{"index":0,"delta":{"content":"x"}}]}\n\n'


def test_the_timeline_finds_gaps_and_bursts() -> None:
    # Paced chunks 30 ms apart, a 400 ms stall, then ten chunks within 1 ms.
    times = [0.1 + 0.03 * i for i in range(5)] + [0.62 + 0.0001 * i for i in range(10)]
    timeline = Timeline.of(_recording(times, _DELTA))
    gaps = timeline.gaps()
    assert gaps[0].before == 5 and gaps[0].seconds == pytest.approx(0.4)
    assert gaps[1].before == 0 and gaps[1].seconds == pytest.approx(0.1)
    (burst,) = timeline.bursts()
    assert (burst.first, burst.last, burst.events) == (5, 14, 10)
    assert timeline.first_content is not None and timeline.first_content.index == 0
    columns = timeline.columns(10)
    assert sum(e for _, e in columns) == 16  # MessageStarted + 15 deltas
    assert columns[-1][1] == 10


def test_paced_chunks_are_no_burst() -> None:
    timeline = Timeline.of(_recording([0.02 * i for i in range(1, 20)], _DELTA))
    assert timeline.bursts() == []


def test_replay_draws_the_timeline(capsys: pytest.CaptureFixture[str], tmp_path: Any) -> None:
    times = [0.1 + 0.03 * i for i in range(5)] + [0.62 + 0.0001 * i for i in range(10)]
    path = tmp_path / "r.jsonl"
    _recording(times, _DELTA).save(path)
    assert main(["replay", "--timeline", "--no-events", str(path)]) == 0
    out = capsys.readouterr().out
    assert "── timeline " in out and "15 chunks, 16 unified events" in out
    assert "bursts      chunks 5–14 (10 chunks, 10 events" in out
    assert "gaps        400.0 ms before chunk 5" in out
    block = out.split("── timeline ", 1)[1].splitlines()
    bars = next(x for x in block if x.startswith("events      "))
    assert bars.rstrip().endswith("█")
    assert main(["replay", "--timeline", "--json", str(path)]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["timeline"]["bursts"][0]["first"] == 5
    assert len(doc["timeline"]["arrivals"]) == 15


def test_a_body_has_no_timeline(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["inspect", "--timeline", str(_fixture("anthropic/prism-tools").raw_path)]) == 0
    assert "a body keeps no arrival times" in capsys.readouterr().out


def test_inspect_of_a_recording_shows_its_layers_and_timeline(
    capsys: pytest.CaptureFixture[str], tmp_path: Any
) -> None:
    times = [0.1 + 0.03 * i for i in range(5)]
    path = tmp_path / "r.jsonl"
    _recording(times, _DELTA).save(path)
    doc = layers_of(capsys, str(path))
    assert doc["source"] == "recording" and doc["http"]["status"] == 200
    assert [len(r["unified"]) for r in doc["layers"]] == [2, 1, 1, 1, 1, 1]
    assert main(["inspect", "--timeline", "--no-events", str(path)]) == 0
    out = capsys.readouterr().out
    assert (
        "(recorded)" in out and "5 chunks, 6 unified events" in out
    )  # the end's are not a chunk's
