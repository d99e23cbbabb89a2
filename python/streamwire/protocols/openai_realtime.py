"""The ``openai-realtime`` adapter: a session of the OpenAI Realtime API over WebSocket.

The server sends one JSON event per text message ("Realtime server events",
platform.openai.com/docs/api-reference/realtime-server-events, and the
"Realtime conversations" guide, both checked 2026-11-29): session,
conversation and audio-buffer events, the events of each response (every
one carries its ``response_id``), ``rate_limits.updated`` and ``error``. A
response ends with ``response.done``, whose ``response.status`` is the
terminal signal. docs/protocols/openai-realtime.md has what each event
becomes.

Each response is interpreted by its own ``RealtimeResponse``
(``openai_realtime_machine.py``), found by its ``response_id``, so responses
that overlap (an out-of-band response beside the default conversation's)
stay apart. The session machine (``SESSION``) only routes: an event for an
unknown response opens it (with a warning when ``response.created`` was
skipped); an event for a response that had its ``response.done`` is the
session's protocol conflict, so a finished response's result never
changes. ``error`` events belong to the session and never change a
response's status: a response that fails says so in its ``response.done``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Literal

from .._core import MessageMatcher
from ..events import Event
from ._base import retryable_hint
from ._lane import Lane
from ._tool_hooks import RESULT_RESOLVERS
from ._values import RAW_CAP, dump
from ._websocket import Turn, WebSocketSession, session_result_for
from .openai_realtime_lane import AUDIO, BY_TYPE, RealtimeLane, new_matcher
from .openai_realtime_machine import EVENTS, RealtimeResponse

__all__ = [
    "SESSION",
    "SESSION_EVENTS",
    "OpenAIRealtimeSession",
    "SessionInput",
    "SessionPhase",
]

SessionPhase = Literal["connecting", "open"]
SessionInput = Literal["session", "conversation", "response", "error", "unknown"]

#: ``(phase, input) -> (action, next phase)``; every pair is listed.
SESSION: Mapping[tuple[SessionPhase, SessionInput], tuple[str, SessionPhase]] = {
    ("connecting", "session"): ("configure", "open"),
    ("connecting", "conversation"): ("early", "open"),
    ("connecting", "response"): ("early_route", "open"),
    ("connecting", "error"): ("error", "connecting"),
    ("connecting", "unknown"): ("unknown", "connecting"),
    ("open", "session"): ("configure", "open"),
    ("open", "conversation"): ("ignore", "open"),
    ("open", "response"): ("route", "open"),
    ("open", "error"): ("error", "open"),
    ("open", "unknown"): ("unknown", "open"),
}
#: Server events that belong to the session (known; no unified event).
SESSION_EVENTS: Mapping[str, SessionInput] = {
    "session.created": "session",
    "session.updated": "session",
    "transcription_session.created": "session",
    "transcription_session.updated": "session",
    **dict.fromkeys(
        (
            "conversation.created",
            "conversation.item.created",
            "conversation.item.added",
            "conversation.item.done",
            "conversation.item.retrieved",
            "conversation.item.truncated",
            "conversation.item.deleted",
            "conversation.item.input_audio_transcription.completed",
            "conversation.item.input_audio_transcription.delta",
            "conversation.item.input_audio_transcription.failed",
            "conversation.item.input_audio_transcription.segment",
            "input_audio_buffer.committed",
            "input_audio_buffer.cleared",
            "input_audio_buffer.speech_started",
            "input_audio_buffer.speech_stopped",
            "input_audio_buffer.timeout_triggered",
            "input_audio_buffer.dtmf_event_received",
            "output_audio_buffer.started",
            "output_audio_buffer.stopped",
            "output_audio_buffer.cleared",
            "rate_limits.updated",
            "mcp_list_tools.in_progress",
            "mcp_list_tools.completed",
            "mcp_list_tools.failed",
            # An MCP call's progress carries no response_id; its done item says the rest.
            "response.mcp_call.in_progress",
            "response.mcp_call.completed",
            "response.mcp_call.failed",
        ),
        "conversation",
    ),
}


class OpenAIRealtimeSession(WebSocketSession[RealtimeResponse]):
    """OpenAI Realtime session adapter (``sw.stream("openai-realtime")``)."""

    protocol = "openai-realtime"

    def __init__(self, **options: Any) -> None:
        """Options: ``WebSocketSession``'s (``audio``, ``max_message_bytes``,
        ``max_results``) and ``Stream``'s."""
        super().__init__(**options)
        self.phase: SessionPhase = "connecting"
        #: The session id and model from ``session.created`` / ``updated``.
        self.session_id: str | None = None
        self.model: str | None = None
        self._matcher: MessageMatcher = new_matcher()
        self._spare: RealtimeLane | None = None
        self._install_front(self._matcher, OpenAIRealtimeSession)

    # --- the fast lane: the deltas of a streaming response (openai_realtime_lane.py) ---

    def feed_message(self, message: str | bytes | Mapping[str, Any]) -> list[Event]:
        # The session's front (``_install_front``): a delta the lane's matcher
        # takes is answered there; anything else comes to _feed_matched.
        return self._matcher.feed(message)

    def _feed_matched(self, message: Any, matched: tuple[Any, ...] | None) -> list[Event]:
        lane: Any = self._lane
        if lane is not None and matched is not None:
            _, kind, rid, item_id, index, event, size = matched
            if rid == lane.rid and size <= lane.max_bytes:
                if kind in AUDIO:
                    # What RealtimeItems.content does with an audio delta of
                    # an open item: count it (or keep it); no event. (The
                    # matcher built a TextDelta around it: its str is used.)
                    if lane.open_item(item_id) and lane.turn.count_audio(
                        event.text, self.audio_mode
                    ):
                        if self.audio_mode == "count":
                            lane.aim_audio(item_id)
                        lane.empty += 1
                        self._last_runs = []
                        return []
                elif (group := BY_TYPE.get(kind)) is not None:
                    if index is None:
                        index = 0
                    chunks = lane.part(item_id, index, group)
                    if chunks is not None:
                        lane.aim(item_id, index, group, chunks)
                        delta = event.text
                        if not delta:
                            lane.empty += 1
                            self._last_runs = []
                            return []
                        chunks.append(delta)
                        lane.text.append(delta)
                        self._last_runs = lane.runs
                        return [event]
            lane.refuse(size)
        return super().feed_message(message)

    def _open_lane(self) -> Lane | None:
        if self.phase != "open":
            return None
        turn = self.last_turn()
        if turn is None or not turn.in_flight or turn.machine.phase != "streaming":
            return None
        if turn.key is None or self.find_turn(turn.key) is not turn:
            return None
        lane = self._spare
        if lane is None or lane.turn is not turn:
            lane = RealtimeLane(self._matcher, self._acc, turn, self._max_message_bytes)
            self._spare = lane
        else:
            lane.flush()
            lane.item_id, lane.kind, lane.chunks, lane.audio = None, None, None, None
        return lane

    def _classify(self, obj: dict[str, Any], kind: Any) -> SessionInput:
        if type(kind) is not str:
            return "unknown"
        if kind in EVENTS:
            return "response"
        known = SESSION_EVENTS.get(kind)
        if known is not None:
            return known
        if kind == "error":
            return "error"
        if kind.startswith("response.") and type(obj.get("response_id")) is str:
            return "response"  # a response event of a newer API: counted in its response
        return "unknown"

    def _on_message(self, obj: dict[str, Any], raw: str | None, out: list[Event]) -> None:
        kind = obj.get("type")
        input = self._classify(obj, kind)
        action, self.phase = SESSION[self.phase, input]
        if action in ("early", "early_route"):
            self._acc.warn("session_not_created", f"{kind} arrived before session.created")
        if action == "configure":
            self._configure(obj)
        elif action in ("route", "early_route"):
            self._route(obj, str(kind), raw, out)
        elif action == "error":
            self._error(obj, out)
        elif action == "unknown":
            name = kind if type(kind) is str else "<untyped>"
            out.append(
                self._acc.unknown_event(name, raw if raw is not None else dump(obj, cap=RAW_CAP))
            )

    def _configure(self, obj: dict[str, Any]) -> None:
        session = obj.get("session")
        if type(session) is not dict:
            return
        session_id, model = session.get("id"), session.get("model")
        if type(session_id) is str and session_id:
            self.session_id = session_id
        if type(model) is str and model:
            self.model = model

    def _error(self, obj: dict[str, Any], out: list[Event]) -> None:
        error = obj.get("error")
        if type(error) is not dict:
            error = {"message": error} if type(error) is str else {}
        kind, code, message = error.get("type"), error.get("code"), error.get("message")
        kind = kind if type(kind) is str else None
        if type(code) is not str and type(code) is not int:
            code = None
        message = message if type(message) is str else None
        retryable = retryable_hint(kind, code)
        self._session_error("provider", kind, code, message, retryable, error, out)

    def _route(self, obj: dict[str, Any], kind: str, raw: str | None, out: list[Event]) -> None:
        rid = _response_id(obj)
        turn = self.find_turn(rid) if rid is not None else self._current_turn()
        if turn is None:
            turn = self._open(rid, kind)
        elif not turn.in_flight:
            if kind == "response.done":
                self._acc.warn("done_repeated", f"response.done for {rid!r} arrived again")
            else:
                self._acc.conflict(f"{kind} arrived for response {rid!r} after its response.done")
            return
        self.route(turn)
        start = len(out)
        machine = turn.machine
        machine.on_event(obj, out, raw)
        if machine.terminal:
            turn.in_flight = False
        self.attribute(turn, out, start)

    def _open(self, rid: str | None, kind: str) -> Turn[RealtimeResponse]:
        if any(True for _ in self.turns_in_flight()):
            self._acc.warn(
                "responses_overlap",
                f"response {rid!r} started while another was in flight (an out-of-band "
                "response, or the one in flight will be cancelled)",
            )
        acc = self.new_acc()
        acc.model = self.model
        machine = RealtimeResponse(acc, audio=self.audio_mode)
        turn = self.new_turn(rid, machine, acc)
        machine.items.turn = turn
        return turn

    def _end_turn(
        self, turn: Turn[RealtimeResponse], how: Literal["eof", "cancel"], out: list[Event]
    ) -> None:
        machine = turn.machine
        if how == "cancel" and not machine.terminal:
            turn.acc.cancelled = True
        machine.on_eof(out)


def _response_id(obj: dict[str, Any]) -> str | None:
    rid = obj.get("response_id")
    if rid is None:
        response = obj.get("response")
        rid = response.get("id") if type(response) is dict else None
    return rid if type(rid) is str and rid else None


RESULT_RESOLVERS["openai-realtime"] = session_result_for
