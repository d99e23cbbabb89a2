"""The check's outputs: the JSON document, the terminal summary, and a Markdown page.

The JSON document (``--json FILE``, ``FORMAT``) is stable, its keys fixed:
tools and the next run's comparison (``report/compare.py``) read them.
docs/kit/outputs.md ("JSON") shows it whole, and its sections the members
that options add (``paths``, ``reproduce``, ``repeat``).

A cell's state (``Cell.state``) is ``pass``, ``degraded``, ``fail``,
``inconclusive``, or with ``--repeat N`` ``flaky``: its runs differ in a
verdict no clock decided. A repeated cell's own layers and evidence are its
worst run's.

The terminal summary and the Markdown page group every failing (or
degraded) cell by verdict and layer, nothing left out, and show beside each
verdict the ``curl`` command that reproduces its first failing cell
(``report/reproduce.py``). What the gateway sent is shown with its control
characters escaped, and in the Markdown page every string the gateway or
its upstream could have chosen is escaped (``markdown_text``): the page is
meant for pull-request comments and dashboards that render Markdown with
HTML.
"""

from __future__ import annotations

import json
import re
import shutil
import textwrap
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, TextIO

from ... import __version__
from ..judge.cell import Cell
from ..judge.verdicts import (
    CATCH_ALL,
    cell_verdicts,
    control_cells,
    cost,
    exit_status,
    matrix,
    verdicts,
)
from ..vocab.delivery import UNARY
from ..vocab.names import CLIENTS
from .paths import compare_paths, findings
from .reproduce import by_verdict

__all__ = ["FORMAT", "Report", "build_report", "markdown_text", "terminal_text"]

FORMAT = "streamwire-check/2"

_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069]")
#: Markdown's inline syntax (emphasis, code, links, tables, headings,
#: strike-through) and ``:`` (autolinked URLs); ``<``, ``>`` and ``&`` are entities.
_MARKDOWN = re.compile(r"[\\`*_\[\]|~#:]")


def terminal_text(text: str) -> str:
    """``text`` with control characters (and bidi overrides) shown escaped."""
    return _CONTROL.sub(lambda m: m.group(0).encode("unicode_escape").decode("ascii"), text)


def markdown_text(text: str) -> str:
    """``text`` inert in Markdown rendered with HTML: every character Markdown or
    HTML could read as syntax is escaped (``&``, ``<`` and ``>`` as entities, the
    rest with a backslash), newlines become spaces, control characters are shown."""
    text = terminal_text(text.replace("\r", " ").replace("\n", " "))
    text = text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
    return _MARKDOWN.sub(lambda m: "\\" + m.group(0), text)


def _md_block(text: str, indent: str = "") -> str:
    """``text`` as a fenced shell block, its fence longer than any run of
    backticks in it."""
    runs = [len(r) for r in re.findall(r"`+", text)]
    fence = "`" * max(3, max(runs, default=0) + 1)
    text = terminal_text(text)
    return f"{indent}{fence}sh\n{indent}{text}\n{indent}{fence}\n"


def _md_code(text: str) -> str:
    # A code span cannot hold a backtick safely: names with one are shown escaped.
    if "`" in text or _CONTROL.search(text) or "<" in text or "\n" in text:
        return markdown_text(text)
    return f"`{text}`"


@dataclass
class Report:
    """The judged cells and what follows from them."""

    cells: Sequence[Cell]
    matrix: dict[str, Any]
    verdicts: list[dict[str, Any]]
    meta: dict[str, Any] = field(default_factory=dict)
    #: The path comparison (``paths.compare_paths``) when the run had paths.
    paths: dict[str, Any] | None = None

    @property
    def exit_status(self) -> int:
        return exit_status(self.cells, self.verdicts)

    def summary(self) -> dict[str, Any]:
        states = [c.state for c in self.cells]
        out = {
            "cells": len(self.cells),
            "passed": states.count("pass"),
            "degraded": states.count("degraded"),
            "failed": states.count("fail"),
            "inconclusive": states.count("inconclusive"),
        }
        repeats = {len(c.runs) for c in self.cells if c.runs}
        if repeats:
            out["flaky"] = states.count("flaky")
            out["repeat"] = max(repeats)
        return {
            **out,
            "verdicts": sorted({v["name"] for v in self.verdicts}),
            "exit_status": self.exit_status,
            **{k: v for k, v in self.meta.items() if k not in ("routes", "run")},
        }

    def as_dict(self) -> dict[str, Any]:
        return {
            "format": FORMAT,
            "streamwire": __version__,
            "summary": self.summary(),
            "routes": self.meta.get("routes", []),
            "run": self.meta.get("run"),
            "matrix": self.matrix,
            "verdicts": self.verdicts,
            **({"paths": self.paths} if self.paths is not None else {}),
            "cells": [c.as_dict() for c in self.cells],
        }

    def write_json(self, out: TextIO) -> None:
        json.dump(self.as_dict(), out, ensure_ascii=False, indent=1, default=str)
        out.write("\n")

    # --- what every rendering shows ------------------------------------------------------

    def headline(self) -> str:
        """``N cells: a pass, b degraded, c fail[, d inconclusive]``."""
        s = self.summary()
        line = (
            f"{s['cells']} cells: {s['passed']} pass, {s['degraded']} degraded, {s['failed']} fail"
        )
        if s.get("flaky"):
            line += f", {s['flaky']} flaky (their {s['repeat']} runs differ)"
        if s["inconclusive"]:
            line += f", {s['inconclusive']} inconclusive (cut by the kit's own timeout)"
        return line

    def columns(self) -> list[str]:
        """The client protocols that were run, in ``CLIENTS`` order, then the SDK
        clients (``<protocol> via <sdk>``) in the order they ran."""
        seen = {c.client for c in self.cells}
        via = dict.fromkeys(c.client for c in self.cells if c.client not in CLIENTS)
        return [c for c in CLIENTS if c in seen] + list(via)

    def sdk_lines(self) -> list[str]:
        """``<protocol> via <sdk>: <sdk> <version>`` of each SDK client that ran."""
        sdks: Mapping[str, str] = self.meta.get("sdks") or {}
        ran = {c.client for c in self.cells}
        return [f"{client}: {version}" for client, version in sdks.items() if client in ran]

    @staticmethod
    def label(pair: Mapping[str, Any]) -> str:
        """A matrix entry in words: ``pass``, ``degraded``, ``FAIL 3/45``."""
        if pair["status"] == "fail":
            return f"FAIL {pair['failed']}/{pair['cells']}"
        if pair["status"] == "flaky":
            return f"FLAKY {pair.get('flaky', 0)}/{pair['cells']}"
        return str(pair["status"])

    @classmethod
    def modes(cls, pair: Mapping[str, Any]) -> str:
        """A pair's streaming, non-streaming and tool-call columns in words:
        ``streaming pass, non-streaming FAIL 2/11, tools unsafe``."""
        parts = []
        for key, name in (("streaming", "streaming"), ("non_streaming", "non-streaming")):
            mode = pair.get(key) or {}
            if mode.get("status") is not None:
                parts.append(f"{name} {cls.label(mode)}")
        safe = (pair.get("tools") or {}).get("safe")
        if safe is not None:
            parts.append("tools " + ("safe" if safe else "unsafe"))
        return ", ".join(parts)

    def mode_rows(self) -> list[tuple[str, str, str]]:
        """(route, client, ``modes`` in words) of every pair, when the run had
        unary cells (else none: the matrix says it all)."""
        if not any(c.delivery == UNARY for c in self.cells):
            return []
        return [
            (route, client, self.modes(pair))
            for route, row in self.matrix.items()
            for client, pair in row["clients"].items()
        ]

    def path_lines(self) -> list[tuple[str, list[str]]]:
        """(path, its differences from the reference path in sentences), when the run had paths."""
        if not self.paths:
            return []
        return list(findings(self.paths).items())

    def end_events(self) -> dict[str, str]:
        """How each upstream protocol the run met ends its stream (``names.END_EVENTS``)."""
        out: dict[str, str] = {}
        for row in self.matrix.values():
            for upstream, end in (row.get("end_events") or {}).items():
                if end:
                    out.setdefault(upstream, end)
        return dict(sorted(out.items()))

    def unsafe_for_tools(self) -> list[tuple[str, str, list[str]]]:
        """(route, client, reasons) of every pair a tool call should not be run
        through (``verdicts.tool_safety``)."""
        return [
            (route, client, pair["tools"]["why"])
            for route, row in self.matrix.items()
            for client, pair in row["clients"].items()
            if pair.get("tools", {}).get("safe") is False
        ]

    def attempt_rows(self) -> list[tuple[Cell, str]]:
        """(cell, its attempts and their spacing in words, ``429 -> 1.01 s ->
        200``, from the mock's log) of every cell the ``retries`` layer
        judged with attempts, in plan order."""
        out = []
        for cell in self.cells:
            check = cell.checks.get("retries")
            words = check.details.get("spacing") if check is not None else None
            if isinstance(words, str) and words:
                out.append((cell, words))
        return out

    def reproductions(self) -> dict[tuple[str, str, str], str]:
        """(verdict, route, client) -> the ``curl`` command of the first
        failing cell that raised it (``reproduce.by_verdict``)."""
        return by_verdict(self.cells)

    def failing(self) -> list[tuple[Cell, list[str], str]]:
        """(cell, its failing layers, why the first failed) of every failing
        cell, by what its verdicts cost a user (``verdicts.COST_GROUPS``), the
        worst first, and each cell's layers so too; plan order otherwise."""
        controls = control_cells(self.cells)
        ranked = []
        for cell in self.cells:
            if not cell.failing:
                continue
            control = controls.get((cell.route, cell.client, cell.delivery, cell.case))
            named = {layer: name for name, layer in cell_verdicts(cell, control)}
            layers = sorted(cell.failing, key=lambda layer: cost(named.get(layer, CATCH_ALL.name)))
            rank = cost(named.get(layers[0], CATCH_ALL.name))
            ranked.append((rank, (cell, layers, cell.checks[layers[0]].why)))
        ranked.sort(key=lambda item: item[0])
        return [row for _, row in ranked]

    def flaky(self) -> list[tuple[Cell, str]]:
        """(cell, its runs in words) of every flaky cell: how many runs failed,
        each layer whose verdicts differed, and the first reason a run gave."""
        out = []
        for cell in self.cells:
            record = cell.repeat_record()
            if record is None or not cell.flaky:
                continue
            counts = "; ".join(
                f"{layer} " + ", ".join(f"{v} {n}x" for v, n in sorted(seen.items()))
                for layer, seen in record["layers"].items()
            )
            why = next((w for run in record["runs"] for w in run["failing"].values() if w), "")
            words = f"{record['failed']} of {record['count']} runs failed; {counts}"
            out.append((cell, words + (f"; {why}" if why else "")))
        return out

    def by_verdict(self) -> dict[tuple[str, str], dict[tuple[str, str, str], list[str]]]:
        """(verdict, layer) -> (case, route, client) -> the deliveries it was
        raised in: every failing or degraded layer of every cell, grouped."""
        out: dict[tuple[str, str], dict[tuple[str, str, str], list[str]]] = {}
        controls = control_cells(self.cells)
        for cell in self.cells:
            control = controls.get((cell.route, cell.client, cell.delivery, cell.case))
            for name, layer in cell_verdicts(cell, control):
                where = out.setdefault((name, layer), {})
                where.setdefault((cell.case, cell.route, cell.client), []).append(cell.delivery)
        order = {n: i for i, n in enumerate(v["name"] for v in self.verdicts)}
        return dict(sorted(out.items(), key=lambda kv: (order.get(kv[0][0], 99), kv[0][1])))

    # --- the terminal ----------------------------------------------------------------

    def write_table(self, out: TextIO, *, width: int | None = None) -> None:
        width = width or shutil.get_terminal_size((100, 24)).columns
        width = max(60, width)
        seconds = self.meta.get("seconds")
        out.write(
            f"streamwire check: {self.headline()}"
            + (f" ({seconds:.1f} s)" if seconds is not None else "")
            + "\n\n"
        )
        cols = self.columns()
        routes = [terminal_text(r) for r in self.matrix]
        first = max([len("route"), *(len(r) for r in routes)]) + 2
        ups = [", ".join(row["upstream"]) or "none" for row in self.matrix.values()]
        second = max([len("upstream"), *(len(u) for u in ups)]) + 2
        colw = max([12, *(len(c) + 2 for c in cols)])
        header = "route".ljust(first) + "upstream".ljust(second)
        out.write(header + "".join(c.ljust(colw) for c in cols) + "\n")
        for route, upstream, row in zip(routes, ups, self.matrix.values(), strict=True):
            line = route.ljust(first) + upstream.ljust(second)
            for col in cols:
                pair = row["clients"].get(col)
                line += (self.label(pair) if pair else "-").ljust(colw)
            out.write(line.rstrip() + "\n")
        wrap = textwrap.TextWrapper(width=width, subsequent_indent="      ")
        sdk_lines = self.sdk_lines()
        if sdk_lines:
            out.write("\nthe SDK clients (the official SDK, pointed at the gateway):\n")
            for line in sdk_lines:
                out.write(wrap.fill(f"  {line}") + "\n")
        modes = self.mode_rows()
        if modes:
            out.write("\nstreaming, non-streaming and tool calls:\n")
            for route, client, words in modes:
                out.write(wrap.fill(f"  {terminal_text(route)} <- {client}: {words}") + "\n")
            out.write("how each upstream's stream ends:\n")
            for upstream, end in self.end_events().items():
                out.write(wrap.fill(f"  {upstream}: {end}") + "\n")
        path_lines = self.path_lines()
        if path_lines and self.paths is not None:
            reference = terminal_text(str(self.paths["reference"]))
            out.write(f"\npaths against {reference} (what each hop changed):\n")
            for name, lines in path_lines:
                out.write(f"  {terminal_text(name)}:\n")
                for line in lines:
                    out.write(wrap.fill("    " + terminal_text(line)) + "\n")
        attempts = self.attempt_rows()
        if attempts:
            out.write("\nattempts per retry cell (the upstream's statuses, the seconds between):\n")
            for cell, words in attempts:
                place = f"{cell.case} {terminal_text(cell.route)} <- {cell.client}"
                verdict = cell.checks["retries"].verdict
                out.write(wrap.fill(f"  {place}: {words} ({verdict})") + "\n")
        unsafe = self.unsafe_for_tools()
        if unsafe:
            out.write("\nunsafe for tool execution (turn tool routing off, serve chat only):\n")
            for route, client, why in unsafe:
                out.write(wrap.fill(f"  {terminal_text(route)} <- {client}: ") + "\n")
                for reason in why:
                    out.write(wrap.fill("      " + terminal_text(reason)) + "\n")
        if self.verdicts:
            out.write("\nverdicts:\n")
            commands = self.reproductions()
            for v in self.verdicts:
                head = (
                    f"  {v['name']}: {terminal_text(v['route'])} <- {v['client']} "
                    f"(upstream {', '.join(v['upstream'])}; {v['cells']} cells; "
                    f"{', '.join(v['layers'])}) [{', '.join(v['cases'])}]"
                )
                out.write(wrap.fill(head) + "\n")
                out.write(wrap.fill("      why: " + terminal_text(v["why"])) + "\n")
                if v["figures"]:
                    shown = "; ".join(
                        f"{k.removesuffix('_ms').replace('_', ' ')} "
                        + (f"{lo:g}" if lo == hi else f"{lo:g} to {hi:g}")
                        + (" ms" if k.endswith("_ms") else "")
                        for k, (lo, hi) in v["figures"].items()
                    )
                    out.write(wrap.fill("      figures: " + shown) + "\n")
                out.write(wrap.fill("      do: " + v["advice"]) + "\n")
                command = commands.get((v["name"], v["route"], v["client"]))
                if command:
                    # Unwrapped: it is copied and pasted whole.
                    out.write(f"      reproduce: {terminal_text(command)}\n")
        grouped = self.by_verdict()
        if grouped:
            out.write("\ncells, by verdict and layer:\n")
            items = textwrap.TextWrapper(
                width=width, initial_indent="    ", subsequent_indent="      "
            )
            for (name, layer), where in grouped.items():
                out.write(f"  {name} / {layer} ({sum(len(d) for d in where.values())} cells):\n")
                for line in _compact(where):
                    out.write(items.fill(terminal_text(line)) + "\n")
        flaky = self.flaky()
        if flaky:
            out.write(
                f"\nflaky cells ({len(flaky)}): their runs differ in a verdict no clock "
                "decided (a defect that shows in some runs is a defect):\n"
            )
            for cell, words in flaky:
                place = (
                    f"{cell.case} {terminal_text(cell.route)} <- {cell.client} ({cell.delivery})"
                )
                out.write(wrap.fill(f"  {place}: {terminal_text(words)}") + "\n")
        inconclusive = [c for c in self.cells if c.state == "inconclusive"]
        if inconclusive:
            out.write(f"\ninconclusive cells ({len(inconclusive)}), cut by the kit's timeout:\n")
            entries = [
                f"{c.case} {terminal_text(c.route)} <- {c.client} ({c.delivery});"
                for c in inconclusive
            ]
            out.write(
                textwrap.fill(
                    " ".join(entries).rstrip(";"),
                    width,
                    initial_indent="    ",
                    subsequent_indent="    ",
                )
                + "\n    raise --timeout (or run fewer cells at once) to judge them\n"
            )

    # --- Markdown ---------------------------------------------------------------------

    def write_markdown(self, out: TextIO, title: str) -> None:
        names = ", ".join(self.summary()["verdicts"]) or "none"
        out.write(f"# {markdown_text(title)}\n\n{self.headline()}; verdicts: {names}.\n\n")
        cols = self.columns()
        out.write("| route | upstream | " + " | ".join(f"`{c}`" for c in cols) + " |\n")
        out.write("|---|---|" + "---|" * len(cols) + "\n")
        for route, row in self.matrix.items():
            parts = []
            for col in cols:
                pair = row["clients"].get(col)
                if pair is None:
                    parts.append("-")
                    continue
                label = self.label(pair)
                if pair["verdicts"]:
                    label += " (" + ", ".join(f"`{n}`" for n in pair["verdicts"]) + ")"
                parts.append(label)
            ups = ", ".join(f"`{u}`" for u in row["upstream"]) or "none"
            out.write(f"| {_md_code(route)} | {ups} | " + " | ".join(parts) + " |\n")
        sdk_lines = self.sdk_lines()
        if sdk_lines:
            out.write("\nThe SDK clients (the official SDK, pointed at the gateway):\n\n")
            for line in sdk_lines:
                out.write(f"* {markdown_text(line)}\n")
        modes = self.mode_rows()
        if modes:
            out.write("\n## Streaming, non-streaming and tool calls\n\n")
            out.write("| route ← client | streaming | non-streaming | tools |\n|---|---|---|---|\n")
            for route, client in ((r, c) for r, c, _ in modes):
                pair = self.matrix[route]["clients"][client]
                cols = []
                for key in ("streaming", "non_streaming"):
                    mode = pair.get(key) or {}
                    cols.append(self.label(mode) if mode.get("status") is not None else "-")
                safe = (pair.get("tools") or {}).get("safe")
                cols.append("-" if safe is None else ("safe" if safe else "**unsafe**"))
                out.write(f"| {_md_code(route)} ← `{client}` | " + " | ".join(cols) + " |\n")
            out.write("\nHow each upstream's stream ends:\n\n")
            for upstream, end in self.end_events().items():
                out.write(f"* `{upstream}`: {markdown_text(end)}\n")
        path_lines = self.path_lines()
        if path_lines and self.paths is not None:
            out.write(f"\n## Paths against {_md_code(str(self.paths['reference']))}\n\n")
            out.write("What each hop changed, cell by cell against the reference path:\n\n")
            for name, lines in path_lines:
                out.write(f"* {_md_code(name)}\n")
                for line in lines:
                    out.write(f"  * {markdown_text(line)}\n")
        attempts = self.attempt_rows()
        if attempts:
            out.write("\n## Attempts per retry cell\n\n")
            out.write("The upstream's status for each attempt, and the seconds between one ")
            out.write("attempt's end and the next, from the mock's log:\n\n")
            out.write("| case | route ← client | attempts | retries |\n|---|---|---|---|\n")
            for cell, words in attempts:
                verdict = cell.checks["retries"].verdict
                out.write(
                    f"| `{cell.case}` | {_md_code(cell.route)} ← `{cell.client}` | "
                    f"{markdown_text(words.replace('->', '→'))} | {verdict} |\n"
                )
        unsafe = self.unsafe_for_tools()
        if unsafe:
            out.write("\n## Unsafe for tool execution\n\n")
            out.write("Turn tool routing off on these and serve them chat only:\n\n")
            for route, client, why in unsafe:
                reasons = "; ".join(markdown_text(r) for r in why)
                out.write(f"* {_md_code(route)} ← `{client}`: {reasons}\n")
        if self.verdicts:
            out.write("\n## Verdicts\n\n")
            commands = self.reproductions()
            for v in self.verdicts:
                out.write(
                    f"* **`{v['name']}`** {_md_code(v['route'])} ← `{v['client']}` "
                    f"({v['cells']} cells; {', '.join(v['layers'])}), cases "
                    f"{', '.join(f'`{c}`' for c in v['cases'])}: {markdown_text(v['why'])} "
                    f"*Do:* {v['advice']}\n"
                )
                command = commands.get((v["name"], v["route"], v["client"]))
                if command:
                    out.write("\n  Reproduce its first failing cell:\n\n")
                    out.write(_md_block(command, "  ") + "\n")
        flaky = self.flaky()
        if flaky:
            out.write("\n## Flaky cells\n\n")
            out.write("Their runs differ in a verdict no clock decided:\n\n")
            for cell, words in flaky:
                out.write(
                    f"* `{cell.case}` {_md_code(cell.route)} ← `{cell.client}` "
                    f"({cell.delivery}): {markdown_text(words)}\n"
                )
        grouped = self.by_verdict()
        if grouped:
            out.write("\n## Cells, by verdict and layer\n\n")
            out.write("| verdict | layer | case | route ← client | deliveries |\n")
            out.write("|---|---|---|---|---|\n")
            for (name, layer), where in grouped.items():
                for (case, route, client), deliveries in where.items():
                    out.write(
                        f"| `{name}` | {layer} | `{case}` | {_md_code(route)} ← `{client}` | "
                        f"{', '.join(deliveries)} |\n"
                    )


def _compact(where: Mapping[tuple[str, str, str], list[str]]) -> list[str]:
    """``route <- clients: case (deliveries), ...`` lines: every (case, route,
    client) of ``where``, the clients of one route that share the same cases
    and deliveries on one line."""
    by_route: dict[str, dict[str, dict[str, list[str]]]] = {}
    for (case, route, client), deliveries in where.items():
        by_route.setdefault(route, {}).setdefault(client, {})[case] = deliveries
    lines = []
    for route, clients in by_route.items():
        alike: dict[tuple[tuple[str, tuple[str, ...]], ...], list[str]] = {}
        for client, cases in clients.items():
            key = tuple((case, tuple(d)) for case, d in cases.items())
            alike.setdefault(key, []).append(client)
        for key, names in alike.items():
            cases_text = ", ".join(f"{case} ({', '.join(d)})" for case, d in key)
            lines.append(f"{route} <- {', '.join(names)}: {cases_text}")
    return lines


def build_report(cells: Sequence[Cell], **meta: Any) -> Report:
    """The report of judged cells (``meta``: extra summary facts, e.g. ``seconds``,
    and ``routes``: each route's label, base URL and model template)."""
    found = verdicts(cells)
    names = meta.get("paths")
    compared = compare_paths(cells, names, found) if names else None
    return Report(cells, matrix(cells, found), found, dict(meta), compared)
