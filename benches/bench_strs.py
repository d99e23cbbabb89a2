"""Building a delta's ``str``: ``ShapeMatcher.match`` on one payload per text kind.

Every delta an adapter emits is a ``str`` built from the payload's UTF-8
bytes, so this cost is paid once per event. The default build allocates each
non-ASCII ``str`` once at its exact storage width (``rust/py/src/text.rs``);
the ``abi3`` build goes through CPython's UTF-8 decoder. Running this script
under both builds compares them on the same machine::

    python benches/bench_strs.py
    maturin build --release --features abi3 -o dist
    pip install --no-deps --target build/streamwire-abi3 dist/*abi3*.whl
    PYTHONPATH=build/streamwire-abi3 python benches/bench_strs.py

Each timing is the best of 5 repeats of a ``timeit`` loop, in ns per call
(matching included: the matcher's own work is the same in both builds). Each
capture is checked against ``json.loads``; run once as tests with
``pytest benches/bench_strs.py``.
"""

from __future__ import annotations

import json
import sys
import timeit

import pytest

import streamwire._core as core
from streamwire._core import ShapeMatcher

MATCHER = ShapeMatcher([("message", {"a": "$str"})])
TEXTS = {
    "ascii-30": "Hello there, how are you toda",
    "latin1-30": "héllo wörld café naïve résumé ",
    "cjk-30": "数据流解析器数据流解析器数据流解析器数据流解析器数据流解析",
    "emoji-mixed-30": "👩\u200d💻 `code` Hello of is\n\n- 🙂 parser✨",
    "chat-chunk-230": json.dumps(
        {
            "id": "chatcmpl-AbC123",
            "object": "chat.completion.chunk",
            "created": 1732900000,
            "model": "gpt-4o-2024-08-06",
            "choices": [{"index": 0, "delta": {"content": " 数据流 hello"}, "finish_reason": None}],
        },
        ensure_ascii=False,
    ),
    "ascii-then-emoji-230": "x" * 220 + "🙂",
}


def payload(text: str) -> str:
    return json.dumps({"a": text}, ensure_ascii=False)


@pytest.mark.parametrize("name", list(TEXTS))
def test_str_build(benchmark: object, name: str) -> None:
    text = TEXTS[name]
    data = payload(text)
    got = benchmark(MATCHER.match, data)  # type: ignore[operator]
    assert got is not None and got[1] == json.loads(data)["a"]


def main() -> None:
    build = "abi3" if core.__file__.endswith(".abi3.so") else "version-specific"
    print(f"streamwire._core: {build} build ({core.__file__.rsplit('/', 1)[-1]})")
    for name, text in TEXTS.items():
        data = payload(text)
        got = MATCHER.match(data)
        assert got is not None and got[1] == json.loads(data)["a"], name
        n = 100_000
        best = min(timeit.repeat(lambda data=data: MATCHER.match(data), number=n, repeat=5))
        print(f"{name:22s} {best / n * 1e9:6.0f} ns")


if __name__ == "__main__":
    main()
    sys.exit(0)
