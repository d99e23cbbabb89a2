"""``streamwire sse FILE``: the Server-Sent Events of a capture, as JSON lines.

Frames the file (or standard input, ``-``) with the Rust ``SseDecoder`` in
bounded reads and prints each event as one JSON object (``event``, ``data``,
``id``, ``retry``); the counts and the decoder's peak buffer go to standard
error. A framing error (a line or event over its cap) exits 1.
"""

from __future__ import annotations

import argparse
import json
import sys

from ._cli_base import CHUNK_SIZE, CliError, Command, open_input, read_chunks

__all__ = ["SSE"]


def _sse_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("file", help="capture file, or - for standard input")
    parser.add_argument(
        "--chunk-size", type=int, default=CHUNK_SIZE, help="bytes per read (default 65536)"
    )


def _sse(args: argparse.Namespace) -> int:
    from ._core import SseDecoder
    from .errors import FramingError

    decoder = SseDecoder()
    out = sys.stdout
    events = 0
    try:
        with open_input(args.file) as stream:
            for chunk in read_chunks(stream, args.chunk_size):
                for ev in decoder.feed(chunk):
                    events += 1
                    record = {"event": ev.event, "data": ev.data, "id": ev.id, "retry": ev.retry}
                    out.write(json.dumps(record, ensure_ascii=False) + "\n")
        decoder.finish()
    except FramingError as exc:
        raise CliError(f"framing error ({exc.kind}): {exc}", 1) from None
    print(
        f"streamwire: {events} events, {decoder.comments_seen} comments, "
        f"{decoder.bytes_fed} bytes, peak buffer {decoder.peak_buffered_bytes} bytes",
        file=sys.stderr,
    )
    return 0


SSE = Command(
    name="sse",
    help="print the Server-Sent Events of a capture as JSON lines",
    description="Frame a Server-Sent Events capture and print each event as one JSON line; "
    "counts and the decoder's peak buffer go to standard error.",
    arguments=_sse_arguments,
    run=_sse,
)
