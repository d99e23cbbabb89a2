"""The check's outputs: the JSON document, the terminal table, and a Markdown page.

The JSON document (``--json FILE``) is stable, keys fixed::

    {"format": "streamwire-check/1",
     "cells": [{"case", "client", "upstream", "delivery", "route",
                "layers": {layer: verdict}, "evidence": {...}}],
     "matrix": {upstream: {client: {"status", "cells", "failed", "degraded", "verdicts"}}},
     "verdicts": [{"name", "client", "upstream", "cases", "why", "advice"}],
     "summary": {...}}

``evidence`` holds, per layer, the verdict and why; the client's side (status,
content type, the first and last raw bytes, the provider events and the
unified events, sampled, with counts and times) and the mock's side (what
it received and sent, when, and whether the connection closed).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, TextIO

from .. import __version__
from .judge import LAYERS, Cell
from .names import CLIENTS
from .verdicts import exit_status, matrix, verdicts

__all__ = ["FORMAT", "Report", "build_report"]

FORMAT = "streamwire-check/1"


@dataclass
class Report:
    """The judged cells and what follows from them."""

    cells: Sequence[Cell]
    matrix: dict[str, Any]
    verdicts: list[dict[str, Any]]
    meta: dict[str, Any] = field(default_factory=dict)

    @property
    def exit_status(self) -> int:
        return exit_status(self.cells, self.verdicts)

    def summary(self) -> dict[str, Any]:
        failed = sum(c.failed for c in self.cells)
        degraded = sum(
            not c.failed and any(v == "degraded" for v in c.layers.values()) for c in self.cells
        )
        return {
            "cells": len(self.cells),
            "passed": len(self.cells) - failed - degraded,
            "degraded": degraded,
            "failed": failed,
            "verdicts": sorted({v["name"] for v in self.verdicts}),
            "exit_status": self.exit_status,
            **self.meta,
        }

    def as_dict(self) -> dict[str, Any]:
        return {
            "format": FORMAT,
            "streamwire": __version__,
            "summary": self.summary(),
            "matrix": self.matrix,
            "verdicts": self.verdicts,
            "cells": [c.as_dict() for c in self.cells],
        }

    def write_json(self, out: TextIO) -> None:
        json.dump(self.as_dict(), out, ensure_ascii=False, indent=1, default=str)
        out.write("\n")

    # --- the terminal ----------------------------------------------------------------

    def _columns(self) -> list[str]:
        seen = {c.client for c in self.cells}
        return [c for c in CLIENTS if c in seen]

    def _rows(self) -> list[str]:
        return list(self.matrix)

    @staticmethod
    def _label(pair: dict[str, Any]) -> str:
        if pair["status"] == "fail":
            return f"FAIL {pair['failed']}/{pair['cells']}"
        return str(pair["status"])

    def write_table(self, out: TextIO, *, failures: int = 40) -> None:
        s = self.summary()
        out.write(
            f"streamwire check: {s['cells']} cells: {s['passed']} pass, "
            f"{s['degraded']} degraded, {s['failed']} fail"
            + (f" ({s['seconds']:.1f} s)" if "seconds" in s else "")
            + "\n\n"
        )
        cols = self._columns()
        width = max([len("upstream \\ client"), *(len(r) for r in self._rows())]) + 2
        colw = max([18, *(len(c) + 2 for c in cols)])
        out.write("upstream \\ client".ljust(width) + "".join(c.ljust(colw) for c in cols) + "\n")
        for row in self._rows():
            cells = self.matrix[row]
            line = row.ljust(width)
            for col in cols:
                line += (self._label(cells[col]) if col in cells else "-").ljust(colw)
            out.write(line.rstrip() + "\n")
        if self.verdicts:
            out.write("\nverdicts:\n")
            for v in self.verdicts:
                out.write(
                    f"  {v['name']}: {v['upstream']} -> {v['client']} "
                    f"[{', '.join(v['cases'])}]\n      {v['why'][:400]}\n"
                )
        failing = [c for c in self.cells if c.failed]
        if failing:
            out.write(f"\nfailing cells ({len(failing)}):\n")
            for cell in failing[:failures]:
                layers = [layer for layer in LAYERS if cell.layers[layer] == "fail"]
                why = cell.checks[layers[0]].why
                out.write(
                    f"  {cell.case} {cell.upstream} -> {cell.client} ({cell.delivery}): "
                    f"{', '.join(layers)}: {why[:300]}\n"
                )
            if len(failing) > failures:
                out.write(f"  ... and {len(failing) - failures} more (see --json)\n")

    # --- Markdown ---------------------------------------------------------------------

    def write_markdown(self, out: TextIO, title: str) -> None:
        s = self.summary()
        out.write(f"# {title}\n\n")
        out.write(
            f"{s['cells']} cells: {s['passed']} pass, {s['degraded']} degraded, "
            f"{s['failed']} fail; verdicts: {', '.join(s['verdicts']) or 'none'}.\n\n"
        )
        cols = self._columns()
        out.write("| upstream \\ client | " + " | ".join(f"`{c}`" for c in cols) + " |\n")
        out.write("|---|" + "---|" * len(cols) + "\n")
        for row in self._rows():
            cells = self.matrix[row]
            parts = []
            for col in cols:
                pair = cells.get(col)
                if pair is None:
                    parts.append("-")
                    continue
                label = self._label(pair)
                if pair["verdicts"]:
                    label += " (" + ", ".join(f"`{n}`" for n in pair["verdicts"]) + ")"
                parts.append(label)
            out.write(f"| `{row}` | " + " | ".join(parts) + " |\n")
        if self.verdicts:
            out.write("\n## Verdicts\n\n")
            for v in self.verdicts:
                out.write(
                    f"* **`{v['name']}`** `{v['upstream']}` → `{v['client']}`, cases "
                    f"{', '.join(f'`{c}`' for c in v['cases'])}: {v['why']}\n"
                )
        failing = [c for c in self.cells if c.failed]
        if failing:
            out.write(
                "\n## Failing cells\n\n| case | upstream → client | delivery | layers | why |\n"
            )
            out.write("|---|---|---|---|---|\n")
            for cell in failing:
                layers = [layer for layer in LAYERS if cell.layers[layer] == "fail"]
                why = cell.checks[layers[0]].why.replace("|", "\\|").replace("\n", " ")
                out.write(
                    f"| `{cell.case}` | `{cell.upstream}` → `{cell.client}` | {cell.delivery} | "
                    f"{', '.join(layers)} | {why[:300]} |\n"
                )


def build_report(cells: Sequence[Cell], **meta: Any) -> Report:
    """The report of judged cells (``meta``: extra summary facts, e.g. ``seconds``)."""
    found = verdicts(cells)
    return Report(cells, matrix(cells, found), found, dict(meta))
