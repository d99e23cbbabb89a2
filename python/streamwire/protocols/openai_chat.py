"""The ``openai-chat`` adapter: OpenAI Chat Completions streaming, and compatible servers.

The chunk stream of ``POST /v1/chat/completions`` with ``stream: true`` as
the OpenAI API reference describes it ("The chat completion chunk object",
platform.openai.com/docs/api-reference/chat-streaming, checked 2026-11-29):
SSE events whose data is one ``chat.completion.chunk`` JSON object, ended by
``data: [DONE]``; also the variations of compatible servers. What each
field becomes, and the servers' edge cases, are docs/protocols/openai-chat.md
(typed content parts: ``openai_chat_parts.py``; server-run tools:
``openai_chat_calls.py``).

The stream is a small state machine with its transitions as data
(``PHASES``)::

    streaming --chunk--> streaming       (deltas, finish_reasons, usage, errors)
    streaming --[DONE]-> done            (statuses decided)
    streaming --eof----> closed          (decided: completed + warning, or incomplete)
    done      --chunk--> done            (ignored, warning "data_after_done")
    done      --[DONE]-> done            (a repeated [DONE] is a no-op)
    done      --eof----> closed

and each choice is ``open`` until its ``finish_reason`` (its terminal
signal), after which content for it is a protocol conflict. Tool-call
fragments are keyed by (choice, ``index``), or by ``id`` when a server sends
no ``index``; calls complete at the choice's ``finish_reason``.

The fast path: nearly every chunk is one choice's text, one arguments
fragment or one piece of reasoning (``SHAPES``, ``openai_chat_shapes.py``).
Those are matched in Rust while framing, admitting exactly what the general
path would ignore for such a chunk; choice 0's text is taken by the
decoder's sink (``_core.TextTaker``); when the state rules the fast path
out, a ticket gives back the ``SseEvent``. Tested equal with it off
(``tests/test_openai_chat_fast.py``).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from typing import Any, ClassVar, Literal

from .._core import ShapeMatcher, SseEvent, TextTaker
from .._json import failure, loads
from ..accumulate import ChoiceState
from ..errors import UsageError
from ..events import (
    Event,
    MessageStarted,
    StopReason,
    new_arguments_delta,
    new_arguments_deltas,
    new_reasoning_delta,
    new_refusal_delta,
    new_text_delta,
    new_text_deltas,
    text_delta_builder,
)
from ..kinds import MissingFinishReason
from ..result import ReadOnlyDict, Usage
from ._base import SseStream, retryable_hint
from ._values import RAW_CAP, dump, int_or_none, nonempty_str
from .openai_chat_calls import ChatCalls
from .openai_chat_parts import ChatParts
from .openai_chat_shapes import ARGUMENTS, TEXT, chunk_shape_specs

__all__ = ["PHASES", "SHAPES", "SHAPE_SPECS", "OpenAIChatStream"]

Phase = Literal["streaming", "done", "closed"]
PhaseInput = Literal["chunk", "done", "eof"]

#: The stream-level machine: ``(phase, input) -> (action, next phase)``.
PHASES: Mapping[tuple[Phase, PhaseInput], tuple[str, Phase]] = {
    ("streaming", "chunk"): ("apply", "streaming"),
    ("streaming", "done"): ("decide", "done"),
    ("streaming", "eof"): ("decide_at_eof", "closed"),
    ("done", "chunk"): ("warn_after_done", "done"),
    ("done", "done"): ("nothing", "done"),
    ("done", "eof"): ("nothing", "closed"),
}

_STOP_REASONS: Mapping[str, StopReason] = {
    "stop": "stop",
    "length": "length",
    "tool_calls": "tool_calls",
    "function_call": "tool_calls",
    "content_filter": "content_filter",
    "error": "error",
    # Truncation as compatible servers spell it (docs/design.md: truncated).
    "max_tokens": "length",
    "model_context_window_exceeded": "length",
}
#: Chunk fields of the OpenAI reference; the adapter reads or ignores them knowingly.
_CHUNK_FIELDS = frozenset(
    {
        "id",
        "object",
        "created",
        "model",
        "system_fingerprint",
        "service_tier",
        "choices",
        "usage",
        "error",
        "obfuscation",
    }
)
#: Compatible servers' chunk fields, known and ignored (``x_groq`` is read).
_CHUNK_EXTENSIONS = frozenset({"x_groq", "prompt_filter_results", "provider"})
#: Delta fields that carry content: after the choice's finish_reason, a conflict.
_CONTENT_FIELDS = frozenset(
    {
        "content",
        "tool_calls",
        "reasoning_content",
        "reasoning",
        "refusal",
        "function_call",
        "executed_tools",
    }
)
_CHOICE_FIELDS = frozenset({"index", "delta", "finish_reason", "logprobs"})
_CHOICE_EXTENSIONS = frozenset({"content_filter_results", "native_finish_reason"})

# Chunk and choice fields the general path never reads, whatever their value:
# the fast path's shapes admit them.
_IGNORED_CHUNK_FIELDS = (_CHUNK_FIELDS | _CHUNK_EXTENSIONS) - {
    "choices",
    "usage",
    "error",
    "x_groq",
}
_IGNORED_CHOICE_FIELDS = (_CHOICE_FIELDS | _CHOICE_EXTENSIONS) - {"index", "delta", "finish_reason"}
#: The fast path's chunk shapes, as written (see ``openai_chat_shapes.py``).
SHAPE_SPECS = chunk_shape_specs(_IGNORED_CHUNK_FIELDS, _IGNORED_CHOICE_FIELDS)
#: ``SHAPE_SPECS``, compiled: matched in Rust while framing, in runs.
SHAPES = ShapeMatcher(SHAPE_SPECS, runs=True)


class _TextSink:
    """The fast path's text chunks of choice 0, taken in Rust as the
    decoder's sink (``_core.TextTaker``; ``FramedStream.feed``) while that choice is
    running: each one's text appended to the choice and its ``TextDelta``
    built, exactly what ``_on_sse`` does with a run of them."""

    __slots__ = ("_choices", "_stream", "_taker")
    #: The taker appends the texts and events itself: nothing to settle.
    settles = False

    def __init__(self, stream: OpenAIChatStream) -> None:
        self._stream = stream
        self._choices = stream._choices
        self._taker = TextTaker(TEXT, text=text_delta_builder)

    def arm(self) -> TextTaker | None:
        if self._stream._phase != "streaming":
            return None
        state = self._choices.get(0)
        if state is None or state.terminal:
            return None
        self._taker.arm(0, state.text)
        return self._taker

    def settle(self) -> None:
        """Nothing to take over: the texts and events are in place."""


class OpenAIChatStream(SseStream):
    """OpenAI Chat Completions stream adapter (``sw.stream("openai-chat")``)."""

    protocol = "openai-chat"
    shapes: ClassVar[ShapeMatcher | None] = SHAPES

    def __init__(
        self,
        *,
        strict_done: bool = False,
        missing_finish_reason: MissingFinishReason = "incomplete",
        max_choices: int = 128,
        **options: Any,
    ):
        """Options: ``strict_done=True`` makes a stream that ends without
        ``[DONE]`` ``incomplete`` even when every choice finished (by default it
        is ``completed`` with a ``missing_done`` warning);
        ``missing_finish_reason`` says what a choice that never sent a
        ``finish_reason`` is when ``[DONE]`` ends the stream: ``"incomplete"``
        (the default) or ``"completed"``, for compatible servers that never
        send one (see the module docstring); ``max_choices`` caps the number of
        choices; the rest are ``SseStream``'s and ``Stream``'s."""
        if missing_finish_reason not in ("incomplete", "completed"):
            raise UsageError(
                "missing_finish_reason must be 'incomplete' or 'completed', "
                f"not {missing_finish_reason!r}"
            )
        super().__init__(**options)
        self._strict_done = strict_done
        self._missing_finish_reason: MissingFinishReason = missing_finish_reason
        self._max_choices = max_choices
        self._phase: Phase = "streaming"
        self._choices = self._acc.choices
        self._calls = self._acc.calls
        self._parts = ChatParts(self._acc)
        self._tool_calls = ChatCalls(self._acc, self._parts)
        self._finish_error = False
        self._sink = _TextSink(self)

    # --- the SSE layer ---------------------------------------------------

    def _on_sse(self, events: Sequence[SseEvent | tuple[Any, ...]], out: list[Event]) -> None:
        states = self._choices
        by_key = self._calls.by_key
        make_room = self._calls.make_room
        append = out.append
        streaming = self._phase == "streaming"
        for event in events:
            if not isinstance(event, tuple):
                self._on_event(event, out)
                streaming = self._phase == "streaming"
                continue
            # The fast path: a run of chunks of one of SHAPES, matched in Rust
            # (consecutive matches of one template with the same choice, and
            # call, are one run: ``ShapeMatcher(runs=True)``). It does exactly
            # what the general path does for each chunk, with fewer calls, when
            # the state allows (a running choice, an open call with room).
            values = event[-2]
            if streaming:
                tag = event[0]
                if tag == TEXT:
                    index = event[1]
                    state = states.get(index)
                    if state is not None and not state.terminal:
                        if "" in values:
                            values = [v for v in values if v]
                        if values:
                            state.text.extend(values)
                            out.extend(new_text_deltas(values, index))
                        continue
                elif tag == ARGUMENTS:
                    _, index, call_index, _, _ = event
                    state = states.get(index)
                    if state is not None and not state.terminal:
                        # As ChatCalls._on_fragment for an open call's fragments.
                        call = by_key.get((index, call_index))
                        if call is not None and not call.overflowed:
                            if len(values) == 1:  # parallel calls interleave: runs of one
                                fragment = values[0]
                                size = call.size + len(fragment)
                                # Past its allowance the call's fragments are
                                # compacted (ToolCalls.make_room); past a cap the
                                # general path records the overflow.
                                if size <= call.allowance or make_room(call, size):
                                    if fragment:
                                        call.size = size
                                        call.parts.append(fragment)
                                        append(
                                            new_arguments_delta(
                                                call.index, call.id, fragment, index
                                            )
                                        )
                                    continue
                            else:
                                size = call.size + sum(map(len, values))
                                if size <= call.allowance or make_room(call, size):
                                    if "" in values:
                                        values = [v for v in values if v]
                                    if values:
                                        call.size = size
                                        call.parts.extend(values)
                                        out.extend(
                                            new_arguments_deltas(values, call.index, call.id, index)
                                        )
                                    continue
                else:  # REASONING: as _on_delta for a reasoning field alone
                    index = event[1]
                    state = states.get(index)
                    if state is not None and not state.terminal:
                        for text in values:
                            if text:
                                state.reasoning.append(text)
                                append(new_reasoning_delta(text, None, None, "text", index))
                        continue
            first = event[-1]
            for ticket in range(first, first + len(values)):
                self._on_event(self._decoder.matched_event(ticket), out)
                streaming = self._phase == "streaming"

    def _on_event(self, event: SseEvent, out: list[Event]) -> None:
        """The general path: one SSE event, whatever it holds."""
        if self._phase != "streaming":  # PHASES: only "streaming" applies chunks
            self._step("chunk", event, out)
            return
        if event.event != "message":
            self._on_named_event(event, out)
            return
        data = event.data
        try:
            chunk = loads(data)
        except ValueError as exc:
            self._not_json(data, exc, out)
            return
        if type(chunk) is not dict:
            message = "a data payload is not a JSON object"
            out.append(self._acc.fail("framing", "invalid_payload", None, message))
            return
        self._on_chunk(chunk, out)

    def _on_named_event(self, event: SseEvent, out: list[Event]) -> None:
        if event.event == "error":
            self._on_error_event(event.data, out)
        else:
            out.append(self._acc.unknown_event(event.event, event.data))

    def _not_json(self, data: str, exc: ValueError, out: list[Event]) -> None:
        stripped = data.strip()
        if stripped == "[DONE]":
            self._step("done", None, out)
        elif not stripped:
            pass  # an empty data payload is a keep-alive
        else:
            kind, message = failure(exc, data, "a data payload")
            out.append(self._acc.fail("framing", kind, None, message))

    def _step(self, input: PhaseInput, event: SseEvent | None, out: list[Event]) -> None:
        """Takes the ``PHASES`` transition for ``input`` and performs its action."""
        action, self._phase = PHASES[self._phase, input]
        if action == "decide":
            self._decide(out)
        elif action == "decide_at_eof":
            self._decide_at_eof(out)
        elif action == "warn_after_done" and event is not None:
            if event.event == "message" and event.data.strip() == "[DONE]":
                return  # a repeated [DONE] is a no-op
            self._acc.warn(
                "data_after_done", f"an event after [DONE] was ignored: {event.data[:80]!r}"
            )

    # --- chunks ----------------------------------------------------------

    def _on_chunk(self, chunk: dict[str, Any], out: list[Event]) -> None:
        choices = chunk.get("choices")
        if choices:
            if type(choices) is list:
                for choice in choices:
                    self._on_choice(choice, chunk, out)
            else:
                self._acc.conflict("'choices' is not a list")
        usage = chunk.get("usage")
        if usage is not None:
            self._on_usage(usage, out)
        error = chunk.get("error")
        if error:
            self._on_error(error, out)
        elif choices is None and usage is None:
            # Not a chunk: an unknown event as a whole (its fields are not counted).
            out.append(
                self._acc.unknown_event(
                    "chunk-without-choices", dump(chunk, spacing="spaced", cap=RAW_CAP)
                )
            )
            return
        if not _CHUNK_FIELDS.issuperset(chunk):
            self._chunk_extensions(chunk, usage, out)

    def _chunk_extensions(self, chunk: dict[str, Any], usage: object, out: list[Event]) -> None:
        for key in chunk:
            if key in _CHUNK_FIELDS:
                continue
            if key == "x_groq":
                extra = chunk[key]
                if usage is None and type(extra) is dict and extra.get("usage") is not None:
                    self._on_usage(extra["usage"], out)
            elif key not in _CHUNK_EXTENSIONS:
                self._acc.unknown_field(key)

    def _on_choice(self, choice: Any, chunk: dict[str, Any], out: list[Event]) -> None:
        if type(choice) is not dict:
            self._acc.conflict("a choice is not an object")
            return
        index = choice.get("index", 0)
        if type(index) is not int or index < 0:
            self._acc.conflict(f"a choice index is not a non-negative integer: {index!r}")
            return
        delta = choice.get("delta")
        state = self._choices.get(index)
        if state is None:
            started = self._start_choice(index, chunk, delta, out)
            if started is None:
                return
            state = started
        if delta:
            if type(delta) is dict:
                self._on_delta(state, delta, out)
            else:
                self._acc.conflict(f"the delta of choice {index} is not an object")
        finish = choice.get("finish_reason")
        if finish is not None:
            self._on_finish(state, finish, out)
        if not _CHOICE_FIELDS.issuperset(choice):
            for key in choice:
                if key not in _CHOICE_FIELDS and key not in _CHOICE_EXTENSIONS:
                    self._acc.unknown_field("choices[]." + key)

    def _start_choice(
        self, index: int, chunk: dict[str, Any], delta: Any, out: list[Event]
    ) -> ChoiceState | None:
        acc = self._acc
        if len(self._choices) >= self._max_choices:
            if acc.error is None or acc.error.type != "too_many_choices":
                message = f"more than max_choices ({self._max_choices}) choices"
                out.append(acc.fail("limit", "too_many_choices", None, message))
            return None
        state = self._choices[index] = ChoiceState(index)
        message_id = nonempty_str(chunk.get("id"))
        model = nonempty_str(chunk.get("model"))
        if acc.message_id is None:
            acc.message_id = message_id
        if acc.model is None:
            acc.model = model
        role = nonempty_str(delta.get("role")) if type(delta) is dict else None
        out.append(MessageStarted(message_id=message_id, model=model, role=role, choice=index))
        return state

    def _on_delta(self, state: ChoiceState, delta: dict[str, Any], out: list[Event]) -> None:
        index = state.index
        reasoning_taken = False
        for key, value in delta.items():
            if not value or key == "role":
                continue  # null, "" and [] carry nothing; the role is in MessageStarted
            if state.terminal and key in _CONTENT_FIELDS:
                self._after_finish(state, key)
            elif key == "content":
                if type(value) is str:
                    state.text.append(value)
                    out.append(new_text_delta(value, index))
                elif type(value) is list:
                    self._parts.on_content_parts(state, value, out)
                else:
                    self._acc.conflict(f"delta.content of choice {index} is not a string")
            elif key == "tool_calls":
                self._tool_calls.on_tool_calls(state, value, out)
            elif key == "reasoning_content" or key == "reasoning":
                if reasoning_taken:
                    continue
                reasoning_taken = True
                if type(value) is str:
                    state.reasoning.append(value)
                    out.append(new_reasoning_delta(value, None, None, "text", index))
                else:
                    self._acc.conflict(f"delta.{key} of choice {index} is not a string")
            elif key == "refusal":
                if type(value) is str:
                    state.refusal.append(value)
                    out.append(new_refusal_delta(value, index))
                else:
                    self._acc.conflict(f"delta.refusal of choice {index} is not a string")
            elif key == "function_call":
                self._tool_calls.on_function_call(state, value, out)
            elif key == "reasoning_details":
                self._on_reasoning_details(state, value, out)
            elif key == "annotations":
                self._parts.on_annotations(state, value)
            elif key == "executed_tools":
                self._tool_calls.on_executed_tools(state, value, out)
            else:
                self._acc.unknown_field("choices[].delta." + key)

    def _after_finish(self, state: ChoiceState, key: str) -> None:
        self._acc.conflict(
            f"choice {state.index} sent delta.{key} after its finish_reason "
            f"{state.finish_reason!r}; it was ignored"
        )

    def _on_reasoning_details(self, state: ChoiceState, details: Any, out: list[Event]) -> None:
        # OpenRouter repeats the reasoning text here (taken from delta.reasoning)
        # and carries the signature the next turn must send back, verbatim.
        if type(details) is not list:
            return
        for item in details:
            if type(item) is dict:
                signature = item.get("signature")
                if signature and type(signature) is str:
                    state.signatures.append(signature)
                    out.append(new_reasoning_delta("", signature, None, "text", state.index))

    # --- endings ---------------------------------------------------------

    def _on_finish(self, state: ChoiceState, finish: Any, out: list[Event]) -> None:
        acc = self._acc
        if type(finish) is not str:
            acc.conflict(f"the finish_reason of choice {state.index} is not a string")
            return
        if state.finish_reason is not None:
            if finish != state.finish_reason:
                acc.conflict(
                    f"choice {state.index} changed its finish_reason "
                    f"from {state.finish_reason!r} to {finish!r}"
                )
            return  # the same finish_reason again: a no-op
        state.finish_reason = finish
        stop = _STOP_REASONS.get(finish, "other")
        if stop == "stop" and state.refusal:
            stop = "content_filter"  # docs/design.md: refusal endings are content_filter
        if stop == "error":
            self._finish_error = True
        self._end_choice(state, stop, out)

    def _end_choice(self, state: ChoiceState, stop: StopReason, out: list[Event]) -> None:
        """The choice's terminal signal: its stop reason; its calls are complete."""
        state.stop_reason = stop
        state.terminal = True
        calls = self._calls
        for call in calls.by_choice.get(state.index, ()):
            if call.state == "collecting":
                self._acc.complete_call(call, out)

    def _decide(self, out: list[Event], *, done: bool = True) -> None:
        """The stream ended (``done``: by ``[DONE]``): decides every status."""
        acc = self._acc
        if done:
            self._unfinished(out)
        if self._finish_error and acc.error is None:
            out.append(
                acc.fail(
                    "provider",
                    "error",
                    None,
                    "the provider ended a choice with finish_reason 'error'",
                    retryable=False,
                )
            )
        out.extend(acc.finish())

    def _on_eof(self, out: list[Event]) -> None:
        self._step("eof", None, out)

    def _decide_at_eof(self, out: list[Event]) -> None:
        acc = self._acc
        choices = self._choices
        if choices and all(c.terminal for c in choices.values()):
            acc.warn("missing_done", "the stream ended after its finish_reason but without [DONE]")
            if self._strict_done:
                acc.incomplete_reason = "no [DONE] (strict_done)"
        self._decide(out, done=False)

    def _unfinished(self, out: list[Event]) -> None:
        """``[DONE]`` came before some choices' ``finish_reason``: a warning that
        says so; with ``missing_finish_reason="completed"``, ``[DONE]`` ends them."""
        acc = self._acc
        unfinished = [c for c in self._choices.values() if not c.terminal]
        if not unfinished:
            return
        names = ", ".join(str(c.index) for c in sorted(unfinished, key=_choice_index)[:8])
        accepted = self._missing_finish_reason == "completed"
        if accepted:
            verdict = "[DONE] was taken as their end (missing_finish_reason='completed')"
        else:
            verdict = (
                "they are incomplete (for a server that never sends one, "
                "missing_finish_reason='completed' takes [DONE] as their end)"
            )
        acc.warn(
            "missing_finish_reason",
            f"choice(s) {names} sent no finish_reason before [DONE]: {verdict}",
        )
        if not accepted:
            return
        for state in unfinished:
            self._end_choice(state, "other", out)
        usage = acc.usage
        if usage is not None and not usage.final:
            out.append(acc.report_usage(dataclasses.replace(usage, final=True)))

    # --- usage and errors ------------------------------------------------

    def _on_usage(self, usage: Any, out: list[Event]) -> None:
        if type(usage) is not dict:
            self._acc.warn("usage_not_object", f"a usage report is not an object: {usage!r:.80}")
            return
        choices = self._choices
        final = bool(choices) and all(c.terminal for c in choices.values())
        out.append(self._acc.report_usage(_usage(usage, final)))

    def _on_error_event(self, data: str, out: list[Event]) -> None:
        try:
            payload = loads(data)
        except ValueError:
            payload = data
        if type(payload) is dict and payload.get("error"):
            payload = payload["error"]
        self._on_error(payload, out)

    def _on_error(self, error: Any, out: list[Event]) -> None:
        if type(error) is dict:
            kind = nonempty_str(error.get("type"))
            code = error.get("code")
            if type(code) is not str and type(code) is not int:
                code = None
            message = nonempty_str(error.get("message"))
            status = error.get("status_code", error.get("status"))
            request_id = nonempty_str(error.get("request_id"))
        else:
            kind = code = status = request_id = None
            message = error if type(error) is str else repr(error)
        out.append(
            self._acc.fail(
                "provider",
                kind,
                code,
                message,
                retryable=retryable_hint(kind, code, status),
                request_id=request_id,
                raw=error,
            )
        )


def _usage(raw: dict[str, Any], final: bool) -> Usage:
    prompt_details = raw.get("prompt_tokens_details")
    completion_details = raw.get("completion_tokens_details")
    cache_read = (
        int_or_none(prompt_details.get("cached_tokens")) if type(prompt_details) is dict else None
    )
    if cache_read is None:
        cache_read = int_or_none(raw.get("prompt_cache_hit_tokens"))  # DeepSeek
    reasoning = (
        int_or_none(completion_details.get("reasoning_tokens"))
        if type(completion_details) is dict
        else None
    )
    return Usage(
        input_tokens=int_or_none(raw.get("prompt_tokens")),
        output_tokens=int_or_none(raw.get("completion_tokens")),
        total_tokens=int_or_none(raw.get("total_tokens")),
        cache_read_tokens=cache_read,
        cache_creation_tokens=None,
        reasoning_tokens=reasoning,
        final=final,
        raw=ReadOnlyDict(raw),
    )


def _choice_index(state: ChoiceState) -> int:
    return state.index
