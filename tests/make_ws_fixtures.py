"""Writes the WebSocket fixtures: ``fixtures/regression/<protocol>/<case>.jsonl`` + manifest.

Run ``python tests/make_ws_fixtures.py`` after changing a case. The cases are
in ``ws_cases_responses.py``, ``ws_cases_realtime.py`` and ``ws_cases_live.py``:
sequences of server messages written by hand from the provider's API
reference (``ws_messages.py`` builds them), one compact JSON message per line,
with ``expect`` blocks written from the references and docs/design.md, never from
streamwire's output.
"""

from __future__ import annotations

import hashlib
import json
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from ws_cases import METHOD, PROVIDER
from ws_cases_live import live
from ws_cases_realtime import realtime
from ws_cases_responses import responses_ws
from ws_messages import line

ROOT = Path(__file__).resolve().parent.parent / "fixtures" / "regression"


def write(cases: list[dict[str, Any]]) -> None:
    for spec in cases:
        protocol, name = spec["protocol"], spec["case"]
        folder = ROOT / protocol
        folder.mkdir(parents=True, exist_ok=True)
        raw = "".join(line(m) + "\n" for m in spec["messages"]).encode("utf-8")
        (folder / f"{name}.jsonl").write_bytes(raw)
        manifest = {
            "format": "streamwire-fixture/1",
            "case": name,
            "raw": f"{name}.jsonl",
            "sha256": hashlib.sha256(raw).hexdigest(),
            "size": len(raw),
            "provider": PROVIDER[protocol],
            "protocol": protocol,
            "origin": "synthetic",
            "provenance": {
                "written_for": "streamwire",
                "method": METHOD[protocol] + "; one server message per line",
                "license": "Apache-2.0 (this project)",
            },
            "exercises": spec["exercises"],
        }
        if "replay" in spec:
            manifest["replay"] = spec["replay"]
        manifest["expect"] = spec["expect"]
        manifest["notes"] = spec.get("notes", [])
        text = json.dumps(manifest, indent=2, ensure_ascii=False) + "\n"
        (folder / f"{name}.json").write_text(text, encoding="utf-8")


def main() -> None:
    write(responses_ws() + realtime() + live())


if __name__ == "__main__":
    main()
