"""The README's Python examples run as written, with real values for what they take as given.

``tests/readme_blocks.py`` gives each block and the names it assumes (the
prelude; ``.ci/run`` type-checks the same modules under ``mypy --strict``).
Here each block runs in a fresh namespace where those names are real: the
body chunks of a recorded tool-call stream, a loopback server for the URL
(the openai SDK finds it through ``OPENAI_BASE_URL``), recorded upstream
bodies, and checks of what the block produced.
"""

from __future__ import annotations

import asyncio
import json
from typing import Any

import httpx2
import pytest

import streamwire as sw
from fixture_replay import manifests
from readme_blocks import PRELUDE, blocks
from servers.stream_server import Scenario, StreamServer, shared_server

FIXTURES = {f.name: f for f in manifests()}
CHAT = FIXTURES["openai-chat/oaipy-tool-single"]
ANTHROPIC = FIXTURES["anthropic/prism-tools"]
BEDROCK = next(f for f in manifests() if f.protocol == "bedrock-converse")
BLOCKS = blocks()


def _chunks(raw: bytes, size: int = 97) -> list[bytes]:
    return [raw[i : i + size] for i in range(0, len(raw), size)]


@pytest.fixture
def namespace(monkeypatch: pytest.MonkeyPatch) -> dict[str, Any]:
    server: StreamServer = shared_server()
    anthropic_url = server.add(Scenario(body=ANTHROPIC.raw, chunks=_chunks(ANTHROPIC.raw)))
    chat_url = server.add(Scenario(body=CHAT.raw, chunks=_chunks(CHAT.raw)))
    monkeypatch.setenv("OPENAI_BASE_URL", chat_url)
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    sent: list[bytes] = []
    recorded: list[sw.StreamResult] = []
    tools = [
        {
            "type": "function",
            "function": {"name": "GetWeatherArgs", "parameters": {"type": "object"}},
        }
    ]
    done = sw.stream("anthropic")
    done.feed(ANTHROPIC.raw)
    done.close()
    ns: dict[str, Any] = {}
    exec(compile(PRELUDE, "<prelude>", "exec"), ns)  # the imports and the defs
    ns.update(
        request={"tools": tools},
        body_chunks=_chunks(CHAT.raw),
        messages=[],
        url=anthropic_url,
        body={"model": "claude-test", "max_tokens": 64, "messages": []},
        chat_messages=[{"role": "user", "content": "Weather in Boston?"}],
        upstream_chunks=_chunks(ANTHROPIC.raw),
        eventstream_bytes=BEDROCK.raw,
        r=done.result,
        run_tool=lambda call: json.dumps({"ok": call.name}),
        send=sent.append,
        record=recorded.append,
        _sent=sent,
        _recorded=recorded,
    )
    return ns


def _block(first_line: str) -> str:
    for _, code in BLOCKS:
        if code.startswith(first_line):
            return code
    raise AssertionError(f"no README block starts with {first_line!r}")


def _run(code: str, ns: dict[str, Any]) -> None:
    exec(compile(code, "<README>", "exec"), ns)


def test_every_block_is_run_here() -> None:
    firsts = [code.splitlines()[0] for _, code in BLOCKS]
    assert firsts == [
        "import streamwire as sw",
        'with httpx.Client() as client, client.stream("POST", url, json=body) as response:',
        "client = openai.OpenAI()",
        "async def answer() -> sw.StreamResult:",
        "s = sw.stream(",
        'for wire_bytes in sw.translate("anthropic", "openai-chat", upstream_chunks):',
        "async def relay(events: sw.AsyncEventIterator) -> AsyncIterator[bytes]:",
        "def show(event: sw.Event) -> str:",
        'row = r.as_dict()                          # {"status": "completed", "usage": {...}, ...}',
        "d = sw.SseDecoder(max_event_bytes=1 << 20)",
    ]


def test_using_it(namespace: dict[str, Any], capsys: pytest.CaptureFixture[str]) -> None:
    _run(_block("import streamwire as sw"), namespace)
    r = namespace["r"]
    assert r.executable and r.status == "completed"
    kinds = [m.get("role") for m in namespace["messages"]]
    assert kinds == ["assistant", "tool"]
    assert namespace["messages"][1]["tool_call_id"] == r.tool_calls[0].id


def test_http_clients(namespace: dict[str, Any]) -> None:
    _run(_block("with httpx.Client()"), namespace)
    assert namespace["events"].result.status == "completed"
    _run(_block("client = openai.OpenAI()"), namespace)
    assert namespace["events"].result.status == "completed"
    assert namespace["events"].result.protocol == "openai-chat"
    _run(_block("async def answer()"), namespace)
    result = asyncio.run(namespace["answer"]())
    assert result.status == "completed" and result.tool_calls


def test_caps(namespace: dict[str, Any]) -> None:
    _run(_block("s = sw.stream("), namespace)
    stream = namespace["s"]
    stream.feed(ANTHROPIC.raw)
    stream.close()
    assert stream.result.status == "completed" and stream.result.tool_calls


def test_gateways(namespace: dict[str, Any]) -> None:
    _run(_block("for wire_bytes in sw.translate"), namespace)
    chat = sw.stream("openai-chat")
    chat.feed(b"".join(namespace["_sent"]))
    chat.close()
    assert chat.result.status == "completed" and chat.result.tool_calls
    _run(_block("async def relay("), namespace)

    async def serve() -> bytes:
        async with httpx2.AsyncClient() as client:
            async with client.stream("GET", namespace["url"]) as response:
                events = sw.aiter_events(response, "anthropic")
                return b"".join([chunk async for chunk in namespace["relay"](events)])

    wire = asyncio.run(serve())
    chat = sw.stream("openai-chat")
    chat.feed(wire)
    chat.close()
    assert chat.result.text == namespace["r"].text
    assert [r.status for r in namespace["_recorded"]] == ["completed"]


def test_typed_serializable_observable(namespace: dict[str, Any]) -> None:
    _run(_block("def show("), namespace)
    s = sw.stream("anthropic")
    shown = "".join(namespace["show"](e) for e in s.feed(ANTHROPIC.raw) + s.close())
    assert shown.endswith("[completed]") and "[" in shown
    _run(_block("row = r.as_dict()"), namespace)
    assert json.loads(namespace["line"])["status"] == "completed"
    assert namespace["attributes"]["gen_ai.provider.name"] == "anthropic"


def test_the_framing_layer(namespace: dict[str, Any], capsys: pytest.CaptureFixture[str]) -> None:
    _run(_block("d = sw.SseDecoder("), namespace)
    assert "ping {}" in capsys.readouterr().out
    assert namespace["frame"].startswith(b"\x00")
