"""Tool results, correlated to the call that asked for them, in each protocol's shape.

``tool_result(result_or_stream, call, output, is_error=False)`` builds what
the next request must carry to answer one call, in the format of the protocol
the call came from (provider references checked 2026-11-29):

=====================  ======================================================
protocol               returned value (what the caller puts in the request)
=====================  ======================================================
``openai-chat``        message ``{"role": "tool", "tool_call_id", "content"}``;
                       a legacy ``function_call`` gets ``{"role": "function",
                       "name", "content"}``
``openai-responses``   input item ``{"type": "function_call_output",
(and ``-ws``)          "call_id", "output"}`` (``custom_tool_call_output``
                       for a custom tool's call); the built-in tools the
                       caller runs have their own (below)
``openai-realtime``    client event ``{"type": "conversation.item.create",
                       "item": {"type": "function_call_output", "call_id",
                       "output"}}``
``anthropic``,         content block ``{"type": "tool_result", "tool_use_id",
``bedrock-invoke``     "content", "is_error"?}`` (put every result of a turn in
                       one user message)
``bedrock-converse``   content block ``{"toolResult": {"toolUseId", "content":
                       [{"text"} | {"json"}], "status"?}}``
``gemini``,            part ``{"functionResponse": {"name", "id"?,
``gemini-json``        "response": {"output"} | {"error"}}}``
``gemini-live``        ``{"id"?, "name", "response"}`` (one of
                       ``toolResponse.functionResponses``)
=====================  ======================================================

It refuses (``ToolResultError``) a call id the stream did not produce, and a
call the provider runs itself: an answer that no call asked for is how
agent loops get confused. Chat Completions has no error flag: with
``is_error=True`` the output is sent as is, and should say that it failed.

The OpenAI Responses built-in tools the caller runs are answered by output
items of their own (the input item types of the OpenAPI document, as
openai-python 3.57.0 generates them, and OpenAI's tool guides, checked
2026-12-01):

=====================  ======================================================
call type              returned input item
=====================  ======================================================
``local_shell_call``   ``{"type": "local_shell_call_output", "id": <call_id>,
                       "output"}``: the schema names the call's ``call_id``
                       ``id``; ``output`` is a string (JSON text or the
                       command's output)
``shell_call``         ``{"type": "shell_call_output", "call_id", "output":
                       [{"stdout", "stderr", "outcome"}], "max_output_length"?}``:
                       pass the list of per-command results, or a string for
                       one command's stdout (outcome ``exit`` 0, or 1 with
                       ``is_error``); ``max_output_length`` is the call's, as
                       the API wants it back
``apply_patch_call``   ``{"type": "apply_patch_call_output", "call_id",
                       "status": "completed" | "failed", "output"?}``
                       (``failed`` with ``is_error``)
``tool_search_call``   ``{"type": "tool_search_output", "call_id",
                       "execution": "client", "tools": [...]}``: ``output``
                       is the list of tool definitions the search loaded
=====================  ======================================================
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from .errors import UsageError
from .protocols import Stream
from .result import StreamResult, ToolCall

__all__ = ["RESULT_RESOLVERS", "UNKNOWN_ID_HINTS", "ToolResultError", "tool_result"]

#: protocol -> a function ``(result_or_stream, result, call_id) -> str`` that
#: explains why an unknown call id is wrong (e.g. an item id quoted instead of
#: the call id); its text is appended to the refusal. Filled by the adapters.
UNKNOWN_ID_HINTS: dict[str, Callable[[Any, StreamResult, str], str]] = {}
#: protocol -> a function ``(result_or_stream, call_id) -> StreamResult`` that
#: picks the result a tool result answers (a WebSocket session holds one result
#: per response: the one that made the call) and refuses, by raising
#: ``ToolResultError``, a call that may get no result (one the provider
#: cancelled). Filled by the adapters.
RESULT_RESOLVERS: dict[str, Callable[[Any, str], StreamResult]] = {}


class ToolResultError(UsageError, ValueError):
    """The call id was not produced by this stream (or may not get a client result)."""


def tool_result(
    result_or_stream: StreamResult | Stream,
    call: ToolCall | str,
    output: Any,
    *,
    is_error: bool = False,
) -> dict[str, Any]:
    """The tool-result message (or block, item, part) answering ``call``.

    ``call`` is a ``ToolCall`` of the result (``for call in r.tool_calls``)
    or its id. ``output`` is usually a string; other JSON values are
    serialized where the protocol wants a string, and passed as structured
    content where it accepts that (bedrock ``json``, gemini ``response``).
    """
    if isinstance(call, ToolCall):
        if call.id is None:
            raise ToolResultError(f"tool call {call.index} ({call.name}) has no id to answer")
        call_id = call.id
    else:
        call_id = call
    result = result_or_stream.result if isinstance(result_or_stream, Stream) else result_or_stream
    resolve = RESULT_RESOLVERS.get(result.protocol)
    if resolve is not None:
        result = resolve(result_or_stream, call_id)
    found = result.tool_call(call_id)
    if found is None:
        hint = UNKNOWN_ID_HINTS.get(result.protocol)
        why = hint(result_or_stream, result, call_id) if hint is not None else ""
        raise ToolResultError(
            f"this {result.protocol} stream produced no tool call {call_id!r}{why}"
        )
    if found.executor != "client":
        raise ToolResultError(f"tool call {call_id!r} was run by the provider itself")
    try:
        build = _BUILDERS[result.protocol]
    except KeyError:
        raise ToolResultError(f"no tool-result format for protocol {result.protocol!r}") from None
    return build(found, output, is_error)


def _text(output: Any) -> str:
    return output if isinstance(output, str) else json.dumps(output, ensure_ascii=False)


def _chat(call: ToolCall, output: Any, is_error: bool) -> dict[str, Any]:
    if call.type == "function_call":  # the deprecated single function call
        return {"role": "function", "name": call.name, "content": _text(output)}
    return {"role": "tool", "tool_call_id": call.id, "content": _text(output)}


def _responses(call: ToolCall, output: Any, is_error: bool) -> dict[str, Any]:
    build = _RESPONSES_OUTPUTS.get(call.type)
    if build is not None:  # a custom or built-in tool's result has its own item type
        return build(call, output, is_error)
    return {"type": "function_call_output", "call_id": call.id, "output": _text(output)}


def _custom_tool(call: ToolCall, output: Any, is_error: bool) -> dict[str, Any]:
    return {"type": "custom_tool_call_output", "call_id": call.id, "output": _text(output)}


def _local_shell(call: ToolCall, output: Any, is_error: bool) -> dict[str, Any]:
    return {"type": "local_shell_call_output", "id": call.id, "output": _text(output)}


def _shell(call: ToolCall, output: Any, is_error: bool) -> dict[str, Any]:
    if isinstance(output, str):
        outcome = {"type": "exit", "exit_code": 1 if is_error else 0}
        output = [{"stdout": output, "stderr": "", "outcome": outcome}]
    elif not isinstance(output, list):
        raise ToolResultError(
            "a shell_call's output is a list of {stdout, stderr, outcome} results "
            f"(or a string), not {type(output).__name__}"
        )
    item: dict[str, Any] = {"type": "shell_call_output", "call_id": call.id, "output": output}
    action = call.arguments.get("action") if call.arguments is not None else None
    limit = action.get("max_output_length") if isinstance(action, dict) else None
    if type(limit) is int:
        item["max_output_length"] = limit
    return item


def _apply_patch(call: ToolCall, output: Any, is_error: bool) -> dict[str, Any]:
    item: dict[str, Any] = {
        "type": "apply_patch_call_output",
        "call_id": call.id,
        "status": "failed" if is_error else "completed",
    }
    if output is not None:
        item["output"] = _text(output)
    return item


def _tool_search(call: ToolCall, output: Any, is_error: bool) -> dict[str, Any]:
    if not isinstance(output, list):
        raise ToolResultError(
            "a tool_search_call's output is the list of tool definitions it loaded, "
            f"not {type(output).__name__}"
        )
    return {
        "type": "tool_search_output",
        "call_id": call.id,
        "execution": "client",
        "tools": output,
    }


#: Responses call types whose result is not a ``function_call_output``.
_RESPONSES_OUTPUTS: dict[str, Callable[[ToolCall, Any, bool], dict[str, Any]]] = {
    "custom_tool_call": _custom_tool,
    "local_shell_call": _local_shell,
    "shell_call": _shell,
    "apply_patch_call": _apply_patch,
    "tool_search_call": _tool_search,
}


def _realtime(call: ToolCall, output: Any, is_error: bool) -> dict[str, Any]:
    return {"type": "conversation.item.create", "item": _responses(call, output, is_error)}


def _anthropic(call: ToolCall, output: Any, is_error: bool) -> dict[str, Any]:
    block: dict[str, Any] = {"type": "tool_result", "tool_use_id": call.id}
    block["content"] = output if isinstance(output, list) else _text(output)
    if is_error:
        block["is_error"] = True
    return block


def _bedrock(call: ToolCall, output: Any, is_error: bool) -> dict[str, Any]:
    content = [{"text": output}] if isinstance(output, str) else [{"json": output}]
    body: dict[str, Any] = {"toolUseId": call.id, "content": content}
    if is_error:
        body["status"] = "error"
    return {"toolResult": body}


def _gemini_response(call: ToolCall, output: Any, is_error: bool) -> dict[str, Any]:
    response: dict[str, Any]
    if isinstance(output, dict) and not is_error:
        response = output
    else:
        response = {"error" if is_error else "output": output}
    body: dict[str, Any] = {"name": call.name}
    if call.id is not None and call.id_source == "provider":
        body["id"] = call.id  # a synthetic id is never sent to the provider
    body["response"] = response
    return body


def _gemini(call: ToolCall, output: Any, is_error: bool) -> dict[str, Any]:
    return {"functionResponse": _gemini_response(call, output, is_error)}


_BUILDERS: dict[str, Callable[[ToolCall, Any, bool], dict[str, Any]]] = {
    "openai-chat": _chat,
    "openai-responses": _responses,
    "openai-responses-ws": _responses,
    "openai-realtime": _realtime,
    "anthropic": _anthropic,
    "bedrock-invoke": _anthropic,
    "bedrock-converse": _bedrock,
    "gemini": _gemini,
    "gemini-json": _gemini,
    "gemini-live": _gemini_response,
}
