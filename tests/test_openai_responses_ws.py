"""The ``openai-responses-ws`` session: its routing machine, pair by pair, and its API.

Fixture replays (``test_fixtures.py``) cover the wire behaviours; the per-response
machine is the HTTP adapter's (``test_openai_responses_machine.py``). Here:
every (phase, input) pair of ``SESSION`` is a listed transition whose effect is
checked; the session API (``feed`` refused, messages as str / bytes / dict,
``results`` / ``current`` / ``result`` / ``last_turns``, ``previous_response_id``);
bad messages, close codes, cancel, caps, timings; tool results found across the
session's responses; and a property: no sequence of messages makes it raise.
"""

from __future__ import annotations

import itertools
import json
from typing import Any, get_args

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import streamwire as sw
from streamwire.protocols.openai_responses_ws import (
    SESSION,
    OpenAIResponsesSession,
    SessionInput,
    SessionPhase,
)
from ws_messages import Responses, responses_error, responses_usage

PHASES: tuple[SessionPhase, ...] = get_args(SessionPhase)
INPUTS: tuple[SessionInput, ...] = get_args(SessionInput)


def _session(**options: Any) -> OpenAIResponsesSession:
    session = sw.stream("openai-responses-ws", **options)
    assert isinstance(session, OpenAIResponsesSession)
    return session


def _text_response(rid: str, text: str = "Hi", previous: str | None = None) -> list[dict[str, Any]]:
    r = Responses(rid, previous=previous)
    return [
        r.created(),
        *r.message_events(f"msg_{rid}", 0, [text]),
        r.completed([r.message_item(f"msg_{rid}", text)], responses_usage(3, 1)),
    ]


def _call_response(rid: str, call_id: str) -> list[dict[str, Any]]:
    r = Responses(rid)
    args = '{"q":1}'
    return [
        r.created(),
        r.call_added(f"fc_{rid}", call_id, "lookup", 0),
        r.arguments_delta(f"fc_{rid}", 0, args),
        *r.call_done(f"fc_{rid}", call_id, "lookup", 0, args),
        r.completed([r.call_item(f"fc_{rid}", call_id, "lookup", args, "completed")], {}),
    ]


def _feed(session: sw.Stream, messages: list[dict[str, Any]]) -> list[sw.Event]:
    out: list[sw.Event] = []
    for message in messages:
        out += session.feed_message(json.dumps(message))
    return out


# --- the session machine, pair by pair -------------------------------------------------------

#: A representative message of each input.
_INPUT: dict[SessionInput, dict[str, Any]] = {
    "lifecycle": {
        "type": "response.created",
        "response": {"id": "resp_new", "status": "in_progress"},
    },
    "content": {
        "type": "response.output_item.added",
        "output_index": 0,
        "item": {"id": "msg_x", "type": "message", "role": "assistant", "content": []},
    },
    "terminal": {
        "type": "response.completed",
        "response": {"id": "resp_new", "status": "completed"},
    },
    "error": responses_error("server_error", "boom", "server_error", 500),
    "unknown": {"type": "response.not_yet_invented"},
}
#: How to bring a fresh session into each phase.
_PATHS: dict[SessionPhase, list[dict[str, Any]]] = {
    "idle": [],
    "responding": [
        {"type": "response.created", "response": {"id": "resp_old", "status": "in_progress"}}
    ],
}


def test_session_table_lists_every_pair() -> None:
    assert set(SESSION) == set(itertools.product(PHASES, INPUTS))
    for (_phase, _input), (action, following) in SESSION.items():
        assert following in PHASES and isinstance(action, str)


@pytest.mark.parametrize(("phase", "input"), list(itertools.product(PHASES, INPUTS)))
def test_every_session_phase_input_pair(phase: SessionPhase, input: SessionInput) -> None:
    session = _session()
    _feed(session, _PATHS[phase])
    assert session.phase == phase
    before = session.response_count
    events = session.feed_message(_INPUT[input])
    action, following = SESSION[phase, input]
    assert session.phase == following
    assert len(session.last_turns) == len(events)
    if action == "session_unknown":
        assert session.response_count == before and session.unknown_events == {
            "response.not_yet_invented": 1
        }
        assert session.last_turns == (None,)
    elif action.startswith("open"):
        assert session.response_count == before + 1
        assert all(n == before for n in session.last_turns)
        if action == "open_implicit":
            assert "response_not_created" in {w.code for w in session.result.warnings}
    elif action == "apply_or_supersede":  # another id: the one in flight was superseded
        assert session.response_count == 2
        first = session.results[0]
        assert first.status == "incomplete" and first.final
        assert "response_superseded" in {w.code for w in first.warnings}
    else:  # apply / apply_end: the response in flight
        assert session.response_count == before
    if following == "idle":
        assert session.current is None
        assert session.result.final == bool(session.results), "no response: still open"
    else:
        assert session.current is not None and not session.current.final
    if input == "error":
        assert session.result.status == "error"
        assert session.result.error is not None and session.result.error.retryable


def test_a_repeated_terminal_event_is_only_a_warning() -> None:
    session = _session()
    messages = _text_response("resp_1")
    _feed(session, messages)
    assert session.feed_message(messages[-1]) == []
    assert session.response_count == 1
    assert [w.code for w in session.warnings] == ["terminal_repeated"]
    assert session.result.status == "completed" and not session.result.warnings


# --- the session API -----------------------------------------------------------------------------


def test_feed_is_refused_and_feed_message_takes_str_bytes_and_dict() -> None:
    session = _session()
    with pytest.raises(sw.UsageError, match="feed_message"):
        session.feed(b"{}")
    created = _text_response("resp_1")[0]
    original = json.loads(json.dumps(created))
    session.feed_message(created)
    assert created == original, "a dict message is never modified"
    r = Responses("resp_1")
    r.created()
    session.feed_message(json.dumps(r.in_progress()).encode())
    with pytest.raises(sw.UsageError, match="str, bytes or a dict"):
        session.feed_message(42)  # type: ignore[arg-type]
    session.close()
    with pytest.raises(sw.UsageError, match="closed"):
        session.feed_message("{}")
    assert session.close() == [] and session.cancel() == []


def test_results_current_result_and_attribution() -> None:
    session = _session()
    assert session.result.status == "in_progress" and session.results == ()
    first = _text_response("resp_1", "One")
    _feed(session, first[:3])
    assert session.current is not None and session.current.text == ""
    _feed(session, first[3:])
    assert session.current is None and session.result.text == "One"
    _feed(session, _text_response("resp_2", "Two", previous="resp_1")[:3])
    assert [r.text for r in session.results] == ["One", ""]
    assert session.result is session.current or session.result == session.current
    events = session.close()
    assert session.last_turns == (1,) * len(events)
    assert [r.status for r in session.results] == ["completed", "incomplete"]
    assert session.result_of(0) == session.results[0] and session.result_of(5) is None


def test_previous_response_id_is_the_latest_completed_response() -> None:
    session = _session()
    assert session.previous_response_id is None
    _feed(session, _text_response("resp_1"))
    assert session.previous_response_id == "resp_1"
    session.feed_message(responses_error("previous_response_not_found", "gone", None, 400))
    assert session.result.status == "error"
    assert session.previous_response_id == "resp_1", "a failed turn does not move the chain"
    _feed(session, _text_response("resp_3"))
    assert session.previous_response_id == "resp_3"


@pytest.mark.parametrize(
    ("message", "kind"),
    [
        ("not json", "invalid_json"),
        ("[1, 2]", "invalid_payload"),
        (b"\xff\xfe", "invalid_utf8"),
        ("x" * 65, "message_too_large"),
    ],
)
def test_bad_messages_are_framing_errors_of_the_response_in_flight(
    message: str | bytes, kind: str
) -> None:
    session = _session(max_message_bytes=64)
    [error] = session.feed_message(message)
    assert isinstance(error, sw.ErrorReceived) and error.type == kind and error.phase == "framing"
    assert session.errors[0].type == kind and session.results == ()
    session.feed_message({"type": "response.created", "response": {"id": "resp_1"}})
    events = session.feed_message(message)
    assert [type(e) for e in events] == [sw.ErrorReceived] and session.last_turns == (0,)
    assert session.current is not None, "the response stays in flight: later messages are whole"
    session.close()
    assert session.result.status == "error" and not session.result.framing_ok
    assert len(session.errors) == 1


@pytest.mark.parametrize(
    ("code", "status", "retryable"),
    [
        (1000, "incomplete", None),
        (1005, "incomplete", None),
        (1011, "error", True),
        (1008, "error", False),
    ],
)
def test_connection_closed(code: int, status: str, retryable: bool | None) -> None:
    session = _session()
    _feed(session, _text_response("resp_1")[:3])
    session.connection_closed(code, "bye")
    result = session.result
    assert result.status == status and result.final and session.closed
    if retryable is not None:
        assert result.error is not None
        assert (result.error.phase, result.error.type, result.error.code) == (
            "transport",
            "websocket_close",
            code,
        )
        assert result.error.retryable is retryable and result.error.message == "bye"
    idle = _session()
    idle.connection_closed(1011)
    assert idle.errors[0].code == 1011 and idle.result.status == "error"
    assert idle.connection_closed(1011) == []


def test_cancel_and_close_without_responses() -> None:
    session = _session()
    [done] = session.cancel()
    assert isinstance(done, sw.MessageCompleted) and done.status == "cancelled"
    assert session.result.status == "cancelled" and session.last_turns == (None,)
    closed = _session()
    [done] = closed.close()
    assert done.status == "incomplete"
    finished = _session()
    _feed(finished, _text_response("resp_1"))
    assert finished.cancel() == [] and finished.result.status == "completed"


def test_max_results_forgets_the_oldest_finished_responses() -> None:
    session = _session(max_results=2)
    for n in range(4):
        _feed(session, _text_response(f"resp_{n}", f"T{n}"))
    assert [r.text for r in session.results] == ["T2", "T3"]
    assert session.response_count == 4 and session.result_of(1) is None
    assert session.result_of(3) is not None and session.result_of(3).text == "T3"  # type: ignore[union-attr]
    assert [w.code for w in session.warnings] == ["results_dropped"]


def test_timings_are_per_response_from_its_first_message() -> None:
    now = [0.0]
    session = _session(clock=lambda: now[0])
    messages = _text_response("resp_1")
    now[0] = 5.0
    session.feed_message(messages[0])  # response.created: MessageStarted at once
    now[0] = 5.5
    for message in messages[1:4]:
        session.feed_message(message)  # the first delta is the fourth message
    now[0] = 9.0
    for message in messages[4:]:
        session.feed_message(message)
    metrics = session.result.metrics
    assert metrics.time_to_first_event == 0.0
    assert metrics.time_to_first_content == 0.5
    assert metrics.largest_gap == 3.5
    assert metrics.wire_events == len(messages) and metrics.events == 4


def test_audio_is_not_kept_unless_asked() -> None:
    with pytest.raises(sw.UsageError, match="audio='keep'"):
        _session().audio()
    with pytest.raises(ValueError, match="audio"):
        _session(audio="all")


# --- tool results ------------------------------------------------------------------------------


def test_tool_results_answer_calls_of_any_response_of_the_session() -> None:
    session = _session()
    _feed(session, _call_response("resp_1", "call_a"))
    _feed(session, _text_response("resp_2"))
    assert session.result.tool_calls == ()
    assert sw.tool_result(session, "call_a", {"ok": True}) == {
        "type": "function_call_output",
        "call_id": "call_a",
        "output": '{"ok": true}',
    }
    with pytest.raises(sw.ToolResultError, match=r"output item id .* call_id 'call_a'"):
        sw.tool_result(session, "fc_resp_1", "x")
    with pytest.raises(sw.ToolResultError, match="no tool call 'call_zz'"):
        sw.tool_result(session, "call_zz", "x")
    # A result alone only knows its own calls.
    with pytest.raises(sw.ToolResultError):
        sw.tool_result(session.result, "call_a", "x")
    assert sw.tool_result(session.results[0], "call_a", "x")["call_id"] == "call_a"


def test_a_cancelled_response_calls_get_no_result() -> None:
    session = _session()
    _feed(session, _call_response("resp_1", "call_a")[:-1])  # no response.completed
    session.cancel()
    assert session.result.status == "cancelled" and not session.result.executable
    with pytest.raises(sw.ToolResultError, match="cancelled"):
        sw.tool_result(session, "call_a", "x")
    with pytest.raises(sw.ToolResultError, match="cancelled"):
        sw.tool_result(session.result, "call_a", "x")


# --- properties ----------------------------------------------------------------------------------

_MESSAGES = [
    *_call_response("resp_p", "call_p"),
    *_text_response("resp_q"),
    responses_error("server_error", "boom", "server_error", 500),
    {"type": "response.unknown"},
    {"type": "response.output_text.delta", "item_id": "nope", "delta": 3},
    {"error": {"message": "chat-style"}},
    {},
]


@settings(max_examples=150, deadline=None)
@given(
    st.lists(
        st.one_of(
            st.sampled_from(_MESSAGES),
            st.text(max_size=20),
            st.binary(max_size=20),
            st.dictionaries(st.sampled_from(["type", "response", "item", "delta"]), st.none()),
        ),
        max_size=30,
    ),
    st.sampled_from(["close", "cancel"]),
)
def test_no_message_sequence_makes_the_session_raise(messages: list[Any], end: str) -> None:
    session = _session()
    count = 0
    for message in messages:
        events = session.feed_message(message)
        assert len(session.last_turns) == len(events)
        count += len(events)
    events = session.close() if end == "close" else session.cancel()
    assert len(session.last_turns) == len(events)
    assert session.result.final and all(r.final for r in session.results)
    for number in range(session.response_count):
        result = session.result_of(number)
        assert result is not None and result.status != "in_progress"
