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
from .errors import FramingError, StreamwireError, UsageError

__all__ = [
    "DEFAULT_MAX_EVENT_BYTES",
    "DEFAULT_MAX_LINE_BYTES",
    "DEFAULT_MAX_MESSAGE_BYTES",
    "EventStreamDecoder",
    "EventStreamMessage",
    "FramingError",
    "HeaderValue",
    "SseDecoder",
    "SseEvent",
    "StreamwireError",
    "UsageError",
    "Utf8Decoder",
    "__version__",
    "encode_eventstream",
    "encode_sse",
]
