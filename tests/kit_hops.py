"""Hops of our own between the kit's client and the mock, standard library only, each one behaviour.

Each reproduces what a real proxy or gateway was measured doing (docs/kit/examples.md),
so that the kit's verdict on it can be held to exactly one cause:

================== ============================================================ ===================
behaviour          what it does                                                 measured on
================== ============================================================ ===================
``pass``           relays the bytes both ways; a client that goes closes the    nginx, caddy
                   upstream at once
``hold``           reads the upstream's whole response, head included, before   mitmproxy's defaults
                   it sends the client a byte; the client's hang-up closes the
                   upstream
``hold_no_cancel`` the same, but reads the upstream to its end whatever the     (a worse one)
                   client does
``batch``          sends the upstream's bytes on in batches every ``BATCH``     haproxy's defaults
                   seconds
``close_late``     closes the upstream ``BATCH`` seconds after the client went  haproxy's defaults
``close_quarter``  closes the upstream ``QUARTER`` seconds after the client went (a gateway that
                   notices a hang-up on its next write)
``late_head``      sends the upstream's answer on only after a delay drawn from (a busy
                   ``LATE_HEAD`` for each request: the cancel case's timer      gateway)
                   fires before or after the head by chance
``fail_every_second`` cuts every second stream of each (path, case, delivery) (a race:
                   after its first bytes                                        flaky)
``fail_early``     answers HTTP 400 to a request asking for reasoning, without  lm-proxy, LiteLLM
                   calling the upstream
``hold_arguments`` (SSE, Chat Completions) holds every chunk of a tool call     (a gateway that
                   until the chunk that finishes the choice                     assembles calls)
``hold_text``      (SSE, Chat Completions) holds every text chunk until the    a translating
                   first chunk that is not text, then sends the text as one     proxy (Responses
                   chunk before it                                              route)
``keepalive_kills`` (SSE) ends the body at the first keep-alive (a comment)        LiteLLM (Gemini)
``drop_slow``      (SSE) drops events while the client is slow (its write      (a worse one)
                   buffer over ``DROP_OVER``), and goes on
``buffer_all``     reads the upstream as fast as it comes, whatever the client  (a worse one)
                   takes: a slow client's answer piles up in the hop
``buffer_slowly``  reads the upstream at 1/3.5 of the hold bound a second,     varnish (a hop
                   whatever the client takes: at the end of a slow reader's     that piles up,
                   pause it holds less than the bound, the upstream never        resumed before
                   having blocked                                               the bound)
``idle_end``       ends the body cleanly after ``IDLE`` seconds without an      (a worse one)
                   upstream byte, as if the answer were whole
``idle_reset``     resets the client's connection after ``IDLE`` seconds         nginx's
                   without an upstream byte                                    proxy_read_timeout
``silence_reset``  resets the client's connection ``SOON`` after the upstream  LiteLLM's Bedrock
                   falls silent: too soon for any idle timer                   pass-through
``completed_incomplete`` (SSE, Responses) ends a cut answer with                LiteLLM's bridge
                   ``response.completed`` carrying ``status: "incomplete"``
                   instead of ``response.incomplete``
``openai_tools``   relays, but rewrites an Anthropic request's tools into       lm-proxy 3.3.2
                   OpenAI's shape (``{"type": "function", "function": ...}``)
``echo_key``       relays, and adds the client's ``authorization`` (or          (a worse one)
                   ``x-api-key``) to the answer as ``x-debug-auth``
``drop_request_id`` relays, but drops the upstream's request id header          (a worse one)
                   (``x-request-id``, ``request-id``, ``x-amzn-requestid``)
``drop_cached``    (SSE) relays, but drops the cached input tokens from the     (a worse one)
                   usage (``cached_tokens``, ``cache_read_input_tokens``,
                   ``cachedContentTokenCount``)
``force_stream``   turns a request's ``"stream": false`` into ``true`` and      (a worse one)
                   relays the stream to a client that asked for the whole
                   answer
``split_text``     (SSE) cuts each text delta in two events: the same text in    (upgrade tests:
                   more events                                                  one fact each)
``retype_error``   (SSE) gives every in-stream error the type ``gateway_error``
``refuse_usage``   answers HTTP 503 to the ``usage`` case, without calling the
                   upstream
``bad_gateway_usage`` calls the upstream for the ``usage`` case, reads its   varnish,
                   whole answer, and answers its own HTTP 502 page (no upstream  mitmproxy
                   headers)
``close_usage``    calls the upstream for the ``usage`` case, reads its whole    trafficserver,
                   answer, and closes the client's connection without a         nghttpx (their
                   response                                                     upstream reset)
``drop_usage``     (SSE, Chat Completions) drops the usage chunk
``drop_reasoning`` (SSE, Chat Completions) drops the reasoning deltas and      LiteLLM (Gemini
                   streams the rest                                             clients)
``late_block_stop`` (SSE, Anthropic) sends ``message_delta`` before the last
                   ``content_block_stop``: the same facts in another order
``mix_above``      (SSE) with more than ``MIX_ABOVE`` streams in flight, hands  (load tests: a
                   every other text event to the stream of the same protocol    shared buffer)
                   that wrote one last, and its own to the next
``buffer_above``   with more than ``BUFFER_ABOVE`` streams in flight, reads     (a pool that
                   the upstream's whole answer before it sends a byte           queues)
``leak_cancel``    asks the upstream to keep the connection alive, and on       (a pool that
                   every ``LEAK_EVERY``-th hang-up neither closes nor reads it  loses sockets)
``repeat_heads``   (SSE, Chat Completions) repeats ``"role": "assistant"`` in   gateways that
                   every chunk's delta, and a call's ``id``, ``type`` and       re-emit each delta
                   ``name`` in every one of its deltas: streamwire reads it     whole
                   as the same call, the openai SDK's helper concatenates them
``gunzip_hold``    asks the upstream for gzip, and decompresses its whole       (a gateway that
                   answer before it sends the client a byte, decompressed       decodes bodies
                   (``Content-Length``)                                         whole)
``gunzip``         asks the upstream for gzip, and sends each piece on          (a gateway that
                   decompressed as it arrives (chunked)                         decodes as it reads)
``block_unary``    calls the upstream for a non-streaming request with a        claude-code-proxy
                   blocking socket on its event loop: nothing else moves until  0.1.5 (a sync
                   the answer is back (run it in a process of its own)          client in async)
``fixed_model``    sends every request upstream with one model of its own        MLflow's AI
                   (``FIXED_MODEL``, in the body or the path), whatever the     Gateway, company
                   client named                                                 gateways
================== ============================================================ ===================

Every hop passes the client's headers on as they came, its key among them:
a test that runs one as a gateway (``key_passthrough`` off) sees
``key_forwarded``.

A hop is an asyncio server on a free loopback port (``async with Hop(...)``),
one upstream connection per client connection (the kit's client sends
``connection: close``). The SSE behaviours de-chunk the mock's response,
change whole events, and chunk them again.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import json
import random
import re
import socket
import zlib
from collections.abc import AsyncIterator, Callable
from typing import Any
from urllib.parse import urlsplit

from streamwire.kit.vocab.buffers import hold_bound

__all__ = [
    "BATCH",
    "BEHAVIOURS",
    "BUFFER_ABOVE",
    "FIXED_MODEL",
    "LATE_HEAD",
    "LEAK_EVERY",
    "MIX_ABOVE",
    "QUARTER",
    "Hop",
]

#: haproxy's measured batching and close delay with its defaults.
BATCH = 0.2
BEHAVIOURS = (
    "pass",
    "mix_above",
    "buffer_above",
    "leak_cancel",
    "hold",
    "hold_no_cancel",
    "batch",
    "close_late",
    "close_quarter",
    "late_head",
    "fail_every_second",
    "fail_early",
    "hold_arguments",
    "hold_text",
    "keepalive_kills",
    "completed_incomplete",
    "drop_slow",
    "buffer_all",
    "buffer_slowly",
    "idle_end",
    "idle_reset",
    "silence_reset",
    "openai_tools",
    "echo_key",
    "drop_cached",
    "drop_request_id",
    "force_stream",
    "repeat_heads",
    "split_text",
    "retype_error",
    "refuse_usage",
    "bad_gateway_usage",
    "close_usage",
    "drop_usage",
    "drop_reasoning",
    "late_block_stop",
    "gunzip_hold",
    "gunzip",
    "fixed_model",
    "block_unary",
)
#: ``fixed_model``'s one model upstream.
FIXED_MODEL = "company-llm-v1"
#: ``close_quarter`` closes the upstream this long after the client hung up.
QUARTER = 0.25
#: ``late_head``'s delay before the answer goes on, drawn anew for each request.
LATE_HEAD = (0.5, 1.5)
#: ``fail_every_second`` cuts a stream after this many bytes of its answer.
CUT_AFTER = 300
#: ``mix_above`` mixes streams up, and ``buffer_above`` holds them, above this many in flight.
MIX_ABOVE = 4
BUFFER_ABOVE = 8
#: ``leak_cancel`` leaks the upstream connection of every this-many-th hang-up.
LEAK_EVERY = 10
_TEXT_EVENT = re.compile(rb'"content":"[^"]|"text_delta"')
#: ``drop_slow`` drops events while this many bytes wait to go to the client.
DROP_OVER = 256 * 1024
#: ``idle_end`` and ``idle_reset``'s idle timeout.
IDLE = 1.0
#: ``silence_reset`` resets the client's connection this soon into a silence.
SOON = 0.1
_REASONING = ("reasoning_effort", "reasoning", "thinking", "thinkingConfig")


class Hop:
    """A relay with one behaviour (``BEHAVIOURS``) in front of ``upstream_url``."""

    def __init__(self, upstream_url: str, behaviour: str = "pass") -> None:
        if behaviour not in BEHAVIOURS:
            raise ValueError(behaviour)
        parts = urlsplit(upstream_url)
        self.upstream = (parts.hostname or "127.0.0.1", parts.port or 80)
        self.behaviour = behaviour
        self._server: asyncio.base_events.Server | None = None
        self._tasks: set[asyncio.Task[Any]] = set()
        self.url = ""
        #: Client connections being served now.
        self.active = 0
        self._streams = itertools.count(1)
        #: ``mix_above``: per request path, the stream that wrote a text event last, and it.
        self._last_text: dict[bytes, tuple[int, bytes]] = {}
        self._hang_ups = 0
        #: ``fail_every_second``: streams seen per (case, delivery) of the model name.
        self._seen: dict[bytes, int] = {}
        self._random = random.Random()
        #: ``leak_cancel``'s upstream connections, never closed until the hop is.
        self.leaked: list[asyncio.StreamWriter] = []

    async def __aenter__(self) -> Hop:
        self._server = await asyncio.start_server(self._serve, "127.0.0.1", 0)
        port = self._server.sockets[0].getsockname()[1]
        self.url = f"http://127.0.0.1:{port}"
        return self

    async def __aexit__(self, *exc: object) -> None:
        assert self._server is not None
        self._server.close()
        for task in list(self._tasks):
            task.cancel()
        await asyncio.gather(*self._tasks, return_exceptions=True)
        for writer in self.leaked:
            writer.transport.abort()

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        task = asyncio.current_task()
        assert task is not None
        self._tasks.add(task)
        self.active += 1
        try:
            head, body = await _read_request(reader)
            refused = self.behaviour == "refuse_usage" and b'"sw-usage.' in body
            refused = refused or (self.behaviour == "refuse_usage" and b"/sw-usage." in head)
            if refused:
                error = b'{"error": {"type": "overloaded", "message": "try later"}}'
                writer.write(
                    b"HTTP/1.1 503 Service Unavailable\r\ncontent-type: application/json\r\n"
                    b"content-length: %d\r\nconnection: close\r\n\r\n%s" % (len(error), error)
                )
                await writer.drain()
                return
            usage = b'"sw-usage.' in body or b"/sw-usage." in head
            if self.behaviour in ("bad_gateway_usage", "close_usage") and usage:
                # The upstream is called and read to its end; the client gets
                # the hop's own page, as a proxy whose upstream failed it does.
                up_reader, up_writer = await asyncio.open_connection(*self.upstream)
                up_writer.write(head + body)
                await up_writer.drain()
                await up_reader.read()
                up_writer.close()
                if self.behaviour == "close_usage":
                    return  # the client's connection closes with nothing sent
                page = b"<html><body><h1>502 Bad Gateway</h1></body></html>"
                writer.write(
                    b"HTTP/1.1 502 Bad Gateway\r\ncontent-type: text/html\r\n"
                    b"content-length: %d\r\nconnection: close\r\n\r\n%s" % (len(page), page)
                )
                await writer.drain()
                return
            if self.behaviour == "fail_early" and _asks_reasoning(body):
                error = json.dumps(
                    {"error": {"type": "invalid_request_error", "message": "unsupported"}}
                ).encode()
                writer.write(
                    b"HTTP/1.1 400 Bad Request\r\ncontent-type: application/json\r\n"
                    b"content-length: %d\r\nconnection: close\r\n\r\n%s" % (len(error), error)
                )
                await writer.drain()
                return
            if self.behaviour == "openai_tools":
                head, body = _openai_tools(head, body)
            if self.behaviour == "force_stream":
                head, body = _forced_stream(head, body)
            if self.behaviour == "fixed_model":
                head, body = _fixed_model(head, body)
            if self.behaviour == "block_unary" and _whole_asked(head, body):
                # A synchronous client called from an async handler: the loop
                # waits with it.
                head = re.sub(rb"(?im)^connection:[^\r\n]*\r\n", b"", head)
                head = head.replace(b"\r\n", b"\r\nconnection: close\r\n", 1)
                writer.write(_blocking_call(self.upstream, head + body))
                await writer.drain()
                return
            if self.behaviour == "leak_cancel":
                # Keep-alive to the upstream, as a connection pool asks.
                head = re.sub(rb"(?im)^connection:[^\r\n]*\r\n", b"", head)
            if self.behaviour in ("gunzip", "gunzip_hold"):
                head = _asking_gzip(head)
            up_reader, up_writer = await asyncio.open_connection(*self.upstream)
            up_writer.write(head + body)
            await up_writer.drain()
            if self.behaviour == "echo_key":
                writer = _EchoKey(writer, _client_key(head))
            cut = self.behaviour == "fail_every_second" and self._second(head + body)
            await self._relay(reader, writer, up_reader, up_writer, head.split(b" ")[1], cut)
        except (ConnectionError, asyncio.IncompleteReadError, OSError, IndexError):
            pass
        finally:
            self.active -= 1
            with contextlib.suppress(Exception):
                writer.close()
            self._tasks.discard(task)

    async def _relay(
        self,
        reader: asyncio.StreamReader,
        writer: asyncio.StreamWriter,
        up_reader: asyncio.StreamReader,
        up_writer: asyncio.StreamWriter,
        path: bytes = b"",
        cut: bool = False,
    ) -> None:
        behaviour = self.behaviour
        if behaviour in _TRANSFORMS:
            pump = self._sse(up_reader, writer, _TRANSFORMS[behaviour]())
        elif behaviour == "mix_above":
            pump = self._sse(up_reader, writer, self._mixer(path.split(b"?")[0]))
        elif behaviour in ("hold", "hold_no_cancel") or (
            behaviour == "buffer_above" and self.active > BUFFER_ABOVE
        ):
            pump = self._hold(up_reader, writer)
        elif behaviour == "batch":
            pump = self._batch(up_reader, writer)
        elif behaviour == "buffer_all":
            pump = self._buffer_all(up_reader, writer)
        elif behaviour == "buffer_slowly":
            pump = self._buffer_all(up_reader, writer, rate=hold_bound() / 3.5)
        elif behaviour in ("idle_end", "idle_reset", "silence_reset"):
            pump = self._idle(up_reader, writer)
        elif behaviour == "drop_request_id":
            pump = self._without_ids(up_reader, writer)
        elif behaviour in ("gunzip", "gunzip_hold"):
            pump = self._gunzip(up_reader, writer, hold=behaviour == "gunzip_hold")
        elif behaviour == "late_head":
            pump = self._late(up_reader, writer, self._random.uniform(*LATE_HEAD))
        elif cut:
            pump = self._cut(up_reader, writer)
        else:
            pump = self._copy(up_reader, writer)
        relay = asyncio.ensure_future(pump)
        gone = asyncio.ensure_future(reader.read())  # the client's EOF: it hung up
        leak = False
        try:
            await asyncio.wait({relay, gone}, return_when=asyncio.FIRST_COMPLETED)
            if gone.done() and not relay.done():
                if behaviour == "hold_no_cancel":
                    await relay  # reads the upstream to its end regardless
                elif behaviour == "close_late":
                    await asyncio.sleep(BATCH)
                elif behaviour == "close_quarter":
                    await asyncio.sleep(QUARTER)
                elif behaviour == "leak_cancel":
                    self._hang_ups += 1
                    leak = self._hang_ups % LEAK_EVERY == 0
        finally:
            for pending in (relay, gone):
                pending.cancel()
            await asyncio.gather(relay, gone, return_exceptions=True)
            if leak:
                self.leaked.append(up_writer)  # neither read nor closed again
            else:
                up_writer.transport.abort()

    def _mixer(self, path: bytes) -> Callable[[bytes], list[bytes]]:
        """``mix_above``'s transform for one stream: above ``MIX_ABOVE`` streams in
        flight, every other text event is the last one another stream of the
        same path wrote (and this one's is kept for the next)."""
        me = next(self._streams)
        texts = 0

        def transform(event: bytes) -> list[bytes]:
            nonlocal texts
            if not _TEXT_EVENT.search(event):
                return [event]
            texts += 1
            last = self._last_text.get(path)
            self._last_text[path] = (me, event)
            if self.active > MIX_ABOVE and texts % 2 == 0 and last is not None and last[0] != me:
                return [last[1]]
            return [event]

        return transform

    def _second(self, request: bytes) -> bool:
        """Whether this is an even-numbered stream of its (path, case, delivery)."""
        found = re.search(rb"sw-([a-z0-9-]+\.[a-z]+)\.", request)
        path = request.split(b" ")[1].split(b"sw-")[0] if b" " in request else b""
        key = path + (found.group(1) if found else b"")
        self._seen[key] = self._seen.get(key, 0) + 1
        return self._seen[key] % 2 == 0

    async def _late(
        self, up: asyncio.StreamReader, writer: asyncio.StreamWriter, delay: float
    ) -> None:
        await asyncio.sleep(delay)  # the upstream's bytes wait in the socket meanwhile
        await self._copy(up, writer)

    async def _cut(self, up: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        sent = 0
        while sent < CUT_AFTER and (data := await up.read(CUT_AFTER - sent)):
            writer.write(data)
            sent += len(data)
        await writer.drain()
        writer.transport.abort()

    async def _copy(self, up: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        while data := await up.read(65536):
            writer.write(data)
            await writer.drain()

    async def _without_ids(self, up: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        head = await up.readuntil(b"\r\n\r\n")
        lines = [
            line
            for line in head.split(b"\r\n")
            if line.split(b":")[0].strip().lower() not in _ID_HEADERS
        ]
        writer.write(b"\r\n".join(lines))
        await self._copy(up, writer)

    async def _buffer_all(
        self, up: asyncio.StreamReader, writer: asyncio.StreamWriter, rate: float | None = None
    ) -> None:
        # Never waits for the client: asyncio keeps whatever it cannot send yet.
        # ``rate``: bytes a second read from the upstream, at most.
        started, taken = asyncio.get_running_loop().time(), 0
        while data := await up.read(65536):
            writer.write(data)
            taken += len(data)
            if rate is not None:
                ahead = started + taken / rate - asyncio.get_running_loop().time()
                if ahead > 0:
                    await asyncio.sleep(ahead)
        await writer.drain()

    async def _idle(self, up: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        head = await up.readuntil(b"\r\n\r\n")
        writer.write(head)
        while True:
            try:
                data = await asyncio.wait_for(
                    up.read(65536), SOON if self.behaviour == "silence_reset" else IDLE
                )
            except asyncio.TimeoutError:
                if self.behaviour in ("idle_reset", "silence_reset"):
                    writer.transport.abort()
                    return
                writer.write(b"0\r\n\r\n")  # a clean end, mid-answer
                await writer.drain()
                return
            if not data:
                return
            writer.write(data)
            await writer.drain()

    async def _hold(self, up: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        held = bytearray()
        while data := await up.read(65536):
            held += data
        with contextlib.suppress(OSError, RuntimeError):
            writer.write(bytes(held))
            await writer.drain()

    async def _gunzip(
        self, up: asyncio.StreamReader, writer: asyncio.StreamWriter, *, hold: bool
    ) -> None:
        """The upstream's answer decompressed (it asked for gzip): held whole
        and sent with a ``Content-Length``, or each piece sent on (chunked)
        once it decodes."""
        head = await up.readuntil(b"\r\n\r\n")
        gzipped = re.search(rb"(?im)^content-encoding:\s*gzip\s*$", head) is not None
        decoder = zlib.decompressobj(31) if gzipped else None
        lines = [
            line
            for line in head[:-4].split(b"\r\n")
            if line.split(b":")[0].strip().lower() not in _FRAMING
        ]
        out = bytearray()
        if not hold:
            writer.write(b"\r\n".join([*lines, b"transfer-encoding: chunked"]) + b"\r\n\r\n")
            await writer.drain()
        async for piece in _body(up, head):
            data = decoder.decompress(piece) if decoder is not None else piece
            if hold:
                out += data  # decoded, and held until the answer ends
            elif data:
                writer.write(b"%x\r\n%s\r\n" % (len(data), data))
                await writer.drain()
        rest = decoder.flush() if decoder is not None else b""
        if hold:
            out += rest
            lines.append(b"content-length: %d" % len(out))
            writer.write(b"\r\n".join(lines) + b"\r\n\r\n" + bytes(out))
        else:
            writer.write((b"%x\r\n%s\r\n" % (len(rest), rest) if rest else b"") + b"0\r\n\r\n")
        await writer.drain()

    async def _batch(self, up: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        held = bytearray()
        done = asyncio.Event()

        async def fill() -> None:
            while data := await up.read(65536):
                held.extend(data)
            done.set()

        filling = asyncio.ensure_future(fill())
        try:
            while not done.is_set():
                with contextlib.suppress(asyncio.TimeoutError):
                    await asyncio.wait_for(done.wait(), BATCH)
                if held:
                    writer.write(bytes(held))
                    held.clear()
                    await writer.drain()
        finally:
            filling.cancel()

    async def _sse(
        self,
        up: asyncio.StreamReader,
        writer: asyncio.StreamWriter,
        transform: Callable[[bytes], list[bytes]],
    ) -> None:
        head = await up.readuntil(b"\r\n\r\n")
        writer.write(head)
        await writer.drain()
        if b"transfer-encoding: chunked" not in head.lower():
            await self._copy(up, writer)
            return
        pending = b""
        while True:
            size = int((await up.readuntil(b"\r\n")).split(b";")[0], 16)
            if size == 0:
                break
            pending += await up.readexactly(size)
            await up.readexactly(2)
            *events, pending = re.split(rb"(?<=\n\n)", pending)
            for event in events:
                if event.startswith(b":") and self.behaviour == "keepalive_kills":
                    writer.write(b"0\r\n\r\n")  # ends the body, the answer unsent
                    await writer.drain()
                    return
                for out in transform(event):
                    slow = writer.transport.get_write_buffer_size() > DROP_OVER
                    if self.behaviour == "drop_slow" and slow and b'"content":"' in out:
                        continue  # the slow client's text event, gone
                    writer.write(b"%x\r\n%s\r\n" % (len(out), out))
            if self.behaviour != "drop_slow":
                await writer.drain()
        for out in transform(pending) if pending else ():
            writer.write(b"%x\r\n%s\r\n" % (len(out), out))
        writer.write(b"0\r\n\r\n")
        await writer.drain()


def _hold_arguments() -> Callable[[bytes], list[bytes]]:
    held: list[bytes] = []

    def transform(event: bytes) -> list[bytes]:
        if b'"tool_calls":[' in event and b'"finish_reason":null' in event:
            held.append(event)
            return []
        out = [*held, event]
        held.clear()
        return out

    return transform


def _hold_text() -> Callable[[bytes], list[bytes]]:
    held: list[dict[str, Any]] = []

    def change(data: Any) -> list[Any]:
        choices = data.get("choices") if isinstance(data, dict) else None
        choice = choices[0] if isinstance(choices, list) and choices else {}
        text = (choice.get("delta") or {}).get("content")
        if isinstance(text, str) and text and not choice.get("finish_reason"):
            held.append(data)
            return []
        if not held:
            return [data]
        whole = "".join(d["choices"][0]["delta"]["content"] for d in held)
        first = held[0]
        merged = {**first, "choices": [{**first["choices"][0], "delta": {"content": whole}}]}
        held.clear()
        return [merged, data]

    return _data_lines(change)


def _completed_incomplete() -> Callable[[bytes], list[bytes]]:
    def transform(event: bytes) -> list[bytes]:
        if b"response.incomplete" in event:
            event = event.replace(b"response.incomplete", b"response.completed")
        return [event]

    return transform


_ID_HEADERS = (b"x-request-id", b"request-id", b"x-amzn-requestid")
_CACHED = ("cached_tokens", "cache_read_input_tokens", "cachedContentTokenCount")


def _without_cached(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _without_cached(v) for k, v in value.items() if k not in _CACHED}
    if isinstance(value, list):
        return [_without_cached(v) for v in value]
    return value


def _drop_cached() -> Callable[[bytes], list[bytes]]:
    def transform(event: bytes) -> list[bytes]:
        lines = []
        for line in event.split(b"\n"):
            if line.startswith(b"data: ") and any(k.encode() in line for k in _CACHED):
                data = _without_cached(json.loads(line[6:]))
                line = b"data: " + json.dumps(data, separators=(",", ":")).encode()
            lines.append(line)
        return [b"\n".join(lines)]

    return transform


def _repeat_heads() -> Callable[[bytes], list[bytes]]:
    heads: dict[int, dict[str, Any]] = {}

    def repeat(chunk: Any) -> Any:
        for choice in chunk.get("choices") or []:
            delta = choice.get("delta")
            if not isinstance(delta, dict):
                continue
            delta["role"] = "assistant"
            for call in delta.get("tool_calls") or []:
                head = heads.setdefault(call.get("index", 0), {})
                function = call.setdefault("function", {})
                for key, where in (("id", call), ("type", call), ("name", function)):
                    if key in where:
                        head[key] = where[key]
                    elif key in head:
                        where[key] = head[key]
        return chunk

    def transform(event: bytes) -> list[bytes]:
        lines = []
        for line in event.split(b"\n"):
            if line.startswith(b"data: {") and b'"choices"' in line:
                data = repeat(json.loads(line[6:]))
                line = b"data: " + json.dumps(data, separators=(",", ":")).encode()
            lines.append(line)
        return [b"\n".join(lines)]

    return transform


def _data_lines(change: Callable[[Any], list[Any]]) -> Callable[[bytes], list[bytes]]:
    """A transform that maps each SSE event's JSON data to zero or more events
    (an event's other lines kept on each)."""

    def transform(event: bytes) -> list[bytes]:
        lines = event.split(b"\n")
        at = next((i for i, line in enumerate(lines) if line.startswith(b"data: {")), None)
        if at is None:
            return [event]
        out = []
        for data in change(json.loads(lines[at][6:])):
            line = b"data: " + json.dumps(data, separators=(",", ":")).encode()
            out.append(b"\n".join([*lines[:at], line, *lines[at + 1 :]]))
        return out

    return transform


def _halves(text: str) -> tuple[str, str]:
    return text[: len(text) // 2], text[len(text) // 2 :]


def _split_text() -> Callable[[bytes], list[bytes]]:
    def change(data: Any) -> list[Any]:
        delta = data.get("delta") if data.get("type") == "content_block_delta" else None
        if isinstance(delta, dict) and len(delta.get("text") or "") > 1:
            return [{**data, "delta": {**delta, "text": half}} for half in _halves(delta["text"])]
        choices = data.get("choices") or []
        if len(choices) == 1 and len(choices[0].get("delta", {}).get("content") or "") > 1:
            choice = choices[0]
            return [
                {**data, "choices": [{**choice, "delta": {**choice["delta"], "content": half}}]}
                for half in _halves(choice["delta"]["content"])
            ]
        return [data]

    return _data_lines(change)


def _retype_error() -> Callable[[bytes], list[bytes]]:
    def change(data: Any) -> list[Any]:
        error = data.get("error")
        if isinstance(error, dict) and "type" in error:
            return [{**data, "error": {**error, "type": "gateway_error"}}]
        return [data]

    return _data_lines(change)


def _drop_usage() -> Callable[[bytes], list[bytes]]:
    def change(data: Any) -> list[Any]:
        return [] if data.get("choices") == [] and "usage" in data else [data]

    return _data_lines(change)


def _drop_reasoning() -> Callable[[bytes], list[bytes]]:
    def change(data: Any) -> list[Any]:
        choices = data.get("choices") if isinstance(data, dict) else None
        delta = (choices[0].get("delta") or {}) if isinstance(choices, list) and choices else {}
        return [] if delta.get("reasoning_content") else [data]

    return _data_lines(change)


def _late_block_stop() -> Callable[[bytes], list[bytes]]:
    held: list[bytes] = []

    def transform(event: bytes) -> list[bytes]:
        if b"event: content_block_stop" in event:
            out, held[:] = list(held), [event]
            return out
        if b"event: message_delta" in event:
            out, held[:] = [event, *held], []
            return out
        out, held[:] = [*held, event], []
        return out

    return transform


_TRANSFORMS = {
    "split_text": _split_text,
    "retype_error": _retype_error,
    "drop_usage": _drop_usage,
    "drop_reasoning": _drop_reasoning,
    "late_block_stop": _late_block_stop,
    "repeat_heads": _repeat_heads,
    "drop_slow": lambda: lambda event: [event],
    "drop_cached": _drop_cached,
    "hold_arguments": _hold_arguments,
    "hold_text": _hold_text,
    "completed_incomplete": _completed_incomplete,
    "keepalive_kills": lambda: lambda event: [event],
}


def _openai_tools(head: bytes, body: bytes) -> tuple[bytes, bytes]:
    """An Anthropic request's tools in OpenAI Chat Completions' shape, as
    lm-proxy 3.3.2 was seen to send them (the head's length fixed)."""
    try:
        request = json.loads(body)
    except ValueError:
        return head, body
    tools = request.get("tools") if isinstance(request, dict) else None
    if b"/messages" not in head.split(b"\r\n", 1)[0] or not isinstance(tools, list):
        return head, body
    request["tools"] = [
        {
            "type": "function",
            "function": {
                "name": t.get("name"),
                "description": t.get("description"),
                "parameters": t.get("input_schema"),
            },
        }
        for t in tools
        if isinstance(t, dict)
    ]
    body = json.dumps(request).encode()
    return _with_length(head, body), body


def _forced_stream(head: bytes, body: bytes) -> tuple[bytes, bytes]:
    """A request for the whole answer (``"stream": false``) made a streaming one."""
    try:
        request = json.loads(body)
    except ValueError:
        return head, body
    if not isinstance(request, dict) or request.get("stream") is not False:
        return head, body
    request["stream"] = True
    body = json.dumps(request).encode()
    return _with_length(head, body), body


def _whole_asked(head: bytes, body: bytes) -> bool:
    """The request asks for the whole answer at once (``stream`` not true, or
    Gemini's ``:generateContent``, Bedrock's ``/converse`` and ``/invoke``)."""
    target = head.split(b" ", 2)[1] if head.count(b" ") >= 2 else b""
    path = target.split(b"?", 1)[0]
    if path.endswith((b":generateContent", b"/converse", b"/invoke")):
        return True
    if b":streamGenerateContent" in path or path.endswith((b"-stream", b"-response-stream")):
        return False
    try:
        request = json.loads(body)
    except ValueError:
        return False
    return isinstance(request, dict) and request.get("stream") is not True


def _blocking_call(upstream: tuple[str, int], request: bytes) -> bytes:
    """The upstream's whole answer to ``request``, read with a blocking socket
    (the request says ``connection: close``: the answer ends with the connection)."""
    chunks = []
    with socket.create_connection(upstream, timeout=30.0) as sock:
        sock.sendall(request)
        while data := sock.recv(65536):
            chunks.append(data)
    return b"".join(chunks)


def _fixed_model(head: bytes, body: bytes) -> tuple[bytes, bytes]:
    """The request with ``FIXED_MODEL`` for whatever model it named: in the
    body's ``model``, or in the path (Gemini's ``/models/<m>:``, Bedrock's
    ``/model/<m>/``)."""
    line, _, rest = head.partition(b"\r\n")
    fixed = FIXED_MODEL.encode()
    line = re.sub(rb"(/models/)[^/:?\s]+(:)", rb"\g<1>" + fixed + rb"\g<2>", line)
    line = re.sub(rb"(/model/)[^/?\s]+(/)", rb"\g<1>" + fixed + rb"\g<2>", line)
    head = line + b"\r\n" + rest
    with contextlib.suppress(ValueError):
        request = json.loads(body)
        if isinstance(request, dict) and "model" in request:
            request["model"] = FIXED_MODEL
            body = json.dumps(request).encode()
    return _with_length(head, body), body


def _with_length(head: bytes, body: bytes) -> bytes:
    """The request head with its content-length fixed for a changed body."""
    return re.sub(rb"(?i)(\r\ncontent-length:\s*)\d+", b"\\g<1>%d" % len(body), head)


def _client_key(head: bytes) -> bytes:
    match = re.search(rb"(?i)\r\n(?:authorization|x-api-key):\s*([^\r\n]*)", head)
    return match.group(1) if match else b""


class _EchoKey:
    """A writer that adds ``x-debug-auth: <the client's key>`` to the response head."""

    def __init__(self, writer: asyncio.StreamWriter, key: bytes) -> None:
        self._writer = writer
        self._key = key
        self._head = True

    def write(self, data: bytes) -> None:
        if self._head and b"\r\n" in data:
            line, _, rest = data.partition(b"\r\n")
            data = line + b"\r\nx-debug-auth: " + self._key + b"\r\n" + rest
            self._head = False
        self._writer.write(data)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._writer, name)


#: The response headers ``gunzip`` and ``gunzip_hold`` set anew for the body they send.
_FRAMING = (b"content-encoding", b"content-length", b"transfer-encoding", b"connection")


def _asking_gzip(head: bytes) -> bytes:
    """A request head that asks for gzip (``Accept-Encoding: gzip``), whatever the client asked."""
    head = re.sub(rb"(?im)^accept-encoding:[^\r\n]*\r\n", b"", head)
    line, _, rest = head.partition(b"\r\n")
    return line + b"\r\naccept-encoding: gzip\r\n" + rest


async def _body(up: asyncio.StreamReader, head: bytes) -> AsyncIterator[bytes]:
    """A response's body pieces as they arrive (chunked, ``Content-Length`` or to the close)."""
    if re.search(rb"(?im)^transfer-encoding:\s*chunked", head):
        while size := int((await up.readuntil(b"\r\n")).split(b";")[0], 16):
            yield await up.readexactly(size)
            await up.readexactly(2)
        await up.readuntil(b"\r\n")  # the last chunk's end (no trailers from the mock)
        return
    length = re.search(rb"(?im)^content-length:\s*(\d+)", head)
    if length is not None:
        yield await up.readexactly(int(length.group(1)))
        return
    while data := await up.read(65536):
        yield data


async def _read_request(reader: asyncio.StreamReader) -> tuple[bytes, bytes]:
    head = await reader.readuntil(b"\r\n\r\n")
    match = re.search(rb"(?i)\r\ncontent-length:\s*(\d+)", head)
    body = await reader.readexactly(int(match.group(1))) if match else b""
    return head, body


def _asks_reasoning(body: bytes) -> bool:
    try:
        request = json.loads(body)
    except ValueError:
        return False
    if not isinstance(request, dict):
        return False
    config = request.get("generationConfig")
    inner = config if isinstance(config, dict) else {}
    return any(key in request or key in inner for key in _REASONING)


async def _serve_forever(upstream_url: str, behaviour: str) -> None:
    async with Hop(upstream_url, behaviour) as hop:
        print(f"listening on {hop.url}", flush=True)
        await asyncio.Event().wait()


if __name__ == "__main__":
    # python tests/kit_hops.py UPSTREAM_URL BEHAVIOUR: one hop in a process of
    # its own (the load tests' gateway), until it is stopped.
    import sys

    asyncio.run(_serve_forever(sys.argv[1], sys.argv[2]))
