"""The tool-result round trip of ``tool-error-result``: both ends of it.

The client end (``follow_up_request``) answers the call the gateway streamed
with a failed tool result, in the *client's* protocol: the history repeats
the user's turn and the assistant's turn with the call exactly as the client
received it (its id, name and argument text), then the result, built by
``sw.tool_result`` (which refuses an id the stream did not produce). The
upstream end (``check_tool_result``) looks into the request the gateway then
sent the mock, in the *upstream's* protocol, for a result that answers the
call the mock made: the same call id (Gemini, which sends none, by the
function's name), in the upstream's own shape, with its error flag where the
protocol has one (Anthropic ``is_error``, Bedrock ``status: "error"``, Gemini
``response.error``; Chat Completions and Responses have no flag). Shapes as
the providers' API references give them, checked 2026-12-01.

The ids the mock gives its calls (``call_id``) are here, where the two ends
match them.

A provider calls only the tools a request declares, so the mock also reads
which tools the gateway declared upstream (``declared_tools``): a gateway
that drops the client's ``tools`` leaves the model nothing to call.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any, Protocol

from ...result import StreamResult
from ...toolresults import tool_result
from .kinds.base import Kind

__all__ = [
    "ERROR_OUTPUT",
    "FLAG_PROTOCOLS",
    "assistant_turn",
    "call_id",
    "check_tool_result",
    "declared_tools",
    "follow_up_request",
]

ERROR_OUTPUT = "error: add_numbers failed: b must be a number, got 'two'"
#: Protocols whose tool results carry an error flag.
FLAG_PROTOCOLS = frozenset(
    {"anthropic", "bedrock-converse", "bedrock-invoke", "gemini", "gemini-json"}
)


class Case(Protocol):
    """What the tool turn reads of a case (``cases.Case``)."""

    @property
    def name(self) -> str: ...
    @property
    def calls(self) -> Sequence[Any]: ...
    @property
    def kind(self) -> Kind: ...


_ID_PREFIX: Mapping[str, str | None] = {
    "openai-chat": "call_sw",
    "openai-responses": "call_sw",
    "anthropic": "toolu_sw",
    "bedrock-converse": "tooluse_sw",
    "bedrock-invoke": "toolu_sw",
    "gemini": None,
    "gemini-json": None,
}


def call_id(upstream: str, case: Case, index: int, attempt: int = 1) -> str | None:
    """The id the upstream gives call ``index`` of ``case`` (None: gemini sends none);
    a retry case's attempts give different ids (``_a<attempt>``)."""
    prefix = _ID_PREFIX.get(upstream)
    if prefix is None:
        return None
    tail = f"_a{attempt}" if case.kind.per_attempt else ""
    return f"{prefix}_{case.name.replace('-', '_')}_{index}{tail}"


def _dicts(value: Any) -> list[dict[str, Any]]:
    return [v for v in value if isinstance(v, dict)] if isinstance(value, list) else []


def _content(message: Mapping[str, Any]) -> list[dict[str, Any]]:
    return _dicts(message.get("content"))


def declared_tools(upstream: str, body: Any) -> list[str]:
    """The names of the tools the request ``body`` (in ``upstream``'s shape) declares:
    Chat ``tools[].function.name``, Responses and Anthropic ``tools[].name``,
    Gemini ``tools[].functionDeclarations[].name``, Bedrock Converse
    ``toolConfig.tools[].toolSpec.name``. Read in the upstream's own shape only
    (``sw.ToolSet`` reads any shape; the upstream accepts only its own)."""
    if not isinstance(body, dict):
        return []
    tools = body.get("tools")
    if upstream == "bedrock-converse":
        config = body.get("toolConfig")
        tools = config.get("tools") if isinstance(config, dict) else None
    names: list[str | None] = []
    for tool in _dicts(tools):
        if upstream == "openai-chat":
            function = tool.get("function")
            names.append(_str(function.get("name")) if isinstance(function, dict) else None)
        elif upstream in ("gemini", "gemini-json"):
            for declared in (tool.get("functionDeclarations"), tool.get("function_declarations")):
                names += [_str(d.get("name")) for d in _dicts(declared)]
        elif upstream == "bedrock-converse":
            spec = tool.get("toolSpec")
            names.append(_str(spec.get("name")) if isinstance(spec, dict) else None)
        else:
            names.append(_str(tool.get("name")))
    return [n for n in names if n is not None]


def check_tool_result(upstream: str, body: Any, case: Case) -> dict[str, Any] | None:
    """What the request ``body`` (in ``upstream``'s shape) says about the result
    for ``case``'s first call, or None when it is no follow-up at all (a
    request with a single turn)."""
    if not isinstance(body, dict) or not case.calls:
        return None
    expected = call_id(upstream, case, 0)
    name = case.calls[0].name
    results: list[tuple[str | None, bool | None, str | None]] = []  # (id or name, flag, name)
    calls: list[str | None] = []
    names: list[str | None] = []
    turns = 0
    if upstream == "openai-chat":
        for m in _dicts(body.get("messages")):
            turns += 1
            if m.get("role") == "tool":
                results.append((_str(m.get("tool_call_id")), None, None))
            for c in _dicts(m.get("tool_calls")):
                calls.append(_str(c.get("id")))
    elif upstream == "openai-responses":
        items = body.get("input")
        for item in _dicts(items):
            turns += 1
            if item.get("type") == "function_call_output":
                results.append((_str(item.get("call_id")), None, None))
            elif item.get("type") == "function_call":
                calls.append(_str(item.get("call_id")))
    elif upstream in ("anthropic", "bedrock-invoke"):
        for m in _dicts(body.get("messages")):
            turns += 1
            for block in _content(m):
                if block.get("type") == "tool_result":
                    results.append(
                        (_str(block.get("tool_use_id")), block.get("is_error") is True, None)
                    )
                elif block.get("type") == "tool_use":
                    calls.append(_str(block.get("id")))
    elif upstream in ("gemini", "gemini-json"):
        for content in _dicts(body.get("contents")):
            turns += 1
            for part in _dicts(content.get("parts")):
                response = part.get("functionResponse") or part.get("function_response")
                if isinstance(response, dict):
                    answer = response.get("response")
                    flag = isinstance(answer, dict) and "error" in answer
                    results.append(
                        (
                            _str(response.get("id")) or _str(response.get("name")),
                            flag,
                            _str(response.get("name")),
                        )
                    )
                call = part.get("functionCall") or part.get("function_call")
                if isinstance(call, dict):
                    calls.append(_str(call.get("id")) or _str(call.get("name")))
                    names.append(_str(call.get("name")))
    elif upstream == "bedrock-converse":
        for m in _dicts(body.get("messages")):
            turns += 1
            for block in _content(m):
                result = block.get("toolResult")
                if isinstance(result, dict):
                    results.append(
                        (_str(result.get("toolUseId")), result.get("status") == "error", None)
                    )
                use = block.get("toolUse")
                if isinstance(use, dict):
                    calls.append(_str(use.get("toolUseId")))
    if turns <= 1 and not results:
        return None
    want = expected if expected is not None else name
    ids = [r[0] for r in results]
    match = [r for r in results if r[0] == want]
    if expected is None:
        # Gemini sent no id: a result names its call; an id the gateway added
        # beside the name is not the upstream's to check.
        match = match or [r for r in results if r[2] == name]
        calls = [c if c != want else name for c in calls] + names
    return {
        "found": bool(results),
        "expected": want,
        "seen": ids,
        "correlated": bool(match) and len(results) == 1,
        "call_in_history": want in calls,
        "is_error": match[0][1] if match else None,
        "flag_exists": upstream in FLAG_PROTOCOLS,
    }


def _str(value: Any) -> str | None:
    return value if isinstance(value, str) and value else None


def assistant_turn(client: str, result: StreamResult) -> Any:
    """The assistant's turn (text and calls, as received) in ``client``'s request shape."""
    calls = result.tool_calls
    if client == "openai-chat":
        return {
            "role": "assistant",
            "content": result.text or None,
            "tool_calls": [
                {
                    "id": c.id,
                    "type": "function",
                    "function": {"name": c.name, "arguments": c.raw_arguments},
                }
                for c in calls
            ],
        }
    if client == "openai-responses":
        items: list[dict[str, Any]] = []
        if result.text:
            items.append({"role": "assistant", "content": result.text})
        items += [
            {"type": "function_call", "call_id": c.id, "name": c.name, "arguments": c.raw_arguments}
            for c in calls
        ]
        return items
    if client == "bedrock-converse":
        content: list[dict[str, Any]] = []
        if result.text:
            content.append({"text": result.text})
        content += [
            {"toolUse": {"toolUseId": c.id, "name": c.name, "input": c.arguments or {}}}
            for c in calls
        ]
        return {"role": "assistant", "content": content}
    if client in ("anthropic", "bedrock-invoke"):
        blocks: list[dict[str, Any]] = []
        if result.text:
            blocks.append({"type": "text", "text": result.text})
        blocks += [
            {"type": "tool_use", "id": c.id, "name": c.name, "input": c.arguments or {}}
            for c in calls
        ]
        return {"role": "assistant", "content": blocks}
    if client == "gemini":
        parts: list[dict[str, Any]] = []
        if result.text:
            parts.append({"text": result.text})
        for c in calls:
            call: dict[str, Any] = {"name": c.name, "args": c.arguments or {}}
            if c.id_source == "provider" and c.id:
                call["id"] = c.id
            parts.append({"functionCall": call})
        return {"role": "model", "parts": parts}
    raise ValueError(client)


def follow_up_request(client: str, first: dict[str, Any], result: StreamResult) -> dict[str, Any]:
    """The second request: ``first``'s body plus the assistant's turn and a
    failed result for its first call (ValueError when the stream had no call);
    for an ``openai-realtime`` or ``gemini-live`` client, the result's client
    message alone."""
    if not result.tool_calls:
        raise ValueError("the gateway streamed no tool call to answer")
    call = result.tool_calls[0]
    answer = tool_result(result, call.id or "", ERROR_OUTPUT, is_error=True)
    if client == "openai-realtime":
        # The session keeps the conversation: the result alone, as its item
        # (``conversation.item.create``); ``response.create`` follows it.
        return answer
    if client == "gemini-live":
        # The same, as Live's ``toolResponse`` message.
        return {"toolResponse": {"functionResponses": [answer]}}
    body: dict[str, Any] = json.loads(json.dumps(first))
    turn = assistant_turn(client, result)
    if client == "openai-chat":
        body["messages"] += [turn, answer]
    elif client == "openai-responses":
        user = body["input"]
        if isinstance(user, str):
            user = [{"role": "user", "content": user}]
        body["input"] = [*user, *turn, answer]
    elif client in ("anthropic", "bedrock-invoke", "bedrock-converse"):
        body["messages"] += [turn, {"role": "user", "content": [answer]}]
    elif client == "gemini":
        body["contents"] += [turn, {"role": "user", "parts": [answer]}]
    return body
