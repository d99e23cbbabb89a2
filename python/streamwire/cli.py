"""The ``streamwire`` command: look at captured streams, record new ones.

Subcommands (``streamwire NAME --help`` for each one's options):

``streamwire inspect FILE``
    Read a captured response, tell its protocol (from its content, see
    ``streamwire.io.detect``; or ``--protocol``), print the unified events
    and a summary: status, stop reason, text, every tool call with its
    executable verdict, usage, counters and warnings. FILE may be ``curl -i``
    output (status and headers, then the body; gzip, deflate and br bodies
    decoded), a HAR file, a raw body (``-`` for standard input), a
    recording or a fixture manifest. ``--layers`` shows each wire event
    beside the provider event and the unified events it became,
    ``--timeline`` a recording's arrival times. See ``_cli_inspect.py``.

``streamwire replay [RECORDING]``
    Replay a recording (default: the bundled sample) with its recorded
    chunking, and check that it reproduces. See ``_cli_replay.py``.

``streamwire record URL``
    Send one request with headers from the environment, print its events as
    they arrive, save a redacted recording and a fixture. See
    ``_cli_record.py``.

``streamwire sse FILE``
    Print the Server-Sent Events of a capture as JSON lines.

``streamwire mock-upstream``, ``streamwire check``
    The acceptance kit's verbs: see ``streamwire.kit.cli``.

Exit status: 0 done; 1 the input could not be understood (the protocol
could not be told, a replay differs); 2 the input cannot be read, or bad
arguments; 3 with ``--check``, the stream did not complete.

Each subcommand is one row of ``COMMANDS`` (a ``_cli_base.Command``): its
name, help, arguments and the function that runs it.
"""

from __future__ import annotations

import argparse
import io
import sys
from collections.abc import Sequence

from ._cli_base import CliError, Command, add_commands
from ._cli_inspect import INSPECT
from ._cli_record import RECORD
from ._cli_replay import REPLAY
from ._cli_sse import SSE
from ._core import __version__
from .kit.cli import CHECK, COMPARE, MOCK_UPSTREAM

__all__ = ["COMMANDS", "main"]

#: The subcommands, in the order ``--help`` lists them.
COMMANDS: tuple[Command, ...] = (
    INSPECT,
    REPLAY,
    RECORD,
    SSE,
    MOCK_UPSTREAM,
    CHECK,
    COMPARE,
)


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="streamwire",
        description="Inspect, replay and record LLM provider streams; check a gateway with the "
        "acceptance kit.",
    )
    parser.add_argument("--version", action="version", version=f"streamwire {__version__}")
    add_commands(parser.add_subparsers(dest="command", required=True), COMMANDS)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Runs the command line; returns the exit status."""
    for stream in (sys.stdout, sys.stderr):
        # Upstream strings may hold lone surrogates (valid JSON escapes, no
        # UTF-8 form): the terminal shows them escaped rather than failing.
        if isinstance(stream, io.TextIOWrapper):
            stream.reconfigure(errors="backslashreplace")
    args = _parser().parse_args(argv)
    name = getattr(args, "file", None) or getattr(args, "url", None) or args.command
    try:
        status: int = args.run(args)
    except BrokenPipeError:
        return 0
    except CliError as exc:
        print(f"streamwire: {exc}", file=sys.stderr)
        return exc.status
    except OSError as exc:
        print(f"streamwire: cannot read {name}: {exc.strerror or exc}", file=sys.stderr)
        return 2
    except (ValueError, KeyError) as exc:
        print(f"streamwire: {name}: {exc}", file=sys.stderr)
        return 1
    return status


if __name__ == "__main__":
    sys.exit(main())
