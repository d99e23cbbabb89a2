"""The Anthropic Messages event machine: decoded events in, unified events out.

The event flow of Anthropic's "Streaming Messages" reference and its stop
reasons ("Handling stop reasons"), both checked 2026-11-29; statuses and
usage follow docs/design.md. docs/protocols/anthropic.md has what each
event becomes. ``AnthropicMachine.on_event(obj, out)`` takes one event
already decoded to a dict, so the SSE adapter (``anthropic.py``) and
``bedrock-invoke`` share this one implementation. Events are dispatched on
their JSON ``type``; the SSE event name is only a fallback.

The message-level machine is data (``PHASES``); blocks have their own
(``anthropic_blocks.py``)::

    idle     --message_start--> open
    open     --message_delta with a stop_reason--> stopping
    open, stopping --message_stop--> stopped      (completed / truncated)
    any but stopped --error--> failed             (status error)
    idle, open, stopping, failed --eof--> closed  (incomplete unless failed)

Content before ``message_start``, or after the stop reason (like a chat
``finish_reason``, it ends the content; a block may still stop), is a
protocol conflict. Anything after ``message_stop`` (the end marker) or an
error is ignored with a warning. Usage reports are cumulative and replace
the last field by field; one is final only at ``message_stop`` after a
``message_delta`` reported usage.
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType
from typing import Any, Literal, TypeGuard

from .._json import failure, loads
from ..accumulate import Accumulator, ChoiceState
from ..errors import UsageError
from ..events import Event, MessageStarted, StopReason, UnknownEvent
from ..result import ReadOnlyDict, Usage
from ._base import retryable_hint
from ._values import RAW_CAP, dump, nonempty_str
from .anthropic_blocks import Blocks

__all__ = ["EVENT_FIELDS", "PHASES", "STOP_REASONS", "AnthropicMachine"]

Phase = Literal["idle", "open", "stopping", "stopped", "failed", "closed"]
Input = Literal[
    "message_start",
    "content_block_start",
    "content_block_delta",
    "content_block_stop",
    "message_delta",
    "stop_delta",  # a message_delta that carries a stop_reason
    "message_stop",
    "ping",
    "error",
    "unknown",
    "eof",
]
Action = Literal[
    "start",
    "block_start",
    "block_delta",
    "block_stop",
    "message_delta",
    "stop",
    "fail",
    "unknown",
    "nothing",
    "before_start",
    "repeated_start",
    "after_stop_reason",
    "after_stop",
    "after_error",
]

_CONTENT: tuple[Input, ...] = (
    "message_start",
    "content_block_start",
    "content_block_delta",
    "content_block_stop",
    "message_delta",
    "stop_delta",
    "message_stop",
)


def _table() -> dict[tuple[Phase, Input], tuple[Action, Phase]]:
    table: dict[tuple[Phase, Input], tuple[Action, Phase]] = {}
    every: tuple[Phase, ...] = ("idle", "open", "stopping", "stopped", "failed")
    for phase in every:
        table[phase, "ping"] = ("nothing", phase)
        table[phase, "unknown"] = ("unknown", phase)
        table[phase, "error"] = ("fail", "failed")
        table[phase, "eof"] = ("nothing", "closed")
    for input in _CONTENT:
        table["idle", input] = ("before_start", "idle")
        table["stopped", input] = ("after_stop", "stopped")
        table["failed", input] = ("after_error", "failed")
    table["idle", "message_start"] = ("start", "open")
    # After the end marker or an error nothing more is applied, not even counted.
    table["stopped", "error"] = ("after_stop", "stopped")
    table["stopped", "unknown"] = ("after_stop", "stopped")
    table["failed", "unknown"] = ("after_error", "failed")
    streaming: tuple[Phase, ...] = ("open", "stopping")
    for phase in streaming:
        table[phase, "message_start"] = ("repeated_start", phase)
        table[phase, "content_block_stop"] = ("block_stop", phase)
        table[phase, "message_delta"] = ("message_delta", phase)
        table[phase, "stop_delta"] = ("message_delta", "stopping")
        table[phase, "message_stop"] = ("stop", "stopped")
    table["open", "content_block_start"] = ("block_start", "open")
    table["open", "content_block_delta"] = ("block_delta", "open")
    table["stopping", "content_block_start"] = ("after_stop_reason", "stopping")
    table["stopping", "content_block_delta"] = ("after_stop_reason", "stopping")
    return table


#: The message-level machine: ``(phase, input) -> (action, next phase)``, every
#: pair of a phase before ``closed``. After ``closed`` nothing may be fed.
PHASES: Mapping[tuple[Phase, Input], tuple[Action, Phase]] = MappingProxyType(_table())

#: ``stop_reason`` -> the normalized stop reason (anything else: ``other``).
STOP_REASONS: Mapping[str, StopReason] = {
    "end_turn": "stop",
    "stop_sequence": "stop",
    "tool_use": "tool_calls",
    "max_tokens": "length",
    "model_context_window_exceeded": "length",
    "refusal": "content_filter",
    "pause_turn": "pause",
}
#: The top-level fields of each event type; others are counted as unknown fields.
EVENT_FIELDS: Mapping[str, frozenset[str]] = {
    "message_start": frozenset({"type", "message"}),
    "content_block_start": frozenset({"type", "index", "content_block"}),
    "content_block_delta": frozenset({"type", "index", "delta"}),
    "content_block_stop": frozenset({"type", "index"}),
    "message_delta": frozenset({"type", "delta", "usage", "context_management"}),
    "message_stop": frozenset({"type"}),
    "ping": frozenset({"type"}),
    "error": frozenset({"type", "error", "request_id"}),
}
#: Error types that say "try again later", beyond ``retryable_hint``'s.
_RETRYABLE = frozenset({"timeout_error"})
_USAGE_FIGURES = (
    "input_tokens",
    "output_tokens",
    "cache_creation_input_tokens",
    "cache_read_input_tokens",
)


class AnthropicMachine:
    """Anthropic Messages semantics over decoded events (shared by SSE and Bedrock).

    Usage, from an adapter that owns the stream's ``Accumulator``::

        machine = AnthropicMachine(acc)
        machine.on_event(obj, out)           # one decoded event (a dict)
        machine.on_payload(text, out)        # or its JSON text / bytes
        machine.on_eof(out)                  # the input ended: decides, finishes acc

    Unified events are appended to ``out``. Nothing raises on bad input
    except feeding after ``on_eof`` (``UsageError``).
    """

    def __init__(self, acc: Accumulator, *, extension_fields: frozenset[str] = frozenset()):
        """``acc`` is the stream's accumulator; ``extension_fields`` are top-level
        event fields a wrapping protocol adds (e.g. Bedrock's
        ``amazon-bedrock-invocationMetrics``): known, not counted as unknown."""
        self._acc = acc
        self._extension_fields = extension_fields
        #: The message-level phase (``PHASES``).
        self.phase: Phase = "idle"
        #: The content blocks.
        self.blocks = Blocks(acc)
        #: The message's choice (Anthropic streams one), once ``message_start`` came.
        self.choice: ChoiceState | None = None
        self._usage: dict[str, Any] | None = None
        self._usage_from_delta = False

    # --- input ----------------------------------------------------------------------

    def on_payload(self, data: str | bytes, out: list[Event], name: str | None = None) -> None:
        """Decodes one event's JSON text and applies it (``name``: its SSE event name)."""
        text = data if isinstance(data, str) else data.decode("utf-8", "replace")
        try:
            obj = loads(text)
        except ValueError as exc:
            self.on_not_json(text, out, name, exc)
            return
        self.on_event(obj, out, name, text)

    def on_not_json(
        self,
        data: str,
        out: list[Event],
        name: str | None = None,
        exc: ValueError | None = None,
    ) -> None:
        """A payload that is not JSON (``exc``: why the decode failed): a
        keep-alive, an error text, or a framing error."""
        self._check_open()
        acc = self._acc
        stripped = data.strip()
        if not stripped or name == "ping":
            return  # an empty payload, or a ping with a non-JSON body: keep-alives
        if stripped == "[DONE]":
            acc.warn("done_marker", "a chat-style [DONE] marker was ignored")
        elif self.phase == "stopped":
            self._misplaced("after_stop", name or "message", data)
        elif name == "error":
            self.on_event({"type": "error", "error": {"message": data}}, out, name, data)
        else:
            kind, message = failure(exc, data, "a data payload")
            out.append(acc.fail("framing", kind, None, message))

    def on_event(
        self, obj: Any, out: list[Event], name: str | None = None, raw: str | None = None
    ) -> None:
        """Applies one decoded event.

        ``obj`` is the event's JSON value; ``name`` the SSE event name, used
        only when the JSON has no ``type``; ``raw`` its text, kept for unknown
        events (dumped from ``obj`` when not given).
        """
        self._check_open()
        acc = self._acc
        if type(obj) is not dict:
            if self.phase == "stopped":
                self._misplaced(
                    "after_stop", name or "message", raw or dump(obj, cap=RAW_CAP, default=repr)
                )
            else:
                message = "an event payload is not a JSON object"
                out.append(acc.fail("framing", "invalid_payload", None, message))
            return
        kind = obj.get("type")
        if type(kind) is not str or not kind:
            kind = name if name and name != "message" else "<untyped>"
        input: Input
        fields = EVENT_FIELDS.get(kind)
        if fields is None:
            input = "unknown"
        else:
            input = kind  # type: ignore[assignment]
            if not fields.issuperset(obj):
                self._unknown_fields(kind, fields, obj)
            if kind == "message_delta":
                delta = obj.get("delta")
                if type(delta) is dict and delta.get("stop_reason") is not None:
                    input = "stop_delta"
        action, self.phase = PHASES[self.phase, input]
        if action == "block_delta":
            index = obj.get("index")
            if _index(index):
                self.blocks.on_delta(self._choice(), index, obj.get("delta"), out)
            else:
                acc.conflict(f"a content_block_delta has no valid index: {index!r:.40}")
        elif action == "block_start":
            index = obj.get("index")
            if _index(index):
                self.blocks.on_start(self._choice(), index, obj.get("content_block"), out)
            else:
                acc.conflict(f"a content_block_start has no valid index: {index!r:.40}")
        elif action == "block_stop":
            index = obj.get("index")
            if _index(index):
                self.blocks.on_stop(index, out)
            else:
                acc.conflict(f"a content_block_stop has no valid index: {index!r:.40}")
        elif action == "message_delta":
            self._on_message_delta(obj, out)
        elif action == "start":
            self._on_message_start(obj.get("message"), out)
        elif action == "stop":
            self._on_message_stop(out)
        elif action == "fail":
            self._on_error(obj, out)
        elif action == "unknown":
            out.append(self._unknown(kind, obj, raw))
        elif action != "nothing":
            self._misplaced(action, kind, raw or dump(obj, cap=RAW_CAP, default=repr))

    def on_eof(self, out: list[Event]) -> None:
        """The input ended: decides the statuses (``acc.finish()``) unless already ended."""
        if self.phase == "closed":
            return
        _, self.phase = PHASES[self.phase, "eof"]
        acc = self._acc
        if not acc.ended:
            out.extend(acc.finish())

    # --- message events -------------------------------------------------------------

    def _on_message_start(self, message: Any, out: list[Event]) -> None:
        acc = self._acc
        choice = self._choice()
        if type(message) is not dict:
            acc.conflict("message_start carries no message object")
            out.append(MessageStarted(choice=choice.index))
            return
        message_id = nonempty_str(message.get("id"))
        model = nonempty_str(message.get("model"))
        acc.message_id = acc.message_id or message_id
        acc.model = acc.model or model
        role = nonempty_str(message.get("role"))
        out.append(MessageStarted(message_id=message_id, model=model, role=role, choice=0))
        if message.get("content"):
            acc.warn("message_start_content", "message_start carried content; it was ignored")
        usage = message.get("usage")
        if usage is not None:
            self._report_usage(usage, out, from_delta=False)

    def _on_message_delta(self, obj: dict[str, Any], out: list[Event]) -> None:
        acc = self._acc
        delta = obj.get("delta")
        if delta is not None and type(delta) is not dict:
            acc.conflict("message_delta carries a delta that is not an object")
        elif delta is not None:
            reason = delta.get("stop_reason")
            if reason is not None:
                self._on_stop_reason(reason)
        usage = obj.get("usage")
        if usage is not None:
            self._report_usage(usage, out, from_delta=True)

    def _on_stop_reason(self, reason: Any) -> None:
        acc = self._acc
        choice = self._choice()
        if type(reason) is not str:
            acc.conflict(f"a stop_reason is not a string: {reason!r:.40}")
        elif choice.finish_reason is None:
            choice.finish_reason = reason
            choice.stop_reason = STOP_REASONS.get(reason, "other")
        elif reason != choice.finish_reason:
            acc.conflict(f"the stop_reason changed from {choice.finish_reason!r} to {reason!r}")

    def _on_message_stop(self, out: list[Event]) -> None:
        acc = self._acc
        choice = self._choice()
        for block in self.blocks.open_blocks():
            acc.warn(
                "block_not_stopped",
                f"content block {block.index} ({block.kind}) never stopped before message_stop",
            )
        if choice.finish_reason is None:
            acc.warn("missing_stop_reason", "message_stop arrived without a stop_reason")
        choice.terminal = True
        if self._usage is not None and self._usage_from_delta:
            out.append(acc.report_usage(_usage(self._usage, final=True)))
        out.extend(acc.finish())

    def _on_error(self, obj: dict[str, Any], out: list[Event]) -> None:
        error = obj.get("error")
        request_id = nonempty_str(obj.get("request_id"))
        if type(error) is dict:
            kind = nonempty_str(error.get("type"))
            message = error.get("message")
            message = message if type(message) is str else None
            request_id = request_id or nonempty_str(error.get("request_id"))
        else:
            kind = None
            message = error if type(error) is str else None
        retryable = retryable_hint(kind, None) or kind in _RETRYABLE
        out.append(
            self._acc.fail(
                "provider",
                kind,
                None,
                message,
                retryable=retryable,
                request_id=request_id,
                raw=error if error is not None else obj,
            )
        )

    # --- usage ----------------------------------------------------------------------

    def _report_usage(self, usage: Any, out: list[Event], *, from_delta: bool) -> None:
        acc = self._acc
        if type(usage) is not dict:
            acc.warn("usage_not_object", f"a usage report is not an object: {usage!r:.80}")
            return
        # Cumulative: every figure present replaces the last; an omitted or null
        # one keeps its earlier value (message_start's input figures).
        merged = dict(self._usage) if self._usage is not None else {}
        for key, value in usage.items():
            if value is not None:
                merged[key] = value
        self._usage = merged
        self._usage_from_delta = self._usage_from_delta or from_delta
        out.append(acc.report_usage(_usage(merged, final=False)))

    # --- the rest ---------------------------------------------------------------------

    def _choice(self) -> ChoiceState:
        choice = self.choice
        if choice is None:
            # Anthropic streams one message: choice 0 (it may exist already).
            choice = self.choice = self._acc.choices.setdefault(0, ChoiceState(0))
        return choice

    def _check_open(self) -> None:
        if self.phase == "closed":
            raise UsageError("the anthropic machine saw the end of its input; it cannot be fed")

    def _unknown(self, kind: str, obj: dict[str, Any], raw: str | None) -> UnknownEvent:
        return self._acc.unknown_event(
            kind, raw if raw is not None else dump(obj, cap=RAW_CAP, default=repr)
        )

    def _unknown_fields(self, kind: str, fields: frozenset[str], obj: dict[str, Any]) -> None:
        for key in obj:
            if key not in fields and key not in self._extension_fields:
                self._acc.unknown_field(f"{kind}.{key}")

    def _misplaced(self, action: Action, kind: str, raw: str) -> None:
        acc = self._acc
        if action == "before_start":
            acc.conflict(f"{kind} arrived before message_start")
        elif action == "repeated_start":
            acc.conflict("a second message_start arrived")
        elif action == "after_stop_reason":
            acc.conflict(f"{kind} arrived after the stop_reason; it was ignored")
        elif action == "after_stop":
            acc.warn("data_after_stop", f"an event after message_stop was ignored: {raw[:80]!r}")
        else:  # after_error
            acc.warn("data_after_error", f"an event after an error was ignored: {raw[:80]!r}")


def _usage(raw: dict[str, Any], final: bool) -> Usage:
    figures = [raw.get(key) for key in _USAGE_FIGURES]
    input_tokens, output_tokens, cache_creation, cache_read = (
        value if type(value) is int else None for value in figures
    )
    return Usage(
        input_tokens=input_tokens,
        output_tokens=output_tokens,
        total_tokens=None,
        cache_read_tokens=cache_read,
        cache_creation_tokens=cache_creation,
        reasoning_tokens=None,
        final=final,
        raw=ReadOnlyDict(raw),
    )


def _index(value: Any) -> TypeGuard[int]:
    return type(value) is int and value >= 0
