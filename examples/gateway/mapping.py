"""The example gateway's minimal request mapping, and error bodies in each client's shape.

The gateway translates *responses* fully (streamwire's encoders); requests
only as far as a demo needs. What is carried, from the client's request to
the upstream's, is:

* the model name (the client's, unless the gateway is configured with one);
* the system prompt (chat/responses ``system``/``developer`` messages and
  ``instructions``, anthropic ``system``, gemini ``systemInstruction``);
* the text of each user and assistant turn (string content, or the text parts
  of a content list; other parts such as images are dropped);
* the tool calls of earlier assistant turns (id, name, arguments) and the
  tool results that answer them (the call id they quote, the output text,
  the error flag where the protocol has one: anthropic ``is_error``, gemini
  ``response.error``; chat and responses have none, so a failure travels as
  the output's text). Gemini correlates by the function's name and sends no
  ids of its own, so none are sent to a gemini upstream; a result quoting an
  id is given its call's name from the history;
* function tools: name, description, JSON-schema parameters;
* the output token limit (at least 16 for a Responses upstream, its least).

Everything else is dropped: sampling parameters, tool choice, images and
files, reasoning settings and signatures, response formats.

Request shapes as the providers' API references describe them, checked
2026-11-29: OpenAI "Create chat completion" and "Create a model response"
(platform.openai.com/docs/api-reference/chat/create, /responses/create),
Anthropic "Messages" (platform.claude.com/docs/en/api/messages; the
``anthropic-version: 2023-06-01`` header), Gemini
"models.streamGenerateContent" (ai.google.dev/api/generate-content; SSE with
``?alt=sse``, key in ``x-goog-api-key``).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

__all__ = [
    "CLIENT_PROTOCOLS",
    "UPSTREAM_PROTOCOLS",
    "Prompt",
    "RequestError",
    "Tool",
    "ToolOutput",
    "ToolUse",
    "Turn",
    "error_body",
    "parse_request",
    "upstream_request",
]

#: The protocols a client may speak to the gateway, and the upstreams it can call.
CLIENT_PROTOCOLS = ("openai-chat", "openai-responses", "anthropic", "gemini")
UPSTREAM_PROTOCOLS = ("openai-chat", "openai-responses", "anthropic", "gemini")

#: The least ``max_output_tokens`` the Responses API accepts.
RESPONSES_MIN_OUTPUT_TOKENS = 16
#: anthropic requires ``max_tokens``; used when the client sent no limit.
DEFAULT_MAX_TOKENS = 1024
ANTHROPIC_VERSION = "2023-06-01"


class RequestError(Exception):
    """The client's request cannot be served; ``status`` is the HTTP status to answer."""

    def __init__(self, message: str, status: int = 400) -> None:
        super().__init__(message)
        self.status = status


@dataclass(frozen=True)
class Tool:
    """A function tool the model may call."""

    name: str
    description: str | None = None
    parameters: dict[str, Any] = field(default_factory=lambda: {"type": "object"})


@dataclass(frozen=True)
class ToolUse:
    """A tool call of an earlier assistant turn."""

    id: str
    name: str
    arguments: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class ToolOutput:
    """A tool result: the call it answers (by id, and by name for gemini)."""

    call_id: str
    name: str
    output: str
    is_error: bool = False


@dataclass(frozen=True)
class Turn:
    """One turn of the conversation: ``user`` (text, tool results) or ``assistant``."""

    role: str
    text: str = ""
    calls: tuple[ToolUse, ...] = ()
    results: tuple[ToolOutput, ...] = ()


@dataclass(frozen=True)
class Prompt:
    """What the gateway carries from the client's request to the upstream's."""

    model: str
    system: str | None = None
    turns: tuple[Turn, ...] = ()
    tools: tuple[Tool, ...] = ()
    max_tokens: int | None = None


# --- client request -> Prompt ------------------------------------------------


def _text(content: Any) -> str:
    """The text of a message's content: a string, or the text parts of a list."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        parts = []
        for part in content:
            if isinstance(part, dict) and isinstance(part.get("text"), str):
                parts.append(part["text"])
        return "".join(parts)
    return ""


def _schema(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {"type": "object"}


def _int(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _require_stream(body: dict[str, Any]) -> None:
    if body.get("stream") is not True:
        raise RequestError('this example gateway only streams: send "stream": true')


def _arguments(text: Any) -> dict[str, Any]:
    if isinstance(text, dict):
        return text
    try:
        value = json.loads(text) if isinstance(text, str) and text.strip() else {}
    except json.JSONDecodeError:
        return {}
    return value if isinstance(value, dict) else {}


def _output(content: Any) -> str:
    return content if isinstance(content, str) else _text(content) or json.dumps(content)


class _Turns:
    """Builds turns, merging consecutive pieces of the same role."""

    def __init__(self) -> None:
        self.turns: list[Turn] = []
        self.names: dict[str, str] = {}

    def add(self, role: str, text: str = "", calls=(), results=()) -> None:  # type: ignore[no-untyped-def]
        for call in calls:
            self.names[call.id] = call.name
        if not (text or calls or results):
            return
        last = self.turns[-1] if self.turns else None
        if last is not None and last.role == role and (calls or results) and not text:
            self.turns[-1] = Turn(
                role, last.text, last.calls + tuple(calls), last.results + tuple(results)
            )
        else:
            self.turns.append(Turn(role, text, tuple(calls), tuple(results)))

    def name_of(self, call_id: str) -> str:
        return self.names.get(call_id, "")


def _openai_turns(messages: Any) -> tuple[str | None, list[Turn]]:
    system: list[str] = []
    turns = _Turns()
    for message in messages if isinstance(messages, list) else []:
        if not isinstance(message, dict):
            continue
        role = message.get("role")
        kind = message.get("type")
        text = _text(message.get("content"))
        if role in ("system", "developer"):
            system.append(text)
        elif role == "tool":
            cid = str(message.get("tool_call_id") or "")
            turns.add("user", results=[ToolOutput(cid, turns.name_of(cid), text)])
        elif kind == "function_call":  # a responses input item
            call = ToolUse(
                str(message.get("call_id") or ""),
                str(message.get("name") or ""),
                _arguments(message.get("arguments")),
            )
            turns.add("assistant", calls=[call])
        elif kind == "function_call_output":
            cid = str(message.get("call_id") or "")
            out = ToolOutput(cid, turns.name_of(cid), _output(message.get("output")))
            turns.add("user", results=[out])
        elif role in ("user", "assistant"):
            calls = []
            for c in message.get("tool_calls") or []:
                fn = c.get("function") if isinstance(c, dict) else None
                if isinstance(fn, dict):
                    calls.append(
                        ToolUse(
                            str(c.get("id") or ""),
                            str(fn.get("name") or ""),
                            _arguments(fn.get("arguments")),
                        )
                    )
            turns.add(role, text, calls)
    return ("\n\n".join(system) or None), turns.turns


def _from_chat(body: dict[str, Any], path_model: str | None) -> Prompt:
    _require_stream(body)
    system, turns = _openai_turns(body.get("messages"))
    tools = []
    for tool in body.get("tools") or []:
        fn = tool.get("function") if isinstance(tool, dict) else None
        if isinstance(fn, dict) and isinstance(fn.get("name"), str):
            tools.append(Tool(fn["name"], fn.get("description"), _schema(fn.get("parameters"))))
    limit = _int(body.get("max_completion_tokens")) or _int(body.get("max_tokens"))
    return Prompt(str(body.get("model", "")), system, tuple(turns), tuple(tools), limit)


def _from_responses(body: dict[str, Any], path_model: str | None) -> Prompt:
    _require_stream(body)
    raw_input = body.get("input")
    if isinstance(raw_input, str):
        system, turns = None, [Turn("user", raw_input)]
    else:
        system, turns = _openai_turns(raw_input)
    instructions = body.get("instructions")
    if isinstance(instructions, str) and instructions:
        system = instructions if system is None else f"{instructions}\n\n{system}"
    tools = []
    for tool in body.get("tools") or []:
        if isinstance(tool, dict) and tool.get("type") == "function" and "name" in tool:
            tools.append(
                Tool(tool["name"], tool.get("description"), _schema(tool.get("parameters")))
            )
    limit = _int(body.get("max_output_tokens"))
    return Prompt(str(body.get("model", "")), system, tuple(turns), tuple(tools), limit)


def _from_anthropic(body: dict[str, Any], path_model: str | None) -> Prompt:
    _require_stream(body)
    system = _text(body.get("system")) or None
    turns = _Turns()
    for message in body.get("messages") or []:
        if not isinstance(message, dict) or message.get("role") not in ("user", "assistant"):
            continue
        content = message.get("content")
        blocks = content if isinstance(content, list) else []
        calls = [
            ToolUse(str(b.get("id") or ""), str(b.get("name") or ""), _arguments(b.get("input")))
            for b in blocks
            if isinstance(b, dict) and b.get("type") == "tool_use"
        ]
        for call in calls:
            turns.names[call.id] = call.name
        results = [
            ToolOutput(
                str(b.get("tool_use_id") or ""),
                turns.name_of(str(b.get("tool_use_id") or "")),
                _output(b.get("content")),
                b.get("is_error") is True,
            )
            for b in blocks
            if isinstance(b, dict) and b.get("type") == "tool_result"
        ]
        turns.add(message["role"], _text(content), calls, results)
    tools = []
    for tool in body.get("tools") or []:
        if isinstance(tool, dict) and isinstance(tool.get("name"), str):
            tools.append(
                Tool(tool["name"], tool.get("description"), _schema(tool.get("input_schema")))
            )
    limit = _int(body.get("max_tokens"))
    return Prompt(str(body.get("model", "")), system, tuple(turns.turns), tuple(tools), limit)


def _from_gemini(body: dict[str, Any], path_model: str | None) -> Prompt:
    instruction = body.get("systemInstruction") or body.get("system_instruction")
    system = _text(instruction.get("parts")) if isinstance(instruction, dict) else None
    turns = _Turns()
    for content in body.get("contents") or []:
        if not isinstance(content, dict):
            continue
        role = "assistant" if content.get("role") == "model" else "user"
        parts = [p for p in content.get("parts") or [] if isinstance(p, dict)]
        calls, results = [], []
        for part in parts:
            call = part.get("functionCall")
            if isinstance(call, dict):
                name = str(call.get("name") or "")
                calls.append(
                    ToolUse(str(call.get("id") or name), name, _arguments(call.get("args")))
                )
            answer = part.get("functionResponse")
            if isinstance(answer, dict):
                name = str(answer.get("name") or "")
                response = answer.get("response")
                failed = isinstance(response, dict) and "error" in response
                value = (
                    response.get("error" if failed else "output", response)
                    if isinstance(response, dict)
                    else response
                )
                results.append(
                    ToolOutput(str(answer.get("id") or name), name, _output(value), failed)
                )
        turns.add(role, _text(parts), calls, results)
    tools = []
    for tool in body.get("tools") or []:
        for fn in (tool.get("functionDeclarations") or []) if isinstance(tool, dict) else []:
            if isinstance(fn, dict) and isinstance(fn.get("name"), str):
                params = fn.get("parameters") or fn.get("parametersJsonSchema")
                tools.append(Tool(fn["name"], fn.get("description"), _schema(params)))
    config = body.get("generationConfig")
    limit = _int(config.get("maxOutputTokens")) if isinstance(config, dict) else None
    return Prompt(path_model or "", system or None, tuple(turns.turns), tuple(tools), limit)


_PARSERS: dict[str, Callable[[dict[str, Any], str | None], Prompt]] = {
    "openai-chat": _from_chat,
    "openai-responses": _from_responses,
    "anthropic": _from_anthropic,
    "gemini": _from_gemini,
}


def parse_request(protocol: str, body: bytes, path_model: str | None = None) -> Prompt:
    """The ``Prompt`` of a client's request body in ``protocol``; raises ``RequestError``."""
    try:
        data = json.loads(body)
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise RequestError(f"the request body is not JSON: {exc}") from None
    if not isinstance(data, dict):
        raise RequestError("the request body is not a JSON object")
    prompt = _PARSERS[protocol](data, path_model)
    if not prompt.model:
        raise RequestError("the request names no model")
    return prompt


# --- Prompt -> upstream request ----------------------------------------------


def _chat_messages(turn: Turn) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = [
        {"role": "tool", "tool_call_id": r.call_id, "content": r.output} for r in turn.results
    ]
    if turn.calls:
        calls = [
            {
                "id": c.id,
                "type": "function",
                "function": {"name": c.name, "arguments": json.dumps(c.arguments)},
            }
            for c in turn.calls
        ]
        out.append({"role": "assistant", "content": turn.text or None, "tool_calls": calls})
    elif turn.text:
        out.append({"role": turn.role, "content": turn.text})
    return out


def _chat_body(prompt: Prompt) -> dict[str, Any]:
    messages = [{"role": "system", "content": prompt.system}] if prompt.system else []
    for turn in prompt.turns:
        messages += _chat_messages(turn)
    body: dict[str, Any] = {
        "model": prompt.model,
        "messages": messages,
        "stream": True,
        "stream_options": {"include_usage": True},
    }
    if prompt.tools:
        body["tools"] = [
            {"type": "function", "function": _function(t.name, t.description, t.parameters)}
            for t in prompt.tools
        ]
    if prompt.max_tokens is not None:
        body["max_completion_tokens"] = prompt.max_tokens
    return body


def _responses_items(turn: Turn) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = [
        {"type": "function_call_output", "call_id": r.call_id, "output": r.output}
        for r in turn.results
    ]
    if turn.text:
        out.append({"role": turn.role, "content": turn.text})
    out += [
        {
            "type": "function_call",
            "call_id": c.id,
            "name": c.name,
            "arguments": json.dumps(c.arguments),
        }
        for c in turn.calls
    ]
    return out


def _responses_body(prompt: Prompt) -> dict[str, Any]:
    body: dict[str, Any] = {
        "model": prompt.model,
        "input": [item for turn in prompt.turns for item in _responses_items(turn)],
        "stream": True,
    }
    if prompt.system:
        body["instructions"] = prompt.system
    if prompt.tools:
        body["tools"] = [
            {"type": "function", **_function(t.name, t.description, t.parameters)}
            for t in prompt.tools
        ]
    if prompt.max_tokens is not None:
        # The Responses API refuses a limit below 16 (HTTP 400).
        body["max_output_tokens"] = max(prompt.max_tokens, RESPONSES_MIN_OUTPUT_TOKENS)
    return body


def _anthropic_message(turn: Turn) -> dict[str, Any]:
    if not (turn.calls or turn.results):
        return {"role": turn.role, "content": turn.text}
    blocks: list[dict[str, Any]] = []
    for r in turn.results:
        block: dict[str, Any] = {
            "type": "tool_result",
            "tool_use_id": r.call_id,
            "content": r.output,
        }
        if r.is_error:
            block["is_error"] = True
        blocks.append(block)
    if turn.text:
        blocks.append({"type": "text", "text": turn.text})
    blocks += [
        {"type": "tool_use", "id": c.id, "name": c.name, "input": c.arguments} for c in turn.calls
    ]
    return {"role": turn.role, "content": blocks}


def _anthropic_body(prompt: Prompt) -> dict[str, Any]:
    body: dict[str, Any] = {
        "model": prompt.model,
        "max_tokens": prompt.max_tokens or DEFAULT_MAX_TOKENS,
        "messages": [_anthropic_message(turn) for turn in prompt.turns],
        "stream": True,
    }
    if prompt.system:
        body["system"] = prompt.system
    if prompt.tools:
        body["tools"] = [
            {"name": t.name, "input_schema": t.parameters}
            | ({"description": t.description} if t.description else {})
            for t in prompt.tools
        ]
    return body


def _gemini_content(turn: Turn) -> dict[str, Any]:
    # No ids: gemini correlates a response with its call by the function's name.
    parts: list[dict[str, Any]] = []
    for r in turn.results:
        key = "error" if r.is_error else "output"
        parts.append({"functionResponse": {"name": r.name, "response": {key: r.output}}})
    if turn.text:
        parts.append({"text": turn.text})
    parts += [{"functionCall": {"name": c.name, "args": c.arguments}} for c in turn.calls]
    return {"role": "model" if turn.role == "assistant" else "user", "parts": parts}


def _gemini_body(prompt: Prompt) -> dict[str, Any]:
    body: dict[str, Any] = {"contents": [_gemini_content(turn) for turn in prompt.turns]}
    if prompt.system:
        body["systemInstruction"] = {"parts": [{"text": prompt.system}]}
    if prompt.tools:
        body["tools"] = [
            {
                "functionDeclarations": [
                    _function(t.name, t.description, t.parameters) for t in prompt.tools
                ]
            }
        ]
    if prompt.max_tokens is not None:
        body["generationConfig"] = {"maxOutputTokens": prompt.max_tokens}
    return body


def _function(name: str, description: str | None, parameters: dict[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {"name": name}
    if description:
        out["description"] = description
    out["parameters"] = parameters
    return out


def upstream_request(
    protocol: str, prompt: Prompt, base_url: str, api_key: str | None
) -> tuple[str, dict[str, str], dict[str, Any]]:
    """The upstream's URL, headers and JSON body for ``prompt`` in ``protocol``.

    ``base_url`` includes the API's version prefix (``https://api.openai.com/v1``,
    ``https://api.anthropic.com/v1``, ``https://generativelanguage.googleapis.com/v1beta``).
    """
    base = base_url.rstrip("/")
    # Compressed SSE can be held back by the compressor; ask for it plain.
    headers = {"accept": "text/event-stream", "accept-encoding": "identity"}
    if protocol == "openai-chat":
        url, body = f"{base}/chat/completions", _chat_body(prompt)
        if api_key:
            headers["authorization"] = f"Bearer {api_key}"
    elif protocol == "openai-responses":
        url, body = f"{base}/responses", _responses_body(prompt)
        if api_key:
            headers["authorization"] = f"Bearer {api_key}"
    elif protocol == "anthropic":
        url, body = f"{base}/messages", _anthropic_body(prompt)
        headers["anthropic-version"] = ANTHROPIC_VERSION
        if api_key:
            headers["x-api-key"] = api_key
    elif protocol == "gemini":
        url = f"{base}/models/{prompt.model}:streamGenerateContent?alt=sse"
        body = _gemini_body(prompt)
        if api_key:
            headers["x-goog-api-key"] = api_key
    else:
        raise ValueError(f"unsupported upstream protocol {protocol!r}")
    return url, headers, body


# --- error bodies --------------------------------------------------------------

_OPENAI_TYPES = {400: "invalid_request_error", 401: "authentication_error", 429: "rate_limit_error"}
_ANTHROPIC_TYPES = {
    400: "invalid_request_error",
    401: "authentication_error",
    403: "permission_error",
    404: "not_found_error",
    429: "rate_limit_error",
    529: "overloaded_error",
}
_GEMINI_STATUS = {400: "INVALID_ARGUMENT", 401: "UNAUTHENTICATED", 429: "RESOURCE_EXHAUSTED"}


def error_body(protocol: str, status: int, message: str) -> bytes:
    """An HTTP error body in the shape ``protocol``'s clients parse."""
    if protocol == "anthropic":
        kind = _ANTHROPIC_TYPES.get(status, "api_error")
        data: dict[str, Any] = {"type": "error", "error": {"type": kind, "message": message}}
    elif protocol == "gemini":
        state = _GEMINI_STATUS.get(status, "INTERNAL" if status >= 500 else "FAILED_PRECONDITION")
        data = {"error": {"code": status, "message": message, "status": state}}
    else:
        kind = _OPENAI_TYPES.get(
            status, "server_error" if status >= 500 else "invalid_request_error"
        )
        data = {"error": {"message": message, "type": kind, "param": None, "code": None}}
    return json.dumps(data).encode()
