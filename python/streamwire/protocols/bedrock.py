"""The ``bedrock-converse`` adapter: Amazon Bedrock ``ConverseStream``.

The event stream of ``POST /model/{modelId}/converse-stream`` as the Bedrock
API reference describes it ("ConverseStream", "ConverseStreamOutput", ...,
docs.aws.amazon.com/bedrock/latest/APIReference, checked 2026-11-29; botocore
1.43's ``bedrock-runtime`` service model); what each event becomes, and the
edge cases real streams show, are docs/protocols/bedrock-converse.md. The
body is AWS EventStream: framing, exceptions and error frames are
``_eventstream.py``'s; content blocks are ``bedrock_blocks.py``'s.

The stream is a machine with its transitions as data (``PHASES``)::

    before   --messageStart-------> message   (content or messageStop: implied, warning)
    message  --contentBlock*------> message   (blocks)
    message  --messageStop--------> stopped   (the terminal signal: status decided)
    stopped  --metadata-----------> ended     (the end marker: final usage, MessageCompleted)
    stopped  --eof----------------> closed    (completed, warning missing_metadata)
    message  --eof----------------> closed    (incomplete)

A ``metadata`` before ``messageStop`` reports its usage, not final; every
other pair is a recorded protocol conflict or warning. The fast path: text
deltas (``SHAPES``) are matched in Rust while framing and arrive as runs
per block (``_on_messages``); tested equal to the general path
(``tests/test_bedrock_fast.py``).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, Literal, cast

from .._core import EventStreamMessage, ShapeMatcher
from .._json import ACCELERATED, check_depth
from ..accumulate import ChoiceState
from ..events import (
    Event,
    MessageStarted,
    StopReason,
    new_text_delta,
    new_text_deltas,
)
from ..result import ReadOnlyDict, Usage
from . import _eventstream
from ._eventstream import EventStreamStream
from ._values import int_or_none
from .bedrock_blocks import BlockInput, ConverseBlocks

__all__ = ["PHASES", "SHAPES", "STOP_REASONS", "BedrockConverseStream", "converse_usage"]

Phase = Literal["before", "message", "stopped", "ended", "closed"]
PhaseInput = Literal[
    "messageStart",
    "contentBlockStart",
    "contentBlockDelta",
    "contentBlockStop",
    "messageStop",
    "metadata",
    "eof",
]
PhaseAction = Literal[
    "start",
    "implied_start",
    "implied_start_stop",
    "block",
    "stop",
    "stop_again",
    "usage_early",
    "final_usage",
    "conflict_second_start",
    "conflict_after_stop",
    "ignore_after_end",
    "end",
    "end_without_metadata",
    "nothing",
]

#: The stream-level machine: ``(phase, input) -> (action, next phase)``.
#: Exceptions and error frames are accepted in every phase (``_eventstream``).
PHASES: Mapping[tuple[Phase, PhaseInput], tuple[PhaseAction, Phase]] = {
    ("before", "messageStart"): ("start", "message"),
    ("before", "contentBlockStart"): ("implied_start", "message"),
    ("before", "contentBlockDelta"): ("implied_start", "message"),
    ("before", "contentBlockStop"): ("implied_start", "message"),
    ("before", "messageStop"): ("implied_start_stop", "stopped"),
    ("before", "metadata"): ("usage_early", "before"),
    ("before", "eof"): ("end", "closed"),
    ("message", "messageStart"): ("conflict_second_start", "message"),
    ("message", "contentBlockStart"): ("block", "message"),
    ("message", "contentBlockDelta"): ("block", "message"),
    ("message", "contentBlockStop"): ("block", "message"),
    ("message", "messageStop"): ("stop", "stopped"),
    ("message", "metadata"): ("usage_early", "message"),
    ("message", "eof"): ("end", "closed"),
    ("stopped", "messageStart"): ("conflict_after_stop", "stopped"),
    ("stopped", "contentBlockStart"): ("conflict_after_stop", "stopped"),
    ("stopped", "contentBlockDelta"): ("conflict_after_stop", "stopped"),
    ("stopped", "contentBlockStop"): ("conflict_after_stop", "stopped"),
    ("stopped", "messageStop"): ("stop_again", "stopped"),
    ("stopped", "metadata"): ("final_usage", "ended"),
    ("stopped", "eof"): ("end_without_metadata", "closed"),
    ("ended", "messageStart"): ("ignore_after_end", "ended"),
    ("ended", "contentBlockStart"): ("ignore_after_end", "ended"),
    ("ended", "contentBlockDelta"): ("ignore_after_end", "ended"),
    ("ended", "contentBlockStop"): ("ignore_after_end", "ended"),
    ("ended", "messageStop"): ("ignore_after_end", "ended"),
    ("ended", "metadata"): ("ignore_after_end", "ended"),
    ("ended", "eof"): ("nothing", "closed"),
}

STOP_REASONS: Mapping[str, StopReason] = {
    "end_turn": "stop",
    "stop_sequence": "stop",
    "tool_use": "tool_calls",
    "max_tokens": "length",
    "model_context_window_exceeded": "length",
    "guardrail_intervened": "content_filter",
    "content_filtered": "content_filter",
    "malformed_model_output": "error",
    "malformed_tool_use": "error",
}

#: Payload members each event may carry (``p`` is Bedrock's padding).
_KNOWN_FIELDS: Mapping[str, frozenset[str]] = {
    "messageStart": frozenset({"role", "p"}),
    "contentBlockStart": frozenset({"contentBlockIndex", "start", "p"}),
    "contentBlockDelta": frozenset({"contentBlockIndex", "delta", "p"}),
    "contentBlockStop": frozenset({"contentBlockIndex", "p"}),
    "messageStop": frozenset({"stopReason", "additionalModelResponseFields", "p"}),
    "metadata": frozenset({"usage", "metrics", "trace", "performanceConfig", "serviceTier", "p"}),
}
#: The fast path's JSON decoder: orjson straight on the payload bytes when it is
#: installed (what it refuses goes to the general path, whose ``loads_payload``
#: has the standard library's exact acceptance), else ``loads_payload``.
_fast_loads: Callable[[bytes], Any] = _eventstream.loads_payload
if ACCELERATED:
    import orjson

    def _orjson_screened(payload: bytes, _loads: Callable[[bytes], Any] = orjson.loads) -> Any:
        check_depth(payload)  # the general path's cap (orjson alone allows 1024 levels)
        return _loads(payload)

    _fast_loads = _orjson_screened
#: The fast path's payload shape, matched in Rust while framing: a text delta,
#: exactly ``contentBlockIndex`` and ``delta`` (and Bedrock's padding ``p``),
#: the delta exactly its ``text``; it captures (block index, text).
SHAPES = ShapeMatcher(
    [
        (
            "contentBlockDelta",
            {"contentBlockIndex": "$int", "delta": {"text": "$str"}, "p?": "$any"},
        )
    ],
    runs=True,
)
_BLOCK_INPUTS: Mapping[str, BlockInput] = {
    "contentBlockStart": "start",
    "contentBlockDelta": "delta",
    "contentBlockStop": "stop",
}


class BedrockConverseStream(EventStreamStream):
    """Amazon Bedrock ``ConverseStream`` adapter (``sw.stream("bedrock-converse")``)."""

    protocol = "bedrock-converse"
    shapes = SHAPES

    def __init__(self, **options: Any) -> None:
        """Options are ``EventStreamStream``'s (``max_message_bytes``) and
        ``Stream``'s (``max_content_blocks`` caps the content blocks, ...)."""
        super().__init__(**options)
        self._phase: Phase = "before"
        self._blocks = ConverseBlocks(self._acc)
        self._by_index = self._blocks.by_index
        self._state: ChoiceState | None = None
        self._text: list[str] = []  # the choice's text pieces, once it exists
        #: Citations as Bedrock sent them (``contentBlockDelta.delta.citation``),
        #: each ``{"contentBlockIndex": i, "citation": {...}}``.
        self.citations = self._blocks.citations
        #: ``messageStop.additionalModelResponseFields``, verbatim, if sent.
        self.additional_model_response_fields: Any = None
        #: A metadata event arrived before messageStop; the usage it carried.
        self._early_metadata = False
        self._early_usage: dict[str, Any] | None = None
        #: The framing held to the end of the input (set by ``_end_input``).
        self._input_whole = True
        self._handlers: dict[str, Callable[[EventStreamMessage, list[Event]], None]] = {
            name: self._on_phase_input for name in _KNOWN_FIELDS
        }

    @property
    def phase(self) -> Phase:
        """The stream-level phase (``PHASES``): ``before``, ``message``, ``stopped``,
        ``ended`` or ``closed``."""
        return self._phase

    # --- events ------------------------------------------------------------

    def _on_messages(self, messages: list[EventStreamMessage], out: list[Event]) -> None:
        # The fast path (nearly every message of a stream is one of these):
        # a text delta for an open text block, nothing else in its
        # payload. It does exactly what the general path does for such a
        # message (tested: test_fast_path_matches_general_path,
        # tests/test_bedrock_fast.py), in one loop without a call per message;
        # anything else, including a payload the fast JSON decoder refuses,
        # takes the general path. Messages of ``SHAPES`` arrive matched in
        # Rust, consecutive ones for one block merged into a run
        # ``(template, index, [text, ...], first ticket)``; when the state
        # rules the run out, the tickets give back its messages for the
        # general path.
        by_index = self._by_index
        append = out.append
        pieces = self._text
        fast_loads = _fast_loads
        in_message = self._phase == "message"
        # feed_matched's list holds match tuples too (see SHAPES).
        items = cast("list[EventStreamMessage | tuple[Any, ...]]", messages)
        for item in items:
            if type(item) is tuple:
                # A run of matched text deltas for one block (see SHAPES). A
                # text block has no start message: its first delta opens it,
                # on the general path, and the rest of the run can follow fast.
                _template, index, texts, first = item
                done = 0
                while done < len(texts):
                    block = by_index.get(index) if in_message else None
                    if block is not None and block.kind == "text" and block.state == "open":
                        rest = texts[done:] if done else texts
                        if "" in rest:  # an empty delta adds nothing and is no event
                            rest = [text for text in rest if text]
                        block.parts += rest
                        pieces += rest
                        out += new_text_deltas(rest, 0)
                        break
                    super()._on_messages([self._decoder.matched_message(first + done)], out)
                    in_message = self._phase == "message"
                    pieces = self._text
                    done += 1
                continue
            if (
                message := cast(EventStreamMessage, item)
            ).event_type == "contentBlockDelta" and in_message:
                try:
                    body = fast_loads(message.payload)
                except ValueError:
                    body = None
                # Exactly the members contentBlockIndex, delta and maybe p
                # (the type checks below require the first two).
                if type(body) is dict and (len(body) == 2 or (len(body) == 3 and "p" in body)):
                    delta = body.get("delta")
                    index = body.get("contentBlockIndex")
                    if (
                        type(delta) is dict
                        and len(delta) == 1
                        and type(index) is int
                        and message.message_type == "event"
                    ):
                        text = delta.get("text")
                        block = by_index.get(index)
                        if (
                            type(text) is str
                            and block is not None
                            and block.kind == "text"
                            and block.state == "open"
                        ):
                            if text:
                                block.parts.append(text)
                                pieces.append(text)
                                append(new_text_delta(text, 0))
                            continue
            super()._on_messages([message], out)
            in_message = self._phase == "message"
            pieces = self._text

    def _on_event(self, message: EventStreamMessage, out: list[Event]) -> None:
        event_type = message.event_type
        handler = self._handlers.get(event_type) if event_type is not None else None
        if handler is None:
            name = event_type if event_type is not None else ":event-type missing"
            if self._phase == "ended":  # PHASES: decided; ignored like the known ones
                self._acc.warn("data_after_end", f"{name} after the metadata event was ignored")
                return
            out.append(self._acc.unknown_event(name, message.payload.decode("utf-8", "replace")))
            return
        handler(message, out)

    def _on_phase_input(self, message: EventStreamMessage, out: list[Event]) -> None:
        if self._phase == "ended":
            # PHASES: whatever follows the metadata is ignored (a warning), its
            # payload unread: the result was decided, and a malformed payload
            # there must not report an error after MessageCompleted.
            self._step(message.event_type, None, out)  # type: ignore[arg-type]
            return
        payload = self._payload(message, out)
        if payload is not None:
            self._apply_phase(message.event_type, payload, out)  # type: ignore[arg-type]

    def _apply_phase(self, name: PhaseInput, payload: dict[str, Any], out: list[Event]) -> None:
        known = _KNOWN_FIELDS[name]
        if not known.issuperset(payload):
            for key in payload:
                if key not in known:
                    self._acc.unknown_field(f"{name}.{key}")
        self._step(name, payload, out)

    def _end_input(self, out: list[Event]) -> None:
        self._input_whole = (
            not self._framing_failed and self._foreign is None and self._decoder.buffered_bytes == 0
        )
        super()._end_input(out)

    def _on_eof(self, out: list[Event]) -> None:
        self._step("eof", None, out)

    def _step(self, input: PhaseInput, payload: dict[str, Any] | None, out: list[Event]) -> None:
        """Takes the ``PHASES`` transition for ``input`` and performs its action."""
        action, self._phase = PHASES[self._phase, input]
        acc = self._acc
        if action == "block":
            assert payload is not None and self._state is not None
            self._blocks.step(_BLOCK_INPUTS[input], self._state, payload, out)
        elif action == "start":
            assert payload is not None
            self._start(payload, out)
        elif action == "stop":
            assert payload is not None
            self._stop(payload, out)
        elif action == "stop_again":
            reason = payload.get("stopReason") if payload is not None else None
            state = self._state
            if state is not None and reason != state.finish_reason:
                acc.conflict(
                    f"a second messageStop changed the stopReason from "
                    f"{state.finish_reason!r} to {reason!r}"
                )
        elif action == "final_usage" or action == "usage_early":
            assert payload is not None
            self._metadata(payload, final=action == "final_usage", out=out)
            if action == "final_usage":
                out.extend(acc.finish())
        elif action == "end_without_metadata":
            if not self._early_metadata:
                acc.warn(
                    "missing_metadata",
                    "the stream ended after messageStop without its metadata event: no final usage",
                )
            elif self._early_usage is not None and self._input_whole and acc.error is None:
                # The metadata came before messageStop, and nothing followed
                # the stop: its usage is the last figure the stream gives.
                out.append(acc.report_usage(converse_usage(self._early_usage, True)))
        elif action == "implied_start" or action == "implied_start_stop":
            assert payload is not None
            acc.warn(
                "missing_message_start",
                f"the stream began with {input}, without messageStart; the message start "
                "was implied",
            )
            self._start({}, out)
            if action == "implied_start":
                assert self._state is not None
                self._blocks.step(_BLOCK_INPUTS[input], self._state, payload, out)
            else:
                self._stop(payload, out)
        elif action == "conflict_second_start":
            acc.conflict("a second messageStart inside the message; it was ignored")
        elif action == "conflict_after_stop":
            acc.conflict(f"{input} after messageStop; it was ignored")
        elif action == "ignore_after_end":
            acc.warn("data_after_end", f"{input} after the metadata event was ignored")
        # "end" and "nothing": close() decides the status (acc.finish()).

    # --- the message -----------------------------------------------------

    def _start(self, payload: dict[str, Any], out: list[Event]) -> None:
        state = self._state = self._acc.choices[0] = ChoiceState(0)
        self._text = state.text
        role = payload.get("role")
        out.append(MessageStarted(role=role if type(role) is str else None, choice=0))

    def _stop(self, payload: dict[str, Any], out: list[Event]) -> None:
        acc = self._acc
        state = self._state
        assert state is not None
        reason = payload.get("stopReason")
        if "additionalModelResponseFields" in payload:
            self.additional_model_response_fields = payload["additionalModelResponseFields"]
        if type(reason) is str:
            state.finish_reason = reason
            state.stop_reason = STOP_REASONS.get(reason, "other")
        else:
            acc.warn("no_stop_reason", "messageStop carried no stopReason string")
        state.terminal = True
        self._blocks.close_open(out)
        if state.stop_reason == "error":
            out.append(
                acc.fail(
                    "provider",
                    reason if type(reason) is str else None,
                    None,
                    f"the model's output was malformed (stopReason {reason!r})",
                    retryable=False,
                )
            )

    def _metadata(self, payload: dict[str, Any], *, final: bool, out: list[Event]) -> None:
        acc = self._acc
        for key in ("metrics", "trace", "performanceConfig", "serviceTier"):
            if key in payload:
                acc.provider_metrics[key] = payload[key]
        if not final:
            acc.warn("metadata_before_stop", "a metadata event arrived before messageStop")
            self._early_metadata = True
        usage = payload.get("usage")
        if usage is None:
            return
        if type(usage) is not dict:
            acc.warn("usage_not_object", f"a usage report is not an object: {usage!r:.80}")
            return
        if not final:
            self._early_usage = usage
        out.append(acc.report_usage(converse_usage(usage, final)))


def converse_usage(raw: dict[str, Any], final: bool) -> Usage:
    """A ``Usage`` from Bedrock's ``TokenUsage`` object."""
    return Usage(
        input_tokens=int_or_none(raw.get("inputTokens")),
        output_tokens=int_or_none(raw.get("outputTokens")),
        total_tokens=int_or_none(raw.get("totalTokens")),
        cache_read_tokens=int_or_none(raw.get("cacheReadInputTokens")),
        cache_creation_tokens=int_or_none(raw.get("cacheWriteInputTokens")),
        reasoning_tokens=None,
        final=final,
        raw=ReadOnlyDict(raw),
    )
