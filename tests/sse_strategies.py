"""Hypothesis strategies for SSE streams, shared by the SSE property tests.

Streams are built from the pieces that make SSE parsers disagree: the three
line endings (a CR at a chunk's end may be half of a CRLF), BOMs at the start
and elsewhere, comments, every field kind (``data``/``event``/``id``/``retry``,
unknown and mis-cased names, lines without a colon, values with leading
spaces, NUL in ``id``, non-digit ``retry``), multi-byte and invalid UTF-8, and
an unterminated tail. Most lines are real fields and most blocks end with a
blank line, so generated streams dispatch events often.
"""

from __future__ import annotations

from hypothesis import strategies as st

__all__ = ["BOM", "EOLS", "VALUE_PIECES", "chunked_streams", "streams"]

EOLS = (b"\n", b"\r", b"\r\n")
BOM = "\ufeff".encode()

# Value material: ASCII, spaces, colons, multi-byte characters (2, 3 and 4
# bytes, U+2028 which is not a line ending, a BOM, a literal U+FFFD) and
# ill-formed UTF-8 (stray continuation, overlong LF, surrogate, truncated
# sequences, bytes that never start a sequence).
VALUE_PIECES = [
    b"a",
    b"xyz",
    b" ",
    b"  ",
    b":",
    b"\t",
    b"\x00",
    b"0",
    b"42",
    "é".encode(),
    "€".encode(),
    "😀".encode(),
    "汉字".encode(),
    "\u2028".encode(),
    BOM,
    "\ufffd".encode(),
    b"\x80",
    b"\xc0\x8a",
    b"\xed\xa0\x80",
    b"\xe2\x82",
    b"\xf0\x9f\x98",
    b"\xff",
    b"\xc3",
]
# The four real fields are repeated so that they dominate the draw: streams
# must dispatch events often for the comparison to say much.
FIELD_NAMES = (
    [b"data"] * 8
    + [b"event", b"id", b"retry"] * 3
    + [
        b"DATA",
        b"Data",
        b"dat",
        b"data ",
        b" data",
        b"eventx",
        b"ids",
        b"retry2",
        b"foo",
        b"\xff",
        BOM + b"data",
        b"data\x00",
    ]
)

values = st.lists(st.sampled_from(VALUE_PIECES), max_size=4).map(b"".join)
id_values = st.one_of(values, st.tuples(values, values).map(lambda p: p[0] + b"\x00" + p[1]))
retry_values = st.one_of(
    st.integers(min_value=0, max_value=10**12).map(lambda n: str(n).encode()),
    st.sampled_from([b"", b" 5", b"5 ", b"-1", b"+3", b"1.5", b"1e3", b"0x10", b"5a"]),
    # Characters that str.isdigit() accepts but that are not ASCII digits.
    st.sampled_from(["\u0663", "\uff13", "\u00b2", "1\u0663"]).map(str.encode),
)
VALUES_FOR = {b"id": id_values, b"retry": retry_values}


@st.composite
def field_lines(draw: st.DrawFn) -> bytes:
    name = draw(st.sampled_from(FIELD_NAMES))
    value = draw(VALUES_FOR.get(name, values))
    if not draw(st.integers(0, 5)):
        return name  # no colon: the whole line is the name, the value is ""
    spaces = draw(st.sampled_from([b"", b" ", b"  "]))
    return name + b":" + spaces + value


lines = st.one_of(
    field_lines(),
    field_lines(),
    field_lines(),
    field_lines(),
    values.map(lambda v: b":" + v),  # comment
    st.sampled_from([b" ", b"\t", BOM, b"\xff:x"]),  # not blank, not a field
)


@st.composite
def streams(draw: st.DrawFn) -> bytes:
    """Blocks of lines, most ended by a blank line, each line with any line ending."""
    eols = st.sampled_from(EOLS)
    out = draw(st.sampled_from([b"", b"", BOM, BOM + BOM, BOM[:2]]))
    for block in draw(st.lists(st.lists(lines, min_size=1, max_size=4), max_size=10)):
        for line in block:
            out += line + draw(eols)
        if draw(st.integers(0, 6)):
            out += draw(eols)  # the blank line that dispatches
    if draw(st.booleans()):
        out += draw(lines)  # an unterminated tail, discarded at EOF
    return out


@st.composite
def chunked_streams(draw: st.DrawFn) -> tuple[bytes, list[bytes]]:
    """A stream and a chunking of it (split points drawn freely; repeats make empty chunks)."""
    data = draw(streams())
    if draw(st.integers(0, 9)) == 0:
        return data, [data[i : i + 1] for i in range(len(data))]  # one byte at a time
    cuts = sorted(draw(st.lists(st.integers(0, len(data)), max_size=min(len(data) + 2, 40))))
    return data, [data[a:b] for a, b in zip([0, *cuts], [*cuts, len(data)], strict=True)]
