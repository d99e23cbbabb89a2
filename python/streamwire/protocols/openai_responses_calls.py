"""Tool calls among the output items of one OpenAI Responses response.

Calls are output items ("Responses streaming events" and "The response
object", platform.openai.com/docs/api-reference/responses-streaming, checked
2026-11-29): ``response.output_item.added`` announces one with its item
``id``, ``call_id`` and ``name``; its arguments stream by item id, may be
repeated whole in the ``.done`` event and in the done item, or arrive only
there. Each call has its own buffer in the stream's shared ``ToolCalls``;
the copies settle as parts do (``openai_responses_items.py``).

``ToolCall.id`` is the item's ``call_id``, the id a tool result must quote,
not its item id. ``function_call`` and ``custom_tool_call`` items are the
caller's to execute, and so are the built-in tools that OpenAI's tool
guides (developers.openai.com/api/docs/guides, checked 2026-12-01) say the
caller runs (``local_shell_call``, a local ``shell_call``,
``apply_patch_call``, a client ``tool_search_call``, ``computer_call``),
each answered by an output item of its own (``toolresults.py``). The other
built-in tools are the server's (``executor="server"``). What each item is
and how its arguments are read is data (``CALLS``, ``CallSpec``);
docs/protocols/openai-responses.md has the table.

A provisional ``call_id`` (docs/design.md "Tool calls"): for item types
marked ``provisional_id`` (a client ``tool_search_call``) the announced
``call_id`` is ignored; the call starts without an id and gets the settled
one from its done item.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Literal, NamedTuple

from ..accumulate import Accumulator
from ..events import Event, Executor
from ..toolcalls import ToolCalls
from ._arguments import check_full_arguments
from ._values import dump
from .openai_responses_item import Item

__all__ = ["BUILTIN_CLIENT_CALLS", "CALLS", "CallSpec", "ItemCalls", "executor_of"]


class CallSpec(NamedTuple):
    """How an item type is reported as a tool call."""

    #: ``client`` (the caller runs it) or ``server`` (built in: reported only);
    #: ``by_item``: decided by the item body (``executor_of``).
    executor: Executor | Literal["by_item"]
    #: The tool name when the item carries none (for built-in tools, the type
    #: of the request's tool: ``shell`` for ``{"type": "shell"}``).
    name: str | None
    #: The item field holding the arguments (streamed by delta events), if any.
    field: str | None
    #: Built-in items: the fields that form ``raw_arguments`` as a JSON object.
    inputs: tuple[str, ...] = ()
    #: Free-text input (custom tools) instead of JSON arguments.
    free_text: bool = False
    #: The announced ``call_id`` is provisional: only the done item's counts.
    provisional_id: bool = False
    #: Built-in tools the caller runs: the ``type`` values of the request's
    #: tool definitions that declare the tool (empty: not such a tool).
    tool_types: tuple[str, ...] = ()


#: Item types reported as tool calls.
CALLS: Mapping[str, CallSpec] = {
    "function_call": CallSpec("client", None, "arguments"),
    "custom_tool_call": CallSpec("client", None, "input", free_text=True),
    "mcp_call": CallSpec("server", None, "arguments"),
    "mcp_approval_request": CallSpec("server", None, "arguments"),
    "tool_search_call": CallSpec(
        "by_item", "tool_search", "arguments", provisional_id=True, tool_types=("tool_search",)
    ),
    "web_search_call": CallSpec("server", "web_search", None, ("action",)),
    "file_search_call": CallSpec("server", "file_search", None, ("queries",)),
    "code_interpreter_call": CallSpec("server", "code_interpreter", None, ("code", "container_id")),
    "image_generation_call": CallSpec("server", "image_generation", None),
    "mcp_list_tools": CallSpec("server", "mcp_list_tools", None, ("server_label",)),
    "local_shell_call": CallSpec(
        "client", "local_shell", None, ("action",), tool_types=("local_shell",)
    ),
    "shell_call": CallSpec("by_item", "shell", None, ("action",), tool_types=("shell",)),
    "computer_call": CallSpec(
        "client",
        "computer",
        None,
        ("action", "actions", "pending_safety_checks"),
        tool_types=("computer", "computer_use_preview"),
    ),
    "apply_patch_call": CallSpec(
        "client", "apply_patch", None, ("operation",), tool_types=("apply_patch",)
    ),
}
#: Built-in item types the caller runs (when ``executor_of`` says so).
BUILTIN_CLIENT_CALLS = frozenset(t for t, spec in CALLS.items() if spec.tool_types)


def executor_of(item_type: str, spec: CallSpec, body: Mapping[str, Any] | None) -> Executor:
    """Who runs a call item: its spec's executor, or what its body says.

    Without a body (content that arrived before the announcement) a call whose
    executor depends on it is reported as the provider's: never offered for
    execution on a guess.
    """
    if spec.executor != "by_item":
        return spec.executor
    if body is None:
        return "server"
    if item_type == "tool_search_call":
        return "client" if body.get("execution") == "client" else "server"
    # shell_call: the local environment (or none: the shell tool as first
    # released, local only) is the caller's; a container is OpenAI's.
    environment = body.get("environment")
    if environment is None:
        return "client"
    if type(environment) is dict and environment.get("type") == "local":
        return "client"
    return "server"


class ItemCalls:
    """The tool calls of one response's output items (owned by its ``Items``,
    which finds the item an event names and hands it over)."""

    def __init__(self, items: list[Item], acc: Accumulator) -> None:
        #: The response's items in order (the ``Items``' own list, shared).
        self._items = items
        self._acc = acc
        self._calls: ToolCalls = acc.calls

    def open(
        self, item: Item, spec: CallSpec, body: Mapping[str, Any] | None, out: list[Event]
    ) -> None:
        """Opens a call item's buffer (past ``max_tool_calls``: an error, no buffer)."""
        calls = self._calls
        executor = executor_of(item.type, spec, body)
        call = calls.open(("responses-item", len(self._items)), 0, executor)
        acc = self._acc
        if call is None:
            if acc.error is None or acc.error.type != "too_many_tool_calls":
                message = f"more than max_tool_calls ({calls.max_calls}) tool calls"
                out.append(acc.fail("limit", "too_many_tool_calls", None, message))
            return
        call.type = item.type
        if spec.name is not None:
            call.name = spec.name
        item.call = call

    def identify(self, item: Item, body: Mapping[str, Any], *, settled: bool) -> None:
        """Sets (or checks) the call's identity from an item body; ``settled``:
        the done item's (a provisional ``call_id`` counts only there)."""
        call = item.call
        assert call is not None
        spec = CALLS[item.type]
        call_id = body.get("call_id")
        if spec.provisional_id and not settled:
            call_id = None
        elif call_id is None:
            call_id = None if call.executor == "client" else body.get("id")
        name = body.get("name") if spec.name is None else None
        for field, value in (("id", call_id), ("name", name)):
            if value is None:
                continue
            if type(value) is not str:
                self._acc.conflict(f"the {field} of output item {item.id!r} is not a string")
                continue
            conflict = call.set_identity(field, value)  # type: ignore[arg-type]
            if conflict is not None:
                self._acc.conflict(f"output item {item.id!r}: {conflict}")

    def append(self, item: Item, fragment: str, out: list[Event]) -> None:
        """An arguments (or custom input) fragment of a call item."""
        call = item.call
        assert call is not None
        self._acc.append_arguments(call, fragment, out)

    def settle_value(self, item: Item, full: Any, where: str, out: list[Event]) -> None:
        """The full arguments (or custom input) of a call item: kept when no
        delta came, else checked against the deltas."""
        call = item.call
        assert call is not None
        if full is None:
            return
        if type(full) is not str:
            full = dump(full)  # e.g. a tool search's arguments object
        if call.state == "collecting":
            if call.size == 0 and not call.overflowed:
                if full:
                    self.append(item, full, out)
                return
            if call.overflowed:
                return
            streamed = call.parts[0] if len(call.parts) == 1 else "".join(call.parts)
            call.parts = [streamed]
        else:
            streamed = call.raw_arguments()
        check_full_arguments(
            self._acc, call, streamed, full, where, free_text=CALLS[item.type].free_text
        )

    def settle(
        self, item: Item, body: Mapping[str, Any], out: list[Event], *, initial: bool
    ) -> None:
        """Settles a call's arguments with an announced (``initial``) or done item."""
        spec = CALLS[item.type]
        if spec.field is not None:
            value = body.get(spec.field)
            if initial and not value:
                return  # the announcement carries "" before the deltas
            where = "response.output_item." + ("added" if initial else "done")
            self.settle_value(item, value, where, out)
        elif not initial:
            call = item.call
            assert call is not None
            if call.state == "collecting" and call.size == 0:
                inputs = {k: body[k] for k in spec.inputs if body.get(k) is not None}
                if inputs:
                    # A built-in call's input, as JSON (no delta event: not streamed).
                    self._calls.append(call, dump(inputs))

    def complete(self, item: Item, out: list[Event]) -> None:
        """Completes a collecting call: parsed (or taken as free text) once, checked."""
        call = item.call
        assert call is not None
        if call.state != "collecting":
            return
        spec = CALLS[item.type]
        self._acc.complete_call(
            call, out, free_text=spec.free_text, builtin=spec.tool_types or None
        )

    def complete_open(self, out: list[Event]) -> None:
        """The response reached its terminal event: every open call is complete."""
        for item in self._items:
            if item.call is not None and item.call.state == "collecting":
                self.complete(item, out)

    @property
    def client_calls(self) -> bool:
        """Whether the response asked the caller to run a tool."""
        return any(i.call is not None and i.call.executor == "client" for i in self._items)
