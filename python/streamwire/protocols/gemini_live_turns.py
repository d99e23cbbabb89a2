"""One model turn of a Gemini Live session: its content, calls, ending and usage.

What a ``LiveTurn`` does with the parts of a ``BidiGenerateContentServerMessage``
("Live API - WebSockets API reference", ai.google.dev/api/live, and the
google-genai ``LiveServerMessage`` types, checked 2026-11-29);
``gemini_live.py`` decides *when* (the session machine). The table of what
each key becomes is docs/protocols/gemini-live.md.

* ``modelTurn.parts`` are Gemini ``Part`` objects, applied by ``GeminiParts``
  (``gemini_parts.py``, one implementation). Audio parts are counted, never
  decoded into text (``provider_metrics["audio_deltas"]`` /
  ``["audio_bytes"]``), and kept with ``audio="keep"``;
  ``outputTranscription.text`` is the turn's text.
* ``toolCall.functionCalls`` are applied as ``functionCall`` parts; the turn
  then ends. ``toolCallCancellation`` withdraws calls, even after their
  turn ended: the ``revoke`` transition of ``toolcalls.py`` (state
  ``rejected``, the batch no longer executable, its tool result refused).
* ``usageMetadata`` is per turn, a snapshot that replaces the last; final
  when it comes with (or after) the turn's end.
* Endings: ``turnComplete`` -> ``completed`` (its ``turnCompleteReason``
  refines it), ``toolCall`` -> ``completed`` / ``tool_calls``,
  ``interrupted`` -> ``cancelled``; the end of input after
  ``generationComplete`` but before ``turnComplete`` (the model had
  finished, playback had not) -> ``completed`` with a warning.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Literal

from ..accumulate import Accumulator, ChoiceState
from ..events import Event, MessageStarted, StopReason, ToolCallCompleted, new_text_delta
from ..result import ReadOnlyDict, Usage
from ..toolcalls import CallBuffer
from ._values import int_or_none
from ._websocket import REVOKED, AudioMode, Turn
from .gemini_enums import NO_NUMBERS, read_enum, shown
from .gemini_parts import Candidate, GeminiParts

__all__ = ["Ending", "LiveTurn", "live_usage", "stop_of", "turn_reason"]

Ending = Literal["turnComplete", "toolCall", "interrupted", "eof", "cancel"]

#: ``turnCompleteReason`` values that are the generation failing.
_FAILED = frozenset({"MALFORMED_FUNCTION_CALL"})
#: Words of the ``turnCompleteReason`` values that are a filter or a refusal.
_FILTER_WORDS = (
    "REJECTED",
    "SAFETY",
    "PROHIBITED",
    "BLOCKLIST",
    "CELEBRITY",
    "UNSAFE",
    "NCII",
    "CHILD",
    "PEOPLE",
    "MINORS",
    "INPUT_OTHER",
    "GENERATED_OTHER",
)
_STOPS: Mapping[str, StopReason] = {
    "TURN_COMPLETE_REASON_UNSPECIFIED": "stop",
    "NEED_MORE_INPUT": "stop",
}


def turn_reason(server_content: Any, acc: Accumulator) -> str | None:
    """A ``serverContent``'s ``turnCompleteReason``: its name, or a number kept as
    its decimal text and reported (``gemini_enums.py``: no reference we checked
    numbers this enum); None when absent, or not an enum value (a conflict)."""
    value = server_content.get("turnCompleteReason") if type(server_content) is dict else None
    if value is None:
        return None
    where = "serverContent.turnCompleteReason"
    reading = read_enum(value, NO_NUMBERS, "either", where)
    if reading is None:
        acc.conflict(f"{where} is neither an enum name nor a number: {shown(value)}")
        return None
    if reading.warning is not None:
        acc.warn(*reading.warning)
    return reading.raw


def stop_of(reason: str) -> StopReason:
    """The normalized stop reason of a ``turnCompleteReason``."""
    stop = _STOPS.get(reason)
    if stop is not None:
        return stop
    if reason in _FAILED:
        return "error"
    if any(word in reason for word in _FILTER_WORDS):
        return "content_filter"
    return "other"


class LiveTurn:
    """One model turn: its accumulator, its parts and its ending."""

    def __init__(self, acc: Accumulator, audio: AudioMode) -> None:
        self.acc = acc
        self._audio: AudioMode = audio
        self.parts = GeminiParts(acc)
        choice = acc.choices.get(0)
        if choice is None:
            choice = acc.choices[0] = ChoiceState(0)
        self.cand: Candidate = self.parts.candidate(choice)
        #: The turn's ``Turn`` (set by the session, for audio and attribution).
        self.turn: Turn[LiveTurn] | None = None
        #: ``generationComplete`` arrived.
        self.generated = False
        self._usage_seen: tuple[Any, bool] | None = None

    def start(self, out: list[Event]) -> None:
        """The turn began."""
        out.append(MessageStarted(message_id=None, model=None, role=None, choice=0))

    # --- content -----------------------------------------------------------------------

    def content(self, server_content: dict[str, Any], out: list[Event]) -> None:
        """The model turn's new parts, and the transcript of its audio."""
        acc = self.acc
        model_turn = server_content.get("modelTurn")
        if type(model_turn) is dict:
            parts = model_turn.get("parts")
            if type(parts) is list:
                self.parts.on_parts(self.cand, self._without_audio(parts), out)
            elif parts is not None:
                acc.conflict("serverContent.modelTurn.parts is not a list")
        elif model_turn is not None:
            acc.conflict("serverContent.modelTurn is not an object")
        transcription = server_content.get("outputTranscription")
        if type(transcription) is dict:
            text = transcription.get("text")
            if type(text) is str and text:
                self.cand.state.text.append(text)
                out.append(new_text_delta(text, 0))

    def _without_audio(self, parts: list[Any]) -> list[Any]:
        kept = []
        turn = self.turn
        for part in parts:
            data = part.get("inlineData") if type(part) is dict else None
            if type(data) is dict and str(data.get("mimeType", "")).startswith("audio/"):
                if turn is not None and not turn.count_audio(data.get("data"), self._audio):
                    self.acc.warn("invalid_audio", "an audio part's data is not base64 text")
                continue
            kept.append(part)
        return kept

    def calls(self, tool_call: Any, out: list[Event]) -> None:
        """``toolCall.functionCalls``: the turn's calls, each arriving whole."""
        calls = tool_call.get("functionCalls") if type(tool_call) is dict else None
        if calls is None and type(tool_call) is dict:
            calls = []  # an optional list left out (``toolCall: {}``): no calls
        if type(calls) is not list:
            self.acc.conflict("toolCall.functionCalls is not a list")
            return
        if not calls:
            self.acc.warn("tool_call_empty", "a toolCall message carried no function calls")
            return
        self.parts.on_parts(self.cand, [{"functionCall": fc} for fc in calls], out)

    # --- ending --------------------------------------------------------------------------

    def end(self, how: Ending, reason: str | None, out: list[Event]) -> None:
        """The turn ended (``how``; ``reason``: a ``turnCompleteReason``)."""
        acc = self.acc
        if acc.ended:
            return
        state = self.cand.state
        self.parts.finish(self.cand, out)
        client = any(c.executor == "client" for c in acc.calls.by_choice.get(0, ()))
        if how in ("eof", "cancel"):
            if how == "cancel":
                acc.cancelled = True
            elif self.generated:
                acc.warn(
                    "turn_complete_missing",
                    "the input ended after generationComplete but before turnComplete",
                )
                state.finish_reason = "generationComplete"
                state.stop_reason = "tool_calls" if client else "stop"
                state.terminal = True
            out.extend(acc.finish())
            return
        state.terminal = True
        state.finish_reason = reason or how
        if how == "interrupted":
            acc.cancelled = True
            state.stop_reason = "other"
        elif how == "toolCall" or reason is None:
            state.stop_reason = "tool_calls" if client else "stop"
        else:
            stop = stop_of(reason)
            state.stop_reason = "tool_calls" if stop == "stop" and client else stop
            if stop == "error":
                message = f"the turn ended with turnCompleteReason {reason}"
                out.append(acc.fail("provider", reason, None, message, retryable=False))
        out.extend(acc.finish())

    # --- usage and withdrawals -----------------------------------------------------------

    def usage(self, raw: Any, final: bool, out: list[Event]) -> None:
        """A ``usageMetadata`` snapshot (replaces the last)."""
        if self._usage_seen == (raw, final):
            return  # the same snapshot again
        usage = live_usage(raw, final)
        if usage is None:
            if type(raw) is not dict:
                self.acc.warn("usage_not_object", f"a usageMetadata is not an object: {raw!r:.80}")
            return
        self._usage_seen = (raw, final)
        out.append(self.acc.report_usage(usage))

    def find(self, call_id: str) -> CallBuffer | None:
        """The turn's call with this id."""
        for call in self.acc.calls.by_choice.get(0, ()):
            if call.id == call_id:
                return call
        return None

    def revoke(self, call: CallBuffer, out: list[Event]) -> None:
        """The provider withdrew ``call`` (``toolCallCancellation``)."""
        acc = self.acc
        reason = f"{REVOKED} (toolCallCancellation)"
        if call.invalid_reason is not None and call.invalid_reason.startswith(REVOKED):
            return  # withdrawn already
        if call.state == "valid":
            acc.calls.step(call, "revoke")
        elif call.invalid_reason is not None:
            reason = f"{reason}; it was already rejected: {call.invalid_reason}"
        call.invalid_reason = reason
        acc.cached = None
        out.append(
            ToolCallCompleted(
                index=call.index,
                id=call.id,
                name=call.name,
                type=call.type or "function",
                raw_arguments=call.raw_arguments(),
                arguments=call.arguments,
                invalid_reason=reason,
                executor=call.executor,
                id_source=call.id_source,
                choice=call.choice,
            )
        )


def live_usage(raw: Any, final: bool) -> Usage | None:
    """A Live ``usageMetadata`` as ``Usage``; None when it has no token count."""
    if type(raw) is not dict:
        return None
    prompt = int_or_none(raw.get("promptTokenCount"))
    response = int_or_none(raw.get("responseTokenCount"))
    total = int_or_none(raw.get("totalTokenCount"))
    thoughts = int_or_none(raw.get("thoughtsTokenCount"))
    if prompt is None and response is None and total is None and thoughts is None:
        return None
    if response is None:
        output = thoughts
    else:
        output = response if thoughts is None else response + thoughts
    return Usage(
        input_tokens=prompt,
        output_tokens=output,
        total_tokens=total,
        cache_read_tokens=int_or_none(raw.get("cachedContentTokenCount")),
        reasoning_tokens=thoughts,
        final=final,
        raw=ReadOnlyDict(raw),
    )
