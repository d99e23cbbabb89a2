"""Counting and keeping text: ``_core.utf8_length`` and ``accumulate.coalesce_tail``."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from streamwire._core import utf8_length
from streamwire.accumulate import coalesce_tail

EDGES = "\x00\x7f\x80\xff\u0100\u07ff\u0800\ud800\udfff\uffff\U00010000\U0010ffff"


def test_utf8_length_at_every_width_edge() -> None:
    for a in EDGES:
        for b in ["", "a", *EDGES]:
            text = a + b
            assert utf8_length(text) == len(text.encode("utf-8", "surrogatepass")), repr(text)


@given(st.text())
def test_utf8_length_is_the_encoded_length(text: str) -> None:
    assert utf8_length(text) == len(text.encode("utf-8", "surrogatepass"))


@given(
    st.lists(st.sampled_from(["a", "b", "数", "🙂", ""]), max_size=8),
    st.lists(st.sampled_from(["a", "b", "数", "🙂", ""]), max_size=8),
    st.booleans(),
)
def test_coalescing_never_changes_the_concatenation(
    before: list[str], parts: list[str], interleave: bool
) -> None:
    pieces = before + parts
    if interleave and parts:
        pieces.insert(len(before) + 1, "x")  # another block's piece inside the tail
    whole = "".join(pieces)
    coalesce_tail(pieces, parts, "".join(parts))
    assert "".join(pieces) == whole
    if len(parts) > 1 and not interleave:
        assert pieces == [*before, "".join(parts)]
