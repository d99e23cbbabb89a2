"""``streamwire._json``: one JSON text per payload, the standard library's outcome.

With orjson installed the payloads go to it first; whatever it would read
differently from ``json.loads`` must not: a text it rejects, and an integer
beyond 64 bits, which orjson reads as a float.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from shape_reference import same
from streamwire import _json
from streamwire._core import has_digit_run
from streamwire.protocols._eventstream import loads_payload

WIDE = [
    "-9223372036854775809",
    "9223372036854775808",
    "18446744073709551616",
    "[1, 123456789012345678901234567890]",
    '{"a": {"b": -99999999999999999999}}',
]
NARROW = ["-9223372036854775808", "9223372036854775807", "1e30", "12345678901234567890.5"]


@pytest.mark.parametrize("text", WIDE + NARROW)
def test_integers_of_any_width_read_as_json_reads_them(text: str) -> None:
    assert same(_json.loads(text), json.loads(text))
    assert same(loads_payload(text.encode()), json.loads(text))


@given(st.recursive(st.integers() | st.floats(allow_nan=False) | st.text(), st.lists))
def test_any_value_reads_as_json_reads_it(value: Any) -> None:
    text = json.dumps(value)
    assert same(_json.loads(text), json.loads(text))
    assert same(loads_payload(text.encode()), json.loads(text))


@given(st.text(st.sampled_from("0123456789a-\u00e9"), max_size=60), st.integers(0, 25))
def test_digit_runs_are_found(text: str, length: int) -> None:
    expected = length == 0 or any(
        text[i : i + length].isascii() and text[i : i + length].isdigit()
        for i in range(len(text) - length + 1)
    )
    assert has_digit_run(text, length) is expected
    assert has_digit_run(text.encode(), length) is expected
    assert has_digit_run("\ud800" + text, length) is expected


# --- nesting (docs/design.md "Limits and memory": JSON nested too deep) --------

DEPTH = _json.MAX_DEPTH
DECODERS = [
    pytest.param(_json.loads, id="loads"),
    pytest.param(lambda text: loads_payload(text.encode()), id="loads_payload"),
    pytest.param(lambda text: _json.loads_checked(text), id="stdlib"),
]


def _nested(depth: int, inner: str = "") -> str:
    return "[" * depth + inner + "]" * depth


@pytest.mark.parametrize("decode", DECODERS[:2])
def test_nesting_up_to_the_cap_decodes(decode: Any) -> None:
    assert decode(_nested(DEPTH)) == json.loads(_nested(DEPTH))
    assert decode('{"a":' + _nested(DEPTH - 1) + "}")["a"] == json.loads(_nested(DEPTH - 1))


@pytest.mark.parametrize("depth", [DEPTH + 1, 1000, 1025, 100_000])
@pytest.mark.parametrize("decode", DECODERS[:2])
def test_nesting_past_the_cap_raises_the_depth_error(decode: Any, depth: int) -> None:
    for text in (_nested(depth), "[" * depth, '{"a":' * depth + "1" + "}" * depth):
        with pytest.raises(_json.JsonDepthError):
            decode(text)


def test_brackets_inside_strings_are_not_nesting() -> None:
    text = json.dumps(["[" * 5000, "{" * 5000, '\\"[' * 1000])
    assert _json.loads(text) == json.loads(text)


def test_the_stdlib_decoder_turns_a_recursion_error_into_the_depth_error() -> None:
    # Within the cap, but from a caller with little stack left: never a RecursionError.
    from hostile_streams import at_stack_depth

    text = _nested(DEPTH)
    for decode in (_json.loads_checked, _json.loads):
        outcome = at_stack_depth(40, lambda d=decode: _try(d, text))  # type: ignore[misc]
        assert outcome in ("ok", "JsonDepthError"), outcome


def _try(decode: Any, text: str) -> str:
    try:
        decode(text)
    except _json.JsonDepthError:
        return "JsonDepthError"
    except RecursionError:
        return "RecursionError"
    return "ok"


def test_failure_names_the_depth_error_apart_from_invalid_json() -> None:
    assert _json.failure(_json.JsonDepthError(), "[[[", "a payload")[0] == "json_too_deep"
    kind, message = _json.failure(ValueError("x"), "nope", "a payload")
    assert (kind, message) == ("invalid_json", "a payload is not JSON: 'nope'")


# --- same_json -----------------------------------------------------------------------

SAME = [
    ('{"a":2,"b":3}', '{"a": 2, "b": 3}'),
    ('{"b":3,"a":2}', '{\n "a": 2,\n "b": 3\n}'),
    ("[10]", "[1e1]"),
    ("[1]", "[1.0]"),
    ('{"s":"\\u00e9"}', '{"s":"\u00e9"}'),
    ("[0]", "[-0]"),
    ("null", " null "),
]
DIFFERENT = [
    ('{"a":2}', '{"a":3}'),
    ('{"a":1}', '{"a":true}'),
    ('{"a":0}', '{"a":false}'),
    ('{"a":null}', "{}"),
    ('{"a":"1"}', '{"a":1}'),
    ("[0.1]", "[0.10000000000000001]"),  # one double, two decimal values
    ("[1,2]", "[2,1]"),
    ('{"a":1,"a":1}', '{"a":1}'),  # a duplicate key is nobody's value
    ("[NaN]", "[NaN]"),
    ("[" + "1" * 5000 + "]", "[" + "1" * 5000 + "]"),  # past int()'s digit limit
    ("[" * 300 + "]" * 300, "[" * 300 + "]" * 300),  # past MAX_DEPTH
    ('{"a":', '{"a":'),
]


@pytest.mark.parametrize(("a", "b"), SAME)
def test_same_json_spelled_differently(a: str, b: str) -> None:
    assert _json.same_json(a, b) and _json.same_json(b, a)


@pytest.mark.parametrize(("a", "b"), DIFFERENT)
def test_different_or_unreadable_json_is_not_the_same(a: str, b: str) -> None:
    assert not _json.same_json(a, b) and not _json.same_json(b, a)


def _containers(children: Any) -> Any:
    return st.lists(children, max_size=4) | st.dictionaries(
        st.text(max_size=5), children, max_size=4
    )


@given(
    st.recursive(st.none() | st.booleans() | st.integers() | st.text(), _containers, max_leaves=20)
)
def test_a_value_is_the_same_as_its_respelling(value: Any) -> None:
    assert _json.same_json(json.dumps(value), json.dumps(value, indent=2, sort_keys=True))
