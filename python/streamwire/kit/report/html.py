"""The check's HTML page: one self-contained file (inline CSS and SVG, no external asset).

The page shows the capability matrix (a row per route, with the upstream
protocols it called, and a cell per client, coloured by its worst verdict),
the verdicts with what to do about them, and, per case, a timeline: for
every (route <- client) pair one lane,
the mock's writes above the line and the client's arrivals below it, on one
time axis from the moment the request was sent. A streaming hop shows the
two rows of ticks side by side; a buffering one shows a spread of writes
above and a single late cluster below. Lanes use the ``paced`` delivery when
the run had it (its gaps are what make buffering visible), else the first
delivery run. Each verdict, and each failing cell, has the ``curl`` command
that reproduces it (``report/reproduce.py``), folded.
"""

from __future__ import annotations

from collections.abc import Sequence
from html import escape
from typing import TextIO

from ..judge.cell import Cell
from ..vocab.cases import CASES
from .document import Report

__all__ = ["write_html"]

_CSS = """
body{font:14px/1.45 system-ui,-apple-system,Segoe UI,sans-serif;margin:24px;color:#1d2330;
max-width:1200px}
h1{font-size:22px;margin:0 0 4px} h2{font-size:17px;margin:28px 0 8px}
h3{font-size:15px;margin:18px 0 4px}
.sum{color:#555;margin-bottom:16px} table{border-collapse:collapse;margin:8px 0}
td,th{border:1px solid #d8dce4;padding:6px 10px;text-align:left;vertical-align:top}
th{background:#f3f5f8;font-weight:600} code{font:12px ui-monospace,Menlo,monospace}
.pass{background:#e3f6e8} .degraded{background:#fff3d6} .fail{background:#fde2e1}
.flaky{background:repeating-linear-gradient(135deg,#fde2e1 0 8px,#fff3d6 8px 16px)}
.badge{display:inline-block;font:11px ui-monospace,monospace;padding:1px 6px;border-radius:9px;
background:#fff;border:1px solid #bbb;margin:2px 2px 0 0}
.v{margin:6px 0;padding:8px 10px;border-left:4px solid #c33;background:#fafafa}
.v.ok{border-color:#d9a400} .why{color:#444;font-size:13px} .advice{color:#265;font-size:13px}
.unsafe{color:#a61b1b;font-size:12px;font-weight:600} .safe{color:#276738;font-size:12px}
.modes{color:#555;font-size:11px} .ends{font-size:12px;color:#444}
.legend span{display:inline-block;margin-right:16px} svg{display:block;margin:4px 0 12px}
.purpose{color:#555}
pre.repro{font:12px ui-monospace,Menlo,monospace;white-space:pre-wrap;word-break:break-all;
background:#f3f5f8;padding:6px 8px;margin:4px 0}
"""
_LANE = 34
_LEFT = 250
_WIDTH = 900
_KIND_COLOUR = {
    "text": "#2b6cb0",
    "reasoning": "#2c7a7b",
    "arguments": "#b7791f",
    "error": "#c53030",
    "unknown": "#805ad5",
    "keepalive": "#999",
}


def _lanes(cells: Sequence[Cell], paths: Sequence[str] = ()) -> dict[str, list[Cell]]:
    """Each case's lanes: the cells with a timeline (an SDK cell has none) of
    one delivery; with paths, each client's paths one above the other."""
    cells = [c for c in cells if c.evidence.get("timeline")]
    deliveries = {c.delivery for c in cells}
    chosen = "paced" if "paced" in deliveries else (cells[0].delivery if cells else "whole")
    out: dict[str, list[Cell]] = {}
    for cell in cells:
        if cell.delivery == chosen:
            out.setdefault(cell.case, []).append(cell)
    if paths:
        order = {name: i for i, name in enumerate(paths)}
        for lanes in out.values():
            lanes.sort(key=lambda c: (c.client, order.get(c.route, len(order))))
    return out


def _paths(report: Report) -> str:
    lines = report.path_lines()
    if not lines or report.paths is None:
        return ""
    reference = escape(str(report.paths["reference"]))
    out = [f"<h2>Paths against <code>{reference}</code></h2>"]
    out.append(
        "<p>What each hop changed, cell by cell against the reference path (the "
        "timelines below show each client's paths one above the other):</p><ul>"
    )
    for name, found in lines:
        items = "".join(f"<li>{escape(line)}</li>" for line in found)
        out.append(f"<li><code>{escape(name)}</code><ul>{items}</ul></li>")
    out.append("</ul>")
    return "".join(out)


def _timeline_svg(cells: Sequence[Cell]) -> str:
    spans = []
    for cell in cells:
        tl = cell.evidence.get("timeline") or {}
        times = [s[0] for s in tl.get("sends", [])] + [a[0] for a in tl.get("arrivals", [])]
        spans.append(max(times, default=0.0))
    end = max([0.05, *spans]) * 1.05
    scale = _WIDTH / end
    height = _LANE * len(cells) + 30
    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{_LEFT + _WIDTH + 20}" '
        f'height="{height}" font-family="ui-monospace,monospace" font-size="11">'
    ]
    step = _tick_step(end)
    t = 0.0
    while t <= end:
        x = _LEFT + t * scale
        parts.append(f'<line x1="{x:.1f}" y1="0" x2="{x:.1f}" y2="{height - 18}" stroke="#eee"/>')
        parts.append(
            f'<text x="{x:.1f}" y="{height - 4}" fill="#777" text-anchor="middle">'
            f"{t * 1000:.0f} ms</text>"
        )
        t += step
    for row, cell in enumerate(cells):
        y = row * _LANE + 4
        mid = y + _LANE / 2 - 2
        colour = "#c53030" if cell.failed else "#1d2330"
        label = f"{cell.route} ← {cell.client}"[:40]
        parts.append(f'<text x="4" y="{mid + 4:.1f}" fill="{colour}">{escape(label)}</text>')
        parts.append(
            f'<line x1="{_LEFT}" y1="{mid:.1f}" x2="{_LEFT + _WIDTH}" y2="{mid:.1f}" '
            'stroke="#ccc"/>'
        )
        tl = cell.evidence.get("timeline") or {}
        for at, _size, kinds, *_ in tl.get("sends", []):
            kind = next(
                (
                    k
                    for k in ("error", "unknown", "text", "reasoning", "arguments", "keepalive")
                    if k in kinds
                ),
                "event",
            )
            x = _LEFT + at * scale
            parts.append(
                f'<line x1="{x:.1f}" y1="{mid - 12:.1f}" x2="{x:.1f}" y2="{mid - 1:.1f}" '
                f'stroke="{_KIND_COLOUR.get(kind, "#555")}" stroke-width="1.5"/>'
            )
        for at, _size in tl.get("arrivals", []):
            x = _LEFT + at * scale
            parts.append(
                f'<line x1="{x:.1f}" y1="{mid + 1:.1f}" x2="{x:.1f}" y2="{mid + 12:.1f}" '
                'stroke="#2f855a" stroke-width="1.5"/>'
            )
        client = cell.evidence.get("client") or {}
        mock = cell.evidence.get("mock") or {}
        for at, colour in (
            (client.get("cancelled_at"), "#dd6b20"),
            (mock.get("disconnected_at"), "#c53030"),
        ):
            if isinstance(at, int | float):
                x = _LEFT + at * scale
                parts.append(
                    f'<rect x="{x - 2:.1f}" y="{mid - 14:.1f}" width="4" height="28" '
                    f'fill="{colour}" opacity="0.8"/>'
                )
    parts.append("</svg>")
    return "".join(parts)


def _thinned_note(cells: Sequence[Cell]) -> str:
    """Which lanes show a thinned series, in words ('' when none does)."""
    notes = []
    for cell in cells:
        tl = cell.evidence.get("timeline") or {}
        totals = tl.get("totals") or {}
        for name, what in (("sends", "writes"), ("arrivals", "arrivals")):
            total, shown = totals.get(name), len(tl.get(name) or [])
            if isinstance(total, int) and total > shown:
                notes.append(f"{cell.route} ← {cell.client}: {shown} of {total} {what}")
    if not notes:
        return ""
    return "Downsampled evenly over the whole span (first and last kept): " + "; ".join(notes)


def _tick_step(end: float) -> float:
    for step in (0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0):
        if end / step <= 10:
            return step
    return 60.0


def _matrix(report: Report) -> str:
    cols = report.columns()
    out = ["<table><tr><th>route</th><th>upstream</th>"]
    out += [f"<th><code>{escape(c)}</code></th>" for c in cols]
    out.append("</tr>")
    for route, row in report.matrix.items():
        ups = ", ".join(row["upstream"]) or "none"
        out.append(f"<tr><th><code>{escape(route)}</code></th><td>{escape(ups)}</td>")
        for col in cols:
            pair = row["clients"].get(col)
            if pair is None:
                out.append("<td>-</td>")
                continue
            badges = "".join(f'<span class="badge">{escape(n)}</span>' for n in pair["verdicts"])
            label = report.label(pair)
            status = (
                pair["status"] if pair["status"] in ("pass", "degraded", "fail", "flaky") else ""
            )
            tools = pair.get("tools") or {}
            if tools.get("safe") is False:
                reasons = "; ".join(tools.get("why") or [])
                badges += f'<div class="unsafe" title="{escape(reasons)}">tools unsafe</div>'
            elif tools.get("safe") is True:
                badges += '<div class="safe">tools safe</div>'
            unary = pair.get("non_streaming") or {}
            if unary.get("status") is not None:
                streamed = pair.get("streaming") or {}
                badges += (
                    f'<div class="modes">streaming {escape(report.label(streamed))}'
                    f"<br>non-streaming {escape(report.label(unary))}</div>"
                )
            out.append(f'<td class="{status}"><b>{escape(label)}</b><br>{badges}</td>')
        out.append("</tr>")
    out.append("</table>")
    ends = report.end_events()
    if ends:
        out.append('<p class="ends">How each upstream\'s stream ends: ')
        out.append("; ".join(f"<code>{escape(u)}</code> {escape(e)}" for u, e in ends.items()))
        out.append("</p>")
    return "".join(out)


#: The most cells the page lists test records for (the JSON has them all).
MAX_RECORDS = 2000
_RECORD_COLUMNS = (
    ("client", "client"),
    ("model", "model"),
    ("time", "time (UTC)"),
    ("upstream_request_id", "upstream request id"),
    ("gateway_request_id", "gateway request id"),
    ("status", "status"),
    ("ttft", "TTFT s"),
    ("total", "total s"),
    ("completion", "ended"),
)


def _usage_text(usage: object) -> str:
    if not isinstance(usage, dict):
        return ""
    names = (
        ("input_tokens", "in"),
        ("output_tokens", "out"),
        ("cache_read_tokens", "cache read"),
        ("cache_creation_tokens", "cache write"),
        ("reasoning_tokens", "reasoning"),
    )
    return ", ".join(f"{label} {usage[k]}" for k, label in names if k in usage)


def _records(cells: Sequence[Cell]) -> str:
    """Each cell's test record (``check.test_record``), folded away: the page's
    reader opens it when a release note needs one."""
    rows = [c for c in cells if isinstance(c.evidence.get("record"), dict)][:MAX_RECORDS]
    if not rows:
        return ""
    out = ["<h2>Test records</h2><details><summary>", f"{len(rows)} requests"]
    if len(rows) < len(cells):
        out.append(f" (of {len(cells)}; the JSON report has every one)")
    out.append("</summary><table><tr><th>case</th><th>route ← client</th><th>delivery</th>")
    out += [f"<th>{escape(title)}</th>" for _, title in _RECORD_COLUMNS]
    out.append("<th>usage</th></tr>")
    for cell in rows:
        record = cell.evidence["record"]
        out.append(
            f"<tr><td><code>{escape(cell.case)}</code></td><td><code>{escape(cell.route)} ← "
            f"{escape(cell.client)}</code></td><td>{escape(cell.delivery)}</td>"
        )
        for key, _ in _RECORD_COLUMNS:
            value = record.get(key)
            out.append(f"<td>{'' if value is None else escape(str(value))}</td>")
        out.append(f"<td>{escape(_usage_text(record.get('usage')))}</td></tr>")
    out.append("</table></details>")
    return "".join(out)


def _reproduce(command: str | None) -> str:
    """A folded ``curl`` command, or nothing."""
    if not command:
        return ""
    return (
        f'<details><summary>reproduce</summary><pre class="repro">{escape(command)}</pre></details>'
    )


def write_html(report: Report, out: TextIO, title: str = "streamwire check") -> None:
    """Writes the report as one self-contained HTML page."""
    s = report.summary()
    out.write(
        f"<!doctype html><html lang=en><head><meta charset=utf-8><title>{escape(title)}</title>"
    )
    out.write(f"<style>{_CSS}</style></head><body>")
    out.write(f"<h1>{escape(title)}</h1>")
    out.write(
        f'<div class="sum">{escape(report.headline())}; exit status {s["exit_status"]}'
        + (f"; {s['seconds']:.1f} s" if "seconds" in s else "")
        + "</div>"
    )
    out.write("<h2>Capability matrix</h2>" + _matrix(report))
    out.write(_paths(report))
    attempts = report.attempt_rows()
    if attempts:
        out.write("<h2>Attempts per retry cell</h2><p>The upstream's status for each attempt, ")
        out.write("and the seconds between one attempt's end and the next (the mock's log):</p>")
        out.write("<table><tr><th>case</th><th>route ← client</th><th>attempts</th>")
        out.write("<th>retries</th></tr>")
        for cell, words in attempts:
            out.write(
                f"<tr><td><code>{escape(cell.case)}</code></td>"
                f"<td><code>{escape(cell.route)} ← {escape(cell.client)}</code></td>"
                f"<td>{escape(words)}</td><td>{escape(cell.checks['retries'].verdict)}</td></tr>"
            )
        out.write("</table>")
    unsafe = report.unsafe_for_tools()
    if unsafe:
        out.write("<h2>Unsafe for tool execution</h2><p>Turn tool routing off on these ")
        out.write("and serve them chat only:</p><ul>")
        for route, client, why in unsafe:
            out.write(
                f"<li><code>{escape(route)} ← {escape(client)}</code>: "
                f"{escape('; '.join(why))}</li>"
            )
        out.write("</ul>")
    if report.verdicts:
        out.write("<h2>Verdicts</h2>")
        commands = report.reproductions()
        for v in report.verdicts:
            ok = " ok" if v["name"] == "semantic_downgrade" else ""
            cases = ", ".join(v["cases"])
            out.write(
                f'<div class="v{ok}"><b><code>{escape(v["name"])}</code></b> '
                f"<code>{escape(v['route'])} ← {escape(v['client'])}</code> "
                f"({escape(cases)})<div class=why>{escape(v['why'])}</div>"
                f"<div class=advice>{escape(v['advice'])}</div>"
                f"{_reproduce(commands.get((v['name'], v['route'], v['client'])))}</div>"
            )
    out.write("<h2>Timelines</h2>")
    out.write(
        '<div class="legend"><span>above the line: the mock\'s writes '
        '(<b style="color:#2b6cb0">text</b>, <b style="color:#c53030">error</b>, '
        '<b style="color:#805ad5">unknown</b>, other)</span><span>below: the client\'s '
        '<b style="color:#2f855a">arrivals</b></span><span><b style="color:#dd6b20">|</b> '
        'client hung up, <b style="color:#c53030">|</b> upstream closed</span></div>'
    )
    paths = report.paths["paths"] if report.paths else {}
    order = [report.paths["reference"], *paths] if report.paths else []
    for case, cells in _lanes(report.cells, order).items():
        purpose = CASES[case].purpose if case in CASES else ""
        out.write(
            f"<h3><code>{escape(case)}</code> <span class=purpose>{escape(purpose)}</span></h3>"
        )
        out.write(_timeline_svg(cells))
        thinned = _thinned_note(cells)
        if thinned:
            out.write(f'<p class="purpose">{escape(thinned)}</p>')
    out.write(_records(report.cells))
    failing = report.failing()
    if failing:
        out.write("<h2>Failing cells</h2><table><tr><th>case</th><th>route ← client</th>")
        out.write("<th>delivery</th><th>layer</th><th>why</th><th>reproduce</th></tr>")
        for cell, layers, _ in failing[:500]:
            for i, layer in enumerate(layers):
                out.write(
                    f"<tr><td><code>{escape(cell.case)}</code></td><td><code>"
                    f"{escape(cell.route)} ← {escape(cell.client)}</code></td>"
                    f"<td>{escape(cell.delivery)}</td><td>{escape(layer)}</td>"
                    f"<td>{escape(cell.checks[layer].why[:500])}</td>"
                    f"<td>{_reproduce(cell.reproduce if i == 0 else None)}</td></tr>"
                )
        out.write("</table>")
    out.write("</body></html>\n")
