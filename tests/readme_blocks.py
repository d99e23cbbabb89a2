"""The README's Python code blocks as modules: type-checked in CI, run by ``tests/test_readme.py``.

Each block of ``README.md`` that opens with a ```` ```python ```` fence
becomes a module: ``PRELUDE`` (the imports and the names the README takes as
given: the request, the body chunks, a URL, ...), then the block exactly as
written. ``.ci/run`` writes them out and runs ``mypy --strict`` over them
and ``examples/`` (with ``tests/typing_probe.py``, which proves that the
mistakes the types exist for are caught)::

    python tests/readme_blocks.py OUTDIR     # writes OUTDIR/readme_block_<line>.py

``tests/test_readme.py`` runs every block with real values for those names
(recorded streams, a loopback server), so the examples run as written, too.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

__all__ = ["PRELUDE", "README", "blocks", "write"]

README = Path(__file__).resolve().parent.parent / "README.md"

#: What the README's examples take as given, with their types.
PRELUDE = """\
from __future__ import annotations

import json
from collections.abc import AsyncIterator
from typing import Any

import anyio
import httpx
import httpx2
import openai
from openai.types.chat import ChatCompletionMessageParam

import streamwire as sw

request: dict[str, Any]                          # the request sent upstream
body_chunks: list[bytes]                         # its response body, as it arrived
messages: list[dict[str, Any]]                   # the conversation so far
url: str                                         # the provider's endpoint
body: dict[str, Any]                             # a request body
chat_messages: list[ChatCompletionMessageParam]  # a chat conversation (SDK types)
upstream_chunks: list[bytes]                     # an upstream body
eventstream_bytes: bytes                         # an AWS EventStream body
r: sw.StreamResult                               # a stream's result


def run_tool(call: sw.ToolCall) -> str:
    raise NotImplementedError


def send(data: bytes) -> None:
    raise NotImplementedError


def record(result: sw.StreamResult) -> None:
    raise NotImplementedError


"""

_FENCE = re.compile(r"^```python\n(.*?)^```", re.MULTILINE | re.DOTALL)


def blocks(path: Path = README) -> list[tuple[int, str]]:
    """``(line, code)`` of every Python block, ``line`` being its fence's line number."""
    text = path.read_text(encoding="utf-8")
    return [(text.count("\n", 0, m.start()) + 1, m.group(1)) for m in _FENCE.finditer(text)]


def write(outdir: Path) -> list[Path]:
    """Writes each block as a module under ``outdir``; returns the paths."""
    outdir.mkdir(parents=True, exist_ok=True)
    paths = []
    for line, code in blocks():
        path = outdir / f"readme_block_{line:04d}.py"
        path.write_text(PRELUDE + code, encoding="utf-8")
        paths.append(path)
    return paths


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit("usage: python tests/readme_blocks.py OUTDIR")
    for written in write(Path(sys.argv[1])):
        print(written)
