"""Every manifest-described fixture, replayed under every chunking.

Generic over protocols: a fixture whose protocol has a registered adapter is
replayed; one whose adapter does not exist yet is skipped (so a later adapter
only adds fixtures). For each fixture:

* the raw bytes are the ones the manifest's sha256 names;
* under every chunking of ``chunking.py`` (whole, one byte at a time, every
  split point of small inputs, seeded random splits, empty chunks
  interleaved) the manifest's assertions hold, and the unified events are
  identical to those of the whole input;
* the result rebuilt from the unified events alone (``sw.result_from_events``)
  states the same facts as the adapter's result: the events lose nothing;
* every result that is not executable says why (the result, each choice,
  each call; every response of a WebSocket session), a result without calls
  too.
"""

from __future__ import annotations

import pytest

import streamwire as sw
from chunking import chunkings
from fixture_replay import (
    Fixture,
    check_expect,
    check_integrity,
    check_message_replays,
    check_message_results,
    facts,
    manifests,
)

FIXTURES = list(manifests())


def _param(fixture: Fixture) -> object:
    marks = []
    if fixture.protocol not in sw.known_protocols():
        marks.append(pytest.mark.skip(reason=f"no {fixture.protocol} adapter yet"))
    return pytest.param(fixture, id=fixture.name, marks=marks)


PARAMS = [_param(f) for f in FIXTURES]


def test_fixtures_were_found() -> None:
    assert len(FIXTURES) >= 17 + 12


@pytest.mark.parametrize("fixture", PARAMS)
def test_fixture_integrity(fixture: Fixture) -> None:
    check_integrity(fixture)


@pytest.mark.parametrize("fixture", PARAMS)
def test_fixture_under_every_chunking(fixture: Fixture) -> None:
    if fixture.messages:  # WebSocket: one line is one message, fed as str, bytes and dict
        check_message_replays(fixture)
        return
    data = fixture.fed_bytes()
    reference: list[sw.Event] | None = None
    for label, chunks in chunkings(data):
        stream, events = fixture.replay(chunks)
        result = stream.result
        assert result.final
        check_expect(fixture, result, events, label)
        if reference is None:
            reference = events
        else:
            assert events == reference, f"{fixture.name} [{label}]: events differ from 'whole'"


@pytest.mark.parametrize("fixture", PARAMS)
def test_fixture_events_carry_the_result(fixture: Fixture) -> None:
    if fixture.messages:  # a session: each response's own events carry its result
        check_message_results(fixture)
        return
    stream, events = fixture.replay([fixture.fed_bytes()])
    replayed = sw.result_from_events(events, protocol=fixture.protocol)
    assert facts(replayed) == facts(stream.result)
    assert replayed.metrics.events == stream.result.metrics.events == len(events)


def unexplained(result: sw.StreamResult, where: str) -> list[str]:
    """Where ``result`` is not executable without saying why (empty: nowhere)."""
    out = []
    if result.executable == (result.not_executable_reason is not None):
        out.append(f"{where}: executable {result.executable}, {result.not_executable_reason!r}")
    for choice in result.choices:
        if choice.executable == (choice.not_executable_reason is not None):
            out.append(f"{where} choice {choice.index}: {choice.not_executable_reason!r}")
    for call in result.tool_calls:
        if call.executable == (call.not_executable_reason is not None):
            out.append(f"{where} call {call.index}: {call.not_executable_reason!r}")
    return out


@pytest.mark.parametrize("fixture", PARAMS)
def test_a_result_that_is_not_executable_says_why(fixture: Fixture) -> None:
    if fixture.messages:
        stream, _, _ = fixture.replay_messages("str")
    else:
        stream, _ = fixture.replay([fixture.fed_bytes()])
    results = [("result", stream.result)]
    results += [(f"response {n}", r) for n, r in enumerate(getattr(stream, "results", ()))]
    assert [why for where, r in results for why in unexplained(r, where)] == []
