"""The ``gemini-live`` adapter: a Gemini Live API session (``BidiGenerateContent``).

The server sends one ``BidiGenerateContentServerMessage`` JSON object per
message (often in binary frames: ``feed_message`` takes bytes), carrying
``setupComplete``, ``serverContent``, ``toolCall``, ``toolCallCancellation``,
``goAway`` or ``sessionResumptionUpdate``, and perhaps ``usageMetadata``
beside them ("Live API - WebSockets API reference", ai.google.dev/api/live,
and the google-genai ``LiveServerMessage`` types, checked 2026-11-29). The
Live API has no error message: it closes the socket
(``connection_closed(code, reason)``). What each key becomes, and the peers'
reports behind the rules below, are docs/protocols/gemini-live.md.

One result per model turn (``gemini_live_turns.py``). A turn ends at
``turnComplete``; at ``toolCall`` (the model then waits for the
``toolResponse``); or at ``interrupted`` (``cancelled``). After a turn that
ended at ``toolCall`` or ``interrupted``, the signals that close it late are
absorbed by that turn: the *tail*. One message is read in a fixed order,
whatever the order of its keys (``_inputs``), so that a message that
carries both a turn's end and a tool call keeps the call in the turn.

The session machine is ``SESSION`` (every pair listed): ``connecting``
(before ``setupComplete``), ``idle``, ``turn`` (a turn in flight),
``generated`` (after its ``generationComplete``) and ``tail``.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any, Literal

from .._core import MessageMatcher
from ..events import Event
from ._lane import Lane
from ._tool_hooks import RESULT_RESOLVERS
from ._values import RAW_CAP, dump
from ._websocket import Turn, WebSocketSession, session_result_for
from .gemini_live_lane import LiveLane, new_matcher
from .gemini_live_turns import LiveTurn, turn_reason

__all__ = ["SESSION", "GeminiLiveSession", "SessionInput", "SessionPhase", "tool_response"]

SessionPhase = Literal["connecting", "idle", "turn", "generated", "tail"]
SessionInput = Literal[
    "setup",
    "content",
    "tool_call",
    "cancellation",
    "interrupted",
    "generation_complete",
    "turn_complete",
    "usage",
    "go_away",
    "resumption",
    "unknown",
]
_PHASES: tuple[SessionPhase, ...] = ("connecting", "idle", "turn", "generated", "tail")


def _table() -> dict[tuple[SessionPhase, SessionInput], tuple[str, SessionPhase]]:
    table: dict[tuple[SessionPhase, SessionInput], tuple[str, SessionPhase]] = {}
    for phase in _PHASES:
        # Inputs that never move the machine.
        table[phase, "cancellation"] = ("revoke", phase)
        table[phase, "go_away"] = ("go_away", phase)
        table[phase, "resumption"] = ("resumption", phase)
        table[phase, "unknown"] = ("unknown", phase)
        table[phase, "usage"] = ("usage", phase)
        table[phase, "setup"] = ("setup" if phase == "connecting" else "setup_again", phase)
    table.update(
        {
            ("connecting", "setup"): ("setup", "idle"),
            ("connecting", "content"): ("early_open", "turn"),
            ("connecting", "tool_call"): ("early_open_calls", "tail"),
            ("connecting", "interrupted"): ("stray", "connecting"),
            ("connecting", "generation_complete"): ("stray", "connecting"),
            ("connecting", "turn_complete"): ("early_open_end", "idle"),
            ("idle", "content"): ("open", "turn"),
            ("idle", "tool_call"): ("open_calls", "tail"),
            ("idle", "interrupted"): ("stray", "idle"),
            ("idle", "generation_complete"): ("open_generated", "generated"),
            ("idle", "turn_complete"): ("open_end", "idle"),
            ("turn", "content"): ("apply", "turn"),
            ("turn", "tool_call"): ("calls", "tail"),
            ("turn", "interrupted"): ("interrupt", "tail"),
            ("turn", "generation_complete"): ("generated", "generated"),
            ("turn", "turn_complete"): ("end", "idle"),
            ("generated", "content"): ("after_generation", "generated"),
            ("generated", "tool_call"): ("calls", "tail"),
            ("generated", "interrupted"): ("interrupted_playback", "generated"),
            ("generated", "generation_complete"): ("repeat", "generated"),
            ("generated", "turn_complete"): ("end", "idle"),
            ("tail", "content"): ("open", "turn"),
            ("tail", "tool_call"): ("open_calls", "tail"),
            ("tail", "interrupted"): ("absorb", "tail"),
            ("tail", "generation_complete"): ("absorb", "tail"),
            ("tail", "turn_complete"): ("absorb_end", "idle"),
        }
    )
    return table


#: ``(phase, input) -> (action, next phase)``; every pair is listed.
SESSION: Mapping[tuple[SessionPhase, SessionInput], tuple[str, SessionPhase]] = _table()
#: Top-level fields of a server message; those not read here are known and ignored.
_MESSAGE_FIELDS = frozenset(
    {
        "setupComplete",
        "serverContent",
        "toolCall",
        "toolCallCancellation",
        "usageMetadata",
        "goAway",
        "sessionResumptionUpdate",
        "voiceActivity",
        "voiceActivityDetectionSignal",
    }
)
_CONTENT_FIELDS = frozenset(
    {
        "modelTurn",
        "turnComplete",
        "interrupted",
        "generationComplete",
        "groundingMetadata",
        "inputTranscription",
        "outputTranscription",
        "urlContextMetadata",
        "waitingForInput",
        "turnCompleteReason",
    }
)


def tool_response(function_responses: Iterable[Mapping[str, Any]]) -> dict[str, Any]:
    """The client message answering tool calls: ``{"toolResponse": {"functionResponses":
    [...]}}``, from ``sw.tool_result(session, call_id, output)`` values."""
    return {"toolResponse": {"functionResponses": [dict(r) for r in function_responses]}}


class GeminiLiveSession(WebSocketSession[LiveTurn]):
    """Gemini Live session adapter (``sw.stream("gemini-live")``)."""

    protocol = "gemini-live"

    def __init__(self, **options: Any) -> None:
        """Options: ``WebSocketSession``'s (``audio``, ``max_message_bytes``,
        ``max_results``) and ``Stream``'s."""
        super().__init__(**options)
        self.phase: SessionPhase = "connecting"
        #: ``goAway.timeLeft`` of the last notice that the server will disconnect.
        self.go_away: str | None = None
        #: The last resumable ``sessionResumptionUpdate.newHandle``.
        self.resumption_handle: str | None = None
        self._matcher: MessageMatcher = new_matcher()
        self._install_front(self._matcher, GeminiLiveSession)

    # --- the fast lane: a model turn's text, audio, transcript (gemini_live_lane.py) -------

    def feed_message(self, message: str | bytes | Mapping[str, Any]) -> list[Event]:
        # The session's front (``_install_front``): a text part the lane's
        # matcher takes is answered there, with no Python frame; anything
        # else comes to _feed_matched.
        return self._matcher.feed(message)

    def _feed_matched(self, message: Any, matched: tuple[Any, ...] | None) -> list[Event]:
        lane: Any = self._lane
        if lane is not None and matched is not None:
            lane.refuse(matched[-1])  # an empty text, or too large: the general path
        return WebSocketSession.feed_message(self, message)

    def _open_lane(self) -> Lane | None:
        if self.phase != "turn" or not self._turns:
            return None
        turn = self._turns[-1]
        cand = turn.machine.cand
        if not turn.in_flight or cand.state.index != 0:
            return None
        tally = self.audio_mode == "count"
        lane = LiveLane(
            self._matcher, self._acc, turn, self._max_message_bytes, plain=cand.plain, tally=tally
        )
        return lane

    # --- reading one message ----------------------------------------------------------------

    def _on_message(self, obj: dict[str, Any], raw: str | None, out: list[Event]) -> None:
        if self.phase == "turn" and len(obj) == 1 and self._fast_text(obj, out):
            return
        if not any(key in _MESSAGE_FIELDS for key in obj):
            name = next(iter(obj), "<empty>")
            self._step(
                "unknown", (name, raw if raw is not None else dump(obj, cap=RAW_CAP)), False, out
            )
            return
        content = obj.get("serverContent")
        if content is not None and type(content) is not dict:
            self._in_turn_conflict("serverContent is not an object")
            content = None
        for key in obj:
            if key not in _MESSAGE_FIELDS:
                self._count_field(key)
        if content is not None:
            for key in content:
                if key not in _CONTENT_FIELDS:
                    self._count_field("serverContent." + key)
        final = content is not None and content.get("turnComplete") is True
        for input, value in self._inputs(obj, content):
            self._step(input, value, final, out)

    def _fast_text(self, obj: dict[str, Any], out: list[Event]) -> bool:
        """The common message of a turn in flight, ``{"serverContent": {"modelTurn":
        {"parts": [{"text": ...}]}}}``: what the general path does with it (the
        ``turn --content--> turn`` transition, one plain text part), in fewer steps.
        False (nothing done) for any other message."""
        content = obj.get("serverContent")
        if type(content) is not dict or len(content) != 1:
            return False
        model_turn = content.get("modelTurn")
        parts = model_turn.get("parts") if type(model_turn) is dict else None
        if type(parts) is not list or len(parts) != 1:
            return False
        part = parts[0]
        if type(part) is not dict or len(part) != 1:
            return False
        text = part.get("text")
        if type(text) is not str:
            return False
        turn = self._turns[-1]
        self.route(turn)
        start = len(out)
        live = turn.machine
        live.parts.text(live.cand, text, out)
        self.attribute(turn, out, start)
        return True

    def _inputs(
        self, obj: dict[str, Any], content: dict[str, Any] | None
    ) -> list[tuple[SessionInput, Any]]:
        """The message's inputs, in the order they are read (see the module docstring)."""
        inputs: list[tuple[SessionInput, Any]] = []
        if "setupComplete" in obj:
            inputs.append(("setup", obj["setupComplete"]))
        if content is not None and _carries(content):
            inputs.append(("content", content))
        if "toolCall" in obj:
            inputs.append(("tool_call", obj["toolCall"]))
        if "toolCallCancellation" in obj:
            inputs.append(("cancellation", obj["toolCallCancellation"]))
        if content is not None and content.get("interrupted") is True:
            inputs.append(("interrupted", content))
        if content is not None and content.get("generationComplete") is True:
            inputs.append(("generation_complete", content))
        if "usageMetadata" in obj:
            inputs.append(("usage", obj["usageMetadata"]))
        if content is not None and content.get("turnComplete") is True:
            inputs.append(("turn_complete", content))
        if "goAway" in obj:
            inputs.append(("go_away", obj["goAway"]))
        if "sessionResumptionUpdate" in obj:
            inputs.append(("resumption", obj["sessionResumptionUpdate"]))
        return inputs

    # --- the session machine ----------------------------------------------------------------

    def _step(self, input: SessionInput, value: Any, final: bool, out: list[Event]) -> None:
        action, self.phase = SESSION[self.phase, input]
        acc = self._acc
        if action.startswith("early_"):
            acc.warn("setup_not_complete", f"{input} arrived before setupComplete")
            action = action.removeprefix("early_")
        if action == "setup_again":
            acc.warn("setup_repeated", "setupComplete arrived again")
        elif action == "stray":
            acc.warn("nothing_in_flight", f"{input} arrived with no model turn in flight")
        elif action == "go_away":
            left = value.get("timeLeft") if type(value) is dict else None
            self.go_away = str(left) if left is not None else ""
            acc.warn("go_away", f"the server will disconnect (timeLeft {left})")
        elif action == "resumption":
            if type(value) is dict and value.get("resumable") is not False:
                handle = value.get("newHandle")
                if type(handle) is str and handle:
                    self.resumption_handle = handle
        elif action == "unknown":
            self._unknown(value[0], value[1], out)
        elif action == "revoke":
            self._revoke(value, out)
        elif action == "usage":
            self._usage(value, final, out)
        else:
            self._turn_action(action, input, value, out)

    def _turn_action(self, action: str, input: SessionInput, value: Any, out: list[Event]) -> None:
        turn: Turn[LiveTurn] | None
        if action.startswith("open"):
            turn = self._open(out)
            action = action.removeprefix("open").lstrip("_") or "apply"
        else:
            # A turn in flight; for the tail's actions, the turn that ended.
            turn = self._current_turn() or self.last_turn()
        if turn is None:
            return
        self.route(turn)
        live = turn.machine
        start = len(out)
        if action == "apply":
            live.content(value, out)
        elif action == "after_generation":
            live.acc.conflict("model content arrived after generationComplete")
            live.content(value, out)
        elif action == "calls":
            live.calls(value, out)
            self._end(turn, "toolCall", None, out)
        elif action == "interrupt":
            self._end(turn, "interrupted", None, out)
        elif action == "generated":
            live.generated = True
        elif action == "interrupted_playback":
            live.acc.warn(
                "interrupted_after_generation",
                "the turn was interrupted after its generation completed (during playback)",
            )
        elif action == "end":
            self._end(turn, "turnComplete", turn_reason(value, live.acc), out)
        elif action == "absorb_end":
            reason = turn_reason(value, live.acc)
            if reason is not None and reason not in ("TURN_COMPLETE_REASON_UNSPECIFIED",):
                live.acc.warn("late_turn_complete_reason", f"the turn's tail said {reason}")
        # "absorb" and "repeat": nothing to do
        self.attribute(turn, out, start)

    def _open(self, out: list[Event]) -> Turn[LiveTurn]:
        acc = self.new_acc()
        live = LiveTurn(acc, self.audio_mode)
        turn = self.new_turn(None, live, acc)
        live.turn = turn
        start = len(out)
        live.start(out)
        self.attribute(turn, out, start)
        return turn

    def _end(self, turn: Turn[LiveTurn], how: Any, reason: str | None, out: list[Event]) -> None:
        turn.machine.end(how, reason, out)
        turn.in_flight = False

    def _end_turn(
        self, turn: Turn[LiveTurn], how: Literal["eof", "cancel"], out: list[Event]
    ) -> None:
        turn.machine.end(how, None, out)
        self.phase = "idle"

    def _sync_turn(self, turn: Turn[LiveTurn]) -> None:
        turn.acc.content_view = turn.machine.cand.provider_content

    # --- withdrawals, usage, unknowns -------------------------------------------------------

    def _revoke(self, value: Any, out: list[Event]) -> None:
        ids = value.get("ids") if type(value) is dict else None
        if type(ids) is not list:
            self._in_turn_conflict("toolCallCancellation.ids is not a list")
            return
        for call_id in ids:
            found = None
            if type(call_id) is str:
                for turn in reversed(self._turns):
                    call = turn.machine.find(call_id)
                    if call is not None:
                        found = (turn, call)
                        break
            if found is None:
                self._acc.warn(
                    "unknown_cancellation",
                    f"toolCallCancellation names {call_id!r}, no call of this session",
                )
                continue
            owner, call = found
            self.route(owner)
            start = len(out)
            owner.machine.revoke(call, out)
            self.attribute(owner, out, start)

    def _usage(self, value: Any, final: bool, out: list[Event]) -> None:
        if value is None:
            return
        turn = self._current_turn()
        if turn is None:
            turn = self.last_turn()
            final = True  # the turn ended: its figure
        if turn is None:
            self._acc.warn("usage_without_turn", "usageMetadata arrived before any model turn")
            return
        self.route(turn)
        start = len(out)
        turn.machine.usage(value, final, out)
        self.attribute(turn, out, start)

    def _unknown(self, name: str, raw: str, out: list[Event]) -> None:
        turn = self._current_turn()
        acc = self._acc if turn is None else turn.acc
        start = len(out)
        out.append(acc.unknown_event(name, raw))
        self.attribute(turn, out, start)

    def _count_field(self, path: str) -> None:
        turn = self._current_turn()
        (self._acc if turn is None else turn.acc).unknown_field(path)

    def _in_turn_conflict(self, message: str) -> None:
        turn = self._current_turn()
        (self._acc if turn is None else turn.acc).conflict(message)


def _carries(content: dict[str, Any]) -> bool:
    """Whether a ``serverContent`` carries model output (parts or a transcript).

    Malformed content counts, so that the turn records it; an empty text part
    alone does not."""
    model_turn = content.get("modelTurn")
    if model_turn is not None:
        parts = model_turn.get("parts") if type(model_turn) is dict else model_turn
        if type(parts) is not list:
            return parts is not None
        for part in parts:
            if type(part) is not dict:
                return True
            if any(key != "text" or value != "" for key, value in part.items()):
                return True
    transcription = content.get("outputTranscription")
    if type(transcription) is dict:
        text = transcription.get("text")
        return type(text) is not str or text != ""
    return False


RESULT_RESOLVERS["gemini-live"] = session_result_for
