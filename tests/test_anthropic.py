"""The ``anthropic`` adapter beyond its fixtures.

Fixture replays (``test_fixtures.py``) cover the wire behaviours; this module
covers the API around them (misuse, caps, tool definitions, tool results and
the ledger, request ids, metrics), composition (``AnthropicMachine`` fed
decoded events, as the Bedrock adapter feeds it, gives what the SSE adapter
gives, which also proves the fast path equal to the general one), and
properties: generated streams give back exactly what was put in under any
chunking, and no input, however broken, makes the adapter raise.
"""

from __future__ import annotations

import json
from functools import partial
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

import streamwire as sw
from adapter_fuzz import mutations, never_raises
from anthropic_events import (
    MESSAGE_STOP,
    TEXT_BLOCK,
    block_start,
    block_stop,
    json_delta,
    message_delta,
    message_start,
    run,
    sse,
    text_delta,
    tool_start,
)
from chunking import chunkings, split_at
from fixture_replay import Fixture, facts, manifests
from streamwire.accumulate import Accumulator
from streamwire.protocols.anthropic import AnthropicMachine, AnthropicStream

FIXTURES = [f for f in manifests() if f.protocol == "anthropic"]


def _fixture(case: str) -> Fixture:
    return next(f for f in FIXTURES if f.manifest["case"] == case)


# --- the interface ---------------------------------------------------------------------


def test_registered_and_misuse() -> None:
    assert "anthropic" in sw.known_protocols()
    stream = sw.stream("anthropic")
    assert isinstance(stream, AnthropicStream) and stream.machine.phase == "idle"
    stream.feed(sse(message_start()))
    stream.close()
    with pytest.raises(sw.UsageError, match="closed"):
        stream.feed(b"data: {}\n\n")
    assert stream.close() == [] and stream.cancel() == []
    with pytest.raises(sw.UsageError, match="not a WebSocket protocol"):
        sw.stream("anthropic").feed_message("{}")


def test_result_before_the_end_and_cancel_after_the_end() -> None:
    stream = sw.stream("anthropic")
    stream.feed(sse(message_start(), block_start(0, TEXT_BLOCK), text_delta(0, "so far")))
    early = stream.result
    assert early.status == "in_progress" and not early.final and early.text == "so far"
    stream.feed(sse(block_stop(0), message_delta("end_turn"), MESSAGE_STOP))
    assert stream.result.status == "completed" and stream.result.final
    assert stream.cancel() == [] and stream.result.status == "completed"


def test_usage_placeholder_is_not_final() -> None:
    stream = sw.stream("anthropic")
    stream.feed(sse(message_start(input_tokens=40), block_start(0, TEXT_BLOCK), text_delta(0, "a")))
    usage = stream.result.usage
    assert usage is not None and usage.input_tokens == 40 and usage.output_tokens == 1
    assert not usage.final
    stream.feed(sse(block_stop(0), message_delta("end_turn", 9)))
    usage = stream.result.usage
    assert usage is not None and usage.output_tokens == 9 and not usage.final
    stream.cancel()
    assert stream.result.status == "cancelled"
    assert stream.result.usage is not None and not stream.result.usage.final


def test_error_request_id_and_retryable_hints() -> None:
    def error(kind: str, **extra: Any) -> sw.StreamResult:
        payload = {"type": "error", "error": {"type": kind, "message": "m"}, **extra}
        stream, _ = run(sse(message_start(), payload), **options)
        return stream.result

    options: dict[str, Any] = {}
    result = error("overloaded_error", request_id="req_in_stream")
    assert result.error is not None and result.error.retryable
    assert result.error.request_id == "req_in_stream"
    options = {"request_id": "req_from_headers"}
    for kind, retryable in [
        ("api_error", True),
        ("timeout_error", True),
        ("rate_limit_error", True),
        ("invalid_request_error", False),
        ("permission_error", False),
    ]:
        result = error(kind)
        assert result.error is not None and result.error.retryable is retryable, kind
        assert result.error.request_id == "req_from_headers"
        assert result.status == "error" and result.error.phase == "provider"


def test_caps_are_typed_errors() -> None:
    tools = [tool_start(i, f"toolu_{i}", "f") for i in range(3)]
    stream, _ = run(sse(message_start(), *tools), max_tool_calls=2)
    assert stream.result.error is not None
    assert stream.result.error.type == "too_many_tool_calls"
    assert stream.result.error.phase == "limit"
    # Fast path (a plain input_json_delta) and general path (an extra field).
    big = json_delta(0, '{"a": "' + "x" * 50 + '"}')
    for fragment in (big, {**big, "x_extra": 1}):
        stream, _ = run(
            sse(message_start(), tool_start(0, "toolu_1", "f"), fragment),
            max_tool_argument_chars=20,
        )
        assert stream.result.error is not None
        assert stream.result.error.type == "tool_arguments_too_large"
        assert not stream.result.executable


def test_text_sent_whole_in_a_block_start_is_kept_once() -> None:
    start_text = block_start(0, {"type": "text", "text": "Hi"})
    start_thinking = block_start(1, {"type": "thinking", "thinking": "T1", "signature": ""})
    stream, _ = run(
        sse(
            message_start(),
            start_text,
            text_delta(0, " there"),
            block_stop(0),
            start_thinking,
            block_stop(1),
            message_delta("end_turn"),
            MESSAGE_STOP,
        )
    )
    result = stream.result
    assert result.text == "Hi there" and result.reasoning == "T1"
    assert [b.get("text", b.get("thinking")) for b in result.provider_content] == ["Hi there", "T1"]


def test_tool_definitions_in_anthropic_format() -> None:
    tools = [
        {
            "name": "get_weather",
            "description": "Weather for a city",
            "input_schema": {
                "type": "object",
                "properties": {"city": {"type": "string"}},
                "required": ["city"],
            },
        },
        {"type": "web_search_20250305", "name": "web_search", "max_uses": 3},
    ]
    good = _fixture("06-one-tool-call")
    stream, _ = run(good.raw, tools=tools)
    assert stream.result.executable
    bad = sse(
        message_start(),
        tool_start(0, "toolu_x", "get_weather"),
        json_delta(0, '{"town": "Oslo"}'),
        block_stop(0),
        message_delta("tool_use"),
        MESSAGE_STOP,
    )
    stream, _ = run(bad, tools=tools)
    call = stream.result.tool_calls[0]
    assert call.state == "rejected" and not stream.result.executable
    assert "schema" in (call.invalid_reason or "")
    # A server tool is never checked against the client's tool definitions.
    stream, _ = run(_fixture("server-tools").raw, tools=[*tools, {"name": "save"}])
    assert stream.result.executable


# --- tool results and the ledger ----------------------------------------------------


def test_one_tool_call_result_is_correlated() -> None:
    stream, _ = run(_fixture("06-one-tool-call").raw)
    result = stream.result
    call = result.tool_calls[0]
    assert sw.tool_result(stream, call.id or "", "12 °C") == {
        "type": "tool_result",
        "tool_use_id": "toolu_reg06weather",
        "content": "12 °C",
    }
    assert sw.tool_result(result, call.id or "", {"temp": 12})["content"] == '{"temp": 12}'
    blocks = [{"type": "text", "text": "12 °C"}]
    assert sw.tool_result(result, call.id or "", blocks)["content"] == blocks
    with pytest.raises(sw.ToolResultError, match="produced no tool call"):
        sw.tool_result(result, "toolu_not_from_this_stream", "x")
    # The next request: the assistant turn from provider_content, then the result.
    content = list(result.provider_content)
    assert content[1]["id"] == call.id
    assistant = {"role": "assistant", "content": content}
    json.dumps(assistant)  # plain JSON values


def test_failing_tool_is_reported_back_once() -> None:
    stream, _ = run(_fixture("09-failing-tool").raw)
    result = stream.result
    ledger = sw.ToolLedger()
    call = ledger.authorize(result, "toolu_reg09_db")
    ledger.start("toolu_reg09_db")
    ledger.fail("toolu_reg09_db")
    assert ledger.state("toolu_reg09_db") == "failed"
    block = sw.tool_result(result, call.id or "", "relation does not exist", is_error=True)
    assert block == {
        "type": "tool_result",
        "tool_use_id": "toolu_reg09_db",
        "content": "relation does not exist",
        "is_error": True,
    }
    with pytest.raises(sw.ToolCallStateError):
        ledger.authorize(result, "toolu_reg09_db")


def test_server_tools_get_no_client_result() -> None:
    stream, _ = run(_fixture("server-tools").raw)
    with pytest.raises(sw.ToolResultError, match="run by the provider"):
        sw.tool_result(stream, "srvtoolu_regsearch", "x")
    ledger = sw.ToolLedger()
    with pytest.raises(sw.ToolCallStateError):
        ledger.authorize(stream.result, "srvtoolu_regsearch")


def test_truncated_call_is_never_executable() -> None:
    stream, _ = run(_fixture("max-tokens-mid-tool").raw)
    with pytest.raises(sw.ToolCallStateError):
        sw.ToolLedger().authorize(stream.result, "toolu_regmax")


def test_provider_content_is_shared_by_the_results_not_copied_per_read() -> None:
    # Reading .result after every chunk must stay cheap: the items are handed
    # out as they are (read-only, result.py), not copied value by value.
    stream, _ = run(_fixture("thinking-signature").raw)
    first = stream.result.provider_content
    stream._acc.cached = None  # force a new snapshot
    again = stream.result.provider_content
    assert again is first or all(a is b for a, b in zip(again, first, strict=True))


def test_metrics_with_a_clock() -> None:
    ticks = iter(range(100))
    stream = sw.stream("anthropic", clock=lambda: float(next(ticks)))
    stream.feed(sse(message_start()))
    stream.feed(b": keep-alive\n\n")
    stream.feed(sse(block_start(0, TEXT_BLOCK), text_delta(0, "a")))
    stream.feed(sse(block_stop(0), message_delta("end_turn"), MESSAGE_STOP))
    stream.close()
    metrics = stream.result.metrics
    assert metrics.time_to_first_event == 1.0
    assert metrics.time_to_first_content == 2.0
    assert metrics.wire_events == 6 and metrics.text_bytes == 1


# --- composition: the machine fed decoded events -------------------------------------


def _via_machine(fixture: Fixture) -> tuple[sw.StreamResult, list[sw.Event]]:
    """What a non-SSE transport (bedrock-invoke) gets by feeding decoded events."""
    acc = Accumulator("anthropic")
    machine = AnthropicMachine(acc)
    out: list[sw.Event] = []
    decoder = sw.SseDecoder(**fixture.manifest.get("options", {}))
    try:
        wire = decoder.feed(fixture.fed_bytes())
    except sw.FramingError:
        pytest.skip("framing errors belong to the transport")
    for event in wire:
        machine.on_payload(event.data, out, event.event)
    if fixture.manifest.get("replay", {}).get("end") == "cancel":
        acc.cancelled = True
        out.extend(acc.finish())
    else:
        machine.on_eof(out)
    acc.events = len(out)
    return acc.snapshot(), out


@pytest.mark.parametrize("fixture", FIXTURES, ids=lambda f: f.name)
def test_machine_fed_decoded_events_matches_the_sse_adapter(fixture: Fixture) -> None:
    stream, events = fixture.replay([fixture.fed_bytes()])
    result, machine_events = _via_machine(fixture)
    assert machine_events == events  # the SSE fast path is the general path
    assert facts(result) == facts(stream.result)
    assert result.provider_content == stream.result.provider_content


TEXT_HEAD = '{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"'
JSON_HEAD = (
    '{"type":"content_block_delta","index":1,"delta":{"type":"input_json_delta","partial_json":"'
)
CRAFTED = [
    "plain",
    r"a\nb \"q\" \\ \u00e9 \ud83d\ude80 \/",  # every kind of escape
    "a\tb",  # a raw tab: invalid JSON
    "a\x1fb",  # raw control character: invalid JSON
    'a","x":"b',  # an extra delta field
    'a"},"x":{"y":"',  # an extra event field
    "a\\",  # an escaped closing quote: unterminated
    "\\ud800",  # a lone surrogate escape (the standard library accepts it)
    "a\x7f\u2028\u200d\u00a0",  # not printable, valid unescaped
    "",
]


def _compare_paths(payloads: list[str]) -> None:
    events = [
        (None, json.dumps(message_start())),
        ("content_block_start", json.dumps(block_start(0, TEXT_BLOCK))),
    ]
    events += [(None, p) for p in payloads]
    data = sse(*events)
    stream, sse_events = run(data)
    acc = Accumulator("anthropic")
    machine = AnthropicMachine(acc)
    out: list[sw.Event] = []
    for wire in sw.SseDecoder().feed(data):
        machine.on_payload(wire.data, out, wire.event)
    machine.on_eof(out)
    assert sse_events == out
    assert facts(acc.snapshot()) == facts(stream.result)


@pytest.mark.parametrize("body", CRAFTED)
def test_fast_path_is_exact_on_crafted_strings(body: str) -> None:
    tool = json.dumps(tool_start(1, "toolu_1", "f"))
    _compare_paths([TEXT_HEAD + body + '"}}', TEXT_HEAD + "after" + '"}}'])
    _compare_paths([json.dumps(block_stop(0)), tool, JSON_HEAD + body + '"}}', JSON_HEAD + '"}}'])


@pytest.mark.parametrize(
    "payload",
    [
        '{"delta":{"text":"r","type":"text_delta"},"index":0,"type":"content_block_delta"}',
        ' { "type" : "content_block_delta" , "index" : 0 , '
        '"delta" : {"type":"text_delta","text":"p"} } ',
        '{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"x","y":1}}',
        '{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"x"},"z":1}',
        '{"type":"content_block_delta","index":-1,"delta":{"type":"text_delta","text":"x"}}',
        '{"type":"content_block_delta","index":0.0,"delta":{"type":"text_delta","text":"x"}}',
        '{"type":"content_block_delta","index":"0","delta":{"type":"text_delta","text":"x"}}',
        '{"type":"content_block_delta","index":7,"delta":{"type":"text_delta","text":"x"}}',
        '{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":null}}',
        '{"type":"content_block_delta","index":0,"index":0,"delta":{"type":"text_delta","text":"d"}}',
        '{"type":"content_block_delta","index":0,"delta":{"type":"input_json_delta","partial_json":"{"}}',
        '{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"x"}} junk',
    ],
)
def test_fast_path_is_exact_on_crafted_events(payload: str) -> None:
    _compare_paths([payload, TEXT_HEAD + "after" + '"}}'])
    for name in ("content_block_delta", "message", "delta"):
        events = [
            (None, json.dumps(message_start())),
            (None, json.dumps(block_start(0, TEXT_BLOCK))),
        ]
        data = sse(*events, (name, payload))
        _, sse_events = run(data)
        acc = Accumulator("anthropic")
        machine = AnthropicMachine(acc)
        out: list[sw.Event] = []
        for wire in sw.SseDecoder().feed(data):
            machine.on_payload(wire.data, out, wire.event)
        machine.on_eof(out)
        assert sse_events == out, name


@given(st.lists(st.text(), max_size=6), st.booleans())
def test_fast_path_matches_decoding(texts: list[str], ascii_only: bool) -> None:
    payloads = [
        json.dumps(text_delta(0, t), ensure_ascii=ascii_only, separators=(",", ":")) for t in texts
    ]
    _compare_paths(payloads)


def test_extension_fields_are_known() -> None:
    acc = Accumulator("bedrock-invoke")
    machine = AnthropicMachine(
        acc, extension_fields=frozenset({"amazon-bedrock-invocationMetrics"})
    )
    out: list[sw.Event] = []
    metrics = {"inputTokenCount": 10, "outputTokenCount": 5}
    for event in (message_start(), message_delta("end_turn")):
        machine.on_event(event, out)
    machine.on_event({**MESSAGE_STOP, "amazon-bedrock-invocationMetrics": metrics}, out)
    machine.on_payload(b'{"type": "ping"}', out)
    assert not acc.unknown_fields and acc.ended
    assert acc.snapshot().status == "completed"


# --- properties --------------------------------------------------------------------------

_texts = st.text(st.characters(codec="utf-8"), min_size=1, max_size=12)


def _delta(index: int, kind: str, field: str, value: str) -> dict[str, Any]:
    return {"type": "content_block_delta", "index": index, "delta": {"type": kind, field: value}}


@st.composite
def anthropic_streams(draw: st.DrawFn) -> tuple[list[bytes], str, list[tuple[str, str]]]:
    """A well-formed stream: thinking, text and tool_use blocks, then its chunking."""
    events: list[dict[str, Any]] = [message_start()]
    text: list[str] = []
    calls: list[tuple[str, str]] = []
    for index in range(draw(st.integers(0, 4))):
        kind = draw(st.sampled_from(("text", "tool", "thinking")))
        if kind == "thinking":
            events.append(block_start(index, {"type": "thinking", "thinking": "", "signature": ""}))
            for piece in draw(st.lists(_texts, max_size=4)):
                events.append(_delta(index, "thinking_delta", "thinking", piece))
            events.append(_delta(index, "signature_delta", "signature", "c2lnbmF0dXJl"))
        elif kind == "text":
            events.append(block_start(index, TEXT_BLOCK))
            for piece in draw(st.lists(_texts, max_size=4)):
                events.append(text_delta(index, piece))
                text.append(piece)
        else:
            value = draw(st.dictionaries(st.text(max_size=5), _texts, max_size=3))
            args = json.dumps(value, ensure_ascii=draw(st.booleans()))
            cuts = sorted(draw(st.lists(st.integers(0, len(args)), max_size=4)))
            events.append(tool_start(index, f"toolu_{index}", f"tool{index}"))
            events.append(json_delta(index, ""))
            for a, b in zip([0, *cuts], [*cuts, len(args)], strict=True):
                events.append(json_delta(index, args[a:b]))
            calls.append((f"tool{index}", args))
        if draw(st.booleans()):
            events.append({"type": "ping"})
        events.append(block_stop(index))
    events += [message_delta("tool_use" if calls else "end_turn"), MESSAGE_STOP]
    data = sse(*events)
    points = draw(st.lists(st.integers(0, len(data)), max_size=10))
    return split_at(data, points), "".join(text), calls


@given(anthropic_streams())
def test_generated_streams_round_trip(case: tuple[list[bytes], str, list[tuple[str, str]]]) -> None:
    chunks, text, calls = case
    stream = sw.stream("anthropic")
    for chunk in chunks:
        stream.feed(chunk)
    stream.close()
    result = stream.result
    assert result.status == "completed" and result.text == text
    assert [(c.name, c.raw_arguments) for c in result.tool_calls] == calls
    assert all(
        c.arguments == json.loads(a) for c, (_, a) in zip(result.tool_calls, calls, strict=True)
    )
    assert result.executable == bool(calls)
    assert [b["input"] for b in result.provider_content if b["type"] == "tool_use"] == [
        json.loads(a) for _, a in calls
    ]


@given(anthropic_streams(), st.integers(0, 40))
def test_the_fast_path_is_the_machine_under_any_chunking_and_cap(
    case: tuple[list[bytes], str, list[tuple[str, str]]], cap: int
) -> None:
    """Runs of deltas (one per block and feed call) may cross the argument cap
    anywhere, and the decoder's sink takes the open block's text and thinking
    deltas: the events and the result are the machine's alone."""
    chunks, _, _ = case
    stream = sw.stream("anthropic", max_tool_argument_chars=cap)
    events: list[sw.Event] = []
    for chunk in chunks:
        events += stream.feed(chunk)
    events += stream.close()
    acc = Accumulator("anthropic", max_tool_argument_chars=cap)
    machine = AnthropicMachine(acc)
    out: list[sw.Event] = []
    for wire in sw.SseDecoder().feed(b"".join(chunks)):
        machine.on_payload(wire.data, out, wire.event)
    machine.on_eof(out)
    assert events == out
    assert facts(acc.snapshot()) == facts(stream.result)


@given(anthropic_streams(), st.data())
def test_stray_deltas_read_as_the_machine_reads_them(
    case: tuple[list[bytes], str, list[tuple[str, str]]], data: st.DataObject
) -> None:
    """Deltas of the wrong kind for their block, or for a block that is not
    open, among a stream's own: the fast path and the sink take none of them
    (the machine's events and result, whatever the chunking)."""
    events = [e + b"\n\n" for e in b"".join(case[0]).split(b"\n\n") if e]
    stray = st.tuples(
        st.integers(0, 5),
        st.sampled_from(
            (
                ("text_delta", "text"),
                ("thinking_delta", "thinking"),
                ("input_json_delta", "partial_json"),
            )
        ),
        _texts,
    )
    for index, (kind, field), value in data.draw(st.lists(stray, max_size=6)):
        at = data.draw(st.integers(0, len(events)))
        events.insert(at, sse(_delta(index, kind, field, value)))
    wire = b"".join(events)
    points = data.draw(st.lists(st.integers(0, len(wire)), max_size=10))
    stream = sw.stream("anthropic")
    got: list[sw.Event] = []
    for chunk in split_at(wire, points):
        got += stream.feed(chunk)
    got += stream.close()
    acc = Accumulator("anthropic")
    machine = AnthropicMachine(acc)
    out: list[sw.Event] = []
    for event in sw.SseDecoder().feed(wire):
        machine.on_payload(event.data, out, event.event)
    machine.on_eof(out)
    assert got == out
    assert facts(acc.snapshot()) == facts(stream.result)


#: What the mutations insert: Anthropic's block index and error event among them.
_INSERTIONS = (b"\n\n", b'"', b"}", b'"index":0,', b"\xff", b"null", b"event: error\n")


def _provider_content_is_json(result: sw.StreamResult) -> None:
    json.dumps(list(result.provider_content))


_never_raises = partial(
    never_raises, "anthropic", valid_calls="client", check=_provider_content_is_json
)


@pytest.mark.parametrize("fixture", FIXTURES, ids=lambda f: f.name)
def test_mutated_fixtures_never_raise(fixture: Fixture) -> None:
    if len(fixture.raw) > 20_000:
        pytest.skip("large inputs: the small ones exercise the same paths")
    for data in mutations(fixture.raw, seed=len(fixture.raw), insertions=_INSERTIONS):
        for _, chunks in list(chunkings(data, random_rounds=2))[:4]:
            _never_raises(chunks)


@given(st.binary(max_size=400), st.lists(st.integers(0, 400), max_size=6))
def test_arbitrary_bytes_never_raise(data: bytes, points: list[int]) -> None:
    _never_raises(split_at(data, [p for p in points if p <= len(data)]))


_KEYS = [
    "type",
    "index",
    "delta",
    "content_block",
    "message",
    "usage",
    "text",
    "partial_json",
    "id",
    "name",
    "input",
    "stop_reason",
    "error",
    "signature",
    "citation",
    "data",
]
_TYPES = [
    "message_start",
    "content_block_start",
    "content_block_delta",
    "content_block_stop",
    "message_delta",
    "message_stop",
    "ping",
    "error",
    "text",
    "tool_use",
    "server_tool_use",
    "thinking",
    "text_delta",
    "input_json_delta",
    "signature_delta",
    "citations_delta",
    "end_turn",
    "max_tokens",
]
_json_values = st.recursive(
    st.none() | st.booleans() | st.integers(-1, 2) | st.sampled_from(_TYPES) | st.text(max_size=3),
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.sampled_from(_KEYS), inner, max_size=4)
    ),
    max_leaves=14,
)


@given(st.lists(_json_values, max_size=8))
def test_arbitrary_json_never_raises(payloads: list[Any]) -> None:
    data = sse(*[(None, json.dumps(p)) for p in payloads])
    _never_raises([data])
