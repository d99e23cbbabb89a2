"""The Starlette recipe (``examples/starlette_gateway.py``) under uvicorn, and ``sw.atranslate``.

The recipe's app runs under a real uvicorn on 127.0.0.1, in front of the
test stream server playing Anthropic's Messages API with a recorded stream.

* The openai SDK's own stream helper, pointed at the app, accumulates what
  the upstream streamed (text, the tool call, its arguments, the stop reason).
* A client that disconnects mid-stream makes the app close the upstream at
  once: the upstream server sees the disconnect, and the recorded result is
  ``cancelled``.
* An upstream error status is passed on with its message.
* ``sw.atranslate`` re-encodes an upstream body read with httpx's
  ``aiter_bytes()``, and closes that iterator when its reader leaves early.
"""

from __future__ import annotations

import asyncio
import importlib.util
import json
import sys
import time
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from types import ModuleType
from typing import Any

import httpx
import openai
import pytest

import streamwire as sw
from fixture_replay import manifests
from gateway_loopback import Loopback
from servers.stream_server import Scenario, StreamServer, shared_server

RECIPE = Path(__file__).resolve().parent.parent / "examples" / "starlette_gateway.py"
FIXTURE = next(f for f in manifests() if f.name == "anthropic/prism-tools")


def _load_recipe() -> ModuleType:
    name = "streamwire_example_starlette"
    if name in sys.modules:
        return sys.modules[name]
    spec = importlib.util.spec_from_file_location(name, RECIPE)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


class Recipe:
    """The recipe's app served by uvicorn; ``results`` holds what ``on_result`` got."""

    def __init__(self, upstream_url: str) -> None:
        self.results: list[sw.StreamResult] = []
        self.loopback = Loopback()
        app = _load_recipe().create_app(upstream_url, "sk-ant-test", on_result=self.results.append)
        self.url = f"http://127.0.0.1:{self.loopback.serve(app)}"

    def close(self) -> None:
        self.loopback.close()

    def wait_for_result(self, timeout: float = 3.0) -> sw.StreamResult:
        deadline = time.monotonic() + timeout
        while not self.results:
            assert time.monotonic() < deadline, "on_result was not called"
            time.sleep(0.005)
        return self.results[-1]


@pytest.fixture(scope="module")
def server() -> StreamServer:
    return shared_server()


@pytest.fixture
def recipe_for(server: StreamServer) -> Iterator[Any]:
    made: list[Recipe] = []

    def make(scenario: Scenario) -> tuple[Recipe, str]:
        upstream = server.add(scenario)
        recipe = Recipe(upstream)
        made.append(recipe)
        return recipe, upstream

    yield make
    for recipe in made:
        recipe.close()


def _chunks(raw: bytes, size: int = 120) -> list[bytes]:
    return [raw[i : i + size] for i in range(0, len(raw), size)]


def _direct() -> sw.StreamResult:
    s = sw.stream("anthropic")
    s.feed(FIXTURE.raw)
    s.close()
    return s.result


def test_the_openai_sdk_reads_what_the_anthropic_upstream_streamed(recipe_for: Any) -> None:
    recipe, upstream = recipe_for(Scenario(body=FIXTURE.raw, chunks=_chunks(FIXTURE.raw)))
    client = openai.OpenAI(base_url=f"{recipe.url}/v1", api_key="unused", max_retries=0)
    with client.chat.completions.stream(
        model="claude-test", messages=[{"role": "user", "content": "Weather?"}]
    ) as stream:
        for _ in stream:
            pass
    final = stream.get_final_completion()
    want = _direct()
    choice = final.choices[0]
    assert (choice.message.content or "") == want.text
    calls = choice.message.tool_calls or []
    assert [(c.id, c.function.name) for c in calls] == [(c.id, c.name) for c in want.tool_calls]
    assert [json.loads(c.function.arguments) for c in calls] == [
        c.arguments for c in want.tool_calls
    ]
    assert choice.finish_reason == "tool_calls"
    result = recipe.wait_for_result()
    assert (result.status, result.executable) == ("completed", True)
    assert result.metrics.time_to_first_event is not None  # metrics were recorded
    visit = shared_server().visits_of(upstream)[0]
    sent = json.loads(visit.body)
    assert sent["model"] == "claude-test" and sent["stream"] is True


@pytest.mark.timed
def test_a_client_disconnect_closes_the_upstream_at_once(
    recipe_for: Any, server: StreamServer
) -> None:
    chunks = _chunks(FIXTURE.raw, 60)
    recipe, upstream = recipe_for(Scenario(body=FIXTURE.raw, chunks=chunks, delay=0.3))
    body = {"model": "claude-test", "messages": [{"role": "user", "content": "hi"}]}
    with httpx.Client(timeout=10.0) as client:
        with client.stream("POST", f"{recipe.url}/v1/chat/completions", json=body) as response:
            assert response.status_code == 200
            first = next(response.iter_bytes())
            assert first.startswith(b"data: ")
            left = time.monotonic()
    visit = server.wait_for(upstream, "disconnected")
    assert visit.disconnected is not None and visit.disconnected - left < 1.0
    assert visit.completed is None and len(visit.chunk_times) < len(chunks)
    result = recipe.wait_for_result()
    assert result.status == "cancelled" and not result.executable


def test_an_upstream_error_status_is_passed_on(recipe_for: Any) -> None:
    error = {"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}
    recipe, _ = recipe_for(
        Scenario(body=json.dumps(error).encode(), status=529, content_type="application/json")
    )
    body = {"model": "claude-test", "messages": [{"role": "user", "content": "hi"}]}
    response = httpx.post(f"{recipe.url}/v1/chat/completions", json=body, timeout=10.0)
    assert response.status_code == 529
    assert response.json() == {"error": {"message": "Overloaded"}}
    result = recipe.wait_for_result()
    assert result.status == "error" and result.error is not None
    assert result.error.type == "overloaded_error"


# --- sw.atranslate -----------------------------------------------------------------


def test_atranslate_reencodes_an_async_body(server: StreamServer) -> None:
    url = server.add(Scenario(body=FIXTURE.raw, chunks=_chunks(FIXTURE.raw)))

    async def run() -> bytes:
        async with httpx.AsyncClient() as client, client.stream("GET", url) as response:
            parts = [
                p async for p in sw.atranslate("anthropic", "openai-chat", response.aiter_bytes())
            ]
        assert len(parts) > 1  # streamed, not collected
        return b"".join(parts)

    wire = asyncio.run(run())
    target = sw.stream("openai-chat")
    target.feed(wire)
    target.close()
    want = _direct()
    assert (target.result.status, target.result.text) == ("completed", want.text)
    assert [c.arguments for c in target.result.tool_calls] == [c.arguments for c in want.tool_calls]
    assert wire == b"".join(sw.translate("anthropic", "openai-chat", _chunks(FIXTURE.raw)))


def test_atranslate_closes_its_source_when_left_early() -> None:
    closed: list[bool] = []

    async def upstream() -> AsyncIterator[bytes]:
        try:
            for chunk in _chunks(FIXTURE.raw):
                yield chunk
                await asyncio.sleep(0)
        finally:
            closed.append(True)

    async def run() -> None:
        out = sw.atranslate("anthropic", "openai-chat", upstream())
        async for _ in out:
            break
        await out.aclose()  # type: ignore[attr-defined]

    asyncio.run(run())
    assert closed == [True]


def test_atranslate_checks_its_arguments_at_the_call() -> None:
    async def nothing() -> AsyncIterator[bytes]:
        yield b""

    with pytest.raises(ValueError, match="unknown target"):
        sw.atranslate("anthropic", "no-such-target", nothing())
    with pytest.raises(TypeError, match="strict_dnoe"):
        sw.atranslate("openai-chat", "anthropic", nothing(), source_options={"strict_dnoe": True})
