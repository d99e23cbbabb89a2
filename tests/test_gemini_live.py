"""The ``gemini-live`` session: its machine, pair by pair, and what a turn makes of a message.

Fixture replays (``test_fixtures.py``) cover whole sessions. Here: every
(phase, input) pair of ``SESSION`` is a listed transition whose effect is
checked; the order in which one message's parts are read (a turn's end and a
tool call in one message, livekit/agents#7151); endings and
``turnCompleteReason``; calls withdrawn by ``toolCallCancellation``; usage;
audio; tool results and ``tool_response``; and a property: no sequence of
messages makes the session raise.
"""

from __future__ import annotations

import base64
import itertools
import json
from dataclasses import replace
from typing import Any, get_args

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import streamwire as sw
from streamwire.protocols.gemini_live import (
    SESSION,
    GeminiLiveSession,
    SessionInput,
    SessionPhase,
    tool_response,
)
from streamwire.protocols.gemini_live_turns import stop_of
from ws_messages import live_audio, live_calls, live_text, live_usage

SETUP = {"setupComplete": {}}
PHASES: tuple[SessionPhase, ...] = get_args(SessionPhase)
INPUTS: tuple[SessionInput, ...] = get_args(SessionInput)


def _session(**options: Any) -> GeminiLiveSession:
    session = sw.stream("gemini-live", **options)
    assert isinstance(session, GeminiLiveSession)
    return session


def _feed(session: sw.Stream, messages: list[dict[str, Any]]) -> list[sw.Event]:
    out: list[sw.Event] = []
    for message in messages:
        out += session.feed_message(json.dumps(message).encode())
    return out


# --- the session machine, pair by pair -------------------------------------------------------

_INPUT: dict[SessionInput, dict[str, Any]] = {
    "setup": SETUP,
    "content": live_text("x"),
    "tool_call": live_calls(("fc-new", "f", {"a": 1})),
    "cancellation": {"toolCallCancellation": {"ids": ["fc-path"]}},
    "interrupted": {"serverContent": {"interrupted": True}},
    "generation_complete": {"serverContent": {"generationComplete": True}},
    "turn_complete": {"serverContent": {"turnComplete": True}},
    "usage": {"usageMetadata": live_usage(4, 2)},
    "go_away": {"goAway": {"timeLeft": "1s"}},
    "resumption": {"sessionResumptionUpdate": {"newHandle": "h-1", "resumable": True}},
    "unknown": {"mystery": {"a": 1}},
}
_PATHS: dict[SessionPhase, list[dict[str, Any]]] = {
    "connecting": [],
    "idle": [SETUP],
    "turn": [SETUP, live_text("p")],
    "generated": [SETUP, live_text("p"), {"serverContent": {"generationComplete": True}}],
    "tail": [SETUP, live_calls(("fc-path", "f", {}))],
}


def test_session_table_lists_every_pair() -> None:
    assert set(SESSION) == set(itertools.product(PHASES, INPUTS))
    for action, following in SESSION.values():
        assert following in PHASES and action


@pytest.mark.parametrize(("phase", "input"), list(itertools.product(PHASES, INPUTS)))
def test_every_session_pair(phase: SessionPhase, input: SessionInput) -> None:
    session = _session()
    _feed(session, _PATHS[phase])
    assert session.phase == phase
    turns, warnings = session.response_count, len(session.warnings)
    last = session.results[-1] if session.results else None
    events = _feed(session, [_INPUT[input]])
    action, following = SESSION[phase, input]
    assert session.phase == following
    assert len(session.last_turns) == len(events)
    new = [w.code for w in session.warnings][warnings:]
    opens = "open" in action
    assert session.response_count == turns + (1 if opens else 0)
    if opens:
        assert isinstance(events[0], sw.MessageStarted)
    if action.startswith("early"):
        assert new[:1] == ["setup_not_complete"]
    result = session.result
    if action in ("setup_again", "stray", "go_away"):
        code = {"setup_again": "setup_repeated", "stray": "nothing_in_flight"}.get(action, action)
        assert new == [code] and events == []
        if action == "go_away":
            assert session.go_away == "1s"
    elif action == "resumption":
        assert session.resumption_handle == "h-1" and events == []
    elif action == "unknown":
        assert [type(e) for e in events] == [sw.UnknownEvent]
        owner = session.last_turns[0]
        assert owner == (session.response_count - 1 if phase in ("turn", "generated") else None)
    elif action == "revoke":
        if phase == "tail":
            [withdrawn] = events
            assert isinstance(withdrawn, sw.ToolCallCompleted)
            assert withdrawn.invalid_reason is not None
            [call] = session.results[0].tool_calls
            assert call.state == "rejected" and not session.results[0].executable
        else:
            assert new == ["unknown_cancellation"] and events == []
    elif action == "usage":
        if last is None:
            assert new == ["usage_without_turn"] and events == []
        else:
            [reported] = events
            assert isinstance(reported, sw.UsageReported)
            assert reported.usage.final == (phase not in ("turn", "generated"))
    elif action.endswith("calls"):
        assert result.stop_reason == "tool_calls" and result.final and result.executable
        assert result.provider_stop_reason == "toolCall"
    elif action == "interrupt":
        assert result.status == "cancelled" and result.provider_stop_reason == "interrupted"
    elif action.endswith("end") and not action.startswith("absorb"):
        assert result.status == "completed" and result.final
        assert result.provider_stop_reason == "turnComplete"
    elif action in ("absorb", "absorb_end"):
        assert events == [] and last is not None
        # The tail's messages are the ended turn's (its wire counters), nothing else changes.
        assert replace(session.result, metrics=last.metrics) == last
    elif action == "after_generation":
        assert result.status == "protocol_conflict" and len(result.conflicts) == 1
        assert result.text == "px"
    elif action == "interrupted_playback":
        assert new == [] and "interrupted_after_generation" in {w.code for w in result.warnings}
    elif action in ("open_generated", "generated", "repeat"):
        assert session.current is not None and not session.current.final
    if following in ("turn", "generated"):
        assert session.current is not None
    else:
        assert session.current is None


def test_one_message_with_content_a_tool_call_and_the_turn_end() -> None:
    # livekit/agents#7151: serverContent with turnComplete and a toolCall in one message.
    message = {
        **live_calls(("fc-1", "lookup", {"q": "x"})),
        "serverContent": {
            "modelTurn": {"parts": [{"text": "Checking."}]},
            "turnComplete": True,
        },
        "usageMetadata": live_usage(10, 4),
    }
    session = _session()
    events = _feed(session, [SETUP, message])
    assert [type(e).__name__ for e in events] == [
        "MessageStarted",
        "TextDelta",
        "ToolCallStarted",
        "ToolCallArgumentsDelta",
        "ToolCallCompleted",
        "MessageCompleted",
        "UsageReported",
    ]
    assert session.response_count == 1 and session.phase == "idle"
    result = session.result
    assert (result.text, result.stop_reason, result.executable) == ("Checking.", "tool_calls", True)
    assert result.usage is not None and result.usage.final


# --- endings -----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("reason", "stop", "status"),
    [
        ("TURN_COMPLETE_REASON_UNSPECIFIED", "stop", "completed"),
        ("NEED_MORE_INPUT", "stop", "completed"),
        ("MALFORMED_FUNCTION_CALL", "error", "error"),
        ("RESPONSE_REJECTED", "content_filter", "completed"),
        ("GENERATED_AUDIO_SAFETY", "content_filter", "completed"),
        ("PROHIBITED_INPUT_CONTENT", "content_filter", "completed"),
        ("MAX_REGENERATION_REACHED", "other", "completed"),
    ],
)
def test_turn_complete_reasons(reason: str, stop: str, status: str) -> None:
    assert stop_of(reason) == stop
    session = _session()
    end = {"serverContent": {"turnComplete": True, "turnCompleteReason": reason}}
    _feed(session, [SETUP, live_text("a"), end])
    result = session.result
    assert (result.status, result.stop_reason, result.provider_stop_reason) == (
        status,
        stop,
        reason,
    )


def test_endings_at_close_and_cancel() -> None:
    generated = _session()
    _feed(generated, [SETUP, live_text("a"), {"serverContent": {"generationComplete": True}}])
    generated.close()
    result = generated.result
    assert (result.status, result.stop_reason) == ("completed", "stop")
    assert "turn_complete_missing" in {w.code for w in result.warnings}
    cut = _session()
    _feed(cut, [SETUP, live_text("a")])
    cut.close()
    assert cut.result.status == "incomplete"
    cancelled = _session()
    _feed(cancelled, [SETUP, live_text("a")])
    cancelled.cancel()
    assert cancelled.result.status == "cancelled"
    closed = _session()
    _feed(closed, [SETUP, live_text("a")])
    closed.connection_closed(1011, "Internal error encountered.")
    assert closed.result.error is not None
    assert (closed.result.error.phase, closed.result.error.code) == ("transport", 1011)
    assert closed.result.error.retryable


# --- calls -------------------------------------------------------------------------------------


def test_cancellation_withdraws_calls_of_an_ended_turn_once() -> None:
    session = _session()
    _feed(session, [SETUP, live_calls(("fc-a", "f", {}), ("fc-b", "g", {})), live_text("later")])
    assert session.results[0].executable
    events = _feed(session, [{"toolCallCancellation": {"ids": ["fc-b"]}}])
    assert session.last_turns == (0,) and [type(e) for e in events] == [sw.ToolCallCompleted]
    first = session.results[0]
    assert [c.state for c in first.tool_calls] == ["valid", "rejected"]
    assert not first.executable and "cancelled by the provider" in (
        first.not_executable_reason or ""
    )
    assert _feed(session, [{"toolCallCancellation": {"ids": ["fc-b"]}}]) == []
    assert sw.tool_result(session, "fc-a", "done") == {
        "name": "f",
        "id": "fc-a",
        "response": {"output": "done"},
    }
    for source in (session, first):
        with pytest.raises(sw.ToolResultError, match="toolCallCancellation"):
            sw.tool_result(source, "fc-b", "x")
    assert tool_response([sw.tool_result(session, "fc-a", {"t": 1})]) == {
        "toolResponse": {"functionResponses": [{"name": "f", "id": "fc-a", "response": {"t": 1}}]}
    }


def test_cancellation_of_a_call_already_rejected_keeps_why() -> None:
    tools = [{"name": "f", "parameters": {"type": "object", "required": ["a"]}}]
    session = _session(tools=tools)
    _feed(
        session, [SETUP, live_calls(("fc-a", "f", {})), {"toolCallCancellation": {"ids": ["fc-a"]}}]
    )
    [call] = session.result.tool_calls
    assert call.state == "rejected"
    assert call.invalid_reason is not None and "already rejected" in call.invalid_reason


def test_malformed_tool_calls_are_conflicts() -> None:
    session = _session()
    _feed(session, [SETUP, {"toolCall": {"functionCalls": "nope"}}])
    assert session.result.status == "protocol_conflict"
    other = _session()
    _feed(other, [SETUP, {"toolCallCancellation": {"ids": "nope"}}])
    assert other.conflicts


# --- usage, audio, content ---------------------------------------------------------------------


def test_usage_snapshots_replace_each_other_and_turn_final_at_the_end() -> None:
    session = _session()
    events = _feed(
        session,
        [
            SETUP,
            live_text("a"),
            {"usageMetadata": live_usage(5, 1)},
            {"usageMetadata": live_usage(5, 1)},  # the same snapshot: no new report
            {"usageMetadata": {**live_usage(5, 2), "thoughtsTokenCount": 3}},
            {"serverContent": {"turnComplete": True}},
            {"usageMetadata": {"trafficType": "ON_DEMAND"}},  # no figures: no report
        ],
    )
    reports = [e for e in events if isinstance(e, sw.UsageReported)]
    assert [(r.usage.output_tokens, r.usage.final) for r in reports] == [(1, False), (5, False)]
    usage = session.result.usage
    assert usage is not None and usage.reasoning_tokens == 3 and usage.output_tokens == 5
    late = _feed(session, [{"usageMetadata": live_usage(5, 2)}])
    assert [r.usage.final for r in late] == [True]  # type: ignore[attr-defined]


def test_audio_parts_are_counted_not_content() -> None:
    pcm = bytes(range(10))
    data = base64.b64encode(pcm).decode()
    for mode in ("count", "keep"):
        session = _session(audio=mode)
        _feed(session, [SETUP, live_audio(data, "Hi"), live_audio(data)])
        result = session.current
        assert result is not None
        assert dict(result.provider_metrics) == {"audio_deltas": 2, "audio_bytes": 20}
        assert result.text == "Hi" and result.provider_content == ()
        if mode == "keep":
            assert session.audio() == pcm + pcm
    bad = _session(audio="keep")
    _feed(bad, [SETUP, live_audio("!!")])
    assert "invalid_audio" in {w.code for w in bad.current.warnings}  # type: ignore[union-attr]


def test_model_turn_parts_use_the_gemini_part_handling() -> None:
    session = _session()
    parts = [
        {"text": "thinking", "thought": True},
        {"text": "Answer"},
        {"text": "", "thoughtSignature": "c2ln"},
        {"executableCode": {"language": "PYTHON", "code": "1+1"}},
    ]
    _feed(
        session, [SETUP, {"serverContent": {"modelTurn": {"parts": parts}, "turnComplete": True}}]
    )
    result = session.result
    assert (result.text, result.reasoning) == ("Answer", "thinking")
    assert result.choices[0].reasoning_signatures == ("c2ln",)
    assert [next(iter(p)) for p in result.provider_content] == [
        "text",
        "text",
        "text",
        "executableCode",
    ]


def test_empty_or_known_content_starts_no_turn() -> None:
    session = _session()
    _feed(
        session,
        [
            SETUP,
            live_text(""),
            {"serverContent": {"inputTranscription": {"text": "hello?"}}},
            {"serverContent": {"outputTranscription": {"text": ""}}},
            {"voiceActivity": {"type": "ACTIVITY_START"}},
        ],
    )
    assert session.response_count == 0 and session.phase == "idle"
    assert session.unknown_events == {} and not session.warnings


def test_bad_messages() -> None:
    session = _session()
    events = session.feed_message(b"\xff")
    assert [e.type for e in events] == ["invalid_utf8"]  # type: ignore[attr-defined]
    _feed(session, [SETUP, {"serverContent": "nope"}])
    assert session.conflicts == ("serverContent is not an object",)
    _feed(session, [live_text("a"), {"serverContent": {"modelTurn": {"parts": "x"}}}])
    assert session.current is not None and session.current.status == "protocol_conflict"


def test_the_fast_text_path_does_what_the_general_path_does(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from fixture_replay import _comparable, facts, manifests

    for fixture in (f for f in manifests() if f.protocol == "gemini-live"):
        fast, fast_events, _ = fixture.replay_messages("str")
        with monkeypatch.context() as patch:
            patch.setattr(GeminiLiveSession, "_fast_text", lambda self, obj, out: False)
            slow, slow_events, _ = fixture.replay_messages("str")
        assert [_comparable(e) for e in fast_events] == [_comparable(e) for e in slow_events]
        assert [facts(r) for r in fast.results] == [facts(r) for r in slow.results]  # type: ignore[attr-defined]
        assert [r.provider_content for r in fast.results] == [  # type: ignore[attr-defined]
            r.provider_content
            for r in slow.results  # type: ignore[attr-defined]
        ]


# --- properties --------------------------------------------------------------------------------

_MESSAGES = [*_INPUT.values(), *_PATHS["generated"], live_audio("AAAA", "t"), {}]


@settings(max_examples=200, deadline=None)
@given(
    st.lists(
        st.one_of(
            st.sampled_from(_MESSAGES),
            st.binary(max_size=12),
            st.dictionaries(
                st.sampled_from(["serverContent", "toolCall", "usageMetadata", "setupComplete"]),
                st.one_of(
                    st.none(),
                    st.integers(),
                    st.fixed_dictionaries({"turnComplete": st.booleans()}),
                    st.fixed_dictionaries({"functionCalls": st.lists(st.none(), max_size=2)}),
                ),
            ),
        ),
        max_size=30,
    ),
    st.sampled_from(["close", "cancel"]),
)
def test_no_message_sequence_makes_the_session_raise(messages: list[Any], end: str) -> None:
    session = _session()
    for message in messages:
        events = session.feed_message(message)
        assert len(session.last_turns) == len(events)
    session.close() if end == "close" else session.cancel()
    assert all(r.final and r.status != "in_progress" for r in session.results)
