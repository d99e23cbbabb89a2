"""The official clients accept our re-encoded streams (issue 9, "Prove it").

For source fixtures of every protocol (text only, one tool call, parallel
tool calls, text with reasoning), the stream is translated into each target
an official Python SDK streams (``openai-chat``, ``openai-responses``,
``anthropic``) and given to that SDK's stream helper, which must accumulate
what the source fixture says: the text, every tool call (provider ids
carried, names, arguments, parsed by the SDK itself), the stop reason's
category and the usage. Twice:

* fed directly: ``sw.translate`` over the fixture's bytes (cut at seeded
  random points, as a network would), the output served to the SDK by a
  ``MockTransport`` one encoder write per read, into the stream helpers and
  into openai-python's state objects (``create(stream=True)`` +
  ``ChatCompletionStreamState`` / ``ResponseStreamState``);
* through the example gateway (``examples/gateway``) over loopback: an
  upstream stub serves the fixture's bytes in the source protocol, the
  gateway re-encodes them as they arrive, and the SDK's ``base_url`` points
  at the gateway. The stub also checks what the gateway asked the upstream:
  the model, the user's text and the tools, with the upstream's key and
  never the client's.

The SDKs are the oracle; ``sdk_clients.py`` says how each is driven and
reduced to one comparable form. Fake keys, loopback only, bounded timeouts.
"""

from __future__ import annotations

import random
from typing import Any

import anthropic
import openai
import pytest

import streamwire as sw
from example_gateway import load_gateway
from gateway_loopback import Loopback, StubCase, UpstreamStub
from sdk_clients import (
    FAKE_KEY,
    SDK_TARGETS,
    Final,
    assert_same,
    client_calls,
    expected_final,
    fixture,
    interleaved_calls,
    make_client,
    mock_client,
    run_sdk,
    run_state,
    source_error,
    source_events,
    source_result,
)

#: Source cases per protocol: text only, one call, parallel calls (recorded and
#: hand-written), a parameterless call, and text beside reasoning.
SOURCES: dict[str, tuple[str, ...]] = {
    "openai-chat": (
        "oaipy-text-stop",
        "oaipy-tool-single",
        "oaipy-tools-parallel",
        "pyd-deepseek-reasoning",
        "01-short-text",
        "06-one-tool-call",
        "07-parallel-tool-calls",
    ),
    "openai-responses": (
        "pyd-text",
        "pyd-function-call",
        "prism-parallel-tools",
        "01-short-text",
        "06-one-tool-call",
        "07-parallel-tool-calls",
    ),
    "anthropic": (
        "prism-tools",
        "vercel-tool-no-args",
        "pyd-thinking",
        "01-short-text",
        "06-one-tool-call",
        "07-parallel-tool-calls",
    ),
    "gemini": (
        "pyd-text",
        "pyd-function-call",
        "prism-parallel-fc",
        "01-short-text",
        "06-one-tool-call",
        "07-parallel-tool-calls",
    ),
    "gemini-json": ("01-short-text", "07-parallel-tool-calls"),
    "bedrock-converse": ("pyd-nova-text", "pyd-nova-tool", "07-parallel-tool-calls"),
    "bedrock-invoke": ("anthropic-text", "anthropic-tool-use"),
}
#: The upstream protocols the example gateway calls.
GATEWAY_UPSTREAMS = ("openai-chat", "openai-responses", "anthropic", "gemini")

DIRECT_CASES = [(p, c) for p, cases in SOURCES.items() for c in cases]
GATEWAY_CASES = [(p, c) for p in GATEWAY_UPSTREAMS for c in SOURCES[p]]


def network_chunks(data: bytes, seed: str, pieces: int = 8) -> list[bytes]:
    """``data`` cut at seeded random points, as a network might deliver it."""
    rng = random.Random(seed)
    if len(data) < 2:
        return [data]
    points = sorted(rng.sample(range(1, len(data)), min(pieces - 1, len(data) - 1)))
    return [data[a:b] for a, b in zip([0, *points], [*points, len(data)], strict=True)]


def _check(protocol: str, case: str, target: str, final: Final, where: str) -> None:
    result = source_result(protocol, case)
    ids = [c.id_source == "provider" for c in client_calls(result)]
    assert_same(expected_final(result), final, provider_ids=ids, target=target, where=where)


def _tool_names(protocol: str, case: str) -> list[str]:
    return sorted({c.name for c in client_calls(source_result(protocol, case)) if c.name})


def _strict(protocol: str, case: str, target: str) -> bool:
    """Strict tools, unless openai-python's chat helper cannot take the source's call order."""
    return target != "openai-chat" or not interleaved_calls(source_events(protocol, case))


# --- (a) fed directly --------------------------------------------------------


@pytest.mark.parametrize("target", SDK_TARGETS)
@pytest.mark.parametrize(
    ("source", "case"), DIRECT_CASES, ids=[f"{p}/{c}" for p, c in DIRECT_CASES]
)
def test_sdk_accepts_translated_stream(source: str, case: str, target: str) -> None:
    fx = fixture(source, case)
    chunks = [
        out
        for out in sw.translate(source, target, network_chunks(fx.raw, f"{source}/{case}"))
        if out
    ]
    assert chunks, "the translation wrote nothing"
    content_type = sw.encoder(target).content_type
    seen: list[Any] = []
    client = mock_client(target, chunks, content_type, seen)
    try:
        final = run_sdk(
            target, client, _tool_names(source, case), strict=_strict(source, case, target)
        )
    finally:
        client.close()
    assert len(seen) == 1
    _check(source, case, target, final, f"{source}/{case} -> {target} (direct)")


@pytest.mark.parametrize("target", SDK_TARGETS)
def test_sdk_accepts_encoder_writes_one_event_at_a_time(target: str) -> None:
    """The encoder fed one unified event per call (the finest a gateway feeds it):
    each write is its own read for the SDK, and the SDK still accumulates it all."""
    source, case = "anthropic", "07-parallel-tool-calls"
    stream = sw.stream(source)
    events = stream.feed(fixture(source, case).raw) + stream.close()
    encoder = sw.encoder(target, source=source)
    chunks = [encoder.feed([event]) for event in events] + [encoder.close()]
    client = mock_client(target, [c for c in chunks if c], encoder.content_type)
    try:
        final = run_sdk(target, client, _tool_names(source, case))
    finally:
        client.close()
    _check(source, case, target, final, f"{source}/{case} -> {target} (event by event)")


STATE_CASES = [
    ("openai-chat", "oaipy-tools-parallel"),
    ("openai-responses", "prism-parallel-tools"),
    ("anthropic", "07-parallel-tool-calls"),
    ("gemini", "prism-parallel-fc"),
    ("bedrock-converse", "pyd-nova-tool"),
]


@pytest.mark.parametrize("target", ["openai-chat", "openai-responses"])
@pytest.mark.parametrize(("source", "case"), STATE_CASES, ids=[f"{p}/{c}" for p, c in STATE_CASES])
def test_sdk_state_objects_accept_translated_stream(source: str, case: str, target: str) -> None:
    """openai-python's other documented way: ``create(stream=True)`` with the
    state object (``ChatCompletionStreamState`` / ``ResponseStreamState``) fed
    every chunk or event."""
    fx = fixture(source, case)
    chunks = [c for c in sw.translate(source, target, network_chunks(fx.raw, case)) if c]
    client = mock_client(target, chunks, sw.encoder(target).content_type)
    try:
        final = run_state(
            target, client, _tool_names(source, case), strict=_strict(source, case, target)
        )
    finally:
        client.close()
    _check(source, case, target, final, f"{source}/{case} -> {target} (state object)")


# --- (b) through the example gateway over loopback --------------------------


class GatewayEnv:
    """The upstream stub and one example gateway per upstream protocol, on loopback."""

    def __init__(self) -> None:
        gateway = load_gateway()
        self.loopback = Loopback()
        try:
            self.stub = UpstreamStub()
            stub_port = self.loopback.serve(self.stub)
            self.ports: dict[str, int] = {}
            for protocol in GATEWAY_UPSTREAMS:
                config = gateway.GatewayConfig(
                    upstream_url=f"http://127.0.0.1:{stub_port}/{protocol}/v1",
                    upstream_protocol=protocol,
                    upstream_api_key=f"upstream-key-{protocol}",
                    connect_timeout=5.0,
                    read_timeout=10.0,
                )
                self.ports[protocol] = self.loopback.serve(gateway.create_app(config))
        except BaseException:
            self.loopback.close()
            raise

    def base_url(self, upstream: str, target: str) -> str:
        root = f"http://127.0.0.1:{self.ports[upstream]}"
        return root if target == "anthropic" else f"{root}/v1"

    def close(self) -> None:
        self.loopback.close()


@pytest.fixture(scope="module")
def env() -> Any:
    gateway_env = GatewayEnv()
    yield gateway_env
    gateway_env.close()


_UPSTREAM_PATHS = {
    "openai-chat": "/chat/completions",
    "openai-responses": "/responses",
    "anthropic": "/messages",
    "gemini": ":streamGenerateContent",
}
_UPSTREAM_KEY_HEADERS = {
    "openai-chat": "authorization",
    "openai-responses": "authorization",
    "anthropic": "x-api-key",
    "gemini": "x-goog-api-key",
}


def upstream_request_facts(protocol: str, body: Any) -> tuple[str, list[str]]:
    """(the user's text, the tool names) of an upstream request body in ``protocol``."""
    if protocol == "openai-chat":
        text = "".join(m["content"] for m in body["messages"] if m["role"] == "user")
        names = [t["function"]["name"] for t in body.get("tools", [])]
    elif protocol == "openai-responses":
        text = "".join(m["content"] for m in body["input"] if m["role"] == "user")
        names = [t["name"] for t in body.get("tools", [])]
    elif protocol == "anthropic":
        text = "".join(m["content"] for m in body["messages"] if m["role"] == "user")
        names = [t["name"] for t in body.get("tools", [])]
    else:
        text = "".join(p["text"] for c in body["contents"] for p in c["parts"])
        names = [f["name"] for t in body.get("tools", []) for f in t["functionDeclarations"]]
    return text, sorted(names)


@pytest.mark.parametrize("target", SDK_TARGETS)
@pytest.mark.parametrize(
    ("source", "case"), GATEWAY_CASES, ids=[f"{p}/{c}" for p, c in GATEWAY_CASES]
)
def test_sdk_through_gateway(env: GatewayEnv, source: str, case: str, target: str) -> None:
    fx = fixture(source, case)
    model = env.stub.add(StubCase(chunks=network_chunks(fx.raw, f"gw:{source}/{case}")))
    tools = _tool_names(source, case)
    client = make_client(target, env.base_url(source, target))
    try:
        final = run_sdk(target, client, tools, model=model, strict=_strict(source, case, target))
    finally:
        client.close()
    where = f"{source}/{case} -> gateway -> {target}"
    _check(source, case, target, final, where)

    visit = env.stub.visit(model)
    assert visit.completed, f"{where}: the upstream stream was not read to its end"
    assert visit.path.endswith(_UPSTREAM_PATHS[source]), visit.path
    if source == "gemini":
        assert visit.query == "alt=sse"
    else:
        assert visit.body["model"] == model and visit.body["stream"] is True
    assert visit.headers[_UPSTREAM_KEY_HEADERS[source]].endswith(f"upstream-key-{source}")
    assert not any(FAKE_KEY in value for value in visit.headers.values()), "client key forwarded"
    assert upstream_request_facts(source, visit.body) == ("hello", tools)


ERROR_SOURCES = ("openai-chat", "openai-responses", "anthropic", "gemini")


@pytest.mark.parametrize("target", SDK_TARGETS)
@pytest.mark.parametrize("source", ERROR_SOURCES)
@pytest.mark.parametrize("path", ["direct", "gateway"])
def test_in_stream_error_raises_in_the_sdk(
    env: GatewayEnv, path: str, source: str, target: str
) -> None:
    """An in-stream error reaches the client as its protocol's error, which the
    SDK raises with the provider's message, never as text."""
    fx = fixture(source, "10-in-stream-error")
    error = source_error(source, "10-in-stream-error")
    if path == "direct":
        chunks = [c for c in sw.translate(source, target, network_chunks(fx.raw, "err")) if c]
        client = mock_client(target, chunks, sw.encoder(target).content_type)
        model = "test-model"
    else:
        model = env.stub.add(StubCase(chunks=network_chunks(fx.raw, "gw-err")))
        client = make_client(target, env.base_url(source, target))
    raises = anthropic.APIError if target == "anthropic" else openai.APIError
    try:
        with pytest.raises(raises) as raised:
            run_sdk(target, client, [], model=model)
    finally:
        client.close()
    assert error.message and error.message in str(raised.value)
