"""Recording and replaying streams: round trips, redaction of credentials, hashing of content.

* Recorded over real HTTP (all three clients), saved, loaded and replayed,
  a stream reproduces its events (chunk by chunk) and its result, timings
  included (the replay runs on a virtual clock that reads the recorded
  arrival times).
* No recorded file holds the Authorization header, an API key (sent as
  ``Authorization``, ``x-api-key``, ``api-key``, ``x-goog-api-key`` and a
  ``key`` query parameter) or a cookie.
* Every fixture, recorded and with its content hashed, still replays exactly,
  and the hashed file holds none of the original text or arguments.
* Replay reproduces the recorded chunk boundaries, and with
  ``timing="real"`` the recorded pace.
"""

from __future__ import annotations

import hashlib
import io
import json
import random
import time

import pytest

import streamwire as sw
from chunking import split_at
from fixture_replay import Fixture, manifests
from servers.clients import CLIENTS, fetch
from servers.stream_server import Scenario, StreamServer, shared_server
from streamwire.io import Recording, replay, verify
from streamwire.io._driver import Driver
from streamwire.io._redact import redact_json
from streamwire.io._wire import content_types, http_protocols
from streamwire.io.record import FORMAT, RecordedChunk
from streamwire.io.serialize import event_dict, result_dict

FIXTURES = [f for f in manifests() if f.protocol in http_protocols()]
FAKE_KEY = "sk-test-FAKE0123456789abcdefSECRET"


@pytest.fixture(scope="session")
def server() -> StreamServer:
    return shared_server()


def _fixture(name: str) -> Fixture:
    return next(f for f in FIXTURES if f.name == name)


def _saved(recording: Recording, **kwargs: bool) -> str:
    buf = io.StringIO()
    recording.save(buf, **kwargs)
    return buf.getvalue()


def _record(fixture: Fixture) -> Recording:
    """A recording of a fixture's bytes in seeded random chunks, 5 ms apart."""
    rng = random.Random(hashlib.sha256(fixture.name.encode()).digest())
    data = fixture.fed_bytes()
    points = rng.sample(range(1, len(data)), min(8, len(data) - 1)) if len(data) > 1 else []
    chunks = [
        RecordedChunk(0.01 + 0.005 * i, part) for i, part in enumerate(split_at(data, points))
    ]
    end = "cancel" if fixture.manifest.get("replay", {}).get("end") == "cancel" else "eof"
    draft = Recording(
        protocol=fixture.protocol,
        options=dict(fixture.manifest.get("options", {})),
        status=200,
        headers=[("Content-Type", content_types(fixture.protocol)[0])],
        chunks=chunks,
        end=end,
        end_t=chunks[-1].t if chunks else 0.0,
    )
    it = replay(draft, record=True)
    list(it)
    assert it.recording is not None
    return it.recording


# --- over HTTP ---------------------------------------------------------------------


@pytest.mark.parametrize("client", CLIENTS)
def test_record_over_http_then_replay_reproduces_events_and_result(
    server: StreamServer, client: str
) -> None:
    fixture = _fixture("openai-chat/oaipy-tool-single")
    raw = fixture.raw
    chunks = [raw[i : i + 600] for i in range(0, len(raw), 600)]
    url = server.add(Scenario(body=raw, chunks=chunks, delay=0.01, headers={"x-request-id": "r1"}))
    out = fetch(client, url, "openai-chat", record=True, started_at=time.monotonic())
    recording = out.recording
    assert recording is not None and recording.end == "eof"
    assert recording.status == 200 and ("x-request-id", "r1") in recording.headers
    assert recording.body == raw
    assert recording.events == [event_dict(e) for e in out.events]
    assert out.result is not None
    assert recording.result == json.loads(json.dumps(result_dict(out.result)))
    loaded = Recording.load(io.StringIO(_saved(recording)))
    assert verify(loaded) == []
    replayed = replay(loaded)
    assert list(replayed) == out.events
    assert replayed.result.metrics == out.result.metrics  # timings too, on the virtual clock
    assert replayed.result.metrics.time_to_headers is not None


@pytest.mark.parametrize("client", CLIENTS)
def test_no_recorded_file_holds_a_credential(server: StreamServer, client: str) -> None:
    fixture = _fixture("openai-chat/01-short-text")
    url = server.add(
        Scenario(
            body=fixture.raw,
            headers={"Set-Cookie": f"session={FAKE_KEY}; HttpOnly", "x-request-id": "req_9"},
        )
    )
    headers = {
        "Authorization": f"Bearer {FAKE_KEY}",
        "x-api-key": FAKE_KEY,
        "api-key": FAKE_KEY,
        "x-goog-api-key": FAKE_KEY,
        "Cookie": f"session={FAKE_KEY}",
    }
    out = fetch(
        client, f"{url}?key={FAKE_KEY}&alt=sse", "openai-chat", record=True, headers=headers
    )
    recording = out.recording
    assert recording is not None
    for text in (_saved(recording), _saved(recording, hash_content=True)):
        assert FAKE_KEY not in text
        assert "authorization" not in text.lower()
        assert "set-cookie" in json.loads(text.splitlines()[0])["redaction"]["headers_removed"]
    assert recording.request is not None and recording.request["url"].endswith("?alt=sse")


def test_a_recorded_timeout_replays_with_its_warning(server: StreamServer) -> None:
    fixture = _fixture("openai-chat/06-one-tool-call")
    raw = fixture.raw
    cut = raw.index(b"\n\n") + 2
    url = server.add(Scenario(body=raw, chunks=[raw[:cut], raw[cut:]], delay=3.0))
    out = fetch("httpx", url, "openai-chat", idle_timeout=0.1, record=True)
    recording = Recording.load(io.StringIO(_saved(out.recording)))
    assert recording.end == "idle_timeout"
    assert verify(recording) == []
    result = replay(recording)
    list(result)
    assert result.result.status == "incomplete"
    assert "idle_timeout" in {w.code for w in result.result.warnings}


@pytest.mark.parametrize("client", CLIENTS)
def test_a_recorded_http_error_replays(server: StreamServer, client: str) -> None:
    body = {"type": "error", "error": {"type": "rate_limit_error", "message": "slow down"}}
    url = server.add(
        Scenario(
            body=json.dumps(body).encode(),
            status=429,
            content_type="application/json",
            headers={"request-id": "req_e"},
        )
    )
    out = fetch(client, url, "openai-chat", record=True)
    recording = Recording.load(io.StringIO(_saved(out.recording)))
    assert recording.end == "http_error" and recording.status == 429
    assert verify(recording) == []
    assert recording.result is not None and recording.result["error"]["request_id"] == "req_e"


# --- every fixture ---------------------------------------------------------------------


@pytest.mark.parametrize("fixture", FIXTURES, ids=[f.name for f in FIXTURES])
def test_every_fixture_round_trips_plain_and_hashed(fixture: Fixture) -> None:
    recording = _record(fixture)
    _, direct = fixture.replay([fixture.fed_bytes()])
    assert recording.events == [event_dict(e) for e in direct]
    loaded = Recording.load(io.StringIO(_saved(recording)))
    assert loaded.body == fixture.fed_bytes()
    assert [c.data for c in loaded.chunks] == [c.data for c in recording.chunks]
    assert verify(loaded) == []

    hashed_text = _saved(recording, hash_content=True)
    hashed = Recording.load(io.StringIO(hashed_text))
    assert hashed.redaction["content"] == "sha256"
    assert len(hashed.chunks) == len(recording.chunks)
    assert [c.t for c in hashed.chunks] == [c.t for c in recording.chunks]
    assert verify(hashed) == []
    assert hashed.original is not None and hashed.result is not None
    original = recording.result
    assert original is not None
    assert hashed.original["status"] == original["status"]
    assert hashed.original["executable"] == original["executable"]
    assert hashed.original["text_length"] == len(original["text"])
    secrets = [e.text for e in direct if isinstance(e, sw.TextDelta | sw.RefusalDelta)]
    secrets += [e.text for e in direct if isinstance(e, sw.ReasoningDelta)]
    secrets += [
        c["raw_arguments"]
        for ch in original["choices"]
        for c in ch["tool_calls"]
        if c["executor"] == "client"
    ]
    for secret in secrets:
        if len(secret) >= 12 and secret.strip():
            assert json.dumps(secret, ensure_ascii=False)[1:-1] not in hashed_text, secret


def test_the_actions_of_computer_and_local_shell_calls_are_hashed_whole() -> None:
    env = {"API_TOKEN": "tok-SECRET"}
    items = [
        {"type": "computer_call", "call_id": "c1", "action": {"type": "type", "text": "pw"}},
        {"type": "computer_call", "call_id": "c2", "actions": [{"type": "click", "x": 1}]},
        {"type": "local_shell_call", "call_id": "c3", "action": {"command": ["ls"], "env": env}},
    ]
    redacted = redact_json({"output": items, "type": ["not", "a", "name"]})
    assert "SECRET" not in json.dumps(redacted) and '"x": 1' not in json.dumps(redacted)
    for got in redacted["output"]:
        assert got["call_id"].startswith("c")  # ids are kept
        assert set(got.get("action") or got["actions"]) == {"sha256"}


# --- replay itself -----------------------------------------------------------------------


def test_replay_feeds_the_recorded_chunk_boundaries(monkeypatch: pytest.MonkeyPatch) -> None:
    recording = _record(_fixture("openai-chat/oaipy-tool-single"))
    seen: list[bytes] = []
    feed = Driver.feed

    def spy(self: Driver, chunk: bytes) -> list[sw.Event]:
        seen.append(chunk)
        return feed(self, chunk)

    monkeypatch.setattr(Driver, "feed", spy)
    it = replay(recording)
    list(it)
    assert seen == [c.data for c in recording.chunks]
    assert len(seen) > 1
    assert [[event_dict(e) for e in chunk] for chunk in it.chunk_events] == [
        c.events for c in recording.chunks
    ]


@pytest.mark.timed
def test_replay_with_real_timing_keeps_the_recorded_pace() -> None:
    recording = _record(_fixture("openai-chat/oaipy-tool-single"))
    for i, chunk in enumerate(recording.chunks):
        chunk.t = 0.02 * i
    recording.end_t = recording.chunks[-1].t
    span = recording.chunks[-1].t
    started = time.monotonic()
    it = replay(recording, timing="real", speed=2.0)
    list(it)
    elapsed = time.monotonic() - started
    assert span / 2 * 0.9 <= elapsed < span / 2 + 0.5
    assert it.result.status == "completed"
    fast_started = time.monotonic()
    list(replay(recording))
    assert time.monotonic() - fast_started < span / 2


def test_verify_reports_a_tampered_recording() -> None:
    recording = _record(_fixture("openai-chat/01-short-text"))
    assert recording.result is not None
    recording.result["status"] = "incomplete"
    index = next(i for i, c in enumerate(recording.chunks) if c.events)
    recording.chunks[index].events = []
    problems = verify(recording)
    assert any(p.startswith("result.status") for p in problems)
    assert any(p.startswith(f"chunk {index}") for p in problems)


@pytest.mark.parametrize(
    "text",
    ["", "not json\n", json.dumps({"format": "something-else"}) + "\n"],
    ids=["empty", "not-json", "other-format"],
)
def test_loading_what_is_not_a_recording_is_a_clear_error(text: str) -> None:
    with pytest.raises(ValueError, match="recording"):
        Recording.load(io.StringIO(text))


def test_the_format_header_comes_first_and_the_result_last() -> None:
    lines = _saved(_record(_fixture("openai-chat/01-short-text"))).splitlines()
    assert json.loads(lines[0])["format"] == FORMAT
    assert "result" in json.loads(lines[-1])
    assert "end" in json.loads(lines[-2])
    assert all("t" in json.loads(line) for line in lines[1:-2])
