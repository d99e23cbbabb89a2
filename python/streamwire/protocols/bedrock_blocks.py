"""Content blocks of a Bedrock ``ConverseStream``: keyed by ``contentBlockIndex``, one machine each.

Bedrock streams the assistant message as content blocks (API reference,
"ContentBlockStartEvent", "ContentBlockDeltaEvent", "ContentBlockStopEvent",
"ContentBlockDelta", "ReasoningContentBlockDelta", checked 2026-11-29;
botocore 1.43's ``bedrock-runtime`` model). Unlike Anthropic's, only some
blocks have a ``contentBlockStart``: tool use (and the server's tool results
and images); text and reasoning blocks open with their first delta.
docs/protocols/bedrock-converse.md has what each delta member becomes.

Each block has its own machine (``BLOCKS``: absent, open, closed), and what
a block may receive is data (``BLOCK_DELTAS``): a delta member of a known
kind that its block does not take (``text`` for a tool block, ``toolUse``
for a reasoning block) is a protocol conflict; an unknown member is counted
and skipped. A ``contentBlockStart`` whose ``start`` names no kind (as
relays send for text blocks) opens the block with its kind undecided
(``Block.kind`` None, warning ``block_start_empty``): its first delta
decides it, as for a block with no start.

A block's ``contentBlockStop`` completes its tool call (arguments parsed
once) and adds the block, in Bedrock's request format, to the result's
``provider_content`` in index order, ready for the next turn.
"""

from __future__ import annotations

import base64
import binascii
from collections.abc import Mapping
from typing import Any, Literal

from ..accumulate import Accumulator, ChoiceState
from ..events import Event, new_reasoning_delta, new_text_delta
from ..toolcalls import CallBuffer

__all__ = ["BLOCKS", "BLOCK_DELTAS", "DELTA_KINDS", "START_KINDS", "Block", "ConverseBlocks"]

BlockState = Literal["absent", "open", "closed"]
BlockInput = Literal["start", "delta", "stop"]
BlockAction = Literal[
    "open", "open_by_delta", "apply", "close", "close_empty", "conflict", "nothing"
]
BlockKind = Literal["text", "reasoning", "tool", "tool_result", "image"]
DeltaAction = Literal["text", "citation", "reasoning", "arguments", "accept"]

#: Each block's machine: ``(state, input) -> (action, next state)``; ``absent``
#: is an index nothing has opened yet.
BLOCKS: Mapping[tuple[BlockState, BlockInput], tuple[BlockAction, BlockState]] = {
    ("absent", "start"): ("open", "open"),
    ("absent", "delta"): ("open_by_delta", "open"),
    ("absent", "stop"): ("close_empty", "closed"),
    ("open", "start"): ("conflict", "open"),
    ("open", "delta"): ("apply", "open"),
    ("open", "stop"): ("close", "closed"),
    ("closed", "start"): ("conflict", "closed"),
    ("closed", "delta"): ("conflict", "closed"),
    ("closed", "stop"): ("nothing", "closed"),
}
#: The block kind each delta member belongs to (the kind a first delta opens).
DELTA_KINDS: Mapping[str, BlockKind] = {
    "text": "text",
    "citation": "text",
    "reasoningContent": "reasoning",
    "toolUse": "tool",
    "toolResult": "tool_result",
    "image": "image",
}
#: The block kind each ``contentBlockStart.start`` member opens.
START_KINDS: Mapping[str, BlockKind] = {
    "toolUse": "tool",
    "toolResult": "tool_result",
    "image": "image",
}
#: ``(block kind, delta member) -> action``; a known member not listed for its
#: block's kind is a protocol conflict (a delta of the wrong kind).
BLOCK_DELTAS: Mapping[tuple[BlockKind, str], DeltaAction] = {
    ("text", "text"): "text",
    ("text", "citation"): "citation",
    ("reasoning", "reasoningContent"): "reasoning",
    ("tool", "toolUse"): "arguments",
    ("tool_result", "toolResult"): "accept",
    ("image", "image"): "accept",
}
_REASONING_FIELDS = frozenset({"text", "signature", "redactedContent"})
_TOOL_START_FIELDS = frozenset({"toolUseId", "name", "type"})
#: Citations kept per stream (a hostile stream cannot grow the list without bound).
MAX_CITATIONS = 1000


class Block:
    """One content block while the stream runs (adapter-internal)."""

    __slots__ = ("call", "index", "kind", "parts", "redacted", "signature", "state")

    def __init__(self, index: int, kind: BlockKind | None) -> None:
        self.index = index
        #: None until the first delta of a block whose start named no kind.
        self.kind: BlockKind | None = kind
        self.state: BlockState = "open"
        self.call: CallBuffer | None = None
        #: Text or reasoning text, for ``provider_content``.
        self.parts: list[str] = []
        self.signature: list[str] = []
        self.redacted: list[str] = []


class ConverseBlocks:
    """The content blocks of one stream and what they produce (adapter-internal)."""

    def __init__(self, acc: Accumulator) -> None:
        self._acc = acc
        self.by_index: dict[int, Block] = {}
        #: ``contentBlockDelta.delta.citation`` values, verbatim, with their block.
        self.citations: list[dict[str, Any]] = []

    def step(
        self, input: BlockInput, state: ChoiceState, payload: dict[str, Any], out: list[Event]
    ) -> None:
        """Applies one ``contentBlockStart`` / ``Delta`` / ``Stop`` payload."""
        acc = self._acc
        index = payload.get("contentBlockIndex")
        if type(index) is not int or index < 0:
            acc.conflict(
                f"a content block {input} without a valid contentBlockIndex: {index!r:.40}"
            )
            return
        block = self.by_index.get(index)
        action, next_state = BLOCKS[block.state if block is not None else "absent", input]
        if action == "apply":
            assert block is not None
            self._apply(block, state, payload.get("delta"), out)
        elif action == "open_by_delta":
            delta = payload.get("delta")
            block = self._open_by_delta(index, delta, out)
            if block is not None:
                self._apply(block, state, delta, out)
        elif action == "open":
            block = self._open(index, payload.get("start"), out)
        elif action == "close":
            assert block is not None
            self.close(block, out)
        elif action == "close_empty":
            block = self._new(index, "text", out)
        elif action == "conflict":
            assert block is not None
            where = "after its contentBlockStop" if block.state == "closed" else "while it is open"
            acc.conflict(f"a content block {input} for block {index} {where}; it was ignored")
            return
        if block is not None:
            block.state = next_state

    def close_open(self, out: list[Event]) -> None:
        """The message stopped: every open block is closed (a tool block with a warning)."""
        for block in self.by_index.values():
            if block.state == "open":
                if block.kind == "tool":
                    self._acc.warn(
                        "block_not_stopped",
                        f"tool block {block.index} had no contentBlockStop before messageStop",
                    )
                self.close(block, out)

    def close(self, block: Block, out: list[Event]) -> None:
        """Closes a block: completes its call, records its content."""
        block.state = "closed"
        call = block.call
        if call is not None and call.state == "collecting":
            self._acc.complete_call(call, out)
        content = self._content(block)
        if content is not None:
            self._acc.add_content(block.index, content)
        block.parts = []

    # --- opening ---------------------------------------------------------------

    def _new(self, index: int, kind: BlockKind | None, out: list[Event]) -> Block | None:
        if not self._acc.reserve_block(out):  # max_content_blocks
            return None
        block = self.by_index[index] = Block(index, kind)
        return block

    def _open(self, index: int, start: Any, out: list[Event]) -> Block | None:
        acc = self._acc
        if start is None or start == {}:
            # An optional object left empty: no kind yet, nothing contradicted.
            acc.warn(
                "block_start_empty",
                f"the contentBlockStart of block {index} names no kind; its first delta decides",
            )
            return self._new(index, None, out)
        if type(start) is not dict or len(start) != 1:
            acc.conflict(f"the contentBlockStart of block {index} has no single start member")
            return None
        ((member, value),) = start.items()
        kind = START_KINDS.get(member)
        if kind is None:
            acc.unknown_field(f"contentBlockStart.start.{member}")
            return None
        block = self._new(index, kind, out)
        if block is not None and kind == "tool":
            self._open_call(block, value, out)
        return block

    def _open_call(self, block: Block, start: Any, out: list[Event]) -> None:
        acc = self._acc
        if type(start) is not dict:
            acc.conflict(f"the toolUse start of block {block.index} is not an object")
            return
        server = start.get("type") == "server_tool_use"
        call = acc.calls.open(("block", block.index), 0, "server" if server else "client")
        if call is None:
            if acc.error is None or acc.error.type != "too_many_tool_calls":
                message = f"more than max_tool_calls ({acc.calls.max_calls}) tool calls"
                out.append(acc.fail("limit", "too_many_tool_calls", None, message))
            return
        call.type = "server_tool_use" if server else "tool_use"
        for field, key in (("id", "toolUseId"), ("name", "name")):
            value = start.get(key)
            if value is not None and type(value) is not str:
                acc.conflict(f"the {key} of tool block {block.index} is not a string")
            elif value:
                call.set_identity(field, value)  # type: ignore[arg-type]
        for key in start:
            if key not in _TOOL_START_FIELDS:
                acc.unknown_field(f"contentBlockStart.start.toolUse.{key}")
        block.call = call
        out.append(call.started())

    def _open_by_delta(self, index: int, delta: Any, out: list[Event]) -> Block | None:
        """Text and reasoning blocks open with their first delta, of their kind."""
        kind = self._first_kind(index, delta)
        return None if kind is None else self._new(index, kind, out)

    def _first_kind(self, index: int, delta: Any) -> BlockKind | None:
        """The kind a block's first delta gives it; None (recorded) when it
        gives none, or a kind only a ``contentBlockStart`` may open."""
        acc = self._acc
        if type(delta) is not dict:
            acc.conflict(f"the delta of content block {index} is not an object")
            return None
        kind = next((DELTA_KINDS[m] for m in delta if m in DELTA_KINDS), None)
        if kind is None:
            for member in delta:
                acc.unknown_field(f"contentBlockDelta.delta.{member}")
            return None
        if kind == "tool":
            acc.conflict(
                f"a toolUse fragment for content block {index}, whose start named no tool: "
                "it cannot be correlated to a call"
                if index in self.by_index
                else f"a toolUse fragment for content block {index}, which never started: "
                "it cannot be correlated to a call"
            )
            return None
        return kind

    # --- deltas ----------------------------------------------------------------

    def _apply(self, block: Block, state: ChoiceState, delta: Any, out: list[Event]) -> None:
        acc = self._acc
        if block.kind is None:
            kind = self._first_kind(block.index, delta)
            if kind is None:
                return
            block.kind = kind
        if type(delta) is not dict:
            acc.conflict(f"the delta of content block {block.index} is not an object")
            return
        for member, value in delta.items():
            action = BLOCK_DELTAS.get((block.kind, member))
            if action is None:
                if member in DELTA_KINDS:
                    acc.conflict(
                        f"a {member} delta for content block {block.index}, a {block.kind} "
                        "block; it was ignored"
                    )
                else:
                    acc.unknown_field(f"contentBlockDelta.delta.{member}")
            elif action == "text":
                if type(value) is not str:
                    acc.conflict(f"the text delta of content block {block.index} is not a string")
                elif value:
                    block.parts.append(value)
                    state.text.append(value)
                    out.append(new_text_delta(value, 0))
            elif action == "arguments":
                self._arguments(block, value, out)
            elif action == "reasoning":
                self._reasoning(block, state, value, out)
            elif action == "citation":
                if len(self.citations) < MAX_CITATIONS:
                    self.citations.append({"contentBlockIndex": block.index, "citation": value})
            # "accept": a server tool's result or an image; no unified event.

    def _reasoning(self, block: Block, state: ChoiceState, value: Any, out: list[Event]) -> None:
        acc = self._acc
        if type(value) is not dict:
            acc.conflict(f"the reasoningContent of content block {block.index} is not an object")
            return
        for key, item in value.items():
            if key not in _REASONING_FIELDS:
                acc.unknown_field(f"contentBlockDelta.delta.reasoningContent.{key}")
            elif type(item) is not str:
                acc.conflict(
                    f"reasoningContent.{key} of content block {block.index} is not a string"
                )
            elif not item:
                continue
            elif key == "text":
                block.parts.append(item)
                state.reasoning.append(item)
                out.append(new_reasoning_delta(item, None, None, "text", 0))
            elif key == "signature":
                block.signature.append(item)
                state.signatures.append(item)
                out.append(new_reasoning_delta("", item, None, "text", 0))
            else:
                block.redacted.append(item)
                out.append(new_reasoning_delta("", None, item, "text", 0))

    def _arguments(self, block: Block, value: Any, out: list[Event]) -> None:
        acc = self._acc
        call = block.call
        if call is None:
            return  # the start was refused (a cap or a conflict, already recorded)
        fragment = value.get("input") if type(value) is dict else None
        if type(fragment) is not str:
            acc.conflict(f"the toolUse input of content block {block.index} is not a string")
            return
        if fragment:
            acc.append_arguments(call, fragment, out)

    # --- provider content --------------------------------------------------------

    def _content(self, block: Block) -> dict[str, Any] | None:
        """The closed block in Bedrock's request format, or None if it has none."""
        kind = block.kind
        if kind == "text":
            # Converse refuses a blank text block in a request: an empty one is left out.
            text = "".join(block.parts)
            state = self._acc.choices.get(0)
            if state is not None:
                state.coalesce_tail("text", block.parts, text)
            return {"text": text} if text else None
        if kind == "reasoning":
            if block.redacted and not block.parts:
                return {"reasoningContent": {"redactedContent": _join_base64(block.redacted)}}
            reasoning: dict[str, Any] = {"text": "".join(block.parts)}
            if block.signature:
                reasoning["signature"] = "".join(block.signature)
            return {"reasoningContent": {"reasoningText": reasoning}}
        call = block.call
        if kind != "tool" or call is None:
            return None
        if call.arguments is None:
            self._acc.warn(
                "content_block_unusable",
                f"the input of tool block {block.index} is not a valid JSON object; "
                "the block is left out of provider_content",
            )
            return None
        tool: dict[str, Any] = {"toolUseId": call.id, "name": call.name, "input": call.arguments}
        if call.executor == "server":
            tool["type"] = "server_tool_use"
        return {"toolUse": tool}


def _join_base64(pieces: list[str]) -> str:
    """One base64 text for several base64 pieces (each may carry its own padding)."""
    if len(pieces) == 1:
        return pieces[0]
    try:
        raw = b"".join(base64.b64decode(p, validate=True) for p in pieces)
    except (binascii.Error, ValueError):
        return "".join(pieces)
    return base64.b64encode(raw).decode("ascii")
