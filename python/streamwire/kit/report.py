"""The check's outputs: the JSON document, the terminal table, and a Markdown page.

The JSON document (``--json FILE``) is stable, keys fixed::

    {"format": "streamwire-check/1",
     "cells": [{"case", "client", "upstream", "delivery", "route",
                "layers": {layer: verdict}, "evidence": {...}}],
     "matrix": {upstream: {client: {"status", "cells", "failed", "degraded", "verdicts"}}},
     "verdicts": [{"name", "client", "upstream", "cases", "why", "advice", "timed_cases"}],
     "summary": {...}}

``evidence`` holds, per layer, the verdict and why; the client's side (status,
content type, the first and last raw bytes, the provider events and the
unified events, sampled, with counts and times) and the mock's side (what
it received and sent, when, and whether the connection closed).
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, TextIO

from .. import __version__
from .cell import Cell
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
        degraded = sum(c.degraded for c in self.cells)
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

    # --- what every rendering shows ------------------------------------------------------

    def headline(self) -> str:
        """``N cells: a pass, b degraded, c fail``."""
        s = self.summary()
        return (
            f"{s['cells']} cells: {s['passed']} pass, {s['degraded']} degraded, {s['failed']} fail"
        )

    def columns(self) -> list[str]:
        """The client protocols that were run, in ``CLIENTS`` order."""
        seen = {c.client for c in self.cells}
        return [c for c in CLIENTS if c in seen]

    @staticmethod
    def label(pair: Mapping[str, Any]) -> str:
        """A matrix entry in words: ``pass``, ``degraded``, ``FAIL 3/45``."""
        if pair["status"] == "fail":
            return f"FAIL {pair['failed']}/{pair['cells']}"
        return str(pair["status"])

    def failing(self) -> list[tuple[Cell, list[str], str]]:
        """(cell, its failing layers, why the first failed) of every failing cell."""
        out = []
        for cell in self.cells:
            layers = cell.failing
            if layers:
                out.append((cell, layers, cell.checks[layers[0]].why))
        return out

    # --- the terminal ----------------------------------------------------------------

    def write_table(self, out: TextIO, *, failures: int = 40) -> None:
        seconds = self.meta.get("seconds")
        out.write(
            f"streamwire check: {self.headline()}"
            + (f" ({seconds:.1f} s)" if seconds is not None else "")
            + "\n\n"
        )
        cols = self.columns()
        width = max([len("upstream \\ client"), *(len(r) for r in self.matrix)]) + 2
        colw = max([18, *(len(c) + 2 for c in cols)])
        out.write("upstream \\ client".ljust(width) + "".join(c.ljust(colw) for c in cols) + "\n")
        for row, pairs in self.matrix.items():
            line = row.ljust(width)
            for col in cols:
                line += (self.label(pairs[col]) if col in pairs else "-").ljust(colw)
            out.write(line.rstrip() + "\n")
        if self.verdicts:
            out.write("\nverdicts:\n")
            for v in self.verdicts:
                out.write(
                    f"  {v['name']}: {v['upstream']} -> {v['client']} "
                    f"[{', '.join(v['cases'])}]\n      {v['why'][:400]}\n"
                )
        failing = self.failing()
        if failing:
            out.write(f"\nfailing cells ({len(failing)}):\n")
            for cell, layers, why in failing[:failures]:
                out.write(
                    f"  {cell.case} {cell.upstream} -> {cell.client} ({cell.delivery}): "
                    f"{', '.join(layers)}: {why[:300]}\n"
                )
            if len(failing) > failures:
                out.write(f"  ... and {len(failing) - failures} more (see --json)\n")

    # --- Markdown ---------------------------------------------------------------------

    def write_markdown(self, out: TextIO, title: str) -> None:
        names = ", ".join(self.summary()["verdicts"]) or "none"
        out.write(f"# {title}\n\n{self.headline()}; verdicts: {names}.\n\n")
        cols = self.columns()
        out.write("| upstream \\ client | " + " | ".join(f"`{c}`" for c in cols) + " |\n")
        out.write("|---|" + "---|" * len(cols) + "\n")
        for row, pairs in self.matrix.items():
            parts = []
            for col in cols:
                pair = pairs.get(col)
                if pair is None:
                    parts.append("-")
                    continue
                label = self.label(pair)
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
        failing = self.failing()
        if failing:
            out.write(
                "\n## Failing cells\n\n| case | upstream → client | delivery | layers | why |\n"
            )
            out.write("|---|---|---|---|---|\n")
            for cell, layers, why in failing:
                why = why.replace("|", "\\|").replace("\n", " ")
                out.write(
                    f"| `{cell.case}` | `{cell.upstream}` → `{cell.client}` | {cell.delivery} | "
                    f"{', '.join(layers)} | {why[:300]} |\n"
                )


def build_report(cells: Sequence[Cell], **meta: Any) -> Report:
    """The report of judged cells (``meta``: extra summary facts, e.g. ``seconds``)."""
    found = verdicts(cells)
    return Report(cells, matrix(cells, found), found, dict(meta))
