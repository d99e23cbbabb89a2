"""The closed sets of names the vocabulary speaks in: statuses, stop reasons, phases, protocols.

The bottom of the package's layers (docs/design.md "Layers", checked
2026-12-01): every name here is a ``Literal`` type, and this module imports
nothing of the package, so that ``result.py``, ``events.py`` and
``toolcalls.py`` can all use them with their dependencies running one way
(``kinds`` <- ``result`` <- ``events`` <- ``toolcalls``).

The values of the options that take a closed set of names are here too
(``IdleReset``, ``AudioMode``, ``MissingFinishReason``, ``EnumNumbering``,
``ModelFormat``): ``streamwire.options`` describes every option, and sits
below the adapters and the HTTP edge that implement them, so the names both
use live below both.

The protocol names are docs/design.md's. A protocol registered at run time
(``sw.register_protocol``) has a name outside ``ProtocolName``; it is still
accepted everywhere, and a type checker is told so with ``typing.cast``.
"""

from __future__ import annotations

from typing import Literal, get_args

__all__ = [
    "HTTP_PROTOCOLS",
    "PROTOCOLS",
    "TARGETS",
    "WEBSOCKET_PROTOCOLS",
    "AudioMode",
    "CallState",
    "EnumNumbering",
    "ErrorPhase",
    "Executor",
    "HttpProtocolName",
    "IdSource",
    "IdleReset",
    "MissingFinishReason",
    "ModelFormat",
    "ProtocolName",
    "ReasoningKind",
    "Status",
    "StopReason",
    "TargetName",
    "WebSocketProtocolName",
]

#: How a stream (or one choice of it) ended; see docs/design.md "How a stream ends".
#: ``in_progress`` is only ever seen on a result read before the stream ended.
Status = Literal[
    "in_progress",
    "completed",
    "truncated",
    "error",
    "incomplete",
    "cancelled",
    "protocol_conflict",
]
#: The normalized stop reason; the provider's raw value is kept beside it.
StopReason = Literal["stop", "length", "tool_calls", "content_filter", "pause", "error", "other"]
#: Which layer an error came from: the framing (bytes), the provider (an
#: in-stream error), the transport (the edge), or a configured limit.
ErrorPhase = Literal["framing", "provider", "transport", "limit"]
#: Who runs a tool call: the caller (``client``) or the provider itself
#: (``server``: web search, code execution, ... reported, never offered).
Executor = Literal["client", "server"]
#: Reasoning as produced (``text``) or the provider's summary of it.
ReasoningKind = Literal["text", "summary"]
#: Where a call's id came from: the provider, or streamwire (when the provider
#: sends none, e.g. gemini or the legacy chat ``function_call``). A synthetic id
#: is never sent back to the provider.
IdSource = Literal["provider", "synthetic"]
#: A tool call's state (see ``streamwire.toolcalls``: adapter side
#: ``collecting`` to ``valid`` or ``rejected``, caller side on to ``succeeded``
#: or ``failed``).
CallState = Literal[
    "collecting",
    "complete",
    "valid",
    "rejected",
    "authorized",
    "executing",
    "succeeded",
    "failed",
]

#: The protocols whose adapters read an HTTP body (``Stream.feed``).
HttpProtocolName = Literal[
    "openai-chat",
    "openai-responses",
    "anthropic",
    "gemini",
    "gemini-json",
    "bedrock-converse",
    "bedrock-invoke",
]
#: The protocols whose adapters read WebSocket messages (``Stream.feed_message``).
WebSocketProtocolName = Literal["openai-responses-ws", "openai-realtime", "gemini-live"]
#: Every built-in protocol (``sw.stream``'s first argument).
ProtocolName = Literal[HttpProtocolName, WebSocketProtocolName]
#: The protocols a stream can be re-encoded into (``sw.encoder``, ``sw.translate``).
TargetName = Literal["openai-chat", "openai-responses", "anthropic", "gemini"]

# --- the values of options (see streamwire.options) --------------------------

#: The HTTP edge's ``idle_reset``: what resets the idle timer, any wire event
#: (``event``, keep-alives included) or only an event with data (``data``).
IdleReset = Literal["event", "data"]
#: The WebSocket sessions' ``audio``: ``count``: audio deltas are counted
#: (deltas and decoded bytes, in the result's ``provider_metrics``); ``keep``:
#: the decoded audio is also kept, per response, for ``session.audio()``.
AudioMode = Literal["count", "keep"]
#: openai-chat's ``missing_finish_reason``: what a choice without a
#: ``finish_reason`` is when ``[DONE]`` ends the stream.
MissingFinishReason = Literal["incomplete", "completed"]
#: gemini's and gemini-json's ``enum_numbering``: whose numbers an enum sent
#: as an integer is read by (Vertex AI and the Gemini API number some values
#: differently; ``either``: only the numbers both name alike are read).
EnumNumbering = Literal["either", "vertex", "gemini-api"]
#: bedrock-invoke's ``model_format``: the model family whose events the
#: chunks carry.
ModelFormat = Literal["anthropic"]

HTTP_PROTOCOLS: tuple[HttpProtocolName, ...] = get_args(HttpProtocolName)
WEBSOCKET_PROTOCOLS: tuple[WebSocketProtocolName, ...] = get_args(WebSocketProtocolName)
PROTOCOLS: tuple[ProtocolName, ...] = HTTP_PROTOCOLS + WEBSOCKET_PROTOCOLS
TARGETS: tuple[TargetName, ...] = get_args(TargetName)
