"""The ``bedrock-converse`` machines, every (state, input) pair.

Three tables are data in the adapter: the stream-level ``PHASES``, each
content block's ``BLOCKS``, and ``BLOCK_DELTAS`` (which delta member a block
of each kind takes). Every pair of each is driven here through real frames and
its outcome checked: a listed transition does what its action says, and the
pairs that contradict the protocol are recorded conflicts (or warnings), never
silently accepted and never an exception.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable
from typing import Any, get_args

import pytest

import streamwire as sw
from bedrock_frames import converse as C
from bedrock_frames import event_frame
from streamwire.protocols import bedrock, bedrock_blocks

PHASES_BEFORE_EOF = ("before", "message", "stopped", "ended")
INPUTS = get_args(bedrock.PhaseInput)

#: Frames that bring a stream into each phase.
TO_PHASE: dict[str, list[bytes]] = {
    "before": [],
    "message": [C.start(), C.text(0, "a")],
    "stopped": [C.start(), C.text(0, "a"), C.block_stop(0), C.stop("end_turn")],
    "ended": [C.start(), C.text(0, "a"), C.block_stop(0), C.stop("end_turn"), C.metadata(2, 1)],
}
#: One frame of each input (``eof`` is ``close()``).
INPUT_FRAME: dict[str, bytes] = {
    "messageStart": C.start(),
    "contentBlockStart": C.tool_start(5, "tooluse_5", "f"),
    "contentBlockDelta": C.text(0, "z"),
    "contentBlockStop": C.block_stop(0),
    "messageStop": C.stop("end_turn"),
    "metadata": C.metadata(3, 4),
}


#: What each block input emits inside the message (``INPUT_FRAME``).
BLOCK_EVENTS = {
    "contentBlockStart": ["ToolCallStarted"],
    "contentBlockDelta": ["TextDelta"],
    "contentBlockStop": [],
}


def _drive(phase: str) -> tuple[sw.Stream, list[sw.Event]]:
    stream = sw.stream("bedrock-converse")
    events: list[sw.Event] = []
    for frame in TO_PHASE[phase]:
        events += stream.feed(frame)
    assert stream.phase == phase  # type: ignore[attr-defined]
    return stream, events


def _types(events: list[sw.Event]) -> list[str]:
    return [type(e).__name__ for e in events]


def test_phases_table_is_complete() -> None:
    assert set(bedrock.PHASES) == set(itertools.product(PHASES_BEFORE_EOF, INPUTS))


Check = Callable[[sw.Stream, list[sw.Event], str], None]


def _conflict(stream: sw.Stream, events: list[sw.Event], input: str) -> None:
    result = stream.result
    assert len(result.conflicts) == 1, result.conflicts
    assert "ignored" in result.conflicts[0]


def _checks() -> dict[str, Check]:
    def start(stream: sw.Stream, events: list[sw.Event], input: str) -> None:
        assert _types(events) == ["MessageStarted"]

    def block(stream: sw.Stream, events: list[sw.Event], input: str) -> None:
        assert not stream.result.conflicts
        assert _types(events) == BLOCK_EVENTS[input]

    def stop(stream: sw.Stream, events: list[sw.Event], input: str) -> None:
        result = stream.result
        assert result.provider_stop_reason == "end_turn" and not result.conflicts
        assert result.status == "in_progress", "MessageCompleted waits for metadata or EOF"

    def implied_start(stream: sw.Stream, events: list[sw.Event], input: str) -> None:
        # No messageStart: the first content event implies it (a warning) and applies.
        result = stream.result
        assert [w.code for w in result.warnings] == ["missing_message_start"]
        assert not result.conflicts
        assert _types(events) == ["MessageStarted", *BLOCK_EVENTS[input]]

    def implied_start_stop(stream: sw.Stream, events: list[sw.Event], input: str) -> None:
        result = stream.result
        assert [w.code for w in result.warnings] == ["missing_message_start"]
        assert _types(events) == ["MessageStarted"]
        assert result.provider_stop_reason == "end_turn" and not result.conflicts
        stream.close()
        assert stream.result.status == "completed", "messageStop decides the ending"

    def stop_again(stream: sw.Stream, events: list[sw.Event], input: str) -> None:
        assert events == [] and not stream.result.conflicts, "the same stopReason: a no-op"

    def usage_early(stream: sw.Stream, events: list[sw.Event], input: str) -> None:
        result = stream.result
        assert result.usage is not None and not result.usage.final
        assert [w.code for w in result.warnings] == ["metadata_before_stop"]

    def final_usage(stream: sw.Stream, events: list[sw.Event], input: str) -> None:
        assert _types(events) == ["UsageReported", "MessageCompleted"]
        result = stream.result
        assert result.status == "completed" and result.usage is not None and result.usage.final

    def after_end(stream: sw.Stream, events: list[sw.Event], input: str) -> None:
        result = stream.result
        assert events == [] and not result.conflicts and result.status == "completed"
        assert [w.code for w in result.warnings] == ["data_after_end"]

    def end(stream: sw.Stream, events: list[sw.Event], input: str) -> None:
        assert stream.result.status == "incomplete" and _types(events)[-1] == "MessageCompleted"

    def without_metadata(stream: sw.Stream, events: list[sw.Event], input: str) -> None:
        result = stream.result
        assert result.status == "completed" and result.usage is None
        assert [w.code for w in result.warnings] == ["missing_metadata"]

    def nothing(stream: sw.Stream, events: list[sw.Event], input: str) -> None:
        assert events == [] and stream.result.status == "completed"

    return {
        "start": start,
        "block": block,
        "stop": stop,
        "stop_again": stop_again,
        "usage_early": usage_early,
        "final_usage": final_usage,
        "implied_start": implied_start,
        "implied_start_stop": implied_start_stop,
        "conflict_second_start": _conflict,
        "conflict_after_stop": _conflict,
        "ignore_after_end": after_end,
        "end": end,
        "end_without_metadata": without_metadata,
        "nothing": nothing,
    }


CHECKS = _checks()


def test_every_action_is_checked() -> None:
    assert set(CHECKS) == set(get_args(bedrock.PhaseAction))


@pytest.mark.parametrize(("phase", "input"), sorted(bedrock.PHASES))
def test_every_phase_pair(phase: str, input: str) -> None:
    action, next_phase = bedrock.PHASES[phase, input]  # type: ignore[index]
    stream, _ = _drive(phase)
    if input == "eof":
        events = stream.close()
    else:
        events = stream.feed(INPUT_FRAME[input])
    assert stream.phase == next_phase  # type: ignore[attr-defined]
    CHECKS[action](stream, events, input)


def test_a_changed_stop_reason_is_a_conflict() -> None:
    stream, _ = _drive("stopped")
    stream.feed(C.stop("max_tokens"))
    stream.close()
    result = stream.result
    assert result.status == "protocol_conflict" and result.provider_stop_reason == "end_turn"


def test_errors_are_accepted_in_every_phase_before_the_end() -> None:
    for phase in PHASES_BEFORE_EOF:
        stream, _ = _drive(phase)
        stream.feed(sw.encode_eventstream({":message-type": "error", ":error-code": "E"}, b""))
        stream.close()
        result = stream.result
        if phase == "ended":
            assert result.status == "completed", "the end was already decided"
            assert result.error is None and [w.code for w in result.warnings] == ["error_after_end"]
        else:
            assert result.status == "error"
            assert result.error is not None and result.error.type == "E"


# --- blocks ---------------------------------------------------------------------------

BLOCK_STATES = get_args(bedrock_blocks.BlockState)
BLOCK_INPUTS = get_args(bedrock_blocks.BlockInput)
#: Frames that put block 1 in each state (a tool block when it exists).
TO_BLOCK: dict[str, list[bytes]] = {
    "absent": [C.start()],
    "open": [C.start(), C.tool_start(1, "tooluse_1", "f")],
    "closed": [C.start(), C.tool_start(1, "tooluse_1", "f"), C.block_stop(1)],
}


def _block_input(state: str, input: str) -> bytes:
    if input == "start":
        return C.tool_start(1, "tooluse_new", "g")
    if input == "stop":
        return C.block_stop(1)
    # a delta: a text delta opens an absent block; an existing (tool) block gets its own kind
    return C.text(1, "t") if state == "absent" else C.tool_input(1, '{"a":1}')


def test_blocks_table_is_complete() -> None:
    assert set(bedrock_blocks.BLOCKS) == set(itertools.product(BLOCK_STATES, BLOCK_INPUTS))


BLOCK_EFFECTS: dict[str, tuple[list[str], int]] = {
    # action -> (unified events it emits, conflicts it records)
    "open": (["ToolCallStarted"], 0),
    "open_by_delta": (["TextDelta"], 0),
    "apply": (["ToolCallArgumentsDelta"], 0),
    "close": (["ToolCallCompleted"], 0),
    "close_empty": ([], 0),
    "conflict": ([], 1),
    "nothing": ([], 0),
}


@pytest.mark.parametrize(("state", "input"), sorted(bedrock_blocks.BLOCKS))
def test_every_block_pair(state: str, input: str) -> None:
    action, next_state = bedrock_blocks.BLOCKS[state, input]  # type: ignore[index]
    stream = sw.stream("bedrock-converse")
    for frame in TO_BLOCK[state]:
        stream.feed(frame)
    events = stream.feed(_block_input(state, input))
    emitted, conflicts = BLOCK_EFFECTS[action]
    assert _types(events) == emitted
    assert len(stream.result.conflicts) == conflicts
    block = stream._blocks.by_index[1]  # type: ignore[attr-defined]
    assert block.state == next_state


def test_a_tool_fragment_cannot_open_a_block() -> None:
    stream = sw.stream("bedrock-converse")
    stream.feed(C.start())
    assert stream.feed(C.tool_input(1, "{}")) == []
    assert "cannot be correlated" in stream.result.conflicts[0]
    assert 1 not in stream._blocks.by_index  # type: ignore[attr-defined]


def test_a_delta_of_unknown_members_only_opens_nothing() -> None:
    stream = sw.stream("bedrock-converse")
    stream.feed(C.start())
    assert stream.feed(C.delta(1, {"hologram": {}})) == []
    result = stream.result
    assert not result.conflicts and dict(result.unknown_fields) == {
        "contentBlockDelta.delta.hologram": 1
    }


# --- which delta each kind of block takes ------------------------------------------------

KIND_OPENERS: dict[str, bytes] = {
    "text": C.text(1, "t"),
    "reasoning": C.delta(1, {"reasoningContent": {"text": "r"}}),
    "tool": C.tool_start(1, "tooluse_k", "f"),
    "tool_result": event_frame(
        "contentBlockStart",
        {"contentBlockIndex": 1, "start": {"toolResult": {"toolUseId": "s", "status": "success"}}},
    ),
    "image": event_frame(
        "contentBlockStart", {"contentBlockIndex": 1, "start": {"image": {"format": "png"}}}
    ),
}
MEMBERS: dict[str, Any] = {
    "text": "x",
    "citation": {"title": "t"},
    "reasoningContent": {"text": "r"},
    "toolUse": {"input": "{}"},
    "toolResult": [{"text": "r"}],
    "image": {"source": {"bytes": "AA=="}},
}
APPLIED_EVENTS = {
    "text": ["TextDelta"],
    "citation": [],
    "reasoning": ["ReasoningDelta"],
    "arguments": [],  # "{}" is one fragment: an arguments delta (checked below)
    "accept": [],
}


def test_openers_and_members_cover_the_tables() -> None:
    assert set(KIND_OPENERS) == set(get_args(bedrock_blocks.BlockKind))
    assert set(MEMBERS) == set(bedrock_blocks.DELTA_KINDS)


@pytest.mark.parametrize(
    ("kind", "member"), list(itertools.product(sorted(KIND_OPENERS), sorted(MEMBERS)))
)
def test_every_kind_and_delta_member(kind: str, member: str) -> None:
    stream = sw.stream("bedrock-converse")
    stream.feed(C.start())
    stream.feed(KIND_OPENERS[kind])
    events = stream.feed(C.delta(1, {member: MEMBERS[member]}))
    action = bedrock_blocks.BLOCK_DELTAS.get((kind, member))  # type: ignore[call-overload]
    result = stream.result
    if action is None:
        assert events == [] and len(result.conflicts) == 1, "a delta of the wrong kind"
        assert "it was ignored" in result.conflicts[0]
    else:
        assert not result.conflicts and not result.unknown_fields
        expected = ["ToolCallArgumentsDelta"] if action == "arguments" else APPLIED_EVENTS[action]
        assert _types(events) == expected
