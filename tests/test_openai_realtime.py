"""The ``openai-realtime`` session and its per-response machine, pair by pair, and the API.

Fixture replays (``test_fixtures.py``) cover whole sessions. Here: every
(phase, input) pair of the session machine (``SESSION``), of the response
machine (``PHASES``) and of the item machine (``ITEMS``) is a listed transition
whose effect is checked; the dispatch tables cover every server event type of
openai-python's ``RealtimeServerEvent`` union; ``response.done`` statuses;
routing by ``response_id`` (overlapping responses, input after a response
ended); audio counted and kept; tool results (refused for cancelled
responses); and a property: no sequence of messages makes the session raise.
"""

from __future__ import annotations

import base64
import itertools
import json
import typing
from typing import Any, get_args

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import streamwire as sw
from streamwire.accumulate import Accumulator
from streamwire.protocols.openai_realtime import (
    SESSION,
    SESSION_EVENTS,
    OpenAIRealtimeSession,
    SessionInput,
    SessionPhase,
)
from streamwire.protocols.openai_realtime_items import ITEMS, ItemInput
from streamwire.protocols.openai_realtime_machine import (
    EVENTS,
    PHASES,
    Input,
    Phase,
    RealtimeResponse,
)
from ws_messages import Realtime, realtime_usage

RT = Realtime()


def _session(**options: Any) -> OpenAIRealtimeSession:
    session = sw.stream("openai-realtime", **options)
    assert isinstance(session, OpenAIRealtimeSession)
    return session


def _feed(session: sw.Stream, messages: list[dict[str, Any]]) -> list[sw.Event]:
    out: list[sw.Event] = []
    for message in messages:
        out += session.feed_message(json.dumps(message))
    return out


def _text(rid: str, text: str = "Hi", status: str = "completed", **kw: Any) -> list[dict[str, Any]]:
    item = f"item_{rid}"
    return [
        RT.created(rid),
        *RT.text_message(rid, item, 0, [text]),
        RT.done(rid, status, [], realtime_usage(5, 1), **kw),
    ]


def _call(rid: str, call_id: str, status: str = "completed", **kw: Any) -> list[dict[str, Any]]:
    return [
        RT.created(rid),
        *RT.call(rid, f"item_{rid}", call_id, "lookup", 0, ['{"q":', "1}"]),
        RT.done(rid, status, [], None, **kw),
    ]


# --- dispatch tables ---------------------------------------------------------------------------


def test_every_server_event_type_of_the_sdk_is_known() -> None:
    realtime = pytest.importorskip("openai.types.realtime")
    union = typing.get_args(realtime.RealtimeServerEvent)[0]
    names = set()
    for model in typing.get_args(union):
        names |= set(typing.get_args(model.model_fields["type"].annotation))
    known = set(EVENTS) | set(SESSION_EVENTS) | {"error"}
    assert names <= known, sorted(names - known)
    # The beta names are known too.
    assert {
        "response.text.delta",
        "response.audio_transcript.delta",
        "response.audio.delta",
    } <= known


# --- the session machine ---------------------------------------------------------------------

S_PHASES: tuple[SessionPhase, ...] = get_args(SessionPhase)
S_INPUTS: tuple[SessionInput, ...] = get_args(SessionInput)
_S_INPUT: dict[SessionInput, dict[str, Any]] = {
    "session": RT.session_created(),
    "conversation": RT.e("input_audio_buffer.speech_started", audio_start_ms=10, item_id="i"),
    "response": RT.created("resp_s"),
    "error": RT.e("error", error={"type": "invalid_request_error", "code": "x", "message": "m"}),
    "unknown": RT.e("future.event"),
}


def test_session_table_lists_every_pair() -> None:
    assert set(SESSION) == set(itertools.product(S_PHASES, S_INPUTS))


@pytest.mark.parametrize(("phase", "input"), list(itertools.product(S_PHASES, S_INPUTS)))
def test_every_session_pair(phase: SessionPhase, input: SessionInput) -> None:
    session = _session()
    if phase == "open":
        session.feed_message(_S_INPUT["session"])
    events = session.feed_message(_S_INPUT[input])
    action, following = SESSION[phase, input]
    assert session.phase == following
    warnings = {w.code for w in session.warnings}
    assert ("session_not_created" in warnings) == action.startswith("early")
    if action == "configure":
        assert (session.session_id, session.model) == ("sess_rt01", "gpt-realtime-2025-08-28")
    if action.endswith("route"):
        assert session.response_count == 1 and session.last_turns == (0,)
        assert isinstance(events[0], sw.MessageStarted)
    else:
        assert session.response_count == 0
    if action == "error":
        assert [type(e) for e in events] == [sw.ErrorReceived] and session.last_turns == (None,)
        assert session.errors[0].type == "invalid_request_error"
    elif action == "unknown":
        assert [type(e) for e in events] == [sw.UnknownEvent]
        assert session.unknown_events == {"future.event": 1}
    elif not action.endswith("route"):
        assert events == []


# --- the response machine --------------------------------------------------------------------

M_PHASES: tuple[Phase, ...] = get_args(Phase)
M_INPUTS: tuple[Input, ...] = get_args(Input)
_M_INPUT: dict[Input, dict[str, Any] | None] = {
    "created": RT.created("resp_m"),
    "content": RT.e(
        "response.output_item.added",
        response_id="resp_m",
        output_index=0,
        item=RT.message_item("item_m", "in_progress", []),
    ),
    "done": RT.done("resp_m", "completed", [], None),
    "eof": None,
}
_M_PATHS: dict[Phase, list[Input]] = {
    "waiting": [],
    "streaming": ["created"],
    "closed": ["created", "done"],
}


def _drive(machine: RealtimeResponse, input: Input, out: list[sw.Event]) -> None:
    message = _M_INPUT[input]
    if message is None:
        machine.on_eof(out)
    else:
        machine.on_event(json.loads(json.dumps(message)), out)


def test_phase_table_lists_every_pair() -> None:
    assert set(PHASES) == set(itertools.product(M_PHASES, M_INPUTS))


@pytest.mark.parametrize(("phase", "input"), list(itertools.product(M_PHASES, M_INPUTS)))
def test_every_response_phase_pair(phase: Phase, input: Input) -> None:
    acc = Accumulator("openai-realtime")
    machine = RealtimeResponse(acc)
    out: list[sw.Event] = []
    for step in _M_PATHS[phase]:
        _drive(machine, step, out)
    assert machine.phase == phase
    conflicts, warnings = len(acc.conflicts), [w.code for w in acc.warnings]
    out.clear()
    _drive(machine, input, out)
    action, following = PHASES[phase, input]
    assert machine.phase == following
    if action == "after_end":
        assert len(acc.conflicts) == conflicts + 1 and "after response.done" in acc.conflicts[-1]
    else:
        assert len(acc.conflicts) == conflicts
    new = [w.code for w in acc.warnings][len(warnings) :]
    expected = {"start_apply": ["response_not_created"], "repeat_end": ["done_repeated"]}
    assert new == expected.get(action, [])
    if action.startswith("start"):
        assert isinstance(out[0], sw.MessageStarted)
    if following == "closed":
        assert acc.ended
        if action in ("end", "start_end", "decide"):
            assert isinstance(out[-1], sw.MessageCompleted)
            assert out[-1].status == ("completed" if "end" in action else "incomplete")
    else:
        assert not acc.ended
    if action in ("nothing", "repeat_end", "after_end", "repeat"):
        assert out == []


# --- the item machine ------------------------------------------------------------------------

I_STATES = ("absent", "open", "done")
I_INPUTS: tuple[ItemInput, ...] = get_args(ItemInput)
_AT = {"response_id": "resp_i", "item_id": "item_i", "output_index": 0, "content_index": 0}
_I_INPUT: dict[ItemInput, dict[str, Any]] = {
    "added": RT.e(
        "response.output_item.added",
        response_id="resp_i",
        output_index=0,
        item=RT.message_item("item_i", "in_progress", []),
    ),
    "delta": RT.e("response.output_text.delta", delta="x", **_AT),
    "full": RT.e("response.output_text.done", text="x", **_AT),
    "done": RT.e(
        "response.output_item.done",
        response_id="resp_i",
        output_index=0,
        item=RT.message_item("item_i", "completed", [{"type": "output_text", "text": "x"}]),
    ),
}
_I_PATHS: dict[str, list[ItemInput]] = {
    "absent": [],
    "open": ["added", "delta"],
    "done": ["added", "delta", "done"],
}


@pytest.mark.parametrize(("state", "input"), list(itertools.product(I_STATES, I_INPUTS)))
def test_every_item_state_pair(state: str, input: ItemInput) -> None:
    assert set(ITEMS) == set(itertools.product(I_STATES, I_INPUTS))
    acc = Accumulator("openai-realtime")
    machine = RealtimeResponse(acc)
    out: list[sw.Event] = []
    machine.on_event(RT.created("resp_i"), out)
    for step in _I_PATHS[state]:
        machine.on_event(_I_INPUT[step], out)
    conflicts, warnings = len(acc.conflicts), len(acc.warnings)
    machine.on_event(_I_INPUT[input], out)
    action, following = ITEMS[state, input]  # type: ignore[index]
    assert machine.items.items["item_i"].state == following
    new_warnings = [w.code for w in acc.warnings][warnings:]
    assert new_warnings == (["item_not_announced"] if action == "adopt" else [])
    if action == "conflict":
        assert len(acc.conflicts) == conflicts + 1 and "after it was done" in acc.conflicts[-1]
    else:
        assert len(acc.conflicts) == conflicts, acc.conflicts
    text = {("absent", "added"): "", ("open", "delta"): "xx"}.get((state, input), "x")
    assert "".join(acc.choices[0].text) == text, "each delta; a full copy only when none came"


# --- endings ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("status", "details", "expected", "stop", "raw"),
    [
        ("completed", None, "completed", "stop", "completed"),
        (
            "incomplete",
            {"type": "incomplete", "reason": "max_output_tokens"},
            "truncated",
            "length",
            "max_output_tokens",
        ),
        (
            "incomplete",
            {"type": "incomplete", "reason": "content_filter"},
            "completed",
            "content_filter",
            "content_filter",
        ),
        (
            "incomplete",
            {"type": "incomplete", "reason": "something_new"},
            "incomplete",
            "other",
            "something_new",
        ),
        (
            "cancelled",
            {"type": "cancelled", "reason": "turn_detected"},
            "cancelled",
            "other",
            "turn_detected",
        ),
        (
            "failed",
            {"type": "failed", "error": {"type": "server_error", "code": "x"}},
            "error",
            "error",
            "failed",
        ),
        ("in_progress", None, "incomplete", "other", "in_progress"),
    ],
)
def test_response_done_statuses(
    status: str, details: dict[str, Any] | None, expected: str, stop: str, raw: str
) -> None:
    session = _session()
    _feed(session, _text("resp_1", status=status, status_details=details))
    result = session.result
    assert (result.status, result.stop_reason, result.provider_stop_reason) == (expected, stop, raw)
    assert result.final and session.current is None
    if status == "failed":
        assert result.error is not None and result.error.retryable
    if status == "in_progress":
        assert "unknown_status" in {w.code for w in result.warnings}


def test_the_full_copies_must_equal_the_deltas() -> None:
    session = _session()
    messages = _text("resp_1", "Hello")
    done_text = next(m for m in messages if m["type"] == "response.output_text.done")
    done_text["text"] = "Hellx"
    _feed(session, messages)
    assert session.result.status == "protocol_conflict"
    assert any("differs from its deltas" in c for c in session.result.conflicts)


def test_output_only_in_response_done_is_the_content() -> None:
    session = _session()
    item = RT.message_item("item_1", "completed", [{"type": "output_text", "text": "Whole"}])
    _feed(session, [RT.created("resp_1"), RT.done("resp_1", "completed", [item], None)])
    assert session.result.text == "Whole"
    assert "output_not_streamed" in {w.code for w in session.result.warnings}


def test_calls_keyed_by_item_and_identified_by_call_id() -> None:
    session = _session()
    messages = _call("resp_1", "call_1")
    delta = next(m for m in messages if m["type"] == "response.function_call_arguments.delta")
    delta["call_id"] = "call_other"
    _feed(session, messages)
    assert session.result.status == "protocol_conflict"
    assert any("changed its id" in c for c in session.result.conflicts)


def test_arguments_after_the_call_completed_are_a_conflict() -> None:
    session = _session()
    messages = _call("resp_1", "call_1")
    late = RT.e(
        "response.function_call_arguments.delta",
        response_id="resp_1",
        item_id="item_resp_1",
        output_index=0,
        call_id="call_1",
        delta="x",
    )
    _feed(session, [*messages[:-2], late, *messages[-2:]])
    assert any("after it completed" in c for c in session.result.conflicts)


def test_mcp_calls_are_server_calls() -> None:
    session = _session()
    item = {
        "id": "mcp_1",
        "type": "mcp_call",
        "server_label": "docs",
        "name": "search",
        "arguments": "",
    }
    done = {**item, "arguments": '{"q":"x"}', "output": "found"}
    at = {"response_id": "resp_1", "item_id": "mcp_1", "output_index": 0}
    _feed(
        session,
        [
            RT.created("resp_1"),
            RT.e("response.output_item.added", response_id="resp_1", output_index=0, item=item),
            RT.e("response.mcp_call_arguments.delta", delta='{"q":"x"}', **at),
            RT.e("response.mcp_call_arguments.done", arguments='{"q":"x"}', **at),
            RT.e("response.mcp_call.completed", item_id="mcp_1", output_index=0),
            RT.e("response.output_item.done", response_id="resp_1", output_index=0, item=done),
            RT.done("resp_1", "completed", [done], None),
        ],
    )
    result = session.result
    [call] = result.tool_calls
    assert (call.executor, call.name, call.id, call.arguments) == (
        "server",
        "search",
        "mcp_1",
        {"q": "x"},
    )
    assert result.stop_reason == "stop" and not result.executable and session.response_count == 1
    with pytest.raises(sw.ToolResultError, match="provider itself"):
        sw.tool_result(session, "mcp_1", "x")


def test_max_tool_calls_is_an_error() -> None:
    session = _session(max_tool_calls=1)
    _feed(
        session,
        [
            RT.created("r"),
            *RT.call("r", "i1", "c1", "f", 0, ["{}"]),
            *RT.call("r", "i2", "c2", "f", 1, ["{}"]),
        ],
    )
    session.close()
    assert session.result.error is not None and session.result.error.type == "too_many_tool_calls"


# --- routing -----------------------------------------------------------------------------------


def test_overlapping_responses_stay_apart() -> None:
    session = _session()
    a, b = _text("resp_a", "AAA"), _text("resp_b", "BBB")
    interleaved = [m for pair in itertools.zip_longest(a, b) for m in pair if m is not None]
    owners: list[int | None] = []
    for message in interleaved:
        session.feed_message(message)
        owners += session.last_turns
    assert [r.text for r in session.results] == ["AAA", "BBB"]
    assert all(r.status == "completed" for r in session.results)
    assert "responses_overlap" in {w.code for w in session.warnings}
    assert set(owners) == {0, 1}


def test_input_for_a_finished_response_is_the_sessions_conflict() -> None:
    session = _session()
    session.feed_message(RT.session_created())
    messages = _text("resp_1")
    _feed(session, messages)
    before = session.result
    assert session.feed_message(messages[3]) == []  # a delta after response.done
    assert session.feed_message(messages[-1]) == []  # response.done again
    assert session.result == before, "a finished response's result never changes"
    assert len(session.conflicts) == 1 and "after its response.done" in session.conflicts[0]
    assert [w.code for w in session.warnings] == ["done_repeated"]


def test_errors_belong_to_the_session_not_to_the_response_in_flight() -> None:
    session = _session()
    messages = _text("resp_1")
    error = RT.e(
        "error",
        error={
            "type": "invalid_request_error",
            "code": "conversation_already_has_active_response",
            "message": "busy",
        },
    )
    _feed(session, [*messages[:3], error, *messages[3:]])
    assert session.result.status == "completed" and session.result.error is None
    assert [e.code for e in session.errors] == ["conversation_already_has_active_response"]


def test_close_and_cancel_decide_the_responses_in_flight() -> None:
    closed = _session()
    _feed(closed, _text("resp_1")[:3])
    closed.close()
    assert closed.result.status == "incomplete"
    cancelled = _session()
    _feed(cancelled, _text("resp_1")[:3])
    events = cancelled.cancel()
    assert events[-1].status == "cancelled" and cancelled.last_turns == (0,)  # type: ignore[attr-defined]


# --- audio and tool results --------------------------------------------------------------------


def test_audio_is_counted_and_kept_on_request() -> None:
    chunks = [base64.b64encode(bytes(range(n))).decode() for n in (1, 2, 3, 7)]
    messages = [RT.created("resp_1"), *RT.audio_message("resp_1", "item_1", 0, ["Hi"], chunks)]
    for mode in ("count", "keep"):
        session = _session(audio=mode)
        _feed(session, [*messages, RT.done("resp_1", "completed", [], None)])
        assert dict(session.result.provider_metrics) == {"audio_deltas": 4, "audio_bytes": 13}
        assert session.result.text == "Hi"
        if mode == "keep":
            assert session.audio() == b"".join(bytes(range(n)) for n in (1, 2, 3, 7))
            assert session.audio(0) == session.audio()
            with pytest.raises(sw.UsageError):
                session.audio(3)
    session = _session(audio="keep")
    bad = RT.e(
        "response.output_audio.delta",
        delta="not base64!",
        response_id="r",
        item_id="i",
        output_index=0,
        content_index=0,
    )
    _feed(session, [RT.created("r"), bad])
    assert "invalid_audio" in {w.code for w in session.current.warnings}  # type: ignore[union-attr]


def test_tool_results_and_cancelled_responses() -> None:
    session = _session()
    _feed(session, _call("resp_1", "call_1"))
    _feed(
        session,
        _call(
            "resp_2",
            "call_2",
            "cancelled",
            status_details={"type": "cancelled", "reason": "client_cancelled"},
        ),
    )
    assert sw.tool_result(session, "call_1", {"t": 1}) == {
        "type": "conversation.item.create",
        "item": {"type": "function_call_output", "call_id": "call_1", "output": '{"t": 1}'},
    }
    assert session.result.status == "cancelled"
    [call] = session.result.tool_calls
    assert call.state == "valid" and not call.executable
    for source in (session, session.result):
        with pytest.raises(sw.ToolResultError, match="cancelled response"):
            sw.tool_result(source, "call_2", "x")
    with pytest.raises(sw.ToolResultError, match="no tool call"):
        sw.tool_result(session, "call_3", "x")


# --- properties --------------------------------------------------------------------------------

_MESSAGES = [
    RT.session_created(),
    *_call("resp_p", "call_p"),
    *_text("resp_q", "Q"),
    RT.e("error", error="text"),
    RT.e("response.output_text.delta", delta=5, response_id="resp_q", item_id="x"),
    RT.e("response.content_part.added", part="no", response_id="resp_p", item_id="y"),
    RT.e("response.output_item.done", item={"type": "future"}, response_id="resp_z"),
    RT.e("response.done", response="no"),
    {"type": 3},
]


@settings(max_examples=150, deadline=None)
@given(
    st.lists(
        st.one_of(
            st.sampled_from(_MESSAGES),
            st.text(max_size=20),
            st.dictionaries(
                st.sampled_from(["type", "response_id", "item_id", "delta", "item", "part"]),
                st.one_of(st.none(), st.sampled_from(["resp_p", "response.done", "item_p"])),
            ),
        ),
        max_size=30,
    ),
    st.sampled_from(["close", "cancel"]),
)
def test_no_message_sequence_makes_the_session_raise(messages: list[Any], end: str) -> None:
    session = _session(audio="keep")
    for message in messages:
        events = session.feed_message(message)
        assert len(session.last_turns) == len(events)
    session.close() if end == "close" else session.cancel()
    assert all(r.final and r.status != "in_progress" for r in session.results)
