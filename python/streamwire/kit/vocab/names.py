"""The protocol names the kit speaks, and the adapters and encoders it makes from them.

The names are the package's own (``streamwire.kinds``): the mock speaks every
HTTP protocol an adapter reads (``UPSTREAM_PROTOCOLS``), the judge's client
every protocol an encoder writes and Bedrock's two (``CLIENTS``), and each body has the media
type the HTTP edge expects of that protocol (``streamwire.io``). A name is
checked once, where it enters the kit (``CheckPlan``, the command line, the
mock's routes, the mock's log as the judge reads it); past that point the kit
passes plain strings, and ``adapter`` and ``encoder`` call the constructors,
whose typed signatures want literals, with them.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ...io._wire import content_types
from ...kinds import HTTP_PROTOCOLS, TARGETS
from ...protocols import Stream, stream
from ...translate import Encoder
from ...translate import encoder as _encoder

__all__ = [
    "BEDROCK_CLIENTS",
    "CLIENTS",
    "END_EVENTS",
    "NO_KEEPALIVE",
    "SDKS",
    "UPSTREAM_PROTOCOLS",
    "WS_ERROR_TYPES",
    "WS_LOSSES",
    "WS_WIRE",
    "adapter",
    "encoder",
    "media_type",
    "wire_of",
]

#: The upstream protocols the mock speaks (the adapter names).
UPSTREAM_PROTOCOLS: tuple[str, ...] = HTTP_PROTOCOLS
#: The client protocols the judge speaks: the encoder names, and Bedrock's
#: two (whose bodies the mock writes itself: ``upstream/eventstream.py``).
BEDROCK_CLIENTS: tuple[str, ...] = ("bedrock-converse", "bedrock-invoke")
CLIENTS: tuple[str, ...] = (*TARGETS, *BEDROCK_CLIENTS)

#: How each upstream protocol's stream ends, as the mock sends it (each
#: provider's streaming reference; checked 2026-12-01): what a gateway must
#: wait for before it calls an answer whole, and the matrix names per route.
END_EVENTS: dict[str, str] = {
    "openai-chat": "data: [DONE] (after the finish_reason chunk, and the usage chunk if asked)",
    "openai-responses": "response.completed (.incomplete when cut; error, then .failed)",
    "anthropic": "message_stop (after message_delta's stop_reason and usage)",
    "gemini": "none: the last chunk carries finishReason and usageMetadata",
    "gemini-json": "the JSON array's closing ]",
    "bedrock-converse": "messageStop, then metadata (usage)",
    "bedrock-invoke": "a chunk with message_stop and amazon-bedrock-invocationMetrics",
}

#: The official SDKs an SDK cell reads with (``client/sdk.py``; the extra
#: ``streamwire[kit-sdk]``), by their names on the command line, and the
#: client protocols each speaks.
SDKS: dict[str, tuple[str, ...]] = {
    "openai": ("openai-chat", "openai-responses"),
    "anthropic": ("anthropic",),
    "google-genai": ("gemini",),
    "boto3": ("bedrock-converse", "bedrock-invoke"),
}

#: The upstreams whose streams have no keep-alive (an EventStream, Gemini's
#: JSON array, the WebSocket sessions, whose own are the socket's pings):
#: their keep-alive cases are the silence alone, and nothing they send can
#: break a stream.
NO_KEEPALIVE = frozenset(
    {
        "bedrock-converse",
        "bedrock-invoke",
        "gemini-json",
        "openai-responses-ws",
        "openai-realtime",
        "gemini-live",
    }
)

#: The WebSocket protocols the kit speaks (the mock serves them, the judge's
#: client asks them), and the HTTP protocol whose facts each carries: a
#: Responses WebSocket message is an event of the streamed Responses API
#: (OpenAI "WebSocket mode", checked 2026-12-07); a Realtime response
#: carries a Responses answer's text, calls, stop and usage in events of its
#: own (``upstream/realtime.py``), in the same usage convention (its
#: ``input_tokens`` count the cached ones) and with the same stop reasons
#: as streamwire's adapters read them (``completed``: stop or tool calls;
#: ``incomplete`` for ``max_output_tokens``: length; ``failed``: error). A
#: Gemini Live turn carries a streamed Gemini answer's parts (text, thoughts
#: and their signature, calls with their arguments whole) and its usage, in
#: the same convention (``promptTokenCount`` counts the cached ones;
#: ``responseTokenCount`` is ``candidatesTokenCount``): ``upstream/live.py``.
WS_WIRE: dict[str, str] = {
    "openai-responses-ws": "openai-responses",
    "openai-realtime": "openai-responses",
    "gemini-live": "gemini",
}
#: What a WebSocket protocol has no field for of its HTTP sibling's facts:
#: Realtime carries no reasoning (no reasoning items, no reasoning tokens);
#: Gemini Live has no end for the output limit (its ``turnCompleteReason``
#: has no ``MAX_TOKENS``: ``length``) and no error message (it closes the
#: socket: an error's type is the close, ``error_type``).
WS_LOSSES: dict[str, frozenset[str]] = {
    "openai-realtime": frozenset({"reasoning"}),
    "gemini-live": frozenset({"length", "error_type"}),
}
#: The error type a protocol's error arrives as when it has no field for
#: the provider's (``error_type`` in ``WS_LOSSES``): Live's close, as
#: streamwire's adapter reads it.
WS_ERROR_TYPES: dict[str, str] = {"gemini-live": "websocket_close"}


def wire_of(protocol: str) -> str:
    """The HTTP protocol whose facts ``protocol`` carries (itself, unless a
    WebSocket one's): what the truth and the reference are computed in."""
    return WS_WIRE.get(protocol, protocol)


_stream: Callable[..., Stream] = stream
_encode: Callable[..., Encoder] = _encoder


def adapter(protocol: str, **options: Any) -> Stream:
    """``sw.stream(protocol, **options)`` for a name checked where it entered."""
    return _stream(protocol, **options)


def encoder(target: str, **options: Any) -> Encoder:
    """``sw.encoder(target, **options)`` for a name checked where it entered."""
    return _encode(target, **options)


def media_type(protocol: str) -> str:
    """The media type of ``protocol``'s streamed body (``text/event-stream``, ...)."""
    return content_types(protocol)[0]
