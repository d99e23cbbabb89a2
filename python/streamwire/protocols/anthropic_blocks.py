"""Content blocks of an Anthropic Messages stream: keyed by index, one machine each.

Anthropic streams the assistant message as content blocks ("Streaming
Messages", "Content block delta types", and the Messages API reference, both
checked 2026-11-29): each is opened by ``content_block_start`` (with its
initial state), grown by ``content_block_delta`` events and closed by
``content_block_stop``, all carrying the block's ``index``, its position in
the final ``content`` array. docs/protocols/anthropic.md has what each block
and delta becomes.

What a block may receive is data (``BLOCK_DELTAS``): a delta of a known type
that its block does not take is a protocol conflict; an unknown block or
delta type is counted and skipped. Each block has its own machine
(``BLOCK_STEPS``): ``missing`` (no start for its index yet) -> ``open`` ->
``stopped``; a delta or stop for a block that is missing, a delta for one
that stopped, or a second start, cannot be correlated: a conflict. A second
stop is only a warning.

A tool call completes at its block's stop, where its arguments are parsed,
once. Each stopped block also becomes one entry of ``provider_content``, in
index order: the block in Anthropic's request format, as the next request's
assistant message must carry it.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any, Literal

from ..accumulate import Accumulator, ChoiceState
from ..events import (
    Event,
    Executor,
    new_reasoning_delta,
    new_text_delta,
)
from ..toolcalls import CallBuffer
from ._values import RAW_CAP, dump

__all__ = ["BLOCK_DELTAS", "BLOCK_STEPS", "DELTA_TYPES", "Block", "Blocks", "block_role"]

#: What a block is for this adapter; derived from its ``type`` by ``block_role``.
Role = Literal[
    "text", "thinking", "redacted", "call", "server_call", "result", "compaction", "unknown"
]
#: What a delta does to its block.
DeltaAction = Literal["text", "citation", "thinking", "signature", "arguments", "compaction"]
BlockState = Literal["missing", "open", "stopped"]
BlockInput = Literal["start", "delta", "stop"]
StepAction = Literal["open", "apply", "complete", "conflict", "warn"]

#: Block types with a role of their own; ``*_tool_result`` is a ``result``.
ROLES: Mapping[str, Role] = {
    "text": "text",
    "thinking": "thinking",
    "redacted_thinking": "redacted",
    "tool_use": "call",
    "server_tool_use": "server_call",
    "mcp_tool_use": "server_call",
    "compaction": "compaction",
}
#: The delta types of the streaming reference.
DELTA_TYPES = frozenset(
    {
        "text_delta",
        "citations_delta",
        "thinking_delta",
        "signature_delta",
        "input_json_delta",
        "compaction_delta",
    }
)
#: ``(role, delta type) -> action``. A known delta type for a known role that
#: is not listed here is a protocol conflict (a delta of the wrong kind).
BLOCK_DELTAS: Mapping[tuple[Role, str], DeltaAction] = {
    ("text", "text_delta"): "text",
    ("text", "citations_delta"): "citation",
    ("thinking", "thinking_delta"): "thinking",
    ("thinking", "signature_delta"): "signature",
    ("call", "input_json_delta"): "arguments",
    ("server_call", "input_json_delta"): "arguments",
    ("compaction", "compaction_delta"): "compaction",
}
#: The fields of a ``compaction_delta`` that replace the block's (a string or null).
_COMPACTION_FIELDS = ("content", "encrypted_content")
#: Each block's own machine: ``(state, input) -> (action, next state)``.
#: ``missing`` is an index no ``content_block_start`` has opened.
BLOCK_STEPS: Mapping[tuple[BlockState, BlockInput], tuple[StepAction, BlockState]] = {
    ("missing", "start"): ("open", "open"),
    ("missing", "delta"): ("conflict", "missing"),
    ("missing", "stop"): ("conflict", "missing"),
    ("open", "start"): ("conflict", "open"),
    ("open", "delta"): ("apply", "open"),
    ("open", "stop"): ("complete", "stopped"),
    ("stopped", "start"): ("conflict", "stopped"),
    ("stopped", "delta"): ("conflict", "stopped"),
    ("stopped", "stop"): ("warn", "stopped"),
}
_CALL_ROLES = frozenset({"call", "server_call"})


def block_role(kind: str) -> Role:
    """The role of a block type (``unknown`` for types this adapter does not know)."""
    role = ROLES.get(kind)
    if role is not None:
        return role
    if kind.endswith("_tool_result"):
        return "result"
    return "unknown"


class Block:
    """One content block while the stream runs (adapter-internal)."""

    __slots__ = (
        "call",
        "citations",
        "deltas",
        "index",
        "kind",
        "parts",
        "role",
        "signature",
        "start",
        "state",
        "updates",
    )

    def __init__(self, index: int, kind: str, role: Role, start: dict[str, Any]) -> None:
        self.index = index
        #: The block's ``type`` as the provider sent it.
        self.kind = kind
        self.role: Role = role
        #: The ``content_block`` object of ``content_block_start``, as received.
        self.start = start
        self.state: BlockState = "open"
        #: Streamed text or thinking, in order.
        self.parts: list[str] = []
        #: Citations from ``citations_delta``, in order.
        self.citations: list[Any] = []
        #: The last ``signature_delta`` (None: none arrived).
        self.signature: str | None = None
        #: The tool call of a ``tool_use`` / server tool block.
        self.call: CallBuffer | None = None
        #: Deltas of unknown types received (an unknown block's start is then not whole).
        self.deltas = 0
        #: Fields that deltas replaced (a compaction block's ``content``, ...).
        self.updates: dict[str, Any] = {}


class Blocks:
    """The content blocks of one message: start, deltas, stop, and what they become."""

    def __init__(self, acc: Accumulator) -> None:
        self._acc = acc
        self._calls = acc.calls
        #: Blocks by index.
        self.by_index: dict[int, Block] = {}
        #: The block started last (Anthropic streams one block after another).
        self.last: Block | None = None

    # --- the three block events -------------------------------------------------------

    def on_start(self, choice: ChoiceState, index: int, start: Any, out: list[Event]) -> None:
        """``content_block_start``: opens block ``index`` with its initial state."""
        acc = self._acc
        block = self.by_index.get(index)
        action, _ = BLOCK_STEPS["missing" if block is None else block.state, "start"]
        if action == "conflict":
            acc.conflict(f"content block {index} was started twice")
            return
        kind = start.get("type") if type(start) is dict else None
        if type(kind) is not str or not kind:
            acc.conflict(f"content_block_start {index} has no content_block with a type")
            return
        if not acc.reserve_block(out):  # max_content_blocks
            return
        role = block_role(kind)
        block = self.by_index[index] = self.last = Block(index, kind, role, start)
        if role == "text":
            text = start.get("text")
            if text and type(text) is str:  # a server that sends the text whole
                self._text(choice, block, text, out)
            self._citations(block, start.get("citations"))
        elif role == "thinking":
            thinking = start.get("thinking")
            if thinking and type(thinking) is str:
                self._thinking(choice, block, thinking, out)
            signature = start.get("signature")
            if signature and type(signature) is str:
                self._signature(choice, block, signature, out)
        elif role == "redacted":
            data = start.get("data")
            if type(data) is str:
                out.append(new_reasoning_delta("", None, data, "text", choice.index))
            else:
                acc.conflict(f"redacted_thinking block {index} has no data string")
        elif role in _CALL_ROLES:
            self._open_call(choice, block, out)
        elif role == "unknown":
            out.append(
                acc.unknown_event(f"content_block:{kind}", dump(start, cap=RAW_CAP, default=repr))
            )

    def on_delta(self, choice: ChoiceState, index: int, delta: Any, out: list[Event]) -> None:
        """``content_block_delta``: applies one delta to block ``index``."""
        acc = self._acc
        block = self.by_index.get(index)
        action, _ = BLOCK_STEPS["missing" if block is None else block.state, "delta"]
        if action == "conflict" or block is None:
            why = "never started" if block is None else "already stopped"
            acc.conflict(f"a content_block_delta for block {index}, which {why}")
            return
        kind = delta.get("type") if type(delta) is dict else None
        if type(kind) is not str:
            acc.conflict(f"a content_block_delta for block {index} has no delta with a type")
            return
        if kind not in DELTA_TYPES or block.role == "unknown":
            block.deltas += 1
            name = kind if block.role != "unknown" else f"{block.kind}/{kind}"
            out.append(
                acc.unknown_event(
                    f"content_block_delta:{name}", dump(delta, cap=RAW_CAP, default=repr)
                )
            )
            return
        step = BLOCK_DELTAS.get((block.role, kind))
        if step is None:
            acc.conflict(f"a {kind} for content block {index}, a {block.kind} block")
            return
        if step == "text":
            value = delta.get("text")
            if type(value) is str:
                if value:
                    self._text(choice, block, value, out)
                return
        elif step == "arguments":
            value = delta.get("partial_json")
            if type(value) is str:
                if value:
                    self.arguments(block, value, out)
                return
        elif step == "thinking":
            value = delta.get("thinking")
            if type(value) is str:
                if value:
                    self._thinking(choice, block, value, out)
                return
        elif step == "signature":
            value = delta.get("signature")
            if type(value) is str:
                self._signature(choice, block, value, out)
                return
        elif step == "compaction":
            fields = [f for f in _COMPACTION_FIELDS if f in delta]
            if fields and all(delta[f] is None or type(delta[f]) is str for f in fields):
                for field in fields:
                    block.updates[field] = delta[field]
                return
        else:  # citation
            citation = delta.get("citation")
            if type(citation) is dict:
                block.citations.append(citation)
                return
        acc.conflict(f"the {kind} for content block {index} carries no valid value")

    def on_stop(self, index: int, out: list[Event]) -> None:
        """``content_block_stop``: block ``index`` is complete."""
        acc = self._acc
        block = self.by_index.get(index)
        action, state = BLOCK_STEPS["missing" if block is None else block.state, "stop"]
        if block is None:
            acc.conflict(f"a content_block_stop for block {index}, which never started")
            return
        if action == "warn":
            acc.warn("repeated_block_stop", f"content block {index} was stopped twice")
            return
        block.state = state
        self._complete(block, out)

    def open_blocks(self) -> list[Block]:
        """The blocks started and not stopped, in index order."""
        return [b for _, b in sorted(self.by_index.items()) if b.state == "open"]

    # --- applying deltas --------------------------------------------------------------

    def _text(self, choice: ChoiceState, block: Block, text: str, out: list[Event]) -> None:
        block.parts.append(text)
        choice.text.append(text)
        out.append(new_text_delta(text, choice.index))

    def _thinking(self, choice: ChoiceState, block: Block, text: str, out: list[Event]) -> None:
        block.parts.append(text)
        choice.reasoning.append(text)
        out.append(new_reasoning_delta(text, None, None, "text", choice.index))

    def _signature(self, choice: ChoiceState, block: Block, sig: str, out: list[Event]) -> None:
        # Kept verbatim: the next turn must send it back byte for byte. A later
        # signature replaces an earlier one (the block has one signature).
        block.signature = sig
        choice.signatures.append(sig)
        out.append(new_reasoning_delta("", sig, None, "text", choice.index))

    def _citations(self, block: Block, citations: Any) -> None:
        if type(citations) is list:
            block.citations.extend(citations)

    def arguments(self, block: Block, fragment: str, out: list[Event]) -> None:
        """Appends a non-empty ``partial_json`` fragment to the block's call."""
        if block.call is not None:
            self._acc.append_arguments(block.call, fragment, out)

    # --- tool calls -------------------------------------------------------------------

    def _open_call(self, choice: ChoiceState, block: Block, out: list[Event]) -> None:
        acc = self._acc
        executor: Executor = "server" if block.role == "server_call" else "client"
        call = self._calls.open(("block", block.index), choice.index, executor)
        if call is None:
            if acc.error is None or acc.error.type != "too_many_tool_calls":
                message = f"more than max_tool_calls ({self._calls.max_calls}) tool calls"
                out.append(acc.fail("limit", "too_many_tool_calls", None, message))
            return
        block.call = call
        call.type = block.kind
        start = block.start
        for field in ("id", "name"):
            value = start.get(field)
            if value is not None and type(value) is not str:
                acc.conflict(f"the {field} of tool use block {block.index} is not a string")
            elif value:
                call.set_identity(field, value)
        out.append(call.started())

    def _complete(self, block: Block, out: list[Event]) -> None:
        call = block.call
        if call is not None and call.state == "collecting":
            if not call.parts and not call.overflowed:
                # No fragment streamed: the input is the start's (normally {}).
                start_input = block.start.get("input")
                if type(start_input) is dict and start_input:
                    fragment = json.dumps(start_input, ensure_ascii=False)
                    self.arguments(block, fragment, out)
            self._acc.complete_call(call, out)
        content = self._content(block)
        if content is not None:
            self._acc.add_content(block.index, content)
        block.parts = []

    def _content(self, block: Block) -> dict[str, Any] | None:
        """The stopped block in Anthropic's request format, or None if unusable."""
        role = block.role
        content = dict(block.start)
        # A start's own text (or thinking) is the block's first part already.
        choice = self._acc.choices.get(0)
        if role == "text":
            content["text"] = text = "".join(block.parts)
            if choice is not None:
                choice.coalesce_tail("text", block.parts, text)
            if block.citations or "citations" in content:
                content["citations"] = list(block.citations)
        elif role == "thinking":
            content["thinking"] = thinking = "".join(block.parts)
            if choice is not None:
                choice.coalesce_tail("reasoning", block.parts, thinking)
            if block.signature is not None:
                content["signature"] = block.signature
        elif role in _CALL_ROLES:
            call = block.call
            if call is None or call.arguments is None:
                why = "was not kept" if call is None else "is not a valid JSON object"
                self._acc.warn(
                    "content_block_unusable",
                    f"the input of {block.kind} block {block.index} {why}; "
                    "the block is left out of provider_content",
                )
                return None
            content["input"] = call.arguments
        elif role == "compaction":
            content.update(block.updates)
        elif role == "unknown" and block.deltas:
            self._acc.warn(
                "content_block_unusable",
                f"block {block.index} of unknown type {block.kind!r} received deltas "
                "this adapter cannot apply; it is left out of provider_content",
            )
            return None
        return content
