"""streamwire: LLM provider stream bytes in, unified events and a truthful result out."""

from typing import TYPE_CHECKING, Any

from ._core import (
    DEFAULT_MAX_EVENT_BYTES,
    DEFAULT_MAX_LINE_BYTES,
    DEFAULT_MAX_MESSAGE_BYTES,
    EventStreamDecoder,
    EventStreamMessage,
    HeaderValue,
    SseDecoder,
    SseEvent,
    Utf8Decoder,
    __version__,
    encode_eventstream,
    encode_sse,
)
from .accumulate import result_from_events
from .errors import FramingError, StreamwireError, UsageError
from .events import (
    ErrorReceived,
    Event,
    MessageCompleted,
    MessageStarted,
    ReasoningDelta,
    RefusalDelta,
    TextDelta,
    ToolCallArgumentsDelta,
    ToolCallCompleted,
    ToolCallStarted,
    UnknownEvent,
    UsageReported,
)
from .protocols import Stream, known_protocols, register_protocol, stream
from .result import ChoiceResult, Metrics, StreamError, StreamResult, StreamWarning, Usage
from .toolcalls import ToolCall, ToolCallStateError, ToolLedger
from .tooldefs import ToolSet
from .toolresults import ToolResultError, tool_result
from .translate import ENCODERS, Downgrade, Encoder, encoder, known_encoders, translate

__all__ = [
    "DEFAULT_MAX_EVENT_BYTES",
    "DEFAULT_MAX_LINE_BYTES",
    "DEFAULT_MAX_MESSAGE_BYTES",
    "ENCODERS",
    "ChoiceResult",
    "Downgrade",
    "Encoder",
    "ErrorReceived",
    "Event",
    "EventStreamDecoder",
    "EventStreamMessage",
    "FramingError",
    "HeaderValue",
    "MessageCompleted",
    "MessageStarted",
    "Metrics",
    "ReasoningDelta",
    "RefusalDelta",
    "SseDecoder",
    "SseEvent",
    "Stream",
    "StreamError",
    "StreamResult",
    "StreamWarning",
    "StreamwireError",
    "TextDelta",
    "ToolCall",
    "ToolCallArgumentsDelta",
    "ToolCallCompleted",
    "ToolCallStarted",
    "ToolCallStateError",
    "ToolLedger",
    "ToolResultError",
    "ToolSet",
    "UnknownEvent",
    "Usage",
    "UsageError",
    "UsageReported",
    "Utf8Decoder",
    "__version__",
    "aiter_events",
    "encode_eventstream",
    "encode_sse",
    "encoder",
    "iter_events",
    "known_encoders",
    "known_protocols",
    "register_protocol",
    "result_from_events",
    "stream",
    "tool_result",
    "translate",
]

if TYPE_CHECKING:
    from .io import aiter_events, iter_events

# The HTTP client helpers are optional extras (streamwire.io): imported on
# first use, so ``import streamwire`` never imports httpx or aiohttp.
_LAZY = {"iter_events": "streamwire.io", "aiter_events": "streamwire.io"}


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'streamwire' has no attribute {name!r}")
    import importlib

    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value
