"""``streamwire replay``: a recording fed back with its chunking, and checked.

``streamwire replay [RECORDING]`` replays a ``streamwire-recording/1`` file
(``streamwire.io.replay``) with its recorded chunk boundaries, at full speed
or (``--timing real``) at its recorded pace, prints the events and the
summary, and checks that the replay reproduces the recorded events and
result (exit 1, listing the differences, when it does not). Without a file
it replays the sample bundled with the package (``samples/``), so the
command can be tried at once.

A recording saved with its content hashed (``save(hash_content=True)``,
``streamwire record --hash-content``) is replayed as what it now is: text,
reasoning and tool arguments are sha256 hashes, so the hashed arguments are
not JSON and the calls read as rejected. The summary says so plainly and
shows, from the recording's ``original`` block, how the stream read before
hashing: its status, stop reason, text length and each call's verdict.

``streamwire inspect RECORDING`` uses the same path (``run_replay``) without
the check.
"""

from __future__ import annotations

import argparse
import sys
from importlib import resources
from typing import Any

from ._cli_base import CliError, Command, add_view_arguments, open_input
from ._clifmt import event_line, hashed_rows, report

__all__ = ["REPLAY", "SAMPLE", "load_recording", "run_replay"]

#: The bundled sample, in the package's ``samples`` folder.
SAMPLE = "anthropic-tool-use.jsonl"


def load_recording(text: str, name: str) -> Any:
    """The ``Recording`` in ``text``; CliError if it is not one."""
    from .io.record import Recording

    try:
        return Recording.from_lines(text.splitlines())
    except (ValueError, KeyError, TypeError, AttributeError) as exc:
        raise CliError(f"{name} is not a valid streamwire recording: {exc}", 1) from None


def _arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "file",
        nargs="?",
        help="a streamwire-recording/1 file; - for standard input (default: the bundled sample)",
    )
    parser.add_argument(
        "--timing", choices=("none", "real"), default="none", help="real: at the recorded pace"
    )
    parser.add_argument("--speed", type=float, default=1.0, help="with --timing real: N× faster")
    add_view_arguments(parser)


def _cmd(args: argparse.Namespace) -> int:
    if args.file is None:
        sample = resources.files("streamwire") / "samples" / SAMPLE
        args.file = f"(bundled sample {SAMPLE})"
        text = sample.read_text(encoding="utf-8")
    else:
        with open_input(args.file) as stream:
            text = stream.read().decode("utf-8", "replace")
    recording = load_recording(text, args.file)
    return run_replay(args, recording, timing=args.timing, speed=args.speed, verify_it=True)


def run_replay(
    args: argparse.Namespace, recording: Any, *, timing: str, speed: float, verify_it: bool
) -> int:
    """Replays ``recording``, prints its events and summary (``report``) and,
    with ``verify_it``, checks that it reproduces; the exit status."""
    import streamwire as sw

    from .io.replay import replay, verify

    if recording.protocol not in sw.known_protocols():
        what = f"no adapter for the recorded protocol {recording.protocol!r}"
        raise CliError(f"{args.file}: {what}", 1)
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
    hashed = recording.redaction.get("content") == "sha256"
    if hashed:
        heading += hashed_rows(recording.original)
    if verify_it:
        heading.append(("replay", "reproduces the recording" if not problems else "DIFFERS"))
    extra: dict[str, Any] = {
        "file": args.file,
        "protocol": recording.protocol,
        "differences": problems,
        "content_hashed": hashed,
    }
    if hashed:
        extra["original"] = recording.original
    if args.timeline:
        from ._cli_views import timeline_dict
        from .io.timeline import Timeline

        timeline = Timeline.of(recording)
        if args.json:
            extra["timeline"] = timeline_dict(timeline)
    report(args, it.result, heading, events, extra)
    if args.timeline and not args.json:
        from ._cli_views import write_timeline

        write_timeline(out, timeline, burst=bool(it.result.metrics.burst))
    for problem in problems:
        print(f"streamwire: replay differs: {problem}", file=sys.stderr)
    if problems:
        return 1
    return 3 if getattr(args, "check", False) and it.result.status != "completed" else 0


REPLAY = Command(
    name="replay",
    help="replay a recording (default: a bundled sample) and check that it reproduces",
    description="Replay a streamwire recording with its recorded chunking and check that the "
    "events and the result are reproduced. Without a file, replay the bundled sample.",
    arguments=_arguments,
    run=_cmd,
)
