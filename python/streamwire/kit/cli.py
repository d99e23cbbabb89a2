"""The kit's command-line verbs: ``streamwire mock-upstream`` and ``streamwire check``.

``streamwire mock-upstream [--host 127.0.0.1] [--port N] [--compress] [--ws-lifetime S]``
    Serves the cases (``upstream/mock.py``) until interrupted. The first line printed
    is ``listening on http://HOST:PORT``. ``--compress``: answers a gateway that
    asks for gzip (or br) compressed, flushed per event (``upstream/coding.py``).
    ``--ws-lifetime``: how long a WebSocket connection lasts (``upstream/ws_socket.py``).

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
    progress line (not with ``--quiet``); ``--junit FILE`` (``report/junit.py``);
    under GitHub Actions, annotations and the step summary (``report/github.py``).
    ``--config FILE`` (or ``[tool.streamwire.check]`` of ``./pyproject.toml``)
    gives options from TOML (``config.py``). Exit status 0 when every cell
    passed and no verdict but the acceptable ones (``verdicts.ACCEPTABLE``)
    was found, 1 otherwise, 3 when nothing failed but a cell was inconclusive
    (cut by the kit's own timeout), 2 for a usage error (bad arguments or
    configuration) or a certificate the kit cannot verify (``--cacert``).
    ``--repeat N`` runs each cell N times: a cell whose runs differ in a
    verdict no clock decided is flaky (exit 1).

``streamwire check --upstream URL --key-env VAR --protocol P``
    Live mode (``run/live.py``): the practice's minimal requests straight to a
    real provider or gateway, each stream written as a fixture.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import signal
import ssl
import sys
import textwrap
import time
from collections.abc import Callable, Sequence
from datetime import datetime, timezone
from typing import TYPE_CHECKING, Any, TextIO

from .._cli_base import Command, add_commands
from .config import ConfigError, defer_defaults, settle
from .upstream.mock import DEFAULT_STALL
from .upstream.wire import DEFAULT_SILENCE
from .vocab.cases import CASE_NAMES
from .vocab.delivery import DELIVERIES
from .vocab.httpio import SetupError, Trust
from .vocab.names import CLIENTS, SDKS
from .vocab.names import WS_WIRE as WS_CLIENTS
from .vocab.transport import DEFAULT_TRANSPORTS, parse_transports

if TYPE_CHECKING:
    from .judge.cell import Cell

__all__ = ["CHECK", "COMPARE", "MOCK_UPSTREAM", "add_parsers", "main", "parse_check"]


def _names(known: Sequence[str], what: str, named: Sequence[str] = ()) -> Any:
    """A parser of comma-separated names of ``known`` (``all``: every one of
    them) and of ``named``, which ``all`` leaves out (asked for by name only)."""

    def parse(text: str) -> list[str]:
        if text.strip() == "all":
            return list(known)
        names = [n.strip() for n in text.split(",") if n.strip()]
        unknown = [n for n in names if n not in known and n not in named]
        if unknown or not names:
            every = ", ".join((*known, *named))
            raise argparse.ArgumentTypeError(
                f"unknown {what} {', '.join(unknown) or text!r}; known: {every}"
            )
        return names

    return parse


def _path(text: str) -> tuple[str, str]:
    name, sep, url = text.partition("=")
    if not sep or not name.strip() or not url.strip().startswith(("http://", "https://")):
        raise argparse.ArgumentTypeError(f"want NAME=URL (an http or https URL), not {text!r}")
    return name.strip(), url.strip()


def _positive(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        value = 0.0
    if not value > 0:
        raise argparse.ArgumentTypeError(f"a positive number of seconds, not {text!r}")
    return value


def _finite(text: str) -> float:
    value = _positive(text)
    if value == float("inf"):
        raise argparse.ArgumentTypeError(f"a finite number of seconds, not {text!r}")
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
anything before "sw-" ignored (so "anthropic/sw-parallel-tools" works);
a model that names none (a gateway's own) leaves it to the prompt, which
the check writes as "streamwire acceptance case sw-<case>.<delivery>.<tag>:".
GET /_sw/log shows what reached the mock, GET /_sw/sessions each WebSocket
session message by message and how it closed. The first line printed is
"listening on http://HOST:PORT". With --compress, a gateway that asks for
gzip or br (Accept-Encoding) gets every answer so, each event flushed as a
provider's own front sends it: a gateway that holds the stream while it
decompresses is then seen holding it. See docs/kit/running.md.
"""


def _listing(label: str, names: Sequence[str]) -> str:
    return textwrap.fill(
        ", ".join(names), 79, initial_indent=f"{label:<12}", subsequent_indent=" " * 12
    )


_CHECK_EPILOG = f"""\
{_listing("cases:", CASE_NAMES)}
{_listing("deliveries:", DELIVERIES)}
{_listing("clients:", CLIENTS)}
{_listing("WebSocket:", tuple(WS_CLIENTS))}

examples:
  streamwire check http://127.0.0.1:4000 --mock http://127.0.0.1:9100 --client all \\
      --models 'anthropic/{{model}},openai/{{model}}' --json report.json --html report.html
  streamwire check --upstream https://api.anthropic.com --protocol anthropic \\
      --key-env ANTHROPIC_KEY --out fixtures/live

options may also come from a TOML file (--config FILE; without BASE_URL and
--config, [tool.streamwire.check] of ./pyproject.toml): each option's long name,
"_" for "-" (key_passthrough = true), base_url a list, ${{VAR}} from the
environment; the command line overrides the file. See docs/kit/outputs.md.

exit status:
  0  every cell passed or degraded; no verdict but semantic_downgrade or sdk_limit
  1  a layer failed, a cell was flaky, or another verdict (--against: a regression)
  2  usage error (arguments, --config), no mock, or an unverified certificate (--cacert)
  3  nothing failed, but a cell was inconclusive (cut by the kit's own timeout)
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
    mock.add_argument(
        "--compress",
        action="store_true",
        help="answer a request that accepts gzip (or br, with the brotli package) compressed, "
        "each event of a stream flushed on its own, as providers' fronts do: for a gateway "
        "that asks its upstream for compression (default: every answer identity)",
    )
    mock.add_argument(
        "--ws-lifetime",
        type=_finite,
        metavar="S",
        help="how long a WebSocket connection lasts before the mock ends it as its provider "
        "does (default: each provider's, 60 minutes for OpenAI's, 10 for Gemini Live)",
    )


def _check_arguments(check: argparse.ArgumentParser) -> None:
    _check_options(check)
    # Only what the command line gives is parsed: ``_cmd_check`` fills in the
    # rest from a configuration file, then the defaults (``config.settle``).
    defer_defaults(check)


def _check_options(check: argparse.ArgumentParser) -> None:
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
        type=_names(CLIENTS, "client protocol", tuple(WS_CLIENTS)),
        metavar="PROTOCOLS",
        help="the protocols clients speak to the gateway, comma-separated, or all (the HTTP "
        "ones; a WebSocket protocol, openai-responses-ws, openai-realtime or gemini-live, "
        "is named)",
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
        "--transport",
        type=_transports,
        default=list(DEFAULT_TRANSPORTS),
        metavar="NAMES",
        help="how the client reaches the gateway, comma-separated or all: http1 (HTTP/1.1, "
        "Accept-Encoding: identity, as curl), http1-gzip (gzip, deflate, as the Python "
        "SDKs; the answer decoded as it arrives), http2 (HTTP/2 as a browser: ALPN h2 "
        "over https, h2c over http; needs streamwire[kit-h2]). The first reads every "
        "case, the others "
        "the plain cases, paced; a hop that holds what it compresses is "
        "compression_buffered (default " + ",".join(DEFAULT_TRANSPORTS) + ")",
    )
    run.add_argument(
        "--cacert",
        metavar="FILE",
        help="trust the CA certificates in FILE (PEM) for https routes, besides the "
        "system's (a gateway behind a private CA)",
    )
    run.add_argument(
        "--insecure",
        action="store_true",
        help="do not verify the certificates of https routes",
    )
    run.add_argument(
        "--unary",
        action=argparse.BooleanOptionalAction,
        default=True,
        help="also ask each case that a whole answer carries with stream: false, one "
        "'unary' cell per case and client: the matrix's non-streaming column (default on)",
    )
    run.add_argument(
        "--sdk",
        type=lambda text: [] if text.strip() == "none" else _names(tuple(SDKS), "SDK")(text),
        default=[],
        metavar="SDKS",
        help="also read the cases with these official SDKs pointed at the gateway, "
        "comma-separated, all or none (" + ", ".join(SDKS) + "; pip install "
        "'streamwire[kit-sdk]'): one SDK cell per case, protocol and delivery, judged by "
        "the sdk layer",
    )
    run.add_argument(
        "--models",
        default="{model}",
        metavar="TEMPLATES",
        help="model-name templates, comma-separated, one route each; {model} becomes "
        "the case's model (default {model}); a template without it is sent as it is, "
        "and the mock reads the case from the prompt (a gateway that sends one model)",
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
        "--path",
        action="append",
        type=_path,
        default=[],
        metavar="NAME=URL",
        help="a path to the gateway (repeatable, at least two: e.g. direct=URL, then "
        "edge=URL through a CDN or proxy): each runs the same cells, and the report "
        "compares every path with the first, hop by hop",
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
        "--mock-compress",
        action="store_true",
        help="the mock started here answers a gateway that asks for gzip (or br) compressed, "
        "flushed per event (streamwire mock-upstream --compress)",
    )
    where.add_argument(
        "--key-passthrough",
        action="store_true",
        help="the routes pass the client's key on to the upstream by design (a reverse proxy "
        "in front of the provider): the credentials layer allows it",
    )
    against = check.add_argument_group("after an upgrade (docs/kit/comparisons.md)")
    against.add_argument(
        "--against",
        metavar="OLD.json",
        help="compare this run with an earlier report, cell by cell; the exit status is then "
        "the comparison's: 1 on any regression not accepted",
    )
    against.add_argument(
        "--accepted", metavar="FILE", help="the reviewed accepted changes (streamwire compare)"
    )
    against.add_argument(
        "--gate-timing",
        action="store_true",
        help="changes a clock decided gate too (by default they are reported, not gated)",
    )
    against.add_argument(
        "--gateway",
        metavar="NAME@VERSION",
        help="the gateway under test and its version, kept in the report (e.g. litellm@1.110.2)",
    )
    against.add_argument(
        "--version-header",
        metavar="HEADER",
        help="read the gateway's version from this response header instead",
    )
    load = check.add_argument_group("load (docs/kit/load.md)")
    load.add_argument(
        "--load",
        action="store_true",
        help="instead of one cell each, keep --concurrency streams in flight, each judged "
        "as a cell is and salted with its own tag (cross_talk); the same load straight to "
        "the mock first, for the gateway's added latency; the mock's connections after it",
    )
    load.add_argument(
        "--load-streams",
        type=_count,
        metavar="N",
        help="streams per target (default: ten per slot of --concurrency)",
    )
    load.add_argument(
        "--load-duration", type=_positive, metavar="SECONDS", help="or this long per target"
    )
    load.add_argument(
        "--load-direct",
        action=argparse.BooleanOptionalAction,
        default=True,
        help="run the same load straight to the mock first (default on)",
    )
    outputs = check.add_argument_group("outputs")
    outputs.add_argument("--json", metavar="FILE", help="the whole report, with evidence, as JSON")
    outputs.add_argument("--html", metavar="FILE", help="the matrix and timelines as one page")
    outputs.add_argument("--markdown", metavar="FILE", help="the matrix and verdicts as Markdown")
    outputs.add_argument(
        "--junit",
        metavar="FILE",
        help="JUnit XML, a testcase per cell: CI systems show the failing cells as failed tests",
    )
    outputs.add_argument("--title", default="streamwire check", help="their title")
    outputs.add_argument(
        "--config",
        metavar="FILE",
        help="read options from this TOML file (keys: the long option names, _ for -); "
        "the command line overrides it",
    )
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
        "--repeat",
        type=_count,
        default=1,
        metavar="N",
        help="run each cell N times: a cell whose runs differ in a verdict no clock decided "
        "is flaky, and fails the run (default 1)",
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
        help="how long the idle-timeout probes' upstream says nothing (default %(default)s: "
        "past nginx's 60 s proxy_read_timeout and most proxies' idle timeouts); the probes "
        "are the silence cases of each route's first --client (see --silence-clients), run "
        "beside the other cells",
    )
    limits.add_argument(
        "--silence-clients",
        choices=("first", "all"),
        default="first",
        help="whose silence cells last --silence: the first --client's on each route "
        "(default; the others' say nothing for 3 s, to judge their keep-alives and cuts), "
        "or every client's (the run before going live)",
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
    from .upstream.mock import MockUpstream

    async def serve() -> None:
        async with MockUpstream(
            args.host,
            args.port,
            lenient=args.lenient_mock,
            compress=args.compress,
            ws_lifetime=args.ws_lifetime,
        ) as mock:
            print(f"listening on {mock.url}", flush=True)
            if args.compress and "br" not in mock.codings:
                print(
                    "streamwire: --compress answers gzip only: br needs the brotli package "
                    "(pip install 'streamwire[brotli]')",
                    file=sys.stderr,
                    flush=True,
                )
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
        print(f"streamwire: the environment variable {args.key_env} is not set", file=sys.stderr)
        raise SystemExit(2)
    return value


def _settled(args: argparse.Namespace) -> argparse.Namespace:
    """``args`` completed by the configuration file, then the defaults."""
    parser = argparse.ArgumentParser(prog="streamwire check")
    _check_options(parser)
    return settle(args, parser)


def _transports(text: str) -> list[str]:
    try:
        return list(parse_transports(text))
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def _tls_context(cacert: str | None, insecure: bool) -> Trust | None:
    """Whom https routes are trusted by: the system's store (None), plus
    ``cacert``'s CAs, or no one checked (``insecure``). ValueError when
    ``cacert`` holds no CA certificate."""
    if not insecure and cacert is None:
        return None
    trust = Trust(cafile=None if insecure else cacert, insecure=insecure)
    trust.context()  # read now: a bad file ends the run before any cell
    return trust


def parse_check(argv: Sequence[str]) -> argparse.Namespace:
    """``streamwire check ARGV``'s options as the check runs with them: the
    command line's, then the configuration's, then the defaults. Raises
    ``config.ConfigError``; a bad argument exits 2, as on the command line."""
    parser = argparse.ArgumentParser(prog="streamwire check")
    _check_arguments(parser)
    return _settled(parser.parse_args(argv))


def _cmd_check(args: argparse.Namespace) -> int:
    try:
        args = _settled(args)
    except ConfigError as exc:
        print(f"streamwire: {exc}", file=sys.stderr)
        return 2
    if args.upstream:
        from .run.live import run_live

        if not args.protocol:
            print("streamwire: live mode needs --protocol", file=sys.stderr)
            return 2
        return run_live(
            args.upstream, args.protocol, key=_key(args), model=args.model, out=args.out
        )
    if not (args.base_url or args.path) or not args.client:
        print(
            "streamwire: check needs BASE_URL (or --path) and --client (or --upstream)",
            file=sys.stderr,
        )
        return 2
    if len(args.path) == 1:
        print(
            "streamwire: --path wants at least two paths (the first is the reference)",
            file=sys.stderr,
        )
        return 2
    from .report.document import build_report
    from .run.check import CheckPlan, Route, run_check, run_record, sdk_clients

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
    routes = [
        Route(url, t, label, key_passthrough=args.key_passthrough)
        for (url, t), label in zip(pairs, labels, strict=True)
    ]
    # A path's route is labelled by its name (and its template, given several).
    paths = []
    for name, url in args.path:
        for t in templates:
            label = name if len(templates) == 1 else f"{name} {t}"
            paths.append(label)
            routes.append(Route(url, t, label, key_passthrough=args.key_passthrough))
    try:
        plan = CheckPlan(
            routes=routes,
            clients=args.client,
            cases=args.cases,
            deliveries=args.delivery,
            unary=args.unary,
            sdks=args.sdk,
            version_header=args.version_header,
            mock_url=args.mock,
            mock_port=args.mock_port,
            lenient_mock=args.lenient_mock,
            mock_compress=args.mock_compress,
            concurrency=args.concurrency,
            repeat=args.repeat,
            key=_key(args),
            key_env=args.key_env,
            read_timeout=args.timeout,
            silence=args.silence,
            silence_clients=args.silence_clients,
            stall=args.stall,
            transports=args.transport,
            tls=_tls_context(args.cacert, args.insecure),
        )
    except (ValueError, OSError, ssl.SSLError) as exc:
        print(f"streamwire: {exc}", file=sys.stderr)
        return 2
    if args.load:
        return _cmd_load(args, plan)
    started = time.monotonic()
    run_time = datetime.now(timezone.utc).isoformat(timespec="seconds")
    earlier: tuple[dict[str, Any], dict[tuple[str, str], str]] | None = None
    if args.against:
        try:
            earlier = _load_for_compare(args.against, args.accepted)
        except (OSError, ValueError) as exc:
            print(f"streamwire: {exc}", file=sys.stderr)
            return 2

    def on_mock(url: str) -> None:
        if args.mock is None:
            print(f"mock upstream listening on {url}", flush=True)

    progress = Progress(plan.size, sys.stderr) if not args.quiet and sys.stderr.isatty() else None
    try:
        cells = asyncio.run(
            run_check(
                plan,
                on_mock=on_mock,
                on_cell=progress.step if progress else None,
                on_notice=lambda text: print(f"streamwire: {text}", file=sys.stderr),
            )
        )
    except SetupError as exc:
        # The kit's trust or HTTP version, not the gateway's answers: no verdict at all.
        print(f"streamwire: {exc}", file=sys.stderr)
        return 2
    except OSError as exc:
        print(f"streamwire: cannot start the mock: {exc}", file=sys.stderr)
        return 2
    finally:
        if progress is not None:
            progress.done()
    listed = [{"label": r.name, "base_url": r.base_url, "model": r.model} for r in plan.routes]
    meta: dict[str, Any] = {"sdks": sdk_clients(plan)} if plan.sdks else {}
    gateway = args.gateway or _header_value(cells, args.version_header)
    if gateway:
        meta["gateway"] = gateway
    meta["time"] = run_time
    if paths:
        meta["paths"] = paths
    report = build_report(
        cells,
        seconds=round(time.monotonic() - started, 2),
        routes=listed,
        run=run_record(plan),
        **meta,
    )
    if args.quiet:
        print(report.headline())
    else:
        report.write_table(sys.stdout)
        print(
            f"\nthis run's canary: {plan.canary} (in every prompt; grep the gateway's logs for "
            "it, and for the run's key, to see what they keep: docs/kit/running.md)"
        )
    if args.json:
        with open(args.json, "w", encoding="utf-8") as out:
            report.write_json(out)
    if args.markdown:
        with open(args.markdown, "w", encoding="utf-8") as out:
            report.write_markdown(out, args.title)
    if args.html:
        from .report.html import write_html

        with open(args.html, "w", encoding="utf-8") as out:
            write_html(report, out, args.title)
    if args.junit:
        from .report.junit import write_junit

        with open(args.junit, "w", encoding="utf-8") as out:
            write_junit(report, out, args.title)
    if os.environ.get("GITHUB_ACTIONS") == "true":
        from .report.github import to_actions

        to_actions(report, sys.stdout, args.title, os.environ)
    if earlier is not None:
        from .report.compare import compare, render_text

        comparison = compare(earlier[0], report.as_dict(), earlier[1], gate_timing=args.gate_timing)
        print()
        print(render_text(comparison), end="")
        return comparison.exit_status
    return report.exit_status


def _cmd_load(args: argparse.Namespace, plan: Any) -> int:
    from dataclasses import replace

    from .run.load import LOAD_CASES, LOAD_DELIVERIES, LoadPlan, run_load

    # Not given: the load's own mix (every case and delivery is a check's default).
    cases = list(LOAD_CASES) if args.cases == list(CASE_NAMES) else args.cases
    deliveries = list(LOAD_DELIVERIES) if args.delivery == list(DELIVERIES) else args.delivery
    concurrency = args.concurrency
    if args.junit:
        print("streamwire: --junit writes a check's cells; a --load run has none", file=sys.stderr)
        return 2
    try:
        check = replace(plan, cases=cases, deliveries=deliveries, sdks=(), key=_key(args))
        load = LoadPlan(
            check,
            concurrency=concurrency,
            streams=args.load_streams,
            duration=args.load_duration,
            direct=args.load_direct,
        )
    except ValueError as exc:
        print(f"streamwire: {exc}", file=sys.stderr)
        return 2
    short = _room_for_sockets(concurrency)
    if short:
        print(f"streamwire: {short}", file=sys.stderr)
        return 2
    progress = sys.stderr.isatty() and not args.quiet
    counted = [0]

    def on_stream(_: Any) -> None:
        counted[0] += 1
        if progress and counted[0] % 50 == 0:
            sys.stderr.write(f"\r  {counted[0]} streams\x1b[K")
            sys.stderr.flush()

    def on_target(name: str) -> None:
        if not args.quiet:
            sys.stderr.write(f"\r\x1b[Kload: {name}\n")
            sys.stderr.flush()

    try:
        report = asyncio.run(run_load(load, on_stream=on_stream, on_target=on_target))
    except SetupError as exc:
        print(f"streamwire: {exc}", file=sys.stderr)
        return 2
    except OSError as exc:
        print(f"streamwire: cannot start the mock: {exc}", file=sys.stderr)
        return 2
    if progress:
        sys.stderr.write("\r\x1b[K")
    from .report import load as rendered

    report.title = args.title
    if args.quiet:
        print(rendered.lines(report)[0])
    else:
        rendered.write_table(report, sys.stdout)
    writers: tuple[tuple[str | None, Callable[[TextIO], None]], ...] = (
        (args.json, report.write_json),
        (args.markdown, lambda out: rendered.write_markdown(report, out)),
        (args.html, lambda out: rendered.write_html(report, out)),
    )
    for path, write in writers:
        if path:
            with open(path, "w", encoding="utf-8") as out:
                write(out)
    return report.exit_status


def _room_for_sockets(concurrency: int) -> str | None:
    """Raises the process's open-file limit (its soft one, up to the hard) to
    what ``concurrency`` streams need: a socket each, another each at a mock in
    this process (the mock's process inherits the limit), and some. The problem,
    when the hard limit is lower."""
    try:
        import resource
    except ImportError:  # not a POSIX system: its own limits
        return None
    need = 2 * concurrency + 64
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft == resource.RLIM_INFINITY or soft >= need:
        return None
    allowed = need if hard == resource.RLIM_INFINITY else min(need, hard)
    try:
        resource.setrlimit(resource.RLIMIT_NOFILE, (allowed, hard))
    except (ValueError, OSError):
        allowed = soft
    if allowed >= need:
        return None
    return (
        f"{concurrency} streams in flight need about {need} open files and this process may "
        f"open {allowed}: raise the limit (ulimit -n {need}) or lower --concurrency"
    )


def _header_value(cells: Sequence[Cell], header: str | None) -> str | None:
    """The first value the gateway sent under ``header`` (``--version-header``)."""
    if not header:
        return None
    for cell in cells:
        value = cell.evidence.get("version_header")
        if isinstance(value, str) and value:
            return f"{header}: {value}"
    return None


def _load_for_compare(
    path: str, accepted: str | None
) -> tuple[dict[str, Any], dict[tuple[str, str], str]]:
    from .report.compare import load_accepted

    with open(path, encoding="utf-8") as f:
        old = json.load(f)
    if not isinstance(old, dict) or "cells" not in old:
        raise ValueError(f"{path} is no streamwire check report (no cells)")
    taken: dict[tuple[str, str], str] = {}
    if accepted:
        with open(accepted, encoding="utf-8") as f:
            taken = load_accepted(f.read())
    return old, taken


def _compare_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("old", metavar="OLD.json", help="the baseline report")
    parser.add_argument("new", metavar="NEW.json", help="the report after the upgrade")
    parser.add_argument("--accepted", metavar="FILE", help="the reviewed accepted changes")
    parser.add_argument(
        "--gate-timing",
        action=argparse.BooleanOptionalAction,
        default=False,
        help="changes a clock decided (a timed finding near its bound, a hang-up on the "
        "kit's timer: each cell's evidence says) gate too; by default they are reported "
        "under their own heading, with why, and not gated",
    )
    parser.add_argument(
        "--verbose",
        action="store_true",
        help="a line for each change; by default each regression has its line and alike "
        "changes that do not gate (the same fix, verdict or time in many cells) share one",
    )
    parser.add_argument("--json", metavar="FILE", help="the whole comparison as JSON")
    parser.add_argument(
        "--markdown", metavar="FILE", help="a summary sized for a pull-request comment"
    )
    accept = parser.add_argument_group("accepting the changes")
    accept.add_argument(
        "--accept",
        action="store_true",
        help="add every regression to --accepted (created if missing) with --reason, and "
        "copy NEW.json to --baseline-out: the next comparison passes",
    )
    accept.add_argument("--reason", default="", help="why the changes are intended (required)")
    accept.add_argument("--baseline-out", metavar="FILE", help="where --accept puts NEW.json")


def _cmd_compare(args: argparse.Namespace) -> int:
    from .report.compare import accept, compare, render_text

    try:
        old, taken = _load_for_compare(args.old, args.accepted if not args.accept else None)
        new, _ = _load_for_compare(args.new, None)
        if args.accept and args.accepted and os.path.exists(args.accepted):
            with open(args.accepted, encoding="utf-8") as f:
                earlier_text: str | None = f.read()
        else:
            earlier_text = None
    except (OSError, ValueError) as exc:
        print(f"streamwire: {exc}", file=sys.stderr)
        return 2
    comparison = compare(old, new, taken, gate_timing=args.gate_timing)
    if args.accept:
        if not args.accepted or not args.reason.strip():
            print("streamwire: --accept needs --accepted FILE and --reason", file=sys.stderr)
            return 2
        try:
            text = accept(comparison, args.reason, earlier_text)
        except ValueError as exc:
            print(f"streamwire: {exc}", file=sys.stderr)
            return 2
        with open(args.accepted, "w", encoding="utf-8") as f:
            f.write(text)
        if args.baseline_out:
            with open(args.baseline_out, "w", encoding="utf-8") as f:
                json.dump(new, f, ensure_ascii=False, indent=1)
                f.write("\n")
        print(
            f"accepted {len(comparison.regressions)} changes into {args.accepted}"
            + (f"; the baseline is now {args.baseline_out}" if args.baseline_out else "")
        )
        return 0
    print(render_text(comparison, verbose=args.verbose), end="")
    if args.json:
        with open(args.json, "w", encoding="utf-8") as f:
            json.dump(comparison.as_dict(), f, ensure_ascii=False, indent=1, default=str)
            f.write("\n")
    if args.markdown:
        with open(args.markdown, "w", encoding="utf-8") as f:
            f.write(comparison.markdown())
    return comparison.exit_status


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


COMPARE = Command(
    name="compare",
    help="compare two check reports cell by cell; gate on regressions",
    description="After an upgrade: match two streamwire check reports' cells by (case,\n"
    "client, route, delivery) and report every layer that regressed or was fixed, every\n"
    "fact that changed (events, their order, the error, the end, usage, the status) and\n"
    "every verdict added or gone; exit 1 on a regression not accepted (--accepted).\n"
    "Each regression has its own line; what does not gate is grouped, a line for the\n"
    "same change in many cells (--verbose: a line each; --json keeps every change).",
    arguments=_compare_arguments,
    run=_cmd_compare,
)


def add_parsers(sub: Any) -> None:
    """Adds ``mock-upstream``, ``check`` and ``compare`` to a command's subparsers."""
    add_commands(sub, (MOCK_UPSTREAM, CHECK, COMPARE))


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m streamwire.kit.cli``: the two verbs without the rest of the CLI."""
    parser = argparse.ArgumentParser(prog="streamwire")
    add_parsers(parser.add_subparsers(dest="command", required=True))
    args = parser.parse_args(argv)
    status: int = args.run(args)
    return status


if __name__ == "__main__":
    sys.exit(main())
