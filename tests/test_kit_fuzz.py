"""The kit's reading side fuzzed with hostile gateways (``kit_fuzz.py``), for a bounded time.

Every answer, wrong at every level, ends within the kit's limits as a
failing or inconclusive cell with JSON-ready evidence, memory bounded; and
what the kit writes of it stays inert: the Markdown and the terminal escape
what the gateway sent, the HTML too.
"""

from __future__ import annotations

import asyncio
import io
import os
import re

import pytest

import kit_fuzz
from streamwire.kit.report.document import build_report, markdown_text, terminal_text
from streamwire.kit.report.html import write_html

SECONDS = float(os.environ.get("STREAMWIRE_KIT_FUZZ_SECONDS", "20"))
SEED = int(os.environ.get("STREAMWIRE_KIT_FUZZ_SEED", "20261202"))
NASTY = "<script>alert(1)</script><img onerror=x>|`x`[l](javascript:x)\x1b[2J\u202e"


@pytest.mark.timed
def test_hostile_gateways_get_verdicts_never_a_traceback_or_a_hang() -> None:
    figures = asyncio.run(kit_fuzz.fuzz(SECONDS, SEED))
    assert figures.problems == []
    assert figures.answers >= 30, figures
    assert len(figures.by_kind) >= 12, figures.by_kind
    assert figures.peak_bytes < kit_fuzz.MAX_PEAK
    report = build_report(figures.cells)
    markdown, table, html = io.StringIO(), io.StringIO(), io.StringIO()
    report.write_markdown(markdown, "fuzz " + NASTY)
    report.write_table(table)
    write_html(report, html, "fuzz " + NASTY)
    for text in (markdown.getvalue(), html.getvalue()):
        assert "<script" not in text and "<img" not in text
    assert "\x1b" not in table.getvalue() and "\x1b" not in markdown.getvalue()


def test_markdown_and_terminal_escapes_are_inert() -> None:
    md = markdown_text(NASTY)
    assert "<" not in md and ">" not in md and "\x1b" not in md and "\u202e" not in md
    assert re.search(r"(?<!\\)[|`\[\]]", md) is None, md
    term = terminal_text("a\x1b[2Jb\u202ec\nd")
    assert term == "a\\x1b[2Jb\\u202ec\nd"
