"""Runs the acceptance kit against examples/gateway: a worked example of docs/kit/examples.md.

    python examples/kit_gateway.py [--out DIR] [--docs]

Starts ``streamwire mock-upstream``, then one example gateway (uvicorn) per
upstream protocol it supports (openai-chat, openai-responses, anthropic,
gemini), each pointed at the mock, then ``streamwire check`` with all four
gateways (each route labelled ``gateway-<upstream>``), the four client
protocols it serves, every case and every delivery. Writes
``check.json``, ``check.html`` and ``check.md`` into ``--out`` (default
``build/kit/gateway``); with ``--docs`` also the matrix page
``docs/kit/examples-gateway.md``. Exits with the check's status. Every process
it starts is stopped by its pid when it ends.
"""

from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
import time
from pathlib import Path

from kit_processes import processes

ROOT = Path(__file__).resolve().parent.parent
UPSTREAMS = {
    "openai-chat": "/v1",
    "openai-responses": "/v1",
    "anthropic": "/v1",
    "gemini": "/v1beta",
}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", default=str(ROOT / "build" / "kit" / "gateway"))
    parser.add_argument(
        "--docs", action="store_true", help="also write docs/kit/examples-gateway.md"
    )
    parser.add_argument("--python", default=sys.executable)
    args, check_args = parser.parse_known_args()
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    with processes() as procs:
        mock_url = procs.mock(args.python)
        urls = [
            (procs.gateway(mock_url + prefix, upstream, args.python), f"gateway-{upstream}")
            for upstream, prefix in UPSTREAMS.items()
        ]
        procs.ready()
        started = time.monotonic()
        check = subprocess.run(
            [
                args.python,
                "-m",
                "streamwire.cli",
                "check",
                *(u for u, _ in urls),
                *(a for _, label in urls for a in ("--label", label)),
                "--mock",
                mock_url,
                # The example serves the four SSE client protocols (no Bedrock front).
                "--client",
                ",".join(UPSTREAMS),
                # The example only streams: it answers "stream": false with 400
                # before any upstream call (mapping.py), so its unary cells
                # would all be upstream_not_called.
                "--no-unary",
                "--json",
                str(out / "check.json"),
                "--html",
                str(out / "check.html"),
                "--markdown",
                str(out / "check.md"),
                "--title",
                "streamwire check: examples/gateway",
                *check_args,
            ]
        )
        print(f"kit against examples/gateway: {time.monotonic() - started:.1f} s", flush=True)
    if args.docs:
        target = ROOT / "docs" / "kit" / "examples-gateway.md"
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(out / "check.md", target)
    return check.returncode


if __name__ == "__main__":
    sys.exit(main())
