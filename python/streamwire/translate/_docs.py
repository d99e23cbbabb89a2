"""``docs/translation.md``: the mapping table of ``_mapping.py``, rendered as markdown.

Regenerate the document after changing the table::

    python -m streamwire.translate._docs > docs/translation.md

``tests/test_translate.py`` checks that the document is the current rendering.
"""

from __future__ import annotations

from ..events import StopReason
from ._mapping import LOSSY_STOP_REASONS, ROWS, STOP_REASONS, TARGETS
from ._usage import INPUT_INCLUDES_CACHE

__all__ = ["render_markdown"]


def render_markdown() -> str:
    """``docs/translation.md``: the table, rendered."""
    lines = [
        "# Gateway translation: the mapping table",
        "",
        "<!-- Rendered from python/streamwire/translate/_mapping.py by",
        "     `python -m streamwire.translate._docs > docs/translation.md`;",
        "     edit the module, not this file. -->",
        "",
        "`sw.encoder(target)` re-encodes the unified events of any adapter into",
        "the wire format of `target`, streaming: `enc.feed(events)` returns the",
        "bytes for those events at once, `enc.close()` ends the target's grammar.",
        "What a target cannot carry is a declared downgrade: marked **downgrade**",
        "below, and reported on `enc.downgrades` (feature, detail, count) when a",
        "stream needs it, never silently.",
        "",
        "| feature | source (unified events) | " + " | ".join(TARGETS) + " |",
        "|---|---|" + "---|" * len(TARGETS),
    ]
    for row in ROWS:
        cells = []
        for target in TARGETS:
            cell = row.cells[target]
            text = cell.how
            if cell.downgrade is not None:
                text += f"; **downgrade**: {cell.downgrade}"
            cells.append(_md(text))
        lines.append(f"| `{row.feature}` | {_md(row.source)} | " + " | ".join(cells) + " |")
    lines += [
        "",
        "## Stop reasons",
        "",
        "| normalized | " + " | ".join(STOP_REASONS) + " |",
        "|---|" + "---|" * len(STOP_REASONS),
    ]
    stops: tuple[StopReason, ...] = (
        "stop",
        "length",
        "tool_calls",
        "content_filter",
        "pause",
        "other",
    )
    for stop in stops:
        values = []
        for target, mapping in STOP_REASONS.items():
            value = f"`{mapping[stop]}`"
            if (target, stop) in LOSSY_STOP_REASONS:
                value += " (**downgrade**)"
            values.append(value)
        lines.append(f"| `{stop}` | " + " | ".join(values) + " |")
    lines += [
        "",
        "A source's raw stop reason that the target shares with the same",
        "category is passed verbatim (e.g. anthropic `stop_sequence`, Gemini",
        "`RECITATION`). `openai-responses` has no stop reason field: see the",
        "`stop_reason` row. Status `error` sends the target's error event instead",
        "of a stop reason.",
        "",
        "## Usage conventions",
        "",
        "| protocol | input figure counts cached tokens |",
        "|---|---|",
    ]
    for protocol, inclusive in INPUT_INCLUDES_CACHE.items():
        lines.append(f"| `{protocol}` | {'yes' if inclusive else 'no (cache figures beside it)'} |")
    lines += [
        "",
        "Usage is converted, never estimated: an exclusive input figure is the",
        "inclusive one less the cache reads and writes, and the reverse. A target",
        "that requires a total gets the source's, or input + output.",
        "",
    ]
    return "\n".join(lines)


def _md(text: str) -> str:
    """A cell's text in markdown: single-backtick code, escaped pipes."""
    return text.replace("``", "`").replace("|", "\\|")


if __name__ == "__main__":
    print(render_markdown(), end="")
