"""Writes the hand-made Anthropic fixtures: ``fixtures/regression/anthropic/``.

Run ``python tests/make_anthropic_fixtures.py`` from the repository root; it
rewrites every raw body and manifest it owns (deterministically: the same bytes
each time). The bodies are SSE events written by hand after Anthropic's
streaming reference, and every ``expect`` below is written from that reference
and docs/design.md, never from streamwire's output. ``tests/test_fixtures.py``
replays them.

Cases ``01``-``12b`` are the twelve regression cases every streaming gateway
must pass (``make_anthropic_twelve.py``); the others pin one adapter behaviour
each (``make_anthropic_cases.py`` and ``make_anthropic_defects.py``). The
recorded streams in ``fixtures/providers/anthropic/`` are copied by
``make_anthropic_vectors.py``.
"""

# ruff: noqa: E501 (fixture data: one-line case descriptions and payloads)

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

OUT = Path(__file__).resolve().parent.parent / "fixtures" / "regression" / "anthropic"
MODEL = "claude-sonnet-4-5-20250929"
METHOD = (
    "written by hand from the event shapes of Anthropic's streaming reference, "
    "'Streaming Messages' (platform.claude.com/docs/en/build-with-claude/streaming) and "
    "'Handling stop reasons' (platform.claude.com/docs/en/build-with-claude/handling-stop-reasons), "
    "checked 2026-11-29; written by tests/make_anthropic_fixtures.py"
)


Json = dict[str, Any]


def dumps(obj: object) -> str:
    """Compact JSON, non-ASCII as UTF-8: as the API sends it."""
    return json.dumps(obj, ensure_ascii=False, separators=(",", ":"))


class Body:
    """An SSE body under construction: each method appends events, returns self."""

    def __init__(self, msg_id: str, eol: str = "\n") -> None:
        self.msg_id = msg_id
        self.parts: list[str] = []
        self.eol = eol

    def ev(self, obj: Json | None, name: str | None = "__type__", raw: str | None = None) -> Body:
        """One event: named after its type (default), ``name``, or unnamed (None)."""
        e = self.eol
        if name == "__type__":
            assert obj is not None
            name = obj["type"]
        head = f"event: {name}{e}" if name else ""
        data = raw if raw is not None else dumps(obj)
        self.parts.append(f"{head}data: {data}{e}{e}")
        return self

    def text(self, s: str) -> Body:
        """Raw text (comments, blank lines, fields)."""
        self.parts.append(s)
        return self

    def start(self, usage: Json | None = None, **extra: Any) -> Body:
        u = usage or {
            "input_tokens": 25,
            "cache_creation_input_tokens": 0,
            "cache_read_input_tokens": 0,
            "output_tokens": 1,
        }
        msg = {
            "id": self.msg_id,
            "type": "message",
            "role": "assistant",
            "model": MODEL,
            "content": [],
            "stop_reason": None,
            "stop_sequence": None,
            "usage": u,
            **extra,
        }
        return self.ev({"type": "message_start", "message": msg})

    def bstart(self, index: int, block: Json) -> Body:
        return self.ev({"type": "content_block_start", "index": index, "content_block": block})

    def delta(self, index: int, delta: Json, name: str | None = "__type__") -> Body:
        return self.ev({"type": "content_block_delta", "index": index, "delta": delta}, name)

    def td(self, index: int, text: str) -> Body:
        return self.delta(index, {"type": "text_delta", "text": text})

    def jd(self, index: int, partial: str) -> Body:
        return self.delta(index, {"type": "input_json_delta", "partial_json": partial})

    def bstop(self, index: int) -> Body:
        return self.ev({"type": "content_block_stop", "index": index})

    def mdelta(
        self, stop_reason: str | None, usage: Json, stop_sequence: str | None = None
    ) -> Body:
        return self.ev(
            {
                "type": "message_delta",
                "delta": {"stop_reason": stop_reason, "stop_sequence": stop_sequence},
                "usage": usage,
            }
        )

    def mstop(self) -> Body:
        return self.ev({"type": "message_stop"})

    def ping(self) -> Body:
        return self.ev({"type": "ping"})

    def textblock(self, index: int, *pieces: str) -> Body:
        """A whole text block: start, one delta per piece, stop."""
        self.bstart(index, {"type": "text", "text": ""})
        for p in pieces:
            self.td(index, p)
        return self.bstop(index)

    def tool(
        self,
        index: int,
        tid: str,
        name: str,
        pieces: list[str],
        kind: str = "tool_use",
        stop: bool = True,
    ) -> Body:
        """A tool use block: start, one input_json_delta per piece, stop (unless not)."""
        self.bstart(index, {"type": kind, "id": tid, "name": name, "input": {}})
        for p in pieces:
            self.jd(index, p)
        if stop:
            self.bstop(index)
        return self

    def bytes(self) -> bytes:
        return "".join(self.parts).encode()


def usage(
    inp: int | None,
    out: int | None,
    cr: int | None = 0,
    cc: int | None = 0,
    final: bool = True,
    total: int | None = None,
) -> Json:
    """An ``expect.usage`` (and ``UsageReported.usage``) object."""
    return {
        "input_tokens": inp,
        "output_tokens": out,
        "total_tokens": total,
        "cache_read_tokens": cr,
        "cache_creation_tokens": cc,
        "reasoning_tokens": None,
        "final": final,
    }


def started(msg_id: str) -> Json:
    return {
        "event": "MessageStarted",
        "message_id": msg_id,
        "model": MODEL,
        "role": "assistant",
        "choice": 0,
    }


def completed(status: str, stop: str | None, raw: str | None) -> Json:
    return {
        "event": "MessageCompleted",
        "status": status,
        "stop_reason": stop,
        "provider_stop_reason": raw,
        "choice": 0,
    }


def T(text: str) -> Json:
    return {"event": "TextDelta", "text": text, "choice": 0}


def U(inp: int, out: int, cr: int = 0, cc: int = 0, final: bool = False) -> Json:
    return {"event": "UsageReported", "usage": usage(inp, out, cr, cc, final)}


def write(
    case: str,
    raw: bytes,
    exercises: str,
    expect: Json,
    notes: tuple[str, ...] | list[str] = (),
    options: Json | None = None,
    replay: Json | None = None,
) -> None:
    """Writes ``<case>.sse`` and its manifest ``<case>.json``."""
    (OUT / f"{case}.sse").write_bytes(raw)
    manifest: Json = {
        "format": "streamwire-fixture/1",
        "case": case,
        "raw": f"{case}.sse",
        "sha256": hashlib.sha256(raw).hexdigest(),
        "size": len(raw),
        "provider": "anthropic",
        "protocol": "anthropic",
        "origin": "synthetic",
        "provenance": {
            "written_for": "streamwire",
            "method": METHOD,
            "license": "Apache-2.0 (this project)",
        },
        "exercises": exercises,
    }
    if options:
        manifest["options"] = options
    if replay:
        manifest["replay"] = replay
    manifest["expect"] = expect
    manifest["notes"] = list(notes)
    (OUT / f"{case}.json").write_text(json.dumps(manifest, indent=2, ensure_ascii=False) + "\n")


U25 = {
    "input_tokens": 25,
    "cache_creation_input_tokens": 0,
    "cache_read_input_tokens": 0,
    "output_tokens": 1,
}


def main() -> None:
    """Writes every case."""
    from make_anthropic_cases import behaviour_cases
    from make_anthropic_defects import defect_cases
    from make_anthropic_twelve import twelve_cases

    OUT.mkdir(parents=True, exist_ok=True)
    twelve_cases()
    behaviour_cases()
    defect_cases()
    print("written", len(list(OUT.glob("*.json"))), "manifests to", OUT)


if __name__ == "__main__":
    main()
