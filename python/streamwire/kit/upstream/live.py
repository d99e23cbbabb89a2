"""The mock's Gemini Live answers: a case's Gemini stream, as Live server messages.

A Live model turn carries the facts a streamed ``streamGenerateContent``
answer does (its text, reasoning, calls, end and usage) in
``BidiGenerateContentServerMessage`` objects of its own ("Live API -
WebSockets API reference", ai.google.dev/api/live, checked 2026-12-08;
streamwire's ``gemini-live`` adapter reads them: docs/protocols/gemini-live.md).
The mock renders each case once, as the Gemini chunks it streams over HTTP
(``wire.render_stream``), and ``live_writes`` turns each write's chunks into
Live messages, so that a Live cell is timed write by write as a Gemini one is:

===================================== ==========================================
Gemini chunk                          Live message(s)
===================================== ==========================================
``candidates[0].content.parts``       ``serverContent.modelTurn.parts`` (text,
(text, thought, signature parts)      thought and signature parts as they are)
``functionCall`` parts                none at once: the turn's calls go out
                                      together, in one ``toolCall`` (each with
                                      an ``id``, its ``args`` whole), at the end
``finishReason`` (no calls)           ``serverContent.generationComplete``, then
                                      ``serverContent.turnComplete`` with the
                                      final ``usageMetadata``
``finishReason`` (calls made)         the ``toolCall``, with the final
                                      ``usageMetadata``: the model then waits for
                                      the ``toolResponse`` and sends no
                                      ``turnComplete``
an earlier ``usageMetadata``          none: Live reports a turn's usage once
``error``                             none: the socket closes, code 1011 and the
                                      error's message as the reason
a field no chunk has (``unknown``)    the same field beside the ``serverContent``
keep-alive comments                   none (a WebSocket has its own pings)
===================================== ==========================================

Usage is Live's: ``responseTokenCount`` is Gemini's ``candidatesTokenCount``
(thoughts counted apart in ``thoughtsTokenCount``), ``promptTokenCount``
counts the cached tokens (``cachedContentTokenCount``), as Gemini's does.
Live has no ``turnCompleteReason`` for the output limit (``MAX_TOKENS``):
a truncated answer has no Live form (``names.WS_LOSSES``). Nothing here does
I/O: ``ws_live.py`` sends the messages.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from ..vocab.delivery import Write
from .realtime import sse_payloads

__all__ = ["ERROR_CLOSE", "LiveWrite", "live_usage_of", "live_writes", "reason_of"]

#: The close code of an in-stream error (RFC 6455 "internal error"; the
#: code Live closes with when the model fails mid-turn).
ERROR_CLOSE = 1011
#: The longest close reason a frame holds (RFC 6455: 123 bytes of UTF-8).
MAX_REASON = 123
#: The usage fields Live reports, by Gemini's name.
_USAGE = {
    "promptTokenCount": "promptTokenCount",
    "candidatesTokenCount": "responseTokenCount",
    "thoughtsTokenCount": "thoughtsTokenCount",
    "cachedContentTokenCount": "cachedContentTokenCount",
    "totalTokenCount": "totalTokenCount",
}
#: Gemini chunk fields that are no Live field: not carried, not unknown.
_DROPPED = frozenset({"candidates", "usageMetadata", "modelVersion", "responseId", "error"})


@dataclass(frozen=True)
class LiveWrite:
    """One write of a Live turn: its timing, messages, and the content they carry."""

    write: Write
    messages: tuple[dict[str, Any], ...]
    content: tuple[tuple[str, int], ...]
    #: The socket closes after the messages (an in-stream error): (code, reason).
    close: tuple[int, str] | None = None


def live_usage_of(usage: Any) -> dict[str, Any] | None:
    """A Gemini ``usageMetadata`` with Live's field names (None: not an object)."""
    if not isinstance(usage, dict):
        return None
    return {live: usage[name] for name, live in _USAGE.items() if name in usage}


def reason_of(message: str) -> str:
    """``message`` cut to what a close frame's reason holds."""
    data = message.encode()[:MAX_REASON]
    return data.decode("utf-8", "ignore")


def live_writes(
    writes: Sequence[Write], call_ids: Sequence[str]
) -> tuple[list[LiveWrite], list[dict[str, Any]]]:
    """The Live form of one turn's ``writes`` (the module docstring's table),
    and the model's turn as the session's history keeps it (its parts, the
    calls with the ids of ``call_ids``, in order; a call past them gets
    ``call_sw<n>``)."""
    calls: list[dict[str, Any]] = []
    history: list[dict[str, Any]] = []
    pending: dict[str, int] = {}  # the calls' content, sent with the toolCall
    usage: dict[str, Any] | None = None
    out: list[LiveWrite] = []
    for write in writes:
        messages: list[dict[str, Any]] = []
        close: tuple[int, str] | None = None
        content = dict(write.content)
        for key in [k for k in content if k.startswith("arguments:")]:
            pending[key] = pending.get(key, 0) + content.pop(key)
        for chunk in map(_parsed, sse_payloads(write.data)):
            if chunk is None:
                continue
            error = chunk.get("error")
            if isinstance(error, dict):
                message = error.get("message")
                close = (ERROR_CLOSE, reason_of(message if isinstance(message, str) else ""))
                continue
            usage = live_usage_of(chunk.get("usageMetadata")) or usage
            candidate = _candidate(chunk) or {}
            parts = candidate.get("content", {}).get("parts")
            parts = parts if isinstance(parts, list) else []
            kept = [p for p in parts if isinstance(p, dict) and "functionCall" not in p]
            for call in (p["functionCall"] for p in parts if _is_call(p)):
                n = len(calls)
                args = call.get("args")
                calls.append(
                    {
                        "id": call_ids[n] if n < len(call_ids) else f"call_sw{n}",
                        "name": call.get("name"),
                        "args": args if isinstance(args, dict) else {},
                    }
                )
            extra = {k: v for k, v in chunk.items() if k not in _DROPPED}
            if kept or extra:
                history += [p for p in kept if "text" in p and not p.get("thought")]
                messages.append({"serverContent": {"modelTurn": {"parts": kept}}, **extra})
            if candidate.get("finishReason"):
                messages += _end(calls, usage)
                content.update(pending)
                pending.clear()
        out.append(LiveWrite(write, tuple(messages), tuple(content.items()), close))
        if close is not None:
            break
    history += [{"functionCall": c} for c in calls]
    return out, history


def _end(calls: list[dict[str, Any]], usage: dict[str, Any] | None) -> list[dict[str, Any]]:
    """The messages that end the turn."""
    metadata = {"usageMetadata": usage} if usage else {}
    if calls:
        return [{"toolCall": {"functionCalls": list(calls)}, **metadata}]
    return [
        {"serverContent": {"generationComplete": True}},
        {"serverContent": {"turnComplete": True}, **metadata},
    ]


def _parsed(payload: str) -> dict[str, Any] | None:
    try:
        chunk = json.loads(payload)
    except ValueError:
        return None
    return chunk if isinstance(chunk, dict) else None


def _candidate(chunk: dict[str, Any]) -> dict[str, Any] | None:
    candidates = chunk.get("candidates")
    if isinstance(candidates, list) and candidates and isinstance(candidates[0], dict):
        candidate: dict[str, Any] = candidates[0]
        if not isinstance(candidate.get("content"), dict):
            candidate = {**candidate, "content": {}}
        return candidate
    return None


def _is_call(part: Any) -> bool:
    return isinstance(part, dict) and isinstance(part.get("functionCall"), dict)
