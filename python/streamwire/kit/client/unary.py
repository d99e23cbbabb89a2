"""The non-streaming answer (``stream: false``) read as the unified events its stream would give.

A unary cell asks the gateway for the whole answer at once, in the client
protocol's own non-streaming form (OpenAI "Create chat completion" and
"Create a model response" with ``stream: false``, Anthropic "Messages"
without ``stream``, Gemini ``models.generateContent``, Bedrock ``Converse``
and ``InvokeModel``; checked 2026-12-01). ``read_answer`` turns the JSON body
into the unified events a stream of the same answer gives (message, text,
reasoning, each call whole, usage, the end), so that the judge's content
rules read a unary answer as they read a streamed one
(``accumulate.result_from_events``).

Every value is type-checked before use; a field of the wrong type counts as
absent, and a body that is no answer of the protocol at all is a problem in
words, never an exception. Structures are capped (``MAX_BODY``,
``MAX_ITEMS``).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..._json import dumps, loads
from ...accumulate import result_from_events
from ...events import (
    ErrorReceived,
    Event,
    MessageCompleted,
    MessageStarted,
    ReasoningDelta,
    TextDelta,
    ToolCallArgumentsDelta,
    ToolCallCompleted,
    ToolCallStarted,
    UsageReported,
)
from ...kinds import IdSource, Status, StopReason
from ...protocols._values import int_or_none, nonempty_str
from ...protocols.anthropic_machine import STOP_REASONS as ANTHROPIC_STOPS
from ...protocols.bedrock import STOP_REASONS as CONVERSE_STOPS
from ...protocols.gemini_chunks import STOP_REASONS as GEMINI_STOPS
from ...protocols.openai_chat import _STOP_REASONS as CHAT_STOPS
from ...result import StreamResult, Usage

__all__ = ["MAX_BODY", "MAX_ITEMS", "read_answer", "unary_result"]

#: The largest body read as an answer (the unary cases' are a few KiB).
MAX_BODY = 8 * 1024 * 1024
#: The most content items (parts, blocks, output items, calls) read of one answer.
MAX_ITEMS = 256

#: Each protocol's stop reasons, normalized as its stream adapter does.
_CHAT_STOPS: Mapping[str, StopReason] = CHAT_STOPS
_ANTHROPIC_STOPS: Mapping[str, StopReason] = ANTHROPIC_STOPS
_CONVERSE_STOPS: Mapping[str, StopReason] = CONVERSE_STOPS
_GEMINI_STOPS: Mapping[str, StopReason] = GEMINI_STOPS


#: Where each protocol's usage object keeps each figure (a path of keys):
#: OpenAI "The chat completion object" and "The response object", Anthropic
#: "Messages", Gemini "UsageMetadata", Bedrock "TokenUsage" (checked 2026-12-01).
_USAGE: Mapping[str, Mapping[str, tuple[str, ...]]] = {
    "openai-chat": {
        "input_tokens": ("prompt_tokens",),
        "output_tokens": ("completion_tokens",),
        "total_tokens": ("total_tokens",),
        "cache_read_tokens": ("prompt_tokens_details", "cached_tokens"),
        "reasoning_tokens": ("completion_tokens_details", "reasoning_tokens"),
    },
    "openai-responses": {
        "input_tokens": ("input_tokens",),
        "output_tokens": ("output_tokens",),
        "total_tokens": ("total_tokens",),
        "cache_read_tokens": ("input_tokens_details", "cached_tokens"),
        "reasoning_tokens": ("output_tokens_details", "reasoning_tokens"),
    },
    "anthropic": {
        "input_tokens": ("input_tokens",),
        "output_tokens": ("output_tokens",),
        "cache_read_tokens": ("cache_read_input_tokens",),
        "cache_creation_tokens": ("cache_creation_input_tokens",),
    },
    "gemini": {
        "input_tokens": ("promptTokenCount",),
        "candidates": ("candidatesTokenCount",),
        "total_tokens": ("totalTokenCount",),
        "cache_read_tokens": ("cachedContentTokenCount",),
        "reasoning_tokens": ("thoughtsTokenCount",),
    },
    "bedrock-converse": {
        "input_tokens": ("inputTokens",),
        "output_tokens": ("outputTokens",),
        "total_tokens": ("totalTokens",),
        "cache_read_tokens": ("cacheReadInputTokens",),
        "cache_creation_tokens": ("cacheWriteInputTokens",),
    },
}


class _Answer:
    """The events of one answer, as they are read."""

    def __init__(self) -> None:
        self.events: list[Event] = []
        self.calls = 0

    def text(self, value: Any) -> None:
        if nonempty_str(value):
            self.events.append(TextDelta(text=value))

    def reasoning(self, value: Any, signature: Any = None) -> None:
        text = value if type(value) is str else ""
        sig = nonempty_str(signature)
        if text or sig:
            self.events.append(ReasoningDelta(text=text, signature=sig))

    def call(self, call_id: Any, name: Any, arguments: Any, *, raw: bool) -> None:
        """One call whole: ``arguments`` is its JSON text (``raw``) or its object."""
        if self.calls >= MAX_ITEMS:
            return
        index, self.calls = self.calls, self.calls + 1
        cid, tool = nonempty_str(call_id), nonempty_str(name)
        if raw:
            text = arguments if type(arguments) is str else ""
        else:
            try:
                text = dumps(arguments) if arguments is not None else "{}"
            except (TypeError, ValueError):
                text = ""
        parsed: Any = None
        invalid = None
        try:
            parsed = loads(text) if text else None
        except ValueError:
            invalid = "arguments are not JSON"
        if invalid is None and not isinstance(parsed, dict):
            invalid = "arguments are not a JSON object"
            parsed = None
        if invalid is None and tool is None:
            invalid = "the call has no name"
        source: IdSource = "provider" if cid else "synthetic"
        if cid is None:
            # As streamwire's Gemini adapter names a call without an id (never
            # sent back: a Gemini tool result quotes the name).
            cid = f"gemini-unary-0-{index}"
        self.events.append(ToolCallStarted(index=index, id=cid, name=tool, id_source=source))
        if text:
            self.events.append(ToolCallArgumentsDelta(index=index, id=cid, delta=text))
        self.events.append(
            ToolCallCompleted(
                index=index,
                id=cid,
                name=tool,
                type="function",
                raw_arguments=text,
                arguments=parsed,
                invalid_reason=invalid,
                id_source=source,
            )
        )

    def usage(self, raw: Any, fields: Mapping[str, tuple[str, ...]]) -> None:
        """The usage object ``raw``, its figures where ``fields`` says."""
        if not isinstance(raw, dict):
            return
        figures: dict[str, int | None] = {}
        for figure, path in fields.items():
            value: Any = raw
            for key in path:
                value = _obj(value).get(key)
            figures[figure] = int_or_none(value)
        if "candidates" in figures:
            # Gemini counts its thoughts beside the candidates' tokens; streamwire's
            # output figure includes reasoning, as its adapter reports it.
            candidates = figures.pop("candidates")
            if candidates is not None:
                figures["output_tokens"] = candidates + (figures["reasoning_tokens"] or 0)
        self.events.append(UsageReported(usage=Usage(**figures, final=True, raw=raw)))

    def fail(self, kind: Any, message: Any, raw: Any) -> None:
        """The answer is an error (a Responses answer whose status is ``failed``)."""
        self.events.append(
            ErrorReceived(
                phase="provider",
                type=kind if type(kind) is str else None,
                code=kind if type(kind) is str else None,
                message=message if type(message) is str else None,
                retryable=False,
                raw=raw,
            )
        )
        self.events.append(
            MessageCompleted(status="error", stop_reason=None, provider_stop_reason=None)
        )

    def end(self, provider_stop: Any, stops: Mapping[str, StopReason]) -> None:
        reason = provider_stop if type(provider_stop) is str else None
        stop: StopReason | None = None
        if reason is not None:
            stop = stops.get(reason, "other")
        if stop == "stop" and self.calls:
            stop = "tool_calls"
        status: Status = "truncated" if stop == "length" else "completed"
        self.events.append(
            MessageCompleted(status=status, stop_reason=stop, provider_stop_reason=reason)
        )


def _items(value: Any) -> list[Any]:
    return value[:MAX_ITEMS] if isinstance(value, list) else []


def _obj(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _chat(body: dict[str, Any], out: _Answer) -> str | None:
    choices = _items(body.get("choices"))
    choice = next((c for c in choices if isinstance(c, dict) and c.get("index", 0) == 0), None)
    if choice is None:
        return "no choice 0 in the chat.completion"
    message = _obj(choice.get("message"))
    for key in ("reasoning_content", "reasoning"):
        out.reasoning(message.get(key))
    out.text(message.get("content"))
    for call in _items(message.get("tool_calls")):
        call = _obj(call)
        function = _obj(call.get("function"))
        out.call(call.get("id"), function.get("name"), function.get("arguments"), raw=True)
    out.usage(body.get("usage"), _USAGE["openai-chat"])
    out.end(choice.get("finish_reason"), _CHAT_STOPS)
    return None


def _responses(body: dict[str, Any], out: _Answer) -> str | None:
    if body.get("object") not in ("response", None) or not isinstance(body.get("output"), list):
        return "no output list in the response"
    for item in _items(body.get("output")):
        item = _obj(item)
        kind = item.get("type")
        if kind == "reasoning":
            parts = _items(item.get("content")) or _items(item.get("summary"))
            for part in parts:
                out.reasoning(_obj(part).get("text"))
        elif kind == "message":
            for part in _items(item.get("content")):
                part = _obj(part)
                if part.get("type") == "output_text":
                    out.text(part.get("text"))
        elif kind == "function_call":
            out.call(item.get("call_id"), item.get("name"), item.get("arguments"), raw=True)
    out.usage(body.get("usage"), _USAGE["openai-responses"])
    status = body.get("status")
    if status == "failed":
        error = _obj(body.get("error"))
        out.fail(error.get("code"), error.get("message"), body.get("error"))
    elif status == "incomplete":
        reason = _obj(body.get("incomplete_details")).get("reason")
        out.end(reason if type(reason) is str else "incomplete", _RESPONSES_INCOMPLETE)
    else:
        out.end("completed" if status == "completed" else status, {"completed": "stop"})
    return None


_RESPONSES_INCOMPLETE: Mapping[str, StopReason] = {
    "max_output_tokens": "length",
    "content_filter": "content_filter",
}


def _anthropic(body: dict[str, Any], out: _Answer) -> str | None:
    if body.get("type") != "message" or not isinstance(body.get("content"), list):
        return "not a message with content"
    for block in _items(body.get("content")):
        block = _obj(block)
        kind = block.get("type")
        if kind == "thinking":
            out.reasoning(block.get("thinking"), block.get("signature"))
        elif kind == "text":
            out.text(block.get("text"))
        elif kind == "tool_use":
            out.call(block.get("id"), block.get("name"), block.get("input"), raw=False)
    out.usage(body.get("usage"), _USAGE["anthropic"])
    out.end(body.get("stop_reason"), _ANTHROPIC_STOPS)
    return None


def _gemini(body: dict[str, Any], out: _Answer) -> str | None:
    candidates = _items(body.get("candidates"))
    candidate = next(
        (c for c in candidates if isinstance(c, dict) and c.get("index", 0) == 0), None
    )
    if candidate is None:
        return "no candidate 0 in the GenerateContentResponse"
    for part in _items(_obj(candidate.get("content")).get("parts")):
        part = _obj(part)
        if part.get("thought") is True:
            out.reasoning(part.get("text"), part.get("thoughtSignature"))
        elif "functionCall" in part:
            call = _obj(part.get("functionCall"))
            # Gemini's calls carry an id only where the API gives one.
            out.call(call.get("id"), call.get("name"), call.get("args"), raw=False)
        else:
            out.text(part.get("text"))
    out.usage(body.get("usageMetadata"), _USAGE["gemini"])
    out.end(candidate.get("finishReason"), _GEMINI_STOPS)
    return None


def _converse(body: dict[str, Any], out: _Answer) -> str | None:
    message = _obj(_obj(body.get("output")).get("message"))
    if not isinstance(message.get("content"), list):
        return "no output.message.content in the Converse answer"
    for block in _items(message.get("content")):
        block = _obj(block)
        if "reasoningContent" in block:
            text = _obj(_obj(block.get("reasoningContent")).get("reasoningText"))
            out.reasoning(text.get("text"), text.get("signature"))
        elif "toolUse" in block:
            use = _obj(block.get("toolUse"))
            out.call(use.get("toolUseId"), use.get("name"), use.get("input"), raw=False)
        else:
            out.text(block.get("text"))
    out.usage(body.get("usage"), _USAGE["bedrock-converse"])
    out.end(body.get("stopReason"), _CONVERSE_STOPS)
    return None


_READERS = {
    "openai-chat": _chat,
    "openai-responses": _responses,
    "anthropic": _anthropic,
    "bedrock-invoke": _anthropic,
    "gemini": _gemini,
    "bedrock-converse": _converse,
}


def read_answer(client: str, body: bytes) -> tuple[list[Event], str | None]:
    """The unified events of ``client``'s non-streaming answer ``body``, and
    why it is no such answer (None when it is one). Never raises for a body."""
    reader = _READERS.get(client)
    if reader is None:
        raise ValueError(f"no non-streaming form known for {client!r}")
    if len(body) > MAX_BODY:
        return [], f"the body passed {MAX_BODY} bytes"
    try:
        value = loads(body.decode("utf-8"))
    except (UnicodeDecodeError, ValueError) as exc:
        return [], f"the body is not JSON ({type(exc).__name__}: {str(exc)[:120]})"
    if not isinstance(value, dict):
        return [], f"the body is a JSON {type(value).__name__}, not an object"
    out = _Answer()
    model = nonempty_str(value.get("model")) or nonempty_str(value.get("modelVersion"))
    out.events.append(MessageStarted(message_id=nonempty_str(value.get("id")), model=model))
    problem = reader(value, out)
    if problem is not None:
        return [], problem
    return out.events, None


def unary_result(client: str, events: list[Event]) -> StreamResult:
    """The result those events make, as a stream of the same answer would."""
    return result_from_events(events, protocol=client)
