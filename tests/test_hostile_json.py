"""JSON nested deeper than any decoder follows never raises out of an adapter.

docs/design.md ("How a stream ends", "Limits and memory"): bad upstream input
becomes a typed event and a status, and reading ``result`` never raises. For
every protocol (all of them carry JSON), a payload nested past
``_json.MAX_DEPTH`` (in SSE data, in an EventStream payload, inside a
``bedrock-invoke`` chunk's bytes, in a gemini-json element, in a WebSocket
message) ends the stream in ``error`` (phase ``framing``, type
``json_too_deep``) under every chunking, and the state stays coherent: the
rest of the stream is read, ``close()`` decides ``error``, the events alone
rebuild the same error. Tool arguments nested that deep are rejected at
completion, with a ``limit`` error of the same type. None of it raises when
the caller's own stack is nearly used up, and ``.result`` stays readable,
for arguments within the cap too (it used to deep-copy them).

Values of the wrong JSON type where a Gemini enum belongs (a bool, a float,
an integer past int32, an object), and full copies of a call's arguments
that are hostile JSON (too deep, duplicate keys, ``NaN``, an integer of 5000
digits), are read without raising too: a number within int32 is an enum
number (never a conflict), anything else a conflict.
"""

from __future__ import annotations

import itertools
import json
from typing import Any

import pytest

import streamwire as sw
from hostile_streams import (
    JSON_PROTOCOLS,
    at_stack_depth,
    chunkings_of,
    deep_array,
    deep_object,
    deep_unit,
    fixture_wire,
    replay,
    run,
    with_arguments,
    with_field,
    with_full_arguments,
    with_unit,
)
from streamwire._json import MAX_DEPTH
from streamwire.toolcalls import TOO_DEEP
from wire_units import Wire

GEMINI = ("gemini", "gemini-json", "gemini-live")


def _deep_payload_wire(protocol: str, depth: int) -> Wire:
    wire = fixture_wire(protocol, "text")
    return with_unit(wire, 2, deep_unit(wire, deep_array(depth)))  # inside the response


def _results(stream: sw.Stream, result: sw.StreamResult) -> list[sw.StreamResult]:
    return list(getattr(stream, "results", ())) or [result]


@pytest.mark.parametrize("depth", [MAX_DEPTH + 1, 1000, 50_000])
@pytest.mark.parametrize("protocol", JSON_PROTOCOLS)
def test_a_payload_nested_too_deep_ends_in_a_typed_error(protocol: str, depth: int) -> None:
    wire = _deep_payload_wire(protocol, depth)
    reference: list[sw.Event] | None = None
    for label, chunks in chunkings_of(wire):
        _, events, result = run(protocol, wire, chunks)
        assert result.status == "error", label
        assert result.error is not None
        assert (result.error.phase, result.error.type) == ("framing", "json_too_deep"), label
        # Coherent afterwards: the text after the deep payload was read, the
        # end decided error, and the events carry the error.
        assert result.final
        assert result.text, label
        completed = [e for e in events if isinstance(e, sw.MessageCompleted)]
        assert completed and all(e.status == "error" for e in completed), label
        if protocol not in ("openai-realtime", "openai-responses-ws", "gemini-live"):
            rebuilt = sw.result_from_events(events, protocol=protocol)
            assert rebuilt.error is not None and rebuilt.error.type == "json_too_deep"
        if reference is None:
            reference = events
        else:
            assert events == reference, label


@pytest.mark.parametrize("depth", [MAX_DEPTH, 5000])
@pytest.mark.parametrize("protocol", JSON_PROTOCOLS)
def test_deep_payloads_from_a_deep_stack_never_raise(protocol: str, depth: int) -> None:
    # Within the cap the decode may succeed (orjson) or run out of stack (the
    # standard library, from a deep caller); past it the screen refuses it.
    # Whatever the stack left, nothing raises and the error is typed.
    wire = _deep_payload_wire(protocol, depth)
    for frames_left in (200, 60, 30):
        result = at_stack_depth(frames_left, lambda: run(protocol, wire)[2])
        assert result.final
        if depth > MAX_DEPTH or result.status == "error":
            assert result.error is not None
            # A 256-deep array is JSON but not a payload object.
            assert result.error.type in ("json_too_deep", "invalid_payload"), frames_left


def _deep_arguments_wire(protocol: str, depth: int) -> Wire:
    text = '{"a":' + deep_array(depth - 1) + "}"
    return with_arguments(fixture_wire(protocol, "call"), text, deep_object(depth))


@pytest.mark.parametrize("protocol", JSON_PROTOCOLS)
def test_tool_arguments_nested_too_deep_end_in_a_typed_error(protocol: str) -> None:
    wire = _deep_arguments_wire(protocol, 600)
    for label, chunks in chunkings_of(wire):
        stream, _, result = run(protocol, wire, chunks)
        errors = [r.error for r in _results(stream, result) if r.error is not None]
        errors += getattr(stream, "errors", [])  # a WebSocket session's own
        assert errors, label
        assert errors[0].type == "json_too_deep", label
        for r in _results(stream, result):  # not executable, and saying why
            assert not r.executable and r.not_executable_reason, label
        if protocol in GEMINI:
            # Gemini sends arguments as an object inside the payload: the
            # payload itself is too deep, and there is no call.
            assert errors[0].phase == "framing"
            continue
        assert errors[0].phase == "limit", label
        calls = [c for r in _results(stream, result) for c in r.tool_calls]
        assert [c.state for c in calls] == ["rejected"], label
        assert calls[0].invalid_reason == TOO_DEEP
        assert calls[0].arguments is None and not calls[0].executable


@pytest.mark.parametrize("protocol", JSON_PROTOCOLS)
def test_tool_arguments_within_the_cap_are_kept_and_readable_from_a_deep_stack(
    protocol: str,
) -> None:
    # The payload carrying Gemini's args object nests a few levels more.
    depth = MAX_DEPTH - 10 if protocol in GEMINI else MAX_DEPTH
    wire = _deep_arguments_wire(protocol, depth)
    # provider_content holds the arguments (anthropic, bedrock, gemini): a
    # result read from a caller with little stack left must not walk them.
    stream, _ = replay(protocol, wire)
    result = at_stack_depth(80, lambda: stream.result)
    calls = [c for r in _results(stream, result) for c in r.tool_calls]
    assert [c.state for c in calls] == ["valid"]
    assert result.error is None and result.status == "completed"


@pytest.mark.parametrize("protocol", ["anthropic", "bedrock-converse", "gemini", "bedrock-invoke"])
def test_result_is_readable_with_arguments_600_levels_deep(protocol: str) -> None:
    stream, _ = replay(protocol, _deep_arguments_wire(protocol, 600))
    assert stream.result.status == "error"


# --- Gemini enums of any type ------------------------------------------------------

STATUSES = {"completed", "truncated", "error", "incomplete", "cancelled", "protocol_conflict"}
#: Enum numbers (int32: never a conflict) and values that cannot be an enum.
ENUM_NUMBERS: list[Any] = [0, 1, 9, 99, -1, -(1 << 31), (1 << 31) - 1]
NOT_ENUMS: list[Any] = [True, False, 1.0, 1.5, 1 << 31, 1 << 64, 10**300, [], {}, [1]]
ENUM_FIELDS = [
    ("gemini", "text", "finishReason"),
    ("gemini-json", "text", "finishReason"),
    ("gemini", "prompt-blocked-int", "blockReason"),
    ("gemini-json", "prompt-blocked-int", "blockReason"),
    ("gemini-live", "09-turn-complete-reason-number", "turnCompleteReason"),
]


@pytest.mark.parametrize("value", ENUM_NUMBERS + NOT_ENUMS, ids=lambda v: repr(v)[:20])
@pytest.mark.parametrize(("protocol", "case", "key"), ENUM_FIELDS)
def test_an_enum_of_any_type_never_raises(protocol: str, case: str, key: str, value: Any) -> None:
    wire = with_field(fixture_wire(protocol, case), key, value)
    number = type(value) is int and -(1 << 31) <= value < 1 << 31
    for label, chunks in itertools.islice(chunkings_of(wire), 2):  # whole, byte by byte
        stream, events, result = run(protocol, wire, chunks)
        for r in _results(stream, result):
            assert r.final and r.status in STATUSES, label
            if number:
                assert not r.conflicts, (label, r.conflicts)
        if protocol != "gemini-live":
            rebuilt = sw.result_from_events(events, protocol=protocol)
            assert rebuilt.status == result.status, label


def test_a_non_enum_is_shown_short_whatever_its_size() -> None:
    from streamwire.protocols.gemini_enums import shown

    assert shown(10**5000) == "<an integer of 16610 bits>"  # repr() would raise
    assert len(shown(deep_object(MAX_DEPTH))) <= 80


# --- hostile full copies of a call's arguments ----------------------------------------

ARGUMENT_PROTOCOLS = ("openai-responses", "openai-responses-ws", "openai-realtime")
HOSTILE_FULL = {
    "other value": '{"city":"Lyon"}',
    "duplicate key": '{"city":"Paris","city":"Paris"}',
    "nested too deep": '{"city":' + deep_array(MAX_DEPTH + 1) + "}",
    "NaN": '{"city":NaN}',
    "5000 digits": '{"city":' + "1" * 5000 + "}",
    "lone surrogate": '{"city":"\\ud800"}',
    "not JSON": '{"city":',
    "empty": "",
}


def _respelled(wire: Wire) -> str:
    """The wire's call arguments as the same JSON spelled otherwise."""
    full = next(
        u.payload["arguments"]
        for u in wire.units
        if type(u.payload) is dict and str(u.payload.get("type", "")).endswith("arguments.done")
    )
    value = json.loads(full)
    return json.dumps(dict(reversed(list(value.items()))), indent=1)


@pytest.mark.parametrize("protocol", ARGUMENT_PROTOCOLS)
def test_respelled_arguments_are_the_same_arguments(protocol: str) -> None:
    wire = fixture_wire(protocol, "call")
    respelled = with_full_arguments(wire, _respelled(wire))
    stream, _, result = run(protocol, respelled)
    (r,) = _results(stream, result)
    assert r.status == "completed" and r.executable and not r.conflicts
    assert "arguments_respelled" in {w.code for w in r.warnings}
    assert r.tool_calls[0].raw_arguments == run(protocol, wire)[2].tool_calls[0].raw_arguments


@pytest.mark.parametrize("name", list(HOSTILE_FULL))
@pytest.mark.parametrize("protocol", ARGUMENT_PROTOCOLS)
def test_hostile_full_arguments_are_a_conflict_and_never_raise(protocol: str, name: str) -> None:
    wire = with_full_arguments(fixture_wire(protocol, "call"), HOSTILE_FULL[name])
    for frames_left in (200, 40):
        stream, _, result = at_stack_depth(frames_left, lambda: run(protocol, wire))
        (r,) = _results(stream, result)
        assert r.status == "protocol_conflict" and not r.executable, (frames_left, r.warnings)
        assert "arguments_respelled" not in {w.code for w in r.warnings}
