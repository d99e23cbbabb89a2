"""The ``streamwire`` command: look at a captured stream.

Subcommands:

``streamwire inspect FILE``
    Tell the protocol of a captured response body (from its content, see
    ``streamwire.io.detect``; or ``--protocol``), parse it, print the unified
    events one per line and a summary: status, stop reason, text, every tool
    call with its executable verdict, usage, counters and warnings. FILE may
    be a raw body (``-`` for standard input), a recording
    (``streamwire-recording/1``, then the recorded timings are shown too) or
    a fixture manifest (``streamwire-fixture/1``: its raw file and options).
    ``--json`` prints one JSON object instead (``events``, ``result``);
    ``--no-events`` only the summary; ``--check`` exits 3 unless the stream
    ``completed``. A progress line goes to standard error for inputs of 1 MiB
    or more when it is a terminal, or always with ``--progress``.

``streamwire replay RECORDING``
    Replay a recording with its recorded chunking (``--timing real`` at its
    recorded pace, ``--speed`` times faster), print the events and the
    summary, and check that the replay reproduces the recorded events and
    result (exit 1, listing the differences, when it does not).

``streamwire sse FILE``
    Frame a Server-Sent Events capture (a file, or ``-`` for standard input)
    and print each event as one JSON line; counts and the decoder's peak
    buffer go to standard error.

``streamwire mock-upstream``, ``streamwire check``
    The acceptance kit's verbs: see ``streamwire.kit.cli``.

Exit status: 0 done; 1 the protocol could not be told, is unknown, or a
replay differs; 2 the file cannot be read (or bad arguments); 3 with
``--check``, the stream did not complete. Input is read in bounded chunks,
so a capture of any size is parsed in memory proportional to its largest
event (``--json`` keeps the events for its output).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any, BinaryIO, TextIO

from ._clifmt import event_line, write_summary
from ._core import SseDecoder
from .errors import FramingError

__all__ = ["main"]

CHUNK_SIZE = 64 * 1024
#: Inputs at least this large show progress on a terminal.
PROGRESS_MIN_BYTES = 1024 * 1024


class _Fail(Exception):
    """A clear message and an exit status."""

    def __init__(self, message: str, status: int) -> None:
        super().__init__(message)
        self.status = status


def _read_chunks(stream: BinaryIO, size: int) -> Iterator[bytes]:
    while chunk := stream.read(size):
        yield chunk


def _open(path: str) -> BinaryIO:
    if path == "-":
        return sys.stdin.buffer
    if os.path.isdir(path):
        raise IsADirectoryError(21, "Is a directory", path)
    return open(path, "rb")


class _Progress:
    """``bytes read / total`` on standard error, at most ten times a second."""

    def __init__(self, total: int | None, enabled: bool, err: TextIO) -> None:
        self.total = total
        self.enabled = enabled
        self.err = err
        self.done = 0
        self._last = 0.0
        self._shown = False

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
        self._shown = True

    def finish(self) -> None:
        if self.enabled:
            self._show()
            self.err.write("\n")
            self.err.flush()


# --- sse ---------------------------------------------------------------------------


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


# --- inspect -----------------------------------------------------------------------


def _option(text: str) -> tuple[str, Any]:
    key, sep, value = text.partition("=")
    if not sep or not key:
        raise argparse.ArgumentTypeError(f"expected KEY=VALUE, got {text!r}")
    try:
        return key, json.loads(value)
    except json.JSONDecodeError:
        return key, value


def _kind_of(head: bytes) -> str:
    """``recording``, ``manifest`` or ``raw``, from the first bytes."""
    text = head.lstrip()[:4096].decode("utf-8", "replace")
    if not text.startswith("{"):
        return "raw"
    if '"streamwire-recording/1"' in text.partition("\n")[0]:
        return "recording"
    if '"streamwire-fixture/1"' in text:
        return "manifest"
    return "raw"


def _cmd_inspect(args: argparse.Namespace) -> int:
    from .io.detect import SNIFF_BYTES

    with _open(args.file) as stream:
        head = stream.read(SNIFF_BYTES)
        kind = _kind_of(head)
        if kind == "recording":
            rest = head + stream.read()
            return _inspect_recording(args, rest.decode("utf-8", "replace"))
        if kind == "manifest":
            return _inspect_manifest(args, head + stream.read())
        size = _size(args.file)
        return _inspect_raw(args, head, _read_chunks(stream, args.chunk_size), size, {})


def _size(path: str) -> int | None:
    try:
        return os.stat(path).st_size if path != "-" else None
    except OSError:
        return None


def _inspect_manifest(args: argparse.Namespace, data: bytes) -> int:
    manifest = json.loads(data)
    raw_path = Path(args.file).parent / manifest["raw"]
    if args.protocol is None:
        args.protocol = manifest.get("protocol")
    with _open(str(raw_path)) as stream:
        head = stream.read(args.chunk_size)
        return _inspect_raw(
            args,
            head,
            _read_chunks(stream, args.chunk_size),
            _size(str(raw_path)),
            dict(manifest.get("options") or {}),
            source=f"{args.file} -> {raw_path.name}",
        )


def _choose_protocol(args: argparse.Namespace, head: bytes) -> tuple[str, str]:
    import streamwire as sw

    from .io._wire import http_protocols
    from .io.detect import detect

    known = http_protocols()
    if args.protocol is not None:
        if args.protocol in sw.known_protocols() and args.protocol not in known:
            raise _Fail(
                f"{args.protocol} is a WebSocket protocol; inspect reads HTTP bodies "
                f"({', '.join(known)})",
                1,
            )
        if args.protocol not in known:
            raise _Fail(f"unknown protocol {args.protocol!r}; known: {', '.join(known)}", 1)
        return args.protocol, "given"
    protocol, reason = detect(head)
    if protocol is None:
        raise _Fail(
            f"cannot tell the protocol of {args.file}: {reason}; "
            f"pass --protocol (one of {', '.join(known)})",
            1,
        )
    if protocol not in known:
        raise _Fail(f"{args.file} looks like {protocol} ({reason}), which has no adapter here", 1)
    return protocol, f"detected: {reason}"


def _inspect_raw(
    args: argparse.Namespace,
    head: bytes,
    rest: Iterator[bytes],
    size: int | None,
    options: dict[str, Any],
    source: str | None = None,
) -> int:
    import streamwire as sw

    from .protocols import new_stream

    protocol, how = _choose_protocol(args, head)
    options.update(args.option or {})
    try:
        stream = new_stream(protocol, options)
    except TypeError as exc:
        raise _Fail(f"bad --option for {protocol}: {exc}", 2) from None
    out = sys.stdout
    progress = _Progress(
        size,
        args.progress or (sys.stderr.isatty() and (size or 0) >= PROGRESS_MIN_BYTES),
        sys.stderr,
    )
    collected: list[sw.Event] = []
    number = 0

    def show(events: list[sw.Event]) -> None:
        nonlocal number
        for event in events:
            number += 1
            if args.json:
                if not args.no_events:
                    collected.append(event)
            elif not args.no_events:
                out.write(event_line(number, event) + "\n")

    if not args.json and not args.no_events:
        out.write(f"events of {source or args.file} ({protocol}):\n")
    if head:
        progress.advance(len(head))
        show(stream.feed(head))
    for chunk in rest:
        progress.advance(len(chunk))
        show(stream.feed(chunk))
    show(stream.close())
    progress.finish()
    result = stream.result
    heading = [
        ("file", f"{source or args.file} ({progress.done} bytes)"),
        ("protocol", f"{protocol} ({how})"),
    ]
    _report(args, result, heading, collected, {"file": args.file, "protocol": protocol, "how": how})
    return 3 if args.check and result.status != "completed" else 0


def _report(
    args: argparse.Namespace,
    result: Any,
    heading: list[tuple[str, str]],
    events: list[Any],
    extra: dict[str, Any],
) -> None:
    from .io.serialize import dumps, event_dict, result_dict

    out = sys.stdout
    if args.json:
        doc = dict(extra)
        if not args.no_events:
            doc["events"] = [event_dict(e) for e in events]
        doc["result"] = result_dict(result)
        out.write(dumps(doc, indent=2) + "\n")
    else:
        write_summary(out, result, heading)


# --- recordings ---------------------------------------------------------------------


def _load_recording(text: str, name: str) -> Any:
    from .io.record import Recording

    try:
        return Recording.from_lines(text.splitlines())
    except (ValueError, KeyError, TypeError) as exc:
        raise _Fail(f"{name} is not a valid streamwire recording: {exc}", 1) from None


def _inspect_recording(args: argparse.Namespace, text: str) -> int:
    recording = _load_recording(text, args.file)
    return _run_replay(args, recording, timing="none", speed=1.0, verify_it=False)


def _cmd_replay(args: argparse.Namespace) -> int:
    with _open(args.file) as stream:
        text = stream.read().decode("utf-8", "replace")
    recording = _load_recording(text, args.file)
    return _run_replay(args, recording, timing=args.timing, speed=args.speed, verify_it=True)


def _run_replay(
    args: argparse.Namespace, recording: Any, *, timing: str, speed: float, verify_it: bool
) -> int:
    import streamwire as sw

    from .io.replay import replay, verify

    if recording.protocol not in sw.known_protocols():
        raise _Fail(f"{args.file}: no adapter for the recorded protocol {recording.protocol!r}", 1)
    out = sys.stdout
    events = []
    it = replay(recording, timing=timing, speed=speed)  # type: ignore[arg-type]
    if not args.json and not args.no_events:
        out.write(f"events of {args.file} ({recording.protocol}, recorded):\n")
    for number, event in enumerate(it, start=1):
        if args.json:
            events.append(event)
        elif not args.no_events:
            out.write(event_line(number, event) + "\n")
            if timing == "real":
                out.flush()
    problems = verify(recording) if verify_it else []
    request = recording.request or {}
    heading = [
        ("file", f"{args.file} ({len(recording.chunks)} chunks, {len(recording.body)} bytes)"),
        ("protocol", f"{recording.protocol} (recorded)"),
        ("request", f"{request.get('method', '?')} {request.get('url', '?')}" if request else "-"),
        ("response", f"HTTP {recording.status}, ended by {recording.end}"),
    ]
    if recording.redaction.get("content") == "sha256":
        heading.append(("redacted", "content replaced by sha256 hashes"))
    if verify_it:
        heading.append(("replay", "reproduces the recording" if not problems else "DIFFERS"))
    extra = {"file": args.file, "protocol": recording.protocol, "differences": problems}
    _report(args, it.result, heading, events, extra)
    for problem in problems:
        print(f"streamwire: replay differs: {problem}", file=sys.stderr)
    if problems:
        return 1
    return 3 if getattr(args, "check", False) and it.result.status != "completed" else 0


# --- the parser ---------------------------------------------------------------------


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="streamwire", description="Inspect captured LLM provider streams."
    )
    sub = parser.add_subparsers(dest="command", required=True)

    inspect = sub.add_parser(
        "inspect",
        help="parse a captured body (or a recording): unified events and a summary",
        description="Parse a captured response body, a recording or a fixture manifest: "
        "print the unified events and how the stream ended.",
    )
    inspect.add_argument("file", help="body capture, recording or manifest; - for standard input")
    inspect.add_argument("--protocol", help="the wire protocol (default: detected from content)")
    inspect.add_argument(
        "--option",
        action="append",
        type=_option,
        metavar="KEY=VALUE",
        help="an adapter option (JSON value), e.g. --option strict_done=true; repeatable",
    )
    inspect.add_argument("--json", action="store_true", help="one JSON object on standard output")
    inspect.add_argument("--no-events", action="store_true", help="only the summary")
    inspect.add_argument("--check", action="store_true", help="exit 3 unless status is completed")
    inspect.add_argument("--progress", action="store_true", help="always show progress on stderr")
    inspect.add_argument(
        "--chunk-size", type=int, default=CHUNK_SIZE, help="bytes per read (default 65536)"
    )
    inspect.set_defaults(run=_cmd_inspect)

    replay = sub.add_parser(
        "replay",
        help="replay a recording and check that it reproduces",
        description="Replay a streamwire recording with its recorded chunking and check "
        "that the events and the result are reproduced.",
    )
    replay.add_argument("file", help="a streamwire-recording/1 file; - for standard input")
    replay.add_argument(
        "--timing", choices=("none", "real"), default="none", help="real: at the recorded pace"
    )
    replay.add_argument("--speed", type=float, default=1.0, help="with --timing real: N× faster")
    replay.add_argument("--json", action="store_true", help="one JSON object on standard output")
    replay.add_argument("--no-events", action="store_true", help="only the summary")
    replay.set_defaults(run=_cmd_replay)

    sse = sub.add_parser("sse", help="print the Server-Sent Events of a capture as JSON lines")
    sse.add_argument("file", help="capture file, or - for standard input")
    sse.add_argument(
        "--chunk-size", type=int, default=CHUNK_SIZE, help="bytes per read (default 65536)"
    )
    sse.set_defaults(run=_cmd_sse)

    from .kit.cli import add_parsers  # the acceptance kit's verbs: mock-upstream, check

    add_parsers(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Runs the command line; returns the exit status."""
    args = _parser().parse_args(argv)
    if getattr(args, "option", None) is not None:
        args.option = dict(args.option)
    try:
        status: int = args.run(args)
    except BrokenPipeError:
        return 0
    except _Fail as exc:
        print(f"streamwire: {exc}", file=sys.stderr)
        return exc.status
    except OSError as exc:
        print(f"streamwire: cannot read {args.file}: {exc.strerror or exc}", file=sys.stderr)
        return 2
    except (ValueError, KeyError) as exc:
        print(f"streamwire: {args.file}: {exc}", file=sys.stderr)
        return 1
    return status


if __name__ == "__main__":
    sys.exit(main())
