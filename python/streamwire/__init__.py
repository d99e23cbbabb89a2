"""streamwire: LLM provider stream bytes in, unified events and a truthful result out."""

import logging
from typing import TYPE_CHECKING, Any

from . import options
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
from .assistant import assistant_message
from .errors import FramingError, StreamwireError, UsageError
from .events import (
    EVENT_TYPES,
    BaseEvent,
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
from .kinds import (
    CallState,
    ErrorPhase,
    Executor,
    HttpProtocolName,
    IdSource,
    ProtocolName,
    ReasoningKind,
    Status,
    StopReason,
    TargetName,
    WebSocketProtocolName,
)
from .otel import otel_attributes, otel_set_span
from .protocols import Stream, is_protocol, known_protocols, register_protocol, stream
from .result import (
    ChoiceResult,
    Metrics,
    ReadOnlyDict,
    StreamError,
    StreamResult,
    StreamWarning,
    ToolCall,
    Usage,
)
from .toolcalls import ToolCallStateError, ToolLedger
from .tooldefs import ToolSet
from .toolresults import ToolResultError, tool_result
from .translate import (
    ENCODERS,
    Downgrade,
    Encoder,
    atranslate,
    encoder,
    known_encoders,
    translate,
)

__all__ = [
    "DEFAULT_MAX_EVENT_BYTES",
    "DEFAULT_MAX_LINE_BYTES",
    "DEFAULT_MAX_MESSAGE_BYTES",
    "ENCODERS",
    "EVENT_TYPES",
    "AsyncEventIterator",
    "BaseEvent",
    "CallState",
    "ChoiceResult",
    "Downgrade",
    "Encoder",
    "ErrorPhase",
    "ErrorReceived",
    "Event",
    "EventIterator",
    "EventStreamDecoder",
    "EventStreamMessage",
    "Executor",
    "FramingError",
    "HeaderValue",
    "HttpProtocolName",
    "IdSource",
    "MessageCompleted",
    "MessageStarted",
    "Metrics",
    "ProtocolName",
    "ReadOnlyDict",
    "ReasoningDelta",
    "ReasoningKind",
    "RefusalDelta",
    "SseDecoder",
    "SseEvent",
    "Status",
    "StopReason",
    "Stream",
    "StreamError",
    "StreamResult",
    "StreamWarning",
    "StreamwireError",
    "TargetName",
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
    "WebSocketProtocolName",
    "__version__",
    "aiter_events",
    "assistant_message",
    "atranslate",
    "encode_eventstream",
    "encode_sse",
    "encoder",
    "is_protocol",
    "iter_events",
    "known_encoders",
    "known_protocols",
    "options",
    "otel_attributes",
    "otel_set_span",
    "register_protocol",
    "result_from_events",
    "stream",
    "tool_result",
    "translate",
]

# A library leaves logging to the application: records reach a handler only
# once the application configures one (see streamwire/_log.py).
logging.getLogger("streamwire").addHandler(logging.NullHandler())

if TYPE_CHECKING:
    from .io import AsyncEventIterator, EventIterator, aiter_events, iter_events

# The HTTP client helpers are optional extras (streamwire.io): imported on
# first use, so ``import streamwire`` never imports httpx or aiohttp.
_LAZY = {
    "iter_events": "streamwire.io",
    "aiter_events": "streamwire.io",
    "EventIterator": "streamwire.io",
    "AsyncEventIterator": "streamwire.io",
}


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'streamwire' has no attribute {name!r}")
    import importlib

    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value
