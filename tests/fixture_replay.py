"""Replaying manifest-described fixtures and checking their assertions.

A fixture is raw wire bytes plus a JSON manifest beside it (format
``streamwire-fixture/1``, described in ``fixtures/README.md``). This module
finds the manifests, replays a fixture through its protocol's adapter under a
given chunking, and checks the manifest's ``expect`` block against the
unified events and the ``StreamResult``. Every ``expect`` key must be known
here: an assertion nobody checks is worse than none.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import streamwire as sw
from chunking import feed_all

FORMAT = "streamwire-fixture/1"
FIXTURES_DIR = Path(__file__).resolve().parent.parent / "fixtures"


class Fixture:
    """One manifest and its raw bytes."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.manifest: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
        self.raw_path = path.parent / self.manifest["raw"]
        self.raw = self.raw_path.read_bytes()

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

    def replay_messages(self, form: str) -> tuple[sw.Stream, list[sw.Event], list[int | None]]:
        """Feeds each line as one message, as ``str``, UTF-8 ``bytes`` or a parsed
        ``dict`` (``form``), then ends as the manifest says. Returns the stream, the
        events, and for each event the response it belongs to (``last_turns``)."""
        stream = sw.stream(self.protocol, **self.manifest.get("options", {}))
        events: list[sw.Event] = []
        owners: list[int | None] = []

        def take(batch: list[sw.Event]) -> None:
            events.extend(batch)
            owners.extend(getattr(stream, "last_turns", (None,) * len(batch)))

        for line in self.message_lines():
            message: Any = line
            if form == "bytes":
                message = line.encode("utf-8")
            elif form == "dict":
                message = json.loads(line)
            take(stream.feed_message(message))
        cancel = self.manifest.get("replay", {}).get("end") == "cancel"
        take(stream.cancel() if cancel else stream.close())
        assert len(owners) == len(events)
        return stream, events, owners

    def replay(self, chunks: list[bytes]) -> tuple[sw.Stream, list[sw.Event]]:
        """Feeds the chunks to a new adapter and ends it as the manifest says."""
        if self.messages:  # chunks of a WebSocket fixture: its lines are the messages
            stream, events, _ = self.replay_messages("str")
            return stream, events
        stream = sw.stream(self.protocol, **self.manifest.get("options", {}))
        events = feed_all(stream.feed, chunks)
        if self.manifest.get("replay", {}).get("end") == "cancel":
            events += stream.cancel()
        else:
            events += stream.close()
        return stream, events


def manifests() -> Iterator[Fixture]:
    """Every fixture manifest under ``fixtures/``, sorted by path."""
    for path in sorted(FIXTURES_DIR.rglob("*.json")):
        try:
            head = json.loads(path.read_text(encoding="utf-8"))
        except (UnicodeDecodeError, json.JSONDecodeError):
            continue
        if isinstance(head, dict) and head.get("format") == FORMAT:
            yield Fixture(path)


def check_integrity(fixture: Fixture) -> None:
    """The raw file is the one the manifest describes."""
    digest = hashlib.sha256(fixture.raw).hexdigest()
    assert digest == fixture.manifest["sha256"], f"{fixture.raw_path.name}: sha256 mismatch"
    assert len(fixture.raw) == fixture.manifest["size"]


def subset(expected: Any, actual: Any, where: str) -> None:
    """``expected`` is contained in ``actual``: dicts by their keys, lists item by item."""
    if isinstance(expected, dict):
        assert isinstance(actual, dict), f"{where}: expected an object, got {actual!r:.200}"
        for key, value in expected.items():
            assert key in actual, f"{where}: missing {key!r} in {actual!r:.300}"
            subset(value, actual[key], f"{where}.{key}")
    elif isinstance(expected, list):
        assert isinstance(actual, list | tuple), f"{where}: expected a list, got {actual!r:.200}"
        assert len(expected) == len(actual), (
            f"{where}: expected {len(expected)} items, got {len(actual)}: {actual!r:.600}"
        )
        for i, (e, a) in enumerate(zip(expected, actual, strict=True)):
            subset(e, a, f"{where}[{i}]")
    else:
        assert expected == actual, f"{where}: expected {expected!r:.300}, got {actual!r:.300}"


def _call(call: sw.ToolCall) -> dict[str, Any]:
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


def _choice(choice: sw.ChoiceResult) -> dict[str, Any]:
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


def _usage(usage: sw.Usage | None) -> dict[str, Any] | None:
    return None if usage is None else usage.as_dict()


def _error(error: sw.StreamError | None) -> dict[str, Any] | None:
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
        assert actual is None, f"{where}: expected no {key}, got {actual!r:.300}"
    else:
        assert actual is not None, f"{where}: expected a {key}, got none"
        subset(expected, actual, f"{where}.{key}")


def check_expect(
    fixture: Fixture,
    result: sw.StreamResult,
    events: list[sw.Event],
    label: str,
    stream: sw.Stream | None = None,
) -> None:
    """Checks every assertion of the manifest's ``expect`` block (``results`` and
    ``session`` need the ``stream``: a WebSocket session)."""
    where = f"{fixture.name} [{label}]"
    dicts = [e.as_dict() for e in events]
    calls = [_call(c) for choice in result.choices for c in choice.tool_calls]
    for key, value in fixture.expect.items():
        at = f"{where} {key}"
        if key in ("status", "stop_reason", "provider_stop_reason", "executable", "text"):
            assert getattr(result, key) == value, f"{at}: {getattr(result, key)!r:.300}"
        elif key in ("framing_ok", "deltas_ok", "tool_args_complete"):
            assert getattr(result, key) == value, f"{at}: {getattr(result, key)!r}"
        elif key == "text_sha256":
            assert hashlib.sha256(result.text.encode()).hexdigest() == value, at
        elif key == "text_length":
            assert len(result.text) == value, at
        elif key == "choices":
            by_index = {c.index: _choice(c) for c in result.choices}
            for choice in value:
                assert choice["index"] in by_index, f"{at}: no choice {choice['index']}"
                subset(choice, by_index[choice["index"]], f"{at}[{choice['index']}]")
        elif key == "tool_calls":
            subset(value, calls, at)
        elif key == "tool_call_count":
            assert len(calls) == value, f"{at}: {len(calls)}"
        elif key == "call_ids_unique":
            ids = [c["id"] for c in calls]
            assert (len(set(ids)) == len(ids)) == value, f"{at}: {ids}"
        elif key == "arguments_valid_json":
            assert all(c["arguments"] is not None for c in calls) == value, at
        elif key == "usage":
            _nullable(key, value, _usage(result.usage), where)
        elif key == "error":
            _nullable(key, value, _error(result.error), where)
        elif key == "warnings":
            codes = sorted({w.code for w in result.warnings})
            assert codes == sorted(value), f"{at}: {result.warnings}"
        elif key == "conflicts":
            assert list(result.conflicts) == value, f"{at}: {result.conflicts}"
        elif key == "conflicts_count":
            assert len(result.conflicts) == value, f"{at}: {result.conflicts}"
        elif key == "unknown_events":
            assert dict(result.unknown_events) == value, f"{at}: {dict(result.unknown_events)}"
        elif key == "unknown_fields":
            assert dict(result.unknown_fields) == value, f"{at}: {dict(result.unknown_fields)}"
        elif key == "unknown_events_tolerated":
            # Unknown input never breaks known state: nothing unknown became a conflict.
            assert not value or not any("unknown" in c for c in result.conflicts), at
        elif key == "wire_events":
            assert result.metrics.wire_events == value, f"{at}: {result.metrics.wire_events}"
        elif key == "max_peak_buffered_bytes":
            assert result.metrics.peak_buffered_bytes <= value, f"{at}: {result.metrics}"
        elif key == "events":
            subset(value, dicts, at)
        elif key == "events_tail":
            subset(value, dicts[-len(value) :], at)
        elif key == "events_of_type":
            for name, count in value.items():
                seen = sum(1 for d in dicts if d["event"] == name)
                assert seen == count, f"{at}: {seen} {name}"
        elif key == "provider_content":
            subset(value, list(result.provider_content), at)
        elif key == "results":
            subset(value, [_result(r) for r in getattr(stream, "results", ())], at)
        elif key == "session":
            subset(value, _session(stream), at)
        else:
            raise AssertionError(f"{where}: unknown expect key {key!r}")


def _result(result: sw.StreamResult) -> dict[str, Any]:
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
        "tool_calls": [_call(c) for choice in result.choices for c in choice.tool_calls],
        "usage": _usage(result.usage),
        "error": _error(result.error),
        "warnings": sorted({w.code for w in result.warnings}),
        "conflicts_count": len(result.conflicts),
        "unknown_events": dict(result.unknown_events),
        "provider_metrics": dict(result.provider_metrics),
    }


def _session(stream: Any) -> dict[str, Any]:
    """A session's own facts, for the ``session`` key."""
    return {
        "response_count": stream.response_count,
        "errors": [_error(e) for e in stream.errors],
        "warnings": sorted({w.code for w in stream.warnings}),
        "conflicts_count": len(stream.conflicts),
        "unknown_events": dict(stream.unknown_events),
    }


MESSAGE_FORMS = ("str", "bytes", "dict")


def _comparable(event: sw.Event) -> dict[str, Any]:
    """An event as a dict, an unknown event's raw text parsed (a dict message has none)."""
    out = event.as_dict()
    if isinstance(event, sw.UnknownEvent):
        try:
            out["raw"] = json.loads(event.raw)
        except json.JSONDecodeError:
            pass
    return out


def check_message_replays(fixture: Fixture) -> None:
    """A WebSocket fixture, each line fed as ``str``, ``bytes`` and ``dict``: every
    assertion holds and the events are the same in every form."""
    reference: list[dict[str, Any]] | None = None
    for form in MESSAGE_FORMS:
        stream, events, _ = fixture.replay_messages(form)
        result = stream.result
        assert result.final
        assert all(r.final for r in getattr(stream, "results", ()))
        check_expect(fixture, result, events, form, stream)
        comparable = [_comparable(e) for e in events]
        if reference is None:
            reference = comparable
        else:
            assert comparable == reference, f"{fixture.name} [{form}]: events differ from 'str'"


def check_message_results(fixture: Fixture) -> None:
    """Each response's result, rebuilt from its own events alone, states the same facts."""
    stream, events, owners = fixture.replay_messages("str")
    results = getattr(stream, "results", ())
    numbers = sorted({n for n in owners if n is not None})
    assert len(numbers) == len(results), f"{fixture.name}: {numbers} vs {len(results)} results"
    for number in numbers:
        own = [e for e, n in zip(events, owners, strict=True) if n == number]
        result = stream.result_of(number)  # type: ignore[attr-defined]
        replayed = sw.result_from_events(own, protocol=fixture.protocol)
        assert facts(replayed) == facts(result), f"{fixture.name}: response {number}"
        assert replayed.metrics.events == result.metrics.events == len(own)
    if not numbers:  # no response: the session's own result
        replayed = sw.result_from_events(events, protocol=fixture.protocol)
        assert facts(replayed) == facts(stream.result)


def facts(result: sw.StreamResult) -> dict[str, Any]:
    """What a result states, for comparing an adapter's result with a replay of its events."""
    return {
        "status": result.status,
        "choices": [_choice(c) for c in result.choices],
        "tool_calls": [_call(c) for choice in result.choices for c in choice.tool_calls],
        "usage": _usage(result.usage),
        "error": _error(result.error),
        "message_id": result.message_id,
        "model": result.model,
        "unknown_events": dict(result.unknown_events),
        "signatures": [c.reasoning_signatures for c in result.choices],
    }
