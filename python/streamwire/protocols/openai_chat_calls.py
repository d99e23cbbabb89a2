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

Groq's ``delta.executed_tools`` are the tools Groq's compound systems ran
themselves (web search, code execution; recorded in pydantic-ai's
``test_groq_model_web_search_tool_stream`` cassette): each entry, keyed by
its ``index``, is a server tool call (``executor="server"``, never offered
for execution) of type ``executed_tool``, named by the entry's ``name`` or
else its ``type`` (``search``), with a synthetic id (Groq sends none) and its
``arguments`` string as the call's arguments. Groq repeats an entry with the
tool's output: the repeat must carry the same arguments (else a conflict),
and the merged entry is kept for the next turn (``openai_chat_parts.py``).

Calls are recorded in the stream's shared ``ToolCalls`` (``toolcalls.py``);
completion, parsing and release happen there, at the choice's finish_reason.
"""

from __future__ import annotations

from typing import Any

from ..accumulate import Accumulator, ChoiceState
from ..events import Event, Executor
from ..toolcalls import CallBuffer
from .openai_chat_parts import ChatParts

__all__ = ["ChatCalls"]


class ChatCalls:
    """Turns one chat stream's tool-call fragments into calls and events."""

    def __init__(self, acc: Accumulator, parts: ChatParts) -> None:
        self._acc = acc
        self._calls = acc.calls
        self._parts = parts

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
            if call_id is not None and type(call_id) is not str:
                # Checked before the id keys anything (a list or object is unhashable).
                acc.conflict(f"the id of a tool call fragment of choice {choice} is not a string")
                continue
            if type(index) is int:
                key: tuple[Any, ...] = (choice, index)
                call = by_key.get(key)
                if call is None and call_id:
                    # A server that keyed this call by id before it sent an index.
                    call = by_key.get((choice, "id", call_id))
                    if call is not None:
                        by_key[key] = call
            elif index is None and call_id:
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

    def _open_call(
        self, key: tuple[Any, ...], choice: int, out: list[Event], executor: Executor = "client"
    ) -> CallBuffer | None:
        call = self._calls.open(key, choice, executor)
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
            call.set_identity("id", f"function_call-{state.index}")
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

    def on_executed_tools(self, state: ChoiceState, entries: Any, out: list[Event]) -> None:
        """Applies Groq's ``delta.executed_tools``: each entry is a server tool call."""
        acc = self._acc
        choice = state.index
        if type(entries) is not list:
            acc.conflict(f"delta.executed_tools of choice {choice} is not a list")
            return
        for entry in entries:
            index = entry.get("index") if type(entry) is dict else None
            if type(index) is not int or type(entry) is not dict:
                acc.conflict(f"an executed tool of choice {choice} has no integer index")
                continue
            key = (choice, "executed", index)
            call = self._calls.by_key.get(key)
            if call is None:
                call = self._open_executed(key, choice, index, entry, out)
                if call is None:
                    return
            arguments = entry.get("arguments")
            if type(arguments) is str:
                if call.size == 0 and not call.overflowed:
                    if arguments:
                        acc.append_arguments(call, arguments, out)
                elif not call.overflowed and "".join(call.parts) != arguments:
                    acc.conflict(f"executed tool {index} of choice {choice} changed its arguments")
            elif arguments is not None:
                acc.conflict(f"the arguments of executed tool {index} are not a string")
            if choice == 0:
                self._parts.keep_executed_tool(index, entry)

    def _open_executed(
        self, key: tuple[Any, ...], choice: int, index: int, entry: dict[str, Any], out: list[Event]
    ) -> CallBuffer | None:
        call = self._open_call(key, choice, out, executor="server")
        if call is None:
            return None
        # Groq sends no id: a synthetic one, never sent back (nothing to answer).
        call.set_identity("id", f"executed_tool-{choice}-{index}")
        call.id_source = "synthetic"
        call.type = "executed_tool"
        name = entry.get("name")
        if type(name) is not str or not name:
            name = entry.get("type")
        if type(name) is str and name:
            call.name = name[:256]
        out.append(call.started())
        return call
