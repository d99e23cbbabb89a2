"""The ``bedrock-converse`` adapter beyond its fixtures.

Fixture replays (``test_fixtures.py``) cover the wire behaviours; the machines
are in ``test_bedrock_machine.py``, the invoke adapter in
``test_bedrock_invoke.py``. This module covers: the Bedrock-shaped vectors of
``fixtures/eventstream/generated.json`` (with their ``bedrock`` expectations)
under every chunking; the facts of the recordings the manifest format cannot
state (signatures, redacted reasoning, the wire event order); the
not-EventStream heuristic; tool results and the ledger; caps; metrics; the
fast path against the general path; and that no input makes the adapter raise.
"""

from __future__ import annotations

import base64
import json
import random
from functools import partial
from typing import Any, get_args

import pytest
from hypothesis import given
from hypothesis import strategies as st

import streamwire as sw
from adapter_fuzz import never_raises
from bedrock_frames import converse as C
from bedrock_frames import event_frame, exception_frame
from chunking import chunkings, split_at
from conftest import fixture_path
from fixture_replay import Fixture, facts, manifests
from streamwire.protocols import _eventstream, bedrock

FIXTURES = [f for f in manifests() if f.protocol == "bedrock-converse"]


def _fixture(case: str) -> Fixture:
    return next(f for f in FIXTURES if f.manifest["case"] == case)


def _run(data: bytes, **options: Any) -> tuple[sw.Stream, list[sw.Event]]:
    stream = sw.stream("bedrock-converse", **options)
    events = stream.feed(data) + stream.close()
    return stream, events


# --- the interface --------------------------------------------------------------------


def test_registered_and_misuse_raises() -> None:
    assert {"bedrock-converse", "bedrock-invoke"} <= set(sw.known_protocols())
    for end in ("close", "cancel"):
        stream = sw.stream("bedrock-converse")
        stream.feed(C.start())
        getattr(stream, end)()
        with pytest.raises(sw.UsageError, match="closed"):
            stream.feed(C.text(0, "x"))
        assert stream.close() == [] and stream.cancel() == []
    with pytest.raises(sw.UsageError, match="not a WebSocket protocol"):
        sw.stream("bedrock-converse").feed_message("{}")


def test_result_before_the_end_and_cancel_after_it() -> None:
    stream = sw.stream("bedrock-converse")
    assert stream.result.status == "in_progress"
    stream.feed(C.start() + C.text(0, "Hi") + C.stop("end_turn"))
    assert stream.result.status == "in_progress" and stream.result.stop_reason == "stop"
    stream.feed(C.metadata(1, 1))
    assert stream.result.status == "completed" and stream.result.final
    assert stream.cancel() == [] and stream.result.status == "completed"


def test_an_unknown_event_after_the_metadata_is_ignored_like_a_known_one() -> None:
    # Hypothesis found it: the metadata decides the stream, and an unknown
    # event after it came out as an UnknownEvent after MessageCompleted.
    data = C.start() + C.text(0, "Hi") + C.stop("end_turn") + C.metadata(1, 1)
    data += event_frame("somethingNew", {"x": 1})
    for _, chunks in chunkings(data):
        stream = sw.stream("bedrock-converse")
        events = [e for chunk in chunks for e in stream.feed(chunk)] + stream.close()
        assert isinstance(events[-1], sw.MessageCompleted)
        result = stream.result
        assert result.status == "completed" and result.text == "Hi"
        assert dict(result.unknown_events) == {}
        assert [w.code for w in result.warnings] == ["data_after_end"]


# --- recorded orders other projects' streams show (issue: "Recorded streams still misread") ---


def _under_every_chunking(data: bytes) -> list[tuple[sw.StreamResult, list[sw.Event]]]:
    out = []
    for _, chunks in chunkings(data):
        stream = sw.stream("bedrock-converse")
        events = [e for chunk in chunks for e in stream.feed(chunk)] + stream.close()
        out.append((stream.result, events))
    return out


def test_usage_before_message_stop_is_final_once_the_stream_completes() -> None:
    data = C.start() + C.text(0, "Hi") + C.block_stop(0) + C.metadata(8, 2) + C.stop("end_turn")
    for result, events in _under_every_chunking(data):
        assert result.status == "completed" and result.text == "Hi"
        assert result.usage is not None and result.usage.final
        assert (result.usage.input_tokens, result.usage.output_tokens) == (8, 2)
        assert [w.code for w in result.warnings] == ["metadata_before_stop"]
        assert [type(e).__name__ for e in events[-3:]] == [
            "UsageReported",
            "UsageReported",
            "MessageCompleted",
        ]
        assert sw.result_from_events(events, protocol="bedrock-converse").usage == result.usage


def test_usage_before_message_stop_is_not_final_while_more_may_come() -> None:
    # Before the end of input a later metadata may still replace it.
    stream = sw.stream("bedrock-converse")
    stream.feed(C.start() + C.text(0, "Hi") + C.metadata(8, 2) + C.stop("end_turn"))
    usage = stream.result.usage
    assert usage is not None and not usage.final and stream.result.status == "in_progress"
    # Input that did not end whole (an unfinished frame, a broken CRC) or ended
    # in an error proves nothing: the usage stays as reported, not final.
    early = C.start() + C.text(0, "Hi") + C.metadata(8, 2)
    tails = {
        "unfinished frame": C.stop("end_turn") + C.metadata(8, 5)[:20],
        "broken frame": C.stop("end_turn") + C.metadata(8, 5)[:-1] + b"\x00",
        "error after the stop": C.stop("end_turn")
        + exception_frame("modelStreamErrorException", {"message": "x"}),
        "no stop": b"",
    }
    for label, tail in tails.items():
        stream, _ = _run(early + tail)
        usage = stream.result.usage
        assert usage is not None and not usage.final, label


def test_an_empty_block_start_is_tolerated_for_any_kind() -> None:
    # {"start": {}}, {"start": null} and no start: an optional object left empty.
    for start in ({"start": {}}, {"start": None}, {}):
        opening = event_frame("contentBlockStart", {"contentBlockIndex": 0, **start})
        for second, facts_of in (
            (C.text(0, "Hi"), lambda r: r.text == "Hi"),
            (C.delta(0, {"reasoningContent": {"text": "r"}}), lambda r: r.reasoning == "r"),
        ):
            data = C.start() + opening + second + C.block_stop(0) + C.stop("end_turn")
            data += C.metadata(1, 1)
            for result, _ in _under_every_chunking(data):
                assert result.status == "completed" and not result.conflicts, start
                assert facts_of(result), start
                assert [w.code for w in result.warnings] == ["block_start_empty"]
    # What an empty start does not tolerate: a kind it cannot have opened.
    data = C.start() + event_frame("contentBlockStart", {"contentBlockIndex": 0, "start": {}})
    stream, _ = _run(data + C.tool_input(0, "{}") + C.stop("tool_use"))
    assert stream.result.status == "protocol_conflict"
    for start in ("text", [], {"toolUse": {}, "image": {}}):
        opening = event_frame("contentBlockStart", {"contentBlockIndex": 0, "start": start})
        stream, _ = _run(C.start() + opening + C.stop("end_turn"))
        assert stream.result.status == "protocol_conflict", start


def test_accepts_any_buffer() -> None:
    data = C.start() + C.text(0, "é") + C.stop("end_turn")
    for buffer in (bytearray(data), memoryview(data)):
        stream = sw.stream("bedrock-converse")
        stream.feed(buffer)
        assert stream.result.text == "é"


# --- generated.json: the Bedrock-shaped EventStream vectors --------------------------------


def _generated() -> list[dict[str, Any]]:
    vectors = json.loads(fixture_path("eventstream", "generated.json").read_text())
    return [v for v in vectors if "bedrock" in v]


GENERATED = _generated()
_RETRYABLE = {
    "throttlingException": True,
    "internalServerException": True,
    "serviceUnavailableException": True,
    "validationException": False,
    "modelTimeoutException": True,
}


def test_generated_has_the_bedrock_vectors() -> None:
    assert len(GENERATED) == 8


@pytest.mark.parametrize("vector", GENERATED, ids=lambda v: v["name"])
def test_generated_bedrock_vector(vector: dict[str, Any]) -> None:
    data = base64.b64decode(vector["message_b64"])
    fact = vector["bedrock"]
    protocol = "bedrock-invoke" if fact.get("api") == "InvokeModelWithResponseStream" else None
    protocol = protocol or "bedrock-converse"
    reference: list[sw.Event] | None = None
    for label, chunks in chunkings(data, random_rounds=4):
        stream = sw.stream(protocol)
        events = [e for chunk in chunks for e in stream.feed(chunk)] + stream.close()
        result = stream.result
        if reference is None:
            reference = events
        assert events == reference, label
        assert result.framing_ok
        terminal = fact.get("terminal")
        if terminal is None:
            assert result.error is None and not result.conflicts
        elif terminal["kind"] == "exception":
            kind = terminal["exception_type"]
            assert result.status == "error" and result.error is not None
            assert (result.error.phase, result.error.type) == ("provider", kind)
            assert result.error.retryable is _RETRYABLE[kind]
            assert result.error.message  # the payload's message, never text
        else:
            assert result.status == "error" and result.error is not None
            assert result.error.code == terminal["error_code"] and result.error.retryable
        if "tool_input_joined" in fact:
            (call,) = result.tool_calls
            assert call.raw_arguments == fact["tool_input_joined"]
            assert call.arguments == fact["tool_input_parsed"]
            assert result.executable and result.status == "completed"
            assert result.usage is not None and result.usage.final
            assert dict(result.provider_metrics) == {"metrics": {"latencyMs": 1234}}
        if vector["name"] == "bedrock_unknown_event_type":
            assert dict(result.unknown_events) == {"someFutureEvent": 1}
            assert result.status == "completed"
        if result.status == "error" and "Let me check" in data.decode("latin-1"):
            assert result.text == "Let me check the weather."


# --- the recordings: facts beyond the manifest format ---------------------------------------

_SHARED_FACTS = {
    # case: (signature lengths, redacted lengths per block)
    "pyd-claude-thinking": ([496], []),
    "pyd-claude-redacted-thinking": ([], [1080, 752]),
    "pyd-gptoss-empty-text-delta": ([], []),
    "vercel-reasoning": ([388], []),
}


@pytest.mark.parametrize("case", sorted(_SHARED_FACTS))
def test_recorded_signatures_and_redacted_reasoning(case: str) -> None:
    fixture = _fixture(case)
    stream, events = fixture.replay([fixture.raw])
    signatures, redacted = _SHARED_FACTS[case]
    result = stream.result
    assert [len(s) for s in result.choices[0].reasoning_signatures] == signatures
    pieces = [e.redacted for e in events if isinstance(e, sw.ReasoningDelta) and e.redacted]
    assert [len(p) for p in pieces] == redacted
    for piece in pieces:
        base64.b64decode(piece, validate=True)  # verbatim base64, as the JSON carries it
    content = [c["reasoningContent"] for c in result.provider_content if "reasoningContent" in c]
    assert [len(c.get("redactedContent", "")) for c in content if "redactedContent" in c] == (
        redacted
    )


RECORDED = [f for f in FIXTURES if f.manifest["origin"] == "recorded"]


def test_the_recordings_are_there() -> None:
    assert len(RECORDED) == 7  # six recordings, and one of them without its messageStart


@pytest.mark.parametrize("fixture", RECORDED, ids=lambda f: f.name)
def test_recorded_event_order(fixture: Fixture) -> None:
    order = fixture.manifest["recording"]["event_order"]
    seen: list[str] = []
    for message in sw.EventStreamDecoder().feed(fixture.raw):
        name = message.event_type or ""
        if seen and seen[-1].split("×")[0] == name:
            count = int(seen[-1].split("×")[1]) + 1 if "×" in seen[-1] else 2
            seen[-1] = f"{name}×{count}"
        else:
            seen.append(name)
    assert seen == order


# --- bodies that are not EventStream -----------------------------------------------------------


@pytest.mark.parametrize(
    ("body", "looks"),
    [
        (b'{"message":"Not authorized"}', "JSON (an HTTP error response?): Not authorized"),
        (b'  \n{"Message":"m"}', "JSON (an HTTP error response?): m"),
        (b"\xef\xbb\xbf[1,2]", "JSON (an HTTP error response?): [1,2]"),
        (b'{"message": tru', "JSON-like text (an HTTP error response?): {"),
        (b'<?xml version="1.0"?><Error><Code>X</Code></Error>', "XML: <?xml"),
        (b"<!DOCTYPE html><title>oops</title>", "HTML (an error page?): <!DOCTYPE html>"),
        (b"Service Unavailable", "text: Service Unavailable"),
        (b"{}", "JSON (an HTTP error response?): {}"),
    ],
)
def test_not_eventstream_says_what_the_body_looks_like(body: bytes, looks: str) -> None:
    for _, chunks in chunkings(body, random_rounds=2):
        stream = sw.stream("bedrock-converse")
        events = [e for c in chunks for e in stream.feed(c)] + stream.close()
        error = stream.result.error
        assert error is not None and error.type == "not_eventstream" and error.phase == "framing"
        assert error.message is not None
        assert error.message.startswith("the body is not AWS EventStream but " + looks)
        assert "CRC" not in error.message and "checksum" not in error.message
        assert [type(e).__name__ for e in events] == ["ErrorReceived", "MessageCompleted"]


def test_binary_garbage_stays_a_framing_error() -> None:
    # A first byte that could start a frame (a length's high byte of 0): the CRC decides.
    stream, _ = _run(b"\x00\x00\x00\x20" + bytes(range(40)))
    assert stream.result.error is not None and stream.result.error.type == "prelude_crc"


def test_a_large_foreign_body_is_reported_at_the_cap() -> None:
    body = b"<html>" + b"x" * (_eventstream.FOREIGN_BODY_CAP + 500)
    stream = sw.stream("bedrock-converse", http_status=503)
    events = stream.feed(body[:100]) + stream.feed(body[100:])
    assert [type(e).__name__ for e in events] == ["ErrorReceived"], "reported once the cap is hit"
    assert stream.feed(b"more") == []
    stream.close()
    result = stream.result
    assert result.error is not None and result.error.retryable  # from the 503
    assert result.metrics.bytes_received == len(body) + 4
    assert result.metrics.peak_buffered_bytes == _eventstream.FOREIGN_BODY_CAP


def test_an_empty_first_feed_decides_nothing() -> None:
    stream = sw.stream("bedrock-converse")
    assert stream.feed(b"") == []
    stream.feed(C.start() + C.text(0, "ok") + C.stop("end_turn"))
    stream.close()
    assert stream.result.status == "completed" and stream.result.text == "ok"


def test_retryable_hints() -> None:
    hint = _eventstream.exception_retryable
    assert hint("modelStreamErrorException", None) is True
    assert hint("modelStreamErrorException", 400) is False
    assert hint("modelStreamErrorException", 503) is True
    assert hint("InternalFailure", "InternalFailure") is True
    assert hint("AccessDeniedException", None) is False
    assert hint(None, None, 429) is True


def test_exception_payload_that_is_not_json() -> None:
    frame = sw.encode_eventstream(
        {":message-type": "exception", ":exception-type": "throttlingException"}, b"slow down"
    )
    stream, _ = _run(C.start() + frame)
    error = stream.result.error
    assert error is not None and error.message == "slow down" and error.raw == "slow down"


# --- tool results, the ledger, schemas ------------------------------------------------------


def test_tool_result_is_a_correlated_tool_result_block() -> None:
    fixture = _fixture("06-one-tool-call")
    stream, _ = fixture.replay([fixture.raw])
    call_id = "tooluse_reg06weather"
    assert sw.tool_result(stream, call_id, {"temp": 18}) == {
        "toolResult": {"toolUseId": call_id, "content": [{"json": {"temp": 18}}]}
    }
    assert sw.tool_result(stream.result, call_id, "18C") == {
        "toolResult": {"toolUseId": call_id, "content": [{"text": "18C"}]}
    }
    with pytest.raises(sw.ToolResultError):
        sw.tool_result(stream.result, "tooluse_not_from_this_stream", "x")


def test_failing_tool_is_reported_back_once() -> None:
    fixture = _fixture("09-failing-tool")
    stream, _ = fixture.replay([fixture.raw])
    result = stream.result
    ledger = sw.ToolLedger()
    call = ledger.authorize(result, "tooluse_reg09db")
    ledger.start(call.id or "")
    ledger.fail("tooluse_reg09db")
    reply = sw.tool_result(result, "tooluse_reg09db", "relation does not exist", is_error=True)
    assert reply == {
        "toolResult": {
            "toolUseId": "tooluse_reg09db",
            "content": [{"text": "relation does not exist"}],
            "status": "error",
        }
    }
    with pytest.raises(sw.ToolCallStateError):
        ledger.authorize(result, "tooluse_reg09db")


def test_server_tool_calls_get_no_client_result() -> None:
    fixture = _fixture("server-tool-use")
    stream, _ = fixture.replay([fixture.raw])
    with pytest.raises(sw.ToolResultError, match="provider itself"):
        sw.tool_result(stream.result, "srvtool_01", "x")


def test_schema_validation_from_bedrock_tool_config() -> None:
    tools = [
        {
            "toolSpec": {
                "name": "get_weather",
                "inputSchema": {
                    "json": {
                        "type": "object",
                        "properties": {"city": {"type": "string"}},
                        "required": ["city", "country"],
                    }
                },
            }
        }
    ]
    fixture = _fixture("06-one-tool-call")
    stream = sw.stream("bedrock-converse", tools=tools)
    stream.feed(fixture.raw)
    stream.close()
    result = stream.result
    assert not result.executable and "country" in (result.tool_calls[0].invalid_reason or "")


# --- caps, metrics, what the result keeps ----------------------------------------------------


def test_caps_are_typed_errors() -> None:
    calls = b"".join(C.tool_start(i, f"t{i}", "f") for i in range(3))
    stream, _ = _run(C.start() + calls, max_tool_calls=2)
    assert stream.result.error is not None and stream.result.error.type == "too_many_tool_calls"
    assert len(stream.result.tool_calls) == 2

    args = C.tool_start(0, "t0", "f") + C.tool_input(0, '{"a":') + C.tool_input(0, '"long"}')
    stream, _ = _run(C.start() + args + C.block_stop(0), max_tool_argument_chars=8)
    result = stream.result
    assert result.error is not None and result.error.type == "tool_arguments_too_large"
    assert result.tool_calls[0].raw_arguments == '{"a":' and not result.executable

    blocks = b"".join(C.text(i, "x") for i in range(5))
    stream, _ = _run(C.start() + blocks, max_content_blocks=3)
    result = stream.result
    assert result.error is not None and result.error.type == "too_many_content_blocks"
    assert result.text == "xxx" and result.error.phase == "limit"


def test_metrics_and_provider_fields() -> None:
    fixture = _fixture("01-short-text")
    ticks = iter([10.0, 10.5, 11.0, 12.0])
    stream = sw.stream("bedrock-converse", clock=lambda: next(ticks))
    stream.feed(fixture.raw[:60])  # inside the first frame: no event, no clock read
    stream.feed(fixture.raw[60:])
    stream.close()
    metrics = stream.result.metrics
    assert metrics.bytes_received == len(fixture.raw) and metrics.wire_events == 6
    assert metrics.time_to_first_event == 0.5 and metrics.time_to_first_content == 0.5
    assert metrics.text_bytes == len(b"Hello, world")
    assert dict(stream.result.provider_metrics) == {"metrics": {"latencyMs": 210}}

    trace = _fixture("guardrail-intervened")
    stream, _ = trace.replay([trace.raw])
    assert "trace" in stream.result.provider_metrics

    cited = _fixture("citations")
    stream, _ = cited.replay([cited.raw])
    assert stream.citations == [  # type: ignore[attr-defined]
        {
            "contentBlockIndex": 0,
            "citation": {
                "title": "Handbook",
                "sourceContent": [{"text": "Paris is the capital."}],
                "location": {"documentChar": {"documentIndex": 0, "start": 0, "end": 21}},
            },
        }
    ]
    extra = event_frame(
        "messageStop", {"stopReason": "end_turn", "additionalModelResponseFields": {"k": 1}}
    )
    stream, _ = _run(C.start() + extra)
    assert stream.additional_model_response_fields == {"k": 1}  # type: ignore[attr-defined]


def test_usage_with_cache_figures() -> None:
    usage = {"inputTokens": 5, "outputTokens": 2, "totalTokens": 907}
    usage |= {"cacheReadInputTokens": 800, "cacheWriteInputTokens": 100}
    stream, _ = _run(C.start() + C.stop("end_turn") + event_frame("metadata", {"usage": usage}))
    got = stream.result.usage
    assert got is not None and got.final and got.raw == usage
    assert (got.cache_read_tokens, got.cache_creation_tokens, got.total_tokens) == (800, 100, 907)


# --- the fast path is the general path ---------------------------------------------------------


class _GeneralPath(bedrock.BedrockConverseStream):
    """The adapter with its fast path off: every message through ``PHASES``."""

    shapes = None

    def _on_messages(self, messages: list[sw.EventStreamMessage], out: list[sw.Event]) -> None:
        _eventstream.EventStreamStream._on_messages(self, messages, out)


@pytest.mark.parametrize("fixture", FIXTURES, ids=lambda f: f.name)
def test_fast_path_matches_general_path(fixture: Fixture) -> None:
    fast, fast_events = fixture.replay([fixture.fed_bytes()])
    slow = _GeneralPath(**fixture.manifest.get("options", {}))
    slow_events = slow.feed(fixture.fed_bytes())
    if fixture.manifest.get("replay", {}).get("end") == "cancel":
        slow_events += slow.cancel()
    else:
        slow_events += slow.close()
    assert fast_events == slow_events
    assert facts(fast.result) == facts(slow.result)
    assert fast.result.provider_content == slow.result.provider_content


def test_the_fast_path_is_taken() -> None:
    fixture = _fixture("02-long-text")
    counts: dict[str, int] = {}

    def counting(base: type[bedrock.BedrockConverseStream]) -> bedrock.BedrockConverseStream:
        class Counting(base):  # type: ignore[valid-type,misc]
            def _on_event(self, message: sw.EventStreamMessage, out: list[sw.Event]) -> None:
                counts[base.__name__] = counts.get(base.__name__, 0) + 1
                super()._on_event(message, out)

        return Counting()

    for base in (_GeneralPath, bedrock.BedrockConverseStream):
        stream = counting(base)
        stream.feed(fixture.raw)
        stream.close()
        assert stream.result.status == "completed"
    # The fast path leaves the general path only the block's first delta and the rest.
    assert counts == {"_GeneralPath": 1504, "BedrockConverseStream": 5}


# --- properties ------------------------------------------------------------------------------

_texts = st.text(st.characters(codec="utf-8"), min_size=1, max_size=10)


@st.composite
def converse_streams(draw: st.DrawFn) -> tuple[list[bytes], str, list[str]]:
    """A well-formed stream: text blocks and tool blocks, then its chunking."""
    frames = [C.start(draw(st.integers(1, 62)))]
    text: list[str] = []
    arguments: list[str] = []
    for index in range(draw(st.integers(0, 4))):
        if draw(st.booleans()):
            for piece in draw(st.lists(_texts, max_size=4)):
                frames.append(C.text(index, piece, pad=draw(st.integers(1, 62))))
                text.append(piece)
        else:
            value = draw(st.dictionaries(st.text(max_size=4), _texts, max_size=3))
            raw = json.dumps(value, ensure_ascii=draw(st.booleans()))
            cuts = sorted(draw(st.lists(st.integers(0, len(raw)), max_size=4)))
            frames.append(C.tool_start(index, f"tooluse_{index}", f"tool{index}"))
            for a, b in zip([0, *cuts], [*cuts, len(raw)], strict=True):
                frames.append(C.tool_input(index, raw[a:b]))
            arguments.append(raw)
        frames.append(C.block_stop(index))
    frames += [C.stop("tool_use" if arguments else "end_turn"), C.metadata(3, 4)]
    data = b"".join(frames)
    points = draw(st.lists(st.integers(0, len(data)), max_size=10))
    return split_at(data, points), "".join(text), arguments


@given(converse_streams())
def test_generated_streams_round_trip(case: tuple[list[bytes], str, list[str]]) -> None:
    chunks, text, arguments = case
    stream = sw.stream("bedrock-converse")
    for chunk in chunks:
        stream.feed(chunk)
    stream.close()
    result = stream.result
    assert result.status == "completed" and not result.warnings
    assert result.text == text
    assert [c.raw_arguments for c in result.tool_calls] == arguments
    assert result.executable == bool(arguments)
    assert result.usage is not None and result.usage.final


_never_raises = partial(never_raises, "bedrock-converse", valid_calls="all")


@given(st.binary(max_size=300), st.lists(st.integers(0, 300), max_size=6))
def test_arbitrary_bytes_never_raise(data: bytes, points: list[int]) -> None:
    _never_raises(split_at(data, [p for p in points if p <= len(data)]))


_KEYS = ["contentBlockIndex", "delta", "start", "text", "toolUse", "input", "toolUseId", "name"]
_KEYS += ["reasoningContent", "signature", "redactedContent", "stopReason", "usage", "type", "p"]
_json_values = st.recursive(
    st.none() | st.booleans() | st.integers(-2, 3) | st.text(max_size=4),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.sampled_from(_KEYS), inner),
    max_leaves=10,
)
_EVENT_TYPES = [*(i for i in get_args(bedrock.PhaseInput) if i != "eof"), "unknownEvent"]


@given(st.lists(st.tuples(st.sampled_from(_EVENT_TYPES), _json_values), max_size=8))
def test_arbitrary_events_never_raise(events: list[tuple[str, Any]]) -> None:
    frames = [event_frame(name, json.dumps(value).encode(), pad=None) for name, value in events]
    _never_raises([b"".join(frames)])


def test_mutated_fixtures_never_raise() -> None:
    rng = random.Random(7)
    for fixture in FIXTURES:
        if len(fixture.raw) > 20_000:
            continue
        for _ in range(10):
            data = bytearray(fixture.raw)
            at = rng.randrange(len(data) or 1)
            if data:
                data[at] ^= 1 << rng.randrange(8)
            _never_raises([bytes(data)])
    _never_raises([exception_frame("throttlingException", {"message": 3})])
