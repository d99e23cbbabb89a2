"""The per-response state machine of the OpenAI Realtime API.

One ``RealtimeResponse`` interprets the server events of one response (those
that carry its ``response_id``), already decoded from JSON: "Realtime server
events" (platform.openai.com/docs/api-reference/realtime-server-events,
checked 2026-11-29, and the openai-python ``types/realtime`` models), the GA
names and the older beta names alike. Statuses, tool calls and usage follow
docs/design.md; what ``response.done`` decides is
docs/protocols/openai-realtime.md. Content events (items, parts, deltas,
calls and audio) are the response's ``RealtimeItems``
(``openai_realtime_items.py``).

The response-level machine (``PHASES``)::

    waiting   --created--> streaming  (response.created)
    waiting   --content--> streaming  (content before response.created: warning)
    waiting   --done-----> closed     (response.done alone: its output is the content)
    streaming --created--> streaming  (a repeat: the id must not change)
    streaming --content--> streaming  (items, parts, deltas)
    streaming --done-----> closed     (response.done: the status is decided)
    closed    --created, content--> closed  PROTOCOL CONFLICT (after response.done)
    closed    --done-----> closed     (a repeat: warning)
    waiting, streaming --eof--> closed  (no response.done: ``incomplete``)
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType
from typing import Any, Literal

from ..accumulate import Accumulator, ChoiceState
from ..events import Event, MessageStarted, StopReason
from ..result import ReadOnlyDict, Usage
from ._base import retryable_hint
from ._values import RAW_CAP, dump, int_or_none
from ._websocket import AudioMode
from .openai_realtime_items import HANDLERS, RealtimeItems

__all__ = ["EVENTS", "PHASES", "Input", "Phase", "RealtimeResponse"]

Phase = Literal["waiting", "streaming", "closed"]
Input = Literal["created", "content", "done", "eof"]

#: ``(phase, input) -> (action, next phase)``; every pair is listed.
PHASES: Mapping[tuple[Phase, Input], tuple[str, Phase]] = {
    ("waiting", "created"): ("start", "streaming"),
    ("waiting", "content"): ("start_apply", "streaming"),
    ("waiting", "done"): ("start_end", "closed"),
    ("waiting", "eof"): ("decide", "closed"),
    ("streaming", "created"): ("repeat", "streaming"),
    ("streaming", "content"): ("apply", "streaming"),
    ("streaming", "done"): ("end", "closed"),
    ("streaming", "eof"): ("decide", "closed"),
    ("closed", "created"): ("after_end", "closed"),
    ("closed", "content"): ("after_end", "closed"),
    ("closed", "done"): ("repeat_end", "closed"),
    ("closed", "eof"): ("nothing", "closed"),
}
#: Every response-level event type and the machine input it is.
EVENTS: Mapping[str, Input] = MappingProxyType(
    {"response.created": "created", "response.done": "done", **dict.fromkeys(HANDLERS, "content")}
)
_FIELDS = frozenset(
    {
        "type",
        "event_id",
        "response_id",
        "response",
        "item_id",
        "item",
        "output_index",
        "content_index",
        "part",
        "delta",
        "text",
        "transcript",
        "arguments",
        "call_id",
        "name",
        "logprobs",
        "obfuscation",
        "previous_item_id",
    }
)
_INCOMPLETE_STOPS: Mapping[str, StopReason] = {
    "max_output_tokens": "length",
    "content_filter": "content_filter",
}


class RealtimeResponse:
    """Interprets the server events of one Realtime response."""

    def __init__(self, acc: Accumulator, *, audio: AudioMode = "count") -> None:
        self._acc = acc
        self._audio: AudioMode = audio
        self.phase: Phase = "waiting"
        choice = acc.choices.get(0)
        if choice is None:
            choice = acc.choices[0] = ChoiceState(0)
        self.choice = choice
        #: The response id, once known.
        self.response_id: str | None = None
        #: The output items (``openai_realtime_items.py``).
        self.items = RealtimeItems(acc, choice, audio)

    @property
    def terminal(self) -> bool:
        """``response.done`` arrived (or the response was decided at EOF)."""
        return self.phase == "closed"

    # --- entry points ------------------------------------------------------------------

    def on_event(self, obj: dict[str, Any], out: list[Event], raw: str | None = None) -> None:
        """Interprets one response-level event (a dict with a known ``type``)."""
        kind = obj.get("type")
        input = EVENTS.get(kind) if type(kind) is str else None
        if input is None:
            name = kind if type(kind) is str else "<untyped>"
            out.append(
                self._acc.unknown_event(name, raw if raw is not None else dump(obj, cap=RAW_CAP))
            )
            return
        if not _FIELDS.issuperset(obj):
            for key in obj:
                if key not in _FIELDS:
                    self._acc.unknown_field(key)
        self.step(input, obj, out)

    def on_eof(self, out: list[Event]) -> None:
        """No more input for this response: decides its status (idempotent)."""
        self.step("eof", {}, out)

    def step(self, input: Input, obj: dict[str, Any], out: list[Event]) -> None:
        """Takes the ``PHASES`` transition for ``input`` and performs its action."""
        action, self.phase = PHASES[self.phase, input]
        acc = self._acc
        kind = obj.get("type")
        if action in ("start", "start_apply", "start_end"):
            self._start(obj, out)
        elif action == "repeat":
            self._identity(obj)
        elif action == "after_end":
            acc.conflict(f"{kind} arrived after response.done")
        elif action == "repeat_end":
            acc.warn("done_repeated", "response.done arrived again")
        if action in ("apply", "start_apply"):
            if action == "start_apply":
                acc.warn("response_not_created", f"{kind} arrived before response.created")
            self.items.content(obj, out)
        elif action in ("end", "start_end"):
            self._end(obj, out)
            out.extend(acc.finish())
        elif action == "decide" and not acc.ended:
            out.extend(acc.finish())

    # --- lifecycle --------------------------------------------------------------------------

    def _start(self, obj: dict[str, Any], out: list[Event]) -> None:
        response = obj.get("response")
        rid = response.get("id") if type(response) is dict else obj.get("response_id")
        self.response_id = rid if type(rid) is str and rid else None
        acc = self._acc
        acc.message_id = self.response_id
        out.append(
            MessageStarted(message_id=self.response_id, model=acc.model, role=None, choice=0)
        )

    def _identity(self, obj: dict[str, Any]) -> None:
        response = obj.get("response")
        rid = response.get("id") if type(response) is dict else None
        if type(rid) is str and rid and self.response_id not in (None, rid):
            self._acc.conflict(f"the response id changed from {self.response_id!r} to {rid!r}")

    def _end(self, obj: dict[str, Any], out: list[Event]) -> None:
        acc = self._acc
        choice = self.choice
        response = obj.get("response")
        if type(response) is not dict:
            acc.warn("no_response_object", "response.done carries no response object")
            response = {}
        self._identity(obj)
        output = response.get("output")
        if self.items.empty and type(output) is list and output:
            acc.warn("output_not_streamed", "the output items arrived only in response.done")
            for item in output:
                self.items.content({"type": "response.output_item.done", "item": item}, out)
        status = response.get("status")
        details = response.get("status_details")
        if type(details) is not dict:
            details = {}
        reason = details.get("reason")
        reason = reason if type(reason) is str and reason else None
        choice.finish_reason = reason or (status if type(status) is str else None)
        choice.terminal = True
        if status in ("completed", "incomplete"):
            self.items.complete_open(out)
        if status == "completed":
            choice.stop_reason = "tool_calls" if self.items.client_calls else "stop"
        elif status == "incomplete":
            stop = _INCOMPLETE_STOPS.get(reason) if reason is not None else None
            choice.stop_reason = stop or "other"
            if stop is None:
                acc.incomplete_reason = f"response.done: incomplete, reason {reason!r}"
        elif status == "cancelled":
            choice.stop_reason = "other"
            acc.cancelled = True
        elif status == "failed":
            choice.stop_reason = "error"
            self._failed(details.get("error"), out)
        else:
            choice.stop_reason = "other"
            acc.incomplete_reason = f"response.done with status {status!r}"
            acc.warn("unknown_status", f"response.done has an unknown status {status!r}")
        usage = response.get("usage")
        if type(usage) is dict:
            out.append(acc.report_usage(_usage(usage)))

    def _failed(self, error: Any, out: list[Event]) -> None:
        if type(error) is not dict:
            error = {}
        kind = error.get("type")
        kind = kind if type(kind) is str else None
        code = error.get("code")
        if type(code) is not str and type(code) is not int:
            code = None
        message = error.get("message")
        message = message if type(message) is str else "the response failed"
        retryable = retryable_hint(kind, code)
        out.append(self._acc.fail("provider", kind, code, message, retryable=retryable, raw=error))


def _usage(raw: dict[str, Any]) -> Usage:
    details = raw.get("input_token_details")
    cached = details.get("cached_tokens") if type(details) is dict else None
    return Usage(
        input_tokens=int_or_none(raw.get("input_tokens")),
        output_tokens=int_or_none(raw.get("output_tokens")),
        total_tokens=int_or_none(raw.get("total_tokens")),
        cache_read_tokens=int_or_none(cached),
        final=True,
        raw=ReadOnlyDict(raw),
    )
