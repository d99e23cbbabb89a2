"""The ``anthropic`` adapter: Anthropic Messages streaming over SSE.

Implements ``POST /v1/messages`` with ``stream: true`` as Anthropic's
streaming reference describes it (platform.claude.com/docs/en/build-with-claude/streaming,
checked 2026-11-29): each SSE event carries a JSON object whose ``type``
(``message_start``, ``content_block_start``, ``content_block_delta``,
``content_block_stop``, ``message_delta``, ``message_stop``, ``ping``,
``error``) matches its ``event:`` name. Framing is the Rust ``SseDecoder``
(WHATWG rules: an event is dispatched at its blank line, so a body that ends
without one loses its last event and the stream is ``incomplete``).

The semantics live in two modules, shared with the Bedrock ``bedrock-invoke``
adapter, which carries the same events as JSON inside EventStream
``chunk.bytes``:

* ``anthropic_machine.AnthropicMachine``, the message-level machine: statuses,
  stop reasons, usage, errors. **Its entry point for any transport**::

      machine = AnthropicMachine(acc, extension_fields=frozenset())
      machine.on_event(obj: dict, out: list[Event], name: str | None = None,
                       raw: str | None = None) -> None
      machine.on_payload(data: str | bytes, out, name=None)   # JSON text
      machine.on_not_json(data: str, out, name=None)          # undecodable text
      machine.on_eof(out) -> None     # end of input: decides, acc.finish()

  ``acc`` is the adapter's ``Accumulator`` (``Stream._acc``); decoded events
  go to ``on_event`` one at a time and the unified events they complete are
  appended to ``out``.
* ``anthropic_blocks``: the content blocks (text, citations, thinking and
  signatures, redacted thinking, tool use, server tools and their results)
  and the result's ``provider_content``: the assistant content blocks in
  Anthropic's request format, ready for the next turn.

This module adds only the SSE layer, and the fast path. Nearly every event of
a stream is a ``content_block_delta`` carrying a ``text_delta`` or an
``input_json_delta``, and decoding each one to Python objects (a fresh
non-ASCII ``str`` re-encoded for the JSON decoder, a dict tree built and
freed, then inspected) dominated the pipeline: measured on the benches' text
workload, ~2.8 us per event in all. Those two shapes (``SHAPES``: exactly the
fields ``type``, ``index`` and ``delta``, the delta exactly ``type`` and its
string, any key order and whitespace) are matched in Rust while framing, and
the consecutive ones for one block reach ``_on_sse`` as one run
``(template, index, [string, ...], first ticket)`` with no other Python
object built; the run is checked against the stream's state once and its
events built in one loop (~0.5 us per event in all, measured as above). When
the state rules the fast path out (the block is not open or takes another
delta, the stop reason already came, the run would pass a cap), the tickets
give back the run's ``SseEvent`` objects for the general path, one at a time.
So the events and the result are the general path's by construction, and
tested so (``tests/test_anthropic.py``: every fixture through
``AnthropicMachine`` alone, generated streams under any chunking and argument
cap, crafted payloads).

Non-JSON payloads: empty ones and a non-JSON ``ping`` are keep-alives, an
``event: error`` with a text body is a provider error with that message, a
chat-style ``[DONE]`` is ignored with a warning, anything else ends the
stream in a framing ``error``.
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
