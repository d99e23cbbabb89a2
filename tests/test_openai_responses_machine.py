"""The ``openai-responses`` state machines, pair by pair, and the event dispatch table.

``ResponsesMachine`` is driven directly with decoded event dicts, as the
WebSocket mode drives it: every (phase, input) pair of ``PHASES`` and every
(item state, input) pair of ``ITEM_TRANSITIONS`` is either a listed
transition (its next state and its effect are checked) or a recorded protocol
conflict. The dispatch table is checked against the event types of the
openai SDK's own ``ResponseStreamEvent`` union.
"""

from __future__ import annotations

import itertools
import json
import typing
from typing import Any, get_args

import pytest

import streamwire as sw
from fixture_replay import manifests
from streamwire.accumulate import Accumulator
from streamwire.protocols.openai_responses_items import ITEM_TRANSITIONS, ItemInput, ItemState
from streamwire.protocols.openai_responses_machine import (
    EVENTS,
    PHASES,
    Phase,
    PhaseInput,
    ResponsesMachine,
)

RID = "resp_m"
MESSAGE = {
    "id": "msg_m",
    "type": "message",
    "status": "in_progress",
    "content": [],
    "role": "assistant",
}


def _response(status: str = "in_progress", **extra: Any) -> dict[str, Any]:
    return {"id": RID, "status": status, "model": "m", "output": [], "usage": None, **extra}


def _machine() -> tuple[ResponsesMachine, Accumulator, list[sw.Event]]:
    acc = Accumulator("openai-responses")
    return ResponsesMachine(acc), acc, []


# --- the response-level machine -------------------------------------------------------------

PHASE_NAMES: tuple[Phase, ...] = get_args(Phase)
PHASE_INPUTS: tuple[PhaseInput, ...] = get_args(PhaseInput)

#: A representative event for each input (None: the input is a method call).
_INPUT_EVENTS: dict[PhaseInput, dict[str, Any] | None] = {
    "lifecycle": {"type": "response.in_progress", "response": _response()},
    "content": {"type": "response.output_item.added", "output_index": 0, "item": MESSAGE},
    "terminal": {"type": "response.completed", "response": _response("completed")},
    "error": {"type": "error", "code": "server_error", "message": "boom", "param": None},
    "unknown": {"type": "response.not_yet_invented"},
    "done": None,
    "eof": None,
}


def _drive(machine: ResponsesMachine, input: PhaseInput, out: list[sw.Event]) -> None:
    if input == "done":
        machine.on_done_marker(out)
    elif input == "eof":
        machine.on_eof(out)
    else:
        event = _INPUT_EVENTS[input]
        assert event is not None
        machine.on_event(json.loads(json.dumps(event)), out)


#: How to bring a fresh machine into each phase.
_PATHS: dict[Phase, tuple[PhaseInput, ...]] = {
    "waiting": (),
    "streaming": ("lifecycle",),
    "ended": ("lifecycle", "terminal"),
    "done": ("lifecycle", "terminal", "done"),
    "closed": ("lifecycle", "eof"),
}


def test_phase_table_uses_declared_names_only() -> None:
    for (phase, input), (action, following) in PHASES.items():
        assert phase in PHASE_NAMES and input in PHASE_INPUTS and following in PHASE_NAMES
        assert isinstance(action, str) and action
    unlisted = {p for p in itertools.product(PHASE_NAMES, PHASE_INPUTS) if p not in PHASES}
    assert unlisted == {("closed", i) for i in PHASE_INPUTS if i != "eof"}, "'closed' refuses input"


def test_every_phase_is_reachable() -> None:
    for phase, path in _PATHS.items():
        machine, _, out = _machine()
        for input in path:
            _drive(machine, input, out)
        assert machine.phase == phase


@pytest.mark.parametrize(("phase", "input"), list(itertools.product(PHASE_NAMES, PHASE_INPUTS)))
def test_every_phase_input_pair(phase: Phase, input: PhaseInput) -> None:
    machine, acc, out = _machine()
    for step in _PATHS[phase]:
        _drive(machine, step, out)
    conflicts, warnings = len(acc.conflicts), len(acc.warnings)
    unknown, error = acc.unknown_count, acc.error
    out.clear()
    _drive(machine, input, out)
    transition = PHASES.get((phase, input))
    if transition is None:  # only ever "closed": recorded, nothing else changes
        assert machine.phase == "closed"
        assert len(acc.conflicts) == conflicts + 1 and "closed" in acc.conflicts[-1]
        assert out == []
        return
    action, following = transition
    assert machine.phase == following
    new_conflicts = acc.conflicts[conflicts:]
    new_warnings = [w.code for w in acc.warnings[warnings:]]
    if action == "after_end":
        assert new_conflicts and "after response.completed" in new_conflicts[0]
    elif action == "repeat_end":
        assert new_conflicts == [], "the same terminal event again is a no-op"
    else:
        assert new_conflicts == []
    if action == "after_done":
        assert new_warnings == ["data_after_done"]
    if action == "fail":
        assert error is None and acc.error is not None and acc.error.code == "server_error"
        assert isinstance(out[-1], sw.ErrorReceived)
    if action == "count":
        assert acc.unknown_count == unknown + 1 and isinstance(out[-1], sw.UnknownEvent)
    if action in ("start", "start_apply", "start_end"):
        assert isinstance(out[0], sw.MessageStarted)
    if action in ("end", "start_end"):
        assert machine.terminal and acc.choices[0].stop_reason == "stop"
    if action == "decide":
        assert acc.ended and isinstance(out[-1], sw.MessageCompleted)
        expected = "completed" if phase in ("ended", "done") else "incomplete"
        assert out[-1].status == expected, "a [DONE] is not a terminal event"


def test_a_different_terminal_event_after_the_first_is_a_conflict() -> None:
    machine, acc, out = _machine()
    machine.on_event({"type": "response.completed", "response": _response("completed")}, out)
    machine.on_event({"type": "response.completed", "response": _response("completed")}, out)
    assert acc.conflicts == []
    machine.on_event({"type": "response.failed", "response": _response("failed")}, out)
    assert acc.conflicts == ["response.failed arrived after response.completed"]


# --- the per-item machine -------------------------------------------------------------------

ITEM_STATES: tuple[ItemState, ...] = get_args(ItemState)
ITEM_INPUTS: tuple[ItemInput, ...] = get_args(ItemInput)
CALL_ITEM = {
    "id": "fc_m",
    "type": "function_call",
    "call_id": "call_m",
    "name": "f",
    "arguments": "",
}


def _item_event(input: ItemInput) -> dict[str, Any]:
    if input == "added":
        return {"type": "response.output_item.added", "output_index": 0, "item": CALL_ITEM}
    if input == "delta":
        return {
            "type": "response.function_call_arguments.delta",
            "item_id": "fc_m",
            "output_index": 0,
            "delta": "{}",
        }
    if input == "full":
        return {
            "type": "response.function_call_arguments.done",
            "item_id": "fc_m",
            "output_index": 0,
            "arguments": "{}",
        }
    return {
        "type": "response.output_item.done",
        "output_index": 0,
        "item": {**CALL_ITEM, "arguments": "{}", "status": "completed"},
    }


_ITEM_PATHS: dict[ItemState, tuple[ItemInput, ...]] = {
    "absent": (),
    "open": ("added",),
    "done": ("added", "delta", "done"),
}


def test_item_table_lists_every_pair() -> None:
    assert set(ITEM_TRANSITIONS) == set(itertools.product(ITEM_STATES, ITEM_INPUTS))
    for action, following in ITEM_TRANSITIONS.values():
        assert following in ("open", "done") and action


@pytest.mark.parametrize(("state", "input"), list(itertools.product(ITEM_STATES, ITEM_INPUTS)))
def test_every_item_state_input_pair(state: ItemState, input: ItemInput) -> None:
    machine, acc, out = _machine()
    machine.on_event({"type": "response.created", "response": _response()}, out)
    for step in _ITEM_PATHS[state]:
        machine.on_event(_item_event(step), out)
    assert acc.conflicts == []
    out.clear()
    machine.on_event(_item_event(input), out)
    action, following = ITEM_TRANSITIONS[state, input]
    item = machine.items.by_id["fc_m"]
    assert item.state == following
    call = item.call
    assert call is not None
    announced = state != "absent" or input in ("added", "done")
    assert call.id == ("call_m" if announced else None), "the id is the call_id, once announced"
    warnings = [w.code for w in acc.warnings]
    if action == "conflict":
        assert len(acc.conflicts) == 1 and "after it was done" in acc.conflicts[0]
        assert out == []
        return
    assert acc.conflicts == [], f"{action}: {acc.conflicts}"
    if action == "adopt":
        assert warnings == ["item_not_announced"] and item.implicit
        assert isinstance(out[0], sw.ToolCallStarted)
    else:
        assert warnings == []
    deltas = [e for e in out if isinstance(e, sw.ToolCallArgumentsDelta)]
    if state != "done" and input in ("delta", "full"):
        assert call.raw_arguments() == "{}" and len(deltas) == 1, "the value, once"
    if state == "done":
        assert deltas == [] and call.raw_arguments() == "{}", "a done call only verifies"
    if following == "done" and state != "done":
        assert call.state == "valid" and isinstance(out[-1], sw.ToolCallCompleted)
    if action == "verify":
        assert out == [] and call.state == "valid", "a repeated done item only verifies"


def test_a_repeated_announcement_may_not_change_the_identity() -> None:
    machine, acc, out = _machine()
    added = _item_event("added")
    machine.on_event(added, out)
    machine.on_event(json.loads(json.dumps(added)), out)
    assert acc.conflicts == []
    changed = json.loads(json.dumps(added))
    changed["item"]["call_id"] = "call_other"
    machine.on_event(changed, out)
    assert len(acc.conflicts) == 1 and "call_other" in acc.conflicts[0]


def test_wrong_kind_of_delta_for_an_item_is_a_conflict() -> None:
    machine, acc, out = _machine()
    machine.on_event(_item_event("added"), out)
    machine.on_event(
        {
            "type": "response.output_text.delta",
            "item_id": "fc_m",
            "output_index": 0,
            "content_index": 0,
            "delta": "x",
        },
        out,
    )
    assert acc.conflicts == [
        "response.output_text.delta arrived for item 'fc_m' of type 'function_call'"
    ]
    machine.on_event(
        {"type": "response.output_item.added", "output_index": 1, "item": MESSAGE}, out
    )
    for kind in ("response.output_text.delta", "response.refusal.delta"):
        machine.on_event(
            {"type": kind, "item_id": "msg_m", "output_index": 1, "content_index": 0, "delta": "y"},
            out,
        )
    assert "which holds text" in acc.conflicts[-1], "one part cannot change its kind"


# --- the dispatch table against the SDK's event union -----------------------------------------


def _sdk_event_types() -> set[str]:
    module = pytest.importorskip("openai.types.responses.response_stream_event")
    union = get_args(module.ResponseStreamEvent)[0]
    return {get_args(cls.model_fields["type"].annotation)[0] for cls in get_args(union)}


#: SDK event types deliberately left unknown (counted): audio is not part of a text response.
_LEFT_UNKNOWN = {
    "response.audio.delta",
    "response.audio.done",
    "response.audio.transcript.delta",
    "response.audio.transcript.done",
}


#: Event types known from real streams that the SDK's models do not list yet.
_RECORDED_ONLY = {
    # vercel/ai's openai-apply-patch-tool.1.chunks.txt (fixtures/providers/
    # openai-responses/vercel-apply-patch): the operation's diff, streamed.
    "response.apply_patch_call_operation_diff.delta",
    "response.apply_patch_call_operation_diff.done",
}


def test_every_sdk_event_type_is_known() -> None:
    sdk = _sdk_event_types()
    assert sdk - set(EVENTS) == _LEFT_UNKNOWN
    assert set(EVENTS) - sdk == _RECORDED_ONLY, "no invented event types"


@pytest.mark.parametrize("kind", sorted(EVENTS))
def test_every_known_event_type_is_handled_without_raising(kind: str) -> None:
    machine, acc, out = _machine()
    machine.on_event({"type": "response.created", "response": _response()}, out)
    machine.on_event(
        {"type": "response.output_item.added", "output_index": 0, "item": MESSAGE}, out
    )
    machine.on_event({"type": kind, "item_id": "msg_m", "output_index": 0}, out)
    assert acc.unknown_count == 0


def test_machine_on_decoded_dicts_matches_the_sse_adapter() -> None:
    """The WebSocket mode's contract: the same dicts give the same events and result."""
    fixture = next(f for f in manifests() if f.manifest["case"] == "pyd-mcp")
    stream, sse_events = fixture.replay([fixture.raw])
    machine, acc, out = _machine()
    for block in fixture.raw.decode().split("\n\n"):
        data = [line[6:] for line in block.split("\n") if line.startswith("data: ")]
        if data:
            machine.on_event(json.loads("\n".join(data)), out)
    machine.on_eof(out)
    assert out == sse_events
    assert acc.snapshot().tool_calls == stream.result.tool_calls


def test_events_table_is_immutable() -> None:
    assert isinstance(EVENTS, typing.Mapping)
    with pytest.raises(TypeError):
        EVENTS["x"] = "content"  # type: ignore[index]
