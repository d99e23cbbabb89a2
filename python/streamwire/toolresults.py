"""Tool results, correlated to the call that asked for them, in each protocol's shape.

``tool_result(result_or_stream, call, output, is_error=False,
acknowledged_safety_checks=None)`` builds what the next request must carry
to answer one call, in the format of the protocol the call came from
(provider references checked 2026-11-29; each protocol's page in
docs/protocols/ has the full shapes):

=====================  ======================================================
protocol               returned value (what the caller puts in the request)
=====================  ======================================================
``openai-chat``        message ``{"role": "tool", "tool_call_id", "content"}``
``openai-responses``   input item ``{"type": "function_call_output",
(and ``-ws``)          "call_id", "output"}``; the built-in tools the caller
                       runs have output items of their own
``openai-realtime``    client event ``conversation.item.create`` with a
                       ``function_call_output`` item
``anthropic``,         content block ``{"type": "tool_result", "tool_use_id",
``bedrock-invoke``     "content", "is_error"?}``
``bedrock-converse``   content block ``{"toolResult": {"toolUseId", ...}}``
``gemini``, ``-json``  part ``{"functionResponse": {"name", "id"?, "response"}}``
``gemini-live``        ``{"id"?, "name", "response"}``
=====================  ======================================================

It refuses (``ToolResultError``) a call id the stream did not produce, and a
call the provider runs itself. The values the caller passes are checked
before they are put in the item, so that a mistake is a ``ToolResultError``
here, not a rejected request later.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from .errors import ToolResultError
from .protocols import Stream
from .protocols._tool_hooks import RESULT_RESOLVERS, UNKNOWN_ID_HINTS
from .result import StreamResult, ToolCall

__all__ = ["RESULT_RESOLVERS", "UNKNOWN_ID_HINTS", "ToolResultError", "tool_result"]


def tool_result(
    result_or_stream: StreamResult | Stream,
    call: ToolCall | str,
    output: Any,
    *,
    is_error: bool = False,
    acknowledged_safety_checks: Sequence[Mapping[str, Any]] | None = None,
) -> dict[str, Any]:
    """The tool-result message (or block, item, part) answering ``call``.

    ``call`` is a ``ToolCall`` of the result (``for call in r.tool_calls``)
    or its id. ``output`` is usually a string; other JSON values are
    serialized where the protocol wants a string, and passed as structured
    content where it accepts that (bedrock ``json``, gemini ``response``).
    ``acknowledged_safety_checks``: for an OpenAI Responses ``computer_call``
    only, the pending safety checks of the call that the user confirmed.
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
    message = build(found, output, is_error)
    if acknowledged_safety_checks is not None:
        if found.type != "computer_call":
            raise ToolResultError(
                "acknowledged_safety_checks answer a computer_call's pending safety checks; "
                f"tool call {call_id!r} is a {found.type}"
            )
        message["acknowledged_safety_checks"] = _acknowledged(found, acknowledged_safety_checks)
    return message


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
    elif isinstance(output, list):
        output = [_shell_result(n, entry) for n, entry in enumerate(output)]
    else:
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


def _shell_result(n: int, entry: Any) -> dict[str, Any]:
    """One command's result of a shell_call's output, checked (the schema's shape)."""
    where = f"shell_call output[{n}]"
    if not isinstance(entry, Mapping):
        raise ToolResultError(f"{where} is not a {{stdout, stderr, outcome}} object")
    for field in ("stdout", "stderr"):
        if not isinstance(entry.get(field), str):
            raise ToolResultError(f"{where}: {field} must be a string")
    given = entry.get("outcome")
    outcome: dict[str, Any] | None = None
    if isinstance(given, Mapping):
        if given.get("type") == "timeout":
            outcome = {"type": "timeout"}
        elif given.get("type") == "exit" and type(given.get("exit_code")) is int:
            outcome = {"type": "exit", "exit_code": given["exit_code"]}
    if outcome is None:
        raise ToolResultError(
            f'{where}: outcome must be {{"type": "exit", "exit_code": <int>}} '
            'or {"type": "timeout"}'
        )
    return {"stdout": entry["stdout"], "stderr": entry["stderr"], "outcome": outcome}


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
    for n, tool in enumerate(output):
        if not isinstance(tool, Mapping) or not isinstance(tool.get("type"), str):
            raise ToolResultError(
                f"tool_search_call output[{n}] is not a tool definition (an object with a type)"
            )
    return {
        "type": "tool_search_output",
        "call_id": call.id,
        "execution": "client",
        "tools": output,
    }


#: The fields of a ``computer_screenshot``, one of which gives the image.
_SCREENSHOT_SOURCES = ("image_url", "file_id")


def _computer(call: ToolCall, output: Any, is_error: bool) -> dict[str, Any]:
    if is_error:
        raise ToolResultError(
            "a computer_call_output has no error flag: answer with a screenshot of the "
            "screen as it is (the model sees what happened)"
        )
    shape = '{"type": "computer_screenshot", "image_url": ...} (or "file_id")'
    if not isinstance(output, Mapping) or output.get("type") != "computer_screenshot":
        raise ToolResultError(f"a computer_call's output is a screenshot, {shape}")
    screenshot: dict[str, Any] = {"type": "computer_screenshot"}
    for field in _SCREENSHOT_SOURCES:
        value = output.get(field)
        if value is not None:
            if not isinstance(value, str) or not value:
                raise ToolResultError(f"the screenshot's {field} must be a non-empty string")
            screenshot[field] = value
    extra = set(output) - {"type", *_SCREENSHOT_SOURCES}
    if len(screenshot) == 1 or extra:
        raise ToolResultError(f"a computer_call's output is a screenshot, {shape}")
    return {"type": "computer_call_output", "call_id": call.id, "output": screenshot}


def _acknowledged(call: ToolCall, checks: Any) -> list[dict[str, Any]]:
    """The safety checks a caller acknowledges, each one of the call's pending ones."""
    if isinstance(checks, str | bytes) or not isinstance(checks, Sequence):
        raise ToolResultError("acknowledged_safety_checks is a list of {id, code?, message?}")
    arguments = call.arguments if isinstance(call.arguments, dict) else {}
    pending = arguments.get("pending_safety_checks")
    pending_ids = (
        {check.get("id") for check in pending if isinstance(check, dict)}
        if isinstance(pending, list)
        else set()
    )
    out: list[dict[str, Any]] = []
    for n, check in enumerate(checks):
        where = f"acknowledged_safety_checks[{n}]"
        if not isinstance(check, Mapping) or not isinstance(check.get("id"), str):
            raise ToolResultError(f"{where} is not a safety check with an id")
        if check["id"] not in pending_ids:
            raise ToolResultError(
                f"{where}: {check['id']!r} is not one of the pending_safety_checks "
                f"of computer call {call.id!r}"
            )
        item: dict[str, Any] = {"id": check["id"]}
        for field in ("code", "message"):
            value = check.get(field)
            if value is not None and not isinstance(value, str):
                raise ToolResultError(f"{where}: {field} is not a string")
            if value is not None:
                item[field] = value
        out.append(item)
    return out


#: Responses call types whose result is not a ``function_call_output``.
_RESPONSES_OUTPUTS: dict[str, Callable[[ToolCall, Any, bool], dict[str, Any]]] = {
    "custom_tool_call": _custom_tool,
    "local_shell_call": _local_shell,
    "shell_call": _shell,
    "apply_patch_call": _apply_patch,
    "tool_search_call": _tool_search,
    "computer_call": _computer,
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
