"""Counting and keeping text: ``_core.utf8_length``, ``ChoiceState.coalesce_tail``
and the snapshot's incremental join (``accumulate.Joined``)."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from streamwire._core import utf8_length
from streamwire.accumulate import ChoiceState, Joined

EDGES = "\x00\x7f\x80\xff\u0100\u07ff\u0800\ud800\udfff\uffff\U00010000\U0010ffff"


def test_utf8_length_at_every_width_edge() -> None:
    for a in EDGES:
        for b in ["", "a", *EDGES]:
            text = a + b
            assert utf8_length(text) == len(text.encode("utf-8", "surrogatepass")), repr(text)


@given(st.text())
def test_utf8_length_is_the_encoded_length(text: str) -> None:
    assert utf8_length(text) == len(text.encode("utf-8", "surrogatepass"))


PIECES = st.lists(st.sampled_from(["a", "b", "数", "🙂", ""]), max_size=8)


@given(PIECES, PIECES, st.booleans(), st.integers(0, 20))
def test_coalescing_never_changes_the_concatenation(
    before: list[str], parts: list[str], interleave: bool, joined_at: int
) -> None:
    choice = ChoiceState(0)
    pieces = choice.text
    pieces += before + parts
    if interleave and parts:
        pieces.insert(len(before) + 1, "x")  # another block's piece inside the tail
    whole = "".join(pieces)
    # A snapshot joined the first pieces before the block closed.
    seen = min(joined_at, len(pieces))
    assert choice.joined[0].of(pieces[:seen]) == "".join(pieces[:seen])
    choice.joined[0].count = seen  # as if it had read the list at that length
    choice.joined[0].last = pieces[seen - 1] if seen else None
    choice.coalesce_tail("text", parts, "".join(parts))
    assert "".join(pieces) == whole
    assert choice.joined[0].of(pieces) == whole
    if len(parts) > 1 and not interleave:
        # Coalesced unless the snapshot had joined part of the block's pieces.
        coalesced = [*before, "".join(parts)]
        assert pieces == (coalesced if seen <= len(before) else before + parts)


@given(st.lists(st.lists(st.sampled_from(["a", "数", "🙂", "\ud800", ""]), max_size=4)))
def test_joined_extends_a_growing_list_and_rejoins_a_rewritten_one(
    batches: list[list[str]],
) -> None:
    for start in (0, 1):
        pieces = ["head"]
        joined = Joined(start)
        for batch in batches:
            pieces += batch
            text = joined.of(pieces)
            assert text == "".join(pieces[start:])
            assert joined.nbytes == len(text.encode("utf-8", "surrogatepass"))
        if len(pieces) > start + 1:
            pieces[start:] = ["re", "written"]
            assert joined.of(pieces) == "rewritten"
