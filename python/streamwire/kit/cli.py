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
    e.g. ``anthropic/{model}``), ``--label`` a name per route. Outputs:
    ``--json FILE``, ``--html FILE``, ``--markdown FILE``; on a terminal, a
    progress line (not with ``--quiet``). Exit status 0 when every cell
    passed and no verdict but ``semantic_downgrade`` was found, 1 otherwise,
    3 when nothing failed but a cell was inconclusive (cut by the kit's own
    timeout), 2 for bad arguments.

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
import textwrap
import time
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, TextIO

from .._cli_base import Command, add_commands
from .cases import CASE_NAMES
from .delivery import DELIVERIES
from .mock import DEFAULT_STALL
from .names import CLIENTS
from .render import DEFAULT_SILENCE

if TYPE_CHECKING:
    from .cell import Cell

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


def _positive(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        value = 0.0
    if not value > 0:
        raise argparse.ArgumentTypeError(f"a positive number of seconds, not {text!r}")
    return value


def _count(text: str) -> int:
    if not (text.isascii() and text.isdigit()) or int(text) < 1:
        raise argparse.ArgumentTypeError(f"a whole number from 1, not {text!r}")
    return int(text)


def _port(text: str) -> int:
    if not (text.isascii() and text.isdigit()) or int(text) > 65535:
        raise argparse.ArgumentTypeError(f"a port from 0 (any free one) to 65535, not {text!r}")
    return int(text)


_MOCK_EPILOG = """\
The model a request names chooses the case: sw-<case>[.<delivery>][.<tag>],
anything before "sw-" ignored (so "anthropic/sw-parallel-tools" works).
GET /_sw/log shows what reached the mock. The first line printed is
"listening on http://HOST:PORT". See docs/kit.md.
"""


def _listing(label: str, names: Sequence[str]) -> str:
    return textwrap.fill(
        ", ".join(names), 79, initial_indent=f"{label:<12}", subsequent_indent=" " * 12
    )


_CHECK_EPILOG = f"""\
{_listing("cases:", CASE_NAMES)}
{_listing("deliveries:", DELIVERIES)}
{_listing("clients:", CLIENTS)}

examples:
  streamwire check http://127.0.0.1:4000 --mock http://127.0.0.1:9100 --client all \\
      --models 'anthropic/{{model}},openai/{{model}}' --json report.json --html report.html
  streamwire check --upstream https://api.anthropic.com --protocol anthropic \\
      --key-env ANTHROPIC_KEY --out fixtures/live

exit status: 0 when every cell passed (or degraded) and no verdict but
semantic_downgrade was found; 1 otherwise; 3 when nothing failed but a cell
was cut by the kit's own timeout (inconclusive); 2 for bad arguments.
See docs/kit.md.
"""


def _mock_arguments(mock: argparse.ArgumentParser) -> None:
    mock.epilog = _MOCK_EPILOG
    mock.formatter_class = argparse.RawDescriptionHelpFormatter
    mock.add_argument(
        "--host", default="127.0.0.1", help="address to listen on (default %(default)s)"
    )
    mock.add_argument("--port", type=_port, default=0, metavar="N", help="default: a free port")
    mock.add_argument(
        "--lenient-mock",
        action="store_true",
        help="stream a request the provider would refuse (logged with its problems) instead "
        "of refusing it as the provider would: for a gateway under construction",
    )


def _check_arguments(check: argparse.ArgumentParser) -> None:
    check.epilog = _CHECK_EPILOG
    check.formatter_class = argparse.RawDescriptionHelpFormatter
    check.add_argument(
        "base_url",
        nargs="*",
        metavar="BASE_URL",
        help="the gateway's base URL (several: one route each, e.g. one gateway per upstream)",
    )
    run = check.add_argument_group("what to run")
    run.add_argument(
        "--client",
        type=_names(CLIENTS, "client protocol"),
        metavar="PROTOCOLS",
        help="the protocols clients speak to the gateway, comma-separated, or all",
    )
    run.add_argument(
        "--cases",
        type=_names(CASE_NAMES, "case"),
        default=list(CASE_NAMES),
        metavar="NAMES",
        help="cases, comma-separated (default all)",
    )
    run.add_argument(
        "--delivery",
        type=_names(DELIVERIES, "delivery"),
        default=list(DELIVERIES),
        metavar="MODES",
        help="how the mock writes each body, comma-separated (default all)",
    )
    run.add_argument(
        "--unary",
        action=argparse.BooleanOptionalAction,
        default=True,
        help="also ask each case that a whole answer carries with stream: false, one "
        "'unary' cell per case and client: the matrix's non-streaming column (default on)",
    )
    run.add_argument(
        "--models",
        default="{model}",
        metavar="TEMPLATES",
        help="model-name templates, comma-separated, one route each; {model} becomes "
        "the case's model (default {model})",
    )
    run.add_argument(
        "--label",
        action="append",
        default=[],
        metavar="NAME",
        help="a route's name in the matrix (repeatable: one per route, in order, the routes "
        "being each BASE_URL with each --models template); default: the template, the "
        "host, or both",
    )
    run.add_argument(
        "--key-env",
        metavar="VAR",
        help="the environment variable holding the gateway's (or, live, the provider's) key",
    )
    where = check.add_argument_group("the mock upstream")
    where.add_argument(
        "--mock", metavar="URL", help="the mock the gateway calls (default: start one here)"
    )
    where.add_argument(
        "--mock-port", type=_port, default=0, metavar="N", help="port of the mock started here"
    )
    where.add_argument(
        "--lenient-mock",
        action="store_true",
        help="the mock started here streams a request its provider would refuse instead of "
        "refusing it (the request layer still fails, with the field)",
    )
    where.add_argument(
        "--key-passthrough",
        action="store_true",
        help="the routes pass the client's key on to the upstream by design (a reverse proxy "
        "in front of the provider): the credentials layer allows it",
    )
    outputs = check.add_argument_group("outputs")
    outputs.add_argument("--json", metavar="FILE", help="the whole report, with evidence, as JSON")
    outputs.add_argument("--html", metavar="FILE", help="the matrix and timelines as one page")
    outputs.add_argument("--markdown", metavar="FILE", help="the matrix and verdicts as Markdown")
    outputs.add_argument("--title", default="streamwire check", help="their title")
    outputs.add_argument(
        "--quiet",
        action="store_true",
        help="print only the summary line, and no progress (progress shows only on a terminal)",
    )
    limits = check.add_argument_group("limits")
    limits.add_argument(
        "--concurrency", type=_count, default=8, metavar="N", help="cells in flight (default 8)"
    )
    limits.add_argument(
        "--timeout",
        type=_positive,
        default=20.0,
        metavar="SECONDS",
        help="each read of the gateway's answer (default 20)",
    )
    limits.add_argument(
        "--silence",
        type=_positive,
        default=DEFAULT_SILENCE,
        metavar="SECONDS",
        help="how long the silence cases' upstream says nothing (default %(default)s: past "
        "nginx's 60 s proxy_read_timeout and most proxies' idle timeouts)",
    )
    limits.add_argument(
        "--stall",
        type=_positive,
        default=DEFAULT_STALL,
        metavar="SECONDS",
        help="how long retry-stall's first attempt says nothing (default %(default)s); set it "
        "past the gateway's first-byte timeout to see its second attempt",
    )
    live = check.add_argument_group("live mode (instead of BASE_URL)")
    live.add_argument("--upstream", metavar="URL", help="a real provider or gateway")
    live.add_argument(
        "--protocol",
        choices=CLIENTS,
        metavar="PROTOCOL",
        help="the protocol to speak to it: one of the clients below",
    )
    live.add_argument("--model", help="the model to ask (default: a small one of the provider's)")
    live.add_argument(
        "--out",
        default="fixtures/live",
        metavar="DIR",
        help="where fixtures go (default %(default)s)",
    )


class Progress:
    """One line on a terminal, rewritten as cells finish: done of total, elapsed, an estimate."""

    def __init__(self, total: int, out: TextIO) -> None:
        self.total = total
        self.out = out
        self.count = 0
        self.failed = 0
        self.started = time.monotonic()

    def step(self, cell: Cell) -> None:
        self.count += 1
        self.failed += cell.failed
        elapsed = time.monotonic() - self.started
        left = elapsed / self.count * (self.total - self.count)
        self.out.write(
            f"\r  {self.count}/{self.total} cells, {self.failed} failing, "
            f"{_clock(elapsed)} elapsed, about {_clock(left)} left\x1b[K"
        )
        self.out.flush()

    def done(self) -> None:
        if self.count:
            self.out.write("\r\x1b[K")
            self.out.flush()


def _clock(seconds: float) -> str:
    minutes, secs = divmod(int(seconds + 0.5), 60)
    return f"{minutes}:{secs:02d}"


def _cmd_mock(args: argparse.Namespace) -> int:
    from .mock import MockUpstream

    async def serve() -> None:
        async with MockUpstream(args.host, args.port, lenient=args.lenient_mock) as mock:
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
    from .check import CheckPlan, Route, run_check, run_record
    from .report import build_report

    templates = [t.strip() for t in args.models.split(",") if t.strip()]
    pairs = [(url, t) for url in args.base_url for t in templates]
    if args.label and len(args.label) != len(pairs):
        print(
            f"streamwire: {len(args.label)} --label for {len(pairs)} routes "
            f"({len(args.base_url)} BASE_URL x {len(templates)} --models): give one per route",
            file=sys.stderr,
        )
        return 2
    labels = args.label or [""] * len(pairs)
    try:
        plan = CheckPlan(
            routes=[
                Route(url, t, label, key_passthrough=args.key_passthrough)
                for (url, t), label in zip(pairs, labels, strict=True)
            ],
            clients=args.client,
            cases=args.cases,
            deliveries=args.delivery,
            unary=args.unary,
            mock_url=args.mock,
            mock_port=args.mock_port,
            lenient_mock=args.lenient_mock,
            concurrency=args.concurrency,
            key=_key(args),
            read_timeout=args.timeout,
            silence=args.silence,
            stall=args.stall,
        )
    except ValueError as exc:
        print(f"streamwire: {exc}", file=sys.stderr)
        return 2
    started = time.monotonic()

    def on_mock(url: str) -> None:
        if args.mock is None:
            print(f"mock upstream listening on {url}", flush=True)

    progress = Progress(plan.size, sys.stderr) if not args.quiet and sys.stderr.isatty() else None
    try:
        cells = asyncio.run(
            run_check(plan, on_mock=on_mock, on_cell=progress.step if progress else None)
        )
    except OSError as exc:
        print(f"streamwire: cannot start the mock: {exc}", file=sys.stderr)
        return 2
    finally:
        if progress is not None:
            progress.done()
    routes = [{"label": r.name, "base_url": r.base_url, "model": r.model} for r in plan.routes]
    report = build_report(
        cells, seconds=round(time.monotonic() - started, 2), routes=routes, run=run_record(plan)
    )
    if args.quiet:
        print(report.headline())
    else:
        report.write_table(sys.stdout)
        print(
            f"\nthis run's canary: {plan.canary} (in every prompt; grep the gateway's logs for "
            "it, and for the run's key, to see what they keep: docs/kit.md)"
        )
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
    description="A real HTTP server speaking the OpenAI, Anthropic, Gemini and Bedrock\n"
    "streaming endpoints, for a gateway under test to call as its upstream.",
    arguments=_mock_arguments,
    run=_cmd_mock,
)
CHECK = Command(
    name="check",
    help="drive a gateway with the acceptance cases and report its capability matrix",
    description="Judge a gateway, configured to call the mock upstream, case by case and\n"
    "layer by layer, and report its capability matrix; or, with --upstream, record\n"
    "live streams from a real provider as fixtures.",
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
