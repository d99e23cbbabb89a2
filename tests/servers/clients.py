"""The HTTP clients under test, behind one call: fetch a URL, iterate its unified events.

``fetch(client, url, protocol, ...)`` opens a streaming GET with httpx or
httpx2 (each sync and async) or aiohttp, iterates ``sw.iter_events`` / ``sw.aiter_events``
and returns the events, the result and the iterator. ``stop_after`` events,
it ends early the way ``how`` says (``close``, ``break``, ``context``,
``cancel_task``) and records the moment it did (``Outcome.stopped_at``, by
``time.monotonic``, the clock the test server stamps disconnects with).
"""

from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass, field
from types import ModuleType
from typing import Any

import aiohttp
import httpx
import httpx2

import streamwire as sw

__all__ = ["CLIENTS", "SYNC_CLIENTS", "Outcome", "fetch", "fetch_all", "library"]

CLIENTS = ("httpx", "httpx-async", "httpx2", "httpx2-async", "aiohttp")
#: The clients read with ``sw.iter_events`` (the others with ``aiter_events``).
SYNC_CLIENTS = ("httpx", "httpx2")
_LIBRARIES: dict[str, ModuleType] = {"httpx": httpx, "httpx2": httpx2}


def library(client: str) -> ModuleType:
    """The httpx-like module of an httpx or httpx2 client name (``httpx2-async`` -> httpx2)."""
    return _LIBRARIES[client.removesuffix("-async")]


#: A generous client-side limit: a test that hangs fails instead.
_CLIENT_TIMEOUT = 10.0


@dataclass
class Outcome:
    events: list[sw.Event] = field(default_factory=list)
    result: sw.StreamResult | None = None
    iterator: Any = None
    recording: Any = None
    stopped_at: float | None = None
    started_at: float = 0.0
    ended_at: float = 0.0
    status_code: int | None = None


def fetch(
    client: str,
    url: str,
    protocol: str,
    *,
    stop_after: int | None = None,
    how: str = "close",
    headers: dict[str, str] | None = None,
    **options: Any,
) -> Outcome:
    """Runs one streaming request with ``client``; see the module docstring."""
    if client in SYNC_CLIENTS:
        return _sync(library(client), url, protocol, stop_after, how, headers, options)
    return asyncio.run(_async(client, url, protocol, stop_after, how, headers, options))


def _sync(
    lib: ModuleType,
    url: str,
    protocol: str,
    stop_after: int | None,
    how: str,
    headers: dict[str, str] | None,
    options: dict[str, Any],
) -> Outcome:
    out = Outcome()
    with lib.Client(timeout=_CLIENT_TIMEOUT) as client:
        out.started_at = time.monotonic()
        with client.stream("GET", url, headers=headers) as response:
            out.status_code = response.status_code
            it = sw.iter_events(response, protocol, **options)
            driver = it._driver  # the result outlives the iterator object
            if stop_after is None:
                with it:
                    out.events = list(it)
            elif how == "break":
                # No close(): dropping the last reference must close the response.
                for event in it:
                    out.events.append(event)
                    if len(out.events) >= stop_after:
                        out.stopped_at = time.monotonic()
                        break
                del it
            elif how == "context":
                with it:
                    for event in it:
                        out.events.append(event)
                        if len(out.events) >= stop_after:
                            out.stopped_at = time.monotonic()
                            break
            else:
                for event in it:
                    out.events.append(event)
                    if len(out.events) >= stop_after:
                        out.stopped_at = time.monotonic()
                        it.close()
                        break
            out.result = driver.result
            out.recording = None if driver.recorder is None else driver.recorder.recording
    out.ended_at = time.monotonic()
    return out


async def _async(
    client: str,
    url: str,
    protocol: str,
    stop_after: int | None,
    how: str,
    headers: dict[str, str] | None,
    options: dict[str, Any],
) -> Outcome:
    out = Outcome()
    if client != "aiohttp":
        async with library(client).AsyncClient(timeout=_CLIENT_TIMEOUT) as ac:
            out.started_at = time.monotonic()
            async with ac.stream("GET", url, headers=headers) as response:
                out.status_code = response.status_code
                await _consume(sw.aiter_events(response, protocol, **options), out, stop_after, how)
    else:
        timeout = aiohttp.ClientTimeout(total=_CLIENT_TIMEOUT)
        async with aiohttp.ClientSession(timeout=timeout) as session:
            out.started_at = time.monotonic()
            async with session.get(url, headers=headers) as response:
                out.status_code = response.status
                await _consume(sw.aiter_events(response, protocol, **options), out, stop_after, how)
    out.ended_at = time.monotonic()
    return out


async def _consume(it: Any, out: Outcome, stop_after: int | None, how: str) -> None:
    out.iterator = it
    if stop_after is None:
        async with it:
            out.events = [event async for event in it]
    elif how == "cancel_task":
        reached = asyncio.Event()

        async def run() -> None:
            async for event in it:
                out.events.append(event)
                if len(out.events) >= stop_after:
                    reached.set()

        task = asyncio.create_task(run())
        waiter = asyncio.create_task(reached.wait())
        await asyncio.wait({task, waiter}, return_when=asyncio.FIRST_COMPLETED)
        await asyncio.sleep(0.02)  # the task is now blocked reading the next chunk
        out.stopped_at = time.monotonic()
        task.cancel()
        waiter.cancel()
        try:
            await task
        except asyncio.CancelledError:
            pass
    elif how == "context":
        async with it:
            async for event in it:
                out.events.append(event)
                if len(out.events) >= stop_after:
                    out.stopped_at = time.monotonic()
                    break
    else:
        async for event in it:
            out.events.append(event)
            if len(out.events) >= stop_after:
                out.stopped_at = time.monotonic()
                await it.aclose()
                break
    out.result = it.result
    out.recording = it.recording


def fetch_all(client: str, jobs: list[tuple[str, str, dict[str, Any]]]) -> list[Outcome]:
    """Reads several URLs to the end with one client (and one event loop): ``(url,
    protocol, options)`` each. Cheaper than one ``fetch`` per URL."""
    if client in SYNC_CLIENTS:
        outs = []
        with library(client).Client(timeout=_CLIENT_TIMEOUT) as http:
            for url, protocol, options in jobs:
                out = Outcome(started_at=time.monotonic())
                with http.stream("GET", url) as response:
                    out.status_code = response.status_code
                    with sw.iter_events(response, protocol, **options) as it:
                        out.events = list(it)
                    out.result = it.result
                out.ended_at = time.monotonic()
                outs.append(out)
        return outs
    return asyncio.run(_fetch_all_async(client, jobs))


async def _fetch_all_async(
    client: str, jobs: list[tuple[str, str, dict[str, Any]]]
) -> list[Outcome]:
    outs = []
    if client != "aiohttp":
        async with library(client).AsyncClient(timeout=_CLIENT_TIMEOUT) as ac:
            for url, protocol, options in jobs:
                out = Outcome(started_at=time.monotonic())
                async with ac.stream("GET", url) as response:
                    out.status_code = response.status_code
                    await _consume(sw.aiter_events(response, protocol, **options), out, None, "")
                out.ended_at = time.monotonic()
                outs.append(out)
    else:
        timeout = aiohttp.ClientTimeout(total=_CLIENT_TIMEOUT)
        async with aiohttp.ClientSession(timeout=timeout) as session:
            for url, protocol, options in jobs:
                out = Outcome(started_at=time.monotonic())
                async with session.get(url) as response:
                    out.status_code = response.status
                    await _consume(sw.aiter_events(response, protocol, **options), out, None, "")
                out.ended_at = time.monotonic()
                outs.append(out)
    return outs
