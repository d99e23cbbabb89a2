"""The ``openai-responses-ws`` adapter: the OpenAI Responses API's WebSocket mode.

In WebSocket mode the client keeps one connection to ``wss://api.openai.com/
v1/responses`` and starts each turn with a ``response.create`` event,
chaining turns with ``previous_response_id``; the server answers with the
same typed ``response.*`` events as the HTTP stream, one JSON event per text
message, and an ``error`` event when a request fails. Responses run one at
a time on a connection ("WebSocket Mode" guide, developers.openai.com/api/
docs/guides/websocket-mode, and ``responses.connect``, both checked
2026-11-29); docs/protocols/openai-responses-ws.md has what each event
becomes.

Each response is interpreted by its own ``ResponsesMachine``
(``openai_responses_machine.py``: the same implementation as the SSE
adapter), with its own accumulator and result. The session routes messages
with a small machine whose transitions are data (``SESSION``): ``idle``
until a lifecycle or content event opens a response (skipping
``response.created``: a warning), ``responding`` until its terminal event or
an ``error`` ends it. A lifecycle event with another response id supersedes
the response in flight (``incomplete``, a warning); an ``error`` with no
response in flight is a response that ends in ``error``; a repeat of the
last response's terminal event is only a warning.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Literal

from .._core import MessageMatcher
from ..events import Event, text_delta_builder
from ..result import StreamResult
from ._base import Stream
from ._lane import Lane
from ._tool_hooks import RESULT_RESOLVERS, UNKNOWN_ID_HINTS
from ._values import RAW_CAP, dump
from ._websocket import Turn, WebSocketSession, session_result_for
from .openai_responses import SHAPES
from .openai_responses import unknown_call_id_hint as _http_hint
from .openai_responses_items import Part, open_text_part
from .openai_responses_machine import EVENTS, PhaseInput, ResponsesMachine

__all__ = [
    "SESSION",
    "OpenAIResponsesSession",
    "SessionInput",
    "SessionPhase",
    "unknown_call_id_hint",
]

SessionPhase = Literal["idle", "responding"]
SessionInput = Literal["lifecycle", "content", "terminal", "error", "unknown"]

#: The session machine: ``(phase, input) -> (action, next phase)``; every pair is listed.
SESSION: Mapping[tuple[SessionPhase, SessionInput], tuple[str, SessionPhase]] = {
    ("idle", "lifecycle"): ("open", "responding"),
    ("idle", "content"): ("open_implicit", "responding"),
    ("idle", "terminal"): ("open_end", "idle"),
    ("idle", "error"): ("open_end", "idle"),
    ("idle", "unknown"): ("session_unknown", "idle"),
    ("responding", "lifecycle"): ("apply_or_supersede", "responding"),
    ("responding", "content"): ("apply", "responding"),
    ("responding", "unknown"): ("apply", "responding"),
    ("responding", "terminal"): ("apply_end", "idle"),
    ("responding", "error"): ("apply_end", "idle"),
}
_INPUTS: Mapping[PhaseInput, SessionInput] = {
    "lifecycle": "lifecycle",
    "content": "content",
    "terminal": "terminal",
    "error": "error",
    "unknown": "unknown",
}
#: Event type -> session input (every type the response machine knows).
_BY_TYPE: Mapping[str, SessionInput] = {
    kind: _INPUTS.get(input, "unknown") for kind, input in EVENTS.items()
}


class _DeltaLane(Lane):
    """The fast lane of a response in flight: its text deltas (``_lane.py``)."""

    __slots__ = ("index", "item_id", "machine", "part", "parts", "text")

    def reset(self, machine: ResponsesMachine) -> None:
        self.flush()
        self.machine = machine
        self.parts = machine.items.parts
        self.text = machine.choice.text
        #: The last delta's part: ``(item id, content index as sent)`` and the part.
        self.item_id: str | None = None
        self.index: int | None = None
        self.part: Part | None = None

    def aim(self, item_id: str, index: int | None, part: Part, number: int | None) -> None:
        """The next deltas of this part, in sequence, are taken by the matcher."""
        self.item_id, self.index, self.part = item_id, index, part
        key = 0 if index is None else index
        # SHAPES' message template: (sequence_number, item_id, content_index, delta).
        allowed = (key, None) if key == 0 else (key,)
        self.matcher.expect(1, {1: item_id, 2: allowed}, (0, number), self.taken, self.max_bytes)

    def flush(self) -> None:
        taken = self.taken
        if taken:
            part = self.part
            assert part is not None
            part.chunks.extend(taken)
            self.text.extend(taken)
            taken.clear()
            number = self.matcher.successor
            if number is not None:
                self.machine.sequence = number


class OpenAIResponsesSession(WebSocketSession[ResponsesMachine]):
    """OpenAI Responses WebSocket-mode session (``sw.stream("openai-responses-ws")``)."""

    protocol = "openai-responses-ws"

    def __init__(self, **options: Any) -> None:
        """Options are ``WebSocketSession``'s and ``Stream``'s
        (``max_content_blocks`` caps each response's output items and parts)."""
        super().__init__(**options)
        self.phase: SessionPhase = "idle"
        self._matcher = MessageMatcher(SHAPES, build={1: (text_delta_builder, 0)})
        self._spare: _DeltaLane | None = None
        self._install_front(self._matcher, OpenAIResponsesSession)

    @property
    def previous_response_id(self) -> str | None:
        """The id of the latest response that ended ``completed`` or ``truncated``."""
        for turn in reversed(self._turns):
            if not turn.in_flight:
                result = self._snapshot(turn)
                if result.status in ("completed", "truncated") and result.message_id:
                    return result.message_id
        return None

    # --- the fast lane: a text delta of the response in flight ------------------------

    def feed_message(self, message: str | bytes | Mapping[str, Any]) -> list[Event]:
        # The session's front (``_install_front``): a delta the lane's matcher
        # takes is answered there; anything else comes to _feed_matched.
        return self._matcher.feed(message)

    def _feed_matched(self, message: Any, matched: tuple[Any, ...] | None) -> list[Event]:
        lane: Any = self._lane
        if lane is not None and matched is not None:
            # What the general path would do with a text delta of SHAPES' exact
            # shape, for an open text part, in sequence (test_fast_lane_is_the_
            # general_path): append it and return its TextDelta. The matcher
            # takes the deltas of the part the last one went to.
            lane.flush()
            _, number, item_id, index, event, size = matched
            machine = lane.machine
            seq = machine.sequence
            part = lane.part
            if part is None or item_id != lane.item_id or index != lane.index:
                part = open_text_part(lane.parts, item_id, 0 if index is None else index)
            if (
                part is not None
                and (number is None or (seq is not None and number == seq + 1))
                and size <= lane.max_bytes
            ):
                if number is not None:
                    machine.sequence = number
                lane.aim(item_id, index, part, machine.sequence)
                delta = event.text
                if not delta:
                    lane.empty += 1
                    self._last_runs = []
                    return []
                part.chunks.append(delta)
                lane.text.append(delta)
                self._last_runs = lane.runs
                return [event]
            lane.refuse(size)
        return super().feed_message(message)

    def _open_lane(self) -> Lane | None:
        if self.phase != "responding" or not self._turns:
            return None
        turn = self._turns[-1]
        machine = turn.machine
        if not turn.in_flight or machine.phase != "streaming":
            return None
        lane = self._spare
        if lane is None or lane.acc is not turn.acc:
            lane = _DeltaLane(
                self._matcher, self._acc, turn.acc, turn.number, self._max_message_bytes
            )
            self._spare = lane
        lane.reset(machine)
        return lane

    # --- routing ------------------------------------------------------------------------

    def _on_message(self, obj: dict[str, Any], raw: str | None, out: list[Event]) -> None:
        kind = obj.get("type")
        if type(kind) is str:
            input = _BY_TYPE.get(kind, "unknown")
        elif "error" in obj:
            kind, input = "error", "error"  # a chat-style {"error": {...}}, as the machine reads it
        else:
            input = "unknown"
        action, self.phase = SESSION[self.phase, input]
        if action == "apply":  # the common case: an event of the response in flight
            turn = self._turns[-1]
            self.route(turn)
            start = len(out)
            turn.machine.on_event(obj, out, raw)
            if turn.machine.terminal:
                self._ended(turn, out)
            self.attribute(turn, out, start)
            return
        if action == "session_unknown":
            name = kind if type(kind) is str else "<untyped>"
            start = len(out)
            out.append(
                self._acc.unknown_event(name, raw if raw is not None else dump(obj, cap=RAW_CAP))
            )
            self.attribute(None, out, start)
            return
        current = self._current_turn()
        if action == "apply_or_supersede" and current is not None:
            response_id = _response_id(obj)
            if response_id is not None and current.key not in (None, response_id):
                self._supersede(current, response_id, out)
                current = None
        elif action == "open_end" and input == "terminal":
            last = self.last_turn()
            response_id = _response_id(obj)
            if last is not None and response_id is not None and last.key == response_id:
                self._acc.warn(
                    "terminal_repeated",
                    f"{kind} for response {response_id!r} arrived again after it ended",
                )
                return
        if current is None:
            turn = self._open(obj, action == "open_implicit", out)
        else:
            turn = current
            self.route(turn)
        start = len(out)
        turn.machine.on_event(obj, out, raw)
        if turn.key is None:
            turn.key = turn.acc.message_id
        if action in ("apply_end", "open_end") or turn.machine.terminal:
            self._ended(turn, out)
        self.attribute(turn, out, start)

    def _ended(self, turn: Turn[ResponsesMachine], out: list[Event]) -> None:
        """The response ended (its terminal event, or an error): its status is decided."""
        self.phase = "idle"
        turn.machine.on_eof(out)
        turn.in_flight = False

    def _open(
        self, obj: dict[str, Any], implicit: bool, out: list[Event]
    ) -> Turn[ResponsesMachine]:
        acc = self.new_acc()
        machine = ResponsesMachine(acc)
        turn = self.new_turn(_response_id(obj), machine, acc)
        if implicit:
            acc.warn(
                "response_not_created",
                f"{obj.get('type')} arrived with no response in flight: a new response was assumed",
            )
        return turn

    def _supersede(self, turn: Turn[ResponsesMachine], response_id: str, out: list[Event]) -> None:
        start = len(out)
        turn.acc.warn(
            "response_superseded",
            f"response {response_id!r} started before this one ended; responses run "
            "one at a time on a connection, so this one will not end",
        )
        turn.machine.on_eof(out)
        turn.in_flight = False
        self.attribute(turn, out, start)

    def _end_turn(
        self, turn: Turn[ResponsesMachine], how: Literal["eof", "cancel"], out: list[Event]
    ) -> None:
        machine = turn.machine
        if how == "cancel" and not machine.terminal:
            turn.acc.cancelled = True
        machine.on_eof(out)
        self.phase = "idle"


def _response_id(obj: dict[str, Any]) -> str | None:
    response = obj.get("response")
    if type(response) is dict:
        rid = response.get("id")
        if type(rid) is str and rid:
            return rid
    return None


def unknown_call_id_hint(source: StreamResult | Stream, result: StreamResult, call_id: str) -> str:
    """Why ``call_id`` is no call of this session, when it can tell: the item id
    of a call (``fc_...``) of any of its responses quoted instead of its ``call_id``."""
    if isinstance(source, OpenAIResponsesSession):
        for turn in reversed(source._turns):
            for item in turn.machine.items.items:
                call = item.call
                if item.id == call_id and call is not None and call.id is not None:
                    return (
                        f": {call_id!r} is the output item id of the {call.type} call "
                        f"{call.name!r}; a tool result must quote its call_id {call.id!r}"
                    )
    return _http_hint(source, result, call_id)


# Registered after openai_responses' own (imported above), which this one extends.
UNKNOWN_ID_HINTS["openai-responses-ws"] = unknown_call_id_hint
RESULT_RESOLVERS["openai-responses-ws"] = session_result_for
