"""The output items of one OpenAI Realtime response: messages, their parts, and calls.

What ``RealtimeResponse`` (``openai_realtime_machine.py``) does with the
content events of a response (OpenAI API reference, "Realtime server events",
platform.openai.com/docs/api-reference/realtime-server-events, checked
2026-11-29). Each output item (``ITEMS``) is announced by
``response.output_item.added``, streams by ``item_id`` and ends with
``response.output_item.done``; the ``.done`` copies of a value
(``response.output_text.done`` ``text``, ``...audio_transcript.done``
``transcript``, ``response.content_part.done`` ``part``,
``response.function_call_arguments.done`` ``arguments``, the done item) must
equal its deltas (else a protocol conflict; arguments that spell the same
JSON differently are equal, with a warning: ``_arguments.py``); when no
delta came, the copy is the value and is emitted as one delta::

    absent --added--> open    absent --delta--> open (warning)    absent --full/done--> open/done
    open   --added--> open    open   --delta--> open              open   --full--> open
    open   --done---> done    done   --full---> done (verified)   done   --done--> done
    done   --added--> done    PROTOCOL CONFLICT    done --delta--> done    PROTOCOL CONFLICT

Content: text parts and the transcripts of audio parts are the response's
text (``TextDelta``). Audio deltas (base64) are counted, never decoded into
text: ``provider_metrics["audio_deltas"]`` and ``["audio_bytes"]`` (the
decoded size), and with ``audio="keep"`` the decoded bytes are kept.

Tool calls: a ``function_call`` item is a call the caller runs, keyed by its
item id, identified by its ``call_id`` (what ``function_call_output`` quotes)
and ``name``; arguments stream by ``response.function_call_arguments.delta``
(whose ``call_id`` must be the item's) and are parsed once, at
``response.function_call_arguments.done`` (which the API also sends for an
interrupted response), or at the done item, or at ``response.done`` for a
response that completed. ``mcp_call`` and ``mcp_approval_request`` items are
reported as server calls, never offered for execution. Each done item is kept,
verbatim, in ``provider_content``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Literal

from ..accumulate import Accumulator, ChoiceState
from ..events import Event, new_text_delta
from ..toolcalls import CallBuffer
from ._arguments import check_full_arguments
from ._values import RAW_CAP, dump
from ._websocket import AudioMode, Turn

__all__ = ["HANDLERS", "ITEMS", "ItemInput", "ItemState", "RealtimeItems"]

ItemState = Literal["absent", "open", "done"]
ItemInput = Literal["added", "delta", "full", "done"]
PartKind = Literal["text", "audio"]

#: ``(item state, input) -> (action, next state)``; every pair is listed.
ITEMS: Mapping[tuple[ItemState, ItemInput], tuple[str, ItemState]] = {
    ("absent", "added"): ("announce", "open"),
    ("absent", "delta"): ("adopt", "open"),
    ("absent", "full"): ("adopt", "open"),
    ("absent", "done"): ("adopt", "done"),
    ("open", "added"): ("repeat", "open"),
    ("open", "delta"): ("apply", "open"),
    ("open", "full"): ("apply", "open"),
    ("open", "done"): ("finish", "done"),
    ("done", "added"): ("conflict", "done"),
    ("done", "delta"): ("conflict", "done"),
    ("done", "full"): ("apply", "done"),
    ("done", "done"): ("verify", "done"),
}

#: Response-level event types: ``type -> (handler, item input)``.
HANDLERS: Mapping[str, tuple[str, ItemInput]] = {
    "response.output_item.added": ("item_added", "added"),
    "response.output_item.done": ("item_done", "done"),
    "response.content_part.added": ("part_added", "delta"),
    "response.content_part.done": ("part_done", "full"),
    "response.output_text.delta": ("text_delta", "delta"),
    "response.text.delta": ("text_delta", "delta"),
    "response.output_text.done": ("text_done", "full"),
    "response.text.done": ("text_done", "full"),
    "response.output_audio_transcript.delta": ("transcript_delta", "delta"),
    "response.audio_transcript.delta": ("transcript_delta", "delta"),
    "response.output_audio_transcript.done": ("transcript_done", "full"),
    "response.audio_transcript.done": ("transcript_done", "full"),
    "response.output_audio.delta": ("audio_delta", "delta"),
    "response.audio.delta": ("audio_delta", "delta"),
    "response.output_audio.done": ("nothing", "full"),
    "response.audio.done": ("nothing", "full"),
    "response.function_call_arguments.delta": ("arguments_delta", "delta"),
    "response.function_call_arguments.done": ("arguments_done", "full"),
    "response.mcp_call_arguments.delta": ("arguments_delta", "delta"),
    "response.mcp_call_arguments.done": ("arguments_done", "full"),
}
#: Item type -> who runs the call (None: not a call).
_CALL_ITEMS: Mapping[str, Literal["client", "server"]] = {
    "function_call": "client",
    "mcp_call": "server",
    "mcp_approval_request": "server",
}
_OTHER_ITEMS = frozenset({"message", "mcp_list_tools", "function_call_output"})
#: Content part types -> part kind.
_PART_KINDS: Mapping[str, PartKind] = {
    "output_text": "text",
    "text": "text",
    "output_audio": "audio",
    "audio": "audio",
}


class _Item:
    __slots__ = ("call", "id", "state", "type")

    def __init__(self, item_id: str | None, item_type: str) -> None:
        self.id = item_id
        self.type = item_type
        self.state: ItemState = "open"
        self.call: CallBuffer | None = None


class RealtimeItems:
    """The output items of one response: their parts, text and calls."""

    def __init__(self, acc: Accumulator, choice: ChoiceState, audio: AudioMode) -> None:
        self._acc = acc
        self._audio: AudioMode = audio
        self.choice = choice
        self.items: dict[str | None, _Item] = {}
        #: Text and transcript parts: ``(item id, content index) -> (kind, chunks)``.
        self.parts: dict[tuple[str | None, int], tuple[PartKind, list[str]]] = {}
        #: The turn that owns the response (set by the session, for audio).
        self.turn: Turn[Any] | None = None
        self._order: list[str | None] = []

    @property
    def empty(self) -> bool:
        """No item was announced or streamed."""
        return not self.items

    @property
    def client_calls(self) -> bool:
        """Whether the response asked the caller to run a tool."""
        return any(i.call is not None and i.call.executor == "client" for i in self._items())

    # --- content -----------------------------------------------------------------------------

    def content(self, obj: dict[str, Any], out: list[Event]) -> None:
        """Applies one content event (a type of ``HANDLERS``)."""
        kind = obj["type"]
        handler, input = HANDLERS[kind]
        if handler == "item_added" or handler == "item_done":
            self._item_event(obj, handler, out)
            return
        item = self._item_for(obj, input, kind, out)
        if item is None or handler == "nothing":
            return
        if handler in ("arguments_delta", "arguments_done"):
            self._arguments(item, obj, handler == "arguments_done", kind, out)
            return
        index = obj.get("content_index", 0)
        if type(index) is not int:
            index = 0
        if handler == "audio_delta":
            turn = self.turn
            if turn is not None and not turn.count_audio(obj.get("delta"), self._audio):
                self._acc.warn("invalid_audio", f"{kind}: the delta is not base64 text")
            return
        if handler == "part_added" or handler == "part_done":
            part = obj.get("part")
            if type(part) is not dict:
                self._acc.conflict(f"{kind} has no part object")
                return
            part_kind = _part_kind(part.get("type"))
            if part_kind is None:
                out.append(
                    self._acc.unknown_event(f"part:{part.get('type')}", dump(obj, cap=RAW_CAP))
                )
                return
            chunks = self._part(item, index, part_kind, kind, out)
            if chunks is not None:
                field = "text" if part_kind == "text" else "transcript"
                self._settle(chunks, part.get(field), kind, out)
            return
        part_kind = "text" if handler.startswith("text") else "audio"
        chunks = self._part(item, index, part_kind, kind, out)
        if chunks is None:
            return
        if handler.endswith("_delta"):
            delta = obj.get("delta")
            if type(delta) is not str:
                self._acc.conflict(f"{kind}: the delta is not a string")
            elif delta:
                self._append(chunks, delta, out)
        else:
            self._settle(
                chunks, obj.get("text" if part_kind == "text" else "transcript"), kind, out
            )

    def _items(self) -> list[_Item]:
        return [self.items[key] for key in self._order]

    def _item_for(
        self, obj: dict[str, Any], input: ItemInput, kind: str, out: list[Event]
    ) -> _Item | None:
        item_id = obj.get("item_id")
        key = item_id if type(item_id) is str else None
        item = self.items.get(key)
        action, following = ITEMS["absent" if item is None else item.state, input]
        if action == "conflict":
            self._acc.conflict(f"{kind} arrived for item {key!r} after it was done")
            return None
        if item is None:
            guessed = "function_call" if "arguments" in kind else "message"
            if kind.startswith("response.mcp_call"):
                guessed = "mcp_call"
            self._acc.warn("item_not_announced", f"{kind} arrived for unannounced item {key!r}")
            item = self._new_item(key, guessed, {"call_id": obj.get("call_id")}, out)
            if item is None:
                return None
        item.state = following
        return item

    def _item_event(self, obj: dict[str, Any], handler: str, out: list[Event]) -> None:
        body = obj.get("item")
        kind = obj["type"]
        if type(body) is not dict:
            self._acc.conflict(f"{kind} has no item object")
            return
        item_id = body.get("id")
        key = item_id if type(item_id) is str and item_id else None
        item_type = body.get("type")
        if type(item_type) is not str or (
            item_type not in _CALL_ITEMS and item_type not in _OTHER_ITEMS
        ):
            name = f"item:{item_type}" if type(item_type) is str else "item:<untyped>"
            out.append(self._acc.unknown_event(name, dump(obj, cap=RAW_CAP)))
            return
        item = self.items.get(key)
        input: ItemInput = "added" if handler == "item_added" else "done"
        action, following = ITEMS["absent" if item is None else item.state, input]
        if action == "conflict":
            self._acc.conflict(f"{kind} arrived for item {key!r} after it was done")
            return
        if item is None:
            if action == "adopt":
                self._acc.warn("item_not_announced", f"{kind} arrived for unannounced item {key!r}")
            item = self._new_item(key, item_type, body, out)
            if item is None:
                return
        elif item.type != item_type:
            self._acc.conflict(f"item {key!r} changed its type from {item.type!r} to {item_type!r}")
            return
        item.state = following
        if item.call is not None:
            self._identify(item, body)
        if input == "added":
            return
        if item.call is not None:
            arguments = body.get("arguments")
            if arguments is not None:
                self._settle_arguments(item, arguments, kind, out)
            self._complete(item, out)
        elif item_type == "message":
            self._settle_message(item, body.get("content"), kind, out)
        if action in ("finish", "adopt"):
            self._acc.provider_content.append(body)

    def _new_item(
        self, key: str | None, item_type: str, body: dict[str, Any], out: list[Event]
    ) -> _Item | None:
        if not self._acc.reserve_block(out):  # max_content_blocks
            return None
        item = self.items[key] = _Item(key, item_type)
        self._order.append(key)
        executor = _CALL_ITEMS.get(item_type)
        if executor is None:
            return item
        calls = self._acc.calls
        call = calls.open(("realtime-item", len(self._order)), 0, executor)
        if call is None:
            acc = self._acc
            if acc.error is None or acc.error.type != "too_many_tool_calls":
                message = f"more than max_tool_calls ({calls.max_calls}) tool calls"
                out.append(acc.fail("limit", "too_many_tool_calls", None, message))
            return item
        call.type = item_type
        item.call = call
        self._identify(item, body)
        out.append(call.started())
        return item

    def _identify(self, item: _Item, body: Mapping[str, Any]) -> None:
        call = item.call
        assert call is not None
        call_id = body.get("call_id")
        if call_id is None and call.executor == "server":
            call_id = body.get("id")
        for field, value in (("id", call_id), ("name", body.get("name"))):
            if value is None:
                continue
            if type(value) is not str:
                self._acc.conflict(f"the {field} of item {item.id!r} is not a string")
                continue
            conflict = call.set_identity(field, value)  # type: ignore[arg-type]
            if conflict is not None:
                self._acc.conflict(f"item {item.id!r}: {conflict}")

    # --- parts ------------------------------------------------------------------------------

    def _part(
        self, item: _Item, index: int, kind: PartKind, event: str, out: list[Event]
    ) -> list[str] | None:
        if item.type != "message":
            self._acc.conflict(f"{event} arrived for item {item.id!r} of type {item.type!r}")
            return None
        found = self.parts.get((item.id, index))
        if found is None:
            if not self._acc.reserve_block(out):  # max_content_blocks
                return None
            chunks: list[str] = []
            self.parts[(item.id, index)] = (kind, chunks)
            return chunks
        if found[0] != kind:
            self._acc.conflict(f"{event}: content part {index} of item {item.id!r} is {found[0]}")
            return None
        return found[1]

    def _append(self, chunks: list[str], text: str, out: list[Event]) -> None:
        chunks.append(text)
        self.choice.text.append(text)
        out.append(new_text_delta(text, 0))

    def _settle(self, chunks: list[str], full: Any, where: str, out: list[Event]) -> None:
        if full is None:
            return
        if type(full) is not str:
            self._acc.conflict(f"{where}: the full text is not a string")
            return
        if not chunks:
            if full:
                self._append(chunks, full, out)
            return
        streamed = chunks[0] if len(chunks) == 1 else "".join(chunks)
        if streamed != full:
            self._acc.conflict(
                f"{where}: the full text ({len(full)} chars) differs from its deltas "
                f"({len(streamed)} chars)"
            )

    def _settle_message(self, item: _Item, content: Any, where: str, out: list[Event]) -> None:
        if type(content) is not list:
            return
        for index, part in enumerate(content):
            if type(part) is not dict:
                continue
            kind = _part_kind(part.get("type"))
            if kind is None:
                continue
            found = self.parts.get((item.id, index))
            if found is None:
                chunks: list[str] = []
                self.parts[(item.id, index)] = (kind, chunks)
            elif found[0] != kind:
                continue
            else:
                chunks = found[1]
            self._settle(chunks, part.get("text" if kind == "text" else "transcript"), where, out)

    # --- calls ------------------------------------------------------------------------------

    def _arguments(
        self, item: _Item, obj: dict[str, Any], full: bool, kind: str, out: list[Event]
    ) -> None:
        call = item.call
        if call is None:
            if item.type not in _CALL_ITEMS:
                self._acc.conflict(f"{kind} arrived for item {item.id!r} of type {item.type!r}")
            return  # else: over the call cap, already an error
        expected = "mcp_call" if kind.startswith("response.mcp_call") else "function_call"
        if (expected == "mcp_call") != (item.type != "function_call"):
            self._acc.conflict(f"{kind} arrived for item {item.id!r} of type {item.type!r}")
            return
        self._identify(item, {"call_id": obj.get("call_id"), "name": obj.get("name")})
        if full:
            self._settle_arguments(item, obj.get("arguments"), kind, out)
            self._complete(item, out)
            return
        delta = obj.get("delta")
        if type(delta) is not str:
            self._acc.conflict(f"{kind}: the delta is not a string")
        elif delta:
            self._append_arguments(call, delta, out)

    def _append_arguments(self, call: CallBuffer, fragment: str, out: list[Event]) -> None:
        if call.overflowed or call.state != "collecting":
            if call.state != "collecting":
                self._acc.conflict(f"arguments arrived for call {call.id!r} after it completed")
            return
        self._acc.append_arguments(call, fragment, out)

    def _settle_arguments(self, item: _Item, full: Any, where: str, out: list[Event]) -> None:
        call = item.call
        if call is None or full is None:
            return
        if type(full) is not str:
            self._acc.conflict(f"{where}: the arguments of call {call.id!r} are not a string")
            return
        if call.state == "collecting":
            if call.size == 0 and not call.overflowed:
                if full:
                    self._append_arguments(call, full, out)
                return
            if call.overflowed:
                return
            streamed = "".join(call.parts)
            call.parts = [streamed]
        else:
            streamed = call.raw_arguments()
        check_full_arguments(self._acc, call, streamed, full, where)

    def _complete(self, item: _Item, out: list[Event]) -> None:
        call = item.call
        if call is not None and call.state == "collecting":
            self._acc.complete_call(call, out)

    def complete_open(self, out: list[Event]) -> None:
        """The response completed: every call still collecting is complete."""
        for item in self._items():
            self._complete(item, out)


def _part_kind(value: Any) -> PartKind | None:
    return _PART_KINDS.get(value) if type(value) is str else None
