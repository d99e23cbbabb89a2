"""Tool-call fragments of the ``openai-chat`` adapter: keying, identity, arguments.

Chat Completions streams a call as ``delta.tool_calls`` fragments (OpenAI API
reference, "The chat completion chunk object", checked 2026-11-29): the
first fragment of a call carries its ``index``, ``id``, ``type`` and
``function.name``, later ones only ``index`` and a piece of
``function.arguments``. Compatible servers vary: some repeat the identity
fields in every fragment (a no-op here, where the openai SDK concatenates
them), some send whole calls without ``index`` but with distinct ids (keyed by
id), some send ``arguments: null``. A fragment with neither ``index`` nor
``id`` cannot be correlated: a protocol conflict. The deprecated
``delta.function_call`` is one call per choice with a synthetic id.

Calls are recorded in the stream's shared ``ToolCalls`` (``toolcalls.py``);
completion, parsing and release happen there, at the choice's finish_reason.
"""

from __future__ import annotations

from typing import Any

from ..accumulate import Accumulator, ChoiceState
from ..events import Event
from ..toolcalls import CallBuffer

__all__ = ["ChatCalls"]


class ChatCalls:
    """Turns one chat stream's tool-call fragments into calls and events."""

    def __init__(self, acc: Accumulator) -> None:
        self._acc = acc
        self._calls = acc.calls

    def on_tool_calls(self, state: ChoiceState, fragments: Any, out: list[Event]) -> None:
        """Applies a ``delta.tool_calls`` list: each fragment to its call, by key."""
        acc = self._acc
        if type(fragments) is not list:
            acc.conflict(f"delta.tool_calls of choice {state.index} is not a list")
            return
        choice = state.index
        by_key = self._calls.by_key
        for fragment in fragments:
            if type(fragment) is not dict:
                acc.conflict(f"a tool call fragment of choice {choice} is not an object")
                continue
            index = fragment.get("index")
            call_id = fragment.get("id")
            if type(index) is int:
                key: tuple[Any, ...] = (choice, index)
                call = by_key.get(key)
                if call is None and call_id:
                    # A server that keyed this call by id before it sent an index.
                    call = by_key.get((choice, "id", call_id))
                    if call is not None:
                        by_key[key] = call
            elif index is None and call_id and type(call_id) is str:
                key = (choice, "id", call_id)
                call = by_key.get(key)
            else:
                acc.conflict(
                    f"a tool call fragment of choice {choice} has neither an index nor an id: "
                    "it cannot be correlated to a call"
                )
                continue
            function = fragment.get("function")
            if function is not None and type(function) is not dict:
                acc.conflict(f"a tool call fragment of choice {choice} has a non-object function")
                continue
            self._on_fragment(state, key, call, call_id, fragment.get("type"), function, out)

    def _on_fragment(
        self,
        state: ChoiceState,
        key: tuple[Any, ...],
        call: CallBuffer | None,
        call_id: Any,
        call_type: Any,
        function: dict[str, Any] | None,
        out: list[Event],
    ) -> None:
        acc = self._acc
        name = arguments = None
        if function is not None:
            name = function.get("name")
            arguments = function.get("arguments")
        new = call is None
        if call is None:
            call = self._open_call(key, state.index, out)
            if call is None:
                return
        if call_id is not None or name is not None or call_type is not None:
            if not self._set_identity(call, call_id, name, call_type):
                return
            if call.id is not None:
                self._calls.by_key.setdefault((state.index, "id", call.id), call)
        if new:
            out.append(call.started())
        if arguments:
            self._append_arguments(call, arguments, out)
        elif arguments is not None and arguments != "":
            acc.conflict(f"the arguments of tool call {call.index} are not a string")

    def _open_call(self, key: tuple[Any, ...], choice: int, out: list[Event]) -> CallBuffer | None:
        call = self._calls.open(key, choice)
        if call is None:
            acc = self._acc
            if acc.error is None or acc.error.type != "too_many_tool_calls":
                out.append(
                    acc.fail(
                        "limit",
                        "too_many_tool_calls",
                        None,
                        f"more than max_tool_calls ({self._calls.max_calls}) tool calls",
                    )
                )
        return call

    def _set_identity(self, call: CallBuffer, call_id: Any, name: Any, call_type: Any) -> bool:
        for field, value in (("id", call_id), ("name", name), ("type", call_type)):
            if value is None:
                continue
            if type(value) is not str:
                self._acc.conflict(f"the {field} of tool call {call.index} is not a string")
                return False
            conflict = call.set_identity(field, value)  # type: ignore[arg-type]
            if conflict is not None:
                self._acc.conflict(conflict)
                return False
        return True

    def _append_arguments(self, call: CallBuffer, fragment: Any, out: list[Event]) -> None:
        if type(fragment) is not str:
            self._acc.conflict(f"the arguments of tool call {call.index} are not a string")
            return
        self._acc.append_arguments(call, fragment, out)

    def on_function_call(self, state: ChoiceState, value: Any, out: list[Event]) -> None:
        """Applies a deprecated ``delta.function_call`` fragment."""
        if type(value) is not dict:
            self._acc.conflict(f"delta.function_call of choice {state.index} is not an object")
            return
        key = (state.index, "function_call")
        call = self._calls.by_key.get(key)
        new = call is None
        if call is None:
            call = self._open_call(key, state.index, out)
            if call is None:
                return
            # The deprecated function_call has no id: tool results quote its name.
            call.id = f"function_call-{state.index}"
            call.id_source = "synthetic"
            call.type = "function_call"
        name = value.get("name")
        if name is not None and not self._set_identity(call, None, name, None):
            return
        if new:
            out.append(call.started())
        arguments = value.get("arguments")
        if arguments:
            self._append_arguments(call, arguments, out)
