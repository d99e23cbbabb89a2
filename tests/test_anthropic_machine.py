"""The ``anthropic`` adapter's machines, pair by pair.

Every ``(phase, input)`` pair of the message-level ``PHASES`` (each phase
before ``closed``, each input), every ``(state, input)`` pair of the per-block
``BLOCK_STEPS``, and every ``(block role, delta type)`` pair, known or not, is
driven and checked: a listed transition does what its action says, anything
else is a recorded protocol conflict (or, after the end, a warning).
"""

from __future__ import annotations

import itertools
from typing import Any, get_args

import pytest

import streamwire as sw
from anthropic_events import (
    MESSAGE_STOP,
    TEXT_BLOCK,
    block_delta,
    block_start,
    block_stop,
    message_delta,
    message_start,
    run,
    sse,
    text_delta,
)
from streamwire.accumulate import Accumulator
from streamwire.protocols.anthropic import AnthropicMachine
from streamwire.protocols.anthropic_blocks import (
    BLOCK_DELTAS,
    BLOCK_STEPS,
    DELTA_TYPES,
    ROLES,
    block_role,
)
from streamwire.protocols.anthropic_machine import PHASES, STOP_REASONS, Input, Phase

# --- the message-level machine: every (phase, input) pair ----------------------------

PHASES_BEFORE_CLOSED: tuple[Phase, ...] = ("idle", "open", "stopping", "stopped", "failed")
INPUTS: tuple[Input, ...] = get_args(Input)
SAMPLE_INPUT: dict[str, dict[str, Any] | None] = {
    "message_start": message_start(),
    "content_block_start": block_start(1, TEXT_BLOCK),
    "content_block_delta": text_delta(0, "x"),
    "content_block_stop": block_stop(0),
    "message_delta": message_delta(None, 7),
    "stop_delta": message_delta("end_turn", 7),
    "message_stop": MESSAGE_STOP,
    "ping": {"type": "ping"},
    "error": {"type": "error", "error": {"type": "api_error", "message": "boom"}},
    "unknown": {"type": "future_event"},
    "eof": None,
}
#: Events that bring a fresh machine into each phase (block 0 is an open text block).
INTO: dict[str, list[dict[str, Any]]] = {
    "idle": [],
    "open": [message_start(), block_start(0, TEXT_BLOCK)],
    "stopping": [message_start(), block_start(0, TEXT_BLOCK), message_delta("end_turn")],
    "stopped": [
        message_start(),
        block_start(0, TEXT_BLOCK),
        block_stop(0),
        message_delta("end_turn"),
        MESSAGE_STOP,
    ],
    "failed": [message_start(), {"type": "error", "error": {"type": "api_error", "message": "x"}}],
}


def _machine_in(phase: str) -> tuple[AnthropicMachine, Accumulator]:
    acc = Accumulator("anthropic")
    machine = AnthropicMachine(acc)
    for event in INTO[phase]:
        machine.on_event(event, [])
    assert machine.phase == phase
    return machine, acc


def test_phases_cover_every_pair_before_closed() -> None:
    assert set(PHASES) == set(itertools.product(PHASES_BEFORE_CLOSED, INPUTS))
    assert all(next_phase in get_args(Phase) for _, next_phase in PHASES.values())


@pytest.mark.parametrize(("phase", "input"), sorted(PHASES))
def test_every_phase_transition(phase: Phase, input: Input) -> None:
    machine, acc = _machine_in(phase)
    action, expected_phase = PHASES[phase, input]
    conflicts, warnings, ended = len(acc.conflicts), len(acc.warnings), acc.ended
    out: list[sw.Event] = []
    sample = SAMPLE_INPUT[input]
    if sample is None:
        machine.on_eof(out)
    else:
        machine.on_event(sample, out)
    assert machine.phase == expected_phase
    new_conflicts = len(acc.conflicts) - conflicts
    new_warnings = len(acc.warnings) - warnings
    kinds = [type(e).__name__ for e in out]
    if action in ("before_start", "repeated_start", "after_stop_reason"):
        assert new_conflicts == 1 and not out, acc.conflicts  # a recorded protocol error
    elif action in ("after_stop", "after_error"):
        assert new_conflicts == 0 and new_warnings == 1 and not out
    else:
        assert new_conflicts == 0, acc.conflicts
        expected_kinds = {
            "start": ["MessageStarted", "UsageReported"],
            "block_start": [],
            "block_delta": ["TextDelta"],
            "block_stop": [],
            "message_delta": ["UsageReported"],
            # Final usage only after a message_delta reported it.
            "stop": (["UsageReported"] if phase == "stopping" else []) + ["MessageCompleted"],
            "fail": ["ErrorReceived"],
            "unknown": ["UnknownEvent"],
            "nothing": [] if ended or input != "eof" else ["MessageCompleted"],
        }[action]
        assert kinds == expected_kinds
    if input == "eof":
        assert acc.ended


def test_nothing_may_follow_eof() -> None:
    machine, acc = _machine_in("open")
    machine.on_eof([])
    assert machine.phase == "closed" and acc.ended
    machine.on_eof([])  # idempotent
    with pytest.raises(sw.UsageError, match="cannot be fed"):
        machine.on_event({"type": "ping"}, [])
    with pytest.raises(sw.UsageError):
        machine.on_payload('{"type": "ping"}', [])


def test_stop_reasons() -> None:
    for raw, stop in {**STOP_REASONS, "something_new": "other"}.items():
        stream, _ = run(
            sse(message_start(), block_start(0, TEXT_BLOCK), text_delta(0, "a"), block_stop(0))
            + sse(message_delta(raw), MESSAGE_STOP)
        )
        result = stream.result
        assert result.stop_reason == stop and result.provider_stop_reason == raw
        assert result.status == ("truncated" if stop == "length" else "completed")


# --- blocks: every (role, delta) pair and every block step ---------------------------

ROLE_BLOCKS: dict[str, dict[str, Any]] = {
    "text": TEXT_BLOCK,
    "thinking": {"type": "thinking", "thinking": "", "signature": ""},
    "redacted": {"type": "redacted_thinking", "data": "opaque"},
    "call": {"type": "tool_use", "id": "toolu_1", "name": "f", "input": {}},
    "server_call": {
        "type": "server_tool_use",
        "id": "srvtoolu_1",
        "name": "web_search",
        "input": {},
    },
    "result": {"type": "web_search_tool_result", "tool_use_id": "srvtoolu_0", "content": []},
    "compaction": {"type": "compaction", "content": None},
    "unknown": {"type": "future_block"},
}
DELTA_SAMPLES: dict[str, dict[str, Any]] = {
    "text_delta": {"type": "text_delta", "text": "t"},
    "citations_delta": {"type": "citations_delta", "citation": {"type": "char_location"}},
    "thinking_delta": {"type": "thinking_delta", "thinking": "th"},
    "signature_delta": {"type": "signature_delta", "signature": "sig"},
    "input_json_delta": {"type": "input_json_delta", "partial_json": '{"a":1}'},
    "compaction_delta": {"type": "compaction_delta", "content": "summary"},
    "future_delta": {"type": "future_delta"},
}


def test_roles() -> None:
    assert {block_role(kind) for kind in ROLES} | {"result", "unknown"} == set(ROLE_BLOCKS)
    assert block_role("code_execution_tool_result") == "result"
    assert block_role("mcp_tool_result") == "result"
    assert block_role("container_upload") == "unknown"
    for role, block in ROLE_BLOCKS.items():
        assert block_role(block["type"]) == role
    assert set(DELTA_SAMPLES) == DELTA_TYPES | {"future_delta"}


@pytest.mark.parametrize(
    ("role", "delta_type"), list(itertools.product(ROLE_BLOCKS, DELTA_SAMPLES))
)
def test_every_role_and_delta_pair(role: str, delta_type: str) -> None:
    stream = sw.stream("anthropic")
    events = stream.feed(sse(message_start(), block_start(0, ROLE_BLOCKS[role])))
    events = stream.feed(sse(block_delta(0, DELTA_SAMPLES[delta_type])))
    result = stream.result
    step = BLOCK_DELTAS.get((role, delta_type))  # type: ignore[arg-type]
    if delta_type not in DELTA_TYPES or role == "unknown":
        assert not result.conflicts
        assert [type(e).__name__ for e in events] == ["UnknownEvent"]
        assert result.unknown_events
    elif step is None:  # a delta of the wrong kind for its block
        assert result.status == "protocol_conflict" and len(result.conflicts) == 1
        assert not events
    else:
        assert not result.conflicts
        expected = {
            "text": ["TextDelta"],
            "citation": [],
            "thinking": ["ReasoningDelta"],
            "signature": ["ReasoningDelta"],
            "arguments": ["ToolCallArgumentsDelta"],
            "compaction": [],
        }[step]
        assert [type(e).__name__ for e in events] == expected


@pytest.mark.parametrize(("state", "input"), sorted(BLOCK_STEPS))
def test_every_block_step(state: str, input: str) -> None:
    prefix: list[dict[str, Any]] = [message_start()]
    if state in ("open", "stopped"):
        prefix.append(block_start(0, TEXT_BLOCK))
    if state == "stopped":
        prefix.append(block_stop(0))
    stream = sw.stream("anthropic")
    stream.feed(sse(*prefix))
    event = {
        "start": block_start(0, TEXT_BLOCK),
        "delta": text_delta(0, "x"),
        "stop": block_stop(0),
    }[input]
    events = stream.feed(sse(event))
    action, _ = BLOCK_STEPS[state, input]  # type: ignore[index]
    result = stream.result
    if action == "conflict":
        assert len(result.conflicts) == 1 and not events
    elif action == "warn":
        assert [w.code for w in result.warnings] == ["repeated_block_stop"]
    else:
        assert not result.conflicts and not result.warnings
        assert [type(e).__name__ for e in events] == (["TextDelta"] if input == "delta" else [])


def test_compaction_block_is_kept_for_the_next_turn() -> None:
    # anthropic-python's accumulator: a compaction_delta's content and
    # encrypted_content replace the block's; the start's other fields stay.
    start = {"type": "compaction", "content": None, "signature": "sig"}
    stream, _ = run(
        sse(message_start(), block_start(0, start))
        + sse(block_delta(0, {"type": "compaction_delta", "content": "old"}))
        + sse(
            block_delta(0, {"type": "compaction_delta", "content": "new", "encrypted_content": "e"})
        )
        + sse(block_stop(0), message_delta("end_turn"), MESSAGE_STOP)
    )
    result = stream.result
    assert result.status == "completed" and result.text == "" and not result.unknown_events
    assert result.provider_content == (
        {"type": "compaction", "content": "new", "signature": "sig", "encrypted_content": "e"},
    )
    bad, _ = run(
        sse(message_start(), block_start(0, start))
        + sse(block_delta(0, {"type": "compaction_delta", "content": 7}))
    )
    assert bad.result.status == "protocol_conflict"
