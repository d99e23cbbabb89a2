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
``text_delta`` or an ``input_json_delta``, and building Python objects for
each dominated the pipeline. Those two shapes (``SHAPES``: exactly the fields
``type``, ``index`` and ``delta``, the delta exactly ``type`` and its string)
are matched in Rust while framing, and consecutive ones for one block reach
``_on_sse`` as one run ``(template, index, [string, ...], first ticket)``,
checked against the state once. When the state rules it out (the block is
not open or takes another delta, the stop reason came, a cap would be
passed), the tickets give back the run's ``SseEvent`` objects for the
general path. So the events and the result are the general path's by
construction, and tested so (``tests/test_anthropic.py``).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, cast

from .._core import ShapeMatcher, SseEvent
from .._json import loads
from ..events import Event, new_arguments_deltas, new_text_deltas
from ._base import SseStream
from .anthropic_machine import AnthropicMachine

__all__ = ["SHAPES", "AnthropicMachine", "AnthropicStream"]


def _delta_shape(kind: str, field: str) -> dict[str, Any]:
    return {"type": "content_block_delta", "index": "$int", "delta": {"type": kind, field: "$str"}}


#: The fast path's event shapes, matched in Rust: each captures (block index,
#: string). Even templates are text deltas, odd ones arguments fragments; the
#: SSE event is named as Anthropic names it, or unnamed (data-only streams).
SHAPES = ShapeMatcher(
    [
        (name, _delta_shape(kind, field))
        for name in ("content_block_delta", "message")
        for kind, field in (("text_delta", "text"), ("input_json_delta", "partial_json"))
    ],
    runs=True,
)


class AnthropicStream(SseStream):
    """Anthropic Messages stream adapter (``sw.stream("anthropic")``)."""

    protocol = "anthropic"
    shapes = SHAPES

    def __init__(self, **options: Any) -> None:
        """Options are ``SseStream``'s and ``Stream``'s (tools, caps, clock, ...)."""
        super().__init__(**options)
        self._machine = AnthropicMachine(self._acc)

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
                if template & 1 == 0:
                    if block.role == "text":
                        block.parts += values
                        choice.text += values
                        out += new_text_deltas(values, 0)
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
