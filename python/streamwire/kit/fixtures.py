"""Recorded fixtures replayed through streamwire: an upgrade that changes a fact fails CI.

A fixture is raw wire bytes with a JSON manifest beside it (format
``streamwire-fixture/1``, fixtures/README.md): what live mode
(``streamwire check --upstream``) and ``streamwire record`` write. Its
``expect`` block holds the facts a correct reading derives: the result's
status, stop reason, text, calls, usage, error, and the unified events (by
count of each type, ``events_of_type``, or in full). ``check_fixture``
replays the bytes through the fixture's protocol adapter whole, a byte at a
time (bodies up to ``BYTE_AT_A_TIME`` bytes), at every split point (up to
``EVERY_SPLIT`` bytes) and at seeded random splits, checks every ``expect``
key against each replay, and the unified events of every chunking against
the whole one's; a WebSocket fixture (``.jsonl``, one message a line) is fed
message by message. Each mismatch is a problem in words (nothing raises for
a fixture's content); an ``expect`` key nobody checks is a problem too.

The project's own suite replays its ``fixtures/`` with this (tests/
fixture_replay.py); a team's runs its own directory of recordings with the
pytest plugin (``pytest --sw-fixtures DIR``) or ``check_directory``.
"""

from __future__ import annotations

import hashlib
import json
import random
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

from ..events import Event, UnknownEvent
from ..protocols import Stream
from ..result import ChoiceResult, StreamError, StreamResult, ToolCall, Usage
from .vocab.names import adapter

__all__ = [
    "BYTE_AT_A_TIME",
    "EVERY_SPLIT",
    "FORMAT",
    "Fixture",
    "check_directory",
    "check_fixture",
    "chunkings",
    "expect_problems",
    "manifests",
]

FORMAT = "streamwire-fixture/1"
#: Bodies up to this size are also replayed one byte at a time ...
BYTE_AT_A_TIME = 256 * 1024
#: ... and these at every split point (two chunks).
EVERY_SPLIT = 2048
#: The seeds of the random splits (reproducible).
SEEDS = (1, 2, 3)


class FixtureError(ValueError):
    """A manifest that cannot be replayed: a field it needs missing or of the
    wrong type, or its raw bytes unreadable. The message names the file."""


class Fixture:
    """One manifest and its raw bytes (``FixtureError`` when either is unusable)."""

    def __init__(self, path: Path) -> None:
        self.path = path
        try:
            manifest = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
            raise FixtureError(f"{path}: not a readable JSON manifest ({exc})") from exc
        if not isinstance(manifest, dict):
            raise FixtureError(f"{path}: the manifest is not a JSON object")
        for key, kind in (("raw", str), ("protocol", str), ("case", str), ("expect", dict)):
            if not isinstance(manifest.get(key), kind):
                raise FixtureError(f"{path}: the manifest has no {kind.__name__} {key!r}")
        self.manifest: dict[str, Any] = manifest
        self.raw_path: Path = path.parent / manifest["raw"]
        try:
            self.raw: bytes = self.raw_path.read_bytes()
        except OSError as exc:
            raise FixtureError(f"{path}: its raw bytes {self.raw_path.name}: {exc}") from exc

    @property
    def name(self) -> str:
        return f"{self.manifest['protocol']}/{self.manifest['case']}"

    @property
    def protocol(self) -> str:
        return str(self.manifest["protocol"])

    @property
    def expect(self) -> dict[str, Any]:
        return dict(self.manifest["expect"])

    def fed_bytes(self) -> bytes:
        """The bytes a replay feeds: all of them, or the prefix before a cancel."""
        replay = self.manifest.get("replay", {})
        if replay.get("end") == "cancel":
            return self.raw[: replay["at_byte"]]
        return self.raw

    @property
    def messages(self) -> bool:
        """A WebSocket fixture: the raw file holds one message per line (``.jsonl``)."""
        return self.raw_path.suffix == ".jsonl"

    def message_lines(self) -> list[str]:
        """The messages a replay feeds: every non-blank line, or those before a cancel."""
        lines = [line for line in self.raw.decode("utf-8").split("\n") if line.strip()]
        replay = self.manifest.get("replay", {})
        if replay.get("end") == "cancel":
            return lines[: replay["at_message"]]
        return lines

    def reader(self) -> Stream:
        options: dict[str, Any] = self.manifest.get("options", {})
        return adapter(self.protocol, **options)

    def replay_messages(self, form: str) -> tuple[Stream, list[Event], list[int | None]]:
        """Feeds each line as one message, as ``str``, UTF-8 ``bytes`` or a parsed
        ``dict`` (``form``), then ends as the manifest says. Returns the stream, the
        events, and for each event the response it belongs to (``last_turns``)."""
        session: Any = self.reader()
        events: list[Event] = []
        owners: list[int | None] = []

        def take(batch: list[Event]) -> None:
            events.extend(batch)
            owners.extend(getattr(session, "last_turns", (None,) * len(batch)))

        for line in self.message_lines():
            message: Any = line
            if form == "bytes":
                message = line.encode("utf-8")
            elif form == "dict":
                message = json.loads(line)
            take(session.feed_message(message))
        cancel = self.manifest.get("replay", {}).get("end") == "cancel"
        take(session.cancel() if cancel else session.close())
        return session, events, owners

    def replay(self, chunks: Sequence[bytes]) -> tuple[Stream, list[Event]]:
        """Feeds the chunks to a new adapter and ends it as the manifest says."""
        if self.messages:  # chunks of a WebSocket fixture: its lines are the messages
            session, events, _ = self.replay_messages("str")
            return session, events
        reader = self.reader()
        events = []
        for chunk in chunks:
            events.extend(reader.feed(chunk))
        if self.manifest.get("replay", {}).get("end") == "cancel":
            events += reader.cancel()
        else:
            events += reader.close()
        return reader, events


def manifest_paths(directory: Path) -> Iterator[Path]:
    """Every fixture manifest's path under ``directory`` (a JSON object of the
    fixture format), sorted."""
    for path in sorted(directory.rglob("*.json")):
        try:
            head = json.loads(path.read_text(encoding="utf-8"))
        except (UnicodeDecodeError, json.JSONDecodeError, OSError):
            continue
        if isinstance(head, dict) and head.get("format") == FORMAT:
            yield path


def manifests(directory: Path) -> Iterator[Fixture]:
    """Every fixture manifest under ``directory``, sorted by path
    (``FixtureError`` at the first that cannot be replayed)."""
    for path in manifest_paths(directory):
        yield Fixture(path)


def chunkings(data: bytes) -> Iterator[tuple[str, list[bytes]]]:
    """(label, chunks) of every chunking a replay uses."""
    yield "whole", [data]
    if len(data) <= BYTE_AT_A_TIME:
        yield "byte-at-a-time", [data[i : i + 1] for i in range(len(data))]
    if len(data) <= EVERY_SPLIT:
        for at in range(1, len(data)):
            yield f"split@{at}", [data[:at], data[at:]]
    for seed in SEEDS:
        rng = random.Random(seed)
        chunks, at = [], 0
        while at < len(data):
            size = rng.randint(1, 64)
            chunks.append(data[at : at + size])
            at += size
        yield f"random(seed={seed})", chunks


# --- the expect vocabulary ----------------------------------------------------------


class _Mismatch(Exception):
    pass


def subset(expected: Any, actual: Any, where: str) -> None:
    """``expected`` is contained in ``actual`` (dicts by their keys, lists item by
    item), else ``_Mismatch`` says where."""
    if isinstance(expected, dict):
        if not isinstance(actual, dict):
            raise _Mismatch(f"{where}: expected an object, got {actual!r:.200}")
        for key, value in expected.items():
            if key not in actual:
                raise _Mismatch(f"{where}: missing {key!r} in {actual!r:.300}")
            subset(value, actual[key], f"{where}.{key}")
    elif isinstance(expected, list):
        if not isinstance(actual, list | tuple):
            raise _Mismatch(f"{where}: expected a list, got {actual!r:.200}")
        if len(expected) != len(actual):
            raise _Mismatch(
                f"{where}: expected {len(expected)} items, got {len(actual)}: {actual!r:.600}"
            )
        for i, (e, a) in enumerate(zip(expected, actual, strict=True)):
            subset(e, a, f"{where}[{i}]")
    elif expected != actual:
        raise _Mismatch(f"{where}: expected {expected!r:.300}, got {actual!r:.300}")


def _equal(got: Any, want: Any, where: str) -> None:
    if got != want:
        raise _Mismatch(f"{where}: expected {want!r:.300}, got {got!r:.300}")


def call_dict(call: ToolCall) -> dict[str, Any]:
    return {
        "choice": call.choice,
        "index": call.index,
        "id": call.id,
        "name": call.name,
        "type": call.type,
        "raw_arguments": call.raw_arguments,
        "arguments": call.arguments,
        "state": call.state,
        "executable": call.executable,
        "id_source": call.id_source,
    }


def choice_dict(choice: ChoiceResult) -> dict[str, Any]:
    return {
        "index": choice.index,
        "status": choice.status,
        "text": choice.text,
        "reasoning": choice.reasoning,
        "refusal": choice.refusal,
        "stop_reason": choice.stop_reason,
        "provider_stop_reason": choice.provider_stop_reason,
        "executable": choice.executable,
    }


def usage_dict(usage: Usage | None) -> dict[str, Any] | None:
    return None if usage is None else usage.as_dict()


def error_dict(error: StreamError | None) -> dict[str, Any] | None:
    if error is None:
        return None
    return {
        "phase": error.phase,
        "type": error.type,
        "code": error.code,
        "message": error.message,
        "retryable": error.retryable,
    }


def _nullable(key: str, expected: Any, actual: Any, where: str) -> None:
    if expected is None:
        if actual is not None:
            raise _Mismatch(f"{where}: expected no {key}, got {actual!r:.300}")
    elif actual is None:
        raise _Mismatch(f"{where}: expected a {key}, got none")
    else:
        subset(expected, actual, f"{where}.{key}")


def result_dict(result: StreamResult) -> dict[str, Any]:
    """One response of a session, for the ``results`` key."""
    return {
        "status": result.status,
        "final": result.final,
        "text": result.text,
        "stop_reason": result.stop_reason,
        "provider_stop_reason": result.provider_stop_reason,
        "executable": result.executable,
        "message_id": result.message_id,
        "model": result.model,
        "tool_calls": [call_dict(c) for choice in result.choices for c in choice.tool_calls],
        "usage": usage_dict(result.usage),
        "error": error_dict(result.error),
        "warnings": sorted({w.code for w in result.warnings}),
        "conflicts_count": len(result.conflicts),
        "unknown_events": dict(result.unknown_events),
        "provider_metrics": dict(result.provider_metrics),
    }


def session_dict(adapter: Any) -> dict[str, Any]:
    return {
        "response_count": adapter.response_count,
        "errors": [error_dict(e) for e in adapter.errors],
        "warnings": sorted({w.code for w in adapter.warnings}),
        "conflicts_count": len(adapter.conflicts),
        "unknown_events": dict(adapter.unknown_events),
    }


def _one(key: str, value: Any, result: StreamResult, events: Sequence[Event], session: Any) -> None:
    at = key
    dicts = [e.as_dict() for e in events]
    calls = [call_dict(c) for choice in result.choices for c in choice.tool_calls]
    if key in ("status", "stop_reason", "provider_stop_reason", "executable", "text"):
        _equal(getattr(result, key), value, at)
    elif key in ("framing_ok", "deltas_ok", "tool_args_complete"):
        _equal(getattr(result, key), value, at)
    elif key == "text_sha256":
        _equal(hashlib.sha256(result.text.encode()).hexdigest(), value, at)
    elif key == "text_length":
        _equal(len(result.text), value, at)
    elif key == "choices":
        by_index = {c.index: choice_dict(c) for c in result.choices}
        for choice in value:
            if choice["index"] not in by_index:
                raise _Mismatch(f"{at}: no choice {choice['index']}")
            subset(choice, by_index[choice["index"]], f"{at}[{choice['index']}]")
    elif key == "tool_calls":
        subset(value, calls, at)
    elif key == "tool_call_count":
        _equal(len(calls), value, at)
    elif key == "call_ids_unique":
        ids = [c["id"] for c in calls]
        _equal(len(set(ids)) == len(ids), value, f"{at} {ids}")
    elif key == "arguments_valid_json":
        _equal(all(c["arguments"] is not None for c in calls), value, at)
    elif key == "usage":
        _nullable(key, value, usage_dict(result.usage), "")
    elif key == "error":
        _nullable(key, value, error_dict(result.error), "")
    elif key == "warnings":
        _equal(sorted({w.code for w in result.warnings}), sorted(value), at)
    elif key == "conflicts":
        _equal(list(result.conflicts), value, at)
    elif key == "conflicts_count":
        _equal(len(result.conflicts), value, at)
    elif key == "unknown_events":
        _equal(dict(result.unknown_events), value, at)
    elif key == "unknown_fields":
        _equal(dict(result.unknown_fields), value, at)
    elif key == "unknown_events_tolerated":
        # Unknown input never breaks known state: nothing unknown became a conflict.
        if value and any("unknown" in c for c in result.conflicts):
            raise _Mismatch(f"{at}: {result.conflicts}")
    elif key == "wire_events":
        _equal(result.metrics.wire_events, value, at)
    elif key == "max_peak_buffered_bytes":
        if result.metrics.peak_buffered_bytes > value:
            raise _Mismatch(f"{at}: {result.metrics.peak_buffered_bytes} > {value}")
    elif key == "events":
        subset(value, dicts, at)
    elif key == "events_tail":
        subset(value, dicts[-len(value) :], at)
    elif key == "events_of_type":
        for name, count in value.items():
            _equal(sum(1 for d in dicts if d["event"] == name), count, f"{at} {name}")
    elif key == "provider_content":
        subset(value, list(result.provider_content), at)
    elif key == "results":
        subset(value, [result_dict(r) for r in getattr(session, "results", ())], at)
    elif key == "session":
        subset(value, session_dict(session), at)
    else:
        raise _Mismatch(f"unknown expect key {key!r}")


def expect_problems(
    expect: dict[str, Any],
    result: StreamResult,
    events: Sequence[Event],
    session: Stream | None = None,
) -> list[str]:
    """Each ``expect`` key that the replay's result and events do not meet, in
    words (``results`` and ``session`` need the ``session``: a WebSocket one)."""
    problems = []
    for key, value in expect.items():
        try:
            _one(key, value, result, events, session)
        except _Mismatch as exc:
            problems.append(str(exc))
        except (TypeError, KeyError, AttributeError, ValueError) as exc:
            problems.append(f"{key}: the manifest's value cannot be checked ({exc})")
    return problems


def comparable(event: Event) -> dict[str, Any]:
    """An event as a dict, an unknown event's raw text parsed (a dict message has none)."""
    out = event.as_dict()
    if isinstance(event, UnknownEvent):
        try:
            out["raw"] = json.loads(event.raw)
        except (json.JSONDecodeError, TypeError):
            pass
    return out


def _replays(fixture: Fixture) -> Iterator[tuple[str, Stream, list[Event]]]:
    if fixture.messages:
        for form in ("str", "bytes", "dict"):
            session, events, _ = fixture.replay_messages(form)
            yield form, session, events
        return
    for label, chunks in chunkings(fixture.fed_bytes()):
        reader, events = fixture.replay(chunks)
        yield label, reader, events


def check_fixture(fixture: Fixture) -> list[str]:
    """Every problem of one fixture's replays: its bytes against the manifest's
    sha256, each ``expect`` key under each chunking (each message form of a
    WebSocket fixture), and the events of every chunking against the whole one's."""
    digest = hashlib.sha256(fixture.raw).hexdigest()
    if digest != fixture.manifest.get("sha256"):
        return [f"{fixture.raw_path.name}: sha256 {digest} is not the manifest's"]
    problems: list[str] = []
    reference: list[dict[str, Any]] | None = None
    for label, reader, events in _replays(fixture):
        result = reader.result
        found = expect_problems(fixture.expect, result, events, reader)
        problems += [f"[{label}] {p}" for p in found]
        seen = [comparable(e) for e in events]
        if reference is None:
            reference = seen
        elif seen != reference:
            problems.append(f"[{label}] the unified events differ from the whole replay's")
        if len(problems) > 20:
            break
    return problems


def check_directory(directory: Path) -> dict[str, list[str]]:
    """fixture name -> its problems, for every fixture under ``directory``
    (a manifest that cannot be replayed is named by its path, its problem why)."""
    out: dict[str, list[str]] = {}
    for path in manifest_paths(directory):
        try:
            fixture = Fixture(path)
        except FixtureError as exc:
            out[str(path)] = [str(exc)]
            continue
        out[fixture.name] = check_fixture(fixture)
    return out
