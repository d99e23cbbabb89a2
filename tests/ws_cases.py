"""Helpers of the WebSocket fixture cases (``ws_cases_*.py``, written by ``make_ws_fixtures.py``).

The provenance of each protocol's cases (the API reference and the date it was
checked), and small builders of ``expect`` blocks. Every ``expect`` is written
from the references and docs/design.md, never from streamwire's output.
"""

from __future__ import annotations

from typing import Any

from ws_messages import Message

__all__ = ["CHECKED", "METHOD", "PROVIDER", "SESSION_CLEAN", "call", "case", "usage"]

CHECKED = "checked 2026-11-29"
METHOD = {
    "openai-responses-ws": (
        "written by hand from the OpenAI 'WebSocket Mode' guide "
        "(developers.openai.com/api/docs/guides/websocket-mode) and the API reference "
        "'Responses streaming events' (platform.openai.com/docs/api-reference/"
        f"responses-streaming), {CHECKED}"
    ),
    "openai-realtime": (
        "written by hand from the OpenAI API reference 'Realtime server events' "
        "(platform.openai.com/docs/api-reference/realtime-server-events) and the "
        f"openai-python types/realtime models of the same OpenAPI document, {CHECKED}"
    ),
    "gemini-live": (
        "written by hand from the Gemini API reference 'Live API - WebSockets API "
        "reference' (ai.google.dev/api/live) and the google-genai LiveServerMessage / "
        f"LiveServerContent types (googleapis.github.io/js-genai), {CHECKED}"
    ),
}
PROVIDER = {"openai-responses-ws": "openai", "openai-realtime": "openai", "gemini-live": "google"}


def case(
    protocol: str,
    name: str,
    messages: list[Message],
    exercises: str,
    expect: dict[str, Any],
    **extra: Any,
) -> dict[str, Any]:
    return {
        "protocol": protocol,
        "case": name,
        "messages": messages,
        "exercises": exercises,
        "expect": expect,
        **extra,
    }


def usage(inp: int, out: int, cached: int | None = 0, reasoning: int | None = 0) -> dict[str, Any]:
    return {
        "input_tokens": inp,
        "output_tokens": out,
        "total_tokens": inp + out,
        "cache_read_tokens": cached,
        "reasoning_tokens": reasoning,
        "final": True,
    }


def call(
    index: int, call_id: str, name: str, arguments: Any, raw: str, ok: bool = True, **kw: Any
) -> dict[str, Any]:
    return {
        "index": index,
        "id": call_id,
        "name": name,
        "raw_arguments": raw,
        "arguments": arguments,
        "state": "valid" if ok else "rejected",
        "executable": ok,
        "id_source": "provider",
        **kw,
    }


SESSION_CLEAN = {"errors": [], "warnings": [], "conflicts_count": 0, "unknown_events": {}}
