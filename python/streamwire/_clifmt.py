"""How ``streamwire inspect`` and ``streamwire replay`` show events and results to a person.

One line per unified event (numbered, the event's name, its few telling
fields, long text cut with an ellipsis) and a summary block: how the stream
ended, the text, every tool call with its executable verdict, usage, the
counters, the timings when the input was timed (a recording), warnings and
the error. Plain text, no colour: the output is often piped or logged.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Iterable, Mapping
from typing import Any, TextIO

from .events import (
    ErrorReceived,
    Event,
    MessageCompleted,
    MessageStarted,
    ReasoningDelta,
    RefusalDelta,
    TextDelta,
    ToolCallArgumentsDelta,
    ToolCallCompleted,
    ToolCallStarted,
    UnknownEvent,
    UsageReported,
)
from .result import StreamResult, Usage

__all__ = ["describe", "event_line", "hashed_rows", "report", "summary_lines", "write_summary"]

_WIDTH = 64
_NAME = 22


def _cut(text: str, width: int = _WIDTH) -> str:
    shown = repr(text)
    if len(shown) <= width:
        return shown
    return shown[: width - 1] + "…"


def _usage(usage: Usage) -> str:
    parts = [
        f"{label} {value}"
        for label, value in (
            ("input", usage.input_tokens),
            ("output", usage.output_tokens),
            ("total", usage.total_tokens),
            ("cache read", usage.cache_read_tokens),
            ("cache write", usage.cache_creation_tokens),
            ("reasoning", usage.reasoning_tokens),
        )
        if value is not None
    ]
    return " · ".join(parts or ["(no figures)"]) + (" (final)" if usage.final else " (not final)")


def describe(event: Event) -> str:
    """The telling fields of one event, on one line."""
    if isinstance(event, TextDelta | RefusalDelta):
        return _cut(event.text)
    if isinstance(event, ReasoningDelta):
        if event.signature is not None:
            return f"signature ({len(event.signature)} chars)"
        if event.redacted is not None:
            return f"redacted ({len(event.redacted)} chars)"
        return ("summary " if event.kind == "summary" else "") + _cut(event.text)
    if isinstance(event, MessageStarted):
        fields = [("id", event.message_id), ("model", event.model), ("role", event.role)]
        return " ".join(f"{k}={v}" for k, v in fields if v is not None)
    if isinstance(event, ToolCallStarted):
        who = "" if event.executor == "client" else f" [{event.executor}]"
        return f"#{event.index} {event.id or '(no id)'} {event.name or '(no name)'}{who}"
    if isinstance(event, ToolCallArgumentsDelta):
        return f"#{event.index} {_cut(event.delta, _WIDTH - 4)}"
    if isinstance(event, ToolCallCompleted):
        verdict = "valid" if event.invalid_reason is None else f"invalid: {event.invalid_reason}"
        return f"#{event.index} {event.id or '(no id)'} {event.name or '(no name)'} {verdict}"
    if isinstance(event, UsageReported):
        return _usage(event.usage)
    if isinstance(event, MessageCompleted):
        stop = f" {event.stop_reason}" if event.stop_reason else ""
        raw = f" (provider: {event.provider_stop_reason})" if event.provider_stop_reason else ""
        return f"{event.status}{stop}{raw}"
    if isinstance(event, ErrorReceived):
        code = f" [{event.code}]" if event.code is not None else ""
        return f"{event.phase} {event.type}{code}: {_cut(event.message or '', _WIDTH)}"
    if isinstance(event, UnknownEvent):
        return f"{event.provider_type} {_cut(event.raw, _WIDTH - 20)}"
    return repr(event)


def event_line(number: int, event: Event) -> str:
    """One numbered line for one event."""
    choice = getattr(event, "choice", 0)
    suffix = f"  (choice {choice})" if choice else ""
    return f"{number:6d}  {type(event).__name__:<{_NAME}} {describe(event)}{suffix}"


def _seconds(value: float | None) -> str:
    return "-" if value is None else f"{value * 1000:.1f} ms"


def summary_lines(result: StreamResult, heading: Iterable[tuple[str, str]] = ()) -> list[str]:
    """The summary block, after ``heading`` rows (label, value)."""
    rows: list[tuple[str, str]] = list(heading)
    stop: str = result.stop_reason or "-"
    if result.provider_stop_reason:
        stop += f" (provider: {result.provider_stop_reason})"
    rows += [("status", result.status), ("stop reason", stop)]
    rows.append(
        (
            "text",
            f"{len(result.text)} chars" + (f"  {_cut(result.text, 48)}" if result.text else ""),
        )
    )
    if result.reasoning:
        rows.append(("reasoning", f"{len(result.reasoning)} chars"))
    if result.refusal:
        rows.append(("refusal", _cut(result.refusal, 56)))
    calls = [c for choice in result.choices for c in choice.tool_calls]
    if calls:
        verdict = (
            "executable" if result.executable else f"not executable: {result.not_executable_reason}"
        )
        rows.append(("tool calls", f"{len(calls)}, {verdict}"))
    else:
        rows.append(("tool calls", "none"))
    lines = [f"{label:<13}{value}" for label, value in rows]
    for call in calls:
        state = (
            call.state if call.invalid_reason is None else f"{call.state}: {call.invalid_reason}"
        )
        who = "" if call.executor == "client" else f" [{call.executor}]"
        args = _cut(call.raw_arguments, 40) if call.raw_arguments else "{}"
        where = f" (choice {call.choice})" if call.choice else ""
        lines.append(
            f"  #{call.index} {call.id or '(no id)'} {call.name or '(no name)'}{who} {args} "
            f"{state}, {'executable' if call.executable else 'not executable'}{where}"
        )
    if len(result.choices) > 1:
        for choice in result.choices:
            lines.append(
                f"  choice {choice.index}: {choice.status}, {choice.stop_reason or '-'}, "
                f"{len(choice.text)} chars"
            )
    m = result.metrics
    rows = [
        ("usage", "none reported" if result.usage is None else _usage(result.usage)),
        (
            "events",
            f"{m.events} unified from {m.wire_events} wire events; "
            f"{m.unknown_events} unknown; {m.framing_errors} framing errors",
        ),
        (
            "bytes",
            f"{m.bytes_received} (text {m.text_bytes}, arguments {m.argument_bytes}; "
            f"peak buffer {m.peak_buffered_bytes})",
        ),
    ]
    if m.time_to_first_event is not None or m.duration is not None:
        rows.append(
            (
                "timing",
                f"headers {_seconds(m.time_to_headers)} · first event "
                f"{_seconds(m.time_to_first_event)} · first content "
                f"{_seconds(m.time_to_first_content)} · duration {_seconds(m.duration)}",
            )
        )
        rows.append(
            (
                "gaps",
                f"largest {_seconds(m.largest_gap)} · mean {_seconds(m.mean_gap)} · "
                f"burst {'yes (buffered in between?)' if m.burst else 'no'}",
            )
        )
    if result.http_ok is not None:
        rows.append(("http", "ok" if result.http_ok else "not ok"))
    flags = [
        name
        for name, ok in (
            ("framing", result.framing_ok),
            ("deltas", result.deltas_ok),
            ("tool arguments", result.tool_args_complete),
        )
        if not ok
    ]
    if flags:
        rows.append(("broken", ", ".join(flags)))
    if result.unknown_events:
        rows.append(("unknown", ", ".join(f"{k} ×{v}" for k, v in result.unknown_events.items())))
    for conflict in result.conflicts[:5]:
        rows.append(("conflict", conflict))
    for warning in result.warnings[:10]:
        rows.append(("warning", f"{warning.code}: {warning.message}"))
    error = result.error
    if error is not None:
        code = f" [{error.code}]" if error.code is not None else ""
        retry = "retryable" if error.retryable else "not retryable"
        rid = f", request {error.request_id}" if error.request_id else ""
        rows.append(("error", f"{error.phase} {error.type}{code}: {error.message} ({retry}{rid})"))
    lines += [f"{label:<13}{value}" for label, value in rows]
    return lines


def hashed_rows(original: Mapping[str, Any] | None) -> list[tuple[str, str]]:
    """Heading rows for a recording saved with its content hashed.

    ``original`` is the recording's record of the unredacted result
    (``streamwire.io._redact``): what the stream was before hashing.
    """
    rows = [
        (
            "content",
            "HASHED before saving: text, reasoning, refusals and tool arguments are sha256 "
            "hashes; ids, names, stop reasons, usage and errors are as received",
        ),
        (
            "",
            "the events and tool calls below are the hashed stream's: hashed argument "
            "fragments are not JSON, so its calls read as rejected",
        ),
    ]
    if not isinstance(original, Mapping):
        rows.append(("original", "not kept in this recording"))
        return rows
    stop = original.get("stop_reason") or "-"
    executable = original.get("executable")
    verdict = "" if executable is None else (", executable" if executable else ", not executable")
    rows.append(
        (
            "original",
            f"before hashing: status {original.get('status')}, stop reason {stop}, "
            f"{original.get('text_length', 0)} chars of text{verdict}",
        )
    )
    calls = original.get("tool_calls")
    for call in calls if isinstance(calls, list) else []:
        if not isinstance(call, Mapping):
            continue
        verdict = "executable" if call.get("executable") else "not executable"
        rows.append(
            (
                "",
                f"  call {call.get('id') or '(no id)'} {call.get('name') or '(no name)'}: "
                f"{call.get('state')}, {verdict}",
            )
        )
    return rows


def write_summary(out: TextIO, result: StreamResult, heading: Iterable[tuple[str, str]]) -> None:
    """Writes the summary block with a rule above it."""
    out.write("── summary " + "─" * 50 + "\n")
    for line in summary_lines(result, heading):
        out.write(line + "\n")


def report(
    args: argparse.Namespace,
    result: Any,
    heading: list[tuple[str, str]],
    events: list[Any],
    extra: dict[str, Any],
    *,
    collect: list[dict[str, Any]] | None = None,
) -> None:
    """The summary block, or (``--json``) one JSON object, of one result."""
    from .io.serialize import dumps, event_dict, result_dict

    if not args.json:
        write_summary(sys.stdout, result, heading)
        return
    doc = dict(extra)
    if not args.no_events:
        doc["events"] = [event_dict(e) for e in events]
    doc["result"] = result_dict(result)
    if collect is not None:
        collect.append(doc)
    else:
        sys.stdout.write(dumps(doc, indent=2) + "\n")
