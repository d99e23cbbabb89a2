"""The example gateway (``examples/gateway``) over HTTP: streaming, headers, errors, mapping.

``test_translate_sdk.py`` proves the official clients accept what the gateway
streams; this file proves the gateway behaves as a streaming proxy should,
over loopback with uvicorn and the upstream stub (``gateway_loopback.py``):

* bytes reach the client while the upstream is still streaming (the stub
  holds the rest of its stream until the client has seen the first text);
* the response headers keep proxies from buffering, with no Content-Length;
* a client that hangs up makes the gateway close the upstream at once;
* an upstream error status reaches the client as the same status, in the
  client's own error shape (the SDKs raise their typed errors), and an
  unreachable upstream as 502;
* the gemini client route streams too (checked with streamwire's own adapter:
  no official Python SDK for it is among the test dependencies);
* the minimal request mapping carries model, system, turns, tools and limit.
"""

from __future__ import annotations

import json
import socket
import time
from typing import Any

import anthropic
import httpx
import openai
import pytest

import streamwire as sw
from example_gateway import load_gateway
from gateway_loopback import Loopback, StubCase, UpstreamStub
from sdk_clients import SDK_TARGETS, fixture, make_client, run_sdk, source_result

CLIENT_TIMEOUT = httpx.Timeout(10.0)


class Env:
    def __init__(self) -> None:
        self.gateway = load_gateway()
        self.loopback = Loopback()
        try:
            self.stub = UpstreamStub()
            stub_port = self.loopback.serve(self.stub)
            self.port = self._serve(f"http://127.0.0.1:{stub_port}/v1", "anthropic")
            # Nothing listens on a port that was free a moment ago.
            with socket.socket() as sock:
                sock.bind(("127.0.0.1", 0))
                dead = sock.getsockname()[1]
            self.dead_port = self._serve(f"http://127.0.0.1:{dead}/v1", "openai-chat")
            self.gemini_port = self._serve(f"http://127.0.0.1:{stub_port}/v1beta", "gemini")
        except BaseException:
            self.loopback.close()
            raise

    def _serve(self, url: str, protocol: str) -> int:
        config = self.gateway.GatewayConfig(
            upstream_url=url, upstream_protocol=protocol, connect_timeout=2.0, read_timeout=10.0
        )
        return self.loopback.serve(self.gateway.create_app(config))

    def url(self, path: str, port: int | None = None) -> str:
        return f"http://127.0.0.1:{port or self.port}{path}"


@pytest.fixture(scope="module")
def env() -> Any:
    gateway_env = Env()
    yield gateway_env
    gateway_env.loopback.close()


def sse_events(raw: bytes) -> list[bytes]:
    """``raw`` cut after each blank line: one SSE event per chunk."""
    parts = raw.split(b"\n\n")
    return [p + b"\n\n" for p in parts[:-1]] + ([parts[-1]] if parts[-1] else [])


def chat_request(model: str) -> dict[str, Any]:
    return {"model": model, "stream": True, "messages": [{"role": "user", "content": "hello"}]}


@pytest.mark.timed
def test_streams_before_the_upstream_finishes(env: Env) -> None:
    events = sse_events(fixture("anthropic", "02-long-text").raw)
    first_text = next(i for i, e in enumerate(events) if b"text_delta" in e)
    case = StubCase(chunks=events, gate_after=first_text + 1, gate_timeout=5.0)
    model = env.stub.add(case)
    decoder = sw.stream("openai-chat")
    seen_text_while_held = False
    with httpx.Client(timeout=CLIENT_TIMEOUT) as client:
        started = time.monotonic()
        with client.stream("POST", env.url("/v1/chat/completions"), json=chat_request(model)) as r:
            assert r.status_code == 200
            headers = r.headers
            for chunk in r.iter_raw():
                got_text = any(isinstance(e, sw.TextDelta) for e in decoder.feed(chunk))
                if got_text and not case.gate.is_set():
                    # The upstream is still holding its stream: this text was relayed as it came.
                    seen_text_while_held = not env.stub.visits[model][0].completed
                    case.gate.set()
    decoder.close()
    assert seen_text_while_held, "no text reached the client before the upstream finished"
    assert time.monotonic() - started < case.gate_timeout, "the stream waited for the gate timeout"
    assert decoder.result.status == "completed"
    assert decoder.result.text == source_result("anthropic", "02-long-text").text
    # The headers that keep proxies from buffering, and no length: chunked.
    assert headers["content-type"].startswith("text/event-stream")
    assert "no-cache" in [d.strip() for d in headers["cache-control"].split(",")]
    assert headers["x-accel-buffering"] == "no"
    assert "content-length" not in headers
    assert headers["transfer-encoding"] == "chunked"


@pytest.mark.timed
def test_client_hangup_closes_the_upstream(env: Env) -> None:
    events = sse_events(fixture("anthropic", "02-long-text").raw)
    case = StubCase(chunks=events, gate_after=3, gate_timeout=8.0)
    model = env.stub.add(case)
    with (
        httpx.Client(timeout=CLIENT_TIMEOUT) as client,
        client.stream("POST", env.url("/v1/chat/completions"), json=chat_request(model)) as r,
    ):
        next(r.iter_raw())
        hung_up = time.monotonic()
    visit = env.stub.visit(model, timeout=6.0)
    assert visit.disconnected and not visit.completed
    assert visit.chunks_sent == 3
    assert time.monotonic() - hung_up < 4.0, "the upstream was closed only at the gate timeout"


@pytest.mark.parametrize("target", SDK_TARGETS)
def test_upstream_error_status_reaches_the_client_typed(env: Env, target: str) -> None:
    body = {"type": "error", "error": {"type": "rate_limit_error", "message": "slow down, stub"}}
    case = StubCase(
        chunks=[json.dumps(body).encode()],
        status=429,
        content_type="application/json",
        headers={"retry-after": "7"},
    )
    model = env.stub.add(case)
    base = env.url("" if target == "anthropic" else "/v1")
    client = make_client(target, base)
    error = anthropic.RateLimitError if target == "anthropic" else openai.RateLimitError
    try:
        with pytest.raises(error, match="slow down, stub") as raised:
            run_sdk(target, client, [], model=model)
    finally:
        client.close()
    assert raised.value.response.headers["retry-after"] == "7"


def test_unreachable_upstream_is_502(env: Env) -> None:
    client = make_client("openai-chat", env.url("/v1", env.dead_port))
    try:
        with pytest.raises(openai.APIStatusError) as raised:
            run_sdk("openai-chat", client, [], model="any")
    finally:
        client.close()
    assert raised.value.status_code == 502


@pytest.mark.parametrize(
    ("method", "path", "body", "status"),
    [
        ("POST", "/v1/nowhere", b"{}", 404),
        ("GET", "/v1/messages", b"", 405),
        ("POST", "/v1/messages", b"not json", 400),
        ("POST", "/v1/messages", b'{"model": "m", "messages": []}', 400),  # not streaming
    ],
)
def test_bad_requests_get_an_error_body(
    env: Env, method: str, path: str, body: bytes, status: int
) -> None:
    response = httpx.request(method, env.url(path), content=body, timeout=CLIENT_TIMEOUT)
    assert response.status_code == status
    error = response.json()["error"]
    assert isinstance(error, dict) and error["message"]


@pytest.mark.parametrize("case", ["pyd-text", "prism-parallel-fc"])
def test_gemini_client_route(env: Env, case: str) -> None:
    model = env.stub.add(StubCase(chunks=sse_events(fixture("gemini", case).raw)))
    request = {"contents": [{"role": "user", "parts": [{"text": "hello"}]}]}
    url = env.url(f"/v1beta/models/{model}:streamGenerateContent?alt=sse", env.gemini_port)
    with (
        httpx.Client(timeout=CLIENT_TIMEOUT) as client,
        client.stream("POST", url, json=request) as response,
    ):
        assert response.status_code == 200
        with sw.iter_events(response, "gemini") as events:
            list(events)
    got, want = events.result, source_result("gemini", case)
    assert (got.status, got.text, got.stop_reason) == (want.status, want.text, want.stop_reason)
    assert [(c.name, c.arguments) for c in got.tool_calls] == [
        (c.name, c.arguments) for c in want.tool_calls
    ]
    assert env.stub.visit(model).path.endswith(f"/v1beta/models/{model}:streamGenerateContent")


# --- the request mapping, without a server ---------------------------------------

TOOL = {"type": "object", "properties": {"city": {"type": "string"}}}
REQUESTS: dict[str, tuple[dict[str, Any], str | None]] = {
    "openai-chat": (
        {
            "model": "m",
            "stream": True,
            "max_completion_tokens": 99,
            "messages": [
                {"role": "system", "content": "be brief"},
                {"role": "user", "content": [{"type": "text", "text": "hi"}]},
                {"role": "assistant", "content": "hello"},
                {"role": "user", "content": "weather?"},
            ],
            "tools": [{"type": "function", "function": {"name": "w", "parameters": TOOL}}],
        },
        None,
    ),
    "openai-responses": (
        {
            "model": "m",
            "stream": True,
            "instructions": "be brief",
            "max_output_tokens": 99,
            "input": [
                {"role": "user", "content": "hi"},
                {"role": "assistant", "content": [{"type": "output_text", "text": "hello"}]},
                {"role": "user", "content": [{"type": "input_text", "text": "weather?"}]},
            ],
            "tools": [{"type": "function", "name": "w", "parameters": TOOL}],
        },
        None,
    ),
    "anthropic": (
        {
            "model": "m",
            "stream": True,
            "max_tokens": 99,
            "system": [{"type": "text", "text": "be brief"}],
            "messages": [
                {"role": "user", "content": "hi"},
                {"role": "assistant", "content": [{"type": "text", "text": "hello"}]},
                {"role": "user", "content": "weather?"},
            ],
            "tools": [{"name": "w", "input_schema": TOOL}],
        },
        None,
    ),
    "gemini": (
        {
            "systemInstruction": {"parts": [{"text": "be brief"}]},
            "generationConfig": {"maxOutputTokens": 99},
            "contents": [
                {"role": "user", "parts": [{"text": "hi"}]},
                {"role": "model", "parts": [{"text": "hello"}]},
                {"role": "user", "parts": [{"text": "weather?"}]},
            ],
            "tools": [{"functionDeclarations": [{"name": "w", "parameters": TOOL}]}],
        },
        "m",
    ),
}


@pytest.mark.parametrize("upstream", list(REQUESTS))
@pytest.mark.parametrize("client", list(REQUESTS))
def test_request_mapping_round_trips(client: str, upstream: str) -> None:
    """client request -> Prompt -> upstream request -> Prompt: the carried facts survive."""
    mapping = load_gateway().mapping
    body, path_model = REQUESTS[client]
    prompt = mapping.parse_request(client, json.dumps(body).encode(), path_model)
    assert prompt.model == "m" and prompt.system == "be brief" and prompt.max_tokens == 99
    assert [(t.role, t.text) for t in prompt.turns] == [
        ("user", "hi"),
        ("assistant", "hello"),
        ("user", "weather?"),
    ]
    assert [(t.name, t.parameters) for t in prompt.tools] == [("w", TOOL)]
    url, headers, out = mapping.upstream_request(upstream, prompt, "http://up.invalid/v9/", "k")
    assert url.startswith("http://up.invalid/v9/") and "k" in "".join(headers.values())
    again = mapping.parse_request(
        upstream, json.dumps(out | {"stream": True}).encode(), "m" if upstream == "gemini" else None
    )
    assert again == prompt
