"""Writes docs/performance.md's tables from a run of the release gate.

    python benches/report.py --all --json gate.json   # the gate's run (gate.py)
    python benches/readme.py gate.json                # docs/performance.md, between the markers

Everything between ``<!-- gate:begin -->`` and ``<!-- gate:end -->`` in
docs/performance.md is replaced by tables made from the JSON alone: times are
best CPU times of interleaved rounds (``rounds.py``), each ratio is a peer's
time divided by streamwire's in the same group, targets are the issues' (met or
not, as measured), a peer whose output was wrong is marked **wrong**, and
peak memory is ``group.peak_memory`` as a multiple of the largest unit one
step holds (an event or message, or the chunk when that is larger).
``--check`` exits 1 when docs/performance.md is not what the JSON gives. (The
README quotes a few of its ratios by hand, with the run's date: they are not
rewritten here.)
"""

from __future__ import annotations

import argparse
import json
import sys
from functools import partial
from pathlib import Path
from typing import Any

PAGE = Path(__file__).resolve().parent.parent / "docs" / "performance.md"
BEGIN, END = "<!-- gate:begin -->", "<!-- gate:end -->"
SSE_PEERS = ("openai-sdk", "httpx-sse", "sseclient-py", "naive-split")
#: The pipeline table's "vs SDK path" peers (``groups.SDKS``); a group has at most one.
SDK_PEERS = ("openai-sdk", "anthropic-sdk", "botocore", "google-genai")


def _x(value: float | None) -> str:
    if value is None:
        return "—"
    return f"{value:,.1f}×" if value >= 10 else f"{value:.2f}×"


def _cell(group: dict[str, Any], label: str, peer: str) -> str:
    value = group["ratios"].get(label)
    if value is None:
        return "—"
    wrong = "" if group["correct"].get(peer, True) else " **wrong**"
    return _x(value) + wrong


def _target(group: dict[str, Any], label: str) -> str:
    target = group["targets"].get(label)
    value = group["ratios"].get(label)
    if target is None or value is None:
        return ""
    goal = target["target"]
    if target["lower_is_better"]:
        return f"≤ {goal:g}×: {'met' if value <= goal else '**not met**'}"
    return f"≥ {goal:g}×: {'met' if value >= goal else '**not met**'}"


def _memory(group: dict[str, Any]) -> str:
    memory = group.get("memory")
    if memory is None:
        return "—"
    return f"{memory['ratio']:.2f}×"


def _per_unit(group: dict[str, Any], impl: str = "streamwire") -> str:
    seconds = group["seconds"].get(impl)
    if seconds is None:
        return "—"
    per = seconds / group["units"] * 1e9
    return f"{per / 1e6:,.1f} ms" if per >= 1e6 else f"{per:,.0f} ns"


#: The ``+data`` row's target against the str floor (the floor's time over
#: the row's, both against httpx-sse in the same run), and its workload.
FLOOR_TARGET = ("openai-chat/4KiB", 0.85)


def _of_floor(group: dict[str, Any], floor: dict[str, Any] | None) -> str:
    """The ``+data`` row's throughput as a share of the str floor's."""
    data = group["ratios"].get("+data vs httpx-sse")
    base = None if floor is None else floor["ratios"].get("str floor vs httpx-sse")
    if data is None or not base:
        return "—"
    share = data / base
    if group["name"] != FLOOR_TARGET[0]:
        return f"{share:.2f}×"
    goal = FLOOR_TARGET[1]
    return f"{share:.3f}× ≥ {goal:g}×: {'met' if share >= goal else '**not met**'}"


def sse_table(groups: list[dict[str, Any]], floors: dict[str, dict[str, Any]]) -> list[str]:
    rows = [
        "| workload, chunks | streamwire | streamwire+data | "
        + " | ".join(SSE_PEERS)
        + " | +data vs httpx-sse | str floor vs httpx-sse | +data / str floor | peak memory |",
        "|---|---:|---:|" + "---:|" * len(SSE_PEERS) + "---:|---:|---|---:|",
    ]
    for g in groups:
        data = g["ratios"].get("vs streamwire+data")
        floor = floors.get(g["name"])
        rows.append(
            f"| {g['name'].replace('/', ', ')} | {_per_unit(g)} per event | {_x(data)} | "
            + " | ".join(_cell(g, f"vs {p}", p) for p in SSE_PEERS)
            + f" | {_cell(g, '+data vs httpx-sse', 'httpx-sse')}"
            + f" | {_floor(floor)} | {_of_floor(g, floor)} | {_memory(g)} |"
        )
    return rows


def _floor(group: dict[str, Any] | None) -> str:
    return "—" if group is None else _cell(group, "str floor vs httpx-sse", "httpx-sse")


def eventstream_table(groups: list[dict[str, Any]]) -> list[str]:
    rows = [
        "| workload, chunks | streamwire | vs botocore | target | peak memory |",
        "|---|---:|---:|---|---:|",
    ]
    for g in groups:
        rows.append(
            f"| {g['name'].replace('/', ', ')} | {_per_unit(g)} per message | "
            f"{_cell(g, 'vs botocore', 'botocore')} | {_target(g, 'vs botocore')} | {_memory(g)} |"
        )
    return rows


def pipeline_table(groups: list[dict[str, Any]]) -> list[str]:
    rows = [
        "| protocol, workload | streamwire | vs SDK path | vs naive reference | targets "
        "| peak memory |",
        "|---|---:|---:|---:|---|---:|",
    ]
    for g in groups:
        sdk_label = next(
            (k for k in g["ratios"] if k.startswith("vs ") and k[3:] in SDK_PEERS), None
        )
        sdk = (
            "—" if sdk_label is None else f"{_cell(g, sdk_label, sdk_label[3:])} ({sdk_label[3:]})"
        )
        targets = [f"{label} {_target(g, label)}" for label in g["targets"] if _target(g, label)]
        naive = "vs naive" if "vs naive" in g["ratios"] else "json vs naive"
        impl = "streamwire" if "streamwire" in g["seconds"] else "streamwire-json"
        rows.append(
            f"| {g['name']} | {_per_unit(g, impl)} per {g['unit'].rstrip('s')} | {sdk} | "
            f"{_cell(g, naive, 'naive')} | {'; '.join(targets)} | {_memory(g)} |"
        )
    return rows


def translate_table(groups: list[dict[str, Any]]) -> list[str]:
    rows = [
        "| source → client | streamwire | LiteLLM | streamwire faster by "
        "| latency, median (streamwire / LiteLLM) |",
        "|---|---:|---:|---:|---:|",
    ]
    for g in groups:
        per = g["per_event_us"]
        lat = g["latency_ns"]
        wrong = "" if g["correct"].get("litellm", False) else " **wrong**"
        ratio = _x(g["ratios"].get("vs litellm"))
        rows.append(
            f"| {g['name'].replace('->', ' → ')} | {per.get('streamwire', 0):.2f} µs per event | "
            f"{per.get('litellm', 0):.1f} µs per event{wrong} | {ratio} | "
            f"{lat.get('streamwire', 0) / 1e3:.1f} µs / {lat.get('litellm', 0) / 1e3:.1f} µs |"
        )
    return rows


def render(run: dict[str, Any]) -> str:
    by_suite: dict[str, list[dict[str, Any]]] = {}
    for group in run["groups"]:
        by_suite.setdefault(group["suite"], []).append(group)
    out = [
        BEGIN,
        "",
        f"Generated by `benches/readme.py` from one run of the release gate "
        f"(`python benches/report.py --all`, {run['mode']} mode, {run['started']} UTC, "
        f"{run['seconds']:.0f} s, load average {run['load_average']:.1f}): CPython "
        f"{run['python']} on {run['machine']}, best CPU time of {run['rounds']} interleaved "
        "rounds per implementation; each ratio is the peer's time over streamwire's in the same "
        "group.",
        "",
    ]
    sections = [
        (
            "SSE framing (`benches/bench_sse.py`)",
            "sse",
            partial(sse_table, floors={g["name"]: g for g in by_suite.get("sse-floor", [])}),
        ),
        (
            "AWS EventStream framing (`benches/bench_eventstream.py`)",
            "eventstream",
            eventstream_table,
        ),
        ("Whole pipeline: bytes → unified events → final result", "pipeline", pipeline_table),
        (
            "Gateway translation against LiteLLM (`benches/bench_litellm.py`)",
            "translate",
            translate_table,
        ),
    ]
    for title, suite, table in sections:
        if suite not in by_suite:
            continue
        out += [f"### {title}", "", *table(by_suite[suite]), ""]
    out.append(END)
    return "\n".join(out)


def replace(page: str, block: str) -> str:
    start, end = page.index(BEGIN), page.index(END) + len(END)
    return page[:start] + block + page[end:]


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n")[0])
    parser.add_argument("run", type=Path, help="the gate's JSON (report.py --all --json)")
    parser.add_argument("--check", action="store_true", help="exit 1 if the page differs")
    args = parser.parse_args(argv)
    run = json.loads(args.run.read_text(encoding="utf-8"))
    text = PAGE.read_text(encoding="utf-8")
    new = replace(text, render(run))
    if args.check:
        return 0 if new == text else 1
    PAGE.write_text(new, encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
