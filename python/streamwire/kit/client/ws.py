"""The judge's WebSocket client: a session with a gateway's WebSocket route, timed as it reads.

``open_session`` makes the upgrade (the ``websockets`` library's asyncio
client: nothing here frames a message) and ``WsSession.ask`` sends one
request's messages and reads the response they start, message by message,
into an ``Observation`` as ``raw.observe`` fills one for a streamed HTTP
answer: each message's arrival time and size (``pieces``), the content each
carried (``content``, the keys the mock logs its writes by), the events
streamwire's adapter read from them, the result. A follow-up (a tool's
result) is a second ``ask`` on the same socket, as a client sends it.

What the protocols need of the session (checked 2026-12-08):

* OpenAI's Responses API in WebSocket mode: the request is the HTTP body
  with ``"type": "response.create"``; a response ends with
  ``response.completed``, ``response.incomplete`` or ``response.failed``;
  the tool's result is the next ``response.create``, its ``input`` the
  history. The client's hang-up is closing the socket (the API has no
  cancel message).
* OpenAI Realtime (GA): the URL names the model (``/v1/realtime?model=``);
  the request is ``session.update`` (instructions, tools, output
  modalities), a ``conversation.item.create`` of the user's message and
  ``response.create`` (the output limit in its ``response``); a response
  ends with ``response.done``; the tool's result is a
  ``conversation.item.create`` of a ``function_call_output``, then
  ``response.create`` (the session keeps the conversation). The client
  hangs up by closing the socket, or by ``response.cancel`` (``HANG_UPS``).

* Gemini Live: the URL is Google's ``BidiGenerateContent`` path
  (``/ws/google.ai.generativelanguage.v1beta.GenerativeService.BidiGenerateContent``)
  with the key as the ``x-goog-api-key`` header, as google-genai sends it;
  the request is ``setup`` (``models/<model>``, the Gemini body's
  ``generationConfig`` with ``responseModalities: ["TEXT"]``, its tools)
  then ``clientContent`` (the body's ``contents``, ``turnComplete: true``);
  a turn ends with ``serverContent.turnComplete``, at a ``toolCall`` (the
  model waits for its result) or at ``serverContent.interrupted``; the tool's
  result is ``toolResponse`` (``functionResponses``) on the same socket.
  Live has no error message: a close with a code other than 1000 or 1005 is
  the turn's error (streamwire's adapter reads it so), not the socket
  failing. The client hangs up by closing the socket.

For the OpenAI ones, an ``error`` event before any ``response.created``
refuses the request.
"""

from __future__ import annotations

import asyncio
import json
import ssl
import time
from dataclasses import dataclass, field
from typing import Any, Literal
from urllib.parse import quote

from ...result import StreamResult
from ..vocab.cases import Case
from ..vocab.httpio import Trust
from ..vocab.kinds.base import Conduct, Kind
from ..vocab.kinds.cancel import Cancel
from ..vocab.kinds.follow_up import FollowUp
from ..vocab.kinds.silence import Silence
from ..vocab.names import WS_LOSSES, WS_WIRE, adapter
from .raw import (
    KEEP_BYTES,
    MAX_ECHOES,
    MAX_READ_BYTES,
    MAX_TIMES,
    Observation,
    _content_of,
    _event_dict,
    _Sample,
)

__all__ = [
    "HANG_UPS",
    "MISSING",
    "WS_CLIENTS",
    "WS_DELIVERIES",
    "HangUp",
    "WsSession",
    "hang_up_form",
    "open_session",
    "require",
    "ws_carries",
    "ws_follow_up",
    "ws_request",
]

#: The client protocols the judge speaks over a WebSocket, and the HTTP
#: protocol whose request body (and events) each carries.
WS_CLIENTS: dict[str, str] = WS_WIRE
#: What a run asking a WebSocket client without the library is told.
MISSING = "the WebSocket clients need the websockets library: pip install 'streamwire[kit-ws]'"
#: The deliveries a session's cells run in: a message is whole whatever the
#: delivery, so ``tiny`` (bytes cut anywhere) has no WebSocket form, and a
#: session has no ``unary`` request.
WS_DELIVERIES = ("whole", "paced")
#: The events that end a response, by client.
_ENDS: dict[str, frozenset[str]] = {
    "openai-responses-ws": frozenset(
        {"response.completed", "response.incomplete", "response.failed"}
    ),
    "openai-realtime": frozenset({"response.done"}),
    # Gemini Live's, by the field that ends a turn (``_live_kind``).
    "gemini-live": frozenset({"turnComplete", "toolCall", "interrupted"}),
}
#: The path of a Gemini Live session, after the API's root.
LIVE_PATH = "/ws/google.ai.generativelanguage.v1beta.GenerativeService.BidiGenerateContent"
#: The close codes that are a normal closure, not an error (RFC 6455).
_NORMAL_CLOSE = (1000, 1005)
#: How a client hangs up: ``close`` (the socket) or ``cancel`` (Realtime's
#: ``response.cancel``, the socket left open).
HangUp = Literal["close", "cancel"]
#: The (client, delivery) cells that hang up otherwise than by ``close``: a
#: Realtime ``cancel`` cell closes in ``whole``, cancels in ``paced``.
HANG_UPS: dict[tuple[str, str], HangUp] = {("openai-realtime", "paced"): "cancel"}
#: How long, after ``response.cancel``, the client reads on (unjudged) for
#: the response's ``response.done`` before it leaves the socket be.
CANCEL_DRAIN = 5.0
#: The largest message the client takes (a Responses done event repeats the
#: whole answer's text).
MAX_MESSAGE = 256 * 1024 * 1024


def require() -> None:
    """Raises ValueError (``MISSING``) when ``websockets`` cannot be imported."""
    try:
        import websockets.asyncio.client  # noqa: F401
    except ImportError:
        raise ValueError(MISSING) from None


def ws_carries(case: Case, client: str = "openai-responses-ws") -> bool:
    """Whether a session of ``client`` carries ``case``: one with no conduct,
    a hang-up, a tool's result sent back or a silence (not a retry's failed
    attempts, a slow reader's window, or a request beside it: the HTTP cells
    judge those), and nothing the protocol has no field for (Realtime: the
    model's reasoning; Gemini Live: the output limit's end)."""
    losses = WS_LOSSES.get(client, frozenset())
    if "reasoning" in losses and (case.reasoning or case.wants_reasoning):
        return False
    if "length" in losses and case.stop == "length":
        return False
    return case.kind.plain or isinstance(case.kind, Cancel | FollowUp | Silence)


def hang_up_form(client: str, delivery: str) -> HangUp:
    """How ``client``'s cell in ``delivery`` hangs up (``HANG_UPS``)."""
    return HANG_UPS.get((client, delivery), "close")


def ws_request(
    client: str,
    case: Case,
    model: str,
    base_url: str,
    key: str | None = None,
    canary: str | None = None,
    *,
    cell: str | None = None,
    delivery: str = "whole",
) -> tuple[str, list[tuple[str, str]], list[dict[str, Any]]]:
    """(``ws://`` URL, upgrade headers, messages) of ``case``'s request in
    the WebSocket protocol ``client``: the HTTP protocol's body
    (``client_request``) as its messages, its credentials as the upgrade's
    headers. A Realtime cell in ``paced`` asks for audio (its transcript is
    the text judged), in ``whole`` for text."""
    from .raw import client_request

    url, headers, body = client_request(
        WS_CLIENTS[client], case, model, base_url, key, canary, cell=cell
    )
    scheme, _, rest = url.partition("://")
    ws_url = ("wss" if scheme == "https" else "ws") + "://" + rest
    kept = [(k, v) for k, v in headers if k.lower() in ("authorization", "x-api-key")]
    plain = {k: v for k, v in body.items() if k != "stream"}
    if client == "gemini-live":
        root = ws_url.split("?", 1)[0].rsplit("/v1beta/models/", 1)[0]
        kept = [(k, v) for k, v in headers if k.lower() == "x-goog-api-key"]
        return root + LIVE_PATH, kept, _live_messages(model, plain)
    if client != "openai-realtime":
        return ws_url, kept, [{"type": "response.create", **plain}]
    root = ws_url.rsplit("/v1/responses", 1)[0]
    realtime_url = f"{root}/v1/realtime?model={quote(model, safe='')}"
    return realtime_url, kept, _realtime_messages(plain, audio=delivery == "paced")


def _realtime_messages(body: dict[str, Any], *, audio: bool) -> list[dict[str, Any]]:
    """A Responses body's request as Realtime client events: the session's
    settings, the user's message, and the response asked for."""
    session: dict[str, Any] = {
        "type": "realtime",
        "output_modalities": ["audio"] if audio else ["text"],
    }
    if body.get("tools"):
        session["tools"] = body["tools"]
        session["tool_choice"] = "auto"
    text = body.get("input")
    item = {
        "type": "message",
        "role": "user",
        "content": [{"type": "input_text", "text": text if isinstance(text, str) else ""}],
    }
    create: dict[str, Any] = {"type": "response.create"}
    if isinstance(body.get("max_output_tokens"), int):
        create["response"] = {"max_output_tokens": body["max_output_tokens"]}
    return [
        {"type": "session.update", "session": session},
        {"type": "conversation.item.create", "item": item},
        create,
    ]


def _live_messages(model: str, body: dict[str, Any]) -> list[dict[str, Any]]:
    """A Gemini body's request as Live client messages: the session's setup,
    then the user's turn."""
    config = body.get("generationConfig")
    setup: dict[str, Any] = {
        "model": f"models/{model}",
        "generationConfig": {
            **(config if isinstance(config, dict) else {}),
            "responseModalities": ["TEXT"],
        },
    }
    for key in ("tools", "systemInstruction", "toolConfig"):
        if key in body:
            setup[key] = body[key]
    content = {"turns": body.get("contents") or [], "turnComplete": True}
    return [{"setup": setup}, {"clientContent": content}]


def ws_follow_up(
    client: str, kind: Kind, messages: list[dict[str, Any]], result: StreamResult | None
) -> list[dict[str, Any]] | None:
    """The messages of the follow-up ``kind`` asks for once the first
    response (``result``) ended, or None: Responses, the next
    ``response.create``, continuing the first by its ``previous_response_id``
    with the new items alone (the tool's result), as WebSocket mode's clients
    do (with the whole history when the first response named no id);
    Realtime, the result's ``conversation.item.create`` (``sw.tool_result``),
    then ``response.create``; Live, the ``toolResponse``."""
    if client == "gemini-live":
        answer = kind.next_request(client, {}, result)
        return None if answer is None else [answer]
    if client == "openai-realtime":
        answer = kind.next_request(client, {}, result)
        return None if answer is None else [answer, {"type": "response.create"}]
    first = {k: v for k, v in messages[0].items() if k != "type"}
    second = kind.next_request(WS_CLIENTS[client], first, result)
    if second is None:
        return None
    previous = result.message_id if result is not None else None
    if isinstance(previous, str) and previous:
        new = [i for i in second["input"] if isinstance(i, dict) and "output" in i]
        second = {**second, "previous_response_id": previous, "input": new}
    return [{**second, "type": "response.create"}]


@dataclass
class WsSession:
    """An open WebSocket to the gateway (``open_session``), and its handshake."""

    client: str
    url: str
    connection: Any
    status: int
    headers: list[tuple[str, str]]
    connected_at: float

    #: The session's own events (``session.created``, ``session.updated``),
    #: the latest few: each ``ask``'s adapter reads them first.
    opening: list[str | bytes] = field(default_factory=list)

    async def ask(
        self,
        messages: dict[str, Any] | list[dict[str, Any]],
        *,
        conduct: Conduct | None = None,
        hang_up: HangUp = "close",
        read_timeout: float = 20.0,
        total_timeout: float = 120.0,
        secrets: tuple[str, ...] = (),
    ) -> Observation:
        """Sends ``messages`` and reads the response they start (see the
        module docstring), within ``total_timeout`` and ``raw.MAX_READ_BYTES``;
        ``hang_up``: how the conduct's hang-up is made (``HANG_UPS``). Never
        raises for what the gateway does."""
        from websockets.exceptions import ConnectionClosed

        sent = [messages] if isinstance(messages, dict) else list(messages)
        obs = _observation(self, sent, secrets)
        stream: Any = adapter(self.client)  # a WebSocketSession: messages, not bytes
        for known in self.opening:
            stream.feed_message(known)
        wire = _Sample(lambda d: d)
        unified = _Sample(_event_dict)
        head = bytearray()
        texts, created = 0, False
        ends = _ENDS.get(self.client, _ENDS["openai-responses-ws"])
        live = self.client == "gemini-live"
        deadline = obs.sent_at + total_timeout
        conduct = conduct or Conduct()
        hang_up_after = conduct.hang_up_after
        hang_up_at = obs.sent_at + conduct.hang_up_timer if hang_up_after is not None else None
        try:
            for message in sent:
                await self.connection.send(json.dumps(message, ensure_ascii=False))
            while True:
                wait = read_timeout
                if hang_up_at is not None:
                    wait = max(0.0, min(wait, hang_up_at - time.time()))
                try:
                    data = await asyncio.wait_for(self.connection.recv(), wait)
                except asyncio.TimeoutError:
                    if hang_up_at is not None and time.time() >= hang_up_at:
                        await self._hang_up(obs, "timer", hang_up)
                        break
                    obs.failure = f"no message within {read_timeout} s"
                    obs.timed_out, obs.kit_limit = True, "read_timeout"
                    break
                at = time.time()
                raw = data.encode() if isinstance(data, str) else bytes(data)
                obs.raw_bytes += len(raw)
                obs.piece_count += 1
                if len(obs.pieces) < MAX_TIMES:
                    obs.pieces.append((at, len(raw)))
                if len(head) < KEEP_BYTES:
                    head += raw[: KEEP_BYTES - len(head)] + b"\n"
                if (
                    secrets
                    and len(obs.echoed) < MAX_ECHOES
                    and any(s and s.encode() in raw for s in secrets)
                ):
                    obs.echoed.append(f"message {obs.piece_count}")
                parsed = _parsed(raw)
                wire.add(parsed if parsed is not None else {"not_json": raw[:200].decode()})
                events = stream.feed_message(data)
                for event in events:
                    unified.add(event)
                content = _content_of(events)
                if content:
                    texts += sum(1 for e in events if type(e).__name__ == "TextDelta")
                    obs.first_text_at = obs.first_text_at or at
                    obs.last_text_at = at
                    for key, chars in content.items():
                        if len(obs.content) < MAX_TIMES:
                            obs.content.append((at, key, chars))
                kind = parsed.get("type") if parsed is not None else None
                if not isinstance(kind, str):
                    kind = None  # a list or an object is no event type (unhashable)
                if live:
                    kind = _live_kind(parsed)
                opens = kind in ("session.created", "session.updated", "setupComplete")
                if opens and len(raw) <= KEEP_BYTES:
                    self.opening = [*self.opening[-3:], data]
                created = created or kind == "response.created"
                if kind in ends or (kind == "error" and not created and not live):
                    break
                if hang_up_after is not None and texts >= hang_up_after:
                    await self._hang_up(obs, "deltas", hang_up)
                    break
                if at > deadline:
                    obs.failure = f"the response was still running after {total_timeout} s"
                    obs.timed_out, obs.kit_limit = True, "total_timeout"
                    break
                if obs.raw_bytes > MAX_READ_BYTES:
                    obs.failure = (
                        f"the answer passed {MAX_READ_BYTES} bytes; the judge stopped reading"
                    )
                    obs.kit_limit = "max_read_bytes"
                    break
        except ConnectionClosed as exc:
            if obs.cancelled_at is None:
                # Live's error is a close with an error's code: the turn's end.
                if not (live and _code(exc) not in (None, *_NORMAL_CLOSE)):
                    obs.failure = f"the gateway closed the socket ({_closed(exc)})"
                for event in stream.connection_closed(_code(exc), _reason(exc)):
                    unified.add(event)
        except (OSError, ValueError) as exc:
            obs.failure = f"the socket failed: {exc!r}"
        obs.ended_at = time.time()
        ending = stream.cancel() if obs.cancelled_at is not None else stream.close()
        for event in ending:
            unified.add(event)
        obs.raw_head = bytes(head)
        obs.wire_events, obs.wire_event_count = wire.items(), wire.count
        obs.events, obs.event_count = unified.items(), unified.count
        results = getattr(stream, "results", None)
        obs.result = results[0] if results else stream.result
        if obs.cancelled_at is not None and hang_up == "cancel":
            await self._drain(ends, read_timeout)
        return obs

    async def _hang_up(self, obs: Observation, reason: str, form: HangUp) -> None:
        obs.cancelled_at, obs.cancel_reason = time.time(), reason
        if form == "cancel":
            try:
                await self.connection.send(json.dumps({"type": "response.cancel"}))
            except Exception:  # a socket already gone: the hang-up is made
                pass
            return
        await self.close()

    async def _drain(self, ends: frozenset[str], read_timeout: float) -> None:
        """Reads on after ``response.cancel``, unjudged, to the response's end
        (or ``CANCEL_DRAIN``): the gateway's messages are taken off the
        socket, as a client that cancelled takes them."""
        deadline = time.time() + CANCEL_DRAIN
        try:
            while time.time() < deadline:
                wait = max(0.0, min(read_timeout, deadline - time.time()))
                data = await asyncio.wait_for(self.connection.recv(), wait)
                event = _parsed(data.encode() if isinstance(data, str) else bytes(data))
                kind = event.get("type") if event is not None else None
                if isinstance(kind, str) and kind in ends:
                    return
        except Exception:  # a timeout, or the socket closed: either ends the drain
            return

    async def close(self) -> None:
        """Closes the socket (a normal closure); never raises."""
        try:
            await asyncio.wait_for(self.connection.close(), 5.0)
        except Exception:  # a socket already gone has nothing to close
            pass


async def open_session(
    client: str,
    url: str,
    headers: list[tuple[str, str]],
    *,
    connect_timeout: float = 10.0,
    tls: ssl.SSLContext | Trust | None = None,
) -> WsSession | Observation:
    """The open session, or an ``Observation`` of the refused or failed
    upgrade (its HTTP status, or the failure), never raising for it."""
    from websockets.asyncio.client import connect
    from websockets.exceptions import InvalidHandshake, InvalidStatus

    context = tls.context() if isinstance(tls, Trust) else tls
    started = time.time()
    try:
        connection = await connect(
            url,
            additional_headers=headers,
            open_timeout=connect_timeout,
            ping_interval=None,
            max_size=MAX_MESSAGE,
            ssl=context if url.startswith("wss:") else None,
        )
    except InvalidStatus as exc:
        obs = Observation(client, url, {}, started)
        obs.status = exc.response.status_code
        obs.headers = [(k.lower(), v) for k, v in exc.response.headers.raw_items()]
        obs.raw_head = bytes(exc.response.body or b"")[:KEEP_BYTES]
        obs.websocket = True
        obs.ended_at = time.time()
        return obs
    except (InvalidHandshake, OSError, asyncio.TimeoutError) as exc:
        obs = Observation(client, url, {}, started)
        obs.failure = f"no WebSocket: {exc!r}"
        obs.timed_out = isinstance(exc, asyncio.TimeoutError)
        obs.websocket = True
        obs.ended_at = time.time()
        return obs
    response = connection.response
    assert response is not None  # connect() returns once the handshake is done
    return WsSession(
        client,
        url,
        connection,
        response.status_code,
        [(k.lower(), v) for k, v in response.headers.raw_items()],
        time.time(),
    )


def _observation(
    session: WsSession, messages: list[dict[str, Any]], secrets: tuple[str, ...]
) -> Observation:
    # The request as the evidence shows it: the one message, or all of them.
    request = messages[0] if len(messages) == 1 else {"messages": messages}
    obs = Observation(session.client, session.url, request, time.time(), secrets=secrets)
    obs.status, obs.headers = session.status, session.headers
    obs.connected_at = obs.head_at = session.connected_at
    obs.websocket = True
    return obs


def _parsed(raw: bytes) -> dict[str, Any] | None:
    try:
        value = json.loads(raw)
    except (UnicodeDecodeError, ValueError):
        return None
    return value if isinstance(value, dict) else None


def _live_kind(message: dict[str, Any] | None) -> str | None:
    """What a Live server message is, by the field that says it: a turn's
    end (``turnComplete``, ``toolCall``, ``interrupted``), ``setupComplete``,
    or None."""
    if message is None:
        return None
    if "toolCall" in message:
        return "toolCall"
    content = message.get("serverContent")
    if isinstance(content, dict):
        for key in ("turnComplete", "interrupted"):
            if content.get(key) is True:
                return key
    return "setupComplete" if "setupComplete" in message else None


def _code(exc: Any) -> int | None:
    frame = getattr(exc, "rcvd", None)
    code = getattr(frame, "code", None)
    return code if isinstance(code, int) else None


def _reason(exc: Any) -> str:
    frame = getattr(exc, "rcvd", None)
    reason = getattr(frame, "reason", "")
    return reason if isinstance(reason, str) else ""


def _closed(exc: Any) -> str:
    code = _code(exc)
    return f"code {code} {_reason(exc)!r}".strip() if code is not None else "without a close frame"
