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
