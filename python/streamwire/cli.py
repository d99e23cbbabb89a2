"""The ``streamwire`` command: look at a captured stream.

Subcommands:

``streamwire sse FILE``
    Frame a Server-Sent Events capture (a file, or ``-`` for standard input)
    and print each event as one JSON line; counts and the decoder's peak
    buffer go to standard error.

The command reads its input in bounded chunks, so a capture of any size is
framed in memory proportional to its largest event.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Iterator, Sequence
from typing import BinaryIO

from ._core import SseDecoder
from .errors import FramingError

__all__ = ["main"]

CHUNK_SIZE = 64 * 1024


def _read_chunks(stream: BinaryIO, size: int) -> Iterator[bytes]:
    while chunk := stream.read(size):
        yield chunk


def _open(path: str) -> BinaryIO:
    if path == "-":
        return sys.stdin.buffer
    return open(path, "rb")


def _cmd_sse(args: argparse.Namespace) -> int:
    decoder = SseDecoder()
    out = sys.stdout
    events = 0
    try:
        with _open(args.file) as stream:
            for chunk in _read_chunks(stream, args.chunk_size):
                for ev in decoder.feed(chunk):
                    events += 1
                    record = {"event": ev.event, "data": ev.data, "id": ev.id, "retry": ev.retry}
                    out.write(json.dumps(record, ensure_ascii=False) + "\n")
        decoder.finish()
    except FramingError as exc:
        print(f"streamwire: framing error ({exc.kind}): {exc}", file=sys.stderr)
        return 1
    print(
        f"streamwire: {events} events, {decoder.comments_seen} comments, "
        f"{decoder.bytes_fed} bytes, peak buffer {decoder.peak_buffered_bytes} bytes",
        file=sys.stderr,
    )
    return 0


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="streamwire", description="Inspect captured LLM provider streams."
    )
    sub = parser.add_subparsers(dest="command", required=True)
    sse = sub.add_parser("sse", help="print the Server-Sent Events of a capture as JSON lines")
    sse.add_argument("file", help="capture file, or - for standard input")
    sse.add_argument(
        "--chunk-size", type=int, default=CHUNK_SIZE, help="bytes per read (default 65536)"
    )
    sse.set_defaults(run=_cmd_sse)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Runs the command line; returns the exit status."""
    args = _parser().parse_args(argv)
    try:
        status: int = args.run(args)
    except BrokenPipeError:
        return 0
    except OSError as exc:
        print(f"streamwire: cannot read {args.file}: {exc.strerror or exc}", file=sys.stderr)
        return 2
    return status


if __name__ == "__main__":
    sys.exit(main())
