"""The upstream request judged: what each provider accepts of what the cases use, and its refusals.

A gateway's job is half request translation, and a mock that takes whatever
reaches it cannot see that half. ``problems(upstream, body, headers)`` reads
a request the way the provider's API would and lists what it would refuse,
each as a ``Problem``: the offending field (a path into the body, ``tools[0].
function``, or a header) and why. ``refusal(upstream, problem)`` is the
answer the provider gives such a request: HTTP 400 with its error JSON, as
the API references show them (checked 2026-12-02): OpenAI's ``{"error":
{"message", "type": "invalid_request_error", "param", "code"}}``,
Anthropic's ``{"type": "error", "error": {"type": "invalid_request_error",
"message"}}`` (Bedrock's Claude body the same, as ``ValidationException``),
Gemini's ``{"error": {"code": 400, "message", "status":
"INVALID_ARGUMENT"}}``, Bedrock Converse's ``{"message"}`` with
``x-amzn-errortype: ValidationException``.

What is checked, per provider, is what the cases send and what gateways get
wrong (docs/kit/running.md, "The upstream request", lists it). A field the
cases never send is not judged: this is not a schema validator, and a
provider's newer fields pass. The ids a tool result quotes, and whether a
Chat Completions request asked for usage, are judged where their effect
shows, by the ``tool_results`` and ``usage`` layers.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any

from ...translate._base import dumps

__all__ = ["MAX_PROBLEMS", "Problem", "problems", "refusal"]

#: The most problems one request lists (the first decides the refusal).
MAX_PROBLEMS = 8

_CHAT_ROLES = frozenset({"system", "developer", "user", "assistant", "tool", "function"})
_RESPONSES_ROLES = frozenset({"system", "developer", "user", "assistant"})
_TURN_ROLES = frozenset({"user", "assistant"})
_GEMINI_ROLES = frozenset({"user", "model"})


def _one_of(value: object, names: frozenset[str]) -> bool:
    """``value`` is one of ``names`` (a list or an object, hashable or not, is none)."""
    return isinstance(value, str) and value in names


_FUNCTION_NAME = re.compile(r"[A-Za-z0-9_.:-]{1,128}")
_CHAT_NAME = re.compile(r"[A-Za-z0-9_-]{1,64}")
#: Converse content blocks: each holds exactly one of these.
_CONVERSE_BLOCKS = frozenset(
    {
        "text",
        "image",
        "document",
        "video",
        "toolUse",
        "toolResult",
        "guardContent",
        "reasoningContent",
        "cachePoint",
        "citationsContent",
    }
)
#: Gemini tool kinds (a Tool object holds one or more).
_GEMINI_TOOLS = frozenset(
    {
        "functionDeclarations",
        "function_declarations",
        "googleSearch",
        "google_search",
        "googleSearchRetrieval",
        "codeExecution",
        "code_execution",
        "urlContext",
        "url_context",
        "retrieval",
        "computerUse",
        "fileSearch",
        "googleMaps",
        "mcpServers",
    }
)


@dataclass(frozen=True)
class Problem:
    """What a provider would refuse in a request: the field, and why."""

    field: str
    message: str

    def as_list(self) -> list[str]:
        return [self.field, self.message]


def problems(upstream: str, body: Any, headers: Sequence[tuple[str, str]] = ()) -> list[Problem]:
    """What ``upstream``'s API would refuse in this request (at most ``MAX_PROBLEMS``)."""
    if not isinstance(body, dict):
        return [Problem("", "the body is not a JSON object")]
    check = _CHECKS.get(upstream)
    if check is None:
        return []
    found: list[Problem] = []
    for problem in check(body, {k.lower(): v for k, v in headers}):
        found.append(problem)
        if len(found) >= MAX_PROBLEMS:
            break
    return found


def refusal(upstream: str, problem: Problem) -> tuple[int, list[tuple[str, str]], bytes]:
    """(status, headers, body) of the provider's answer to a request with ``problem``."""
    headers = [("content-type", "application/json")]
    where = f"{problem.field}: " if problem.field else ""
    message = f"{where}{problem.message}"
    error: Any
    if upstream in ("openai-chat", "openai-responses"):
        param = problem.field or None
        error = {
            "error": {
                "message": message,
                "type": "invalid_request_error",
                "param": param,
                "code": None,
            }
        }
    elif upstream in ("anthropic", "bedrock-invoke"):
        error = {"type": "error", "error": {"type": "invalid_request_error", "message": message}}
        if upstream == "bedrock-invoke":
            error = {"message": message}
            headers.append(("x-amzn-errortype", "ValidationException"))
    elif upstream in ("gemini", "gemini-json"):
        error = {"error": {"code": 400, "message": message, "status": "INVALID_ARGUMENT"}}
    else:
        error = {"message": message}
        headers.append(("x-amzn-errortype", "ValidationException"))
    return 400, headers, dumps(error).encode()


# --- helpers ------------------------------------------------------------------------

Found = Iterator[Problem]


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _positive(body: dict[str, Any], key: str, at: str = "", least: int = 1) -> Found:
    if key in body and body[key] is not None:
        value = body[key]
        if not _is_int(value) or value < least:
            yield Problem(
                f"{at}{key}", f"must be an integer of at least {least}, got {_show(value)}"
            )


def _show(value: Any) -> str:
    text = dumps(value) if not isinstance(value, str) else repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def _stream_flag(body: dict[str, Any]) -> Found:
    if "stream" in body and body["stream"] is not None and not isinstance(body["stream"], bool):
        yield Problem("stream", f"must be a boolean, got {_show(body['stream'])}")


def _turns(body: dict[str, Any], key: str) -> list[Any] | Problem:
    turns = body.get(key)
    if not isinstance(turns, list) or not turns:
        what = "missing" if key not in body else f"not a non-empty list ({_show(turns)})"
        return Problem(key, f"required: a non-empty list of turns; {what}")
    return turns


def _foreign_tool(tool: dict[str, Any]) -> str | None:
    """Which other provider's shape a tool definition is in, if it is plainly one."""
    if tool.get("type") == "function" and isinstance(tool.get("function"), dict):
        return "OpenAI Chat Completions"
    if "input_schema" in tool:
        return "Anthropic"
    if "functionDeclarations" in tool or "function_declarations" in tool:
        return "Gemini"
    if "toolSpec" in tool:
        return "Bedrock Converse"
    if tool.get("type") == "function" and "name" in tool:
        return "OpenAI Responses"
    return None


def _tools(body: dict[str, Any], own: str, check: Any, key: str = "tools", at: str = "") -> Found:
    tools = body.get(key)
    if tools is None:
        return
    if not isinstance(tools, list):
        yield Problem(f"{at}{key}", f"must be a list of tools, got {_show(tools)}")
        return
    for i, tool in enumerate(tools):
        where = f"{at}{key}[{i}]"
        if not isinstance(tool, dict):
            yield Problem(where, f"must be an object, got {_show(tool)}")
            continue
        problem = check(tool, where)
        if problem is not None:
            shape = _foreign_tool(tool)
            if shape is not None and shape != own:
                problem = Problem(
                    problem.field,
                    f"{problem.message} (this tool is in {shape}'s shape, not {own}'s)",
                )
            yield problem


def _name(value: Any, where: str, pattern: re.Pattern[str] = _FUNCTION_NAME) -> Problem | None:
    if not isinstance(value, str) or not pattern.fullmatch(value):
        return Problem(where, f"required: a function name, got {_show(value)}")
    return None


# --- OpenAI Chat Completions ----------------------------------------------------------


def _chat_tool(tool: dict[str, Any], where: str) -> Problem | None:
    if tool.get("type") != "function":
        if tool.get("type") is None:
            return Problem(f"{where}.type", "required: 'function'")
        if isinstance(tool.get("type"), str) and tool.get("type") == "custom":
            return None
        return Problem(f"{where}.type", f"must be 'function', got {_show(tool.get('type'))}")
    function = tool.get("function")
    if not isinstance(function, dict):
        return Problem(f"{where}.function", "required: the function's name and parameters")
    problem = _name(function.get("name"), f"{where}.function.name", _CHAT_NAME)
    if problem is not None:
        return problem
    if "parameters" in function and not isinstance(function["parameters"], dict):
        return Problem(f"{where}.function.parameters", "must be a JSON Schema object")
    return None


def _chat(body: dict[str, Any], headers: dict[str, str]) -> Found:
    turns = _turns(body, "messages")
    if isinstance(turns, Problem):
        yield turns
        turns = []
    calls: set[str] = set()  # ids of the calls of the last assistant turn
    for i, message in enumerate(turns):
        where = f"messages[{i}]"
        if not isinstance(message, dict):
            yield Problem(where, f"must be an object, got {_show(message)}")
            continue
        role = message.get("role")
        if not _one_of(role, _CHAT_ROLES):
            yield Problem(f"{where}.role", f"must be one of {', '.join(sorted(_CHAT_ROLES))}")
            continue
        content = message.get("content")
        if role == "tool":
            call = message.get("tool_call_id")
            if not isinstance(call, str) or not call:
                yield Problem(f"{where}.tool_call_id", "required on a tool message")
            elif call not in calls:
                yield Problem(
                    f"{where}.tool_call_id",
                    f"{call!r}: messages with role 'tool' must be a response to a preceding "
                    "message with 'tool_calls'",
                )
            if not isinstance(content, str | list):
                yield Problem(f"{where}.content", "required: the tool's output")
            continue
        calls = set()
        if role == "assistant":
            raw = message.get("tool_calls")
            if raw is not None and not isinstance(raw, list):
                yield Problem(f"{where}.tool_calls", "must be a list")
                raw = None
            for j, call in enumerate(raw or []):
                at = f"{where}.tool_calls[{j}]"
                if not isinstance(call, dict):
                    yield Problem(at, "must be an object")
                    continue
                if not isinstance(call.get("id"), str) or not call["id"]:
                    yield Problem(f"{at}.id", "required: the call's id")
                else:
                    calls.add(call["id"])
                function = call.get("function")
                if not isinstance(function, dict):
                    yield Problem(f"{at}.function", "required: the call's name and arguments")
                    continue
                if not isinstance(function.get("name"), str):
                    yield Problem(f"{at}.function.name", "required: a string")
                if not isinstance(function.get("arguments"), str):
                    yield Problem(
                        f"{at}.function.arguments",
                        f"must be a string of JSON, got {_show(function.get('arguments'))}",
                    )
            if content is not None and not isinstance(content, str | list):
                yield Problem(f"{where}.content", "must be a string, a list of parts, or null")
        elif not isinstance(content, str | list):
            yield Problem(f"{where}.content", "required: a string or a list of parts")
    yield from _tools(body, "OpenAI Chat Completions", _chat_tool)
    yield from _stream_flag(body)
    if "stream_options" in body and body["stream_options"] is not None:
        if body.get("stream") is not True:
            yield Problem(
                "stream_options",
                "the 'stream_options' parameter is only allowed when 'stream' is enabled",
            )
        elif not isinstance(body["stream_options"], dict):
            yield Problem("stream_options", "must be an object")
    yield from _positive(body, "max_tokens")
    yield from _positive(body, "max_completion_tokens")


# --- OpenAI Responses -----------------------------------------------------------------


def _responses_tool(tool: dict[str, Any], where: str) -> Problem | None:
    kind = tool.get("type")
    if not isinstance(kind, str):
        return Problem(f"{where}.type", "required: the tool's type")
    if kind != "function":
        return None  # a built-in tool (web_search, file_search, ...)
    problem = _name(tool.get("name"), f"{where}.name", _CHAT_NAME)
    if problem is not None:
        return Problem(problem.field, f"Missing required parameter: '{where}.name'")
    if "parameters" in tool and not isinstance(tool["parameters"], dict | type(None)):
        return Problem(f"{where}.parameters", "must be a JSON Schema object")
    return None


def _responses(body: dict[str, Any], headers: dict[str, str]) -> Found:
    items = body.get("input")
    calls: set[str] = set()
    chained = isinstance(body.get("previous_response_id"), str)
    if items is not None and not isinstance(items, str | list):
        yield Problem("input", f"must be a string or a list of items, got {_show(items)}")
    for i, item in enumerate(items if isinstance(items, list) else []):
        where = f"input[{i}]"
        if not isinstance(item, dict):
            yield Problem(where, f"must be an object, got {_show(item)}")
            continue
        kind = item.get("type", "message")
        if kind == "message":
            if not _one_of(item.get("role"), _RESPONSES_ROLES):
                roles = ", ".join(sorted(_RESPONSES_ROLES))
                yield Problem(f"{where}.role", f"must be one of {roles}")
            if not isinstance(item.get("content"), str | list):
                yield Problem(f"{where}.content", "required: a string or a list of parts")
        elif kind == "function_call":
            call = item.get("call_id")
            if not isinstance(call, str) or not call:
                yield Problem(f"{where}.call_id", "required on a function_call item")
            else:
                calls.add(call)
            if not isinstance(item.get("name"), str):
                yield Problem(f"{where}.name", "required on a function_call item")
            if not isinstance(item.get("arguments"), str):
                yield Problem(
                    f"{where}.arguments",
                    f"must be a string of JSON, got {_show(item.get('arguments'))}",
                )
        elif kind == "function_call_output":
            call = item.get("call_id")
            if not isinstance(call, str) or not call:
                yield Problem(f"{where}.call_id", "required on a function_call_output item")
            elif call not in calls and not chained:
                yield Problem(
                    f"{where}.call_id", f"No tool call found for function call output {call!r}"
                )
            if not isinstance(item.get("output"), str | list):
                yield Problem(f"{where}.output", "required: the tool's output")
    yield from _tools(body, "OpenAI Responses", _responses_tool)
    yield from _stream_flag(body)
    yield from _positive(body, "max_output_tokens", least=16)


# --- Anthropic Messages (and Claude on Bedrock) ---------------------------------------


def _anthropic_tool(tool: dict[str, Any], where: str) -> Problem | None:
    kind = tool.get("type")
    if kind is not None and kind != "custom":
        if not isinstance(kind, str) or kind == "function" or "_" not in kind:
            # Server tools are versioned ("web_search_20250305"); "function" is OpenAI's.
            return Problem(f"{where}.type", f"is no Anthropic tool type: {_show(kind)}")
        return None
    problem = _name(tool.get("name"), f"{where}.name")
    if problem is not None:
        return Problem(problem.field, "Field required")
    if not isinstance(tool.get("input_schema"), dict):
        return Problem(f"{where}.input_schema", "Field required")
    return None


def _claude_messages(body: dict[str, Any]) -> Found:
    turns = _turns(body, "messages")
    if isinstance(turns, Problem):
        yield turns
        return
    uses: set[str] = set()  # ids of the tool_use blocks of the last assistant turn
    for i, message in enumerate(turns):
        where = f"messages.{i}"
        if not isinstance(message, dict):
            yield Problem(where, "must be an object")
            continue
        role = message.get("role")
        if not _one_of(role, _TURN_ROLES):
            yield Problem(
                f"{where}.role",
                f"Unexpected role {_show(role)}: the roles are user and assistant "
                "(a system prompt goes in the top-level system field)",
            )
            continue
        content = message.get("content")
        if isinstance(content, str):
            uses = set()
            continue
        if not isinstance(content, list):
            yield Problem(f"{where}.content", "required: a string or a list of content blocks")
            continue
        previous, uses = uses, set()
        for j, block in enumerate(content):
            at = f"{where}.content.{j}"
            if not isinstance(block, dict) or not isinstance(block.get("type"), str):
                yield Problem(at, "must be a content block with a type")
                continue
            kind = block["type"]
            if kind == "tool_use":
                if role != "assistant":
                    yield Problem(at, "tool_use blocks belong to assistant turns")
                if not isinstance(block.get("id"), str) or not block["id"]:
                    yield Problem(f"{at}.id", "Field required")
                else:
                    uses.add(block["id"])
                if not isinstance(block.get("name"), str):
                    yield Problem(f"{at}.name", "Field required")
                if not isinstance(block.get("input"), dict):
                    yield Problem(
                        f"{at}.input",
                        f"Input should be a valid dictionary, got {_show(block.get('input'))}",
                    )
            elif kind == "tool_result":
                use = block.get("tool_use_id")
                if role != "user":
                    yield Problem(at, "tool_result blocks belong to user turns")
                if not isinstance(use, str) or not use:
                    yield Problem(f"{at}.tool_use_id", "Field required")
                elif use not in previous:
                    yield Problem(
                        f"{at}.tool_use_id",
                        f"unexpected tool_use_id {use!r} in tool_result blocks: each "
                        "tool_result block must have a corresponding tool_use block in the "
                        "previous message",
                    )
            elif kind == "text" and not isinstance(block.get("text"), str):
                yield Problem(f"{at}.text", "Field required")
    system = body.get("system")
    if system is not None and not isinstance(system, str | list):
        yield Problem("system", "must be a string or a list of text blocks")


def _thinking(body: dict[str, Any]) -> Found:
    thinking = body.get("thinking")
    if thinking is None:
        return
    if not isinstance(thinking, dict) or thinking.get("type") not in (
        "enabled",
        "disabled",
        "adaptive",
    ):
        yield Problem(
            "thinking", f"must be {{type: enabled|disabled|adaptive}}, got {_show(thinking)}"
        )
        return
    if thinking["type"] != "enabled":
        return
    budget: Any = thinking.get("budget_tokens")
    limit: Any = body.get("max_tokens")
    if not _is_int(budget) or budget < 1024:
        yield Problem("thinking.budget_tokens", f"must be at least 1024, got {_show(budget)}")
    elif _is_int(limit) and budget >= limit:
        yield Problem("thinking.budget_tokens", f"{budget} must be less than max_tokens ({limit})")


def _max_tokens(body: dict[str, Any]) -> Found:
    if "max_tokens" not in body:
        yield Problem("max_tokens", "Field required")
    else:
        yield from _positive(body, "max_tokens")


def _anthropic(body: dict[str, Any], headers: dict[str, str]) -> Found:
    if not headers.get("anthropic-version"):
        yield Problem("anthropic-version", "header is required")
    if not isinstance(body.get("model"), str):
        yield Problem("model", "Field required")
    yield from _max_tokens(body)
    yield from _claude_messages(body)
    yield from _tools(body, "Anthropic", _anthropic_tool)
    yield from _stream_flag(body)
    yield from _thinking(body)


def _bedrock_invoke(body: dict[str, Any], headers: dict[str, str]) -> Found:
    if not isinstance(body.get("anthropic_version"), str):
        yield Problem("anthropic_version", "required: 'bedrock-2023-05-31'")
    for key in ("model", "stream"):
        if key in body:
            yield Problem(key, f"extraneous key [{key}] is not permitted")
    yield from _max_tokens(body)
    yield from _claude_messages(body)
    yield from _tools(body, "Anthropic", _anthropic_tool)
    yield from _thinking(body)


# --- Bedrock Converse -------------------------------------------------------------------


def _converse_tool(tool: dict[str, Any], where: str) -> Problem | None:
    spec = tool.get("toolSpec")
    if not isinstance(spec, dict):
        if "cachePoint" in tool or "systemTool" in tool:
            return None
        return Problem(f"{where}.toolSpec", "required: the tool's name and inputSchema")
    problem = _name(spec.get("name"), f"{where}.toolSpec.name")
    if problem is not None:
        return problem
    schema = spec.get("inputSchema")
    if not isinstance(schema, dict) or not isinstance(schema.get("json"), dict):
        return Problem(f"{where}.toolSpec.inputSchema.json", "required: a JSON Schema object")
    return None


def _converse(body: dict[str, Any], headers: dict[str, str]) -> Found:
    turns = _turns(body, "messages")
    if isinstance(turns, Problem):
        yield turns
        turns = []
    uses: set[str] = set()
    for i, message in enumerate(turns):
        where = f"messages[{i}]"
        if not isinstance(message, dict) or not _one_of(message.get("role"), _TURN_ROLES):
            yield Problem(f"{where}.role", "must be user or assistant")
            continue
        content = message.get("content")
        if not isinstance(content, list) or not content:
            yield Problem(f"{where}.content", "required: a non-empty list of content blocks")
            continue
        previous, uses = uses, set()
        for j, block in enumerate(content):
            at = f"{where}.content[{j}]"
            keys = set(block) & _CONVERSE_BLOCKS if isinstance(block, dict) else set()
            if not isinstance(block, dict) or len(keys) != 1:
                yield Problem(at, "a content block holds exactly one member")
                continue
            if isinstance(block.get("toolUse"), dict):
                use = block["toolUse"]
                if isinstance(use.get("toolUseId"), str):
                    uses.add(use["toolUseId"])
                if not isinstance(use.get("input"), dict):
                    yield Problem(f"{at}.toolUse.input", "must be a JSON object")
            if isinstance(block.get("toolResult"), dict):
                use_id = block["toolResult"].get("toolUseId")
                if use_id not in previous:
                    yield Problem(
                        f"{at}.toolResult.toolUseId",
                        f"{_show(use_id)}: the toolResult blocks must match the toolUse "
                        "blocks of the previous turn",
                    )
    config = body.get("toolConfig")
    if config is not None:
        if not isinstance(config, dict):
            yield Problem("toolConfig", "must be an object")
        else:
            yield from _tools(config, "Bedrock Converse", _converse_tool, at="toolConfig.")
    if "tools" in body:
        yield Problem("tools", "extraneous key [tools]: Converse's tools go in toolConfig.tools")
    inference = body.get("inferenceConfig")
    if isinstance(inference, dict):
        yield from _positive(inference, "maxTokens", at="inferenceConfig.")


# --- Gemini ----------------------------------------------------------------------------


def _gemini_tool(tool: dict[str, Any], where: str) -> Problem | None:
    unknown = [k for k in tool if k not in _GEMINI_TOOLS]
    if unknown:
        return Problem(
            f"{where}.{unknown[0]}", f"Invalid JSON payload received. Unknown name {unknown[0]!r}"
        )
    for key in ("functionDeclarations", "function_declarations"):
        declared = tool.get(key)
        if declared is None:
            continue
        if not isinstance(declared, list):
            return Problem(f"{where}.{key}", "must be a list")
        for i, declaration in enumerate(declared):
            at = f"{where}.{key}[{i}]"
            if not isinstance(declaration, dict):
                return Problem(at, "must be an object")
            problem = _name(declaration.get("name"), f"{at}.name")
            if problem is not None:
                return problem
    return None


def _gemini(body: dict[str, Any], headers: dict[str, str]) -> Found:
    turns = _turns(body, "contents")
    if isinstance(turns, Problem):
        yield turns
        turns = []
    for i, content in enumerate(turns):
        where = f"contents[{i}]"
        if not isinstance(content, dict):
            yield Problem(where, "must be an object")
            continue
        role = content.get("role")
        if role is not None and not _one_of(role, _GEMINI_ROLES):
            yield Problem(
                f"{where}.role", f"Please use a valid role: user, model (got {_show(role)})"
            )
        parts = content.get("parts")
        if not isinstance(parts, list) or not parts:
            yield Problem(f"{where}.parts", "required: a non-empty list of parts")
            continue
        for j, part in enumerate(parts):
            at = f"{where}.parts[{j}]"
            if not isinstance(part, dict):
                yield Problem(at, "must be an object")
                continue
            call = part.get("functionCall", part.get("function_call"))
            if call is not None and (
                not isinstance(call, dict) or not isinstance(call.get("args", {}), dict)
            ):
                yield Problem(f"{at}.functionCall.args", "must be a JSON object")
            response = part.get("functionResponse", part.get("function_response"))
            if response is not None:
                if not isinstance(response, dict) or not isinstance(response.get("name"), str):
                    yield Problem(f"{at}.functionResponse.name", "required: the function's name")
                elif not isinstance(response.get("response"), dict):
                    yield Problem(f"{at}.functionResponse.response", "must be a JSON object")
    yield from _tools(body, "Gemini", _gemini_tool)
    config = body.get("generationConfig")
    if config is not None:
        if not isinstance(config, dict):
            yield Problem("generationConfig", "must be an object")
        else:
            yield from _positive(config, "maxOutputTokens", at="generationConfig.")


_CHECKS = {
    "openai-chat": _chat,
    "openai-responses": _responses,
    "anthropic": _anthropic,
    "bedrock-invoke": _bedrock_invoke,
    "bedrock-converse": _converse,
    "gemini": _gemini,
    "gemini-json": _gemini,
}
