"""StreamResult: status precedence, snapshots, usage rules, rebuilding from events."""

from __future__ import annotations

import dataclasses
import itertools

import pytest

import streamwire as sw
from streamwire.accumulate import Accumulator

ENDS = ["error", "conflict", "cancel", "unfinished", "length", "stop"]


def _accumulator(facts: tuple[str, ...]) -> Accumulator:
    # Each of "unfinished", "length" and "stop" is a choice of its own (n > 1).
    acc = Accumulator("openai-chat")
    for fact in facts:
        choice = acc._choice(len(acc.choices))
        if fact == "error":
            acc.fail("provider", "server_error", None, "boom")
        elif fact == "conflict":
            acc.conflict("changed id")
        elif fact == "cancel":
            acc.cancelled = True
        elif fact in ("length", "stop"):
            choice.terminal = True
            choice.finish_reason = fact
            choice.stop_reason = "length" if fact == "length" else "stop"
    acc.finish()
    return acc


@pytest.mark.parametrize(
    "facts", [c for n in range(1, 4) for c in itertools.combinations(ENDS, n)], ids=str
)
def test_status_precedence(facts: tuple[str, ...]) -> None:
    # error > protocol_conflict > cancelled > incomplete > truncated > completed
    status = _accumulator(facts).snapshot().status
    if "error" in facts:
        assert status == "error"
    elif "conflict" in facts:
        assert status == "protocol_conflict"
    elif "cancel" in facts:
        assert status == "cancelled"
    elif "unfinished" in facts or not {"length", "stop"} & set(facts):
        assert status == "incomplete"
    elif "length" in facts:
        assert status == "truncated"
    else:
        assert status == "completed"


def test_an_empty_stream_is_incomplete_with_choice_zero() -> None:
    stream = sw.stream("openai-chat")
    events = stream.close()
    assert [type(e) for e in events] == [sw.MessageCompleted]
    result = stream.result
    assert result.status == "incomplete" and result.final
    assert [c.index for c in result.choices] == [0]
    assert result.text == "" and result.usage is None and not result.executable


def test_first_error_wins_later_ones_are_warned() -> None:
    acc = Accumulator("openai-chat")
    acc.fail("provider", "a", 1, "first")
    second = acc.fail("provider", "b", 2, "second")
    assert second.type == "b", "every error is emitted"
    result = acc.snapshot()
    assert result.error is not None and result.error.type == "a"
    assert [w.code for w in result.warnings] == ["additional_error"]


def test_records_are_capped() -> None:
    acc = Accumulator("openai-chat")
    for i in range(500):
        acc.unknown_field(f"field{i}")
        acc.unknown_event(f"type{i}", "")
        acc.warn("w", str(i))
        acc.conflict(str(i))
    result = acc.snapshot()
    assert len(result.unknown_fields) == 101 and result.unknown_fields["<other>"] == 400
    assert len(result.unknown_events) == 101
    assert len(result.warnings) == 100 and len(result.conflicts) == 100
    assert result.metrics.unknown_events == 1000


def test_result_values_are_frozen_and_read_only() -> None:
    stream = sw.stream("openai-chat")
    usage = b'{"prompt_tokens":1,"completion_tokens":2,"total_tokens":3}'
    stream.feed(b'data: {"choices":[],"usage":' + usage + b"}\n\n")
    result = stream.result
    with pytest.raises(dataclasses.FrozenInstanceError):
        result.status = "completed"  # type: ignore[misc]
    assert result.usage is not None
    with pytest.raises(TypeError):
        result.usage.raw["prompt_tokens"] = 9  # type: ignore[index]
    with pytest.raises(TypeError):
        result.unknown_fields["x"] = 1  # type: ignore[index]
    assert not result.usage.final, "usage before any choice finished is not final"


def test_result_from_events() -> None:
    events: list[sw.Event] = [
        sw.MessageStarted(message_id="m1", model="x"),
        sw.TextDelta(text="Hel"),
        sw.ReasoningDelta(text="", signature="sig"),
        sw.TextDelta(text="lo"),
        sw.ToolCallStarted(index=0, id="c1", name="f"),
        sw.ToolCallArgumentsDelta(index=0, id="c1", delta='{"a":'),
        sw.ToolCallArgumentsDelta(index=0, id="c1", delta="1}"),
        sw.ToolCallCompleted(
            index=0,
            id="c1",
            name="f",
            type="function",
            raw_arguments='{"a":1}',
            arguments={"a": 1},
            invalid_reason=None,
        ),
        sw.UsageReported(usage=sw.Usage(input_tokens=5, output_tokens=7, final=True)),
        sw.MessageCompleted(
            status="completed", stop_reason="tool_calls", provider_stop_reason="tool_calls"
        ),
    ]
    result = sw.result_from_events(events, protocol="openai-chat")
    assert result.status == "completed" and result.final
    assert result.text == "Hello" and result.message_id == "m1"
    assert result.choices[0].reasoning_signatures == ("sig",)
    assert result.executable and result.tool_calls[0].arguments == {"a": 1}
    assert result.usage is not None and result.usage.output_tokens == 7
    assert result.metrics.events == len(events)
    assert sw.tool_result(result, "c1", "ok")["tool_call_id"] == "c1"
