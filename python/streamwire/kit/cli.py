"""The kit's command-line verbs: ``streamwire mock-upstream`` and ``streamwire check``.

``streamwire mock-upstream [--host 127.0.0.1] [--port N]``
    Serves the cases (``mock.py``) until interrupted. The first line printed
    is ``listening on http://HOST:PORT``.

``streamwire check BASE_URL [BASE_URL ...] --client PROTOCOLS [options]``
    Drives each gateway with every case through each client protocol and
    judges every cell; prints the matrix, the verdicts and the failing cells.
    ``--mock URL`` names the mock the gateways call; without it one is
    started in-process (on ``--mock-port``, default a free port) and its URL
    printed before anything else. ``--cases``, ``--delivery`` and ``--client``
    take comma-separated names (or ``all``); ``--models`` comma-separated
    model-name templates, one route each (``{model}`` is the case's model,
    e.g. ``anthropic/{model}``). Outputs: ``--json FILE``, ``--html FILE``,
    ``--markdown FILE``. Exit status 0 when every cell passed and no verdict
    but ``semantic_downgrade`` was found, 1 otherwise, 2 for bad arguments.

``streamwire check --upstream URL --key-env VAR --protocol P``
    Live mode (``live.py``): the practice's minimal requests straight to a
    real provider or gateway, each stream written as a fixture.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
import signal
import sys
import time
from collections.abc import Sequence
from typing import Any

from .._cli_base import Command, add_commands
from .cases import CASE_NAMES
from .delivery import DELIVERIES
from .names import CLIENTS

__all__ = ["CHECK", "MOCK_UPSTREAM", "add_parsers", "main"]


def _names(known: Sequence[str], what: str) -> Any:
    def parse(text: str) -> list[str]:
        if text.strip() == "all":
            return list(known)
        names = [n.strip() for n in text.split(",") if n.strip()]
        unknown = [n for n in names if n not in known]
        if unknown or not names:
            raise argparse.ArgumentTypeError(
                f"unknown {what} {', '.join(unknown) or text!r}; known: {', '.join(known)}"
            )
        return names

    return parse


def _mock_arguments(mock: argparse.ArgumentParser) -> None:
    mock.add_argument("--host", default="127.0.0.1")
    mock.add_argument("--port", type=int, default=0, help="default: a free port")


def _check_arguments(check: argparse.ArgumentParser) -> None:
    check.add_argument("base_url", nargs="*", metavar="BASE_URL", help="the gateway's base URL")
    check.add_argument(
        "--client",
        type=_names(CLIENTS, "client protocol"),
        help=f"client protocols, comma-separated, or all ({', '.join(CLIENTS)})",
    )
    check.add_argument(
        "--mock", metavar="URL", help="the mock the gateway calls (default: start one)"
    )
    check.add_argument("--mock-port", type=int, default=0, help="port of the in-process mock")
    check.add_argument("--cases", type=_names(CASE_NAMES, "case"), default=list(CASE_NAMES))
    check.add_argument("--delivery", type=_names(DELIVERIES, "delivery"), default=list(DELIVERIES))
    check.add_argument(
        "--models",
        default="{model}",
        help="model-name templates, comma-separated, one route each (default {model})",
    )
    check.add_argument("--json", metavar="FILE", help="write the whole report as JSON")
    check.add_argument("--html", metavar="FILE", help="write the matrix and timelines as HTML")
    check.add_argument("--markdown", metavar="FILE", help="write the matrix as Markdown")
    check.add_argument("--title", default="streamwire check", help="title of the HTML/Markdown")
    check.add_argument("--concurrency", type=int, default=8, help="cells in flight (default 8)")
    check.add_argument("--timeout", type=float, default=20.0, help="seconds per read (default 20)")
    check.add_argument("--quiet", action="store_true", help="only the summary line")
    # Live mode.
    check.add_argument("--upstream", metavar="URL", help="live mode: a real provider or gateway")
    check.add_argument("--protocol", help="live mode: the upstream's protocol")
    check.add_argument("--key-env", metavar="VAR", help="the environment variable holding the key")
    check.add_argument("--model", help="live mode: the model to ask")
    check.add_argument("--out", default="fixtures/live", help="live mode: where fixtures go")


def _cmd_mock(args: argparse.Namespace) -> int:
    from .mock import MockUpstream

    async def serve() -> None:
        async with MockUpstream(args.host, args.port) as mock:
            print(f"listening on {mock.url}", flush=True)
            stop = asyncio.Event()
            loop = asyncio.get_running_loop()
            for sig in (signal.SIGINT, signal.SIGTERM):
                with contextlib.suppress(NotImplementedError, RuntimeError):
                    loop.add_signal_handler(sig, stop.set)
            await stop.wait()

    try:
        asyncio.run(serve())
    except KeyboardInterrupt:
        pass
    except OSError as exc:
        print(f"streamwire: cannot listen on {args.host}:{args.port}: {exc}", file=sys.stderr)
        return 2
    return 0


def _key(args: argparse.Namespace) -> str | None:
    if not args.key_env:
        return None
    value = os.environ.get(args.key_env)
    if not value:
        raise SystemExit(f"streamwire: the environment variable {args.key_env} is not set")
    return value


def _cmd_check(args: argparse.Namespace) -> int:
    if args.upstream:
        from .live import run_live

        if not args.protocol:
            print("streamwire: live mode needs --protocol", file=sys.stderr)
            return 2
        return run_live(
            args.upstream, args.protocol, key=_key(args), model=args.model, out=args.out
        )
    if not args.base_url or not args.client:
        print("streamwire: check needs BASE_URL and --client (or --upstream)", file=sys.stderr)
        return 2
    from .check import CheckPlan, Route, run_check
    from .report import build_report

    templates = [t.strip() for t in args.models.split(",") if t.strip()]
    try:
        plan = CheckPlan(
            routes=[Route(url, t) for url in args.base_url for t in templates],
            clients=args.client,
            cases=args.cases,
            deliveries=args.delivery,
            mock_url=args.mock,
            mock_port=args.mock_port,
            concurrency=args.concurrency,
            key=_key(args),
            read_timeout=args.timeout,
        )
    except ValueError as exc:
        print(f"streamwire: {exc}", file=sys.stderr)
        return 2
    started = time.monotonic()

    def on_mock(url: str) -> None:
        if args.mock is None:
            print(f"mock upstream listening on {url}", flush=True)

    try:
        cells = asyncio.run(run_check(plan, on_mock=on_mock))
    except OSError as exc:
        print(f"streamwire: cannot start the mock: {exc}", file=sys.stderr)
        return 2
    report = build_report(cells, seconds=round(time.monotonic() - started, 2))
    if args.quiet:
        print(report.headline())
    else:
        report.write_table(sys.stdout)
    if args.json:
        with open(args.json, "w", encoding="utf-8") as out:
            report.write_json(out)
    if args.markdown:
        with open(args.markdown, "w", encoding="utf-8") as out:
            report.write_markdown(out, args.title)
    if args.html:
        from .html import write_html

        with open(args.html, "w", encoding="utf-8") as out:
            write_html(report, out, args.title)
    return report.exit_status


#: The verbs, as rows of the ``streamwire`` command's table (``streamwire/cli.py``).
MOCK_UPSTREAM = Command(
    name="mock-upstream",
    help="serve the acceptance cases as a mock provider upstream",
    description="A real HTTP server speaking the OpenAI, Anthropic, Gemini and Bedrock "
    "streaming endpoints; the model name sw-<case> chooses the case.",
    arguments=_mock_arguments,
    run=_cmd_mock,
)
CHECK = Command(
    name="check",
    help="drive a gateway with the acceptance cases and report its capability matrix",
    description="Judge a gateway (configured to call the mock upstream) case by case, "
    "layer by layer; or, with --upstream, record live streams as fixtures.",
    arguments=_check_arguments,
    run=_cmd_check,
)


def add_parsers(sub: Any) -> None:
    """Adds ``mock-upstream`` and ``check`` to a command's subparsers."""
    add_commands(sub, (MOCK_UPSTREAM, CHECK))


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m streamwire.kit.cli``: the two verbs without the rest of the CLI."""
    parser = argparse.ArgumentParser(prog="streamwire")
    add_parsers(parser.add_subparsers(dest="command", required=True))
    args = parser.parse_args(argv)
    status: int = args.run(args)
    return status


if __name__ == "__main__":
    sys.exit(main())
