"""streamwire.io against a real HTTP server on loopback, with httpx (sync, async) and aiohttp.

Every fixture of every registered protocol is served over HTTP in seeded
random chunks and read through ``sw.iter_events`` / ``sw.aiter_events``: the
unified events must be identical to a direct replay of the raw bytes and the
manifest's assertions must hold. Then the edges: HTTP error statuses with
each provider's JSON error body, unexpected content types, and a server that
disconnects in the middle of a tool call.
"""

from __future__ import annotations

import hashlib
import json
import random

import pytest

import streamwire as sw
from chunking import split_at
from fixture_replay import Fixture, check_expect, manifests
from servers.clients import CLIENTS, fetch, fetch_all
from servers.stream_server import Scenario, StreamServer, shared_server
from streamwire.io._wire import content_types, http_protocols

FIXTURES = [
    f
    for f in manifests()
    if f.protocol in http_protocols() and f.manifest.get("replay", {}).get("end") != "cancel"
]


@pytest.fixture(scope="session")
def server() -> StreamServer:
    return shared_server()


def _chunks(fixture: Fixture, most: int = 12) -> list[bytes]:
    rng = random.Random(hashlib.sha256(fixture.name.encode()).digest())
    raw = fixture.raw
    count = min(most - 1, max(0, len(raw) - 1))
    return split_at(raw, rng.sample(range(1, len(raw)), count) if count else [])


def _scenario(fixture: Fixture, **kwargs: object) -> Scenario:
    return Scenario(
        body=fixture.raw,
        chunks=_chunks(fixture),
        content_type=content_types(fixture.protocol)[0],
        **kwargs,  # type: ignore[arg-type]
    )


def test_every_registered_protocol_has_a_fixture_served() -> None:
    served = {f.protocol for f in FIXTURES}
    assert "openai-chat" in served
    assert served <= set(http_protocols())


PROTOCOLS = sorted({f.protocol for f in FIXTURES})


@pytest.mark.parametrize("client", CLIENTS)
@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_events_over_http_equal_direct_replay(
    server: StreamServer, client: str, protocol: str
) -> None:
    # One client (and event loop) reads every fixture of the protocol in turn.
    fixtures = [f for f in FIXTURES if f.protocol == protocol]
    jobs = [(server.add(_scenario(f)), protocol, f.manifest.get("options", {})) for f in fixtures]
    for fixture, out in zip(fixtures, fetch_all(client, jobs), strict=True):
        _, direct = fixture.replay([fixture.raw])
        assert out.events == direct, fixture.name
        result = out.result
        assert result is not None and result.final, fixture.name
        check_expect(fixture, result, out.events, f"http/{client}")
        status = fixture.manifest.get("options", {}).get("http_status", 200)
        assert result.http_ok is (200 <= status < 300), fixture.name  # the case's status wins
        assert result.metrics.bytes_received == len(fixture.raw), fixture.name
        assert result.metrics.events == len(direct), fixture.name
        assert result.metrics.time_to_first_event is not None, fixture.name
        assert result.metrics.burst is not None, fixture.name  # timed
        bad = [w for w in result.warnings if w.code in ("transport_error", "idle_timeout")]
        assert not bad, fixture.name


# --- HTTP errors -------------------------------------------------------------------

#: (provider, status, headers, body, expected error fields), from each provider's
#: documented error shape (see streamwire/io/_wire.py).
ERRORS = [
    (
        "openai",
        429,
        {"x-request-id": "req_oai_1"},
        {
            "error": {
                "message": "Rate limit reached for gpt-4o",
                "type": "requests",
                "param": None,
                "code": "rate_limit_exceeded",
            }
        },
        {
            "phase": "provider",
            "type": "requests",
            "code": "rate_limit_exceeded",
            "message": "Rate limit reached for gpt-4o",
            "retryable": True,
            "request_id": "req_oai_1",
        },
    ),
    (
        "openai-quota",
        429,
        {"x-request-id": "req_oai_2"},
        {"error": {"message": "You exceeded your quota", "type": "insufficient_quota"}},
        {"type": "insufficient_quota", "retryable": False, "request_id": "req_oai_2"},
    ),
    (
        "anthropic",
        529,
        {"request-id": "req_011CSHoEeqs5C35K2UUqR7Fy"},
        {
            "type": "error",
            "error": {"type": "overloaded_error", "message": "Overloaded"},
            "request_id": "req_011CSHoEeqs5C35K2UUqR7Fy",
        },
        {
            "phase": "provider",
            "type": "overloaded_error",
            "message": "Overloaded",
            "retryable": True,
            "request_id": "req_011CSHoEeqs5C35K2UUqR7Fy",
        },
    ),
    (
        "anthropic-500",
        500,
        {"request-id": "req_2"},
        {"type": "error", "error": {"type": "api_error", "message": "Internal server error"}},
        {"type": "api_error", "retryable": True, "request_id": "req_2"},
    ),
    (
        "gemini",
        429,
        {},
        [{"error": {"code": 429, "message": "Resource exhausted", "status": "RESOURCE_EXHAUSTED"}}],
        {"phase": "provider", "type": "RESOURCE_EXHAUSTED", "code": 429, "retryable": True},
    ),
    (
        "bedrock",
        429,
        {
            "x-amzn-ErrorType": "ThrottlingException:http://internal.amazon.com/coral/com.amazon.bedrock/",
            "x-amzn-RequestId": "5f1b2c3d-0000-4000-8000-000000000000",
        },
        {"message": "Too many requests, please wait before trying again."},
        {
            "phase": "provider",
            "type": "ThrottlingException",
            "message": "Too many requests, please wait before trying again.",
            "retryable": True,
            "request_id": "5f1b2c3d-0000-4000-8000-000000000000",
        },
    ),
]


@pytest.mark.parametrize("client", CLIENTS)
@pytest.mark.parametrize("case", ERRORS, ids=[c[0] for c in ERRORS])
def test_http_error_json_body_gives_the_providers_error(
    server: StreamServer, client: str, case: tuple
) -> None:
    _, status, headers, body, expected = case
    scenario = Scenario(
        body=json.dumps(body).encode(),
        status=status,
        content_type="application/json",
        headers=headers,
    )
    protocols = http_protocols()
    jobs = [(server.add(scenario), protocol, {}) for protocol in protocols]
    for protocol, out in zip(protocols, fetch_all(client, jobs), strict=True):
        result = out.result
        assert result is not None and result.final, protocol
        assert (result.protocol, result.status, result.http_ok) == (protocol, "error", False)
        error = result.error
        assert error is not None
        for key, value in expected.items():
            assert getattr(error, key) == value, (protocol, key)
        assert [type(e).__name__ for e in out.events] == ["ErrorReceived", "MessageCompleted"]
        assert out.events[-1].status == "error"  # type: ignore[attr-defined]
        assert result.usage is None and not result.executable


@pytest.mark.parametrize("client", CLIENTS)
def test_non_json_error_page_is_a_transport_error(server: StreamServer, client: str) -> None:
    page = b"<html><body><h1>502 Bad Gateway</h1></body></html>"
    url = server.add(Scenario(body=page, status=502, content_type="text/html"))
    result = fetch(client, url, "openai-chat").result
    assert result is not None and result.status == "error"
    assert result.error is not None
    assert (result.error.phase, result.error.type) == ("transport", "http_502")
    assert result.error.message is not None and "502 Bad Gateway" in result.error.message
    assert result.error.retryable is True


@pytest.mark.parametrize("client", CLIENTS)
def test_unexpected_content_type_is_a_clear_error(server: StreamServer, client: str) -> None:
    scenario = Scenario(body=b"<html>login</html>", content_type="text/html")
    protocols = http_protocols()
    jobs = [(server.add(scenario), protocol, {}) for protocol in protocols]
    for protocol, out in zip(protocols, fetch_all(client, jobs), strict=True):
        result = out.result
        assert result is not None and result.status == "error" and result.error is not None
        assert (result.error.phase, result.error.type) == ("transport", "unexpected_content_type")
        expected = content_types(protocol)[0]
        assert f"expected {expected} for {protocol}, got text/html" in (result.error.message or "")
        assert result.http_ok is True


def test_a_whole_json_answer_to_a_streaming_protocol_hints_at_streaming_off(
    server: StreamServer,
) -> None:
    body = {"id": "chatcmpl-1", "object": "chat.completion", "choices": []}
    url = server.add(Scenario(body=json.dumps(body).encode(), content_type="application/json"))
    result = fetch("httpx", url, "openai-chat").result
    assert result is not None and result.error is not None
    assert result.error.type == "unexpected_content_type"
    assert "streaming on" in (result.error.message or "")


def test_a_200_json_error_body_is_the_providers_error(server: StreamServer) -> None:
    body = {"error": {"message": "bad key", "type": "invalid_request_error", "code": "x"}}
    url = server.add(Scenario(body=json.dumps(body).encode(), content_type="application/json"))
    result = fetch("httpx", url, "openai-chat").result
    assert result is not None and result.error is not None
    assert (result.error.phase, result.error.type, result.error.code) == (
        "provider",
        "invalid_request_error",
        "x",
    )


@pytest.mark.parametrize("client", CLIENTS)
def test_missing_content_type_is_parsed_with_a_warning(server: StreamServer, client: str) -> None:
    fixture = next(f for f in FIXTURES if f.name == "openai-chat/01-short-text")
    url = server.add(Scenario(body=fixture.raw, content_type=None))
    out = fetch(client, url, "openai-chat")
    assert out.result is not None and out.result.status == "completed"
    assert "content_type_missing" in {w.code for w in out.result.warnings}


def test_content_type_check_can_be_turned_off(server: StreamServer) -> None:
    fixture = next(f for f in FIXTURES if f.name == "openai-chat/01-short-text")
    url = server.add(Scenario(body=fixture.raw, content_type="text/plain"))
    out = fetch("httpx", url, "openai-chat", check_content_type=False)
    assert out.result is not None and out.result.status == "completed"


# --- a disconnect in the middle of a tool call -------------------------------------


def _after_first_client_call(fixture: Fixture) -> int | None:
    """The byte offset right after the first client tool call started (in the
    middle of its arguments where they stream), if the stream's terminal
    signal has not arrived by then (a prefix ending there is ``incomplete``)."""
    options = fixture.manifest.get("options", {})
    stream = sw.stream(fixture.protocol, **options)
    for offset in range(len(fixture.raw)):
        events = stream.feed(fixture.raw[offset : offset + 1])
        if any(isinstance(e, sw.ToolCallStarted) and e.executor == "client" for e in events):
            prefix = sw.stream(fixture.protocol, **options)
            prefix.feed(fixture.raw[: offset + 1])
            prefix.close()
            return offset + 1 if prefix.result.status == "incomplete" else None
    return None


TOOL_CUTS = {
    f.name: cut
    for f in FIXTURES
    if f.expect.get("tool_call_count", 0) >= 1
    and f.expect.get("status") == "completed"
    and f.expect.get("executable") is True
    and (cut := _after_first_client_call(f)) is not None
}
TOOL_FIXTURES = [f for f in FIXTURES if f.name in TOOL_CUTS]
TOOL_PROTOCOLS = sorted({f.protocol for f in TOOL_FIXTURES})


@pytest.mark.parametrize("client", CLIENTS)
@pytest.mark.parametrize("protocol", TOOL_PROTOCOLS)
def test_disconnect_mid_tool_call_is_incomplete_and_not_executable(
    server: StreamServer, client: str, protocol: str
) -> None:
    fixtures = [f for f in TOOL_FIXTURES if f.protocol == protocol]
    jobs = [
        (
            server.add(_scenario(f, cut_at=TOOL_CUTS[f.name], content_length=client == "aiohttp")),
            protocol,
            f.manifest.get("options", {}),
        )
        for f in fixtures
    ]
    for fixture, out in zip(fixtures, fetch_all(client, jobs), strict=True):
        result = out.result
        where = fixture.name
        assert result is not None and result.final, where
        assert result.status == "incomplete", where
        assert result.executable is False, where
        assert not any(c.executable for choice in result.choices for c in choice.tool_calls), where
        assert result.tool_calls and result.not_executable_reason, where
        assert "transport_error" in {w.code for w in result.warnings}, where
        assert result.usage is None or result.usage.final is False, where


def test_tool_fixtures_exist() -> None:
    assert TOOL_FIXTURES, "no completed, executable tool-call fixture to cut"
