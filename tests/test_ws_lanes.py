"""The WebSocket adapters' fast lanes do exactly what the general path does.

Each adapter takes its dominant messages on a fast lane (``protocols/_lane.py``:
matched in Rust, their deltas taken by the matcher, the counters deferred).
Every session here is fed twice, lanes on and off (``WebSocketSession.lanes``),
and everything a caller can read must be the same after every message: the
events, which response each belongs to, every result (text, calls, usage,
warnings, metrics, provider metrics), and the session's own facts. Sessions:
every WebSocket fixture, the benchmarks' sessions (shortened), and sessions
built to leave the lane at every turn: unknown fields, sequence gaps, empty
and oversized deltas, other items and responses, audio kept, results read
mid-stream.
"""

from __future__ import annotations

import json
import random
from collections.abc import Iterator
from typing import Any

import pytest

import streamwire as sw
from fixture_replay import _comparable, _result, _session, manifests
from streamwire.protocols._websocket import WebSocketSession

PROTOCOLS = ("openai-responses-ws", "openai-realtime", "gemini-live")


def _state(stream: Any) -> dict[str, Any]:
    results = [_result(r) for r in stream.results]
    metrics = [
        (r.metrics.bytes_received, r.metrics.wire_events, r.metrics.events) for r in stream.results
    ]
    own = stream.result
    return {
        "results": results,
        "metrics": metrics,
        "result": _result(own),
        "result_metrics": (own.metrics.bytes_received, own.metrics.wire_events, own.metrics.events),
        "session": _session(stream),
    }


def _run(protocol: str, messages: list[Any], options: dict[str, Any], lanes: bool, peek: set[int]):
    previous = WebSocketSession.lanes
    WebSocketSession.lanes = lanes
    try:
        stream = sw.stream(protocol, **options)
        trace: list[Any] = []
        for n, message in enumerate(messages):
            events = stream.feed_message(message)
            trace.append(([_comparable(e) for e in events], stream.last_turns))
            if n in peek:
                trace.append(_state(stream))
        trace.append([_comparable(e) for e in stream.close()])
        trace.append(_state(stream))
        if protocol == "openai-realtime" and options.get("audio") == "keep":
            trace.append([stream.audio(i) for i in range(stream.response_count)])
        return trace
    finally:
        WebSocketSession.lanes = previous


def _same(
    protocol: str, messages: list[Any], options: dict[str, Any] | None = None, peek: Any = ()
) -> None:
    options = options or {}
    peek = set(peek)
    fast = _run(protocol, messages, options, True, peek)
    general = _run(protocol, messages, options, False, peek)
    for n, (a, b) in enumerate(zip(fast, general, strict=True)):
        assert a == b, f"{protocol}: step {n} differs"


@pytest.mark.parametrize(
    "fixture",
    [f for f in manifests() if f.messages and f.protocol in PROTOCOLS],
    ids=lambda f: f.name,
)
def test_every_websocket_fixture_reads_the_same(fixture: Any) -> None:
    lines = fixture.message_lines()
    _same(fixture.protocol, lines, fixture.manifest.get("options", {}))
    _same(fixture.protocol, [line.encode() for line in lines], fixture.manifest.get("options", {}))


def _bench(protocol: str) -> list[str]:
    import sys
    from pathlib import Path

    sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "benches"))
    from bench_pipeline_websocket import load

    messages, _ = load(protocol)
    # The lifecycle around a shortened run of deltas.
    head = 4 if protocol == "openai-realtime" else 3 if protocol == "openai-responses-ws" else 1
    tail = 1 if protocol != "openai-responses-ws" else 4
    return messages[:head] + messages[head : head + 300] + messages[-tail:]


def _shaped(name: str) -> tuple[str, list[Any]]:
    """A session of ``bench_pipeline_shapes.py`` (a Realtime voice session, a
    Gemini Live session of binary frames with a tool-call turn), shortened:
    its first 300 messages, every message but the deltas, a fortieth of the rest."""
    import sys
    from pathlib import Path

    sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "benches"))
    from bench_pipeline_shapes import load

    data = load(name)
    deltas = (
        b'"delta"',
        b'{"serverContent":{"modelTurn"',
        b'{"serverContent":{"outputTranscription"',
    )
    kept = [
        m
        for i, m in enumerate(data.units)
        if i < 300
        or i % 40 == 0
        or not any(d in (m if isinstance(m, bytes) else m.encode()) for d in deltas)
    ]
    return data.protocol, kept


@pytest.mark.parametrize(
    "name", ["openai-realtime-voice", "gemini-live-tools", "gemini-live-audio"]
)
def test_the_shaped_benchmark_sessions_read_the_same(name: str) -> None:
    protocol, messages = _shaped(name)
    _same(protocol, messages, peek=range(0, len(messages), 53))
    _same(protocol, [m.decode() if isinstance(m, bytes) else m for m in messages])
    _same(protocol, messages, {"audio": "keep"})


def _live_audio_mutations(messages: list[bytes], seed: int) -> Iterator[list[Any]]:
    """The native-audio Live session with one kind of disturbance spread over
    its audio and transcript messages: what the lane must hand on, or take as
    the general path would."""
    rng = random.Random(seed)

    def each(change: Any) -> list[Any]:
        out: list[Any] = []
        for m in messages:
            obj = json.loads(m)
            content = obj.get("serverContent", {})
            if ("modelTurn" in content or "outputTranscription" in content) and rng.random() < 0.2:
                change(content)
                out.append(json.dumps(obj, ensure_ascii=False).encode())
            else:
                out.append(m)
        return out

    def audio(change: Any) -> Any:
        def apply(content: dict[str, Any]) -> None:
            parts = content.get("modelTurn", {}).get("parts", [])
            if parts and "inlineData" in parts[0]:
                change(parts[0]["inlineData"])

        return apply

    def said(change: Any) -> Any:
        def apply(content: dict[str, Any]) -> None:
            if "outputTranscription" in content:
                change(content["outputTranscription"])

        return apply

    def as_text(content: dict[str, Any]) -> None:
        if "outputTranscription" in content:
            text = content.pop("outputTranscription")["text"]
            content["modelTurn"] = {"parts": [{"text": text}]}

    yield each(audio(lambda d: d.update(mimeType="audio/wav")))
    yield each(audio(lambda d: d.update(mimeType="image/png")))
    yield each(audio(lambda d: d.update(mimeType="audio/pcm;rate=16000")))
    yield each(audio(lambda d: d.update(data="")))
    yield each(audio(lambda d: d.update(data="not base64 at all!")))
    yield each(audio(lambda d: d.update(data=7)))
    yield each(audio(lambda d: d.update(extra=True)))
    yield each(said(lambda t: t.update(text="")))
    yield each(said(lambda t: t.update(text='数据🙂 "q" \\ \n')))
    yield each(said(lambda t: t.update(finished=True)))
    yield each(lambda c: c.update(role="model") if "modelTurn" in c else None)
    yield each(lambda c: c["modelTurn"].update(role="model") if "modelTurn" in c else None)
    yield each(as_text)  # text parts between transcripts: one text, in order
    yield each(lambda c: c.update(generationComplete=True))


@pytest.mark.parametrize("seed", range(2))
def test_disturbed_live_audio_sessions_read_the_same(seed: int) -> None:
    protocol, messages = _shaped("gemini-live-audio")
    messages = messages[:150] + messages[-6:]
    for n, disturbed in enumerate(_live_audio_mutations(messages, seed)):
        _same(protocol, disturbed, {"audio": "keep"} if n % 3 == 2 else {}, peek=(5, 50))


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_the_benchmark_sessions_read_the_same(protocol: str) -> None:
    messages = _bench(protocol)
    _same(protocol, messages, peek=range(0, len(messages), 37))
    if protocol == "openai-realtime":
        _same(protocol, messages, {"audio": "keep"})
    _same(protocol, messages, {"max_message_bytes": 200})


def _mutations(messages: list[str], seed: int) -> Iterator[list[Any]]:
    """The session with one kind of disturbance spread over its deltas."""
    rng = random.Random(seed)

    def each(change: Any) -> list[Any]:
        out: list[Any] = []
        for m in messages:
            out.append(change(m) if rng.random() < 0.2 else m)
        return out

    def field(m: str) -> str:
        obj = json.loads(m)
        obj["x_unknown"] = 1
        return json.dumps(obj)

    def delta(value: str) -> Any:
        def change(m: str) -> str:
            obj = json.loads(m)
            if "delta" in obj and obj["type"].endswith("delta"):
                obj["delta"] = value
            return json.dumps(obj, ensure_ascii=False)

        return change

    def renumber(m: str) -> str:
        obj = json.loads(m)
        if "sequence_number" in obj:
            obj["sequence_number"] += rng.choice((-1, 2, 0))
        return json.dumps(obj)

    def other_item(m: str) -> str:
        for key in ("item_id", "response_id"):
            m = m.replace(f'"{key}":"', f'"{key}":"other_', 1) if rng.random() < 0.5 else m
        return m

    def spaced(m: str) -> str:
        return json.dumps(json.loads(m), separators=(", ", ": "))

    yield each(field)
    yield each(delta(""))
    yield each(delta('数据🙂 "q" \\ \n'))
    yield each(renumber)
    yield each(other_item)
    yield each(spaced)
    yield each(lambda m: m.encode())
    yield each(lambda m: json.loads(m))
    yield each(lambda m: m[: len(m) // 2])
    yield each(lambda m: '{"type":"rate_limits.updated","rate_limits":[]}')


@pytest.mark.parametrize("protocol", PROTOCOLS)
@pytest.mark.parametrize("seed", range(3))
def test_disturbed_sessions_read_the_same(protocol: str, seed: int) -> None:
    messages = _bench(protocol)[:120] + _bench(protocol)[-4:]
    for n, disturbed in enumerate(_mutations(messages, seed)):
        keep = n % 2 and protocol == "openai-realtime"
        options: dict[str, Any] = {"audio": "keep"} if keep else {}
        _same(protocol, disturbed, options, peek=(5, 50))


# --- the front: the matcher's feed as the session's feed_message -------------------------------

FRONTED = PROTOCOLS


@pytest.mark.parametrize("protocol", FRONTED)
def test_the_front_takes_the_deltas_and_hands_on_the_rest(protocol: str) -> None:
    messages = _bench(protocol)
    stream: Any = sw.stream(protocol)
    matcher = stream._front
    assert stream.feed_message == matcher.feed  # the instance's, not the class's
    took = []
    for n, message in enumerate(messages):
        if n == 200:
            # The class's method takes the same path.
            events = type(stream).feed_message(stream, message)
            assert matcher.took == len(events) and stream.last_turns == (0,) * len(events)
        else:
            stream.feed_message(message)
        took.append(matcher.took)
    # Only the lifecycle around the deltas, and the first delta, were handed on.
    assert took.count(None) <= 10 and took.count(1) >= 145, took
    stream.close()
    assert matcher.took is None and stream.last_turns == ()


@pytest.mark.parametrize("protocol", FRONTED)
def test_a_subclass_that_overrides_feed_message_keeps_it(protocol: str) -> None:
    base: Any = type(sw.stream(protocol))
    seen: list[Any] = []

    class Logged(base):  # type: ignore[misc, valid-type]
        def feed_message(self, message: Any) -> Any:
            seen.append(message)
            return super().feed_message(message)

    stream = Logged()
    messages = _bench(protocol)
    for message in messages:
        stream.feed_message(message)
    stream.close()
    assert seen == messages
    plain = sw.stream(protocol)
    for message in messages:
        plain.feed_message(message)
    plain.close()
    assert _state(stream) == _state(plain)


@pytest.mark.parametrize("protocol", FRONTED)
def test_a_fronted_session_is_collected(protocol: str) -> None:
    # The session holds its matcher, whose fallback holds the session: a
    # cycle the collector must see through (MessageMatcher.__traverse__).
    import gc
    import weakref

    stream = sw.stream(protocol)
    for message in _bench(protocol)[:20]:
        stream.feed_message(message)
    ref = weakref.ref(stream)
    del stream
    gc.collect()
    assert ref() is None
