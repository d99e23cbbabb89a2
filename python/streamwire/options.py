"""The options of each protocol, as ``TypedDict``s: what a type checker holds ``sw.stream`` to.

``sw.stream("openai-chat", strict_done=True)`` is checked against
``OpenAIChatOptions``, ``sw.iter_events(response, "anthropic",
idle_timeout=30)`` against ``AnthropicHttpOptions`` (the adapter's options
and the edge's, ``EdgeOptions``), and so on for every built-in protocol, through
the overloads of ``sw.stream``, ``sw.iter_events`` and ``sw.aiter_events``. A
misspelt option is then a type error, and at run time a ``TypeError`` at the
call. The options are documented where they are implemented (``Stream``,
``SseStream``, each adapter's ``__init__``, ``streamwire.io``);
``tests/test_typing.py`` checks that every ``TypedDict`` here lists exactly
the options its adapter accepts.

Useful on their own for option sets built ahead::

    opts: sw.options.OpenAIChatOptions = {"strict_done": True, "max_choices": 4}
    s = sw.stream("openai-chat", **opts)
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from typing import TYPE_CHECKING, Any, TypedDict

if TYPE_CHECKING:
    from .kinds import AudioMode, EnumNumbering, IdleReset, MissingFinishReason, ModelFormat
    from .tooldefs import ToolSet, Validation

__all__ = [
    "AnthropicHttpOptions",
    "AnthropicOptions",
    "BedrockConverseHttpOptions",
    "BedrockConverseOptions",
    "BedrockInvokeHttpOptions",
    "BedrockInvokeOptions",
    "EdgeOptions",
    "GeminiHttpOptions",
    "GeminiJsonHttpOptions",
    "GeminiJsonOptions",
    "GeminiLiveOptions",
    "GeminiOptions",
    "HttpOptions",
    "OpenAIChatHttpOptions",
    "OpenAIChatOptions",
    "OpenAIRealtimeOptions",
    "OpenAIResponsesHttpOptions",
    "OpenAIResponsesOptions",
    "OpenAIResponsesWsOptions",
    "StreamOptions",
]


class StreamOptions(TypedDict, total=False):
    """Every protocol's options (``Stream.__init__``)."""

    tools: ToolSet | Iterable[Mapping[str, Any]] | Mapping[str, Any] | None
    validation: Validation
    clock: Callable[[], float] | None
    max_tool_argument_chars: int
    max_total_tool_argument_chars: int
    max_tool_calls: int
    max_content_blocks: int
    request_id: str | None
    http_status: int | None


class _SseOptions(StreamOptions, total=False):
    max_line_bytes: int
    max_event_bytes: int


class _EventStreamOptions(StreamOptions, total=False):
    max_message_bytes: int


class _WebSocketOptions(StreamOptions, total=False):
    audio: AudioMode
    max_message_bytes: int
    max_results: int


class OpenAIChatOptions(_SseOptions, total=False):
    """``openai-chat``."""

    strict_done: bool
    missing_finish_reason: MissingFinishReason
    max_choices: int


class OpenAIResponsesOptions(_SseOptions, total=False):
    """``openai-responses``."""


class AnthropicOptions(_SseOptions, total=False):
    """``anthropic``."""


class GeminiOptions(_SseOptions, total=False):
    """``gemini``."""

    max_candidates: int
    enum_numbering: EnumNumbering


class GeminiJsonOptions(StreamOptions, total=False):
    """``gemini-json``."""

    max_element_bytes: int
    max_candidates: int
    enum_numbering: EnumNumbering


class BedrockConverseOptions(_EventStreamOptions, total=False):
    """``bedrock-converse``."""


class BedrockInvokeOptions(_EventStreamOptions, total=False):
    """``bedrock-invoke``."""

    model_format: ModelFormat


class OpenAIResponsesWsOptions(_WebSocketOptions, total=False):
    """``openai-responses-ws``."""


class OpenAIRealtimeOptions(_WebSocketOptions, total=False):
    """``openai-realtime``."""


class GeminiLiveOptions(_WebSocketOptions, total=False):
    """``gemini-live``."""


class EdgeOptions(TypedDict, total=False):
    """The HTTP edge's own options (``streamwire.io``); ``clock`` is shared with the adapter's."""

    first_event_timeout: float | None
    idle_timeout: float | None
    total_timeout: float | None
    idle_reset: IdleReset
    started_at: float | None
    check_content_type: bool
    record: bool


class HttpOptions(StreamOptions, EdgeOptions, total=False):
    """Every HTTP protocol's ``sw.iter_events`` options."""


class OpenAIChatHttpOptions(OpenAIChatOptions, EdgeOptions, total=False):
    """``sw.iter_events(response, "openai-chat", ...)``."""


class OpenAIResponsesHttpOptions(OpenAIResponsesOptions, EdgeOptions, total=False):
    """``sw.iter_events(response, "openai-responses", ...)``."""


class AnthropicHttpOptions(AnthropicOptions, EdgeOptions, total=False):
    """``sw.iter_events(response, "anthropic", ...)``."""


class GeminiHttpOptions(GeminiOptions, EdgeOptions, total=False):
    """``sw.iter_events(response, "gemini", ...)``."""


class GeminiJsonHttpOptions(GeminiJsonOptions, EdgeOptions, total=False):
    """``sw.iter_events(response, "gemini-json", ...)``."""


class BedrockConverseHttpOptions(BedrockConverseOptions, EdgeOptions, total=False):
    """``sw.iter_events(response, "bedrock-converse", ...)``."""


class BedrockInvokeHttpOptions(BedrockInvokeOptions, EdgeOptions, total=False):
    """``sw.iter_events(response, "bedrock-invoke", ...)``."""
