"""Tool calls: per-call buffers, the per-call state machine, batch release, a ledger.

Shared by every protocol adapter; implements docs/design.md "Tool calls" (checked
2026-11-29). The state machine is data, in the manner of h11's ``_state.py``:
``TRANSITIONS`` maps ``(state, input)`` to the next state, and any pair not in
it is an illegal transition that raises ``ToolCallStateError`` and is recorded.

Adapter side (driven by the stream)::

    collecting --fragment--> collecting
    collecting --complete--> complete --accept--> valid
                                      --reject--> rejected
    collecting --abandon---> rejected      (the stream ended first)
    valid      --revoke----> rejected      (the provider withdrew the call)

Caller side (driven through a ``ToolLedger``)::

    valid --authorize--> authorized --start--> executing --succeed--> succeeded
                                                         --fail-----> failed

Each call has its own buffer, keyed as its protocol keys it (chat: choice and
``tool_calls`` index; anthropic: content-block index; responses: item id).
Identity fields are set once: a repeat of the same value is a no-op, a
different value is a protocol conflict. Every id is counted per choice as it
is set, so the duplicate check at completion is one lookup, whatever the
number of calls. Arguments accumulate as a list of fragments, joined and
parsed once when the call completes. Whether calls may be executed is
decided for the whole batch (a choice's calls) when the stream ends: all of
them or none.

Argument memory is bounded twice (docs/design.md "Limits and memory"): per
call by ``max_tool_argument_chars``, and per stream by
``max_total_tool_argument_chars``. Fragments are kept compactly: a call may
grow up to its ``allowance`` without a check beyond one comparison (the
adapters' fast paths make only that one); past it, ``make_room`` joins the
fragments received since the last time into one string (a two-character
fragment alone costs ~30 bytes per character, a joined one 1) and grants the
call more of the stream's budget, about 64 fragments' worth at a time.
"""

from __future__ import annotations

from collections.abc import Hashable, Mapping
from typing import TYPE_CHECKING, Any, Literal, get_args

from . import _json
from ._core import utf8_length
from .errors import UsageError
from .events import ToolCallCompleted, ToolCallStarted
from .kinds import CallState, Executor, IdSource
from .result import StreamResult, ToolCall

if TYPE_CHECKING:
    from .tooldefs import ToolSet

__all__ = [
    "ABANDONED",
    "MAX_RECORDS",
    "TOO_DEEP",
    "TRANSITIONS",
    "CallInput",
    "CallState",
    "IdSource",
    "ToolCall",
    "ToolCallStateError",
    "ToolLedger",
    "transition",
]

CallInput = Literal[
    # adapter side
    "fragment",
    "complete",
    "accept",
    "reject",
    "abandon",
    "revoke",
    # caller side
    "authorize",
    "start",
    "succeed",
    "fail",
]

#: The per-call state machine: ``(state, input) -> next state``. Nothing else is legal.
TRANSITIONS: Mapping[tuple[CallState, CallInput], CallState] = {
    ("collecting", "fragment"): "collecting",
    ("collecting", "complete"): "complete",
    ("collecting", "abandon"): "rejected",
    ("complete", "accept"): "valid",
    ("complete", "reject"): "rejected",
    ("valid", "revoke"): "rejected",
    ("valid", "authorize"): "authorized",
    ("authorized", "start"): "executing",
    ("executing", "succeed"): "succeeded",
    ("executing", "fail"): "failed",
}
STATES: tuple[CallState, ...] = get_args(CallState)
#: The ``invalid_reason`` of a call whose stream ended before the call completed.
ABANDONED = "the stream ended before the call was complete"
#: Caps on what a result keeps for logging (conflicts, warnings, unknown
#: names, violations), so a hostile stream cannot grow them.
MAX_RECORDS = 100
#: The fewest and most characters ``make_room`` grants a call at a time.
_GRANT_MIN = 256
_GRANT_MAX = 1 << 16
#: About how many fragments a grant is sized for (between two compactions).
_GRANT_FRAGMENTS = 64
#: The ``invalid_reason`` of a call whose arguments nest deeper than ``_json.MAX_DEPTH``.
TOO_DEEP = f"the arguments nest deeper than {_json.MAX_DEPTH} levels"
INPUTS: tuple[CallInput, ...] = get_args(CallInput)


class ToolCallStateError(UsageError):
    """An illegal tool-call transition (or an unauthorized execution) was refused.

    Attributes: ``call_id``, ``state`` (the state the call was in), ``input``
    (what was attempted) and ``reason``.
    """

    def __init__(
        self, call_id: str | None, state: CallState | None, input: CallInput, reason: str
    ) -> None:
        super().__init__(f"tool call {call_id!r}: cannot {input} ({reason})")
        self.call_id = call_id
        self.state = state
        self.input = input
        self.reason = reason


def transition(state: CallState, input: CallInput, call_id: str | None = None) -> CallState:
    """The state after ``input``; raises ``ToolCallStateError`` if it is not legal."""
    try:
        return TRANSITIONS[state, input]
    except KeyError:
        raise ToolCallStateError(call_id, state, input, f"illegal in state {state}") from None


class CallBuffer:
    """The mutable state of one call while its stream runs (adapter-internal)."""

    __slots__ = (
        "allowance",
        "arguments",
        "choice",
        "executor",
        "id",
        "id_source",
        "ids",
        "index",
        "invalid_reason",
        "mark",
        "marked_size",
        "name",
        "overflow",
        "overflowed",
        "parts",
        "raw",
        "size",
        "snapshot",
        "state",
        "type",
    )

    def __init__(
        self, choice: int, index: int, executor: Executor, ids: dict[str, int] | None = None
    ) -> None:
        self.choice = choice
        self.index = index
        self.executor: Executor = executor
        #: How many calls of the choice have each id (``ToolCalls.ids``).
        self.ids: dict[str, int] = {} if ids is None else ids
        self.id: str | None = None
        self.id_source: IdSource = "provider"
        self.name: str | None = None
        self.type: str | None = None
        self.parts: list[str] = []
        #: Characters of arguments so far, and how far they may grow before
        #: ``ToolCalls.make_room`` is asked (0: at the first fragment).
        self.size = 0
        self.allowance = 0
        #: ``parts[:mark]`` is compacted (``marked_size`` characters).
        self.mark = 0
        self.marked_size = 0
        self.overflowed = False
        #: The cap an overflowed call passed (``max_tool_argument_chars`` or
        #: ``max_total_tool_argument_chars``).
        self.overflow = ""
        self.state: CallState = "collecting"
        self.raw: str | None = None
        self.arguments: dict[str, Any] | None = None
        self.invalid_reason: str | None = None
        #: The last snapshot of the call: ``(what it was built from, ToolCall,
        #: UTF-8 bytes of its arguments)``, reused while that is unchanged.
        self.snapshot: tuple[tuple[Any, ...], ToolCall, int] | None = None

    def set_identity(self, field: Literal["id", "name", "type"], value: str | None) -> str | None:
        """Sets an identity field once; returns a conflict description or None.

        A repeat of the same value is a no-op. An empty string counts as
        absent: compatible servers pad continuation fragments with ``""``.
        """
        if not value:
            return None
        if type(value) is not str:
            return f"the {field} of tool call {self.index} of choice {self.choice} is not a string"
        current = getattr(self, field)
        if current is None:
            setattr(self, field, value)
            if field == "id":
                self.ids[value] = self.ids.get(value, 0) + 1
            return None
        if current == value:
            return None
        return (
            f"tool call {self.index} of choice {self.choice} changed its {field} "
            f"from {current!r} to {value!r}"
        )

    def raw_arguments(self) -> str:
        """The arguments so far, joined (cached once the call completed)."""
        if self.raw is not None:
            return self.raw
        return "".join(self.parts)

    def started(self) -> ToolCallStarted:
        """The ``ToolCallStarted`` event for this call, with what is known now."""
        return ToolCallStarted(
            index=self.index,
            id=self.id,
            name=self.name,
            type=self.type or "function",
            executor=self.executor,
            id_source=self.id_source,
            choice=self.choice,
        )


class ToolCalls:
    """Every call of one stream, keyed as the protocol keys them (adapter-internal)."""

    def __init__(
        self,
        *,
        toolset: ToolSet | None,
        max_argument_chars: int,
        max_calls: int,
        conflicts: list[str],
        max_total_chars: int,
    ) -> None:
        self.toolset = toolset
        self.max_argument_chars = max_argument_chars
        #: The stream's cap on the arguments of all its calls together.
        self.max_total_chars = max_total_chars
        #: Characters granted to calls (their allowances), at most ``max_total_chars``.
        self.granted = 0
        self.max_calls = max_calls
        self.by_key: dict[Hashable, CallBuffer] = {}
        self.by_choice: dict[int, list[CallBuffer]] = {}
        #: Per choice, how many of its calls have each id.
        self.ids: dict[int, dict[str, int]] = {}
        self.count = 0
        #: Where protocol conflicts are recorded (the stream's list).
        self.conflicts = conflicts
        #: Illegal transitions the stream attempted (each one also a conflict).
        self.violations: list[ToolCallStateError] = []

    def open(self, key: Hashable, choice: int, executor: Executor = "client") -> CallBuffer | None:
        """A new call under ``key``; None if ``max_calls`` is reached."""
        if self.count >= self.max_calls:
            return None
        calls = self.by_choice.setdefault(choice, [])
        ids = self.ids.get(choice)
        if ids is None:
            ids = self.ids[choice] = {}
        call = CallBuffer(choice, len(calls), executor, ids)
        calls.append(call)
        self.by_key[key] = call
        self.count += 1
        return call

    def step(self, call: CallBuffer, input: CallInput) -> bool:
        """Applies an adapter-side input; an illegal one is recorded as a conflict."""
        try:
            call.state = transition(call.state, input, call.id)
        except ToolCallStateError as exc:
            if len(self.violations) < MAX_RECORDS:
                self.violations.append(exc)
            if len(self.conflicts) < MAX_RECORDS:
                self.conflicts.append(
                    f"tool call {call.index} of choice {call.choice}: cannot {input} "
                    f"in state {exc.state}"
                )
            return False
        return True

    def append(self, call: CallBuffer, fragment: str) -> bool:
        """Adds an arguments fragment; False (the call overflowed) if it would
        pass ``max_argument_chars`` or the stream's ``max_total_chars``."""
        size = call.size + len(fragment)
        if size > call.allowance and not self.make_room(call, size):
            call.overflowed = True
            return False
        call.size = size
        call.parts.append(fragment)
        return True

    def make_room(self, call: CallBuffer, size: int) -> bool:
        """Lets ``call`` grow to ``size`` characters: compacts its fragments and
        grants it more of the stream's budget. False (``call.overflow`` names
        the cap) if either cap would be passed: the caller marks the overflow."""
        if size > self.max_argument_chars:
            call.overflow = f"max_tool_argument_chars ({self.max_argument_chars})"
            return False
        parts, mark = call.parts, call.mark
        pending = len(parts) - mark
        if pending < 0:  # an adapter replaced the parts by their join
            call.mark, call.marked_size = len(parts), call.size
            mark, pending = call.mark, 0
        if pending > 1:
            parts[mark:] = ["".join(parts[mark:])]
        if pending:
            average = (call.size - call.marked_size) // pending
            call.mark, call.marked_size = len(parts), call.size
        else:
            average = 0
        grant = min(max(average * _GRANT_FRAGMENTS, _GRANT_MIN), _GRANT_MAX)
        target = min(size + grant, self.max_argument_chars)
        if self.granted + target - call.allowance > self.max_total_chars:
            self._reclaim(call)
            target = min(target, call.allowance + self.max_total_chars - self.granted)
            if target < size:
                call.overflow = f"max_total_tool_argument_chars ({self.max_total_chars})"
                return False
        self.granted += target - call.allowance
        call.allowance = target
        return True

    def _reclaim(self, keep: CallBuffer) -> None:
        """Takes back every other call's unused allowance (near the stream's cap)."""
        for calls in self.by_choice.values():
            for call in calls:
                if call is not keep and call.allowance > call.size:
                    self.granted -= call.allowance - call.size
                    call.allowance = call.size

    def complete(
        self,
        call: CallBuffer,
        *,
        free_text: bool = False,
        builtin: tuple[str, ...] | None = None,
    ) -> ToolCallCompleted | None:
        """Completes a collecting call: parse once, check, accept or reject.

        ``free_text``: the input is text, not JSON (OpenAI Responses' custom
        tools): the arguments are ``{"input": text}``, checked like any others.
        ``builtin``: the call is of a provider's built-in tool the caller runs
        (OpenAI Responses' ``shell``, ...), declared by a request tool of one
        of these types: with the request's tools, it is checked against their
        types, not their names and schemas.
        Returns None (a conflict is recorded) if the call was not collecting.
        """
        if not self.step(call, "complete"):
            return None
        raw = call.raw = "".join(call.parts)
        call.parts = []
        # The joined text keeps its characters; the rest of the grant goes back.
        self.granted -= call.allowance - call.size
        call.allowance = call.size
        reason = self._check(call, raw, free_text, builtin)
        call.invalid_reason = reason
        self.step(call, "reject" if reason else "accept")
        return ToolCallCompleted(
            index=call.index,
            id=call.id,
            name=call.name,
            type=call.type or ("custom_tool_call" if free_text else "function"),
            raw_arguments=raw,
            arguments=call.arguments,
            invalid_reason=reason,
            executor=call.executor,
            id_source=call.id_source,
            choice=call.choice,
        )

    def _check(
        self, call: CallBuffer, raw: str, free_text: bool, builtin: tuple[str, ...] | None
    ) -> str | None:
        if call.overflowed:
            return f"the arguments passed {call.overflow or 'max_tool_argument_chars'}"
        if free_text:
            call.arguments = {"input": raw}
        elif not raw.strip():
            call.arguments = {}  # a parameterless call streams no arguments at all
        else:
            try:
                value = _json.loads(raw)
            except _json.JsonDepthError:
                return TOO_DEEP
            except ValueError as exc:
                return f"the arguments are not valid JSON: {exc}"
            if not isinstance(value, dict):
                return f"the arguments are not a JSON object but {type(value).__name__}"
            call.arguments = value
        if not call.name:
            return "the call has no tool name"
        if call.id is None:
            return "the call has no id"
        if call.ids.get(call.id, 0) > 1:
            return f"the call id {call.id!r} is used by another call"
        if self.toolset is not None and call.executor == "client":
            if builtin is not None:
                return self.toolset.check_builtin(builtin)
            return self.toolset.check(call.name, call.arguments)
        return None

    def abandon_open(self) -> None:
        """The stream ended: every call still collecting is rejected."""
        for calls in self.by_choice.values():
            for call in calls:
                if call.state == "collecting":
                    self.step(call, "abandon")
                    call.raw = "".join(call.parts)
                    call.parts = []
                    call.invalid_reason = ABANDONED

    def release(
        self, choice: int, stream_status: str, stop_reason: str | None
    ) -> tuple[bool, str | None]:
        """The batch verdict for a choice: ``(executable, reason)``.

        All or nothing: every client call of the choice must be valid, and the
        stream must have completed without filtering or refusal. A verdict
        that is not executable always says why, a choice without client
        calls too (a choice that does not exist: ``choice`` without calls).
        """
        calls = self.by_choice.get(choice, ())
        batch = [c for c in calls if c.executor == "client"]
        if stream_status != "completed":
            if stream_status == "in_progress":
                return False, "the stream has not ended yet"
            return False, f"the stream ended {stream_status}"
        if not batch:
            if calls:
                return False, "no tool calls for the caller to run (the provider ran its own)"
            return False, "no tool calls"
        if stop_reason == "content_filter":
            return False, "the response was filtered or refused"
        for call in batch:
            if call.state != "valid":
                why = call.invalid_reason
                return False, f"call {call.index} ({call.name}) is {call.state}: {why}"
        return True, None

    def snapshot(self, choice: int, verdict: tuple[bool, str | None]) -> tuple[ToolCall, ...]:
        """The choice's calls as frozen ``ToolCall`` values under a batch verdict."""
        executable, reason = verdict
        out = []
        why: str | None
        for call in self.by_choice.get(choice, ()):
            if call.executor == "server":
                ok, why = False, "the provider runs this tool itself"
            elif call.invalid_reason is not None:
                ok, why = False, call.invalid_reason
            else:
                ok, why = executable, reason
            # What the ToolCall is built from (the arguments by their size:
            # they only grow while collecting, and are set once at the end).
            raw = call.raw
            key = (
                call.state,
                call.size,
                None if raw is None else len(raw),
                call.id,
                call.name,
                call.type,
                call.invalid_reason,
                call.id_source,
                call.executor,
                ok,
                why,
            )
            cached = call.snapshot
            if cached is None or cached[0] != key:
                arguments = call.raw_arguments()
                snapshot = ToolCall(
                    id=call.id,
                    name=call.name,
                    arguments=call.arguments,
                    raw_arguments=arguments,
                    state=call.state,
                    executable=ok,
                    not_executable_reason=why,
                    invalid_reason=call.invalid_reason,
                    type=call.type or "function",
                    index=call.index,
                    choice=call.choice,
                    executor=call.executor,
                    id_source=call.id_source,
                )
                cached = call.snapshot = (key, snapshot, utf8_length(arguments))
            out.append(cached[1])
        return tuple(out)

    def argument_bytes(self) -> int:
        """UTF-8 bytes of every call's arguments, as of each call's last snapshot."""
        return sum(
            call.snapshot[2]
            for calls in self.by_choice.values()
            for call in calls
            if call.snapshot is not None
        )


class ToolLedger:
    """The caller's record of tool executions; refuses to run a call id twice.

    Keep one ledger per conversation (or agent run). Each call id moves
    through ``authorize -> start -> succeed | fail``; ``authorize`` checks that
    the result produced the call and that its batch is executable. Anything
    else (a second ``authorize`` of the same id, ``succeed`` before ``start``,
    a call the stream did not produce) raises ``ToolCallStateError`` and is
    recorded in ``violations``.
    """

    def __init__(self) -> None:
        self._states: dict[str, CallState] = {}
        #: Every refused attempt, in order.
        self.violations: list[ToolCallStateError] = []

    def state(self, call_id: str) -> CallState | None:
        """The call's caller-side state, or None if the ledger never saw it."""
        return self._states.get(call_id)

    def authorize(self, result: StreamResult, call_id: str) -> ToolCall:
        """Checks the call may run and marks it ``authorized``; returns the call."""
        call = result.tool_call(call_id)
        if call is None:
            self._refuse(call_id, None, "authorize", "the stream did not produce this call id")
        assert call is not None
        current = self._states.get(call_id)
        if current is None:
            if call.state == "valid" and not call.executable:
                self._refuse(call_id, call.state, "authorize", call.not_executable_reason or "")
            current = call.state
        self._step(call_id, current, "authorize")
        return call

    def start(self, call_id: str) -> None:
        """The caller starts executing an authorized call."""
        self._step(call_id, self._states.get(call_id), "start")

    def succeed(self, call_id: str) -> None:
        """The execution finished successfully."""
        self._step(call_id, self._states.get(call_id), "succeed")

    def fail(self, call_id: str) -> None:
        """The execution failed (send an error result back, or end the task)."""
        self._step(call_id, self._states.get(call_id), "fail")

    def _step(self, call_id: str, state: CallState | None, input: CallInput) -> None:
        if state is None:
            self._refuse(call_id, None, input, "the ledger has not authorized this call")
        assert state is not None
        try:
            self._states[call_id] = transition(state, input, call_id)
        except ToolCallStateError as exc:
            self.violations.append(exc)
            raise

    def _refuse(self, call_id: str, state: CallState | None, input: CallInput, why: str) -> None:
        exc = ToolCallStateError(call_id, state, input, why)
        self.violations.append(exc)
        raise exc
