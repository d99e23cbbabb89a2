"""The plumbing shared by the WebSocket protocols: messages in, a session of responses out.

A WebSocket protocol has no byte framing of its own: the socket delivers
whole messages (RFC 6455, checked 2026-11-29), and one connection carries a
*session* of many responses (OpenAI Realtime, the Responses API's WebSocket
mode) or model turns (Gemini Live). ``WebSocketSession`` is the base of
those adapters; docs/design.md "WebSocket sessions" has the rules it keeps:

* ``feed_message(msg)`` takes one message: a ``str``, its UTF-8 ``bytes``,
  or an already-parsed ``dict`` (never modified); ``feed()`` raises
  ``UsageError``: there are no bytes to frame.
* A message that is not UTF-8, not JSON, not an object, or larger than
  ``max_message_bytes`` is a ``framing`` error for the response in flight,
  or for the session when none is; unlike a broken SSE body, the messages
  after it are still whole, so they are still read.
* Each response (turn) has its own ``Accumulator``, hence its own
  ``StreamResult``; what belongs to no response is the session's own.
* ``close()``, ``cancel()`` and ``connection_closed(code, reason)`` end the
  responses in flight; ``max_results`` caps the results kept.
"""

from __future__ import annotations

from abc import abstractmethod
from collections.abc import Iterator, Mapping, Sequence
from typing import Any, ClassVar, Generic, Literal, TypeVar

from .._core import DEFAULT_MAX_EVENT_BYTES, MessageMatcher
from .._json import failure, loads
from ..accumulate import Accumulator
from ..errors import UsageError
from ..events import (
    Event,
    ReasoningDelta,
    RefusalDelta,
    TextDelta,
    ToolCallArgumentsDelta,
    ToolCallStarted,
)
from ..result import StreamError, StreamResult, StreamWarning
from ._base import STACK_EXHAUSTED, Stream
from ._lane import Lane
from ._turn import REVOKED, AudioMode, Turn, b64_size, refuse_cancelled

__all__ = [
    "REVOKED",
    "AudioMode",
    "Turn",
    "WebSocketSession",
    "b64_size",
    "refuse_cancelled",
    "session_result_for",
]

M = TypeVar("M")

_CONTENT = frozenset(
    {TextDelta, ReasoningDelta, RefusalDelta, ToolCallStarted, ToolCallArgumentsDelta}
)
#: Close codes that are not errors: normal closure, and no status code given.
_NORMAL_CLOSE = frozenset({1000, 1005})
#: Close codes that say "try again": going away, internal error, restart, try later.
_RETRYABLE_CLOSE = frozenset({1001, 1011, 1012, 1013})


class WebSocketSession(Stream, Generic[M]):
    """Base of the WebSocket protocols: one message at a time, one result per response."""

    #: Whether the protocol's fast lane is used (``_lane.py``); the tests turn
    #: it off to compare it with the general path.
    lanes: ClassVar[bool] = True

    def __init__(
        self,
        *,
        audio: AudioMode = "count",
        max_message_bytes: int = DEFAULT_MAX_EVENT_BYTES,
        max_results: int = 1024,
        **options: Any,
    ) -> None:
        """Options: ``audio`` (``count`` or ``keep``, see ``AudioMode``),
        ``max_message_bytes`` (a larger text message is an error) and
        ``max_results`` (results kept); the rest are ``Stream``'s (tools,
        caps, clock, request id, HTTP status of the upgrade)."""
        if audio not in ("count", "keep"):
            raise ValueError(f"audio must be 'count' or 'keep', not {audio!r}")
        super().__init__(**options)
        self._audio_mode: AudioMode = audio
        self._max_message_bytes = max_message_bytes
        self._max_results = max(1, max_results)
        self._turns: list[Turn[M]] = []
        self._dropped = 0
        self._routed: Turn[M] | None = None
        #: Which response the events of the call in progress belong to, as runs of
        #: ``(number or None, count)``, and those of the last call.
        self._runs: list[tuple[int | None, int]] = []
        self._covered = 0
        self._last_runs: list[tuple[int | None, int]] = []
        self._now: float | None = None
        #: Errors that belong to no response (Realtime ``error`` events, bad
        #: messages and error closes between responses).
        self._errors: list[StreamError] = []
        #: The fast path for the response in flight (``_lane.py``), or None.
        self._lane: Lane | None = None
        #: The matcher whose ``feed`` is this session's ``feed_message``
        #: (``_install_front``), or None.
        self._front: MessageMatcher | None = None

    # --- the protocol's part ---------------------------------------------------------

    @abstractmethod
    def _on_message(self, obj: dict[str, Any], raw: str | None, out: list[Event]) -> None:
        """Interprets one decoded message (a JSON object)."""

    @abstractmethod
    def _end_turn(self, turn: Turn[M], how: Literal["eof", "cancel"], out: list[Event]) -> None:
        """Ends a response in flight at the end of input (``eof``) or a cancel."""

    def _sync_turn(self, turn: Turn[M]) -> None:
        """Brings a response's accumulator up to date before its snapshot."""

    def _open_lane(self) -> Lane | None:
        """A fast lane for the state the session is in now (see ``_lane.py``), or
        None (the default: every message takes the general path)."""
        return None

    def _install_front(self, matcher: MessageMatcher, owner: type[WebSocketSession[Any]]) -> None:
        """Makes ``matcher.feed`` the session's ``feed_message``: while a lane is
        open, a message the matcher takes is answered in Rust without a Python
        frame; every other one goes to ``_feed_matched(message, matched)``.
        ``owner`` is the class whose ``feed_message`` calls ``matcher.feed``: a
        subclass that overrides it (or ``_feed_matched``) keeps its own, which
        ``feed_message`` of ``owner`` still routes through the matcher."""
        matcher.fallback = self._feed_matched
        self._front = matcher
        cls = type(self)
        if cls.feed_message is owner.feed_message and cls._feed_matched is owner._feed_matched:
            # An instance attribute shadows the method (a non-data descriptor).
            self.__dict__["feed_message"] = matcher.feed

    def _feed_matched(self, message: Any, matched: tuple[Any, ...] | None) -> list[Event]:
        """``feed_message`` for a message the front did not take: ``matched`` is
        the matcher's tuple for it while a lane is open, else None."""
        return WebSocketSession.feed_message(self, message)

    # --- the public session view -------------------------------------------------------

    @property
    def results(self) -> tuple[StreamResult, ...]:
        """Every response's result (the last ``max_results``), in order of creation."""
        return tuple(self._snapshot(t) for t in self._turns)

    @property
    def current(self) -> StreamResult | None:
        """The result of the latest response still in flight, or None."""
        turn = self._current_turn()
        return None if turn is None else self._snapshot(turn)

    @property
    def result(self) -> StreamResult:
        """The latest response's result; before the first response, the session's own
        (an empty result: ``error`` after a session error, ``cancelled``, or
        ``incomplete`` once closed)."""
        if self._turns:
            return self._snapshot(self._turns[-1])
        if self._lane is not None:
            self._lane.fold()
        return super().result

    @property
    def response_count(self) -> int:
        """How many responses the session has had (including forgotten ones)."""
        return self._dropped + len(self._turns)

    def result_of(self, number: int) -> StreamResult | None:
        """The result of the session's ``number``-th response (from 0), if still kept."""
        at = number - self._dropped
        if 0 <= at < len(self._turns):
            return self._snapshot(self._turns[at])
        return None

    @property
    def last_turns(self) -> tuple[int | None, ...]:
        """For each event the last call returned: its response's number, or None."""
        runs: Sequence[tuple[int | None, int]] = self._last_runs
        front, lane = self._front, self._lane
        if front is not None and lane is not None:
            took = front.took  # the last call was taken by the front (None: it was not)
            if took is not None:
                runs = lane.runs if took else []
        turns: list[int | None] = []
        for number, count in runs:
            turns += [number] * count
        return tuple(turns)

    @property
    def errors(self) -> tuple[StreamError, ...]:
        """Errors that belong to no response, in order."""
        return tuple(self._errors)

    @property
    def warnings(self) -> tuple[StreamWarning, ...]:
        """The session's own warnings (each response's are in its result)."""
        return tuple(self._acc.warnings)

    @property
    def conflicts(self) -> tuple[str, ...]:
        """The session's own protocol conflicts (e.g. input for a finished response)."""
        return tuple(self._acc.conflicts)

    @property
    def unknown_events(self) -> Mapping[str, int]:
        """Unknown messages that belong to no response, by type, with counts."""
        return dict(self._acc.unknown_events)

    def audio(self, number: int = -1) -> bytes:
        """The decoded audio of a response (``audio="keep"``; default: the latest)."""
        if self._audio_mode != "keep":
            raise UsageError("audio is only kept with the option audio='keep'")
        if number < 0:
            number += self.response_count
        at = number - self._dropped
        if not 0 <= at < len(self._turns):
            raise UsageError(f"no response {number} in this session")
        audio = self._turns[at].audio
        return b"" if audio is None else bytes(audio)

    # --- input ---------------------------------------------------------------------------

    def feed(self, data: bytes | bytearray | memoryview) -> list[Event]:
        raise UsageError(
            f"{self.protocol} is a WebSocket protocol: feed each message with feed_message(msg)"
        )

    def feed_message(self, message: str | bytes | Mapping[str, Any]) -> list[Event]:
        """Feeds one WebSocket message: a text frame (``str``), its UTF-8 bytes, or
        the parsed JSON object (a ``dict``, read, never modified)."""
        if self._closed:
            raise UsageError(f"the {self.protocol} session was closed; it cannot be fed")
        out: list[Event] = []
        self._begin()
        acc = self._acc
        acc.cached = None
        acc.wire_events += 1
        obj: Any = None
        raw: str | None = None
        problem: tuple[str, str] | None = None
        if type(message) is str and message.isascii():  # the common case, decoded at once
            size = len(message)
            raw = message
            if size > self._max_message_bytes:
                problem = self._too_large(size)
            else:
                try:
                    obj = loads(message)
                except ValueError as exc:
                    problem = failure(exc, message, "a message")
                else:
                    if type(obj) is not dict:
                        problem = ("invalid_payload", "a message is not a JSON object")
        else:
            obj, raw, size, problem = self._decode(message)
        acc.bytes_received += size
        if problem is not None:
            self._bad_message(problem[0], problem[1], out)
        else:
            try:
                self._on_message(obj, raw, out)
            except RecursionError:
                # Messages are whole: the next one is read; this one's responses failed.
                self._bad_message("json_too_deep", STACK_EXHAUSTED, out, phase="limit")
        routed = self._routed
        if routed is not None:
            routed.acc.wire_events += 1
            routed.acc.bytes_received += size
        return self._done(out)

    def _decode(
        self, message: Any
    ) -> tuple[dict[str, Any] | None, str | None, int, tuple[str, str] | None]:
        """``(object, text, size, problem)``; problem: ``(kind, message)`` or None."""
        if type(message) is dict:
            return message, None, 0, None
        if isinstance(message, bytes | bytearray | memoryview):
            size = memoryview(message).nbytes
            if size > self._max_message_bytes:
                return None, None, size, self._too_large(size)
            try:
                text = bytes(message).decode("utf-8")
            except UnicodeDecodeError as exc:
                return None, None, size, ("invalid_utf8", f"a binary message is not UTF-8: {exc}")
        elif isinstance(message, str):
            text = message
            size = len(text.encode("utf-8", "surrogatepass"))
            if size > self._max_message_bytes:
                return None, None, size, self._too_large(size)
        elif isinstance(message, Mapping):
            return dict(message), None, 0, None
        else:
            raise UsageError(
                f"a WebSocket message is str, bytes or a dict, not {type(message).__name__}"
            )
        try:
            obj = loads(text)
        except ValueError as exc:
            return None, None, size, failure(exc, text, "a message")
        if type(obj) is not dict:
            return None, None, size, ("invalid_payload", "a message is not a JSON object")
        return obj, text, size, None

    def _too_large(self, size: int) -> tuple[str, str]:
        return (
            "message_too_large",
            f"a message of {size} bytes passed max_message_bytes ({self._max_message_bytes})",
        )

    def _bad_message(
        self,
        kind: str,
        message: str,
        out: list[Event],
        *,
        phase: Literal["framing", "limit"] = "framing",
    ) -> None:
        """A message that could not be read: an error for the responses in flight."""
        turns = [t for t in self._turns if t.in_flight]
        if not turns:
            self._session_error(phase, kind, None, message, False, None, out)
            return
        for turn in turns:
            start = len(out)
            out.append(turn.acc.fail(phase, kind, None, message, retryable=False))
            self.attribute(turn, out, start)

    def _session_error(
        self,
        phase: Literal["framing", "provider", "transport", "limit"],
        type: str | None,
        code: str | int | None,
        message: str | None,
        retryable: bool,
        raw: Any,
        out: list[Event],
    ) -> None:
        """An error that belongs to no response (recorded in ``errors``)."""
        event = self._acc.fail(phase, type, code, message, retryable=retryable, raw=raw)
        if len(self._errors) < 100:
            self._errors.append(
                StreamError(
                    phase=phase,
                    type=type,
                    code=code,
                    message=message,
                    retryable=retryable,
                    request_id=event.request_id,
                    raw=raw,
                )
            )
        out.append(event)

    # --- responses -------------------------------------------------------------------------

    def new_turn(self, key: Any, machine: M, acc: Accumulator) -> Turn[M]:
        """Registers a new response (its machine built on ``acc``, from ``new_acc``)."""
        turn = Turn(acc, self.response_count, key, machine)
        turn.t0 = self._now
        self._turns.append(turn)
        if len(self._turns) > self._max_results:
            for at, old in enumerate(self._turns):
                if not old.in_flight:
                    del self._turns[at]
                    if self._dropped == 0:
                        self._acc.warn(
                            "results_dropped",
                            f"more than max_results ({self._max_results}) responses: "
                            "the oldest finished ones are forgotten",
                        )
                    self._dropped += 1
                    break
        self._routed = turn
        return turn

    def new_acc(self) -> Accumulator:
        """A response's accumulator, with the session's options."""
        base = self._acc
        calls = base.calls
        acc = Accumulator(
            self.protocol,
            toolset=calls.toolset,
            max_tool_argument_chars=calls.max_argument_chars,
            max_total_tool_argument_chars=calls.max_total_chars,
            max_tool_calls=calls.max_calls,
            max_content_blocks=base.max_content_blocks,
            request_id=base.request_id,
        )
        acc.http_ok = base.http_ok
        return acc

    def route(self, turn: Turn[M]) -> None:
        """The message being read belongs to ``turn`` (for its wire counters)."""
        if self._routed is None:
            self._routed = turn
        turn.acc.cached = None

    def attribute(self, turn: Turn[M] | None, out: list[Event], start: int) -> None:
        """``out[start:]`` belongs to ``turn`` (None: to the session)."""
        runs = self._runs
        if start > self._covered:
            runs.append((None, start - self._covered))
        count = len(out) - start
        if count <= 0:
            return
        self._covered = len(out)
        if turn is None:
            runs.append((None, count))
            return
        runs.append((turn.number, count))
        acc = turn.acc
        acc.cached = None
        acc.events += count
        now = self._now
        if now is None:
            return
        since = now - (turn.t0 if turn.t0 is not None else now)
        if acc.time_to_first_event is None:
            acc.time_to_first_event = since
        elif turn.stamp is not None:
            gap = now - turn.stamp
            if acc.largest_gap is None or gap > acc.largest_gap:
                acc.largest_gap = gap
        turn.stamp = now
        if acc.time_to_first_content is None and any(type(e) in _CONTENT for e in out[start:]):
            acc.time_to_first_content = since

    def turns_in_flight(self) -> Iterator[Turn[M]]:
        """The responses in flight, oldest first."""
        return (t for t in self._turns if t.in_flight)

    def last_turn(self) -> Turn[M] | None:
        """The latest response, in flight or not."""
        return self._turns[-1] if self._turns else None

    def _current_turn(self) -> Turn[M] | None:
        for turn in reversed(self._turns):
            if turn.in_flight:
                return turn
        return None

    def find_turn(self, key: Any) -> Turn[M] | None:
        """The latest response with this protocol id."""
        for turn in reversed(self._turns):
            if turn.key == key:
                return turn
        return None

    def _snapshot(self, turn: Turn[M]) -> StreamResult:
        if self._lane is not None:
            self._lane.fold()
        acc = turn.acc
        if acc.cached is None:
            self._sync_turn(turn)
        return acc.snapshot()

    @property
    def audio_mode(self) -> AudioMode:
        """The ``audio`` option."""
        return self._audio_mode

    # --- endings -----------------------------------------------------------------------------

    def close(self) -> list[Event]:
        if self._closed:
            return []
        self._closed = True
        self._begin()
        out: list[Event] = []
        self._finish("eof", out)
        return self._done(out)

    def cancel(self) -> list[Event]:
        if self._closed:
            return []
        self._closed = True
        self._begin()
        out: list[Event] = []
        self._finish("cancel", out)
        return self._done(out)

    def connection_closed(self, code: int | None, reason: str = "") -> list[Event]:
        """The WebSocket closed with ``code`` (and ``reason``): ``close()``, after
        an error (phase ``transport``) when the code is not a normal closure."""
        if self._closed:
            return []
        out: list[Event] = []
        self._begin()
        if code is not None and code not in _NORMAL_CLOSE:
            message = reason or f"the WebSocket closed with code {code}"
            retryable = code in _RETRYABLE_CLOSE
            turns = list(self.turns_in_flight())
            if not turns:
                self._session_error(
                    "transport", "websocket_close", code, message, retryable, None, out
                )
            for turn in turns:
                start = len(out)
                out.append(
                    turn.acc.fail(
                        "transport", "websocket_close", code, message, retryable=retryable
                    )
                )
                self.attribute(turn, out, start)
        self._closed = True
        self._finish("eof", out)
        return self._done(out)

    def _finish(self, how: Literal["eof", "cancel"], out: list[Event]) -> None:
        for turn in list(self.turns_in_flight()):
            start = len(out)
            self._end_turn(turn, how, out)
            turn.in_flight = False
            self.attribute(turn, out, start)
        acc = self._acc
        acc.cached = None
        if acc.ended:
            return
        if how == "cancel":
            acc.cancelled = True
        ending = acc.finish()
        if not self._turns and self._dropped == 0:
            # No response at all: the session's own result is the one shown.
            start = len(out)
            out.extend(ending)
            self.attribute(None, out, start)

    # --- per call bookkeeping ---------------------------------------------------------------

    def _begin(self) -> None:
        lane = self._lane
        if lane is not None:
            lane.close()
            self._lane = None
        self._routed = None
        self._runs = []
        self._covered = 0
        clock = self._clock
        self._now = None if clock is None else clock() - self._t0

    def _done(self, out: list[Event]) -> list[Event]:
        if len(out) > self._covered:
            self._runs.append((None, len(out) - self._covered))
        self._last_runs = self._runs
        if self.lanes and not self._closed and self._clock is None:
            lane = self._lane = self._open_lane()
            if lane is not None:
                lane.matcher.arm()
        return self._emit(out) if out else out


def session_result_for(source: StreamResult | Stream, call_id: str) -> StreamResult:
    """The result a tool result for ``call_id`` answers (``toolresults`` hook): the
    session's response that made the call (else its latest result), refused when
    that response was cancelled or the call withdrawn."""
    if isinstance(source, WebSocketSession):
        result = None
        for turn in reversed(source._turns):
            candidate = source._snapshot(turn)
            if candidate.tool_call(call_id) is not None:
                result = candidate
                break
        if result is None:
            return source.result
    elif isinstance(source, Stream):
        result = source.result
    else:
        result = source
    refuse_cancelled(result, call_id)
    return result
