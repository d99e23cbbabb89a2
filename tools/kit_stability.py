"""Are identical kit runs the same? Verdicts per (route, client), and cells, across report JSONs.

    python tools/kit_stability.py run1.json run2.json run3.json

Prints, per (route, client), the verdicts of each run and whether they are
equal; then how many cells (by case, route, client, delivery) changed a
layer's verdict between runs, and which. Exit status 1 when the verdicts
of some (route, client) differ between runs.
"""

from __future__ import annotations

import json
import sys
from collections import defaultdict
from pathlib import Path
from typing import Any


def _verdicts(report: dict[str, Any]) -> dict[tuple[str, str], set[str]]:
    out: dict[tuple[str, str], set[str]] = defaultdict(set)
    for cell in report["cells"]:
        out[cell["route"], cell["client"]]
    for v in report["verdicts"]:
        out[v["route"], v["client"]].add(v["name"])
    return out


def _cells(report: dict[str, Any]) -> dict[tuple[str, ...], dict[str, str]]:
    return {
        (c["case"], c["route"], c["client"], c["delivery"]): c["layers"] for c in report["cells"]
    }


def main(paths: list[str]) -> int:
    reports = [json.loads(Path(p).read_text(encoding="utf-8")) for p in paths]
    verdicts = [_verdicts(r) for r in reports]
    pairs = sorted(set().union(*verdicts))
    differ = 0
    for pair in pairs:
        seen = [sorted(v.get(pair, set())) for v in verdicts]
        same = all(s == seen[0] for s in seen)
        differ += not same
        print(f"{'same' if same else 'DIFF'}  {pair[0]} <- {pair[1]}: {' | '.join(map(str, seen))}")
    cells = [_cells(r) for r in reports]
    changed = []
    for key in sorted(set().union(*cells)):
        layers = [c.get(key) for c in cells]
        if any(layer != layers[0] for layer in layers):
            moved = sorted(
                name
                for name in (layers[0] or {})
                if len({str((lay or {}).get(name)) for lay in layers}) > 1
            )
            changed.append(f"{' '.join(key)}: {', '.join(moved) or 'missing from a run'}")
    total = len(set().union(*cells))
    print(f"{len(pairs) - differ} of {len(pairs)} (route, client) pairs had the same verdicts")
    print(f"{len(changed)} of {total} cells changed a layer's verdict between runs")
    for line in changed:
        print(f"  {line}")
    return 1 if differ else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
