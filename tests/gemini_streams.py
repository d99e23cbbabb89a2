"""Helpers shared by the ``gemini`` adapter tests: fixtures by case, chunks, SSE bodies."""

from __future__ import annotations

import json
from typing import Any

import streamwire as sw
from fixture_replay import Fixture, manifests

GEMINI_FIXTURES = [f for f in manifests() if f.protocol == "gemini"]
RID = "testresponse"


def fixture(case: str) -> Fixture:
    return next(f for f in GEMINI_FIXTURES if f.manifest["case"] == case)


def sse(*chunks: Any) -> bytes:
    out = []
    for c in chunks:
        data = c if isinstance(c, str) else json.dumps(c)
        out.append(f"data: {data}\r\n\r\n")
    return "".join(out).encode()


def chunk(
    parts: list[Any] | None = None,
    finish: str | None = None,
    index: int | None = None,
    **extra: Any,
) -> dict[str, Any]:
    cand: dict[str, Any] = {}
    if parts is not None:
        cand["content"] = {"parts": parts, "role": "model"}
    if finish is not None:
        cand["finishReason"] = finish
    if index is not None:
        cand["index"] = index
    return {"candidates": [cand], "modelVersion": "gemini-2.5-flash", "responseId": RID, **extra}


def run(data: bytes, protocol: str = "gemini", **options: Any) -> tuple[sw.Stream, list[sw.Event]]:
    stream = sw.stream(protocol, **options)
    events = stream.feed(data)
    events += stream.close()
    return stream, events
