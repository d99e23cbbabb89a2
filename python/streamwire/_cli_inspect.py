"""``streamwire inspect``: read a captured response and say what it was.

The input is told from its first bytes (``_capture.kind_of``): a
``streamwire-recording/1`` file (shown by replaying it, see
``_cli_replay.py``), a fixture manifest (its raw file and options), a HAR
file (each entry whose response is a stream, or ``--entry N``), a ``curl -i``
capture (its status, headers and body), or a raw body (``-`` for standard
input; a gzip body is recognized by its magic bytes, other codings are given
with ``--encoding``).

A capture with a status line goes through the same HTTP driver as a live
response (``streamwire.io._driver``): the status, the content type and the
request id reach the result, and an error answer (429, 500, ...) becomes an
``error`` result with the provider's type and message. A raw body that is a
provider's error object becomes that ``error`` result too, with the status
unknown. When a protocol given with ``--protocol`` finds only unknown events
and no terminal signal, a hint names the protocol the input looks like.

Views: the unified events one per line (the default), ``--layers`` (each
wire event beside the provider event it carried and the unified events it
became, ``_cli_views.py``), ``--timeline`` (recordings: arrival times, gaps
and bursts), ``--json`` (one object for machines), ``--no-events`` (the
summary alone). The input is read in bounded chunks unless a view needs it
whole (``--json``, ``--layers``, a HAR file).
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from ._capture import (
    Exchange,
    MissingDecoder,
    decoded_body,
    har_exchanges,
    kind_of,
    parse_http_head,
    protocol_from_url,
)
from ._cli_base import (
    CHUNK_SIZE,
    CliError,
    Command,
    Progress,
    add_view_arguments,
    open_input,
    read_chunks,
    size_of,
)
from ._clifmt import event_line, report

__all__ = ["INSPECT", "choose_protocol", "inspect_exchange", "inspect_recording"]

#: Inputs at least this large show progress on a terminal.
PROGRESS_MIN_BYTES = 1024 * 1024


def _option(text: str) -> tuple[str, Any]:
    key, sep, value = text.partition("=")
    if not sep or not key:
        raise argparse.ArgumentTypeError(f"expected KEY=VALUE, got {text!r}")
    try:
        return key, json.loads(value)
    except json.JSONDecodeError:
        return key, value


def _arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "file", help="curl -i capture, HAR file, body, recording or manifest; - for standard input"
    )
    parser.add_argument("--protocol", help="the wire protocol (default: detected from content)")
    parser.add_argument(
        "--option",
        action="append",
        type=_option,
        metavar="KEY=VALUE",
        help="an adapter option (JSON value), e.g. --option strict_done=true; repeatable",
    )
    add_view_arguments(parser)
    parser.add_argument(
        "--layers",
        action="store_true",
        help="each wire event, the provider event it carried and the unified events it became",
    )
    parser.add_argument("--entry", type=int, metavar="N", help="HAR files: entry N (from 1)")
    parser.add_argument(
        "--encoding",
        choices=("gzip", "deflate", "br", "identity"),
        help="a raw body's Content-Encoding (gzip is recognized without it)",
    )
    parser.add_argument("--check", action="store_true", help="exit 3 unless status is completed")
    parser.add_argument("--progress", action="store_true", help="always show progress on stderr")
    parser.add_argument(
        "--chunk-size", type=int, default=CHUNK_SIZE, help="bytes per read (default 65536)"
    )


def _run(args: argparse.Namespace) -> int:
    from .io.detect import SNIFF_BYTES

    args.option = dict(args.option or [])
    with open_input(args.file) as stream:
        head = stream.read(SNIFF_BYTES)
        kind = kind_of(head)
        if kind == "recording":
            return inspect_recording(args, (head + stream.read()).decode("utf-8", "replace"))
        if kind == "manifest":
            return _inspect_manifest(args, head + stream.read())
        if kind == "har":
            return _inspect_har(args, head + stream.read())
        rest = read_chunks(stream, args.chunk_size)
        if kind == "http":
            try:
                status, headers, offset, notes = parse_http_head(head)
            except ValueError as exc:
                raise CliError(f"{args.file}: not a curl -i capture: {exc}", 1) from None
            exchange = Exchange(
                "curl -i capture", status, headers, _chain(head[offset:], rest), notes=notes
            )
        else:
            exchange = Exchange("body", None, (), _chain(head, rest))
        return inspect_exchange(args, exchange, {}, size=size_of(args.file))


def inspect_recording(args: argparse.Namespace, text: str) -> int:
    """``inspect`` of a recording: replayed at full speed, or shown in layers."""
    from ._cli_replay import load_recording, run_replay

    recording = load_recording(text, args.file)
    if args.layers:
        exchange = Exchange(
            "recording",
            recording.status,
            tuple(recording.headers),
            [c.data for c in recording.chunks],
            encoded=False,
            request=recording.request,
        )
        return inspect_exchange(args, exchange, dict(recording.options), size=None)
    return run_replay(args, recording, timing="none", speed=1.0, verify_it=False)


def _chain(first: bytes, rest: Iterator[bytes]) -> Iterator[bytes]:
    if first:
        yield first
    yield from rest


def _inspect_manifest(args: argparse.Namespace, data: bytes) -> int:
    manifest = json.loads(data)
    raw_path = Path(args.file).parent / manifest["raw"]
    if args.protocol is None:
        args.protocol = manifest.get("protocol")
    options = dict(manifest.get("options") or {})
    with open_input(str(raw_path)) as stream:
        exchange = Exchange("body", None, (), read_chunks(stream, args.chunk_size))
        return inspect_exchange(
            args,
            exchange,
            options,
            size=size_of(str(raw_path)),
            source=f"{args.file} -> {raw_path.name}",
        )


def _inspect_har(args: argparse.Namespace, data: bytes) -> int:
    try:
        exchanges, listing = har_exchanges(data, args.entry)
    except ValueError as exc:
        raise CliError(f"{args.file}: {exc}", 1) from None
    if not exchanges:
        raise CliError(
            f"{args.file}: no entry's response is a stream; pick one with --entry N:\n"
            + "\n".join(listing),
            1,
        )
    worst = 0
    docs: list[dict[str, Any]] = []
    for exchange in exchanges:
        if not args.json:
            sys.stdout.write(f"── {exchange.label} " + "─" * 40 + "\n")
        status = inspect_exchange(args, exchange, {}, size=None, collect=docs)
        worst = max(worst, status)
    if args.json:
        from .io.serialize import dumps

        sys.stdout.write(dumps({"file": args.file, "entries": docs}, indent=2) + "\n")
    return worst


# --- protocols --------------------------------------------------------------------


def _error_body_protocol(headers: Any, first: bytes) -> tuple[str, str] | None:
    """The protocol whose error object ``first`` is, from its shape, and how told.

    The protocol hardly matters for an error answer (every adapter reads it
    the same way, ``_wire.http_error``); it names the provider.
    """
    from .io._wire import header

    shape = "from the shape of the error body"
    if header(headers, "x-amzn-errortype") is not None:
        return "bedrock-converse", f"{shape}: AWS's, which bedrock-invoke shares"
    try:
        value = json.loads(first.decode("utf-8", "replace"))
    except ValueError:
        return None
    if isinstance(value, list) and value:
        value = value[0]
    if not isinstance(value, dict):
        return None
    error = value.get("error")
    if value.get("type") == "error":
        return "anthropic", shape
    if isinstance(error, dict) and "status" in error:
        return "gemini", f"{shape}: Gemini's, which gemini-json shares"
    if isinstance(error, dict):
        return "openai-chat", f"{shape}: OpenAI's, which openai-responses shares"
    return None


def choose_protocol(
    given: str | None, first: bytes, exchange: Exchange, name: str
) -> tuple[str, str]:
    """The protocol to read with, and how it was chosen; CliError if none."""
    import streamwire as sw

    from .io._wire import http_protocols
    from .io.detect import detect, detect_payload

    known = http_protocols()
    if given is not None:
        if given in sw.known_protocols() and given not in known:
            raise CliError(
                f"{given} is a WebSocket protocol; inspect reads HTTP bodies ({', '.join(known)})",
                1,
            )
        if given not in known:
            raise CliError(f"unknown protocol {given!r}; known: {', '.join(known)}", 1)
        return given, "given"
    protocol, reason = detect(first)
    if protocol is not None and protocol in known:
        return protocol, f"detected: {reason}"
    if protocol is not None:
        raise CliError(f"{name} looks like {protocol} ({reason}), which has no adapter here", 1)
    url = (exchange.request or {}).get("url")
    from_url = protocol_from_url(url) if url else None
    if from_url is not None:
        return from_url, "from the request URL"
    failed = exchange.status is not None and not 200 <= exchange.status < 300
    if failed or first.lstrip()[:1] == b"{":
        from_error = _error_body_protocol(exchange.headers, first)
        if from_error is not None:
            return from_error
    if exchange.status is not None and first.lstrip()[:1] == b"{":
        # A response that is one JSON object of a protocol: streaming was off.
        # The driver reads it as the error it is (unexpected content type).
        shaped = detect_payload(first.decode("utf-8", "replace"))
        if shaped is not None and shaped[0] in known:
            return shaped[0], f"from the body: one JSON object, {shaped[1]}"
    raise CliError(
        f"cannot tell the protocol of {name}: {reason}; "
        f"pass --protocol (one of {', '.join(known)})",
        1,
    )


# --- one exchange -------------------------------------------------------------------


def _sniff(body: Iterator[bytes], size: int) -> tuple[bytes, Iterator[bytes]]:
    """The first ``size`` bytes (or all, if fewer) and the rest."""
    pieces: list[bytes] = []
    held = 0
    for piece in body:
        pieces.append(piece)
        held += len(piece)
        if held >= size:
            break
    return b"".join(pieces), body


def _reads_as_error_object(protocol: str, options: dict[str, Any], body: bytes) -> bool:
    """A raw body that is a provider's error object, which the protocol's
    adapter does not read as an error by itself (SSE adapters mostly see no
    event in it and end ``incomplete``): the driver reads it instead."""
    from .io._wire import MAX_ERROR_BODY, framing_of, http_error
    from .protocols import new_stream

    if len(body) > MAX_ERROR_BODY or framing_of(protocol) == "json":  # gemini-json reads it
        return False
    if body.lstrip()[:1] != b"{" or http_error(0, (), body).phase != "provider":
        return False
    adapter = new_stream(protocol, options, where="--option")
    adapter.feed(body)
    adapter.close()
    return bool(adapter.result.status != "error")


def _no_clock() -> float:
    """The clock of a capture: it has no arrival times (see ``_untimed``)."""
    return 0.0


def _untimed(result: Any) -> Any:
    """A result read from a capture without arrival times: no timings claimed."""
    metrics = dataclasses.replace(
        result.metrics,
        time_to_headers=None,
        time_to_first_event=None,
        time_to_first_content=None,
        largest_gap=None,
        mean_gap=None,
        duration=None,
        burst=False,
    )
    return dataclasses.replace(result, metrics=metrics)


def _hint(protocol: str, how: str, first: bytes, result: Any) -> str | None:
    """Why a result may come from the wrong protocol, when it seems to."""
    from .io.detect import detect

    if how != "given":
        return None
    m = result.metrics
    framing = result.error is not None and result.error.phase == "framing"
    lost = result.status == "incomplete" and (m.unknown_events or not m.wire_events)
    if not (framing or lost):
        return None
    guess, reason = detect(first)
    what = f"{m.unknown_events} unknown events, no terminal signal" if lost else "a framing error"
    if guess is not None and guess != protocol:
        return f"{what}: the input looks like {guess} ({reason}); try --protocol {guess}"
    if first.lstrip()[:1] == b"{":
        return f"{what}: the input is one JSON object, not a stream (was streaming off?)"
    return None


class _Reader:
    """What a capture is fed to: an adapter alone (a body), or the HTTP
    driver around one (a response with its status and headers)."""

    def __init__(self, *, adapter: Any = None, driver: Any = None) -> None:
        self._adapter = adapter
        self._driver = driver

    def start(self, exchange: Exchange) -> bool:
        """Gives the driver the status and headers; False when the body is an
        error answer, to be read whole."""
        driver = self._driver
        if driver is None:
            return True
        if exchange.status is None:
            return False  # a raw body that is a provider's error object
        return bool(driver.on_headers(exchange.status, exchange.headers) == "stream")

    def error_body(self, body: bytes) -> list[Any]:
        events: list[Any] = self._driver.on_error_body(body)
        return events

    @property
    def adapter(self) -> Any:
        return self._adapter if self._driver is None else self._driver.stream

    def feed(self, chunk: bytes) -> list[Any]:
        events: list[Any] = (self._driver or self._adapter).feed(chunk)
        return events

    def close(self) -> list[Any]:
        events: list[Any] = (
            self._adapter.close() if self._driver is None else self._driver.finish("eof")
        )
        return events

    @property
    def result(self) -> Any:
        return (self._driver or self._adapter).result


def inspect_exchange(
    args: argparse.Namespace,
    exchange: Exchange,
    options: dict[str, Any],
    *,
    size: int | None,
    source: str | None = None,
    collect: list[dict[str, Any]] | None = None,
) -> int:
    """Reads one captured response; prints or collects its report; the exit status."""
    import streamwire as sw

    from .io._driver import Driver
    from .io._wire import MAX_ERROR_BODY, header, request_id
    from .io.detect import SNIFF_BYTES
    from .protocols import new_stream

    name = source or args.file
    notes = exchange.notes
    if exchange.status is not None:
        encoding = header(exchange.headers, "content-encoding")
    else:  # a body alone says nothing of its coding
        encoding = getattr(args, "encoding", None)
    body: Iterator[bytes] = iter(exchange.body)
    if exchange.encoded:
        if encoding is None:
            first_raw, body = _sniff(body, 2)
            body = _chain(first_raw, body)
            encoding = "gzip" if first_raw.startswith(b"\x1f\x8b") else None
        try:
            body = decoded_body(body, encoding, notes)
            first, body = _sniff(body, SNIFF_BYTES)
        except (MissingDecoder, ValueError) as exc:
            raise CliError(f"{name}: {exc}", 2) from None
    else:
        first, body = _sniff(body, SNIFF_BYTES)
    protocol, how = choose_protocol(args.protocol, first, exchange, name)
    options = {**options, **args.option}
    small = len(first) < SNIFF_BYTES  # the sniff took all of it
    try:
        if exchange.status is not None or (
            small and _reads_as_error_object(protocol, options, first)
        ):
            reader = _Reader(driver=Driver(protocol, options, clock=_no_clock))
        else:
            reader = _Reader(adapter=new_stream(protocol, options, where="--option"))
    except TypeError as exc:
        raise CliError(f"bad --option for {protocol}: {exc}", 2) from None

    events_out: list[sw.Event] = []
    progress = _progress(args, size)
    layers: list[Any] | None = None
    number = 0
    quiet = args.json or args.no_events or args.layers

    def show(events: list[sw.Event]) -> None:
        nonlocal number
        for event in events:
            number += 1
            if args.json:
                events_out.append(event)
            elif not quiet:
                sys.stdout.write(event_line(number, event) + "\n")

    if not quiet:
        sys.stdout.write(f"events of {name} ({protocol}):\n")
    if not reader.start(exchange):
        error_body = first + b"".join(body)
        progress.advance(len(error_body))
        show(reader.error_body(error_body[:MAX_ERROR_BODY]))
        layers = [] if args.layers else None  # an error answer has no wire events
    elif args.layers:
        from ._layers import walk

        whole = first + b"".join(body)
        progress.advance(len(whole))
        layers = walk(reader.adapter, protocol, whole, reader.close)
        for row in layers:
            show(list(row.unified))
    else:
        for chunk in _chain(first, body):
            progress.advance(len(chunk))
            show(reader.feed(chunk))
        show(reader.close())
    result = reader.result
    progress.finish()
    result = _untimed(result)
    hint = _hint(protocol, how, first, result)
    heading = [("file", f"{name} ({progress.done} bytes)"), ("protocol", f"{protocol} ({how})")]
    http: dict[str, Any] | None = None
    if exchange.status is not None:
        http = {
            "status": exchange.status,
            "content_type": header(exchange.headers, "content-type"),
            "request_id": request_id(exchange.headers),
            "headers": [list(h) for h in exchange.headers],
        }
        rid = f", request {http['request_id']}" if http["request_id"] else ""
        kind = http["content_type"] or "no Content-Type"
        heading.append(("response", f"HTTP {exchange.status}, {kind}{rid}"))
    if exchange.request:
        heading.append(("request", f"{exchange.request['method']} {exchange.request['url']}"))
    heading += [("note", note) for note in notes]
    if hint is not None:
        heading.append(("hint", hint))
    extra: dict[str, Any] = {"file": args.file, "source": exchange.label, "protocol": protocol}
    extra.update(how=how, notes=notes, hint=hint)
    extra["http"] = http
    if layers is not None:
        from ._cli_views import layer_dicts, write_layers

        if args.json:
            extra["layers"] = layer_dicts(layers)
        else:
            write_layers(sys.stdout, layers)
    report(args, result, heading, events_out, extra, collect=collect)
    if args.timeline and not args.json:
        sys.stdout.write(_no_timeline(exchange) + "\n")
    return 3 if args.check and result.status != "completed" else 0


def _no_timeline(exchange: Exchange) -> str:
    if exchange.timings:
        kept = ", ".join(f"{k} {v * 1000:.1f} ms" for k, v in exchange.timings.items())
        return (
            f"timeline     the {exchange.label} keeps only {kept}, no arrival time per chunk; "
            "record the stream with `streamwire record` to see one"
        )
    return (
        f"timeline     a {exchange.label} keeps no arrival times; "
        "record the stream with `streamwire record` to see one"
    )


def _progress(args: argparse.Namespace, size: int | None) -> Progress:
    big = (size or 0) >= PROGRESS_MIN_BYTES
    return Progress(size, args.progress or (sys.stderr.isatty() and big), sys.stderr)


INSPECT = Command(
    name="inspect",
    help="parse a capture (curl -i, HAR, body, recording): unified events and a summary",
    description="Parse a captured response (curl -i output, a HAR file, a raw body, a "
    "recording or a fixture manifest): print the unified events and how the stream ended.",
    arguments=_arguments,
    run=_run,
)
