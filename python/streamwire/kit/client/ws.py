"""The judge's WebSocket client: a session with a gateway's WebSocket route, timed as it reads.

``open_session`` makes the upgrade (the ``websockets`` library's asyncio
client: nothing here frames a message) and ``WsSession.ask`` sends one
request message and reads the response it starts, message by message, into
an ``Observation`` as ``raw.observe`` fills one for a streamed HTTP answer:
each message's arrival time and size (``pieces``), the content each
carried (``content``, the keys the mock logs its writes by), the events
streamwire's adapter read from them, the result. A follow-up (a tool's
result) is a second ``ask`` on the same socket, as a client sends it.

What the protocols need of the session (OpenAI's Responses API in WebSocket
mode, checked 2026-12-07): the request is the HTTP body with ``"type":
"response.create"``; a response ends with ``response.completed``,
``response.incomplete`` or ``response.failed``; an ``error`` event before
any ``response.created`` refuses the request. The client's hang-up is
closing the socket (the Responses API has no cancel message).
"""

from __future__ import annotations

import asyncio
import json
import ssl
import time
from dataclasses import dataclass
from typing import Any

from ..vocab.cases import Case
from ..vocab.httpio import Trust
from ..vocab.kinds.base import Conduct
from ..vocab.kinds.cancel import Cancel
from ..vocab.kinds.follow_up import FollowUp
from ..vocab.kinds.silence import Silence
from ..vocab.names import WS_WIRE, adapter
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
    "MISSING",
    "WS_CLIENTS",
    "WS_DELIVERIES",
    "WsSession",
    "open_session",
    "require",
    "ws_carries",
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
#: The events that end a Responses response.
_ENDS = frozenset({"response.completed", "response.incomplete", "response.failed"})
#: The largest message the client takes (a Responses done event repeats the
#: whole answer's text).
MAX_MESSAGE = 256 * 1024 * 1024


def require() -> None:
    """Raises ValueError (``MISSING``) when ``websockets`` cannot be imported."""
    try:
        import websockets.asyncio.client  # noqa: F401
    except ImportError:
        raise ValueError(MISSING) from None


def ws_carries(case: Case) -> bool:
    """Whether a session carries ``case``: one with no conduct, a hang-up, a
    tool's result sent back or a silence (not a retry's failed attempts, a
    slow reader's window, or a request beside it: the HTTP cells judge those)."""
    return case.kind.plain or isinstance(case.kind, Cancel | FollowUp | Silence)


def ws_request(
    client: str,
    case: Case,
    model: str,
    base_url: str,
    key: str | None = None,
    canary: str | None = None,
    *,
    cell: str | None = None,
) -> tuple[str, list[tuple[str, str]], dict[str, Any]]:
    """(``ws://`` URL, upgrade headers, first message) of ``case``'s request
    in the WebSocket protocol ``client``: the HTTP protocol's body as its
    message (``client_request``), its credentials as the upgrade's headers."""
    from .raw import client_request

    url, headers, body = client_request(
        WS_CLIENTS[client], case, model, base_url, key, canary, cell=cell
    )
    scheme, _, rest = url.partition("://")
    ws_url = ("wss" if scheme == "https" else "ws") + "://" + rest
    kept = [(k, v) for k, v in headers if k.lower() in ("authorization", "x-api-key")]
    message = {"type": "response.create", **{k: v for k, v in body.items() if k != "stream"}}
    return ws_url, kept, message


@dataclass
class WsSession:
    """An open WebSocket to the gateway (``open_session``), and its handshake."""

    client: str
    url: str
    connection: Any
    status: int
    headers: list[tuple[str, str]]
    connected_at: float

    async def ask(
        self,
        message: dict[str, Any],
        *,
        conduct: Conduct | None = None,
        read_timeout: float = 20.0,
        total_timeout: float = 120.0,
        secrets: tuple[str, ...] = (),
    ) -> Observation:
        """Sends ``message`` and reads the response it starts (see the module
        docstring), within ``total_timeout`` and ``raw.MAX_READ_BYTES``;
        never raises for what the gateway does."""
        from websockets.exceptions import ConnectionClosed

        obs = _observation(self, message, secrets)
        stream: Any = adapter(self.client)  # a WebSocketSession: messages, not bytes
        wire = _Sample(lambda d: d)
        unified = _Sample(_event_dict)
        head = bytearray()
        texts, created = 0, False
        deadline = obs.sent_at + total_timeout
        conduct = conduct or Conduct()
        hang_up_after = conduct.hang_up_after
        hang_up_at = obs.sent_at + conduct.hang_up_timer if hang_up_after is not None else None
        try:
            await self.connection.send(json.dumps(message, ensure_ascii=False))
            while True:
                wait = read_timeout
                if hang_up_at is not None:
                    wait = max(0.0, min(wait, hang_up_at - time.time()))
                try:
                    data = await asyncio.wait_for(self.connection.recv(), wait)
                except asyncio.TimeoutError:
                    if hang_up_at is not None and time.time() >= hang_up_at:
                        await self._hang_up(obs, "timer")
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
                created = created or kind == "response.created"
                if kind in _ENDS or (kind == "error" and not created):
                    break
                if hang_up_after is not None and texts >= hang_up_after:
                    await self._hang_up(obs, "deltas")
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
        return obs

    async def _hang_up(self, obs: Observation, reason: str) -> None:
        obs.cancelled_at, obs.cancel_reason = time.time(), reason
        await self.close()

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
    session: WsSession, message: dict[str, Any], secrets: tuple[str, ...]
) -> Observation:
    obs = Observation(session.client, session.url, message, time.time(), secrets=secrets)
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
