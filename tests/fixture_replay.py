"""Replaying manifest-described fixtures and checking their assertions, as the suite asserts them.

A fixture is raw wire bytes plus a JSON manifest beside it (format
``streamwire-fixture/1``, described in ``fixtures/README.md``). The package
keeps the replay and the ``expect`` vocabulary (``streamwire.kit.fixtures``:
a team's own recordings are checked by the same code); this module finds
the repository's manifests and turns each problem into an assertion.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import streamwire as sw
from streamwire.kit import fixtures as _fixtures
from streamwire.kit.fixtures import FORMAT, Fixture, expect_problems

__all__ = ["FORMAT", "Fixture", "check_expect", "facts", "manifests"]

FIXTURES_DIR = Path(__file__).resolve().parent.parent / "fixtures"
_call = _fixtures.call_dict
_choice = _fixtures.choice_dict
_usage = _fixtures.usage_dict
_error = _fixtures.error_dict
_result = _fixtures.result_dict
_session = _fixtures.session_dict
_comparable = _fixtures.comparable


def manifests() -> Iterator[Fixture]:
    """Every fixture manifest under ``fixtures/``, sorted by path."""
    return _fixtures.manifests(FIXTURES_DIR)


def check_integrity(fixture: Fixture) -> None:
    """The raw file is the one the manifest describes."""
    digest = hashlib.sha256(fixture.raw).hexdigest()
    assert digest == fixture.manifest["sha256"], f"{fixture.raw_path.name}: sha256 mismatch"
    assert len(fixture.raw) == fixture.manifest["size"]


def check_expect(
    fixture: Fixture,
    result: sw.StreamResult,
    events: list[sw.Event],
    label: str,
    stream: sw.Stream | None = None,
) -> None:
    """Checks every assertion of the manifest's ``expect`` block (``results`` and
    ``session`` need the ``stream``: a WebSocket session)."""
    problems = expect_problems(fixture.expect, result, events, stream)
    assert not problems, f"{fixture.name} [{label}]: " + "; ".join(problems)


MESSAGE_FORMS = ("str", "bytes", "dict")


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
