"""Unified events straight from an HTTP client's streaming response: httpx, httpx2, aiohttp.

Optional extras: ``pip install 'streamwire[httpx]'``, ``streamwire[httpx2]``
or ``streamwire[aiohttp]``. The openai and anthropic SDKs' own raw
streaming responses are read too (they wrap an httpx2 response, or an httpx
one in older releases). Nothing here imports a client library
until a response of theirs is passed in (the library is recognized by the
response's class), and ``import streamwire`` never imports this package's
client modules.

    with httpx.Client() as client, client.stream("POST", url, json=body) as response:
        with sw.iter_events(response, "openai-chat", idle_timeout=30) as events:
            for event in events:
                ...
        result = events.result

Before parsing, the status and the content type are checked: an error
response (or a 2xx body that is not the protocol's stream) ends in an
``error`` result carrying the provider's error type, code, message and
request id. Options, besides the adapter's own (``sw.stream``'s):

* ``first_event_timeout``, ``idle_timeout``, ``total_timeout`` (seconds):
  end the stream ``incomplete`` with a warning naming the timeout.
  ``idle_reset="data"`` lets any received byte (keep-alives too) reset the
  idle timer.
* ``started_at``: the ``time.monotonic()`` reading taken just before the
  request was sent; times then count from it and ``time_to_headers`` is known.
* ``check_content_type=False``: parse whatever the content type says.
* ``record=True``: keep a ``Recording`` (``iterator.recording``) of the raw
  chunks, their arrival times, the events and the result, without credentials.
* ``clock``: the monotonic clock for the metrics (default ``time.monotonic``).

The iterator's ``result`` is the ``StreamResult`` (final once the iteration
ended or the iterator was closed), with the edge's metrics. How reading ends
(the body ended, the result was decided, the caller left) is docs/design.md
"The HTTP edge".
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Any, Literal, overload

from ..kinds import HttpProtocolName
from ._async import AsyncEventIterator
from ._driver import EDGE_OPTIONS, Driver
from ._sync import EventIterator
from .record import Recorder, Recording
from .replay import ReplayIterator, replay, verify

if TYPE_CHECKING:
    from typing_extensions import Unpack  # typing.Unpack from Python 3.11

    from ..options import (
        AnthropicHttpOptions,
        BedrockConverseHttpOptions,
        BedrockInvokeHttpOptions,
        GeminiHttpOptions,
        GeminiJsonHttpOptions,
        HttpOptions,
        OpenAIChatHttpOptions,
        OpenAIResponsesHttpOptions,
    )

__all__ = [
    "AsyncEventIterator",
    "EventIterator",
    "Recording",
    "ReplayIterator",
    "aiter_events",
    "iter_events",
    "replay",
    "verify",
]


#: The client libraries whose responses are read directly.
_LIBRARIES = ("httpx", "httpx2", "aiohttp")
#: The attributes under which SDKs keep the client library's response: the
#: openai and anthropic SDKs' raw responses (``with_streaming_response``,
#: ``with_raw_response``) keep it as ``http_response``, their ``Stream`` and
#: ``AsyncStream`` (``create(..., stream=True)``) as ``response``.
_WRAPPED = ("http_response", "response")


def _library_of(response: object) -> str | None:
    for cls in type(response).__mro__:
        root = cls.__module__.partition(".")[0]
        if root in _LIBRARIES:
            return root
    return None


def _resolve(response: object) -> tuple[str | None, Any]:
    """(library name, the library's own response), unwrapping an SDK's response."""
    library = _library_of(response)
    if library is not None:
        return library, response
    for attr in _WRAPPED:
        inner = getattr(response, attr, None)
        if inner is not None and _library_of(inner) in ("httpx", "httpx2"):
            return _library_of(inner), inner
    return None, response


def _unsupported(response: object, what: str) -> TypeError:
    return TypeError(
        f"unsupported response type {type(response).__module__}.{type(response).__qualname__}: "
        f"{what}"
    )


def _driver(
    protocol: str, options: dict[str, Any], request: dict[str, Any] | None, where: str
) -> Driver:
    edge = {k: options.pop(k) for k in list(options) if k in EDGE_OPTIONS}
    record = edge.pop("record", False)
    recorder = Recorder(protocol, options, request=request) if record else None
    return Driver(
        protocol,
        options,
        clock=edge.pop("clock", None) or time.monotonic,
        recorder=recorder,
        where=where,
        **edge,
    )


def _httpx_request(response: Any) -> dict[str, Any] | None:
    try:
        request = response.request
    except RuntimeError:  # a response built by hand has no request
        return None
    # The headers tell a recording which credentials to mask; they are not kept.
    headers = list(request.headers.items())
    return {"method": request.method, "url": str(request.url), "headers": headers}


@overload
def iter_events(
    response: Any, protocol: Literal["openai-chat"], **options: Unpack[OpenAIChatHttpOptions]
) -> EventIterator: ...
@overload
def iter_events(
    response: Any,
    protocol: Literal["openai-responses"],
    **options: Unpack[OpenAIResponsesHttpOptions],
) -> EventIterator: ...
@overload
def iter_events(
    response: Any, protocol: Literal["anthropic"], **options: Unpack[AnthropicHttpOptions]
) -> EventIterator: ...
@overload
def iter_events(
    response: Any, protocol: Literal["gemini"], **options: Unpack[GeminiHttpOptions]
) -> EventIterator: ...
@overload
def iter_events(
    response: Any, protocol: Literal["gemini-json"], **options: Unpack[GeminiJsonHttpOptions]
) -> EventIterator: ...
@overload
def iter_events(
    response: Any,
    protocol: Literal["bedrock-converse"],
    **options: Unpack[BedrockConverseHttpOptions],
) -> EventIterator: ...
@overload
def iter_events(
    response: Any, protocol: Literal["bedrock-invoke"], **options: Unpack[BedrockInvokeHttpOptions]
) -> EventIterator: ...
@overload
def iter_events(
    response: Any, protocol: HttpProtocolName, **options: Unpack[HttpOptions]
) -> EventIterator: ...
def iter_events(response: Any, protocol: str, **options: Any) -> EventIterator:
    """The unified events of a blocking streaming response.

    ``response``: an ``httpx.Response`` or ``httpx2.Response`` of a
    ``Client.stream(...)``, or an openai / anthropic SDK's raw streaming
    response (``with client.chat.completions.with_streaming_response.create(
    ..., stream=True) as response``) or ``Stream``. Returns an
    ``EventIterator``: use it as a context manager (or call ``close()``) so
    that leaving early closes the response; read ``.result`` after. See the
    module docstring for the options; a response of the wrong kind, an
    unknown protocol or an unknown option raises here, before anything is read.
    """
    library, inner = _resolve(response)
    if library in ("httpx", "httpx2"):
        import importlib

        from ._httpx import HttpxSource, is_async_response

        module = importlib.import_module(library)
        if is_async_response(inner, module):
            raise TypeError(
                f"an {library}.AsyncClient response: use sw.aiter_events(response, ...)"
            )
        driver = _driver(protocol, dict(options), _httpx_request(inner), "sw.iter_events")
        return EventIterator(HttpxSource(inner, module), driver)
    if library == "aiohttp":
        raise TypeError("aiohttp responses are asynchronous: use sw.aiter_events(response, ...)")
    raise _unsupported(
        response,
        "iter_events takes an httpx or httpx2 Response, or an openai / anthropic SDK's "
        "streaming response (aiter_events: their async twins, or aiohttp)",
    )


@overload
def aiter_events(
    response: Any, protocol: Literal["openai-chat"], **options: Unpack[OpenAIChatHttpOptions]
) -> AsyncEventIterator: ...
@overload
def aiter_events(
    response: Any,
    protocol: Literal["openai-responses"],
    **options: Unpack[OpenAIResponsesHttpOptions],
) -> AsyncEventIterator: ...
@overload
def aiter_events(
    response: Any, protocol: Literal["anthropic"], **options: Unpack[AnthropicHttpOptions]
) -> AsyncEventIterator: ...
@overload
def aiter_events(
    response: Any, protocol: Literal["gemini"], **options: Unpack[GeminiHttpOptions]
) -> AsyncEventIterator: ...
@overload
def aiter_events(
    response: Any, protocol: Literal["gemini-json"], **options: Unpack[GeminiJsonHttpOptions]
) -> AsyncEventIterator: ...
@overload
def aiter_events(
    response: Any,
    protocol: Literal["bedrock-converse"],
    **options: Unpack[BedrockConverseHttpOptions],
) -> AsyncEventIterator: ...
@overload
def aiter_events(
    response: Any, protocol: Literal["bedrock-invoke"], **options: Unpack[BedrockInvokeHttpOptions]
) -> AsyncEventIterator: ...
@overload
def aiter_events(
    response: Any, protocol: HttpProtocolName, **options: Unpack[HttpOptions]
) -> AsyncEventIterator: ...
def aiter_events(response: Any, protocol: str, **options: Any) -> AsyncEventIterator:
    """The unified events of an asyncio streaming response.

    ``response``: an ``httpx.Response`` or ``httpx2.Response`` of an
    ``AsyncClient.stream(...)``, an ``aiohttp.ClientResponse``, or an openai /
    anthropic SDK's async raw streaming response or ``AsyncStream``. Returns
    an ``AsyncEventIterator``: use ``async with`` (or ``await aclose()``) so
    that leaving early closes the response; read ``.result`` after. See the
    module docstring for the options; a response of the wrong kind, an
    unknown protocol or an unknown option raises here, before anything is read.
    """
    library, inner = _resolve(response)
    if library in ("httpx", "httpx2"):
        import importlib

        from ._httpx import HttpxAsyncSource, is_async_response

        module = importlib.import_module(library)
        if not is_async_response(inner, module):
            raise TypeError(
                f"a blocking {library}.Client response: use sw.iter_events(response, ...)"
            )
        driver = _driver(protocol, dict(options), _httpx_request(inner), "sw.aiter_events")
        return AsyncEventIterator(HttpxAsyncSource(inner, module), driver)
    if library == "aiohttp":
        from ._aiohttp import AiohttpSource

        info = inner.request_info
        headers = list(info.headers.items())  # for a recording: which credentials to mask
        request = {"method": info.method, "url": str(info.url), "headers": headers}
        driver = _driver(protocol, dict(options), request, "sw.aiter_events")
        return AsyncEventIterator(AiohttpSource(inner), driver)
    raise _unsupported(
        response,
        "aiter_events takes an httpx or httpx2 Response of an AsyncClient, an "
        "aiohttp.ClientResponse, or an openai / anthropic SDK's async streaming response",
    )
