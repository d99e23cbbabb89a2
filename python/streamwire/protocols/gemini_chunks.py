"""Gemini ``GenerateContentResponse`` chunks into unified events: candidates, endings, usage.

The semantics shared by ``gemini`` (SSE) and ``gemini-json`` (one JSON
array): each chunk of ``streamGenerateContent`` is a complete
``GenerateContentResponse`` whose ``candidates[].content.parts`` are *new*
parts (Gemini API reference, ai.google.dev/api/generate-content, and the
Vertex AI reference of the same messages; checked 2026-11-29). What each
field becomes, and the edge cases real streams show, are
docs/protocols/gemini.md; parts are ``gemini_parts.py``'s, enums sent as
numbers ``gemini_enums.py``'s.

Each candidate (keyed by ``index``, 0 when absent) is a small machine with
its transitions as data (``CANDIDATE_TRANSITIONS``)::

    open     --content--> open       (parts -> events, gemini_parts.py)
    open     --response-> open       (parts; the calls they answer are the server's)
    open     --finish---> finished   (any finishReason is terminal)
    finished --content--> finished   (protocol conflict: content after the end)
    finished --response-> open       (a STOP that ended a turn of server calls: resumed)
    finished --finish---> finished   (the same reason again: no-op; another: conflict)
    *        --empty----> *          (no parts, or parts that carry nothing)

``usageMetadata`` is a snapshot on every chunk: each replaces the last, one
``UsageReported`` per change, final once every candidate seen finished.

The fast path: nearly every chunk of a long answer is one candidate's one
text part plus a usage snapshot (``SHAPES``), matched in Rust and taken in
Rust while the state allows (``arm``, ``take``, ``fast_text``); tested equal
with it off (``tests/test_gemini.py``, ``tests/test_gemini_json.py``).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any, Literal, get_args

from .._core import Builder, ShapeMatcher, TextUsageTaker
from .._json import loads
from ..accumulate import Accumulator, ChoiceState
from ..errors import UsageError
from ..events import (
    Event,
    MessageStarted,
    StopReason,
    UsageReported,
    new_text_delta,
    new_usage_reported,
    text_delta_builder,
)
from ..kinds import EnumNumbering
from ..result import ReadOnlyDict, Usage
from ._base import retryable_hint
from ._values import RAW_CAP, dump, nonempty_str
from .gemini_enums import BLOCK_REASONS, FINISH_REASONS, Reading, read_enum, shown
from .gemini_parts import Candidate, GeminiParts

__all__ = ["CANDIDATE_TRANSITIONS", "SHAPES", "GeminiChunks"]

CandidatePhase = Literal["open", "finished"]
CandidateInput = Literal["content", "response", "finish", "empty"]

#: ``(phase, input) -> (action, next phase)``: the per-candidate machine.
CANDIDATE_TRANSITIONS: Mapping[
    tuple[CandidatePhase, CandidateInput], tuple[str, CandidatePhase]
] = {
    ("open", "content"): ("apply", "open"),
    ("open", "response"): ("serve", "open"),
    ("open", "finish"): ("finish", "finished"),
    ("open", "empty"): ("nothing", "open"),
    ("finished", "content"): ("after_finish", "finished"),
    ("finished", "response"): ("resume", "open"),
    ("finished", "finish"): ("refinish", "finished"),
    ("finished", "empty"): ("nothing", "finished"),
}
CANDIDATE_PHASES: tuple[CandidatePhase, ...] = ("open", "finished")
CANDIDATE_INPUTS: tuple[CandidateInput, ...] = ("content", "response", "finish", "empty")

_FILTERED = frozenset(
    {
        "SAFETY",
        "RECITATION",
        "BLOCKLIST",
        "PROHIBITED_CONTENT",
        "SPII",
        "IMAGE_SAFETY",
        "IMAGE_PROHIBITED_CONTENT",
        "IMAGE_RECITATION",
        "MODEL_ARMOR",
    }
)
#: Finish reasons that say the generation failed: status ``error``.
FAILED = frozenset(
    {
        "MALFORMED_FUNCTION_CALL",
        "UNEXPECTED_TOOL_CALL",
        "TOO_MANY_TOOL_CALLS",
        "MALFORMED_RESPONSE",
        "MISSING_THOUGHT_SIGNATURE",
    }
)
STOP_REASONS: Mapping[str, StopReason] = {
    "STOP": "stop",
    "MAX_TOKENS": "length",
    **dict.fromkeys(_FILTERED, "content_filter"),
    **dict.fromkeys(FAILED, "error"),
}
_CHUNK_FIELDS = frozenset(
    {
        "candidates",
        "usageMetadata",
        "modelVersion",
        "responseId",
        "createTime",
        "promptFeedback",
        "error",
        "modelStatus",
    }
)
_CANDIDATE_FIELDS = frozenset(
    {
        "content",
        "finishReason",
        "finishMessage",
        "index",
        "safetyRatings",
        "citationMetadata",
        "groundingMetadata",
        "groundingAttributions",
        "avgLogprobs",
        "logprobsResult",
        "tokenCount",
        "urlContextMetadata",
        "urlRetrievalMetadata",
    }
)
_CONTENT_FIELDS = frozenset({"parts", "role"})

#: The fast path's chunk shape, matched in Rust (``_core.ShapeMatcher``): one
#: candidate with one text part and nothing else to act on; it captures
#: (text, candidate index or None, usageMetadata's JSON text or None,
#: responseId or None). Every other field it admits is one the general path
#: ignores; anything else (an unknown field, which the general path counts)
#: declines.
SHAPES = ShapeMatcher(
    [
        (
            "message",
            {
                "candidates": [
                    {
                        "content": {"parts": [{"text": "$str"}], "role?": "$any"},
                        "index?": "$int",
                    }
                ],
                "usageMetadata?": "$raw",
                "modelVersion?": "$any",
                "responseId?": "$str",
                "createTime?": "$any",
            },
        )
    ]
)


class GeminiChunks:
    """Applies Gemini response chunks to a stream's accumulator (one per stream)."""

    #: As the stream's match sink (``arm``), ``settle`` takes over the usage
    #: the taker read (``MatchSink``).
    settles = True

    def __init__(
        self,
        acc: Accumulator,
        *,
        max_candidates: int = 128,
        enum_numbering: EnumNumbering = "either",
    ) -> None:
        if enum_numbering not in get_args(EnumNumbering):
            raise UsageError(
                f"enum_numbering must be one of {get_args(EnumNumbering)}, not {enum_numbering!r}"
            )
        self._acc = acc
        self._max_candidates = max_candidates
        self._numbering: EnumNumbering = enum_numbering
        self.parts = GeminiParts(acc)
        #: Candidates by index, with their machine phase.
        self.candidates: dict[int, Candidate] = {}
        self._phases: dict[int, CandidatePhase] = {}
        self._open_count = 0
        self._usage_raw: Any = None
        self._usage_final = False
        #: The JSON text of the last usage the fast path saw (None: unknown).
        self._usage_text: str | None = None
        self._taker = TextUsageTaker(
            0,
            text=text_delta_builder,
            usage=_USAGE,
            reported=_REPORTED,
            mapping=ReadOnlyDict,
            figures=_FIGURES,
            required=_REQUIRED,
        )
        acc.content_view = self.provider_content

    def provider_content(self) -> tuple[dict[str, Any], ...]:
        """Candidate 0's parts in Gemini's request format (``StreamResult.provider_content``)."""
        cand = self.candidates.get(0)
        return () if cand is None else cand.provider_content()

    # --- chunks ----------------------------------------------------------

    def on_chunk(self, chunk: Any, out: list[Event]) -> None:
        """Applies one decoded chunk (one SSE event's data, one array element)."""
        self._on_chunk(chunk, out)

    def take(self, units: Sequence[Any], at: int, out: list[Event]) -> int:
        """The fast path for a run: takes the chunks of ``SHAPES`` from
        ``units[at]`` on (match tuples, ``units[at]`` one) in Rust while each
        would take ``fast_text``'s path without a branch (the candidate's
        plain text run open, the usage not final, a snapshot the Rust decoder
        takes), doing exactly what it does (``_core.TextUsageTaker``); returns
        the index of the first unit not taken."""
        if type(units) is not list:
            return at
        index = units[at][2]
        cand = self.candidates.get(0 if index is None else index)
        if cand is None or not cand.plain or cand.state.terminal or self._usage_final:
            return at
        taker = self._taker
        state = cand.state
        known = self.parts.response_id is not None
        end: int = taker.take(
            units, at, out, state.index, state.text, known, self._usage_text, self._usage_raw
        )
        if end != at:
            self._usage_text = taker.usage_text
            usage = taker.usage
            if usage is not None:
                self._usage_raw = taker.usage_raw
                self._acc.usage = usage
        return end

    def arm(self) -> TextUsageTaker | None:
        """The taker, armed for the next ``feed_matched`` call as its sink
        (it takes the chunks ``take`` would, before they become tuples), or
        None when candidate 0's state rules the fast path out; ``settle``
        must follow a call it armed the taker for."""
        cand = self.candidates.get(0)
        if cand is None or not cand.plain or cand.state.terminal or self._usage_final:
            return None
        state = cand.state
        known = self.parts.response_id is not None
        taker = self._taker
        taker.arm(state.index, state.text, known, self._usage_text, self._usage_raw)
        return taker

    def settle(self) -> None:
        """Takes over the state an armed taker ended its call in."""
        taker = self._taker
        if taker.sunk:
            self._usage_text = taker.usage_text
            usage = taker.usage
            if usage is not None:
                self._usage_raw = taker.usage_raw
                self._acc.usage = usage

    def fast_text(
        self,
        text: str,
        index: int | None,
        usage_text: str | None,
        response_id: str | None,
        out: list[Event],
    ) -> bool:
        """The fast path: a chunk of ``SHAPES`` (one candidate, one text part,
        usage), matched in Rust. Does exactly what ``on_chunk`` does with it, or
        nothing and returns False when the state rules it out (a candidate not
        started or finished, a response id not yet known)."""
        cand = self.candidates.get(0 if index is None else index)
        if cand is None or cand.state.terminal:
            return False
        if response_id is not None and self.parts.response_id is None:
            return False
        if text:  # GeminiParts.text, inlined
            if not cand.plain:
                if not self._acc.reserve_block(out):  # max_content_blocks
                    return False  # the general path drops the part
                cand.open_plain()
            state = cand.state
            state.text.append(text)
            out.append(new_text_delta(text, state.index))
        if usage_text is not None and (usage_text != self._usage_text or self._usage_final):
            raw = loads(usage_text)
            if raw is not None:  # a null usageMetadata is none, as on the general path
                self._on_usage(raw, out)
            if type(raw) is dict:  # anything else is warned about (or ignored) each time
                self._usage_text = usage_text
        return True

    def _on_chunk(self, chunk: Any, out: list[Event]) -> None:
        acc = self._acc
        if type(chunk) is not dict:
            message = "a chunk is not a JSON object"
            out.append(acc.fail("framing", "invalid_payload", None, message))
            return
        response_id = chunk.get("responseId")
        if self.parts.response_id is None and type(response_id) is str and response_id:
            self.parts.response_id = response_id
        candidates = chunk.get("candidates")
        if candidates is not None:
            if type(candidates) is list:
                for candidate in candidates:
                    self._on_candidate(candidate, chunk, out)
            else:
                acc.conflict("'candidates' is not a list")
        feedback = chunk.get("promptFeedback")
        if feedback is not None:
            self._on_feedback(feedback, chunk, out)
        usage = chunk.get("usageMetadata")
        if usage is not None:
            self._on_usage(usage, out)
            self._usage_text = None
        error = chunk.get("error")
        if error:
            self._on_error(error, out)
        elif candidates is None and usage is None and feedback is None:
            # Not a response chunk: an unknown event as a whole (fields not counted).
            out.append(
                acc.unknown_event(
                    "chunk-without-candidates", dump(chunk, spacing="spaced", cap=RAW_CAP)
                )
            )
            return
        if not _CHUNK_FIELDS.issuperset(chunk):
            for key in chunk:
                if key not in _CHUNK_FIELDS:
                    acc.unknown_field(key)

    # --- candidates ------------------------------------------------------

    def _on_candidate(self, candidate: Any, chunk: dict[str, Any], out: list[Event]) -> None:
        acc = self._acc
        if type(candidate) is not dict:
            acc.conflict("a candidate is not an object")
            return
        index = candidate.get("index", 0)
        if type(index) is not int or index < 0:
            acc.conflict(f"a candidate index is not a non-negative integer: {index!r}")
            return
        cand = self.candidates.get(index)
        if cand is None:
            cand = self._start(index, chunk, candidate.get("content"), out)
            if cand is None:
                return
        content = candidate.get("content")
        parts = content.get("parts") if type(content) is dict else None
        if content is not None:
            if type(content) is not dict:
                acc.conflict(f"the content of candidate {index} is not an object")
            elif type(parts) is not list and parts is not None:
                acc.conflict(f"the parts of candidate {index} are not a list")
                parts = None
            elif not _CONTENT_FIELDS.issuperset(content):
                for key in content:
                    if key not in _CONTENT_FIELDS:
                        acc.unknown_field("candidates[].content." + key)
        self._step(cand, self._input(cand, parts), parts, out)
        finish = candidate.get("finishReason")
        if finish is not None and finish != "":
            self._step(cand, "finish", candidate, out)
        if not _CANDIDATE_FIELDS.issuperset(candidate):
            for key in candidate:
                if key not in _CANDIDATE_FIELDS:
                    acc.unknown_field("candidates[]." + key)

    def _start(
        self, index: int, chunk: dict[str, Any], content: Any, out: list[Event]
    ) -> Candidate | None:
        acc = self._acc
        if len(self.candidates) >= self._max_candidates:
            if acc.error is None or acc.error.type != "too_many_choices":
                message = f"more than max_candidates ({self._max_candidates}) candidates"
                out.append(acc.fail("limit", "too_many_choices", None, message))
            return None
        state = acc.choices.get(index)
        if state is None:
            state = acc.choices[index] = ChoiceState(index)
        cand = self.candidates[index] = self.parts.candidate(state)
        self._phases[index] = "open"
        self._open_count += 1
        message_id = nonempty_str(chunk.get("responseId"))
        model = nonempty_str(chunk.get("modelVersion"))
        if acc.message_id is None:
            acc.message_id = message_id
        if acc.model is None:
            acc.model = model
        role = nonempty_str(content.get("role")) if type(content) is dict else None
        out.append(MessageStarted(message_id=message_id, model=model, role=role, choice=index))
        return cand

    def _input(self, cand: Candidate, parts: list[Any] | None) -> CandidateInput:
        """What a candidate's new parts are to its machine: ``response`` when
        they answer its calls (``functionResponse`` parts, see the module
        docstring); after a finish, only answers to calls made before a
        ``STOP`` are."""
        if not parts or not _carries(parts):
            return "empty"
        if not any(type(p) is dict and "functionResponse" in p for p in parts):
            return "content"
        if self._phases[cand.state.index] == "open":
            return "response"
        if cand.state.finish_reason == "STOP" and self.parts.answers(cand, parts):
            return "response"
        return "content"

    def _step(self, cand: Candidate, input: CandidateInput, data: Any, out: list[Event]) -> None:
        """Takes the ``CANDIDATE_TRANSITIONS`` transition and performs its action."""
        index = cand.state.index
        action, self._phases[index] = CANDIDATE_TRANSITIONS[self._phases[index], input]
        if action == "apply":
            self.parts.on_parts(cand, data, out)
        elif action == "serve" or action == "resume":
            if action == "resume":
                self._reopen(cand)
            self.parts.on_parts(cand, data, out)
            self.parts.serve(cand, data, out)
        elif action == "finish":
            self._finish(cand, data, out)
        elif action == "after_finish":
            self._acc.conflict(
                f"candidate {index} sent content after its finishReason "
                f"{cand.state.finish_reason!r}; it was ignored"
            )
        elif action == "refinish":
            value = data.get("finishReason")
            reading = self._reason(cand, value, report=False)
            reason = shown(value) if reading is None else reading.raw
            if reason != cand.state.finish_reason:
                self._acc.conflict(
                    f"candidate {index} changed its finishReason from "
                    f"{cand.state.finish_reason!r} to {reason!r}"
                )

    def _reason(self, cand: Candidate, value: Any, *, report: bool = True) -> Reading | None:
        """A ``finishReason``, a name or a number (``gemini_enums.py``)."""
        where = f"the finishReason of candidate {cand.state.index}"
        reading = read_enum(value, FINISH_REASONS, self._numbering, where)
        if reading is None:
            message = f"{where} is neither an enum name nor a number: {shown(value)}"
            if report:
                self._acc.conflict(message)
            return None
        if reading.warning is not None and report:
            self._acc.warn(*reading.warning)
        return reading

    def _finish(self, cand: Candidate, candidate: dict[str, Any], out: list[Event]) -> None:
        acc = self._acc
        state = cand.state
        value = candidate.get("finishReason")
        reading = self._reason(cand, value)
        reason = shown(value) if reading is None else reading.raw
        self.parts.finish(cand, out)
        stop = _stop_of(() if reading is None else reading.names)
        if stop == "stop" and any(
            c.executor == "client" for c in acc.calls.by_choice.get(state.index, ())
        ):
            stop = "tool_calls"
        elif stop == "error":
            message = nonempty_str(candidate.get("finishMessage")) or (
                f"the provider ended candidate {state.index} with finishReason {reason}"
            )
            out.append(acc.fail("provider", reason, None, message, retryable=False, raw=candidate))
        self._end(cand, reason, stop)

    def _end(self, cand: Candidate, reason: str, stop: StopReason) -> None:
        state = cand.state
        state.finish_reason = reason
        state.stop_reason = stop
        state.terminal = True
        self._phases[state.index] = "finished"
        self._open_count -= 1

    def _reopen(self, cand: Candidate) -> None:
        """The candidate's ``STOP`` ended a turn of calls the provider answers
        itself: it goes on (its machine is back in ``open``)."""
        state = cand.state
        state.finish_reason = state.stop_reason = None
        state.terminal = False
        self._open_count += 1

    def _on_feedback(self, feedback: Any, chunk: dict[str, Any], out: list[Event]) -> None:
        if type(feedback) is not dict:
            self._acc.conflict("'promptFeedback' is not an object")
            return
        value = feedback.get("blockReason")
        if not value:
            return  # safety ratings only
        where = "promptFeedback.blockReason"
        reading = read_enum(value, BLOCK_REASONS, self._numbering, where)
        if reading is None:
            self._acc.conflict(f"{where} is neither an enum name nor a number: {shown(value)}")
            reason = shown(value)
        else:
            reason = reading.raw
            if reading.warning is not None:
                self._acc.warn(*reading.warning)
        detail = nonempty_str(feedback.get("blockReasonMessage"))
        self._acc.warn("prompt_blocked", f"the prompt was blocked ({reason}): {detail or ''}")
        if not self.candidates:
            self._start(0, chunk, None, out)
        for cand in self.candidates.values():
            if not cand.state.terminal:
                self.parts.finish(cand, out)
                self._end(cand, reason, "content_filter")

    # --- usage and errors ------------------------------------------------

    def _on_usage(self, raw: Any, out: list[Event]) -> None:
        final = bool(self.candidates) and self._open_count == 0
        if final == self._usage_final and raw == self._usage_raw:
            return  # the same snapshot again
        if type(raw) is not dict:
            self._acc.warn("usage_not_object", f"a usageMetadata is not an object: {raw!r:.80}")
            return
        get = raw.get
        prompt, candidates, total = get("promptTokenCount"), get("candidatesTokenCount"), None
        total, thoughts, cached = get("totalTokenCount"), get("thoughtsTokenCount"), None
        if type(prompt) is not int:
            prompt = None
        if type(candidates) is not int:
            candidates = None
        if type(total) is not int:
            total = None
        if type(thoughts) is not int:
            thoughts = None
        if prompt is None and candidates is None and total is None and thoughts is None:
            return  # no figures (e.g. only trafficType)
        cached = get("cachedContentTokenCount")
        if type(cached) is not int:
            cached = None
        self._usage_raw = raw
        self._usage_final = final
        if candidates is None:
            output = thoughts
        else:
            output = candidates if thoughts is None else candidates + thoughts
        usage = _new_usage(prompt, output, total, cached, thoughts, final, ReadOnlyDict(raw), None)
        self._acc.usage = usage
        out.append(new_usage_reported(usage))

    def _on_error(self, error: Any, out: list[Event]) -> None:
        if type(error) is dict:
            status = nonempty_str(error.get("status"))
            code = error.get("code")
            if type(code) is not str and type(code) is not int:
                code = None
            message = nonempty_str(error.get("message"))
        else:
            status = code = None
            message = error if type(error) is str else repr(error)
        retryable = retryable_hint(status, code, code)
        out.append(
            self._acc.fail("provider", status, code, message, retryable=retryable, raw=error)
        )


# Usage and UsageReported are built once per changed snapshot (on every chunk
# of a long answer): like events.new_text_delta, object.__new__ plus the slots'
# own descriptors, faster than the frozen dataclasses' __init__ (tested equal).
#: ``Usage(...)`` with every field given, built fast (``events.py``), as
#: ``_new_usage(input, output, total, cache_read, reasoning, final, raw,
#: cache_creation)``.
_USAGE = Builder(
    Usage,
    "input_tokens",
    "output_tokens",
    "total_tokens",
    "cache_read_tokens",
    "reasoning_tokens",
    "final",
    "raw",
    "cache_creation_tokens",
)
_new_usage: Callable[
    [int | None, int | None, int | None, int | None, int | None, bool, Mapping[str, Any], None],
    Usage,
] = _USAGE.one
_REPORTED = Builder(UsageReported, "usage")
#: ``_on_usage``'s figures for ``TextUsageTaker``: the keys each of
#: ``_USAGE``'s first fields sums, and those of which one must be an integer
#: for a snapshot to be a report.
_FIGURES = [
    ["promptTokenCount"],
    ["candidatesTokenCount", "thoughtsTokenCount"],
    ["totalTokenCount"],
    ["cachedContentTokenCount"],
    ["thoughtsTokenCount"],
]
_REQUIRED = ["promptTokenCount", "candidatesTokenCount", "totalTokenCount", "thoughtsTokenCount"]


def _stop_of(names: tuple[str, ...]) -> StopReason:
    """The stop reason of a finish reason's names: what they all mean, else ``other``."""
    stops = {STOP_REASONS.get(name, "other") for name in names}
    return stops.pop() if len(stops) == 1 else "other"


def _carries(parts: list[Any]) -> bool:
    """Whether the parts carry anything (an empty text part alone does not)."""
    for part in parts:
        if type(part) is not dict:
            return True  # malformed: let the parts layer record it
        for key, value in part.items():
            if key == "text":
                if value != "":
                    return True
            elif key != "thought":
                return True
    return False
