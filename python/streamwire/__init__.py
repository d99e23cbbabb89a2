"""streamwire: LLM provider stream bytes in, unified events and a truthful result out."""

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

__all__ = [
    "DEFAULT_MAX_EVENT_BYTES",
    "DEFAULT_MAX_LINE_BYTES",
    "DEFAULT_MAX_MESSAGE_BYTES",
    "ChoiceResult",
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
    "encode_eventstream",
    "encode_sse",
    "known_protocols",
    "register_protocol",
    "result_from_events",
    "stream",
    "tool_result",
]
