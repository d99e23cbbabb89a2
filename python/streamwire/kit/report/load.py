"""The load run's report in words and pictures: the terminal, Markdown and HTML (with SVG charts).

``run.load`` measures and judges the streams; its ``LoadReport`` holds the
findings and the JSON document; this renders them.
"""

from __future__ import annotations

import html
import json
import math
from typing import IO, Any

from ..run.load import _METRICS, MACHINE_BUSY, UPSTREAM_LEAKED, LoadReport

__all__ = ["lines", "write_html", "write_markdown", "write_table"]


def lines(report: LoadReport) -> list[str]:
    """The terminal's report."""
    s = report.summary()
    out = [f"{report.title}: {s['concurrency']} streams in flight, mix of {len(s['mix'])} cells"]
    for t in s["targets"]:
        out.append(
            f"  {t['target']}: {t['streams']} streams in {t['seconds']} s "
            f"({t['streams_per_second']}/s), {t['failing_streams']} failing"
        )
        for f in t["findings"]:
            mark = "FAIL" if f["fails"] else "note"
            extra = f" ({f['not_failing']})" if f.get("not_failing") else ""
            out.append(f"    {mark} {f['verdict']}: {f['streams']} streams{extra}")
        errors = t["errors"]
        if errors["rate_limited"] or errors["statuses"] or errors["types"]:
            out.append(f"    errors: {_errors_text(errors)}")
        lat = t["latency"]
        out.append("    " + _latency_text(lat))
        if t["added_latency"]:
            out.append("    added: " + _added_text(t["added_latency"]))
        mock = t["mock"]
        out.append(
            f"    mock: peak {mock['peak_open_connections']} connections open, "
            f"{mock['peak_in_flight']} in flight; after the settle {mock['after_settle']}"
        )
        if t["bounded_by_generator"]:
            out.append(f"    bounded by the generator: {t['bounded_by_generator']}")
        if t["machine_busy"] is not None and t["machine_busy"] >= MACHINE_BUSY:
            out.append(f"    the machine's CPUs were {t['machine_busy']:.0%} busy")
        if t["inconclusive"] or t["kit_errors"]:
            out.append(
                f"    inconclusive: {t['inconclusive']} streams cut short by the kit's "
                f"own timeouts, {t['kit_errors']} the kit failed to run"
            )
    g = s["generator"]
    if g:
        out.append(
            f"  generator ({g['measured_on']}): {g['streams_per_cpu_second']} streams and "
            f"{g['events_judged_per_cpu_second']} events judged per CPU second, "
            f"peak memory {g['peak_rss_bytes'] / 2**20:.0f} MiB"
        )
    return out


def write_table(report: LoadReport, out: IO[str]) -> None:
    out.write("\n".join(lines(report)) + "\n")


def write_markdown(report: LoadReport, out: IO[str]) -> None:
    s = report.summary()
    w = out.write
    w(f"# {report.title}\n\n")
    w(
        f"{s['concurrency']} streams in flight; each target "
        + (f"{s['streams_per_target']} streams" if s["streams_per_target"] else "")
        + (f" for at most {s['duration']} s" if s["duration"] else "")
        + "; the mix: "
        + ", ".join(f"`{c} {cl} {d}`" for c, cl, d in s["mix"])
        + ".\n\n"
    )
    w("| target | streams | failing | per second | verdicts | errors |\n")
    w("|---|---:|---:|---:|---|---|\n")
    for t in s["targets"]:
        verdicts = ", ".join(
            f"`{f['verdict']}` {f['streams']}" + ("" if f["fails"] else " (not failing)")
            for f in t["findings"]
        )
        w(
            f"| `{t['target']}` | {t['streams']} | {t['failing_streams']} | "
            f"{t['streams_per_second']} | {verdicts or 'none'} | "
            f"{_errors_text(t['errors'])} |\n"
        )
    w("\n## Latency (seconds; streams that ran to their end)\n\n")
    w("| target | metric | p50 | p95 | p99 | added p50 | added p95 | added p99 |\n")
    w("|---|---|---:|---:|---:|---:|---:|---:|\n")
    for t in s["targets"]:
        for metric in _METRICS:
            lat = t["latency"][metric]
            add = (t["added_latency"] or {}).get(metric, {})
            w(
                f"| `{t['target']}` | {metric} | {_num(lat['p50'])} | {_num(lat['p95'])} | "
                f"{_num(lat['p99'])} | {_num(add.get('p50'))} | {_num(add.get('p95'))} | "
                f"{_num(add.get('p99'))} |\n"
            )
    w("\n## The mock's connections\n\n")
    for t in s["targets"]:
        mock = t["mock"]
        w(
            f"* `{t['target']}`: at most {mock['peak_open_connections']} open and "
            f"{mock['peak_in_flight']} in flight; after the settle "
            f"{json.dumps(mock['after_settle'])}\n"
        )
    w("\n## Findings\n\n")
    for t in s["targets"]:
        for f in t["findings"]:
            first = f["evidence"][0] if f["evidence"] else None
            why = _why(first, f)
            w(
                f"* `{t['target']}` **`{f['verdict']}`** in {f['streams']} streams "
                f"({f['share']:.1%}; layers {', '.join(f['layers'])}; cases "
                f"{', '.join(f['cases'])})"
                + ("" if f["fails"] else f": not failing — {_excuse(f)}")
                + (f": {why}" if why else "")
                + "\n"
            )
    g = s["generator"]
    if g:
        w(
            f"\nThe generator ({g['measured_on']}): {g['streams_per_cpu_second']} streams and "
            f"{g['events_judged_per_cpu_second']} events judged per CPU second "
            f"({g['streams_per_second']} streams/s at {g['busy_core_share']:.0%} of a core); "
            f"peak memory {g['peak_rss_bytes'] / 2**20:.0f} MiB.\n"
        )
    for t in s["targets"]:
        if t["bounded_by_generator"]:
            w(f"\n`{t['target']}` was bounded by the generator: {t['bounded_by_generator']}.\n")


def write_html(report: LoadReport, out: IO[str]) -> None:
    """One page: the summary, each metric's distribution per target drawn as
    its cumulative share (one line per target), the mock's connections over
    time, and the findings."""
    s = report.summary()
    w = out.write
    w(
        "<!doctype html><html><head><meta charset='utf-8'>"
        f"<title>{_h(report.title)}</title><style>"
        "body{font:14px system-ui,sans-serif;margin:2em;max-width:70em}"
        "table{border-collapse:collapse}td,th{border:1px solid #ccc;padding:2px 6px}"
        "td.n{text-align:right}.fail{color:#b00020;font-weight:bold}"
        "svg{background:#fafafa;border:1px solid #ddd;margin:4px 0}"
        "</style></head><body>"
    )
    w(f"<h1>{_h(report.title)}</h1><p>{s['concurrency']} streams in flight; mix: ")
    w(", ".join(f"<code>{_h(f'{c} {cl} {d}')}</code>" for c, cl, d in s["mix"]) + "</p>")
    w("<table><tr><th>target</th><th>streams</th><th>failing</th><th>per second</th>")
    w("<th>verdicts</th><th>errors</th><th>bounded by the generator</th></tr>")
    for t in s["targets"]:
        verdicts = ", ".join(
            f"<span class='{'fail' if f['fails'] else ''}'>{_h(f['verdict'])}</span> {f['streams']}"
            for f in t["findings"]
        )
        w(
            f"<tr><td><code>{_h(t['target'])}</code></td><td class=n>{t['streams']}</td>"
            f"<td class=n>{t['failing_streams']}</td>"
            f"<td class=n>{t['streams_per_second']}</td><td>{verdicts or 'none'}</td>"
            f"<td>{_h(_errors_text(t['errors']))}</td>"
            f"<td>{_h(t['bounded_by_generator'] or 'no')}</td></tr>"
        )
    w("</table><h2>Latency: the share of streams (or gaps) within each time</h2>")
    colours = ["#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#8c564b"]
    legend = " ".join(
        f"<span style='color:{colours[i % len(colours)]}'>&#9632; {_h(run.name)}</span>"
        for i, run in enumerate(report.runs)
    )
    w(f"<p>{legend}</p>")
    for metric in _METRICS:
        series = [sorted(report.metric_values(run, metric)) for run in report.runs]
        w(f"<h3>{_h(metric.replace('_', ' '))}</h3>")
        w(_cdf_svg(series, colours))
    w("<h2>The mock's open connections (solid) and requests in flight (dotted)</h2>")
    w(_samples_svg([run.samples for run in report.runs], colours))
    w("<h2>Findings</h2><ul>")
    for t in s["targets"]:
        for f in t["findings"]:
            first = f["evidence"][0] if f["evidence"] else None
            why = _why(first, f)
            cls = "fail" if f["fails"] else ""
            w(
                f"<li><code>{_h(t['target'])}</code> <span class='{cls}'>"
                f"{_h(f['verdict'])}</span> in {f['streams']} streams: {_h(why)}"
                + ("" if f["fails"] else f" (not failing: {_h(_excuse(f))})")
                + "</li>"
            )
    w("</ul>")
    g = s["generator"]
    if g:
        w(
            f"<p>The generator ({_h(g['measured_on'])}): {g['streams_per_cpu_second']} "
            f"streams and {g['events_judged_per_cpu_second']} events judged per CPU "
            f"second; peak memory {g['peak_rss_bytes'] / 2**20:.0f} MiB.</p>"
        )
    w("</body></html>\n")


_W, _H, _PAD = 640, 200, 36


def _cdf_svg(series: list[list[float]], colours: list[str]) -> str:
    top = max((v[min(len(v) - 1, math.ceil(0.99 * len(v)))] for v in series if v), default=0.0)
    top = top * 1.1 or 1.0
    parts = [f"<svg width='{_W}' height='{_H}' viewBox='0 0 {_W} {_H}'>"]
    parts.append(_axes(top, "s"))
    for i, values in enumerate(series):
        if not values:
            continue
        step = max(1, len(values) // 400)
        points = []
        for k in range(0, len(values), step):
            x = _PAD + min(values[k], top) / top * (_W - 2 * _PAD)
            y = _H - _PAD - (k + 1) / len(values) * (_H - 2 * _PAD)
            points.append(f"{x:.1f},{y:.1f}")
        colour = colours[i % len(colours)]
        parts.append(
            f"<polyline fill='none' stroke='{colour}' stroke-width='2' "
            f"points='{' '.join(points)}'/>"
        )
    parts.append("</svg>")
    return "".join(parts)


def _samples_svg(samples: list[list[list[float]]], colours: list[str]) -> str:
    right = max((s[-1][0] for s in samples if s), default=1.0) or 1.0
    top = max((max(row[1], row[2]) for s in samples for row in s), default=1.0) or 1.0
    parts = [f"<svg width='{_W}' height='{_H}' viewBox='0 0 {_W} {_H}'>"]
    parts.append(_axes(right, "s", top))
    for i, rows in enumerate(samples):
        colour = colours[i % len(colours)]
        for column, dash in ((1, ""), (2, " stroke-dasharray='3 3'")):
            points = " ".join(
                f"{_PAD + row[0] / right * (_W - 2 * _PAD):.1f},"
                f"{_H - _PAD - max(0.0, row[column]) / top * (_H - 2 * _PAD):.1f}"
                for row in rows
            )
            if points:
                parts.append(
                    f"<polyline fill='none' stroke='{colour}' stroke-width='1.5'{dash} "
                    f"points='{points}'/>"
                )
    parts.append("</svg>")
    return "".join(parts)


def _axes(right: float, unit: str, top: float = 1.0) -> str:
    y0, x1 = _H - _PAD, _W - _PAD
    labels = (
        f"<text x='{_PAD}' y='{_H - 8}' font-size='11'>0</text>"
        f"<text x='{x1 - 40}' y='{_H - 8}' font-size='11'>{right:.3g} {unit}</text>"
        f"<text x='2' y='{_PAD + 4}' font-size='11'>{top:.3g}</text>"
    )
    return (
        f"<line x1='{_PAD}' y1='{y0}' x2='{x1}' y2='{y0}' stroke='#999'/>"
        f"<line x1='{_PAD}' y1='{_PAD}' x2='{_PAD}' y2='{y0}' stroke='#999'/>" + labels
    )


def _h(text: Any) -> str:
    return html.escape(str(text), quote=True)


def _why(evidence: dict[str, Any] | None, finding: dict[str, Any]) -> str:
    if finding["verdict"] == UPSTREAM_LEAKED:
        first = finding["evidence"][:3]
        return "; ".join(f"{e['kind']}: {e['case']} ({e['tag']})" for e in first)
    if evidence is None:
        return ""
    layers = evidence.get("evidence", {}).get("layers", {})
    for layer in finding["layers"]:
        note = layers.get(layer)
        if isinstance(note, dict) and note.get("why"):
            return str(note["why"])[:300]
    return ""


def _excuse(finding: dict[str, Any]) -> str:
    """Why a finding does not fail the run."""
    return str(finding.get("not_failing", "an acceptable verdict"))


def _num(value: float | None) -> str:
    return "-" if value is None else f"{value:.4f}"


def _errors_text(errors: dict[str, Any]) -> str:
    parts = []
    if errors["rate_limited"]:
        parts.append(f"429 x{errors['rate_limited']}")
    parts += [f"{k} x{v}" for k, v in errors["statuses"].items()]
    parts += [f"`{k}` x{v}" for k, v in errors["types"].items()]
    return ", ".join(parts) or "none"


def _latency_text(latency: dict[str, dict[str, Any]]) -> str:
    return "; ".join(
        f"{m} " + " ".join(f"{p} {_ms(latency[m][p])}" for p in ("p50", "p95", "p99"))
        for m in _METRICS
    )


def _added_text(added: dict[str, dict[str, Any]]) -> str:
    return "; ".join(
        f"{m} p50 {_ms(added[m]['p50'], True)} p95 {_ms(added[m]['p95'], True)}" for m in _METRICS
    )


def _ms(value: float | None, sign: bool = False) -> str:
    if value is None:
        return "-"
    return f"{value * 1000:+.1f} ms" if sign else f"{value * 1000:.1f} ms"
