"""The tool-call state machine, buffers, batch release, ToolSet, ledger and results.

The transition table is enumerated exhaustively: every (state, input) pair is
either a listed transition or a refused one that raises and is recorded, on
the adapter side (``ToolCalls.step``: a recorded conflict) and on the caller
side (``ToolLedger``: a raised and recorded ``ToolCallStateError``).
"""

from __future__ import annotations

import itertools
from typing import Any

import pytest

import streamwire as sw
from streamwire.toolcalls import (
    INPUTS,
    STATES,
    TRANSITIONS,
    CallBuffer,
    CallInput,
    CallState,
    ToolCalls,
    transition,
)

ALL_PAIRS = list(itertools.product(STATES, INPUTS))
ADAPTER_INPUTS: tuple[CallInput, ...] = (
    "fragment",
    "complete",
    "accept",
    "reject",
    "abandon",
    "revoke",
)
CALLER_INPUTS: tuple[CallInput, ...] = ("authorize", "start", "succeed", "fail")


def test_table_uses_only_declared_states_and_inputs() -> None:
    for (state, input_), target in TRANSITIONS.items():
        assert state in STATES and input_ in INPUTS and target in STATES
    assert set(ADAPTER_INPUTS) | set(CALLER_INPUTS) == set(INPUTS)
    # Terminal states have no way out.
    for state in ("rejected", "succeeded", "failed"):
        assert not [pair for pair in TRANSITIONS if pair[0] == state]


@pytest.mark.parametrize(("state", "input_"), ALL_PAIRS, ids=[f"{s}-{i}" for s, i in ALL_PAIRS])
def test_every_pair_is_a_transition_or_refused(state: CallState, input_: CallInput) -> None:
    if (state, input_) in TRANSITIONS:
        assert transition(state, input_) == TRANSITIONS[state, input_]
    else:
        with pytest.raises(sw.ToolCallStateError) as info:
            transition(state, input_, "call_1")
        assert isinstance(info.value, sw.UsageError)
        assert (info.value.state, info.value.input, info.value.call_id) == (state, input_, "call_1")


def _calls(**kw: Any) -> tuple[ToolCalls, list[str]]:
    conflicts: list[str] = []
    options = {
        "toolset": None,
        "max_argument_chars": 1000,
        "max_total_chars": 2000,
        "max_calls": 8,
        **kw,
    }
    return ToolCalls(conflicts=conflicts, **options), conflicts


@pytest.mark.parametrize(
    ("state", "input_"),
    [(s, i) for s, i in ALL_PAIRS if i in ADAPTER_INPUTS],
    ids=[f"{s}-{i}" for s, i in ALL_PAIRS if i in ADAPTER_INPUTS],
)
def test_adapter_side_step_records_illegal_inputs(state: CallState, input_: CallInput) -> None:
    calls, conflicts = _calls()
    call = calls.open("k", 0)
    assert call is not None
    call.state = state
    legal = (state, input_) in TRANSITIONS
    assert calls.step(call, input_) is legal
    if legal:
        assert call.state == TRANSITIONS[state, input_] and not conflicts
    else:
        assert call.state == state, "an illegal input leaves the state alone"
        assert len(conflicts) == 1 and len(calls.violations) == 1
        assert calls.violations[0].input == input_


def _result(
    *arguments: str, status_end: str = "done", finish: bool = True, protocol: str = "openai-chat"
) -> sw.StreamResult:
    """A chat stream with one call per argument string, ended by [DONE] (or not)."""
    import json

    fragments = [
        {
            "index": i,
            "id": f"call_{i}",
            "type": "function",
            "function": {"name": "f", "arguments": a},
        }
        for i, a in enumerate(arguments)
    ]
    body = [
        {"choices": [{"index": 0, "delta": {"role": "assistant", "tool_calls": fragments}}]},
        {"choices": [{"index": 0, "delta": {}, "finish_reason": "tool_calls"}]},
    ][: 2 if finish else 1]
    data = "".join(f"data: {json.dumps(b)}\n\n" for b in body)
    if status_end == "done":
        data += "data: [DONE]\n\n"
    stream = sw.stream(protocol)
    stream.feed(data.encode())
    if status_end != "open":
        stream.close()
    return stream.result


@pytest.mark.parametrize(
    ("state", "input_"),
    [(s, i) for s, i in ALL_PAIRS if i in CALLER_INPUTS],
    ids=[f"{s}-{i}" for s, i in ALL_PAIRS if i in CALLER_INPUTS],
)
def test_caller_side_ledger_enforces_the_table(state: CallState, input_: CallInput) -> None:
    ledger = sw.ToolLedger()
    if state == "complete":
        pytest.skip("'complete' is transient: parsed and checked in the same step")
    if state in ("collecting", "rejected"):
        # The stream left the call in this state: the ledger refuses everything.
        collecting = state == "collecting"
        result = _result(
            '{"x": 1', status_end="open" if collecting else "done", finish=not collecting
        )
        assert result.tool_calls[0].state == state
        with pytest.raises(sw.ToolCallStateError):
            _ledger_step(ledger, result, input_)
        assert len(ledger.violations) == 1 and ledger.state("call_0") is None
        return
    result = _result('{"x": 1}')
    path: dict[CallState, list[CallInput]] = {
        "valid": [],
        "authorized": ["authorize"],
        "executing": ["authorize", "start"],
        "succeeded": ["authorize", "start", "succeed"],
        "failed": ["authorize", "start", "fail"],
    }
    for step in path[state]:
        _ledger_step(ledger, result, step)
    assert ledger.state("call_0") == (None if state == "valid" else state)
    if (state, input_) in TRANSITIONS:
        _ledger_step(ledger, result, input_)
        assert ledger.state("call_0") == TRANSITIONS[state, input_]
        assert not ledger.violations
    else:
        with pytest.raises(sw.ToolCallStateError):
            _ledger_step(ledger, result, input_)
        assert len(ledger.violations) == 1


def _ledger_step(ledger: sw.ToolLedger, result: sw.StreamResult, step: CallInput) -> None:
    if step == "authorize":
        ledger.authorize(result, "call_0")
    else:
        getattr(ledger, step)("call_0")


def test_ledger_refuses_a_second_execution_and_foreign_ids() -> None:
    result = _result('{"x": 1}')
    ledger = sw.ToolLedger()
    call = ledger.authorize(result, "call_0")
    assert call.name == "f" and call.arguments == {"x": 1}
    ledger.start("call_0")
    ledger.succeed("call_0")
    with pytest.raises(sw.ToolCallStateError, match="authorize"):
        ledger.authorize(result, "call_0")
    with pytest.raises(sw.ToolCallStateError, match="did not produce"):
        ledger.authorize(result, "call_forged")
    assert len(ledger.violations) == 2


def test_ledger_refuses_calls_of_a_batch_that_is_not_executable() -> None:
    ledger = sw.ToolLedger()
    unfinished = _result('{"x": 1}', status_end="open")
    assert unfinished.tool_calls[0].state == "valid" and not unfinished.executable
    with pytest.raises(sw.ToolCallStateError, match="not ended"):
        ledger.authorize(unfinished, "call_0")
    # One invalid call makes the whole batch non-executable: all or nothing.
    mixed = _result('{"x": 1}', "{broken")
    assert [c.state for c in mixed.tool_calls] == ["valid", "rejected"]
    assert not mixed.executable and not mixed.tool_calls[0].executable
    assert "call 1" in (mixed.tool_calls[0].not_executable_reason or "")
    with pytest.raises(sw.ToolCallStateError):
        ledger.authorize(mixed, "call_0")
    with pytest.raises(sw.ToolCallStateError):
        ledger.authorize(mixed, "call_1")


def test_identity_is_set_once() -> None:
    call = CallBuffer(0, 0, "client")
    assert call.set_identity("id", "a") is None
    assert call.set_identity("id", "a") is None, "a repeat of the same value is a no-op"
    assert call.set_identity("id", "") is None, "an empty string counts as absent"
    assert call.set_identity("id", None) is None
    conflict = call.set_identity("id", "b")
    assert conflict is not None and "'a' to 'b'" in conflict
    assert call.id == "a"


@pytest.mark.parametrize(
    ("raw", "arguments", "reason"),
    [
        ("", {}, None),
        ("  \n", {}, None),
        ("{}", {}, None),
        ('{"a": [1, {"b": null}]}', {"a": [1, {"b": None}]}, None),
        ('{"a": 1', None, "not valid JSON"),
        ("[1, 2]", None, "not a JSON object but list"),
        ("null", None, "not a JSON object"),
        ('{"a": 1} {"b": 2}', None, "not valid JSON"),
    ],
)
def test_arguments_parsed_once_at_completion(raw: str, arguments: Any, reason: str | None) -> None:
    calls, _ = _calls()
    call = calls.open("k", 0)
    assert call is not None
    call.set_identity("id", "c")
    call.set_identity("name", "f")
    for ch in raw:
        assert calls.append(call, ch)
    assert call.arguments is None and call.raw is None, "nothing is parsed before completion"
    completed = calls.complete(call)
    assert completed is not None
    assert completed.raw_arguments == raw and completed.arguments == arguments
    if reason is None:
        assert completed.invalid_reason is None and call.state == "valid"
    else:
        assert reason in (completed.invalid_reason or "") and call.state == "rejected"


def test_argument_cap_and_call_cap() -> None:
    calls, _ = _calls(max_argument_chars=5, max_calls=1)
    call = calls.open("a", 0)
    assert call is not None and calls.open("b", 0) is None
    call.set_identity("id", "c")
    call.set_identity("name", "f")
    assert calls.append(call, "{}")
    assert not calls.append(call, "12345")
    completed = calls.complete(call)
    assert completed is not None and "max_tool_argument_chars" in (completed.invalid_reason or "")


def test_missing_and_duplicate_identity_reject() -> None:
    calls, _ = _calls()
    first, second, nameless = calls.open(1, 0), calls.open(2, 0), calls.open(3, 0)
    assert first and second and nameless
    for call in (first, second):
        call.set_identity("id", "dup")
        call.set_identity("name", "f")
    nameless.set_identity("id", "x")
    assert "used by another call" in (calls.complete(first).invalid_reason or "")  # type: ignore[union-attr]
    assert "no tool name" in (calls.complete(nameless).invalid_reason or "")  # type: ignore[union-attr]
    anonymous = calls.open(4, 0)
    assert anonymous is not None
    anonymous.set_identity("name", "f")
    assert "no id" in (calls.complete(anonymous).invalid_reason or "")  # type: ignore[union-attr]
    assert calls.complete(anonymous) is None, "completing twice is an illegal transition"


WEATHER = {
    "type": "object",
    "properties": {"city": {"type": "string"}, "days": {"type": "integer", "minimum": 1}},
    "required": ["city"],
    "additionalProperties": False,
}


@pytest.mark.parametrize(
    "tools",
    [
        [{"type": "function", "function": {"name": "weather", "parameters": WEATHER}}],
        [{"type": "function", "name": "weather", "parameters": WEATHER}],
        [{"name": "weather", "description": "d", "input_schema": WEATHER}],
        [{"toolSpec": {"name": "weather", "inputSchema": {"json": WEATHER}}}],
        {"tools": [{"toolSpec": {"name": "weather", "inputSchema": {"json": WEATHER}}}]},
        [{"functionDeclarations": [{"name": "weather", "parametersJsonSchema": WEATHER}]}],
        [
            {
                "function_declarations": [
                    {
                        "name": "weather",
                        "parameters": {
                            "type": "OBJECT",
                            "properties": {
                                "city": {"type": "STRING"},
                                "days": {"type": "INTEGER", "minimum": 1, "nullable": True},
                            },
                            "required": ["city"],
                        },
                    }
                ]
            }
        ],
    ],
    ids=[
        "chat",
        "responses",
        "anthropic",
        "bedrock",
        "bedrock-toolconfig",
        "gemini-json",
        "gemini-openapi",
    ],
)
def test_toolset_reads_every_request_format(tools: Any) -> None:
    toolset = sw.ToolSet(tools)
    assert toolset.names == {"weather"}
    assert toolset.check("weather", {"city": "Oslo", "days": 2}) is None
    assert "city" in (toolset.check("weather", {"days": 2}) or "")
    assert "days" in (toolset.check("weather", {"city": "Oslo", "days": 0}) or "")
    assert "did not declare" in (toolset.check("forecast", {}) or "")


def test_toolset_gemini_nullable_and_builtin_tools() -> None:
    toolset = sw.ToolSet(
        [
            {"googleSearch": {}},
            {"type": "web_search"},
            {
                "functionDeclarations": [
                    {
                        "name": "f",
                        "parameters": {
                            "type": "OBJECT",
                            "properties": {"n": {"type": "NUMBER", "nullable": True}},
                        },
                    }
                ]
            },
        ]
    )
    assert toolset.names == {"f"}
    assert toolset.check("f", {"n": None}) is None
    assert toolset.check("f", {"n": "x"}) is not None


def test_toolset_misuse_raises() -> None:
    with pytest.raises(sw.UsageError, match="twice"):
        sw.ToolSet([{"name": "a"}, {"name": "a"}])
    with pytest.raises(sw.UsageError, match="no name"):
        sw.ToolSet([{"type": "function", "function": {"parameters": {}}}])
    with pytest.raises(sw.UsageError, match="invalid JSON Schema"):
        sw.ToolSet([{"name": "a", "input_schema": {"type": "no-such-type"}}])
    names_only = sw.ToolSet(
        [{"name": "a", "input_schema": {"type": "no-such-type"}}], validation="names"
    )
    assert names_only.check("a", {"anything": 1}) is None


def test_server_side_calls_are_never_executable() -> None:
    calls, _ = _calls()
    server = calls.open("s", 0, executor="server")
    assert server is not None
    server.set_identity("id", "srv")
    server.set_identity("name", "web_search")
    calls.complete(server)
    assert calls.release(0, "completed", "stop") == (
        False,
        "no tool calls for the caller to run (the provider ran its own)",
    ), "no client batch, and it says so"
    (snap,) = calls.snapshot(0, (True, None))
    assert snap.state == "valid" and not snap.executable
    assert snap.not_executable_reason == "the provider runs this tool itself"


def test_a_batch_that_is_not_executable_always_says_why() -> None:
    # No calls at all is a reason too; an unfinished or failed stream's own
    # ending comes first, as it does for a batch with calls.
    calls, _ = _calls()
    assert calls.release(0, "completed", "stop") == (False, "no tool calls")
    assert calls.release(3, "completed", None) == (False, "no tool calls"), "no such choice"
    assert calls.release(0, "in_progress", None) == (False, "the stream has not ended yet")
    for status in ("error", "incomplete", "truncated", "cancelled", "protocol_conflict"):
        assert calls.release(0, status, "stop") == (False, f"the stream ended {status}")
    stream = sw.stream("openai-chat")
    stream.feed(
        b'data: {"choices":[{"index":0,"delta":{"content":"hi"},"finish_reason":"stop"}]}\n\n'
    )
    stream.close()
    result = stream.result
    assert result.status == "completed" and not result.executable
    assert result.not_executable_reason == "no tool calls"
    assert result.choices[0].not_executable_reason == "no tool calls"


# --- tool results ---------------------------------------------------------------


def _result_for(
    protocol: str, *, call_id: str = "call_0", id_source: str = "provider"
) -> sw.StreamResult:
    events: list[sw.Event] = [
        sw.ToolCallStarted(index=0, id=call_id, name="weather", id_source=id_source),  # type: ignore[arg-type]
        sw.ToolCallCompleted(
            index=0,
            id=call_id,
            name="weather",
            type="function",
            raw_arguments="{}",
            arguments={},
            invalid_reason=None,
            id_source=id_source,  # type: ignore[arg-type]
        ),
        sw.MessageCompleted(status="completed", stop_reason="tool_calls", provider_stop_reason="x"),
    ]
    return sw.result_from_events(events, protocol=protocol)


@pytest.mark.parametrize(
    ("protocol", "expected"),
    [
        ("openai-chat", {"role": "tool", "tool_call_id": "call_0", "content": "22C"}),
        (
            "openai-responses",
            {"type": "function_call_output", "call_id": "call_0", "output": "22C"},
        ),
        (
            "openai-realtime",
            {
                "type": "conversation.item.create",
                "item": {"type": "function_call_output", "call_id": "call_0", "output": "22C"},
            },
        ),
        ("anthropic", {"type": "tool_result", "tool_use_id": "call_0", "content": "22C"}),
        ("bedrock-converse", {"toolResult": {"toolUseId": "call_0", "content": [{"text": "22C"}]}}),
        (
            "gemini",
            {
                "functionResponse": {
                    "name": "weather",
                    "id": "call_0",
                    "response": {"output": "22C"},
                }
            },
        ),
        ("gemini-live", {"name": "weather", "id": "call_0", "response": {"output": "22C"}}),
    ],
)
def test_tool_result_shapes(protocol: str, expected: dict[str, Any]) -> None:
    assert sw.tool_result(_result_for(protocol), "call_0", "22C") == expected


def test_tool_result_errors_and_structured_output() -> None:
    assert (
        sw.tool_result(_result_for("anthropic"), "call_0", "boom", is_error=True)["is_error"]
        is True
    )
    bedrock = sw.tool_result(_result_for("bedrock-converse"), "call_0", {"t": 22}, is_error=True)
    assert bedrock == {
        "toolResult": {"toolUseId": "call_0", "content": [{"json": {"t": 22}}], "status": "error"}
    }
    gemini = sw.tool_result(
        _result_for("gemini", id_source="synthetic"), "call_0", "boom", is_error=True
    )
    assert gemini == {"functionResponse": {"name": "weather", "response": {"error": "boom"}}}, (
        "a synthetic id is never sent to the provider"
    )
    chat = sw.tool_result(_result_for("openai-chat"), "call_0", {"t": 22})
    assert chat["content"] == '{"t": 22}'


def test_tool_result_refuses_calls_the_stream_did_not_produce() -> None:
    result = _result_for("openai-chat")
    with pytest.raises(sw.ToolResultError) as info:
        sw.tool_result(result, "call_999", "x")
    assert isinstance(info.value, ValueError) and isinstance(info.value, sw.UsageError)
    with pytest.raises(sw.ToolResultError, match="no tool-result format"):
        sw.tool_result(_result_for("nonesuch"), "call_0", "x")
