"""Sequential content blocks, for the targets that stream one block at a time.

Anthropic Messages (content blocks: ``content_block_start`` ... ``stop``) and
OpenAI Responses (output items: ``output_item.added`` ... ``done``) stream an
assistant message as a sequence of blocks, one open at a time in every
recording and in the providers' own streaming references (checked
2026-11-29). Unified events from other sources do not always arrive in that
shape: a chat server may interleave the argument fragments of two parallel
calls, and a call's end is often only known at the stream's end (chat
completes its calls at ``finish_reason``). ``SequentialEncoder`` puts them in
sequence with this policy, which holds nothing back in the common case:

* content of the open block's kind goes straight out;
* other content closes the open block and opens its own, except when the open
  block is a tool call whose arguments are not yet whole JSON (its stream may
  still continue, interleaved): then what follows is held (queued, in order)
  until the call's arguments are whole or the call completes, while the
  call's own fragments keep going straight out;
* an error, the message's end and ``close()`` release everything held first.

A call whose id or name is unknown when it starts is held (its fragments
queued) until its ``ToolCallCompleted`` names it, since both targets need
them in the block's start; so is a built-in call the caller runs, on a
target that sends its item (responses: whole, as the inputs come with the
completion). A held call the source never completed is not sent, and is
declared (``unfinished_tool_call``). Only choice 0 is carried (both targets
stream one message): the other choices are a declared downgrade
(``extra_choices``).

Subclasses (``anthropic.py``, ``openai_responses.py``) write the wire events
through the hooks at the bottom; the policy is here, once.
"""

from __future__ import annotations

from abc import abstractmethod
from typing import Any, ClassVar

from ..events import (
    ErrorReceived,
    Event,
    MessageCompleted,
    MessageStarted,
    ReasoningDelta,
    RefusalDelta,
    TextDelta,
    ToolCallArgumentsDelta,
    ToolCallCompleted,
    ToolCallStarted,
)
from ._base import Call, Encoder, started_event

__all__ = ["SequentialEncoder"]

_CALL_EVENTS = (ToolCallArgumentsDelta, ToolCallCompleted)


class SequentialEncoder(Encoder):
    """Base of the block-sequential targets: one message, one open block at a time."""

    #: Event kind (``text``, ``refusal``, ``reasoning``, ``summary``,
    #: ``redacted``, ``call``) -> the block (group) that carries it.
    GROUPS: ClassVar[dict[str, str]]
    #: Whether the target carries free-text tool input natively.
    FREE_TEXT: ClassVar[bool] = False
    #: Whether a call the source left unfinished must be closed before the
    #: terminal event (responses: the final output has only done items) or
    #: may stay open, as the source left it (anthropic).
    CLOSE_UNFINISHED: ClassVar[bool] = True
    #: The arguments a call that streamed none completes with (responses: its
    #: own "{}", which clients ``json.loads``; anthropic: none, ``input`` is {}).
    NO_ARGUMENTS: ClassVar[str] = "{}"
    #: Whether the target has the items of the built-in tools the caller runs
    #: (responses): such a call is held and sent whole when it completes.
    BUILTIN_ITEMS: ClassVar[bool] = False

    def __init__(self, **options: Any) -> None:
        super().__init__(**options)
        #: A ``MessageStarted`` of choice 0 arrived; the target's start is sent.
        self._message = False
        self._started = False
        self._ended = False
        #: The open block's group, the kind of content last written to it, and
        #: its call when it is a call block.
        self._block: str | None = None
        self._kind: str | None = None
        self._block_call: Call | None = None
        #: The call whose unfinished arguments hold back what follows.
        self._blocked: Call | None = None
        self._queue: list[Event] = []
        self._forcing = False
        self._calls: dict[int, Call] = {}
        self._carried_calls = 0
        self._client_calls = 0
        self._extra: set[int] = set()

    # --- entry points -----------------------------------------------------------------

    def _on_started(self, event: MessageStarted, out: list[bytes]) -> None:
        if event.choice != 0:
            self._extra_choice(event.choice)
            return
        self._record_start(event)
        self._message = True

    def _on_text(self, event: TextDelta, out: list[bytes]) -> None:
        if event.choice:
            self._extra_choice(event.choice)
        elif self._kind == "text" and self._blocked is None:
            self._emit_text("text", event.text, out)
        else:
            self._content(event, out)

    def _on_reasoning(self, event: ReasoningDelta, out: list[bytes]) -> None:
        self._choice0(event, out)

    def _on_refusal(self, event: RefusalDelta, out: list[bytes]) -> None:
        self._choice0(event, out)

    def _on_call_started(self, event: ToolCallStarted, out: list[bytes]) -> None:
        self._choice0(event, out)

    def _on_arguments(self, event: ToolCallArgumentsDelta, out: list[bytes]) -> None:
        call = self._block_call
        if (
            call is not None
            and self._blocked is None
            and not event.choice
            and self._calls.get(event.index) is call
        ):
            # The fast path: a fragment of the open call (``_arguments``, in short).
            call.parts.append(event.delta)
            self._emit_arguments(call, call.wire_fragment(event.delta), out)
        else:
            self._choice0(event, out)

    def _on_call_completed(self, event: ToolCallCompleted, out: list[bytes]) -> None:
        self._choice0(event, out)

    def _on_completed(self, event: MessageCompleted, out: list[bytes]) -> None:
        if event.choice != 0:
            return
        if self._ended:
            return
        self._ended = True
        self._release(out)
        self._unsent()
        status = event.status
        if status == "completed" or status == "truncated":
            call = self._block_call
            if call is not None and not call.completed and not self.CLOSE_UNFINISHED:
                self._block = self._kind = self._block_call = None  # left open
            self._close_block(out)
            self._ensure_started(out)
            self._emit_end(event, out)
        elif not self._end_failed(status, out):
            if status == "cancelled":
                self._downgrade("cancelled")
            self._ensure_started(out)
            self._close_content_block(out)
            self._emit_cut(event, out)

    def _on_error(self, event: ErrorReceived, out: list[bytes]) -> None:
        self._release(out)
        self._close_content_block(out)
        self._send_error(event.type, event.code, event.message, out)

    def _close_content_block(self, out: list[bytes]) -> None:
        """Closes the open block unless it is a call: what it holds is whole (a
        call the source did not finish stays open, as the source left it)."""
        if self._block is not None and self._block_call is None:
            self._close_block(out)

    def _send_error(
        self, kind: str | None, code: str | int | None, message: str | None, out: list[bytes]
    ) -> None:
        self._emit_error(kind, code, message, out)
        self._fail()

    def _end_of_feed(self, out: list[bytes]) -> None:
        if self._message and not self._started and not self._failed:
            self._ensure_started(out)

    def _on_close(self, out: list[bytes]) -> None:
        if self._failed or self._ended:
            return
        self._release(out)
        self._unsent()
        if self._message:
            self._ensure_started(out)

    def _unsent(self) -> None:
        """Declares the held calls the source never completed: never sent, as
        the target's start of a call needs what only the completion brings."""
        unsent = sum(1 for c in self._calls.values() if c.held and not (c.completed or c.dropped))
        if unsent:
            self._downgrade("unfinished_tool_call", unsent)

    # --- the policy ---------------------------------------------------------------------

    def _extra_choice(self, choice: int) -> None:
        if choice not in self._extra:
            self._extra.add(choice)
            self._downgrade("extra_choices")

    def _choice0(self, event: Any, out: list[bytes]) -> None:
        if event.choice:
            self._extra_choice(event.choice)
        else:
            self._content(event, out)

    def _content(self, event: Event, out: list[bytes]) -> None:
        blocked = self._blocked
        if blocked is not None and not self._belongs(event, blocked):
            self._queue.append(event)
            return
        if not self._apply(event, out):
            self._queue.append(event)
            return
        if blocked is not None and self._blocked is None:
            self._pump(out)

    def _belongs(self, event: Event, call: Call) -> bool:
        return type(event) in _CALL_EVENTS and self._calls.get(event.index) is call  # type: ignore[union-attr]

    def _pump(self, out: list[bytes]) -> None:
        """Applies held events that may go now, in order."""
        queue = self._queue
        i = 0
        while i < len(queue):
            event = queue[i]
            blocked = self._blocked
            if blocked is not None and not self._belongs(event, blocked):
                i += 1
                continue
            del queue[i]
            if not self._apply(event, out):
                queue.insert(i, event)
                i += 1
            elif blocked is not None and self._blocked is None:
                i = 0

    def _release(self, out: list[bytes]) -> None:
        """Sends everything held (an unfinished call's block is closed if it must be)."""
        if not self._queue and self._blocked is None:
            return
        self._forcing = True
        self._blocked = None
        try:
            self._pump(out)
        finally:
            self._forcing = False

    def _enter(self, kind: str, out: list[bytes], call: Call | None = None) -> bool:
        """Makes the block for ``kind`` the open one; False if a call holds it back."""
        group = self.GROUPS[kind]
        current = self._block
        if current is not None:
            if current == group and call is None and group != "call":
                if kind != self._kind:
                    self._switch_part(kind, out)
                    self._kind = kind
                return True
            open_call = self._block_call
            if (
                open_call is not None
                and not open_call.completed
                and not self._forcing
                and not open_call.complete_json()
            ):
                self._blocked = open_call
                return False
            self._close_block(out)
        self._ensure_started(out)
        self._open_block(group, kind, call, out)
        self._block = group
        self._kind = kind
        self._block_call = call
        return True

    def _close_block(self, out: list[bytes]) -> None:
        """Closes the open block, if any."""
        group = self._block
        if group is None:
            return
        call = self._block_call
        if call is not None:
            # Closed unfinished: forced (its arguments not whole yet), or at the end.
            if not call.completed and (self._ended or not call.complete_json()):
                self._downgrade("unfinished_tool_call")
            end = call.wire_end()
            if end:
                self._emit_arguments(call, end, out)
        self._close(group, out)
        if call is not None:
            call.closed = True
        self._block = self._kind = self._block_call = None

    def _ensure_started(self, out: list[bytes]) -> None:
        if not self._started:
            self._started = True
            self._emit_start(out)

    def _apply(self, event: Event, out: list[bytes]) -> bool:
        """Puts one content event on the wire; False if it must wait."""
        kind = type(event)
        if kind is TextDelta:
            if not self._enter("text", out):
                return False
            self._emit_text("text", event.text, out)  # type: ignore[union-attr]
        elif kind is RefusalDelta:
            if not self._enter("refusal", out):
                return False
            self._emit_text("refusal", event.text, out)  # type: ignore[union-attr]
        elif kind is ReasoningDelta:
            return self._apply_reasoning(event, out)  # type: ignore[arg-type]
        elif kind is ToolCallStarted:
            return self._call_started(event, out)  # type: ignore[arg-type]
        elif kind is ToolCallArgumentsDelta:
            self._arguments(event, out)  # type: ignore[arg-type]
        elif kind is ToolCallCompleted:
            return self._call_completed(event, out)  # type: ignore[arg-type]
        return True

    # --- tool calls ---------------------------------------------------------------------

    def _call_started(self, event: ToolCallStarted, out: list[bytes]) -> bool:
        call = self._calls.get(event.index)
        if call is None:
            call = Call(event, self._carried_calls, native_free_text=self.FREE_TEXT)
            self._calls[event.index] = call
            if event.executor == "server" and not self._carries_server_call(call):
                call.dropped = True
                self._downgrade("server_tool_call")
                return True
            self._carried_calls += 1
            if call.executor == "client":
                self._client_calls += 1
            if call.wrap:
                self._downgrade("custom_tool_call")
            if call.builtin is not None and not self.BUILTIN_ITEMS:
                self._downgrade_builtin(call.builtin)
                call.builtin = None
            if call.id is None or call.name is None or call.builtin is not None:
                call.held = True
                return True
        if call.dropped or call.held or call.opened:
            return True
        if not self._enter("call", out, call):
            return False
        call.opened = True
        return True

    def _arguments(self, event: ToolCallArgumentsDelta, out: list[bytes]) -> None:
        call = self._calls.get(event.index)
        if call is None or call.dropped:
            return
        if call.id is None and event.id is not None:
            call.id = event.id
        if call.closed:
            self._downgrade("interleaved_tool_calls")
            return
        call.parts.append(event.delta)
        if call.held or not call.opened:
            return
        self._emit_arguments(call, call.wire_fragment(event.delta), out)
        if self._blocked is call and call.complete_json():
            self._blocked = None

    def _call_completed(self, event: ToolCallCompleted, out: list[bytes]) -> bool:
        call = self._calls.get(event.index)
        if call is None:
            if not self._call_started(started_event(event), out):
                return False
            call = self._calls[event.index]
        if call.dropped or call.completed:
            return True
        call.id = call.id or event.id
        call.name = call.name or event.name
        call.arguments = event.arguments
        if call.held:
            if call.id is None or call.name is None:
                self._downgrade("tool_call_identity")
                call.id = call.id or f"call_{self._message_id or 'x'}_{call.index}"
                call.name = call.name or ""
            if not self._enter("call", out, call):
                return False
            call.held = False
            call.opened = True
            held = call.raw()
            if held:
                self._emit_arguments(call, call.wire_fragment(held), out)
        streamed = call.raw()
        raw = event.raw_arguments
        if not raw and not streamed and not call.wrap and event.arguments == {}:
            raw = self.NO_ARGUMENTS
        if not raw.startswith(streamed):
            self._downgrade("arguments_mismatch")
        elif len(raw) > len(streamed):
            rest = raw[len(streamed) :]
            if call.closed:
                self._downgrade("interleaved_tool_calls")
            else:
                call.parts.append(rest)
                self._emit_arguments(call, call.wire_fragment(rest), out)
        call.completed = True
        if self._block_call is call:
            self._close_block(out)
        if self._blocked is call:
            self._blocked = None
        return True

    def _carries_server_call(self, call: Call) -> bool:
        """Whether the target offers this provider-run call (default: never)."""
        return False

    # --- the target's wire (hooks) ------------------------------------------------------

    @abstractmethod
    def _apply_reasoning(self, event: ReasoningDelta, out: list[bytes]) -> bool:
        """Puts a reasoning delta (text, signature, redacted data) on the wire."""

    @abstractmethod
    def _emit_start(self, out: list[bytes]) -> None:
        """The message's start (``message_start``; ``response.created``...)."""

    @abstractmethod
    def _open_block(self, group: str, kind: str, call: Call | None, out: list[bytes]) -> None:
        """Opens a block of ``group`` for content of ``kind`` (the base records it)."""

    @abstractmethod
    def _switch_part(self, kind: str, out: list[bytes]) -> None:
        """Content of ``kind`` for the open block of the same group."""

    @abstractmethod
    def _emit_text(self, kind: str, text: str, out: list[bytes]) -> None:
        """A piece of text of ``kind`` for the open block."""

    @abstractmethod
    def _emit_arguments(self, call: Call, fragment: str, out: list[bytes]) -> None:
        """An arguments fragment for the open call block."""

    @abstractmethod
    def _close(self, group: str, out: list[bytes]) -> None:
        """Closes the open block of ``group`` (the base then forgets it)."""

    @abstractmethod
    def _emit_end(self, event: MessageCompleted, out: list[bytes]) -> None:
        """The terminal events of a completed or truncated message."""

    @abstractmethod
    def _emit_cut(self, event: MessageCompleted, out: list[bytes]) -> None:
        """What an ``incomplete`` or ``cancelled`` message sends (usually nothing)."""

    @abstractmethod
    def _emit_error(
        self, kind: str | None, code: str | int | None, message: str | None, out: list[bytes]
    ) -> None:
        """The target's error event."""
