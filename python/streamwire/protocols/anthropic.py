"""The ``anthropic`` adapter: Anthropic Messages streaming over SSE.

``POST /v1/messages`` with ``stream: true``, as Anthropic's "Streaming
Messages" reference describes it (platform.claude.com/docs/en/build-with-claude/streaming,
checked 2026-11-29); what each event becomes is docs/protocols/anthropic.md.
Framing is the Rust ``SseDecoder``. The semantics live in two modules shared
with ``bedrock-invoke`` (the same events as JSON inside EventStream
``chunk.bytes``): ``anthropic_machine`` (message level: statuses, stop
reasons, usage, errors; its ``AnthropicMachine`` is the entry point for any
transport) and ``anthropic_blocks`` (the content blocks and
``provider_content``). This module adds the SSE layer and the fast path.

The fast path. Nearly every event is a ``content_block_delta`` carrying a
``text_delta``, a ``thinking_delta`` or an ``input_json_delta``, and building
Python objects for each dominated the pipeline. Those three shapes
(``SHAPES``: exactly the fields ``type``, ``index`` and ``delta``, the delta
exactly ``type`` and its string)
are matched in Rust while framing, and consecutive ones for one block reach
``_on_sse`` as one run ``(template, index, [string, ...], first ticket)``,
checked against the state once. When the state rules it out (the block is
not open or takes another delta, the stop reason came, a cap would be
passed), the tickets give back the run's ``SseEvent`` objects for the
general path. So the events and the result are the general path's by
construction, and tested so (``tests/test_anthropic.py``). The deltas of the
block started last, while it is open, never leave Rust at all: the decoder's
sink (``_BlockSink``, a ``TextTaker`` per role) takes the text and thinking
deltas at the head of each chunk and builds their events.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, cast

from .._core import ShapeMatcher, SseEvent, TextTaker
from .._json import loads
from ..events import (
    Event,
    new_arguments_deltas,
    new_reasoning_deltas,
    new_text_deltas,
    reasoning_delta_builder,
    text_delta_builder,
)
from ._base import SseStream
from .anthropic_machine import AnthropicMachine

__all__ = ["SHAPES", "AnthropicMachine", "AnthropicStream"]


def _delta_shape(kind: str, field: str) -> dict[str, Any]:
    return {"type": "content_block_delta", "index": "$int", "delta": {"type": kind, field: "$str"}}


#: The fast path's deltas: the block role that takes each, in template order.
_FAST: tuple[tuple[str, str, str], ...] = (
    ("text", "text_delta", "text"),
    ("thinking", "thinking_delta", "thinking"),
    ("call", "input_json_delta", "partial_json"),
)
#: The fast path's event shapes, matched in Rust: each captures (block index,
#: string). Template ``t`` is a delta of ``_FAST[t % 3]``; the SSE event is
#: named as Anthropic names it, or unnamed (data-only streams).
SHAPES = ShapeMatcher(
    [
        (name, _delta_shape(kind, field))
        for name in ("content_block_delta", "message")
        for _, kind, field in _FAST
    ],
    runs=True,
)
#: The block role that takes template ``t``'s deltas, by ``t``.
_ROLE_OF = tuple(role for _ in range(2) for role, _, _ in _FAST)


class _BlockSink:
    """The text or thinking deltas of the open block started last, taken in
    Rust as the decoder's sink (``FramedStream.feed``): each one's string
    appended to the choice and to the block and its event built by the
    taker, exactly what ``_on_sse`` does with a run of them."""

    __slots__ = ("_machine", "_takers")
    #: The taker appends to the block's parts itself: nothing to settle.
    settles = False

    def __init__(self, machine: AnthropicMachine) -> None:
        self._machine = machine
        # Template 0 is a named text delta, 1 a named thinking delta (SHAPES).
        self._takers = {
            "text": TextTaker(0, text=text_delta_builder),
            "thinking": TextTaker(1, text=reasoning_delta_builder),
        }

    def arm(self) -> TextTaker | None:
        machine = self._machine
        block = machine.blocks.last
        if machine.phase != "open" or block is None or block.state != "open":
            return None
        taker = self._takers.get(block.role)
        choice = machine.choice
        if taker is None or choice is None:
            return None
        if block.role == "text":
            taker.arm(block.index, choice.text, (choice.index,), block.parts)
        else:
            fixed = (None, None, "text", choice.index)
            taker.arm(block.index, choice.reasoning, fixed, block.parts)
        return taker

    def settle(self) -> None:
        """Nothing to do (``settles`` is False)."""


class AnthropicStream(SseStream):
    """Anthropic Messages stream adapter (``sw.stream("anthropic")``)."""

    protocol = "anthropic"
    shapes = SHAPES

    def __init__(self, **options: Any) -> None:
        """Options are ``SseStream``'s and ``Stream``'s (tools, caps, clock, ...)."""
        super().__init__(**options)
        self._machine = AnthropicMachine(self._acc)
        self._sink = _BlockSink(self._machine)

    @property
    def machine(self) -> AnthropicMachine:
        """The Anthropic event machine behind this adapter."""
        return self._machine

    def _on_sse(self, events: Sequence[SseEvent | tuple[Any, ...]], out: list[Event]) -> None:
        machine = self._machine
        by_index = machine.blocks.by_index
        make_room = self._acc.calls.make_room
        choice = machine.choice if machine.phase == "open" else None
        for event in events:
            if type(event) is not tuple:
                self._on_event(cast(SseEvent, event), out)
                choice = machine.choice if machine.phase == "open" else None
                continue
            # The fast path: a run of SHAPES deltas for one block, taken at
            # once when the block is open and takes them; exactly what the
            # machine does for each of them, with fewer calls.
            template, index, values, first = event
            block = by_index.get(index)
            if choice is not None and block is not None and block.state == "open":
                if "" in values:  # an empty delta adds nothing and is no event
                    values = [value for value in values if value]
                role = _ROLE_OF[template]
                if role != "call":
                    if block.role == role:
                        block.parts += values
                        if role == "text":
                            choice.text += values
                            out += new_text_deltas(values, 0)
                        else:
                            choice.reasoning += values
                            out += new_reasoning_deltas(values, None, None, "text", 0)
                        continue
                else:
                    call = block.call
                    if call is not None and not call.overflowed:
                        size = call.size + sum(map(len, values))
                        if size <= call.allowance or make_room(call, size):
                            call.size = size
                            call.parts += values
                            out += new_arguments_deltas(values, call.index, call.id, 0)
                            continue
            # The general path, one event at a time (the state may change
            # within the run, e.g. at the argument cap).
            matched_event = self._decoder.matched_event
            for ticket in range(first, first + len(event[-2])):
                self._on_event(matched_event(ticket), out)
            choice = machine.choice if machine.phase == "open" else None

    def _on_event(self, event: SseEvent, out: list[Event]) -> None:
        """The general path: one SSE event, whatever it holds."""
        machine = self._machine
        data = event.data
        try:
            obj = loads(data)
        except ValueError as exc:
            machine.on_not_json(data, out, event.event, exc)
            return
        machine.on_event(obj, out, event.event, data)

    def _on_eof(self, out: list[Event]) -> None:
        self._machine.on_eof(out)
