"""``streamwire record URL``: a small ``curl -N`` for LLM streams that keeps what it saw.

Sends one request (``POST`` with a body from ``--data FILE``, ``-`` for
standard input; ``GET`` without one), prints each unified event the moment
it arrives, then the summary, and saves two things under ``--out PATH``:

* ``PATH.recording.jsonl``: the recording (``streamwire.io.record``): every
  chunk as it arrived, its arrival time, the events it produced, how reading
  ended and the result, for ``streamwire replay``;
* ``PATH.<ext>`` and ``PATH.json``: the body's bytes and a fixture manifest
  (``streamwire-fixture/1``, see fixtures/README.md) whose ``expect`` holds
  the facts this version of streamwire read, to be checked against the
  provider's documentation before the fixture is relied on.

Headers come from the environment, never from the command line, so that
keys stay out of shell history and process listings: ``STREAMWIRE_HEADERS``
holds ``Name: value`` lines, and ``--key-env VAR`` names a variable whose
value is sent as the protocol's credential header (``Authorization: Bearer``
for OpenAI, ``x-api-key`` for Anthropic, with ``anthropic-version``
unless given, ``x-goog-api-key`` for Gemini). Bedrock's SigV4 signatures
are not made here.

What is saved is redacted by ``streamwire.io``'s own recorder: credential
and cookie headers of the response are dropped, key-like URL parameters
removed, and request headers never recorded. ``--hash-content`` also
replaces the content (text, reasoning, tool arguments, the request's
prompts) with sha256 hashes (``streamwire.io._redact``). The HTTP client is
httpx (``pip install 'streamwire[httpx]'``).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

from ._capture import protocol_from_url
from ._cli_base import CliError, Command, open_input
from ._clifmt import event_line
from ._json import dumps

if TYPE_CHECKING:
    from .kinds import HttpProtocolName

__all__ = ["RECORD", "credential_headers", "env_headers", "fixture_manifest"]

HEADERS_ENV = "STREAMWIRE_HEADERS"
ANTHROPIC_VERSION = "2023-06-01"
#: The fixture's ``provider``, by the first word of the protocol.
_PROVIDERS = {"openai": "openai", "anthropic": "anthropic", "gemini": "google", "bedrock": "aws"}
#: The ``usage`` keys a manifest's ``expect`` checks (fixtures/README.md).
_USAGE_KEYS = (
    "input_tokens",
    "output_tokens",
    "total_tokens",
    "cache_read_tokens",
    "cache_creation_tokens",
    "reasoning_tokens",
    "final",
)
#: The raw file's extension, by framing.
_EXTENSIONS = {"sse": "sse", "eventstream": "eventstream", "json": "json-array"}


def env_headers(environ: os._Environ[str] | dict[str, str]) -> dict[str, str]:
    """The headers in ``STREAMWIRE_HEADERS`` (``Name: value`` lines); ValueError if malformed."""
    out: dict[str, str] = {}
    for number, line in enumerate((environ.get(HEADERS_ENV) or "").splitlines(), start=1):
        if not line.strip():
            continue
        name, sep, value = line.partition(":")
        if not sep or not name.strip() or any(c in name for c in " \t"):
            raise ValueError(f"{HEADERS_ENV} line {number} is not 'Name: value'")
        out[name.strip()] = value.strip()
    return out


def credential_headers(protocol: str, key: str) -> dict[str, str]:
    """The header that carries an API key for ``protocol``'s provider."""
    if protocol.startswith("openai"):
        return {"Authorization": f"Bearer {key}"}
    if protocol == "anthropic":
        return {"x-api-key": key, "anthropic-version": ANTHROPIC_VERSION}
    if protocol.startswith("gemini"):
        return {"x-goog-api-key": key}
    raise ValueError(
        f"--key-env has no credential header for {protocol} (Bedrock needs SigV4 signing); "
        f"put the headers in {HEADERS_ENV}"
    )


def _arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("url", help="the streaming endpoint")
    parser.add_argument("--protocol", help="the wire protocol (default: from the URL's path)")
    parser.add_argument(
        "--data", metavar="FILE", help="the request body (JSON), - for standard input; POSTed"
    )
    parser.add_argument(
        "--key-env",
        metavar="VAR",
        help="an environment variable holding the API key (the key itself is never an argument)",
    )
    parser.add_argument(
        "--out",
        default="capture",
        help="where to save: PATH.recording.jsonl, PATH.json, ... (default: capture)",
    )
    parser.add_argument(
        "--hash-content", action="store_true", help="save text and arguments as sha256 hashes"
    )
    parser.add_argument("--case", help="the fixture's case name (default: the --out file name)")
    parser.add_argument(
        "--idle-timeout", type=float, default=60.0, help="seconds without an event (default 60)"
    )
    parser.add_argument("--no-events", action="store_true", help="only the summary")
    parser.add_argument("--timeline", action="store_true", help="the arrival timeline at the end")


def _request_headers(args: argparse.Namespace, protocol: str, has_body: bool) -> dict[str, str]:
    headers = {"Accept": "*/*"}
    if has_body:
        headers["Content-Type"] = "application/json"
    if args.key_env:
        key = os.environ.get(args.key_env)
        if not key:
            raise CliError(f"--key-env {args.key_env}: the variable is not set", 2)
        headers.update(credential_headers(protocol, key))
    headers.update(env_headers(os.environ))  # the environment's own headers win
    return headers


def _run(args: argparse.Namespace) -> int:
    try:
        import httpx
    except ImportError:
        raise CliError("record needs httpx: pip install 'streamwire[httpx]'", 2) from None
    import streamwire as sw

    from .io._wire import http_protocols

    protocol = args.protocol or protocol_from_url(args.url)
    if protocol is None:
        raise CliError(f"cannot tell the protocol from {args.url}; pass --protocol", 2)
    known = http_protocols()
    if protocol not in known:
        raise CliError(f"record reads HTTP streams: {protocol!r} is none of {', '.join(known)}", 2)
    http_protocol = cast("HttpProtocolName", protocol)  # checked just above
    body: bytes | None = None
    if args.data is not None:
        with open_input(args.data) as stream:
            body = stream.read()
    try:
        headers = _request_headers(args, protocol, body is not None)
    except ValueError as exc:
        raise CliError(str(exc), 2) from None
    method = "POST" if body is not None else "GET"
    out = sys.stdout
    number = 0
    try:
        with httpx.Client(timeout=httpx.Timeout(30.0, read=None)) as client:
            started = time.monotonic()
            with client.stream(method, args.url, content=body, headers=headers) as response:
                events = sw.iter_events(
                    response,
                    http_protocol,
                    record=True,
                    started_at=started,
                    idle_timeout=args.idle_timeout,
                )
                with events:
                    for event in events:
                        number += 1
                        if not args.no_events:
                            out.write(event_line(number, event) + "\n")
                            out.flush()
                result = events.result
                recording = events.recording
    except httpx.HTTPError as exc:
        raise CliError(f"{args.url}: {type(exc).__name__}: {exc}", 2) from None
    assert recording is not None
    if body is not None:
        try:
            recording.request_body = json.loads(body)
        except ValueError:
            recording.request_body = {"sha256": hashlib.sha256(body).hexdigest()}
    saved = _save(args, recording, protocol)
    from ._clifmt import write_summary

    heading = [
        ("request", f"{method} {recording.request['url'] if recording.request else args.url}"),
        ("response", f"HTTP {recording.status}, ended by {recording.end}"),
        ("protocol", f"{protocol} ({'given' if args.protocol else 'from the URL'})"),
    ]
    heading += [("saved", path) for path in saved]
    removed = recording.redaction.get("headers_removed") or []
    heading.append(
        (
            "redacted",
            f"headers removed: {', '.join(removed) or 'none present'}; request headers not kept"
            + ("; content hashed" if args.hash_content else "; content kept as received"),
        )
    )
    write_summary(out, result, heading)
    if args.timeline:
        from ._cli_views import write_timeline
        from .io.timeline import Timeline

        write_timeline(out, Timeline.of(recording), burst=bool(result.metrics.burst))
    return 0


def _save(args: argparse.Namespace, recording: Any, protocol: str) -> list[str]:
    from .io._wire import framing_of

    base = Path(args.out)
    base.parent.mkdir(parents=True, exist_ok=True)
    if args.hash_content:
        recording = recording.redacted()
    rec_path = base.with_name(base.name + ".recording.jsonl")
    recording.save(rec_path)
    if recording.end == "http_error":
        return [str(rec_path), "no fixture: an HTTP error answer is not a stream body"]
    raw_path = base.with_name(f"{base.name}.{_EXTENSIONS[framing_of(protocol)]}")
    raw = recording.body
    raw_path.write_bytes(raw)
    manifest = fixture_manifest(recording, args.case or base.name, raw_path.name, raw)
    manifest_path = base.with_name(base.name + ".json")
    manifest_path.write_text(dumps(manifest, indent=2) + "\n")  # lone surrogates escaped
    return [str(rec_path), f"{raw_path} + {manifest_path} (a fixture; check its expect)"]


def fixture_manifest(recording: Any, case: str, raw_name: str, raw: bytes) -> dict[str, Any]:
    """A ``streamwire-fixture/1`` manifest for a recording's body (fixtures/README.md)."""
    from . import __version__
    from .io._wire import request_id
    from .io.record import fixture_head

    result = recording.result or {}
    calls = [c for choice in result.get("choices", []) for c in choice.get("tool_calls", [])]
    events = recording.events
    usage = result.get("usage")
    first_t = next((c.t for c in recording.chunks if c.events), None)
    expect: dict[str, Any] = {
        "status": result.get("status"),
        "stop_reason": result.get("stop_reason"),
        "provider_stop_reason": result.get("provider_stop_reason"),
        "text_length": len(result.get("text") or ""),
        "text_sha256": hashlib.sha256((result.get("text") or "").encode("utf-8")).hexdigest(),
        "tool_call_count": len(calls),
        "executable": result.get("executable"),
        "usage": None if usage is None else {k: usage.get(k) for k in _USAGE_KEYS},
        "error": None
        if result.get("error") is None
        else {k: result["error"].get(k) for k in ("phase", "type", "code")},
    }
    provider = _PROVIDERS.get(recording.protocol.split("-")[0], "unknown")
    return {
        **fixture_head(case, raw_name, raw, provider, recording.protocol),
        "provenance": {
            "recorded_with": f"streamwire record (streamwire {__version__})",
            "url": (recording.request or {}).get("url"),
            "license": "the recorder's to state before publishing",
            "transform": "none: the body as received"
            if recording.redaction.get("content") != "sha256"
            else "content replaced by sha256 hashes (streamwire.io._redact)",
        },
        "recording": {
            "model": next((e.get("model") for e in events if e.get("model")), None),
            "response_id": next((e.get("message_id") for e in events if e.get("message_id")), None),
            "request_id": request_id(tuple(recording.headers)),
            "http_status": recording.status,
            "time": recording.recorded_at,
            "time_to_first_event": first_t,
            "total_time": recording.end_t,
        },
        "exercises": "",
        "options": recording.options,
        "expect": expect,
        "notes": [
            f"expect holds what streamwire {__version__} read from this stream when it was "
            "recorded: check each fact against the provider's documentation before relying on it"
        ],
    }


RECORD = Command(
    name="record",
    help="stream one request's events as they arrive; save a recording and a fixture",
    description="Send one request (headers from the environment: STREAMWIRE_HEADERS, "
    "--key-env VAR), print its unified events as they arrive, and save a redacted recording "
    "for `streamwire replay` and a fixture with its manifest.",
    arguments=_arguments,
    run=_run,
)
