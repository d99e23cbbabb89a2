"""Output items of one OpenAI Responses response: messages, reasoning and tool calls.

A response streams a list of output items ("Responses streaming events" and
"The response object", platform.openai.com/docs/api-reference/responses-streaming,
checked 2026-11-29). Each item is announced by ``response.output_item.added``
(``output_index``, ``item`` with its ``id`` and ``type``), streams its
content by ``item_id`` (parts by ``content_index`` or ``summary_index``;
call arguments as plain strings), may repeat the full value in a ``.done``
event, and ends with ``response.output_item.done`` carrying the whole item.
Tool calls are items too (``openai_responses_calls.py``).
docs/protocols/openai-responses.md has what each event becomes.

Each item follows the transitions of ``ITEM_TRANSITIONS``: ``absent`` ->
``open`` -> ``done``; content for an item never announced adopts it;
content after ``done`` is a protocol conflict; a full copy is verified.

"Settled" is how the many copies of one value agree: a part's (or a call's)
value is its deltas; a full copy must equal their concatenation, else the
stream contradicted itself (a call's JSON arguments spelled differently are
the same value: ``_arguments.py``); when no delta came, the full copy is the
value and is emitted as one delta. A full copy is reconciled, never
appended: one for a part without deltas, of an item never announced, that
repeats what the deltas streamed since a full copy last accounted for the
text, is that text again under another id (ids that do not correlate, no
``output_index``): it adds nothing (``full_text_reconciled``, ``_repeated``).

Item ids that rotate: an event whose ``item_id`` is unknown but whose
``output_index`` is a known item's is correlated to that item by index.
Rotated ids are not remembered (one per event would grow without bound):
each lookup misses by id and finds the item by index.
"""

from __future__ import annotations

import bisect
from collections.abc import Mapping
from typing import Any, Literal

from ..accumulate import Accumulator, ChoiceState
from ..events import Event, new_reasoning_delta, new_refusal_delta, new_text_delta
from ._values import RAW_CAP, dump, nonempty_str
from .openai_responses_calls import CALLS, ItemCalls
from .openai_responses_item import Item, ItemState

__all__ = [
    "ITEM_TRANSITIONS",
    "OTHER_ITEMS",
    "PART_KINDS",
    "Item",
    "Items",
    "Part",
    "open_text_part",
]

ItemInput = Literal["added", "delta", "full", "done"]
PartKind = Literal["text", "refusal", "reasoning", "summary"]

#: The per-item machine: ``(state, input) -> (action, next state)``; every pair is listed.
ITEM_TRANSITIONS: Mapping[tuple[ItemState, ItemInput], tuple[str, ItemState]] = {
    ("absent", "added"): ("announce", "open"),
    ("absent", "delta"): ("adopt", "open"),
    ("absent", "full"): ("adopt", "open"),
    ("absent", "done"): ("adopt", "done"),
    ("open", "added"): ("repeat", "open"),
    ("open", "delta"): ("apply", "open"),
    ("open", "full"): ("settle", "open"),
    ("open", "done"): ("finish", "done"),
    ("done", "added"): ("conflict", "done"),
    ("done", "delta"): ("conflict", "done"),
    ("done", "full"): ("settle", "done"),
    ("done", "done"): ("verify", "done"),
}


#: Item types known and not reported (outputs of earlier calls, compaction, ...).
OTHER_ITEMS = frozenset(
    {
        "compaction",
        "additional_tools",
        "mcp_approval_response",
        "function_call_output",
        "custom_tool_call_output",
        "computer_call_output",
        "local_shell_call_output",
        "shell_call_output",
        "apply_patch_call_output",
        "tool_search_output",
        "program_output",
    }
)
#: Content part types -> part kind (``content_part.added`` / ``.done``).
PART_KINDS: Mapping[str, PartKind] = {
    "output_text": "text",
    "refusal": "refusal",
    "reasoning_text": "reasoning",
    "summary_text": "summary",
}
#: The field of a content part that holds its text.
_PART_TEXT: Mapping[PartKind, str] = {
    "text": "text",
    "refusal": "refusal",
    "reasoning": "text",
    "summary": "text",
}
#: The list of the choice each part kind's text goes to.
_GROUPS: Mapping[PartKind, str] = {
    "text": "text",
    "refusal": "refusal",
    "reasoning": "reasoning",
    "summary": "reasoning",
}
#: The item type each part kind belongs to.
_PART_ITEM: Mapping[PartKind, str] = {
    "text": "message",
    "refusal": "message",
    "reasoning": "reasoning",
    "summary": "reasoning",
}


class Part:
    """One content part (text, refusal, reasoning text or summary) of an item."""

    __slots__ = ("chunks", "item", "kind")

    def __init__(self, item: Item, kind: PartKind) -> None:
        self.item = item
        self.kind: PartKind = kind
        #: The deltas, in order (the same string objects the choice holds).
        self.chunks: list[str] = []


def open_text_part(parts: Mapping[Any, Part], item_id: str, index: int) -> Part | None:
    """The text part ``index`` of item ``item_id`` if it is open: where the fast
    paths (SSE and WebSocket) may append a text delta as the general path would."""
    part = parts.get((item_id, "content", index))
    if part is None or part.kind != "text" or part.item.state != "open":
        return None
    return part


class Items:
    """Every output item of one response, keyed by item id and output index."""

    def __init__(self, acc: Accumulator, choice: ChoiceState) -> None:
        self._acc = acc
        self._choice = choice
        self.by_id: dict[str, Item] = {}
        self.by_index: dict[int, Item] = {}
        #: Parts by ``(item id, channel, index)``; channel ``content`` or ``summary``.
        self.parts: dict[tuple[Any, str, Any], Part] = {}
        #: Every item in order of appearance.
        self.items: list[Item] = []
        #: Output indexes of ``acc.provider_content``'s items, in the same order.
        self._content_order: list[float] = []
        #: The tool calls among the items.
        self.calls = ItemCalls(self.items, acc)
        #: Per list of the choice (text, refusal, reasoning): how many of its
        #: pieces full copies have accounted for (see "Settled" above).
        self._settled: dict[str, int] = {}

    # --- finding items -------------------------------------------------------

    def find(self, obj: Mapping[str, Any]) -> Item | None:
        """The item an event names, by ``item_id`` (else, or when the id is
        unknown because ids rotate, by ``output_index``)."""
        item_id = obj.get("item_id")
        index = obj.get("output_index")
        if type(item_id) is str:
            item = self.by_id.get(item_id)
            if item is None and type(index) is int:
                item = self._rotated(item_id, index)
            return item
        return self.by_index.get(index) if type(index) is int else None

    def _rotated(self, item_id: str, index: int) -> Item | None:
        """The item at ``output_index`` for an event that names it ``item_id``, an
        id it was not announced with; warned once per item."""
        item = self.by_index.get(index)
        if item is not None and not item.rotated:
            item.rotated = True
            self._acc.warn(
                "item_id_rotated",
                f"output item {item.id!r} at output_index {index} was named {item_id!r}: "
                "the provider's item ids rotate; its events are correlated by output_index",
            )
        return item

    def step(self, item: Item | None, input: ItemInput, where: str) -> tuple[str, ItemState]:
        """Takes the ``ITEM_TRANSITIONS`` transition; a conflict is recorded."""
        state: ItemState = "absent" if item is None else item.state
        action, following = ITEM_TRANSITIONS[state, input]
        if action == "conflict":
            self._acc.conflict(f"{where} arrived for output item {_name(item)} after it was done")
        elif item is not None:
            item.state = following
        return action, following

    def _new_item(
        self,
        item_id: str | None,
        index: Any,
        item_type: str,
        out: list[Event],
        body: Mapping[str, Any] | None = None,
    ) -> Item | None:
        acc = self._acc
        if not self._acc.reserve_block(out):
            return None
        item = Item(item_id, index if type(index) is int else None, item_type)
        if item_id is not None:
            self.by_id[item_id] = item
        if item.index is not None:
            previous = self.by_index.get(item.index)
            if previous is not None and previous.id != item_id:
                acc.conflict(
                    f"output_index {item.index} was announced for item {previous.id!r} "
                    f"and again for {item_id!r}"
                )
            self.by_index[item.index] = item
        self.items.append(item)
        spec = CALLS.get(item_type)
        if spec is not None:
            self.calls.open(item, spec, body, out)
        return item

    def adopt(
        self,
        obj: Mapping[str, Any],
        item_type: str,
        event: str,
        out: list[Event],
        body: Mapping[str, Any] | None = None,
    ) -> Item | None:
        """An item named by content that arrived before its announcement (warning);
        ``body``: the item itself, when the event carries it (a done item)."""
        item_id = obj.get("item_id")
        item = self._new_item(
            item_id if type(item_id) is str else None,
            obj.get("output_index"),
            item_type,
            out,
            body,
        )
        if item is not None:
            item.implicit = True
            self._acc.warn(
                "item_not_announced",
                f"{event} arrived for item {item.id!r} before response.output_item.added",
            )
        return item

    # --- the arguments of call items ------------------------------------------

    def call_arguments(
        self, obj: Mapping[str, Any], item_type: str, event: str, out: list[Event]
    ) -> None:
        """An arguments (or custom input) delta of a call item."""
        delta = obj.get("delta")
        if type(delta) is not str:
            self._acc.conflict(f"{event}: the delta is not a string")
            return
        item = self._call_item(obj, item_type, event, "delta", out)
        if item is None or not delta:
            return
        self.calls.append(item, delta, out)

    def call_arguments_full(
        self, obj: Mapping[str, Any], item_type: str, field: str, event: str, out: list[Event]
    ) -> None:
        """The full arguments (or custom input) of a call item, before its done item."""
        item = self._call_item(obj, item_type, event, "full", out)
        if item is not None:
            self.calls.settle_value(item, obj.get(field), event, out)

    def _call_item(
        self,
        obj: Mapping[str, Any],
        item_type: str,
        event: str,
        input: ItemInput,
        out: list[Event],
    ) -> Item | None:
        """The call item an arguments event names (adopted if unannounced), or
        None (recorded: a conflict, another type; or over the call cap)."""
        item = self.find(obj)
        action, _ = self.step(item, input, event)
        if action == "conflict":
            return None
        if item is None:
            item = self.adopt(obj, item_type, event, out)
            if item is None:
                return None
            if item.call is not None:
                out.append(item.call.started())
        elif item.type != item_type:
            self._acc.conflict(f"{event} arrived for item {item.id!r} of type {item.type!r}")
            return None
        if item.call is None:
            return None  # over the call cap: already an error
        return item

    # --- announcements and done items ----------------------------------------

    def added(self, obj: Mapping[str, Any], raw: str | None, out: list[Event]) -> None:
        """``response.output_item.added``."""
        body = obj.get("item")
        if type(body) is not dict:
            self._acc.conflict("response.output_item.added has no item object")
            return
        item_type = body.get("type")
        item_id = nonempty_str(body.get("id"))
        index = obj.get("output_index")
        existing = self.by_id.get(item_id) if item_id is not None else None
        if existing is None and item_id is not None and type(index) is int:
            existing = self._rotated(item_id, index)
        action, _ = self.step(existing, "added", "response.output_item.added")
        if action == "announce":
            if not self._known_type(item_type, body, raw, out):
                return
            assert isinstance(item_type, str)
            item = self._new_item(item_id, index, item_type, out, body)
            if item is not None and item.call is not None:
                self.calls.identify(item, body, settled=False)
                out.append(item.call.started())
                self.calls.settle(item, body, out, initial=True)
        elif action == "repeat" and existing is not None:
            self._same_type(existing, item_type)
            if existing.call is not None:
                self.calls.identify(existing, body, settled=False)
            existing.implicit = False

    def done(self, obj: Mapping[str, Any], raw: str | None, out: list[Event]) -> None:
        """``response.output_item.done``: the whole item; settles and completes it, and
        keeps it (verbatim) for the next turn."""
        body = obj.get("item")
        if type(body) is not dict:
            self._acc.conflict("response.output_item.done has no item object")
            return
        item_type = body.get("type")
        item_id = nonempty_str(body.get("id"))
        item = self.by_id.get(item_id) if item_id is not None else None
        if item is None:
            index = obj.get("output_index")
            candidate = self.by_index.get(index) if type(index) is int else None
            if candidate is not None and candidate.id is not None and item_id is not None:
                item = self._rotated(item_id, candidate.index or 0)
            else:
                item = candidate  # a compatible server that omitted the id once
        action, _ = self.step(item, "done", "response.output_item.done")
        if action == "adopt":
            if not self._known_type(item_type, body, raw, out):
                return
            assert isinstance(item_type, str)
            adopted = self.adopt(
                {**obj, "item_id": item_id}, item_type, "response.output_item.done", out, body
            )
            if adopted is None:
                return
            item = adopted
            item.state = "done"
            if item.call is not None:
                self.calls.identify(item, body, settled=True)
                out.append(item.call.started())
        if item is None or action == "conflict":
            return
        self._same_type(item, item_type)
        self._settle_body(item, body, out)
        if item.call is not None:
            self.calls.identify(item, body, settled=True)
            self.calls.settle(item, body, out, initial=False)
            if action in ("finish", "adopt"):
                self.calls.complete(item, out)
        if action in ("finish", "adopt"):
            self._keep(item, body)

    def _keep(self, item: Item, body: dict[str, Any]) -> None:
        """Keeps a done item for the next turn (``StreamResult.provider_content``),
        in output order."""
        order = self._content_order
        rank = float(item.index) if item.index is not None else float("inf")
        at = bisect.bisect_right(order, rank)
        order.insert(at, rank)
        self._acc.provider_content.insert(at, body)

    def _known_type(
        self, item_type: Any, body: Mapping[str, Any], raw: str | None, out: list[Event]
    ) -> bool:
        if type(item_type) is str and (
            item_type in CALLS
            or item_type in OTHER_ITEMS
            or item_type == "message"
            or item_type == "reasoning"
        ):
            return True
        name = f"item:{item_type}" if type(item_type) is str else "item:<untyped>"
        out.append(
            self._acc.unknown_event(name, raw if raw is not None else dump(body, cap=RAW_CAP))
        )
        return False

    def _same_type(self, item: Item, item_type: Any) -> None:
        if item_type is not None and item_type != item.type:
            self._acc.conflict(
                f"output item {item.id!r} changed its type from {item.type!r} to {item_type!r}"
            )

    # --- content parts --------------------------------------------------------

    def part(
        self,
        obj: Mapping[str, Any],
        kind: PartKind,
        index: Any,
        event: str,
        input: ItemInput,
        out: list[Event],
    ) -> Part | None:
        """The part an event names, created (and its item adopted) if new; None: ignore."""
        item = self.find(obj)
        action, _ = self.step(item, input, event)
        if action == "conflict":
            return None
        if item is None:
            item = self.adopt(obj, _PART_ITEM[kind], event, out)
            if item is None:
                return None
        elif item.type != _PART_ITEM[kind]:
            self._acc.conflict(f"{event} arrived for item {item.id!r} of type {item.type!r}")
            return None
        if index is not None and type(index) is not int:
            # An index must key a dict: a list or object here is a broken event.
            self._acc.conflict(f"{event} has a content index that is not an integer: {index!r}")
            return None
        channel = "summary" if kind == "summary" else "content"
        key = (item.id, channel, index)
        part = self.parts.get(key)
        if part is None:
            output_index = obj.get("output_index")
            if item.index is not None and type(output_index) is int and output_index != item.index:
                self._acc.conflict(
                    f"{event} names item {item.id!r} at output_index {output_index}, "
                    f"announced at {item.index}"
                )
                return None
            if not self._acc.reserve_block(out):
                return None
            part = self.parts[key] = Part(item, kind)
        elif part.kind != kind:
            self._acc.conflict(
                f"{event} for part {index} of item {item.id!r}, which holds {part.kind}"
            )
            return None
        return part

    def append(self, part: Part, delta: str, out: list[Event]) -> None:
        """Appends a non-empty delta to a part and emits its event."""
        part.chunks.append(delta)
        kind = part.kind
        choice = self._choice
        if kind == "text":
            choice.text.append(delta)
            out.append(new_text_delta(delta, 0))
        elif kind == "refusal":
            choice.refusal.append(delta)
            out.append(new_refusal_delta(delta, 0))
        else:
            choice.reasoning.append(delta)
            out.append(
                new_reasoning_delta(
                    delta, None, None, "summary" if kind == "summary" else "text", 0
                )
            )

    def settle(self, part: Part, full: Any, where: str, out: list[Event]) -> None:
        """A full copy of a part: taken when no delta came, else checked against them."""
        if type(full) is not str:
            if full is not None:
                self._acc.conflict(f"{where}: the full {part.kind} is not a string")
            return
        chunks = part.chunks
        group = _GROUPS[part.kind]
        if not chunks:
            if full and not self._repeated(part, full, group, where):
                self.append(part, full, out)
                self._settled[group] = len(self._pieces(group))
            return
        joined = chunks[0] if len(chunks) == 1 else "".join(chunks)
        if len(chunks) > 1:
            part.chunks = [joined]
        self._settled[group] = len(self._pieces(group))
        if joined != full:
            self._acc.conflict(
                f"{where}: the full {part.kind} of item {part.item.id!r} "
                f"({len(full)} chars) differs from its deltas ({len(joined)} chars)"
            )

    def _pieces(self, group: str) -> list[str]:
        choice = self._choice
        if group == "text":
            return choice.text
        return choice.refusal if group == "refusal" else choice.reasoning

    def _repeated(self, part: Part, full: str, group: str, where: str) -> bool:
        """Whether ``full``, a full copy for a part of an unannounced item that
        streamed nothing, repeats what the deltas streamed since the last full
        copy accounted for the choice's text (see "Settled" above)."""
        if not part.item.implicit:
            return False
        pieces = self._pieces(group)
        streamed = "".join(pieces[self._settled.get(group, 0) :])
        if not streamed.endswith(full):
            return False
        part.chunks = [full]  # later copies of this part are checked against it
        self._acc.warn(
            "full_text_reconciled",
            f"{where}: the full {part.kind} for item {part.item.id!r}, which was never "
            "announced, repeats text already streamed; it was reconciled, not appended",
        )
        return True

    def _settle_body(self, item: Item, body: Mapping[str, Any], out: list[Event]) -> None:
        """Settles every part a done message or reasoning item carries."""
        if item.type == "message":
            self._settle_list(item, body.get("content"), "content", out)
        elif item.type == "reasoning":
            self._settle_list(item, body.get("summary"), "summary", out)
            self._settle_list(item, body.get("content"), "content", out)
            encrypted = body.get("encrypted_content")
            if type(encrypted) is str and encrypted and item.redacted is None:
                # Kept verbatim: a stateless next turn must send it back as it came.
                item.redacted = encrypted
                out.append(new_reasoning_delta("", None, encrypted, "text", 0))

    def _settle_list(self, item: Item, parts: Any, channel: str, out: list[Event]) -> None:
        if type(parts) is not list:
            return
        for index, body in enumerate(parts):
            if type(body) is not dict:
                continue
            part_type = body.get("type")
            kind = PART_KINDS.get(part_type) if type(part_type) is str else None
            if kind is None or (channel == "summary") != (kind == "summary"):
                continue
            part = self.parts.get((item.id, channel, index))
            if part is None:
                part = self._part_at(item, kind, channel, index, out)
                if part is None:
                    continue
            if part.kind == kind:
                self.settle(part, body.get(_PART_TEXT[kind]), "response.output_item.done", out)

    def _part_at(
        self, item: Item, kind: PartKind, channel: str, index: int, out: list[Event]
    ) -> Part | None:
        if not self._acc.reserve_block(out):
            return None
        part = self.parts[(item.id, channel, index)] = Part(item, kind)
        return part


def _name(item: Item | None) -> str:
    return "?" if item is None else repr(item.id)
