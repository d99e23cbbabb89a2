"""Gemini function calls: the call machine, Vertex streamed arguments, tool results, caps.

The call machine (``gemini_parts.CALL_TRANSITIONS``) is tested over every
(state, input) pair; the streamed-arguments assembler with a property (any
arguments object, streamed leaf by leaf with strings in pieces, comes back
exactly as text and as an object; in any order, it assembles by path); tool
results are correlated by name (and the provider's id when it sent one).
"""

from __future__ import annotations

import itertools
import json
import re
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

import streamwire as sw
from gemini_streams import chunk, fixture, run, sse
from streamwire.protocols import gemini_parts
from streamwire.protocols.gemini_partial_args import PartialArgs, parse_json_path

# --- the call machine -------------------------------------------------------------

CALL_INPUTS: dict[str, dict[str, Any]] = {
    "whole": {"name": "g", "args": {"x": 1}},
    "start": {"name": "g", "willContinue": True},
    "single": {"name": "g", "partialArgs": [{"jsonPath": "$.x", "numberValue": 1}]},
    "continue": {"partialArgs": [{"jsonPath": "$.x", "numberValue": 1}], "willContinue": True},
    "last": {"partialArgs": [{"jsonPath": "$.y", "numberValue": 2}]},
    "end": {},
}
_CONFLICTING = {"orphan", "interleaved", "restart", "restart_end"}  # with another name


def test_call_table_is_complete() -> None:
    pairs = set(itertools.product(gemini_parts.PHASES, gemini_parts.INPUTS))
    assert set(gemini_parts.CALL_TRANSITIONS) == pairs
    for input_, fc in CALL_INPUTS.items():
        assert gemini_parts.classify_call(fc) == input_


@pytest.mark.parametrize(
    ("phase", "input_"), list(itertools.product(gemini_parts.PHASES, gemini_parts.INPUTS))
)
def test_call_transition(phase: str, input_: str) -> None:
    stream = sw.stream("gemini")
    first = [{"functionCall": {"name": "f", "willContinue": True}}] if phase == "streaming" else []
    stream.feed(sse(chunk([{"text": "a"}, *first])))
    if input_ == "finish":
        stream.feed(sse(chunk([], "STOP")))
    else:
        stream.feed(sse(chunk([{"functionCall": CALL_INPUTS[input_]}])))
    action, following = gemini_parts.CALL_TRANSITIONS[phase, input_]  # type: ignore[index]
    cand = stream._chunks.candidates[0]  # type: ignore[attr-defined]
    assert cand.phase == following
    result = stream.result
    assert bool(result.conflicts) == (action in _CONFLICTING), (action, result.conflicts)
    if action == "abandon":
        assert [w.code for w in result.warnings] == ["streamed_call_unterminated"]
    if action == "stray_end":  # an empty functionCall: {} names nothing, contradicts nothing
        assert [w.code for w in result.warnings] == ["function_call_empty"]
        assert result.tool_calls == ()


def test_a_repeated_name_continues_the_streamed_call() -> None:
    fragments = [
        {"functionCall": {"name": "f", "willContinue": True}},
        {"functionCall": {"name": "f", "partialArgs": [{"jsonPath": "$.x", "numberValue": 1}]}},
    ]
    stream, _ = run(sse(chunk(fragments, "STOP")))
    result = stream.result
    assert result.conflicts == () and result.executable
    assert [c.raw_arguments for c in result.tool_calls] == ['{"x":1}']


def test_whole_calls_args_and_invalid_shapes() -> None:
    parts = [
        {"functionCall": {"name": "a"}},  # no args: {}
        {"functionCall": {"name": "b", "args": [1, 2]}},  # not an object: rejected
        {"functionCall": {"name": "c", "args": {"q": "ü"}, "x_extra": 1}},
    ]
    stream, _ = run(sse(chunk(parts, "STOP")))
    result = stream.result
    calls = result.tool_calls
    assert [c.arguments for c in calls] == [{}, None, {"q": "ü"}]
    assert calls[1].state == "rejected" and "not a JSON object" in (calls[1].invalid_reason or "")
    assert not result.executable and result.stop_reason == "tool_calls"
    assert dict(result.unknown_fields) == {"candidates[].content.parts[].functionCall.x_extra": 1}


# --- streamed arguments -----------------------------------------------------------


@pytest.mark.parametrize(
    ("path", "segments"),
    [
        ("$.a", ["a"]),
        ("$.a.b[0].c", ["a", "b", 0, "c"]),
        ("$['a b'][12]", ["a b", 12]),
        ('$["q\\"uo\\u00e9"]', ['q"uoé']),
        ("$['it\\'s']", ["it's"]),
        ("$", None),
        ("a.b", None),
        ("$.", None),
        ("$.a[*]", None),
        ("$.*", None),
        ("$.a[01]", None),
        ("$.a[-1]", None),
        ("$['open", None),
        ("$['bad\\q']", None),
        ("$..a", None),
    ],
)
def test_parse_json_path(path: str, segments: list[Any] | None) -> None:
    assert parse_json_path(path) == segments


_KEYS = st.text(alphabet=st.characters(codec="utf-8", exclude_characters="\x00"), max_size=6)
_SCALARS = st.one_of(
    st.text(max_size=12),
    st.integers(-(10**12), 10**12),
    st.floats(allow_nan=False, allow_infinity=False),
    st.booleans(),
    st.none(),
)
_VALUES = st.recursive(
    _SCALARS,
    lambda inner: st.one_of(
        st.lists(inner, min_size=1, max_size=3),
        st.dictionaries(_KEYS, inner, min_size=1, max_size=3),
    ),
    max_leaves=12,
)
_OBJECTS = st.dictionaries(_KEYS, _VALUES, min_size=1, max_size=4)


def _path(segments: list[Any]) -> str:
    out = "$"
    for seg in segments:
        if isinstance(seg, int):
            out += f"[{seg}]"
        elif re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", seg):
            out += "." + seg
        else:
            out += "['" + seg.replace("\\", "\\\\").replace("'", "\\'") + "']"
    return out


def _leaves(value: Any, prefix: list[Any]) -> list[tuple[list[Any], Any]]:
    if isinstance(value, dict):
        return [leaf for k, v in value.items() for leaf in _leaves(v, [*prefix, k])]
    if isinstance(value, list):
        return [leaf for i, v in enumerate(value) for leaf in _leaves(v, [*prefix, i])]
    return [(prefix, value)]


def _fragments(path: list[Any], value: Any, cuts: int) -> list[dict[str, Any]]:
    p = _path(path)
    if isinstance(value, str):
        step = max(1, len(value) // (cuts + 1))
        pieces = [value[i : i + step] for i in range(0, len(value), step)] or [""]
        out = [{"jsonPath": p, "stringValue": s, "willContinue": True} for s in pieces]
        out.append({"jsonPath": p, "stringValue": ""})  # as Vertex ends a string
        return out
    if value is None:
        return [{"jsonPath": p, "nullValue": "NULL_VALUE"}]
    if isinstance(value, bool):
        return [{"jsonPath": p, "boolValue": value}]
    return [{"jsonPath": p, "numberValue": value}]


@given(_OBJECTS, st.integers(0, 3))
def test_streamed_arguments_in_order_come_back_exactly(obj: dict[str, Any], cuts: int) -> None:
    args = PartialArgs()
    text = []
    for path, value in _leaves(obj, []):
        for fragment in _fragments(path, value, cuts):
            delta, problem = args.apply(fragment)
            assert problem is None
            text.append(delta)
    text.append(args.close())
    assert args.ordered and args.root == obj
    assert "".join(text) == json.dumps(obj, ensure_ascii=False, separators=(",", ":"))


@given(_OBJECTS, st.randoms(use_true_random=False))
def test_streamed_arguments_in_any_order_assemble_by_path(obj: dict[str, Any], rng: Any) -> None:
    leaves = _leaves(obj, [])
    rng.shuffle(leaves)
    args = PartialArgs()
    for path, value in leaves:
        for fragment in _fragments(path, value, 1):
            _, problem = args.apply(fragment)
            if problem is not None:  # an array element before its predecessor
                assert "skips array elements" in problem
    if args.ordered:
        return
    assembled = json.loads(args.text())
    assert assembled == args.root


def test_streamed_arguments_problems() -> None:
    args = PartialArgs()
    assert args.apply({"jsonPath": "$.a[0]", "numberValue": 1}) == ("{" + '"a":[1', None)
    for fragment, why in [
        ({"jsonPath": "$.a.b", "numberValue": 2}, "names member"),
        ({"jsonPath": "$.a[5]", "numberValue": 2}, "skips array elements"),
        ({"jsonPath": "$.a[0].x", "numberValue": 2}, "not an object or array"),
        ({"jsonPath": "$.z", "numberValue": float("nan")}, "not finite"),
        ({"jsonPath": "$.z", "numberValue": "1"}, "not a number"),
        ({"jsonPath": "$.z", "stringValue": 1}, "not a string"),
        ({"jsonPath": "$.z", "boolValue": 1}, "not a boolean"),
        ({"jsonPath": "$.z"}, "carries no value"),
        ({"stringValue": "x"}, "no jsonPath"),
        ({"jsonPath": "$.z[*]", "numberValue": 1}, "names no single argument"),
    ]:
        delta, problem = args.apply(fragment)
        assert delta == "" and problem is not None and why in problem, (fragment, problem)
    assert args.close() == "]}" and args.root == {"a": [1]}


def test_a_string_left_open_by_another_path_is_closed() -> None:
    args = PartialArgs()
    parts = [
        args.apply({"jsonPath": "$.a", "stringValue": "x", "willContinue": True})[0],
        args.apply({"jsonPath": "$.b", "boolValue": False})[0],
        args.close(),
    ]
    assert "".join(parts) == '{"a":"x","b":false}' and args.root == {"a": "x", "b": False}


def test_streamed_arguments_cap() -> None:
    fragments = [
        {"functionCall": {"name": "f", "willContinue": True}},
        {
            "functionCall": {
                "partialArgs": [{"jsonPath": "$.a", "stringValue": "x" * 50}],
                "willContinue": True,
            }
        },
        {"functionCall": {}},
    ]
    stream, _ = run(sse(chunk(fragments, "STOP")), max_tool_argument_chars=20)
    result = stream.result
    assert result.status == "error" and result.error is not None
    assert result.error.type == "tool_arguments_too_large"
    assert result.tool_calls[0].state == "rejected" and not result.executable
    unordered = [
        {"functionCall": {"name": "f", "willContinue": True}},
        {
            "functionCall": {
                "partialArgs": [
                    {"jsonPath": "$.a.x", "numberValue": 1},
                    {"jsonPath": "$.b", "numberValue": 1},
                    {"jsonPath": "$.a.y", "stringValue": "y" * 40},
                ]
            }
        },
    ]
    stream, _ = run(sse(chunk(unordered, "STOP")), max_tool_argument_chars=20)
    assert stream.result.error is not None
    assert stream.result.error.type == "tool_arguments_too_large"


# --- tool results and the ledger --------------------------------------------------


def test_tool_result_by_name_and_by_provider_id() -> None:
    stream, _ = fixture("06-one-tool-call").replay([fixture("06-one-tool-call").raw])
    call = stream.result.tool_calls[0]
    assert call.id is not None
    assert sw.tool_result(stream, call.id, {"temp_c": 21}) == {
        "functionResponse": {"name": "get_weather", "response": {"temp_c": 21}}
    }
    assert sw.tool_result(stream.result, call.id, "21°C") == {
        "functionResponse": {"name": "get_weather", "response": {"output": "21°C"}}
    }
    with pytest.raises(sw.ToolResultError, match="no tool call"):
        sw.tool_result(stream, "gemini-someone-else-0-0", "x")
    with_id, _ = fixture("provider-call-id").replay([fixture("provider-call-id").raw])
    assert sw.tool_result(with_id, "fc_7Qm2", {"pong": True}) == {
        "functionResponse": {"name": "ping", "id": "fc_7Qm2", "response": {"pong": True}}
    }


def test_failing_tool_with_the_ledger() -> None:
    case = fixture("09-failing-tool")
    stream, _ = case.replay([case.raw])
    result = stream.result
    call_id = result.tool_calls[0].id
    assert call_id is not None
    ledger = sw.ToolLedger()
    ledger.authorize(result, call_id)
    ledger.start(call_id)
    ledger.fail(call_id)
    reply = sw.tool_result(result, call_id, "relation 'missing' does not exist", is_error=True)
    assert reply == {
        "functionResponse": {
            "name": "run_query",
            "response": {"error": "relation 'missing' does not exist"},
        }
    }
    with pytest.raises(sw.ToolCallStateError):
        ledger.authorize(result, call_id)


def test_tools_declared_in_gemini_format_are_checked() -> None:
    tools = [
        {
            "functionDeclarations": [
                {
                    "name": "get_weather",
                    "parameters": {
                        "type": "OBJECT",
                        "properties": {"city": {"type": "STRING"}},
                        "required": ["city"],
                    },
                }
            ]
        }
    ]
    good = chunk([{"functionCall": {"name": "get_weather", "args": {"city": "Oslo"}}}], "STOP")
    bad = chunk([{"functionCall": {"name": "get_weather", "args": {"town": "Oslo"}}}], "STOP")
    assert run(sse(good), tools=tools)[0].result.executable
    rejected = run(sse(bad), tools=tools)[0].result
    assert not rejected.executable and rejected.tool_calls[0].state == "rejected"


# --- caps -------------------------------------------------------------------------


def test_call_and_candidate_caps() -> None:
    calls = [{"functionCall": {"name": n, "args": {}}} for n in ("a", "b", "c")]
    stream, _ = run(sse(chunk(calls, "STOP")), max_tool_calls=2)
    result = stream.result
    assert result.error is not None and result.error.type == "too_many_tool_calls"
    assert len(result.tool_calls) == 2 and not result.executable
    two = {
        "candidates": [
            {"content": {"parts": [{"text": "a"}]}, "index": 0},
            {"content": {"parts": [{"text": "b"}]}, "index": 1},
        ]
    }
    capped, _ = run(sse(two), max_candidates=1)
    assert capped.result.error is not None and capped.result.error.type == "too_many_choices"
    assert capped.result.text == "a"
    whole, _ = run(
        sse(chunk([{"functionCall": {"name": "f", "args": {"a": "x" * 40}}}], "STOP")),
        max_tool_argument_chars=10,
    )
    assert whole.result.error is not None
    assert whole.result.error.type == "tool_arguments_too_large"
