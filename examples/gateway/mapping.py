"""The example gateway's minimal request mapping, and error bodies in each client's shape.

The gateway translates *responses* fully (streamwire's encoders); requests
only as far as a demo needs. What is carried, from the client's request to
the upstream's, is:

* the model name (the client's, unless the gateway is configured with one);
* the system prompt (chat/responses ``system``/``developer`` messages and
  ``instructions``, anthropic ``system``, gemini ``systemInstruction``);
* the text of each user and assistant turn (string content, or the text parts
  of a content list; other parts such as images are dropped);
* function tools: name, description, JSON-schema parameters;
* the output token limit.

Everything else is dropped: sampling parameters, tool choice, images and
files, earlier tool calls and tool results in the history, reasoning
settings, response formats. A real gateway must map those too (tool results
with the right call ids above all; see ``sw.tool_result``).

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
    "error_body",
    "parse_request",
    "upstream_request",
]

#: The protocols a client may speak to the gateway, and the upstreams it can call.
CLIENT_PROTOCOLS = ("openai-chat", "openai-responses", "anthropic", "gemini")
UPSTREAM_PROTOCOLS = ("openai-chat", "openai-responses", "anthropic", "gemini")

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
class Prompt:
    """What the gateway carries from the client's request to the upstream's."""

    model: str
    system: str | None = None
    #: (role, text) with role ``user`` or ``assistant``.
    turns: tuple[tuple[str, str], ...] = ()
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


def _openai_turns(messages: Any) -> tuple[str | None, list[tuple[str, str]]]:
    system: list[str] = []
    turns: list[tuple[str, str]] = []
    for message in messages if isinstance(messages, list) else []:
        if not isinstance(message, dict):
            continue
        role = message.get("role")
        text = _text(message.get("content"))
        if role in ("system", "developer"):
            system.append(text)
        elif role in ("user", "assistant") and text:
            turns.append((role, text))
    return ("\n\n".join(system) or None), turns


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
        system, turns = None, [("user", raw_input)]
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
    turns = []
    for message in body.get("messages") or []:
        if isinstance(message, dict) and message.get("role") in ("user", "assistant"):
            text = _text(message.get("content"))
            if text:
                turns.append((message["role"], text))
    tools = []
    for tool in body.get("tools") or []:
        if isinstance(tool, dict) and isinstance(tool.get("name"), str):
            tools.append(
                Tool(tool["name"], tool.get("description"), _schema(tool.get("input_schema")))
            )
    limit = _int(body.get("max_tokens"))
    return Prompt(str(body.get("model", "")), system, tuple(turns), tuple(tools), limit)


def _from_gemini(body: dict[str, Any], path_model: str | None) -> Prompt:
    instruction = body.get("systemInstruction") or body.get("system_instruction")
    system = _text(instruction.get("parts")) if isinstance(instruction, dict) else None
    turns = []
    for content in body.get("contents") or []:
        if isinstance(content, dict):
            role = "assistant" if content.get("role") == "model" else "user"
            text = _text(content.get("parts"))
            if text:
                turns.append((role, text))
    tools = []
    for tool in body.get("tools") or []:
        for fn in (tool.get("functionDeclarations") or []) if isinstance(tool, dict) else []:
            if isinstance(fn, dict) and isinstance(fn.get("name"), str):
                params = fn.get("parameters") or fn.get("parametersJsonSchema")
                tools.append(Tool(fn["name"], fn.get("description"), _schema(params)))
    config = body.get("generationConfig")
    limit = _int(config.get("maxOutputTokens")) if isinstance(config, dict) else None
    return Prompt(path_model or "", system or None, tuple(turns), tuple(tools), limit)


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


def _chat_body(prompt: Prompt) -> dict[str, Any]:
    messages = [{"role": "system", "content": prompt.system}] if prompt.system else []
    messages += [{"role": role, "content": text} for role, text in prompt.turns]
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


def _responses_body(prompt: Prompt) -> dict[str, Any]:
    body: dict[str, Any] = {
        "model": prompt.model,
        "input": [{"role": role, "content": text} for role, text in prompt.turns],
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
        body["max_output_tokens"] = prompt.max_tokens
    return body


def _anthropic_body(prompt: Prompt) -> dict[str, Any]:
    body: dict[str, Any] = {
        "model": prompt.model,
        "max_tokens": prompt.max_tokens or DEFAULT_MAX_TOKENS,
        "messages": [{"role": role, "content": text} for role, text in prompt.turns],
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


def _gemini_body(prompt: Prompt) -> dict[str, Any]:
    body: dict[str, Any] = {
        "contents": [
            {"role": "model" if role == "assistant" else "user", "parts": [{"text": text}]}
            for role, text in prompt.turns
        ]
    }
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
