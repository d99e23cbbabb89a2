"""The ``str`` objects streamwire builds from UTF-8 are the ones CPython builds.

Every event's data (``SseEvent.data``) and every captured text
(``ShapeMatcher``) is a ``str`` that ``rust/py/src/text.rs`` builds straight
into CPython's storage: the widest character read off the UTF-8 lead bytes in
sixteen-byte blocks (the last ones through a block that ends with the text),
the ASCII that starts each next sixteen bytes widened at once, the rest a
character at a time. Each is compared with the ``str`` CPython's own decoder
makes of the same bytes: equal, the same hash, and the same size (CPython
compares storage widths before characters, so a str stored wider than it
needs would be unequal to the same text built by Python). On a CPU with
AVX2 the blocks are AVX2's; the tests run again in a process that keeps to
SSE2 (``STREAMWIRE_NO_AVX2``).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from hypothesis import given
from hypothesis import strategies as st

import streamwire as sw
from streamwire._core import ShapeMatcher

#: A character of each UTF-8 length and each CPython storage width, and the
#: edges between them.
WIDE = ["\x80", "\xff", "\u0100", "\u07ff", "\u0800", "数", "\uffff", "\U00010000", "🙂"]
MATCHER = ShapeMatcher([("message", {"a": "$str"})])


def _same(got: str, text: str) -> None:
    fresh = text.encode().decode()  # CPython's decoder, a new object
    assert got == fresh and hash(got) == hash(fresh)
    if len(fresh) > 1:  # one-character strs are shared objects
        assert sys.getsizeof(got) == sys.getsizeof(fresh)


def _built(text: str) -> list[str]:
    """``text`` as event data (one event, fed whole) and as a capture."""
    decoder = sw.SseDecoder()
    (event,) = decoder.feed(b"data: " + text.encode() + b"\n\n")
    capture = MATCHER.match(json.dumps({"a": text}, ensure_ascii=False))
    assert capture is not None
    return [event.data, capture[1]]


def test_a_wide_character_at_every_place_of_every_length_around_the_blocks() -> None:
    """Texts of 0 to 50 characters, ASCII around one wide character (or a
    run of three) at each position: every way a text meets the sixteen-byte
    blocks, the units left before its end, and its last bytes."""
    for wide in WIDE:
        for length in range(51):
            for at in range(length + 1):
                for run in (wide, wide * 3):
                    text = "x" * at + run + "y" * (length - at)
                    for got in _built(text):
                        _same(got, text)


def test_ascii_of_every_length() -> None:
    for length in range(70):
        text = "".join(chr(0x21 + k % 90) for k in range(length))
        for got in _built(text):
            _same(got, text)


@given(
    st.lists(
        st.sampled_from(["a", " ", '\n\\"', *WIDE]) | st.text(max_size=20),
        max_size=40,
    )
)
def test_any_mix_of_ascii_runs_and_wide_characters(pieces: list[str]) -> None:
    text = "".join(pieces).replace("\r", "").replace("\n", "")
    if any("\ud800" <= c <= "\udfff" for c in text):
        return  # lone surrogates have no UTF-8 form
    for got in _built(text):
        _same(got, text)


def test_the_same_without_avx2() -> None:
    """The tests above in a process that keeps to SSE2 (read once, at the
    first str built: a process of its own)."""
    if os.environ.get("STREAMWIRE_NO_AVX2"):
        return  # this is that process
    env = dict(os.environ, STREAMWIRE_NO_AVX2="1")
    cmd = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "no:xdist"]
    done = subprocess.run(
        [*cmd, str(Path(__file__))], env=env, capture_output=True, text=True, check=False
    )
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-2000:]
