"""Counting text: ``_core.utf8_length``."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from streamwire._core import utf8_length

EDGES = "\x00\x7f\x80\xff\u0100\u07ff\u0800\ud800\udfff\uffff\U00010000\U0010ffff"


def test_utf8_length_at_every_width_edge() -> None:
    for a in EDGES:
        for b in ["", "a", *EDGES]:
            text = a + b
            assert utf8_length(text) == len(text.encode("utf-8", "surrogatepass")), repr(text)


@given(st.text())
def test_utf8_length_is_the_encoded_length(text: str) -> None:
    assert utf8_length(text) == len(text.encode("utf-8", "surrogatepass"))
