"""The edge's pieces without a network: timing and the burst rule, OpenTelemetry names,
the driver's decisions, error bodies, protocol detection, and lazy imports.

Everything here runs on an injected fake clock, so the timing rules are
checked exactly, including the boundaries of the ``burst`` definition.
"""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

import streamwire as sw
from fixture_replay import manifests
from streamwire.io._driver import PHASES, Driver
from streamwire.io._wire import (
    content_types,
    framing_of,
    http_error,
    http_protocols,
    redact_headers,
    redact_url,
    to_headers,
)
from streamwire.io.detect import detect
from streamwire.metrics import (
    BURST_MIN_DURATION,
    BURST_MIN_EVENTS,
    ArrivalHistogram,
    Timing,
)


class FakeClock:
    def __init__(self, now: float = 100.0) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now


TEXT = sw.TextDelta(text="x")


def _timing(arrivals: list[tuple[float, int, int]], *, started_at: float | None = None) -> Timing:
    """A Timing fed (at, bytes, events) arrivals, seconds after the start."""
    clock = FakeClock()
    timing = Timing(clock, started_at=started_at)
    for at, size, events in arrivals:
        timing.on_data(size, at)
        timing.on_events([TEXT] * events, at)
    return timing


# --- timing ------------------------------------------------------------------------


def test_gaps_first_event_and_content() -> None:
    clock = FakeClock(10.0)
    timing = Timing(clock, started_at=9.5)
    assert timing.time_to_headers == pytest.approx(0.5)
    timing.on_events([sw.MessageStarted()], 0.6)
    timing.on_events([TEXT, TEXT], 0.9)
    timing.on_events([TEXT], 1.0)
    assert timing.first_event == 0.6 and timing.first_content == 0.9
    assert timing.largest_gap == pytest.approx(0.3)
    assert timing.mean_gap == pytest.approx((1.0 - 0.6) / 3)  # 4 events, 3 gaps
    timing.on_events([], 5.0)  # a feed without events changes nothing
    assert timing.largest_gap == pytest.approx(0.3)


def test_spread_stream_is_not_a_burst() -> None:
    timing = _timing([(0.04 * i, 100, 1) for i in range(1, 11)])
    assert timing.burst is False


def test_late_single_delivery_is_a_burst() -> None:
    timing = _timing([(0.4, 1000, 10)])
    assert timing.burst is True


def test_burst_needs_90_percent_of_the_bytes_in_10_percent_of_the_time() -> None:
    # 89% at the end, 11% spread before: not a burst; 91% at the end: a burst.
    spread = [(0.05 * i, 11, 1) for i in range(1, 9)]  # 88 bytes over 0.4 s
    assert _timing([*spread, (1.0, 712, 4)]).burst is False  # 712 / 800 = 89%
    assert _timing([*spread, (1.0, 900, 4)]).burst is True  # 900 / 988 = 91%


def test_burst_needs_enough_events_and_time() -> None:
    assert _timing([(1.0, 1000, BURST_MIN_EVENTS - 1)]).burst is False
    assert _timing([(1.0, 1000, BURST_MIN_EVENTS)]).burst is True
    short = BURST_MIN_DURATION * 0.9
    assert _timing([(short, 1000, 10)]).burst is False


def test_burst_is_measured_from_the_request_when_known() -> None:
    # Headers and body came together 0.5 s after the request: a burst only
    # when the request's start is known.
    clock = FakeClock(100.5)
    blind = Timing(clock)
    blind.on_data(1000, 0.001)
    blind.on_events([TEXT] * 10, 0.001)
    assert blind.burst is False
    known = Timing(clock, started_at=100.0)
    known.on_data(1000, 0.501)
    known.on_events([TEXT] * 10, 0.501)
    assert known.burst is True and known.time_to_headers == pytest.approx(0.5)


def test_histogram_keeps_64_buckets_and_total() -> None:
    hist = ArrivalHistogram()
    for i in range(1000):
        hist.add(i * 0.01, 3)
    assert len(hist.buckets) == 64 and hist.total == 3000
    assert hist.width * 64 > 9.99 and hist.width <= 10 / 32
    assert hist.shortest_window(1.0) >= 9.99 - hist.width
    assert ArrivalHistogram().shortest_window(0.9) == 0.0


def test_metrics_land_on_the_result() -> None:
    driver = Driver("openai-chat", {}, clock=FakeClock())
    driver.on_headers(200, to_headers([("content-type", "text/event-stream")]))
    driver.feed(b'data: {"choices":[{"index":0,"delta":{"content":"hi"}}]}\n\n')
    driver.finish()
    m = driver.result.metrics
    assert m.time_to_first_event == 0.0 and m.duration == 0.0 and m.burst is False
    assert m.events == 3 and m.text_bytes == 2


# --- the driver ----------------------------------------------------------------------------


@pytest.mark.parametrize("protocol", http_protocols())
def test_content_types_by_protocol(protocol: str) -> None:
    expected = {"sse": "text/event-stream", "json": "application/json"}
    ct = content_types(protocol)[0]
    assert ct == expected.get(framing_of(protocol), "application/vnd.amazon.eventstream")
    driver = Driver(protocol, {}, clock=FakeClock())
    assert (
        driver.on_headers(200, to_headers([("Content-Type", ct + "; charset=utf-8")])) == "stream"
    )
    other = Driver(protocol, {}, clock=FakeClock())
    assert other.on_headers(200, to_headers([("Content-Type", "text/html")])) == "error_body"
    failed = Driver(protocol, {}, clock=FakeClock())
    assert failed.on_headers(503, to_headers([("Content-Type", ct)])) == "error_body"


def test_deadlines() -> None:
    clock = FakeClock(0.0)
    driver = Driver(
        "openai-chat",
        {},
        clock=clock,
        first_event_timeout=1.0,
        idle_timeout=0.25,
        total_timeout=5.0,
    )
    driver.on_headers(200, to_headers([("content-type", "text/event-stream")]))
    assert driver.deadline() == (1.0, "first_event_timeout")
    clock.now = 0.5
    driver.feed(b'data: {"choices":[{"index":0,"delta":{"content":"a"}}]}\n\n')
    assert driver.deadline() == (0.75, "idle_timeout")
    # The caller's own time between events is not held against the stream.
    assert driver.deadline(waiting_since=2.0) == (2.25, "idle_timeout")
    assert driver.deadline(waiting_since=4.9) == (5.0, "total_timeout")
    events = driver.finish("idle_timeout", driver.timeout_message("idle_timeout"))
    assert events[-1].status == "incomplete"  # type: ignore[attr-defined]
    assert driver.result.warnings[-1].code == "idle_timeout"
    assert driver.finish() == [] and driver.cancel() == []


_CT = [("content-type", "text/event-stream")]
_CHUNK = b'data: {"choices":[{"index":0,"delta":{"content":"a"}}]}\n\n'


def _driver_in(phase: str) -> Driver:
    driver = Driver("openai-chat", {}, clock=FakeClock())
    if phase == "streaming":
        driver.on_headers(200, to_headers(_CT))
    elif phase == "error_body":
        driver.on_headers(500, to_headers(_CT))
    elif phase == "ended":
        driver.on_headers(200, to_headers(_CT))
        driver.finish()
    assert driver.phase == phase
    return driver


def _apply(driver: Driver, input: str) -> None:
    if input == "headers":
        driver.on_headers(200, to_headers(_CT))
    elif input == "data":
        driver.feed(_CHUNK)
    elif input == "body":
        driver.on_error_body(b'{"error": {"type": "server_error"}}')
    elif input == "end":
        driver.finish()
    else:
        driver.cancel()


@pytest.mark.parametrize("phase", ["new", "streaming", "error_body", "ended"])
@pytest.mark.parametrize("input", ["headers", "data", "body", "end", "cancel"])
def test_every_driver_phase_and_input(phase: str, input: str) -> None:
    driver = _driver_in(phase)
    expected = PHASES.get((phase, input))  # type: ignore[call-overload]
    if expected is None:
        with pytest.raises(sw.UsageError, match=f"cannot take '{input}' in phase '{phase}'"):
            _apply(driver, input)
        return
    _apply(driver, input)
    assert driver.phase == expected
    if expected == "ended":
        assert driver.result.final
        assert driver.ended is not None


def test_headers_choose_the_phase() -> None:
    assert _driver_in("new").on_headers(404, to_headers(_CT)) == "error_body"
    driver = _driver_in("new")
    assert driver.on_headers(204, to_headers(_CT)) == "stream" and driver.phase == "streaming"


def test_websocket_protocols_are_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    from streamwire.protocols import _REGISTRY
    from streamwire.protocols._base import Stream

    class Messages(Stream):
        protocol = "test-websocket"

        def feed(self, data: bytes | bytearray | memoryview) -> list[sw.Event]:
            raise sw.UsageError("messages only")

        def feed_message(self, message: object) -> list[sw.Event]:  # type: ignore[override]
            return []

        def close(self) -> list[sw.Event]:
            return []

    monkeypatch.setitem(_REGISTRY, "test-websocket", Messages)
    assert "test-websocket" in sw.known_protocols()
    assert "test-websocket" not in http_protocols()
    assert "openai-chat" in http_protocols()
    with pytest.raises(ValueError, match="WebSocket protocol"):
        Driver("test-websocket", {}, clock=FakeClock())


def test_cancel_before_headers_is_cancelled() -> None:
    driver = Driver("openai-chat", {}, clock=FakeClock())
    driver.cancel()
    assert driver.result.status == "cancelled" and driver.result.final


# --- error bodies and redaction -------------------------------------------------------------


@pytest.mark.parametrize(
    ("headers", "body", "expected"),
    [
        ([], b"", ("transport", "http_500", None)),
        ([], b'{"error": "model not found"}', ("provider", None, "model not found")),
        (
            [("x-amzn-ErrorType", "ValidationException:http://x")],
            b'{"Message": "bad input"}',
            ("provider", "ValidationException", "bad input"),
        ),
        (
            [],
            b'{"__type": "com.amazon.coral#AccessDeniedException", "message": "no"}',
            ("provider", "AccessDeniedException", "no"),
        ),
        ([], b"\xff\xfe garbage", ("transport", "http_500", "\ufffd\ufffd garbage")),
    ],
    ids=["empty", "string-error", "aws-header", "aws-type", "binary"],
)
def test_error_body_shapes(headers: list, body: bytes, expected: tuple) -> None:
    err = http_error(500, to_headers(headers), body)
    assert (err.phase, err.type, err.message) == expected


def test_secret_headers_and_url_parameters_are_removed() -> None:
    headers = to_headers(
        [
            ("Authorization", "Bearer k"),
            ("X-Api-Key", "k"),
            ("api-key", "k"),
            ("x-goog-api-key", "k"),
            ("Set-Cookie", "a=b"),
            ("x-amz-security-token", "k"),
            ("content-type", "text/event-stream"),
            ("request-id", "req_1"),
        ]
    )
    assert redact_headers(headers) == (
        ("content-type", "text/event-stream"),
        ("request-id", "req_1"),
    )
    url = redact_url("https://user:pw@host/v1/models/x:stream?alt=sse&key=SECRET&api_key=S2")
    assert url == "https://host/v1/models/x:stream?alt=sse"


# --- detection ----------------------------------------------------------------------------------


def test_detection_of_every_fixture_is_right_or_none() -> None:
    wrong = []
    told = 0
    for fixture in manifests():
        protocol, reason = detect(fixture.raw[:65536])
        assert reason
        if protocol is not None:
            told += 1
            if protocol != fixture.protocol:
                wrong.append((fixture.name, protocol, reason))
    assert wrong == []
    assert told >= 50


@pytest.mark.parametrize(
    ("data", "protocol"),
    [
        (b"", None),
        (b'   [{"candidates": []}', "gemini-json"),
        (b'{"error": {"code": 400}}', None),
        (b"event: response.created\ndata: {}\n\n", "openai-responses"),
        (b'data: {"type": "message_start", "message": {}}\n\n', "anthropic"),
        (b'data: {"candidates": [{"content": {}}]}\n\n', "gemini"),
        (b"data: [DONE]\n\n", "openai-chat"),
        (b": keep-alive\n\n", None),
        (b"\x00\x00\x00\x10\x00\x00\x00\x00garbage!", None),
    ],
    ids=[
        "empty",
        "array",
        "object",
        "responses",
        "anthropic-type",
        "gemini",
        "done",
        "comment",
        "bad-prelude",
    ],
)
def test_detection_signals(data: bytes, protocol: str | None) -> None:
    assert detect(data)[0] == protocol


def test_eventstream_detection() -> None:
    frame = sw.encode_eventstream(
        {
            ":message-type": "event",
            ":event-type": "messageStart",
            ":content-type": "application/json",
        },
        json.dumps({"role": "assistant"}).encode(),
    )
    assert detect(frame)[0] == "bedrock-converse"
    chunk = sw.encode_eventstream(
        {":message-type": "event", ":event-type": "chunk"}, b'{"bytes": ""}'
    )
    assert detect(chunk)[0] == "bedrock-invoke"


# --- imports ----------------------------------------------------------------------


def test_import_streamwire_imports_no_http_client() -> None:
    clients = "('httpx', 'httpx2', 'aiohttp', 'opentelemetry', 'jsonschema')"
    code = (
        "import sys, streamwire as sw\n"
        f"assert not [m for m in {clients} if m in sys.modules]\n"
        "assert 'streamwire.io' not in sys.modules\n"
        "sw.iter_events, sw.aiter_events, sw.otel_attributes, sw.atranslate\n"
        "import streamwire.io._httpx, streamwire.io._sync, streamwire.io._async\n"
        f"assert not [m for m in {clients} if m in sys.modules]\n"
        "print('ok')\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "ok"
    with pytest.raises(AttributeError):
        sw.no_such_name  # noqa: B018
