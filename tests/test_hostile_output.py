"""Upstream strings with lone surrogates survive every output path.

``"\\ud800"`` is valid JSON, and a decoded ``str`` holding it has no UTF-8
form: every path that writes upstream strings as UTF-8 must write it as its
JSON escape (or, on a terminal, escaped) instead of raising. For every HTTP
protocol, a stream whose ids and model carry lone surrogates (and, for chat
and anthropic, its text too) is recorded, saved, saved with hashed content,
loaded and replayed; translated into every target, whose own adapter reads
the same text back; and shown by ``streamwire inspect``, with and without
``--json``.
"""

from __future__ import annotations

import io
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

import streamwire as sw
from hostile_streams import HTTP_PROTOCOLS, fixture_wire
from streamwire.io import Recording, replay, verify
from streamwire.io.record import RecordedChunk
from streamwire.io.serialize import dumps, event_dict, result_dict
from wire_units import NOT_JSON, Wire

LONE = "\ud800"
#: Identity fields, in each protocol's spelling, that get a lone surrogate appended.
IDENTITY_KEYS = frozenset({"id", "item_id", "model", "modelVersion", "responseId"})
#: The text field that gets one too, where the fixture's text allows it
#: (the others repeat their text whole at the end, which would then differ).
_TEXT_KEYS = {"openai-chat": "content", "anthropic": "text", "bedrock-converse": "text"}


def _carries(result: dict[str, Any] | sw.StreamResult) -> bool:
    """Whether the ids, the model or the text hold a lone surrogate."""
    get = result.get if isinstance(result, dict) else lambda key: getattr(result, key)
    return any(LONE in (get(key) or "") for key in ("message_id", "model", "text"))


def _marked(node: Any, text_key: str | None) -> Any:
    if isinstance(node, list):
        return [_marked(item, text_key) for item in node]
    if not isinstance(node, dict):
        return node
    out = {}
    for key, value in node.items():
        if isinstance(value, str) and (key in IDENTITY_KEYS or key == text_key) and value:
            out[key] = value + LONE
        else:
            out[key] = _marked(value, text_key)
    return out


def surrogate_wire(protocol: str) -> tuple[Wire, bool]:
    """The text fixture with lone surrogates in its ids and model (and text,
    where ``_TEXT_KEYS`` says); whether the text carries them."""
    text_key = _TEXT_KEYS.get(protocol)
    wire = fixture_wire(protocol, "text")
    for unit in wire.units:
        if unit.payload is not NOT_JSON:
            unit.payload = _marked(unit.payload, text_key)
        if unit.inner is not NOT_JSON:
            unit.inner = _marked(unit.inner, text_key)
    return wire, text_key is not None


def _stream(protocol: str, data: bytes) -> sw.StreamResult:
    stream = sw.stream(protocol)
    stream.feed(data)
    stream.close()
    return stream.result


@pytest.mark.parametrize("protocol", HTTP_PROTOCOLS)
def test_the_result_carries_the_surrogates(protocol: str) -> None:
    wire, in_text = surrogate_wire(protocol)
    result = _stream(protocol, wire.encode())
    assert result.status == "completed", result.conflicts
    assert _carries(result)
    assert (LONE in result.text) is in_text
    for event in sw.stream(protocol).feed(wire.encode()):
        json.dumps(event_dict(event))  # serializable, and as text, UTF-8:
        dumps(event_dict(event)).encode("utf-8")


@pytest.mark.parametrize("protocol", HTTP_PROTOCOLS)
def test_recordings_save_load_and_replay_them(protocol: str) -> None:
    wire, _ = surrogate_wire(protocol)
    data = wire.encode()
    draft = Recording(
        protocol=protocol, chunks=[RecordedChunk(0.0, data)], end="eof", end_t=0.0, status=200
    )
    it = replay(draft, record=True)
    list(it)
    recording = it.recording
    assert recording is not None
    for hashed in (False, True):
        buf = io.StringIO()
        recording.save(buf, hash_content=hashed)
        text = buf.getvalue()
        text.encode("utf-8")  # a file the UTF-8 codec writes
        loaded = Recording.load(io.StringIO(text))
        assert loaded.result is not None
        # Hashing content replaces the text, never the ids.
        assert _carries(loaded.result) or (hashed and protocol == "bedrock-converse")
        assert verify(loaded) == []


@pytest.mark.parametrize("target", sw.known_encoders())
@pytest.mark.parametrize("protocol", HTTP_PROTOCOLS)
def test_translation_carries_them_to_the_target(protocol: str, target: str) -> None:
    wire, in_text = surrogate_wire(protocol)
    source = _stream(protocol, wire.encode())
    out = b"".join(sw.translate(protocol, target, [wire.encode()]))
    out.decode("utf-8")  # valid UTF-8 on the wire
    back = _stream(target, out)
    assert back.status == "completed"
    assert back.text == source.text
    assert (LONE in back.text) is in_text


@pytest.mark.parametrize("protocol", ["openai-chat", "anthropic", "bedrock-converse"])
@pytest.mark.parametrize("as_json", [False, True])
def test_inspect_shows_them(tmp_path: Path, protocol: str, as_json: bool) -> None:
    wire, _ = surrogate_wire(protocol)
    path = tmp_path / "capture.bin"
    path.write_bytes(wire.encode())
    argv = [sys.executable, "-m", "streamwire.cli", "inspect", "--protocol", protocol, str(path)]
    done = subprocess.run(
        argv + (["--json"] if as_json else []),
        capture_output=True,
        check=False,
        env={"PYTHONIOENCODING": "utf-8", "PATH": ""},
    )
    assert done.returncode == 0, done.stderr.decode("utf-8", "replace")
    if as_json:
        assert _carries(json.loads(done.stdout)["result"])
    else:
        assert b"\\ud800" in done.stdout


def test_result_dicts_dump_as_utf8_text() -> None:
    wire, _ = surrogate_wire("openai-chat")
    dumps(result_dict(_stream("openai-chat", wire.encode()))).encode("utf-8")
