"""The per-response state machine of the OpenAI Responses streaming protocol.

One ``ResponsesMachine`` interprets the typed events of one response, already
decoded from JSON, whatever carried them: the ``openai-responses`` SSE adapter
(``openai_responses.py``) and the ``openai-responses-ws`` session, which runs
one machine per response. Events are those of "Responses streaming events"
(platform.openai.com/docs/api-reference/responses-streaming, checked
2026-11-29, and the openai-python 3.57.0 types); statuses, tool calls and
usage follow docs/design.md; what each event becomes is
docs/protocols/openai-responses.md; ``ResponsesMachine`` has the entry points.
``on_event`` dispatches on the JSON ``type`` and never raises on bad input.

The response-level machine, with its transitions as data (``PHASES``)::

    waiting   --lifecycle--> streaming   (response.created / queued / in_progress)
    waiting   --content----> streaming   (a server that skipped response.created)
    waiting   --terminal---> ended
    streaming --lifecycle--> streaming   (a changed response id: warning, the first kept)
    streaming --content----> streaming   (items, parts, deltas: openai_responses_items.py)
    streaming --terminal---> ended       (response.completed / incomplete / failed)
    ended     --lifecycle, content--> ended  PROTOCOL CONFLICT (after the terminal event)
    ended     --terminal---> ended       (the same terminal again: no-op; another: conflict)
    *         --error------> (same)      (the ``error`` event: status error)
    waiting, streaming, ended --done--> done     ([DONE]: tolerated; then ignored, warning)
    *         --eof--------> closed      (statuses decided; input after it: conflict)

Usage comes only from the terminal response, and is final there.
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType
from typing import Any, Literal

from ..accumulate import Accumulator, ChoiceState
from ..events import Event, MessageStarted, StopReason
from ..result import ReadOnlyDict, Usage
from ._base import retryable_hint
from ._values import RAW_CAP, dump, int_or_none, nonempty_str
from .openai_responses_items import PART_KINDS, Items, PartKind

__all__ = ["EVENTS", "PHASES", "Phase", "PhaseInput", "ResponsesMachine"]

Phase = Literal["waiting", "streaming", "ended", "done", "closed"]
PhaseInput = Literal["lifecycle", "content", "terminal", "error", "unknown", "done", "eof"]

_ANY_INPUT: tuple[PhaseInput, ...] = ("lifecycle", "content", "terminal", "error", "unknown")
#: The response-level machine: ``(phase, input) -> (action, next phase)``.
#: Pairs not listed (input after ``closed``) are protocol conflicts.
PHASES: Mapping[tuple[Phase, PhaseInput], tuple[str, Phase]] = {
    ("waiting", "lifecycle"): ("start", "streaming"),
    ("waiting", "content"): ("start_apply", "streaming"),
    ("waiting", "terminal"): ("start_end", "ended"),
    ("waiting", "error"): ("fail", "waiting"),
    ("waiting", "unknown"): ("count", "waiting"),
    ("waiting", "done"): ("nothing", "done"),
    ("waiting", "eof"): ("decide", "closed"),
    ("streaming", "lifecycle"): ("lifecycle", "streaming"),
    ("streaming", "content"): ("apply", "streaming"),
    ("streaming", "terminal"): ("end", "ended"),
    ("streaming", "error"): ("fail", "streaming"),
    ("streaming", "unknown"): ("count", "streaming"),
    ("streaming", "done"): ("nothing", "done"),
    ("streaming", "eof"): ("decide", "closed"),
    ("ended", "lifecycle"): ("after_end", "ended"),
    ("ended", "content"): ("after_end", "ended"),
    ("ended", "terminal"): ("repeat_end", "ended"),
    ("ended", "error"): ("fail", "ended"),
    ("ended", "unknown"): ("count", "ended"),
    ("ended", "done"): ("nothing", "done"),
    ("ended", "eof"): ("decide", "closed"),
    **{("done", i): ("after_done", "done") for i in _ANY_INPUT},
    ("done", "done"): ("nothing", "done"),
    ("done", "eof"): ("decide", "closed"),
    ("closed", "eof"): ("nothing", "closed"),  # on_eof is idempotent
}

_LIFECYCLE = ("response.created", "response.queued", "response.in_progress")
_TERMINAL = ("response.completed", "response.incomplete", "response.failed")
#: Status and progress events of items: known, nothing to take from them.
_PROGRESS = (
    "response.content_part.added",  # parts are made by their first delta
    "response.reasoning_summary_part.added",
    "response.output_text.annotation.added",
    "response.web_search_call.in_progress",
    "response.web_search_call.searching",
    "response.web_search_call.completed",
    "response.file_search_call.in_progress",
    "response.file_search_call.searching",
    "response.file_search_call.completed",
    "response.code_interpreter_call.in_progress",
    "response.code_interpreter_call.interpreting",
    "response.code_interpreter_call.completed",
    "response.code_interpreter_call_code.delta",  # the code is in the done item
    "response.code_interpreter_call_code.done",
    "response.image_generation_call.in_progress",
    "response.image_generation_call.generating",
    "response.image_generation_call.partial_image",
    "response.image_generation_call.completed",
    "response.mcp_call.in_progress",
    "response.mcp_call.completed",
    "response.mcp_call.failed",
    "response.mcp_list_tools.in_progress",
    "response.mcp_list_tools.completed",
    "response.mcp_list_tools.failed",
    "response.shell_call_command.added",
    "response.shell_call_command.delta",
    "response.shell_call_command.done",
    "response.shell_call_output_content.delta",
    "response.shell_call_output_content.done",
    "response.apply_patch_call_operation_diff.delta",  # the operation is in the done item
    "response.apply_patch_call_operation_diff.done",
    "response.compaction.compacting",
)
#: Delta events of content parts: type -> (part kind, index field).
_PART_DELTAS: Mapping[str, tuple[PartKind, str]] = {
    "response.output_text.delta": ("text", "content_index"),
    "response.refusal.delta": ("refusal", "content_index"),
    "response.reasoning_text.delta": ("reasoning", "content_index"),
    "response.reasoning_summary_text.delta": ("summary", "summary_index"),
}
#: Full copies of content parts: type -> (part kind, index field, text field).
_PART_FULLS: Mapping[str, tuple[PartKind | None, str, str]] = {
    "response.output_text.done": ("text", "content_index", "text"),
    "response.refusal.done": ("refusal", "content_index", "refusal"),
    "response.reasoning_text.done": ("reasoning", "content_index", "text"),
    "response.reasoning_summary_text.done": ("summary", "summary_index", "text"),
    "response.content_part.done": (None, "content_index", "part"),
    "response.reasoning_summary_part.done": ("summary", "summary_index", "part"),
}
#: Argument streams of call items: delta type -> (item type, done type, full field).
_ARGUMENTS: Mapping[str, tuple[str, str, str]] = {
    "response.function_call_arguments.delta": (
        "function_call",
        "response.function_call_arguments.done",
        "arguments",
    ),
    "response.custom_tool_call_input.delta": (
        "custom_tool_call",
        "response.custom_tool_call_input.done",
        "input",
    ),
    "response.mcp_call_arguments.delta": (
        "mcp_call",
        "response.mcp_call_arguments.done",
        "arguments",
    ),
}


def _events() -> dict[str, PhaseInput]:
    table: dict[str, PhaseInput] = {t: "lifecycle" for t in _LIFECYCLE}
    table.update({t: "terminal" for t in _TERMINAL})
    content = (
        "response.output_item.added",
        "response.output_item.done",
        *_PROGRESS,
        *_PART_DELTAS,
        *_PART_FULLS,
        *_ARGUMENTS,
        *(done for _, done, _ in _ARGUMENTS.values()),
    )
    table.update({t: "content" for t in content})
    table["error"] = "error"
    return table


#: Every known event type and the phase input it is.
EVENTS: Mapping[str, PhaseInput] = MappingProxyType(_events())
#: Top-level fields of the known events (openai-python 3.57.0's event models).
_EVENT_FIELDS = frozenset(
    {
        "type",
        "sequence_number",
        "obfuscation",
        "response",
        "item",
        "item_id",
        "output_index",
        "content_index",
        "summary_index",
        "annotation_index",
        "part",
        "delta",
        "text",
        "refusal",
        "arguments",
        "input",
        "logprobs",
        "annotation",
        "code",
        "message",
        "param",
        "error",
        "status",
        "command",
        "command_index",
        "diff",
        "output",
        "partial_image_b64",
        "partial_image_index",
        "background",
        "output_format",
        "quality",
        "size",
        "name",
    }
)
_INCOMPLETE_STOPS: Mapping[str, StopReason] = {
    "max_output_tokens": "length",
    "content_filter": "content_filter",
}


class ResponsesMachine:
    """Interprets the typed events of one OpenAI Responses response.

    The whole interface a transport needs::

        machine = ResponsesMachine(acc)            # acc: the response's Accumulator
        machine.on_event(obj, out, raw=None)       # one decoded event (a dict)
        machine.on_done_marker(out)                # a ``data: [DONE]`` (compatible servers)
        machine.on_eof(out)                        # no more input for this response: decide
        machine.terminal                           # a terminal event arrived

    Whatever ``on_event`` cannot use becomes a warning, an unknown event, a
    protocol conflict or an error in the accumulator. ``raw`` is the event's
    text, kept verbatim in ``UnknownEvent.raw`` (else the dict is
    re-serialized).
    """

    def __init__(self, acc: Accumulator) -> None:
        """``acc`` receives everything (one accumulator per response); its
        ``max_content_blocks`` caps output items plus content parts."""
        self._acc = acc
        self.phase: Phase = "waiting"
        choice = acc.choices.get(0)
        if choice is None:
            choice = acc.choices[0] = ChoiceState(0)
        #: The response's one choice (Responses has no ``n``).
        self.choice = choice
        #: The output items, their parts and calls.
        self.items = Items(acc, choice)
        #: The last ``sequence_number`` seen, if any.
        self.sequence: int | None = None
        self._terminal_type: str | None = None
        self._response_id: str | None = None
        self._id_rotated = False
        self._started = False

    @property
    def terminal(self) -> bool:
        """A terminal event (``response.completed`` / ``incomplete`` / ``failed``) arrived."""
        return self._terminal_type is not None

    # --- entry points ------------------------------------------------------------

    def on_event(self, obj: dict[str, Any], out: list[Event], raw: str | None = None) -> None:
        """Interprets one decoded event, appending the unified events it makes to ``out``."""
        kind = obj.get("type")
        if type(kind) is not str:
            if "error" in obj:
                kind = "error"  # a chat-style {"error": {...}} from a compatible server
            else:
                kind = "<untyped>"
        seq = obj.get("sequence_number")
        if type(seq) is int:
            last = self.sequence
            if last is not None and seq != last + 1:
                self._sequence_warning(seq, last)
            self.sequence = seq
        if not _EVENT_FIELDS.issuperset(obj):
            for key in obj:
                if key not in _EVENT_FIELDS:
                    self._acc.unknown_field(key)
        self._step(EVENTS.get(kind, "unknown"), obj, kind, raw, out)

    def on_done_marker(self, out: list[Event]) -> None:
        """A ``data: [DONE]`` (compatible servers); OpenAI itself sends none."""
        transition = PHASES.get((self.phase, "done"))
        if transition is None:
            self._acc.conflict("[DONE] arrived after the response was closed")
        else:
            self.phase = transition[1]

    def on_eof(self, out: list[Event]) -> None:
        """No more input for this response: decides every status (idempotent)."""
        action, self.phase = PHASES[self.phase, "eof"]
        acc = self._acc
        if action == "decide" and not acc.ended:
            out.extend(acc.finish())

    # --- the phase machine ---------------------------------------------------------

    def _step(
        self, input: PhaseInput, obj: dict[str, Any], kind: str, raw: str | None, out: list[Event]
    ) -> None:
        transition = PHASES.get((self.phase, input))
        if transition is None:
            self._acc.conflict(f"{kind} arrived after the response was closed")
            return
        action, self.phase = transition
        if action == "apply":
            self._content(obj, kind, raw, out)
        elif action == "count":
            out.append(
                self._acc.unknown_event(kind, raw if raw is not None else dump(obj, cap=RAW_CAP))
            )
        elif action == "fail":
            self._on_error(obj, out)
        elif action == "start" or action == "lifecycle":
            self._lifecycle(obj, out)
        elif action == "start_apply":
            self._start(None, out)
            self._content(obj, kind, raw, out)
        elif action == "start_end" or action == "end":
            self._lifecycle(obj, out)
            self._end(obj, kind, out)
        elif action == "after_end":
            self._acc.conflict(f"{kind} arrived after {self._terminal_type}; it was ignored")
        elif action == "repeat_end":
            if kind != self._terminal_type:
                self._acc.conflict(f"{kind} arrived after {self._terminal_type}")
        elif action == "after_done":
            self._acc.warn("data_after_done", f"an event after [DONE] was ignored: {kind}")

    def _sequence_warning(self, seq: int, last: int) -> None:
        if seq > last:
            self._acc.warn(
                "sequence_gap", f"sequence_number jumped from {last} to {seq}: events were lost"
            )
        else:
            self._acc.warn("sequence_regression", f"sequence_number went back from {last} to {seq}")

    # --- lifecycle and endings -------------------------------------------------------

    def _start(self, response: dict[str, Any] | None, out: list[Event]) -> None:
        if self._started:
            return
        self._started = True
        acc = self._acc
        message_id = model = None
        if response is not None:
            message_id = nonempty_str(response.get("id"))
            model = nonempty_str(response.get("model"))
        self._response_id = message_id
        acc.message_id = message_id
        acc.model = model
        out.append(MessageStarted(message_id=message_id, model=model, role=None, choice=0))

    def _lifecycle(self, obj: dict[str, Any], out: list[Event]) -> None:
        response = obj.get("response")
        if type(response) is not dict:
            if obj.get("type") in _LIFECYCLE or obj.get("type") in _TERMINAL:
                self._acc.warn(
                    "no_response_object", f"{obj.get('type')} carries no response object"
                )
            self._start(None, out)
            return
        self._start(response, out)
        response_id = nonempty_str(response.get("id"))
        if response_id is not None:
            if self._response_id is None:
                self._response_id = response_id
            elif response_id != self._response_id and not self._id_rotated:
                # One body is one response whatever its ids say: a server whose
                # ids rotate (see openai_responses_items.py) renames it on every
                # lifecycle event. The first id is kept; a second response in
                # the body shows as events after the terminal one.
                self._id_rotated = True
                self._acc.warn(
                    "response_id_rotated",
                    f"the response id changed from {self._response_id!r} to {response_id!r}; "
                    "the first is kept",
                )

    def _end(self, obj: dict[str, Any], kind: str, out: list[Event]) -> None:
        self._terminal_type = kind
        acc = self._acc
        choice = self.choice
        response = obj.get("response")
        if type(response) is not dict:
            response = {}
        items = self.items
        if not items.items:
            self._replay_output(response.get("output"), out)
        details = response.get("incomplete_details")
        reason = details.get("reason") if type(details) is dict else None
        status = response.get("status")
        if kind == "response.completed" and status in ("incomplete", "failed"):
            # What the response says wins over the event's name: a bridge that
            # completes a cut answer with status "incomplete" cut it all the same.
            acc.warn(
                "terminal_status_mismatch",
                f"response.completed carries status {status!r}: ended by its status",
            )
            kind = f"response.{status}"
            self._terminal_type = kind
        raw_stop = reason if type(reason) is str else status if type(status) is str else None
        if raw_stop is None:
            raw_stop = kind.removeprefix("response.")
        choice.finish_reason = raw_stop
        choice.terminal = True
        if kind == "response.failed":
            choice.stop_reason = "error"
            self._on_failed(response, out)
        else:
            items.calls.complete_open(out)
            if kind == "response.completed":
                if items.calls.client_calls:
                    choice.stop_reason = "tool_calls"
                elif choice.refusal:
                    choice.stop_reason = "content_filter"  # docs/design.md: refusals are filtered
                else:
                    choice.stop_reason = "stop"
            else:
                stop = _INCOMPLETE_STOPS.get(reason) if type(reason) is str else None
                choice.stop_reason = stop or "other"
                if stop is None:
                    acc.incomplete_reason = f"response.incomplete, reason {reason!r}"
        usage = response.get("usage")
        if type(usage) is dict:
            out.append(acc.report_usage(_usage(usage)))

    def _replay_output(self, output: Any, out: list[Event]) -> None:
        """A terminal response whose items never streamed: its output is the content."""
        if type(output) is not list or not output:
            return
        self._acc.warn(
            "output_not_streamed", "the output items arrived only in the terminal response"
        )
        items = self.items
        for index, item in enumerate(output):
            event = {"output_index": index, "item": item}
            items.added(event, None, out)
            items.done(event, None, out)

    def _on_failed(self, response: dict[str, Any], out: list[Event]) -> None:
        acc = self._acc
        error = response.get("error")
        if acc.error is not None and acc.error.phase == "provider":
            return  # the error event before it already said why
        if type(error) is dict:
            self._fail(error, out)
        else:
            out.append(
                acc.fail("provider", None, None, "the response failed", retryable=False, raw=error)
            )

    def _on_error(self, obj: dict[str, Any], out: list[Event]) -> None:
        nested = obj.get("error")
        if type(nested) is dict:
            self._fail(nested, out)
        elif type(nested) is str:
            self._fail({"message": nested}, out)
        else:
            # The flat form: {"type": "error", "code", "message", "param"}; its
            # "type" names the event, not the error.
            self._fail({k: v for k, v in obj.items() if k != "type"}, out)

    def _fail(self, error: dict[str, Any], out: list[Event]) -> None:
        kind = nonempty_str(error.get("type"))
        code = error.get("code")
        if type(code) is not str and type(code) is not int:
            code = None
        message = error.get("message")
        if type(message) is not str:
            message = None if message is None else repr(message)
        status = error.get("status", error.get("status_code"))
        out.append(
            self._acc.fail(
                "provider",
                kind,
                code,
                message,
                retryable=retryable_hint(kind, code, status),
                request_id=nonempty_str(error.get("request_id")),
                raw=error,
            )
        )

    # --- content -----------------------------------------------------------------------

    def _content(self, obj: dict[str, Any], kind: str, raw: str | None, out: list[Event]) -> None:
        items = self.items
        part_delta = _PART_DELTAS.get(kind)
        if part_delta is not None:
            part_kind, index_field = part_delta
            delta = obj.get("delta")
            if type(delta) is not str:
                self._acc.conflict(f"{kind}: the delta is not a string")
                return
            part = items.part(obj, part_kind, obj.get(index_field, 0), kind, "delta", out)
            if part is not None and delta:
                items.append(part, delta, out)
            return
        arguments = _ARGUMENTS.get(kind)
        if arguments is not None:
            items.call_arguments(obj, arguments[0], kind, out)
            return
        if kind == "response.output_item.added":
            items.added(obj, raw, out)
        elif kind == "response.output_item.done":
            items.done(obj, raw, out)
        elif kind in _PART_FULLS:
            self._part_full(obj, kind, raw, out)
        else:
            for item_type, done, field in _ARGUMENTS.values():
                if kind == done:
                    items.call_arguments_full(obj, item_type, field, kind, out)
                    return
            # _PROGRESS: known, nothing to take.

    def _part_full(self, obj: dict[str, Any], kind: str, raw: str | None, out: list[Event]) -> None:
        part_kind, index_field, field = _PART_FULLS[kind]
        full = obj.get(field)
        if field == "part":
            if type(full) is not dict:
                self._acc.conflict(f"{kind} has no part object")
                return
            part_type = full.get("type")
            found = PART_KINDS.get(part_type) if type(part_type) is str else None
            if found is None:
                name = f"part:{full.get('type')}"
                out.append(
                    self._acc.unknown_event(
                        name, raw if raw is not None else dump(obj, cap=RAW_CAP)
                    )
                )
                return
            if part_kind is not None and found != part_kind:
                self._acc.conflict(f"{kind} carries a {found} part")
                return
            part_kind = found
            full = full.get("refusal" if found == "refusal" else "text")
        assert part_kind is not None
        items = self.items
        part = items.part(obj, part_kind, obj.get(index_field, 0), kind, "full", out)
        if part is not None:
            items.settle(part, full, kind, out)


def _usage(raw: dict[str, Any]) -> Usage:
    input_details = raw.get("input_tokens_details")
    output_details = raw.get("output_tokens_details")
    cache_read = cache_write = reasoning = None
    if type(input_details) is dict:
        cache_read = int_or_none(input_details.get("cached_tokens"))
        cache_write = int_or_none(input_details.get("cache_write_tokens"))
    if type(output_details) is dict:
        reasoning = int_or_none(output_details.get("reasoning_tokens"))
    return Usage(
        input_tokens=int_or_none(raw.get("input_tokens")),
        output_tokens=int_or_none(raw.get("output_tokens")),
        total_tokens=int_or_none(raw.get("total_tokens")),
        cache_read_tokens=cache_read,
        cache_creation_tokens=cache_write,
        reasoning_tokens=reasoning,
        final=True,
        raw=ReadOnlyDict(raw),
    )
