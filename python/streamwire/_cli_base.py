"""What every ``streamwire`` subcommand shares: its table entry, its errors, its input.

A subcommand is one ``Command``: a name, the help lines, a function that adds
its arguments to its ``argparse`` parser, and the function that runs it and
returns the exit status. ``cli.py`` lists the commands in one table; adding a
command is adding a row there. A command module keeps its heavy imports
inside ``run``, so that ``streamwire --help`` stays fast.

Exit statuses, the same for every command: 0 done; 1 the input could not be
understood (unknown protocol, not a recording, a replay that differs); 2 the
input cannot be read, or bad arguments; 3 with ``--check``, the stream did
not complete.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from typing import Any, BinaryIO, TextIO

__all__ = [
    "CHUNK_SIZE",
    "CliError",
    "Command",
    "Progress",
    "add_commands",
    "add_view_arguments",
    "open_input",
    "read_chunks",
    "size_of",
]

#: Bytes per read of an input file.
CHUNK_SIZE = 64 * 1024


@dataclass(frozen=True, slots=True)
class Command:
    """One subcommand of ``streamwire``."""

    name: str
    #: One line for ``streamwire --help``.
    help: str
    #: The paragraph of ``streamwire NAME --help``.
    description: str
    #: Adds the command's arguments to its parser.
    arguments: Callable[[argparse.ArgumentParser], None]
    #: Runs the command; returns the exit status.
    run: Callable[[argparse.Namespace], int]


def add_view_arguments(parser: argparse.ArgumentParser) -> None:
    """The output options ``inspect`` and ``replay`` share."""
    parser.add_argument("--json", action="store_true", help="one JSON object on standard output")
    parser.add_argument("--no-events", action="store_true", help="only the summary")
    parser.add_argument(
        "--timeline",
        action="store_true",
        help="arrival times, gaps and bursts (inputs with recorded timing)",
    )


def add_commands(sub: Any, commands: Iterable[Command]) -> None:
    """Adds each command's parser to ``sub`` (an ``add_subparsers()`` result)."""
    for command in commands:
        child = sub.add_parser(command.name, help=command.help, description=command.description)
        command.arguments(child)
        child.set_defaults(run=command.run)


class CliError(Exception):
    """A clear message for standard error, and the exit status."""

    def __init__(self, message: str, status: int) -> None:
        super().__init__(message)
        self.status = status


def read_chunks(stream: BinaryIO, size: int) -> Iterator[bytes]:
    """The rest of ``stream`` in reads of ``size`` bytes."""
    while chunk := stream.read(size):
        yield chunk


def open_input(path: str) -> BinaryIO:
    """A file opened for reading bytes; ``-`` is standard input."""
    if path == "-":
        return sys.stdin.buffer
    if os.path.isdir(path):
        raise IsADirectoryError(21, "Is a directory", path)
    return open(path, "rb")


def size_of(path: str) -> int | None:
    """The size of a file, or None (standard input, or unknown)."""
    try:
        return os.stat(path).st_size if path != "-" else None
    except OSError:
        return None


class Progress:
    """``bytes read / total`` on standard error, at most ten times a second."""

    def __init__(self, total: int | None, enabled: bool, err: TextIO) -> None:
        self.total = total
        self.enabled = enabled
        self.err = err
        self.done = 0
        self._last = 0.0

    def advance(self, size: int) -> None:
        self.done += size
        if not self.enabled:
            return
        now = time.monotonic()
        if now - self._last < 0.1:
            return
        self._last = now
        self._show()

    def _show(self) -> None:
        mib = self.done / 2**20
        if self.total:
            text = f"{mib:.1f} / {self.total / 2**20:.1f} MiB ({100 * self.done // self.total}%)"
        else:
            text = f"{mib:.1f} MiB"
        self.err.write(f"\rstreamwire: reading {text}   ")
        self.err.flush()

    def finish(self) -> None:
        if self.enabled:
            self._show()
            self.err.write("\n")
            self.err.flush()
