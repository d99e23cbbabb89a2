"""The mutable bookkeeping behind ``StreamResult``, shared by every adapter.

An adapter records what its protocol said (text, calls, usage, errors,
terminal signals) in an ``Accumulator`` while it builds the unified events;
``snapshot()`` turns that into a frozen ``StreamResult``. Statuses follow
docs/design.md "How a stream ends" (checked 2026-11-29), in this precedence, worst
first: ``error`` > ``protocol_conflict`` > ``cancelled`` > ``incomplete`` >
``truncated`` > ``completed``. An error or a conflict decides the status the
moment it arrives, "whatever came before or after it".

``result_from_events`` rebuilds a result from unified events alone: the tests
use it to prove that the events carry everything the result says, and the
gateway translation checks compare results across protocols with it.

Reading ``result`` after every chunk must stay cheap, so a snapshot rebuilds
only what changed since the last one: each text is extended by the pieces
that arrived since (``Joined``), each call's ``ToolCall`` is rebuilt only when
its state or arguments changed, and ``provider_content`` and
``provider_metrics`` are handed out as they are, never copied value by value
(the items are shared by the results of one stream: read-only). What remains
per read is the copy of the texts into fresh ``str`` objects, which a frozen
result needs.
"""

from __future__ import annotations

import bisect
from collections.abc import Callable, Iterable
from typing import Any

from ._core import utf8_length
from ._log import log_conflict, log_error, log_warning
from .events import (
    ErrorPhase,
    ErrorReceived,
    Event,
    MessageCompleted,
    MessageStarted,
    ReasoningDelta,
    RefusalDelta,
    Status,
    StopReason,
    TextDelta,
    ToolCallArgumentsDelta,
    ToolCallCompleted,
    ToolCallStarted,
    UnknownEvent,
    UsageReported,
    new_arguments_delta,
)
from .result import (
    ChoiceResult,
    Metrics,
    ReadOnlyDict,
    StreamError,
    StreamResult,
    StreamWarning,
    Usage,
)
from .toolcalls import ABANDONED, MAX_RECORDS, TOO_DEEP, CallBuffer, ToolCalls
from .tooldefs import ToolSet

__all__ = ["Accumulator", "ChoiceState", "Frozen", "Joined", "result_from_events"]

#: The longest unknown event name or field path a result keeps, and the
#: longest conflict or warning message (longer ones are cut, marked ``...``).
MAX_NAME_CHARS = 200
MAX_MESSAGE_CHARS = 1000
_OTHER = "<other>"

_RANK: dict[Status, int] = {
    "completed": 0,
    "truncated": 1,
    "incomplete": 2,
    "in_progress": 3,
    "cancelled": 4,
    "protocol_conflict": 5,
    "error": 6,
}


class Joined:
    """The join of a list of str pieces that only grows, kept between snapshots.

    ``of(pieces)`` joins only the pieces added since its last call (the list
    is recognized by its length and its last joined piece); if the list was
    rewritten otherwise, it joins it all again. ``nbytes`` is the UTF-8 length
    of the joined text, counted the same way.
    """

    __slots__ = ("count", "last", "nbytes", "start", "text")

    def __init__(self, start: int = 0) -> None:
        #: The pieces joined are ``pieces[start:]``.
        self.start = start
        self.count = start
        self.last: str | None = None
        self.text = ""
        self.nbytes = 0

    def of(self, pieces: list[str]) -> str:
        """``pieces[start:]`` joined."""
        n = len(pieces)
        count = self.count
        fresh = count == self.start
        if n == count and (fresh or pieces[-1] is self.last):
            return self.text
        if n > count and (fresh or pieces[count - 1] is self.last):
            if n == count + 1:
                new = pieces[count]
            else:
                new = "".join(pieces if count == 0 else pieces[count:])
            self.text = new if fresh else self.text + new
            self.nbytes += utf8_length(new)
        else:
            self.text = "".join(pieces[self.start :])
            self.nbytes = utf8_length(self.text)
        self.count = n
        self.last = pieces[-1] if n > self.start else None
        return self.text


class Frozen:
    """``tuple(items)`` of a list that only grows (appends or inserts), rebuilt
    only when its length changed since the last call (or after ``items`` was
    reset: an item was replaced)."""

    __slots__ = ("count", "items", "value")

    def __init__(self) -> None:
        self.items: list[Any] | None = None
        self.count = 0
        self.value: tuple[Any, ...] = ()

    def of(self, items: list[Any]) -> tuple[Any, ...]:
        """The items as a tuple."""
        if items is not self.items or len(items) != self.count:
            self.items = items
            self.count = len(items)
            self.value = tuple(items)
        return self.value


class ChoiceState:
    """What one choice (candidate) produced so far."""

    __slots__ = (
        "finish_reason",
        "frozen_signatures",
        "index",
        "joined",
        "reasoning",
        "refusal",
        "signatures",
        "status",
        "stop_reason",
        "terminal",
        "text",
    )

    def __init__(self, index: int) -> None:
        self.index = index
        self.text: list[str] = []
        self.reasoning: list[str] = []
        self.refusal: list[str] = []
        self.signatures: list[str] = []
        #: The provider's raw stop reason.
        self.finish_reason: str | None = None
        self.stop_reason: StopReason | None = None
        #: The protocol's terminal signal for this choice arrived.
        self.terminal = False
        #: The decided status, once the stream ended.
        self.status: Status | None = None
        #: The snapshot's joins of ``text``, ``reasoning``, ``refusal``, and its signatures.
        self.joined = (Joined(), Joined(), Joined())
        self.frozen_signatures = Frozen()

    def coalesce_tail(self, field: str, parts: list[str], joined: str) -> None:
        """Replaces the tail of one of the choice's piece lists (``"text"`` or
        ``"reasoning"``) by ``joined`` when that tail is ``parts`` (a closing
        block's pieces, whose join is ``joined``): the concatenation is
        unchanged, whichever block each piece came from, and the list holds
        one string instead of every delta. Left as it is when a snapshot
        already joined part of that tail (its ``Joined`` extends the list)."""
        pieces: list[str] = getattr(self, field)
        n = len(parts)
        if n > 1 and pieces[-n:] == parts:
            cache = self.joined[0 if field == "text" else 1]
            if cache.count <= len(pieces) - n:
                pieces[-n:] = [joined]


class Accumulator:
    """Per-stream state: choices, calls, usage, error, conflicts, counters."""

    def __init__(
        self,
        protocol: str,
        *,
        toolset: ToolSet | None = None,
        max_tool_argument_chars: int = 8 * 1024 * 1024,
        max_total_tool_argument_chars: int = 16 * 1024 * 1024,
        max_tool_calls: int = 1024,
        max_content_blocks: int = 4096,
        request_id: str | None = None,
        http_status: int | None = None,
    ) -> None:
        self.protocol = protocol
        self.choices: dict[int, ChoiceState] = {}
        self.conflicts: list[str] = []
        self.calls = ToolCalls(
            toolset=toolset,
            max_argument_chars=max_tool_argument_chars,
            max_total_chars=max_total_tool_argument_chars,
            max_calls=max_tool_calls,
            conflicts=self.conflicts,
        )
        #: The cap on content blocks (output items and parts, Gemini parts), and the count.
        self.max_content_blocks = max_content_blocks
        self.content_blocks = 0
        self.usage: Usage | None = None
        self.error: StreamError | None = None
        self.warnings: list[StreamWarning] = []
        self.unknown_events: dict[str, int] = {}
        self.unknown_fields: dict[str, int] = {}
        self.unknown_count = 0
        self.request_id = request_id
        self.http_ok = None if http_status is None else 200 <= http_status < 300
        self.message_id: str | None = None
        self.model: str | None = None
        #: The provider's own content items, for ``StreamResult.provider_content``;
        #: the list only grows (``add_content``, or appended or inserted by the
        #: adapter), and an item is never changed once added (``replace_content``).
        self.provider_content: list[dict[str, Any]] = []
        #: An adapter that renders its content items itself (Gemini's parts)
        #: sets this instead: the items as a tuple, for each snapshot.
        self.content_view: Callable[[], tuple[dict[str, Any], ...]] | None = None
        #: The block index of each ``provider_content`` item (``add_content``).
        self._content_indexes: list[int] = []
        #: The provider's own metrics, for ``StreamResult.provider_metrics``.
        self.provider_metrics: dict[str, Any] = {}
        #: The caller cancelled.
        self.cancelled = False
        #: The stream ended (its end marker, EOF or cancel): statuses are decided.
        self.ended = False
        #: Set by an adapter when the end was not proper although every choice
        #: finished (e.g. chat's ``strict_done`` without ``[DONE]``).
        self.incomplete_reason: str | None = None
        self.framing_ok = True
        self.deltas_ok = True
        # counters the adapter base keeps up to date
        self.bytes_received = 0
        self.wire_events = 0
        self.events = 0
        self.framing_errors = 0
        self.peak_buffered_bytes = 0
        self.time_to_first_event: float | None = None
        self.time_to_first_content: float | None = None
        self.largest_gap: float | None = None
        self.cached: StreamResult | None = None
        #: Conflicts, warnings and errors go to the ``streamwire`` logger
        #: (off when a result is rebuilt from events already logged).
        self.logs = True
        # What the last snapshot built, reused while unchanged (see the module docstring).
        self._frozen = (Frozen(), Frozen(), Frozen())  # conflicts, warnings, provider_content
        self._unknown_view: tuple[int, Any, Any] = (-1, None, None)

    # --- recording -------------------------------------------------------

    def conflict(self, message: str) -> None:
        """The stream contradicted itself: status ``protocol_conflict``."""
        self.deltas_ok = False
        if len(self.conflicts) < MAX_RECORDS:
            self.conflicts.append(_cut(message, MAX_MESSAGE_CHARS))
            if self.logs:
                log_conflict(self.protocol, self.request_id, len(self.conflicts))

    def warn(self, code: str, message: str) -> None:
        """Records a warning (the first ``MAX_RECORDS`` are kept)."""
        if len(self.warnings) < MAX_RECORDS:
            self.warnings.append(StreamWarning(code=code, message=_cut(message, MAX_MESSAGE_CHARS)))
            if self.logs:
                log_warning(self.protocol, self.request_id, code)

    def unknown_event(self, provider_type: str, raw: str) -> UnknownEvent:
        """Counts an unknown event and returns its ``UnknownEvent``. The result
        keeps the first ``MAX_RECORDS`` names, each cut to ``MAX_NAME_CHARS``,
        and the rest under ``<other>``, with exact counts."""
        _count(self.unknown_events, provider_type)
        self.unknown_count += 1
        return UnknownEvent(provider_type=provider_type, raw=raw)

    def unknown_field(self, path: str) -> None:
        """Counts an unknown field (by its path, e.g. ``choices[].delta.x``),
        kept as ``unknown_event`` keeps names."""
        _count(self.unknown_fields, path)
        self.unknown_count += 1

    def reserve_block(self, out: list[Event]) -> bool:
        """Counts one more content block (an output item or content part, a
        Gemini part); False past ``max_content_blocks``, when the stream ends
        in a ``limit`` error (``too_many_content_blocks``, reported once) and
        the block is not kept."""
        if self.content_blocks < self.max_content_blocks:
            self.content_blocks += 1
            return True
        if self.content_blocks == self.max_content_blocks:
            self.content_blocks += 1  # past the cap: reported once
            message = f"more than max_content_blocks ({self.max_content_blocks}) content blocks"
            out.append(self.fail("limit", "too_many_content_blocks", None, message))
        return False

    def fail(
        self,
        phase: ErrorPhase,
        type: str | None,
        code: str | int | None,
        message: str | None,
        *,
        retryable: bool = False,
        request_id: str | None = None,
        raw: Any = None,
    ) -> ErrorReceived:
        """An error: the first one decides the result's ``error``; all are emitted."""
        request_id = request_id or self.request_id
        if phase == "framing":
            self.framing_ok = False
            self.framing_errors += 1
        elif phase == "limit":
            self.deltas_ok = False
        if self.logs and self.error is None:
            # The first error only: later ones are additional_error warnings,
            # logged (and bounded) as warnings.
            log_error(self.protocol, request_id, phase, type, code)
        if self.error is None:
            self.error = StreamError(
                phase=phase,
                type=type,
                code=code,
                message=message,
                retryable=retryable,
                request_id=request_id,
                raw=raw,
            )
        else:
            self.warn("additional_error", f"a further error arrived: {type}: {message}")
        return ErrorReceived(
            phase=phase,
            type=type,
            code=code,
            message=message,
            retryable=retryable,
            request_id=request_id,
            raw=raw,
        )

    def report_usage(self, usage: Usage) -> UsageReported:
        """A usage report replaces the previous one (reports are cumulative)."""
        self.usage = usage
        return UsageReported(usage=usage)

    # --- deciding --------------------------------------------------------

    def status_of(self, choice: ChoiceState | None) -> Status:
        """The status of one choice (or of a stream without choices) right now."""
        if choice is not None and choice.status is not None:
            return choice.status
        if self.error is not None:
            return "error"
        if self.conflicts:
            return "protocol_conflict"
        if self.cancelled:
            return "cancelled"
        if not self.ended:
            return "in_progress"
        if choice is None or not choice.terminal or self.incomplete_reason is not None:
            return "incomplete"
        if choice.stop_reason == "length":
            return "truncated"
        return "completed"

    def stream_status(self) -> Status:
        """The worst status over every choice and the stream-wide facts."""
        if not self.choices:
            return self.status_of(None)
        return max((self.status_of(c) for c in self.choices.values()), key=_RANK.__getitem__)

    def finish(self) -> list[Event]:
        """The stream ended: decide every status; one ``MessageCompleted`` per choice."""
        if self.ended:
            return []
        self.ended = True
        self.calls.abandon_open()
        if not self.choices:
            self._choice(0)  # a result always has choice 0, even an empty one
        out: list[Event] = []
        for choice in sorted(self.choices.values(), key=_index):
            choice.status = status = self.status_of(choice)
            out.append(
                MessageCompleted(
                    status=status,
                    stop_reason=choice.stop_reason,
                    provider_stop_reason=choice.finish_reason,
                    choice=choice.index,
                )
            )
        self.cached = None
        return out

    def append_arguments(self, call: CallBuffer, fragment: str, out: list[Event]) -> None:
        """Adds a fragment to a call's arguments and emits its
        ``ToolCallArgumentsDelta``. A fragment that would pass
        ``max_tool_argument_chars`` ends the stream in a ``limit`` error
        (``arguments_too_large``); an overflowed call takes no more."""
        if call.overflowed:
            return
        if self.calls.append(call, fragment):
            out.append(new_arguments_delta(call.index, call.id, fragment, call.choice))
        else:
            out.append(self.arguments_too_large(call))

    def complete_call(
        self,
        call: CallBuffer,
        out: list[Event],
        *,
        free_text: bool = False,
        builtin: tuple[str, ...] | None = None,
    ) -> None:
        """Completes a collecting call (``ToolCalls.complete``) and emits its
        ``ToolCallCompleted``. Arguments nested deeper than ``_json.MAX_DEPTH``
        also end the stream in a ``limit`` error (``json_too_deep``), as
        arguments over ``max_tool_argument_chars`` do."""
        completed = self.calls.complete(call, free_text=free_text, builtin=builtin)
        if completed is None:
            return
        out.append(completed)
        if completed.invalid_reason == TOO_DEEP:
            out.append(
                self.fail("limit", "json_too_deep", None, f"tool call {call.index}: {TOO_DEEP}")
            )

    def arguments_too_large(self, call: CallBuffer) -> ErrorReceived:
        """Marks ``call`` overflowed; the stream's ``limit`` error for it."""
        call.overflowed = True
        cap = call.overflow or f"max_tool_argument_chars ({self.calls.max_argument_chars})"
        return self.fail(
            "limit", "tool_arguments_too_large", None, f"tool call {call.index} passed {cap}"
        )

    def add_content(self, index: int, content: dict[str, Any]) -> None:
        """Records a closed content block's item in ``provider_content``,
        which stays in block-index order whatever order blocks close in."""
        position = bisect.bisect(self._content_indexes, index)
        self._content_indexes.insert(position, index)
        self.provider_content.insert(position, content)

    def replace_content(self, old: dict[str, Any], new: dict[str, Any]) -> None:
        """Puts ``new`` in the place of the ``provider_content`` item ``old``: an
        item that changes is replaced, never changed in place, because the
        results already read share it."""
        items = self.provider_content
        for position in range(len(items) - 1, -1, -1):
            if items[position] is old:
                items[position] = new
                self._frozen[2].items = None  # same length, new items: rebuild
                return

    # --- the snapshot ----------------------------------------------------

    def snapshot(self) -> StreamResult:
        """The frozen ``StreamResult`` for what was recorded so far (cached)."""
        if self.cached is not None:
            return self.cached
        status = self.stream_status()
        ordered = sorted(self.choices.values(), key=_index)
        results = [self._choice_result(c, status) for c in ordered]
        first = next((r for r in results if r.index == 0), None)
        text_bytes = sum(c.joined[0].nbytes for c in ordered)
        calls = [c for r in results for c in r.tool_calls]
        argument_bytes = self.calls.argument_bytes()
        count, unknown_events, unknown_fields = self._unknown_view
        if count != self.unknown_count:
            unknown_events = ReadOnlyDict(self.unknown_events)
            unknown_fields = ReadOnlyDict(self.unknown_fields)
            self._unknown_view = (self.unknown_count, unknown_events, unknown_fields)
        conflicts, warnings, content = self._frozen
        view = self.content_view
        metrics = Metrics(
            bytes_received=self.bytes_received,
            wire_events=self.wire_events,
            events=self.events,
            time_to_first_event=self.time_to_first_event,
            time_to_first_content=self.time_to_first_content,
            largest_gap=self.largest_gap,
            unknown_events=self.unknown_count,
            framing_errors=self.framing_errors,
            text_bytes=text_bytes,
            argument_bytes=argument_bytes,
            peak_buffered_bytes=self.peak_buffered_bytes,
        )
        result = StreamResult(
            protocol=self.protocol,
            status=status,
            final=self.ended,
            text="" if first is None else first.text,
            reasoning="" if first is None else first.reasoning,
            refusal="" if first is None else first.refusal,
            tool_calls=() if first is None else first.tool_calls,
            executable=False if first is None else first.executable,
            not_executable_reason=(
                self.calls.release(0, status, None)[1]
                if first is None
                else first.not_executable_reason
            ),
            stop_reason=None if first is None else first.stop_reason,
            provider_stop_reason=None if first is None else first.provider_stop_reason,
            usage=self.usage,
            error=self.error,
            choices=tuple(results),
            message_id=self.message_id,
            model=self.model,
            unknown_events=unknown_events,
            unknown_fields=unknown_fields,
            conflicts=conflicts.of(self.conflicts),
            warnings=warnings.of(self.warnings),
            metrics=metrics,
            http_ok=self.http_ok,
            framing_ok=self.framing_ok,
            deltas_ok=self.deltas_ok and not self.conflicts,
            tool_args_complete=all(
                c.arguments is not None and c.invalid_reason != ABANDONED for c in calls
            ),
            provider_content=content.of(self.provider_content) if view is None else view(),
            provider_metrics=ReadOnlyDict(self.provider_metrics),
        )
        self.cached = result
        return result

    def _choice_result(self, choice: ChoiceState, stream_status: Status) -> ChoiceResult:
        status = self.status_of(choice)
        # docs/design.md: executable only when the *stream* completed; with n > 1 a
        # truncated or unfinished sibling choice holds back every batch.
        verdict = self.calls.release(choice.index, stream_status, choice.stop_reason)
        text, reasoning, refusal = choice.joined
        return ChoiceResult(
            index=choice.index,
            status=status,
            text=text.of(choice.text),
            reasoning=reasoning.of(choice.reasoning),
            reasoning_signatures=choice.frozen_signatures.of(choice.signatures),
            refusal=refusal.of(choice.refusal),
            tool_calls=self.calls.snapshot(choice.index, verdict),
            executable=verdict[0],
            not_executable_reason=verdict[1],
            stop_reason=choice.stop_reason,
            provider_stop_reason=choice.finish_reason,
        )

    # --- replaying unified events -----------------------------------------

    def apply(self, event: Event) -> None:
        """Records one unified event (see ``result_from_events``)."""
        kind = type(event)
        if kind is TextDelta or kind is RefusalDelta or kind is ReasoningDelta:
            self._apply_content(event)
        elif isinstance(event, MessageStarted):
            self._choice(event.choice)
            self.message_id = self.message_id or event.message_id
            self.model = self.model or event.model
        elif isinstance(event, ToolCallStarted):
            call = self.calls.open((event.choice, event.index), event.choice, event.executor)
            if call is not None:
                call.set_identity("id", event.id)
                call.set_identity("name", event.name)
                call.set_identity("type", event.type)
                call.id_source = event.id_source
        elif isinstance(event, ToolCallArgumentsDelta):
            call = self.calls.by_key.get((event.choice, event.index))
            if call is not None:
                self.calls.append(call, event.delta)
        elif isinstance(event, ToolCallCompleted):
            self._apply_completed(event)
        elif isinstance(event, UsageReported):
            self.usage = event.usage
        elif isinstance(event, ErrorReceived):
            self.fail(
                event.phase,
                event.type,
                event.code,
                event.message,
                retryable=event.retryable,
                request_id=event.request_id,
                raw=event.raw,
            )
        elif isinstance(event, UnknownEvent):
            self.unknown_event(event.provider_type, event.raw)
        elif isinstance(event, MessageCompleted):
            choice = self._choice(event.choice)
            choice.finish_reason = event.provider_stop_reason
            choice.stop_reason = event.stop_reason
            choice.status = event.status
            choice.terminal = event.status in ("completed", "truncated")
            self.ended = True
            self.calls.abandon_open()
        self.cached = None

    def _apply_content(self, event: Event) -> None:
        if isinstance(event, TextDelta):
            self._choice(event.choice).text.append(event.text)
        elif isinstance(event, RefusalDelta):
            self._choice(event.choice).refusal.append(event.text)
        elif isinstance(event, ReasoningDelta):
            choice = self._choice(event.choice)
            choice.reasoning.append(event.text)
            if event.signature:
                choice.signatures.append(event.signature)

    def _apply_completed(self, event: ToolCallCompleted) -> None:
        call = self.calls.by_key.get((event.choice, event.index))
        if call is None:
            return
        call.set_identity("id", event.id)
        call.set_identity("name", event.name)
        call.raw = event.raw_arguments
        call.parts = []
        call.arguments = event.arguments
        call.invalid_reason = event.invalid_reason
        call.state = "rejected" if event.invalid_reason else "valid"
        # A later completion may hand the call to the provider (gemini's server turns).
        call.executor = event.executor

    def _choice(self, index: int) -> ChoiceState:
        choice = self.choices.get(index)
        if choice is None:
            choice = self.choices[index] = ChoiceState(index)
        return choice


def result_from_events(events: Iterable[Event], *, protocol: str) -> StreamResult:
    """Rebuilds a ``StreamResult`` from unified events alone.

    Counters that only the wire knows (bytes, framing events, timings) are
    zero, and conflicts are not re-derived; everything the events state
    (text, reasoning, refusals, calls, usage, error, statuses, stop reasons)
    is reproduced.
    """
    acc = Accumulator(protocol)
    acc.logs = False
    count = 0
    for event in events:
        acc.apply(event)
        count += 1
    acc.events = count
    return acc.snapshot()


def _cut(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _count(counts: dict[str, int], key: str) -> None:
    key = _cut(key, MAX_NAME_CHARS)
    if key not in counts and len(counts) >= MAX_RECORDS:
        key = _OTHER
    counts[key] = counts.get(key, 0) + 1


def _index(choice: ChoiceState) -> int:
    return choice.index
