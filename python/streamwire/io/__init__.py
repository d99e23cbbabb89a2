"""Unified events straight from an HTTP client's streaming response: httpx and aiohttp.

Optional extras: ``pip install streamwire[httpx]`` or ``streamwire[aiohttp]``.
Nothing here imports httpx or aiohttp until a response of theirs is passed
in (the library is recognized by the response's class, not by importing it),
and ``import streamwire`` never imports this package's client modules.

    with httpx.Client() as client, client.stream("POST", url, json=body) as response:
        with sw.iter_events(response, "openai-chat", idle_timeout=30) as events:
            for event in events:
                ...
        result = events.result

    async with session.post(url, json=body) as response:
        async with sw.aiter_events(response, "anthropic") as events:
            async for event in events:
                ...

Before parsing, the status and the content type are checked: an error
response (or a 2xx body that is not the protocol's stream) ends in an
``error`` result carrying the provider's error type, code, message and
request id. Options, besides the adapter's own (``sw.stream``'s):

* ``first_event_timeout``, ``idle_timeout``, ``total_timeout`` (seconds):
  end the stream ``incomplete`` with a warning naming the timeout; see
  ``_driver.py`` for exactly what each one bounds. ``idle_reset="data"``
  lets any received byte (keep-alives too) reset the idle timer.
* ``started_at``: the ``time.monotonic()`` reading taken just before the
  request was sent; times then count from it and ``time_to_headers`` is known.
* ``check_content_type=False``: parse whatever the content type says.
* ``record=True``: keep a ``Recording`` (``iterator.recording``; see
  ``record.py``) of the raw chunks, their arrival times, the events and the
  result, with credentials removed.
* ``clock``: the monotonic clock for the metrics (default ``time.monotonic``).

The iterator's ``result`` is the ``StreamResult`` (final once the iteration
ended or the iterator was closed), with the edge's metrics filled in
(``streamwire.metrics``).
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Any

from ._driver import EDGE_OPTIONS, Driver
from .record import Recorder, Recording
from .replay import ReplayIterator, replay, verify

if TYPE_CHECKING:
    from ._async import AsyncEventIterator
    from ._sync import EventIterator

__all__ = [
    "Recording",
    "ReplayIterator",
    "aiter_events",
    "iter_events",
    "replay",
    "verify",
]


def _library(response: object) -> str | None:
    for cls in type(response).__mro__:
        root = cls.__module__.partition(".")[0]
        if root in ("httpx", "aiohttp"):
            return root
    return None


def _driver(protocol: str, options: dict[str, Any], request: dict[str, Any] | None) -> Driver:
    edge = {k: options.pop(k) for k in list(options) if k in EDGE_OPTIONS}
    record = edge.pop("record", False)
    recorder = Recorder(protocol, options, request=request) if record else None
    return Driver(
        protocol,
        options,
        clock=edge.pop("clock", None) or time.monotonic,
        recorder=recorder,
        **edge,
    )


def _httpx_request(response: Any) -> dict[str, Any] | None:
    try:
        request = response.request
    except RuntimeError:  # a response built by hand has no request
        return None
    return {"method": request.method, "url": str(request.url)}


def iter_events(response: Any, protocol: str, **options: Any) -> EventIterator:
    """The unified events of a blocking streaming response (``httpx.Client.stream``).

    Returns an ``EventIterator``: iterate it, read ``.result`` after; use it
    as a context manager (or call ``close()``) to close the response when
    leaving early. See the module docstring for the options.
    """
    library = _library(response)
    if library == "httpx":
        from ._httpx import HttpxSource, is_async_response
        from ._sync import EventIterator

        if is_async_response(response):
            raise TypeError("an httpx.AsyncClient response: use sw.aiter_events(response, ...)")
        driver = _driver(protocol, dict(options), _httpx_request(response))
        return EventIterator(HttpxSource(response), driver)
    if library == "aiohttp":
        raise TypeError("aiohttp responses are asynchronous: use sw.aiter_events(response, ...)")
    raise TypeError(
        f"unsupported response type {type(response).__module__}.{type(response).__qualname__}: "
        "iter_events takes an httpx.Response (aiter_events: httpx async or aiohttp)"
    )


def aiter_events(response: Any, protocol: str, **options: Any) -> AsyncEventIterator:
    """The unified events of an asyncio streaming response (httpx.AsyncClient or aiohttp).

    Returns an ``AsyncEventIterator``: ``async for`` over it, read ``.result``
    after; use ``async with`` (or ``await aclose()``) to close the response
    when leaving early. See the module docstring for the options.
    """
    from ._async import AsyncEventIterator

    library = _library(response)
    if library == "httpx":
        from ._httpx import HttpxAsyncSource

        driver = _driver(protocol, dict(options), _httpx_request(response))
        return AsyncEventIterator(HttpxAsyncSource(response), driver)
    if library == "aiohttp":
        from ._aiohttp import AiohttpSource

        request = {"method": response.method, "url": str(response.url)}
        driver = _driver(protocol, dict(options), request)
        return AsyncEventIterator(AiohttpSource(response), driver)
    raise TypeError(
        f"unsupported response type {type(response).__module__}.{type(response).__qualname__}: "
        "aiter_events takes an httpx.Response (of an AsyncClient) or an aiohttp.ClientResponse"
    )
