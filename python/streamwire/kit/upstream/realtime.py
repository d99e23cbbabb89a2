"""The mock's OpenAI Realtime answers: a case's Responses events, as Realtime server events.

A Realtime response carries the facts a streamed Responses answer does
(its text, calls, stop and usage) in events of its own ("Realtime server
events", platform.openai.com/docs/api-reference/realtime-server-events,
GA names, checked 2026-12-08; streamwire's ``openai-realtime`` adapter reads
them: docs/protocols/openai-realtime.md). The mock renders each case once,
as the Responses events it streams over HTTP (``wire.render_stream``), and
``RealtimeWriter`` turns each of those events into its Realtime form, so a
Realtime cell is timed write by write as a Responses one is:

================================== =============================================
Responses event                    Realtime event(s)
================================== =============================================
``response.created``               ``response.created`` (``realtime.response``)
``response.in_progress``           none
``response.output_item.added``     the same, a ``realtime.item``
``response.content_part.added``    the same (an ``output_audio`` part with audio)
``response.output_text.delta``     the same; with audio, an
                                   ``response.output_audio.delta`` (base64) and
                                   a ``response.output_audio_transcript.delta``
``response.output_text.done``      the same (audio: ``output_audio.done`` and
                                   ``output_audio_transcript.done``)
``response.function_call_arguments.delta``/``.done``
                                   the same, with the call's ``call_id``
``response.content_part.done``,    the same
``response.output_item.done``
``error``                          none: its type and code go in the
                                   ``response.done`` that follows
``response.completed``             ``response.done``, status ``completed``
``response.incomplete``            ``response.done``, status ``incomplete``
                                   (``status_details.reason``)
``response.failed``                ``response.done``, status ``failed``
                                   (``status_details.error``)
reasoning items and their events   none: Realtime has no reasoning
any other ``response.*`` event     the same, with the ``response_id`` (the
                                   ``unknown-event`` case's future event)
================================== =============================================

Every event carries an ``event_id`` and (but ``response.created`` and
``response.done``, whose ``response`` has its id) the ``response_id``.
Usage is Realtime's: ``input_tokens`` counts the cached ones
(``input_token_details.cached_tokens``), and there is no reasoning count.
``cancelled`` is the ``response.done`` of a response the client cancelled
(``response.cancel``). Nothing here does I/O: ``ws.py`` sends the events.
"""

from __future__ import annotations

import base64
import itertools
import json
from collections.abc import Iterator
from typing import Any

__all__ = ["AUDIO_BYTES", "RealtimeWriter", "sse_payloads"]

#: The audio bytes each transcript delta comes with (10 ms of 24 kHz 16-bit
#: PCM silence): an answer's audio is counted, never listened to.
AUDIO_BYTES = 480
_AUDIO = base64.b64encode(bytes(AUDIO_BYTES)).decode()
#: Responses events the Realtime API has no form of.
_DROPPED = frozenset({"response.in_progress", "response.queued"})


def sse_payloads(data: bytes) -> list[str]:
    """The ``data:`` payloads of the SSE events in ``data`` (one write's)."""
    out = []
    for block in data.replace(b"\r\n", b"\n").split(b"\n\n"):
        lines = [line[5:].lstrip(b" ") for line in block.split(b"\n") if line.startswith(b"data:")]
        if lines:
            out.append(b"\n".join(lines).decode("utf-8", "replace"))
    return out


class RealtimeWriter:
    """Turns one response's Responses events into Realtime server events
    (the module docstring's table). ``audio``: the response's text is
    spoken (an audio part, its transcript the text)."""

    def __init__(
        self, *, audio: bool = False, ids: Iterator[int] | None = None, conversation: str = ""
    ) -> None:
        self.audio = audio
        self.conversation = conversation
        self.response_id = ""
        #: Function call items of the response, as the conversation keeps
        #: them: ``{"type": "function_call", "call_id", "name", "arguments"}``.
        self.calls: list[dict[str, Any]] = []
        #: The response ended (its ``response.done`` was written).
        self.done = False
        self._ids = ids if ids is not None else itertools.count(1)
        self._call_ids: dict[str, str] = {}
        self._dropped: set[str] = set()
        self._output: list[dict[str, Any]] = []
        self._error: dict[str, Any] | None = None

    def events(self, payload: str) -> list[dict[str, Any]]:
        """The Realtime events for one Responses event (its JSON text)."""
        try:
            event = json.loads(payload)
        except ValueError:
            return []
        if not isinstance(event, dict) or self.done:
            return []
        kind = str(event.get("type") or "")
        if kind in _DROPPED or "reasoning" in kind:
            return []
        if kind == "error":
            given = event.get("error")
            error: dict[str, Any] = given if isinstance(given, dict) else event
            self._error = {"type": error.get("type"), "code": error.get("code")}
            return []
        response = event.get("response")
        if kind == "response.created" and isinstance(response, dict):
            self.response_id = str(response.get("id") or "")
            return [self._event(kind, response=self._response("in_progress", None, None))]
        if kind in ("response.completed", "response.incomplete", "response.failed"):
            return [self._done(kind, response if isinstance(response, dict) else {})]
        if kind.startswith("response.output_item."):
            return self._item_event(kind, event)
        if event.get("item_id") in self._dropped:
            return []
        fields = {k: v for k, v in event.items() if k not in ("type", "sequence_number")}
        fields.pop("logprobs", None)
        if kind.startswith("response.function_call_arguments."):
            fields["call_id"] = self._call_ids.get(str(event.get("item_id")), "")
        if kind in ("response.content_part.added", "response.content_part.done"):
            fields["part"] = self._part(fields.get("part"))
        if self.audio and kind == "response.output_text.delta":
            return [
                self._event("response.output_audio.delta", **{**fields, "delta": _AUDIO}),
                self._event("response.output_audio_transcript.delta", **fields),
            ]
        if self.audio and kind == "response.output_text.done":
            text = fields.pop("text", "")
            return [
                self._event("response.output_audio.done", **fields),
                self._event("response.output_audio_transcript.done", **fields, transcript=text),
            ]
        return [self._event(kind, **fields)]

    def cancelled(self) -> dict[str, Any]:
        """The ``response.done`` of a response the client cancelled."""
        self.done = True
        details = {"type": "cancelled", "reason": "client_cancelled"}
        return self._event("response.done", response=self._response("cancelled", details, None))

    # --- the parts of an event ----------------------------------------------------------

    def _event(self, kind: str, **fields: Any) -> dict[str, Any]:
        head: dict[str, Any] = {"type": kind, "event_id": f"event_sw{next(self._ids)}"}
        if "response" not in fields:
            head["response_id"] = self.response_id
        return {**head, **fields}

    def _response(
        self, status: str, details: dict[str, Any] | None, usage: dict[str, Any] | None
    ) -> dict[str, Any]:
        return {
            "object": "realtime.response",
            "id": self.response_id,
            "status": status,
            "status_details": details,
            "output": list(self._output),
            "conversation_id": self.conversation or None,
            "output_modalities": ["audio"] if self.audio else ["text"],
            "usage": usage,
        }

    def _item_event(self, kind: str, event: dict[str, Any]) -> list[dict[str, Any]]:
        item = event.get("item")
        if not isinstance(item, dict):
            return []
        item_id = str(item.get("id") or "")
        if item.get("type") not in ("message", "function_call"):
            self._dropped.add(item_id)
            return []
        out = self._item(item)
        if item.get("type") == "function_call":
            self._call_ids[item_id] = str(item.get("call_id") or "")
            if kind.endswith(".done"):
                self.calls.append(
                    {
                        "type": "function_call",
                        "call_id": out["call_id"],
                        "name": out["name"],
                        "arguments": out["arguments"],
                    }
                )
        if kind.endswith(".done"):
            self._output.append(out)
        index = event.get("output_index")
        return [self._event(kind, output_index=index, item=out)]

    def _item(self, item: dict[str, Any]) -> dict[str, Any]:
        out: dict[str, Any] = {
            "id": item.get("id"),
            "object": "realtime.item",
            "type": item.get("type"),
            "status": item.get("status"),
        }
        if item.get("type") == "function_call":
            out.update(
                call_id=item.get("call_id"),
                name=item.get("name"),
                arguments=item.get("arguments") or "",
            )
            return out
        content = item.get("content")
        parts = content if isinstance(content, list) else []
        out.update(role="assistant", content=[self._part(p) for p in parts])
        return out

    def _part(self, part: Any) -> dict[str, Any]:
        text = part.get("text", "") if isinstance(part, dict) else ""
        if self.audio:
            return {"type": "output_audio", "transcript": text}
        return {"type": "output_text", "text": text}

    def _done(self, kind: str, response: dict[str, Any]) -> dict[str, Any]:
        self.done = True
        status, details = "completed", None
        if kind == "response.incomplete":
            why = response.get("incomplete_details")
            reason = why.get("reason") if isinstance(why, dict) else None
            status, details = "incomplete", {"type": "incomplete", "reason": reason}
        elif kind == "response.failed":
            error = self._error
            if error is None:
                given = response.get("error")
                error = {"type": None, "code": given.get("code")} if isinstance(given, dict) else {}
            status, details = "failed", {"type": "failed", "error": error}
        usage = _usage(response.get("usage"), audio=self.audio)
        return self._event("response.done", response=self._response(status, details, usage))


def _usage(usage: Any, *, audio: bool) -> dict[str, Any] | None:
    """A Responses usage object in the Realtime shape (no reasoning count;
    the output tokens are audio ones when the answer is spoken)."""
    if not isinstance(usage, dict):
        return None
    given = usage.get("input_tokens_details")
    cached = given.get("cached_tokens", 0) if isinstance(given, dict) else 0
    i, o = usage.get("input_tokens", 0), usage.get("output_tokens", 0)
    return {
        "total_tokens": usage.get("total_tokens", 0),
        "input_tokens": i,
        "output_tokens": o,
        "input_token_details": {"text_tokens": i, "audio_tokens": 0, "cached_tokens": cached},
        "output_token_details": {
            "text_tokens": 0 if audio else o,
            "audio_tokens": o if audio else 0,
        },
    }
