"""Tool schemas on a plain install (no ``jsonschema``), and every suggestion its messages make.

A plain install is simulated by making ``import jsonschema`` fail. Then the
headline example (``sw.stream(protocol, tools=...)``) works: names are
checked, the schemas are not, and the result says so in a warning (the
logger too, once). Asking for schemas (``validation="schema"``) is refused
with a message whose every suggestion is then tried here: the
``streamwire[schema]`` extra exists and brings ``jsonschema``, and
``validation='auto'`` and ``validation='names'`` are accepted by
``sw.stream``, ``sw.ToolSet`` and ``sw.iter_events``.
"""

from __future__ import annotations

import json
import logging
import re
import sys
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

import streamwire as sw
from streamwire import tooldefs

TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "get_weather",
            "parameters": {
                "type": "object",
                "properties": {"city": {"type": "string"}},
                "required": ["city"],
            },
        },
    }
]


def _stream_with_args(arguments: dict[str, object], name: str = "get_weather") -> bytes:
    chunks = [
        {
            "choices": [
                {
                    "index": 0,
                    "delta": {
                        "tool_calls": [
                            {
                                "index": 0,
                                "id": "call_1",
                                "type": "function",
                                "function": {"name": name, "arguments": json.dumps(arguments)},
                            }
                        ]
                    },
                }
            ]
        },
        {"choices": [{"index": 0, "delta": {}, "finish_reason": "tool_calls"}]},
    ]
    return b"".join(b"data: " + json.dumps(c).encode() + b"\n\n" for c in chunks) + (
        b"data: [DONE]\n\n"
    )


@pytest.fixture
def plain_install(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    monkeypatch.setitem(sys.modules, "jsonschema", None)  # import jsonschema -> ImportError
    monkeypatch.setattr(tooldefs, "_warned_unchecked", False)
    yield


def _run(raw: bytes, **options: object) -> sw.StreamResult:
    s = sw.stream("openai-chat", tools=TOOLS, **options)  # type: ignore[call-overload]
    s.feed(raw)
    s.close()
    return s.result


def test_the_headline_example_works_on_a_plain_install(
    plain_install: None, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.WARNING, logger="streamwire")
    good = _run(_stream_with_args({"city": "Oslo"}))
    assert (good.status, good.executable) == ("completed", True)
    assert "tool_schemas_not_checked" in {w.code for w in good.warnings}
    # The schema is not checked: a wrong argument type passes, and the result says why.
    unchecked = _run(_stream_with_args({"city": 12}))
    assert unchecked.executable is True
    # Names are: an undeclared tool is refused.
    unknown = _run(_stream_with_args({"city": "Oslo"}, name="rm_rf"))
    assert unknown.executable is False
    assert "did not declare" in (unknown.tool_calls[0].invalid_reason or "")
    notes = [r for r in caplog.records if r.name == "streamwire"]
    assert len(notes) == 1 and "pip install 'streamwire[schema]'" in notes[0].getMessage()


def test_asking_for_schemas_names_the_ways_out_and_each_one_works(plain_install: None) -> None:
    with pytest.raises(sw.UsageError) as caught:
        sw.stream("openai-chat", tools=TOOLS, validation="schema")
    message = str(caught.value)
    assert "pip install 'streamwire[schema]'" in message
    assert "validation='auto'" in message and "validation='names'" in message
    # 1. the extra exists and brings jsonschema
    pyproject = (Path(__file__).resolve().parent.parent / "pyproject.toml").read_text("utf-8")
    assert re.search(r'^schema = \["jsonschema[>=<~]', pyproject, re.MULTILINE), "no schema extra"
    # 2. and 3. validation='auto' and 'names', wherever tools are given
    raw = _stream_with_args({"city": "Oslo"})
    for validation in ("auto", "names"):
        assert _run(raw, validation=validation).executable is True
        assert sw.ToolSet(TOOLS, validation=validation).names == {"get_weather"}
    names_only = _run(raw, validation="names")
    assert "tool_schemas_not_checked" not in {w.code for w in names_only.warnings}

    def serve(request: httpx.Request) -> httpx.Response:
        return httpx.Response(200, headers={"content-type": "text/event-stream"}, content=raw)

    with httpx.Client(transport=httpx.MockTransport(serve)) as client:
        with client.stream("POST", "http://upstream.test/v1/chat/completions") as response:
            with sw.iter_events(response, "openai-chat", tools=TOOLS, validation="names") as it:
                list(it)
    assert it.result.executable is True


def test_with_jsonschema_installed_auto_checks_the_schemas() -> None:
    result = _run(_stream_with_args({"city": 12}))
    assert result.executable is False
    assert "arguments do not match the schema" in (result.tool_calls[0].invalid_reason or "")
    assert "tool_schemas_not_checked" not in {w.code for w in result.warnings}
