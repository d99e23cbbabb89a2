"""Checks a kit report against a worked example's expectations (used by .ci/litellm.sh).

    python .ci/kit_expect.py REPORT.json EXPECTED.json [--write]

The run must have judged every cell with an upstream (the gateway reached the
mock on every route), and must find every verdict EXPECTED.json lists (name,
client, upstream): a documented defect that is no longer found means the
gateway or the kit changed, and the worked example must be redone. Verdicts
found beyond the list are printed, not failed (timings vary between
machines). ``--write`` records the report's verdicts as the expectations.
"""

from __future__ import annotations

import json
import sys


def main(argv: list[str]) -> int:
    report_path, expected_path = argv[0], argv[1]
    with open(report_path, encoding="utf-8") as f:
        report = json.load(f)
    found = {(v["name"], v["client"], v["upstream"]) for v in report["verdicts"]}
    if "--write" in argv:
        rows = [dict(zip(("name", "client", "upstream"), key, strict=True)) for key in sorted(found)]
        with open(expected_path, "w", encoding="utf-8") as f:
            json.dump({"verdicts": rows}, f, indent=1)
            f.write("\n")
        print(f"{expected_path}: {len(rows)} verdicts recorded")
        return 0
    problems = []
    unreached = [c for c in report["cells"] if c["upstream"] is None]
    if unreached:
        problems.append(f"{len(unreached)} cells never reached the mock")
    with open(expected_path, encoding="utf-8") as f:
        expected = {(v["name"], v["client"], v["upstream"]) for v in json.load(f)["verdicts"]}
    for key in sorted(expected - found):
        problems.append(f"documented verdict no longer found: {key}")
    for key in sorted(found - expected):
        print(f"note: verdict beyond the worked example: {key}")
    summary = report["summary"]
    print(
        f"{summary['cells']} cells: {summary['passed']} pass, {summary['degraded']} degraded, "
        f"{summary['failed']} fail; {len(found)} verdicts ({len(expected)} documented)"
    )
    for problem in problems:
        print(f"FAIL: {problem}")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
