"""The ``openai-responses`` adapter beyond its fixtures.

Fixture replays (``test_fixtures.py``) cover the wire behaviours and the state
machines have their own module (``test_openai_responses_machine.py``); this
module covers the API around them: misuse and endings, options and caps, the
SSE layer's choices (event names, ``[DONE]``, non-JSON payloads), tool results
correlated by ``call_id`` (and the item id refused with a helpful message), the
ledger on a real stream, schema validation from Responses tool definitions,
the equivalence of the fast path with the general path, and properties:
generated streams give back what was put in under any chunking, and no input,
however broken, makes the adapter raise.
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
from chunking import chunkings, split_at
from fixture_replay import Fixture, facts, manifests
from streamwire.protocols import openai_responses
from streamwire.protocols.openai_responses_machine import EVENTS

FIXTURES = [f for f in manifests() if f.protocol == "openai-responses"]


def _fixture(case: str) -> Fixture:
    return next(f for f in FIXTURES if f.manifest["case"] == case)


def _replay(case: str, **options: Any) -> sw.Stream:
    stream = sw.stream("openai-responses", **options)
    stream.feed(_fixture(case).raw)
    stream.close()
    return stream


def _sse(*events: Any, names: bool = True) -> bytes:
    out = []
    for event in events:
        if isinstance(event, str):
            out.append(f"data: {event}\n\n")
            continue
        head = f"event: {event['type']}\n" if names and "type" in event else ""
        out.append(f"{head}data: {json.dumps(event)}\n\n")
    return "".join(out).encode()


def _created(rid: str = "resp_t") -> dict[str, Any]:
    return {
        "type": "response.created",
        "response": {"id": rid, "model": "m", "status": "in_progress"},
    }


def _completed(rid: str = "resp_t", **response: Any) -> dict[str, Any]:
    return {
        "type": "response.completed",
        "response": {"id": rid, "status": "completed", **response},
    }


def _text(delta: str, item: str = "msg_t", **extra: Any) -> dict[str, Any]:
    return {
        "type": "response.output_text.delta",
        "item_id": item,
        "output_index": 0,
        "content_index": 0,
        "delta": delta,
        **extra,
    }


_MESSAGE = {
    "type": "response.output_item.added",
    "output_index": 0,
    "item": {"id": "msg_t", "type": "message", "role": "assistant", "content": []},
}


# --- the interface and endings ----------------------------------------------------------------


def test_registered_and_misuse_raises() -> None:
    assert "openai-responses" in sw.known_protocols()
    stream = sw.stream("openai-responses")
    with pytest.raises(sw.UsageError, match="not a WebSocket protocol"):
        stream.feed_message("{}")
    stream.close()
    with pytest.raises(sw.UsageError, match="closed"):
        stream.feed(b"data: {}\n\n")
    assert stream.close() == [] and stream.cancel() == []


def test_result_is_valid_before_the_end() -> None:
    stream = sw.stream("openai-responses")
    assert stream.result.status == "in_progress" and not stream.result.final
    stream.feed(_sse(_created(), _MESSAGE, _text("Hi"), _completed()))
    result = stream.result
    assert result.status == "in_progress" and result.text == "Hi" and result.stop_reason == "stop"
    assert stream.result is result, "an unchanged stream returns the cached snapshot"
    stream.close()
    assert stream.result.status == "completed" and stream.result.final


def test_cancel_mid_stream_and_after_the_terminal_event() -> None:
    stream = sw.stream("openai-responses")
    stream.feed(_sse(_created(), _MESSAGE, _text("a")))
    assert [e.as_dict()["status"] for e in stream.cancel()] == ["cancelled"]
    assert stream.result.status == "cancelled" and stream.result.text == "a"

    stream = sw.stream("openai-responses")
    stream.feed(_sse(_created(), _MESSAGE, _text("a"), _completed()))
    events = stream.cancel()  # the caller stops reading after the response ended
    assert [type(e).__name__ for e in events] == ["MessageCompleted"]
    assert stream.result.status == "completed"


def test_accepts_any_buffer_and_options() -> None:
    data = _sse(_created(), _MESSAGE, _text("é"), _completed())
    for buffer in (bytearray(data), memoryview(data)):
        stream = sw.stream("openai-responses")
        stream.feed(buffer)
        assert stream.result.text == "é"
    stream = sw.stream("openai-responses", request_id="req_9", http_status=200)
    stream.feed(_sse({"type": "error", "code": "server_error", "message": "m", "param": None}))
    stream.close()
    result = stream.result
    assert result.http_ok is True and result.error is not None
    assert result.error.request_id == "req_9" and result.error.retryable


def test_clock_metrics() -> None:
    ticks = iter([10.0, 10.5, 11.0, 13.0, 13.5])
    stream = sw.stream("openai-responses", clock=lambda: next(ticks))
    stream.feed(_sse(_created()))
    stream.feed(_sse(_MESSAGE, _text("a")))
    stream.feed(_sse(_completed()))
    stream.close()
    metrics = stream.result.metrics
    assert (metrics.time_to_first_event, metrics.time_to_first_content) == (0.5, 1.0)
    assert metrics.largest_gap == 2.0


def test_incomplete_reasons() -> None:
    for reason, status, stop in (
        ("max_output_tokens", "truncated", "length"),
        ("content_filter", "completed", "content_filter"),
        ("max_messages", "incomplete", "other"),
        ("steered", "incomplete", "other"),
    ):
        stream = sw.stream("openai-responses")
        incomplete = {
            "type": "response.incomplete",
            "response": {
                "id": "r",
                "status": "incomplete",
                "incomplete_details": {"reason": reason},
            },
        }
        stream.feed(_sse(_created("r"), _MESSAGE, _text("x"), incomplete))
        stream.close()
        result = stream.result
        assert (result.status, result.stop_reason, result.provider_stop_reason) == (
            status,
            stop,
            reason,
        )


def test_a_completed_event_is_judged_by_the_status_it_carries() -> None:
    # A bridge (LiteLLM's) ends a cut answer with response.completed whose
    # response says status "incomplete": truncated, under every chunking.
    cut = _completed("r", status="incomplete", incomplete_details={"reason": "max_output_tokens"})
    failed = _completed("r", status="failed", error={"code": "server_error", "message": "boom"})
    for terminal, want in (
        (cut, ("truncated", "length", "max_output_tokens")),
        (failed, ("error", "error", "failed")),
        (_completed("r"), ("completed", "stop", "completed")),
    ):
        body = _sse(_created("r"), _MESSAGE, _text("cut sh"), terminal)
        for label, chunks in chunkings(body):
            stream = sw.stream("openai-responses")
            for chunk in chunks:
                stream.feed(chunk)
            stream.close()
            r = stream.result
            assert (r.status, r.stop_reason, r.provider_stop_reason) == want, label
            mismatch = [w for w in r.warnings if w.code == "terminal_status_mismatch"]
            assert bool(mismatch) == (want[0] != "completed")
            assert not r.executable


def test_usage_only_from_the_terminal_response() -> None:
    usage = {
        "input_tokens": 10,
        "input_tokens_details": {"cached_tokens": 4, "cache_write_tokens": 2},
        "output_tokens": 7,
        "output_tokens_details": {"reasoning_tokens": 3},
        "total_tokens": 17,
    }
    created = _created()
    created["response"]["usage"] = {"input_tokens": 999, "output_tokens": 999}
    stream = sw.stream("openai-responses")
    stream.feed(_sse(created, _MESSAGE, _text("a")))
    assert stream.result.usage is None, "usage on a non-terminal response is ignored"
    stream.feed(_sse(_completed(usage=usage)))
    stream.close()
    got = stream.result.usage
    assert got is not None and got.final
    assert (got.input_tokens, got.output_tokens, got.total_tokens) == (10, 7, 17)
    assert (got.cache_read_tokens, got.cache_creation_tokens, got.reasoning_tokens) == (4, 2, 3)


# --- the SSE layer ----------------------------------------------------------------------------


def test_dispatch_is_on_the_json_type() -> None:
    stream = sw.stream("openai-responses")
    renamed = _sse(_text("b"))
    renamed = renamed.replace(b"event: response.output_text.delta", b"event: delta")
    untyped = b'event: response.output_text.delta\ndata: {"item_id":"msg_t","delta":"c"}\n\n'
    stream.feed(_sse(_created(), _MESSAGE, _text("a")) + renamed + untyped)
    stream.feed(_sse(_completed()))
    stream.close()
    result = stream.result
    assert result.text == "abc" and result.status == "completed"
    assert [w.code for w in result.warnings] == ["event_name_mismatch"]


def test_error_event_variants() -> None:
    cases: list[tuple[bytes, tuple[Any, ...]]] = [
        (_sse({"type": "error", "code": "ERR", "message": "m", "param": None}), (None, "ERR", "m")),
        (
            _sse({"type": "error", "error": {"type": "t", "code": "c", "message": "m"}}),
            ("t", "c", "m"),
        ),
        (b"event: error\ndata: upstream went away\n\n", (None, None, "upstream went away")),
        (b'event: error\ndata: {"error": {"code": 503}}\n\n', (None, 503, None)),
        (
            _sse({"error": {"type": "t", "message": "chat-style"}}, names=False),
            ("t", None, "chat-style"),
        ),
    ]
    for data, (kind, code, message) in cases:
        stream = sw.stream("openai-responses")
        stream.feed(data)
        stream.close()
        error = stream.result.error
        assert stream.result.status == "error" and error is not None and error.phase == "provider"
        assert (error.type, error.code, error.message) == (kind, code, message)
        assert stream.result.warnings == ()


def test_payloads_that_are_not_json_objects() -> None:
    for data, kind in (
        (b"data: {nope\n\n", "invalid_json"),
        (b"data: [1, 2]\n\n", "invalid_payload"),
    ):
        stream = sw.stream("openai-responses")
        stream.feed(data)
        stream.close()
        error = stream.result.error
        assert error is not None and (error.phase, error.type) == ("framing", kind)
        assert not stream.result.framing_ok


def test_caps_are_typed_errors() -> None:
    added = [
        {
            "type": "response.output_item.added",
            "output_index": i,
            "item": {"id": f"fc_{i}", "type": "function_call", "call_id": f"c{i}", "name": "f"},
        }
        for i in range(3)
    ]
    for options, kind in (
        ({"max_tool_calls": 2}, "too_many_tool_calls"),
        ({"max_content_blocks": 2}, "too_many_content_blocks"),
    ):
        stream = sw.stream("openai-responses", **options)
        stream.feed(_sse(_created(), *added))
        stream.close()
        error = stream.result.error
        assert error is not None and (error.phase, error.type) == ("limit", kind)
    stream = sw.stream("openai-responses", max_tool_argument_chars=4)
    delta = {"type": "response.function_call_arguments.delta", "item_id": "fc_0", "delta": "12345"}
    stream.feed(_sse(_created(), added[0], delta))
    stream.close()
    error = stream.result.error
    assert error is not None and error.type == "tool_arguments_too_large"
    assert not stream.result.executable


def test_provider_content_keeps_the_done_items_for_the_next_turn() -> None:
    result = _replay("reasoning-summary").result
    kinds = [(item["type"], item["id"]) for item in result.provider_content]
    assert kinds == [("reasoning", "rs_reason"), ("message", "msg_reason")]
    assert result.provider_content[0]["encrypted_content"] == "gAAAAABencrypted=="


# --- tool calls and results ------------------------------------------------------------------


def test_tool_result_quotes_the_call_id_and_refuses_the_item_id() -> None:
    stream = _replay("06-one-tool-call")
    assert sw.tool_result(stream, "call_reg06_weather", "18C") == {
        "type": "function_call_output",
        "call_id": "call_reg06_weather",
        "output": "18C",
    }
    with pytest.raises(sw.ToolResultError, match="must quote its call_id 'call_reg06_weather'"):
        sw.tool_result(stream, "fc_reg06_item", "18C")
    with pytest.raises(sw.ToolResultError, match="looks like an output item id") as info:
        sw.tool_result(stream.result, "fc_reg06_item", "18C")  # a result alone: a heuristic
    assert "'call_reg06_weather' (get_weather)" in str(info.value)
    with pytest.raises(sw.ToolResultError, match=r"produced no tool call 'call_other'$"):
        sw.tool_result(stream, "call_other", "x")


def test_builtin_and_custom_tool_results() -> None:
    stream = _replay("builtin-tools")
    for call_id in ("ws_bi", "ci_bi", "mcp_bi"):
        with pytest.raises(sw.ToolResultError, match="run by the provider"):
            sw.tool_result(stream, call_id, "x")
    assert sw.tool_result(stream, "call_fn_bi", {"sent": True})["output"] == '{"sent": true}'
    # The local shell and the computer are the caller's to run; their results
    # have their own item types.
    assert sw.tool_result(stream, "call_lsh_bi", "README.md") == {
        "type": "local_shell_call_output",
        "id": "call_lsh_bi",
        "output": "README.md",
    }
    screenshot = {"type": "computer_screenshot", "file_id": "file_1"}
    assert sw.tool_result(stream, "call_cu_bi", screenshot) == {
        "type": "computer_call_output",
        "call_id": "call_cu_bi",
        "output": screenshot,
    }
    custom = _replay("custom-tool-call")
    assert sw.tool_result(custom, "call_custom", "applied") == {
        "type": "custom_tool_call_output",
        "call_id": "call_custom",
        "output": "applied",
    }


def test_failing_tool_is_reported_back_once() -> None:
    result = _replay("09-failing-tool").result
    ledger = sw.ToolLedger()
    call = ledger.authorize(result, "call_reg09_db")
    ledger.start(call.id or "")
    try:
        raise LookupError("relation 'missing' does not exist")  # the tool fails
    except LookupError as exc:
        ledger.fail("call_reg09_db")
        reply = sw.tool_result(result, "call_reg09_db", f"error: {exc}", is_error=True)
    assert ledger.state("call_reg09_db") == "failed"
    assert reply["call_id"] == "call_reg09_db" and reply["output"].startswith("error:")
    with pytest.raises(sw.ToolCallStateError):
        ledger.authorize(result, "call_reg09_db")


RESPONSES_TOOLS = [
    {
        "type": "function",
        "name": "get_weather",
        "parameters": {
            "type": "object",
            "properties": {"city": {"type": "string"}, "units": {"enum": ["c", "f"]}},
            "required": ["city", "units"],
        },
    },
    {"type": "web_search"},
]


def test_schema_validation_from_responses_tool_definitions() -> None:
    assert _replay("06-one-tool-call", tools=RESPONSES_TOOLS).result.executable
    strict = json.loads(json.dumps(RESPONSES_TOOLS))
    strict[0]["parameters"]["required"].append("country")
    result = _replay("06-one-tool-call", tools=strict).result
    assert not result.executable
    assert "country" in (result.tool_calls[0].invalid_reason or "")
    custom = _replay("custom-tool-call", tools=[{"type": "custom", "name": "apply_diff"}])
    assert custom.result.executable
    undeclared = _replay("custom-tool-call", tools=RESPONSES_TOOLS).result
    assert "did not declare" in (undeclared.tool_calls[0].invalid_reason or "")


# --- the fast path is the general path ----------------------------------------------------------


@pytest.mark.parametrize("fixture", FIXTURES, ids=lambda f: f.name)
def test_fast_path_matches_general_path(fixture: Fixture, monkeypatch: pytest.MonkeyPatch) -> None:
    fast_stream, fast_events = fixture.replay([fixture.fed_bytes()])
    # Without shapes, no event is matched in Rust: every event takes the general path.
    monkeypatch.setattr(openai_responses.OpenAIResponsesStream, "shapes", None)
    slow_stream, slow_events = fixture.replay([fixture.fed_bytes()])
    assert fast_events == slow_events
    assert facts(fast_stream.result) == facts(slow_stream.result)
    assert fast_stream.result.warnings == slow_stream.result.warnings


def test_fast_path_checks_the_sequence() -> None:
    stream = sw.stream("openai-responses")
    events = [_created() | {"sequence_number": 0}, _MESSAGE | {"sequence_number": 1}]
    events += [_text("a", sequence_number=2), _text("b", sequence_number=4)]
    events += [_text("c", sequence_number=3), _text("d")]  # regression, then an unnumbered one
    stream.feed(_sse(*events))
    assert [w.code for w in stream.result.warnings] == ["sequence_gap", "sequence_regression"]
    assert stream.result.text == "abcd"


# --- properties ---------------------------------------------------------------------------------

_texts = st.text(st.characters(codec="utf-8"), min_size=1, max_size=12)


@st.composite
def responses_streams(draw: st.DrawFn) -> tuple[list[bytes], list[str], list[tuple[str, str]]]:
    """A well-formed stream: a message's deltas and parallel calls' interleaved deltas."""
    texts = draw(st.lists(_texts, max_size=8))
    calls = draw(st.lists(st.dictionaries(st.text(max_size=5), _texts, max_size=3), max_size=3))
    arguments = [json.dumps(c, ensure_ascii=draw(st.booleans())) for c in calls]
    seq = iter(range(1_000_000))
    events: list[dict[str, Any]] = [_created(), _MESSAGE]
    events += [_text(t) for t in texts]
    queues: dict[int, list[str]] = {}
    for i, args in enumerate(arguments):
        item = {"id": f"fc_{i}", "type": "function_call", "call_id": f"call_{i}", "name": f"t{i}"}
        events.append({"type": "response.output_item.added", "output_index": i + 1, "item": item})
        cuts = sorted(draw(st.lists(st.integers(0, len(args)), max_size=4)))
        bounds = zip([0, *cuts], [*cuts, len(args)], strict=True)
        queues[i] = [p for p in (args[a:b] for a, b in bounds) if p]
    while any(queues.values()):
        i = draw(st.sampled_from([k for k, q in queues.items() if q]))
        delta = {"type": "response.function_call_arguments.delta", "item_id": f"fc_{i}"}
        events.append({**delta, "output_index": i + 1, "delta": queues[i].pop(0)})
    for i, args in enumerate(arguments):
        item = {"id": f"fc_{i}", "type": "function_call", "call_id": f"call_{i}", "name": f"t{i}"}
        events.append(
            {
                "type": "response.output_item.done",
                "output_index": i + 1,
                "item": {**item, "arguments": args},
            }
        )
    events.append(_completed())
    for event in events:
        event["sequence_number"] = next(seq)
    data = _sse(*events, names=draw(st.booleans()))
    points = draw(st.lists(st.integers(0, len(data)), max_size=10))
    return split_at(data, points), texts, [(f"t{i}", a) for i, a in enumerate(arguments)]


@given(responses_streams())
def test_generated_streams_round_trip(
    case: tuple[list[bytes], list[str], list[tuple[str, str]]],
) -> None:
    chunks, texts, calls = case
    stream = sw.stream("openai-responses")
    for chunk in chunks:
        stream.feed(chunk)
    stream.close()
    result = stream.result
    assert result.status == "completed" and result.warnings == ()
    assert result.text == "".join(texts)
    assert [(c.name, c.raw_arguments) for c in result.tool_calls] == calls
    assert [c.id for c in result.tool_calls] == [f"call_{i}" for i in range(len(calls))]
    assert result.executable == bool(calls)
    assert result.stop_reason == ("tool_calls" if calls else "stop")


_never_raises = partial(never_raises, "openai-responses", valid_calls="client")


@pytest.mark.parametrize(
    "fixture", [f for f in FIXTURES if len(f.raw) < 20_000], ids=lambda f: f.name
)
def test_mutated_fixtures_never_raise(fixture: Fixture) -> None:
    for data in mutations(fixture.raw, seed=len(fixture.raw), count=12):
        for _, chunks in list(chunkings(data, random_rounds=1))[:3]:
            _never_raises(chunks)


@given(st.binary(max_size=400), st.lists(st.integers(0, 400), max_size=6))
def test_arbitrary_bytes_never_raise(data: bytes, points: list[int]) -> None:
    _never_raises(split_at(data, [p for p in points if p <= len(data)]))


_KEYS = [
    "type",
    "item",
    "item_id",
    "output_index",
    "content_index",
    "summary_index",
    "delta",
    "text",
    "arguments",
    "input",
    "part",
    "response",
    "id",
    "call_id",
    "name",
    "status",
    "usage",
    "error",
    "code",
    "incomplete_details",
    "reason",
    "output",
    "content",
    "summary",
    "sequence_number",
]
_TYPES = [
    *sorted(EVENTS),
    "message",
    "function_call",
    "custom_tool_call",
    "web_search_call",
    "reasoning",
    "output_text",
    "refusal",
    "summary_text",
]
_json_values = st.recursive(
    st.none() | st.booleans() | st.integers(-2, 3) | st.sampled_from(_TYPES) | st.text(max_size=3),
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.sampled_from(_KEYS), inner, max_size=5)
    ),
    max_leaves=14,
)


@given(st.lists(_json_values, max_size=8), st.booleans())
def test_arbitrary_json_never_raises(payloads: list[Any], done: bool) -> None:
    data = _sse(*[json.dumps(p) for p in payloads], *(["[DONE]"] if done else []))
    _never_raises([data])


@pytest.mark.parametrize(
    "event",
    [
        {
            "type": "response.output_text.done",
            "item_id": "m1",
            "output_index": 0,
            "content_index": ["a"],
            "text": "x",
        },
        {
            "type": "response.content_part.added",
            "item_id": "m1",
            "output_index": 0,
            "content_index": 0,
            "part": {"type": ["x"]},
        },
        {
            "type": "response.output_item.done",
            "output_index": 0,
            "item": {"id": "m1", "type": "message", "role": "assistant", "content": [{"type": {}}]},
        },
    ],
    ids=["list-content-index", "list-part-type", "dict-part-type-in-item"],
)
def test_unhashable_values_where_keys_belong_never_raise(event: dict[str, Any]) -> None:
    """A list or object where an index or a type name belongs is a broken event,
    recorded, never a TypeError out of the adapter (found by fuzzing)."""
    created = {"type": "response.created", "response": {"id": "r1", "output": []}}
    added = {
        "type": "response.output_item.added",
        "output_index": 0,
        "item": {"id": "m1", "type": "message", "role": "assistant", "content": []},
    }
    s = sw.stream("openai-responses")
    body = b"".join(b"data: " + json.dumps(e).encode() + b"\n\n" for e in (created, added, event))
    s.feed(body)
    s.close()
    assert s.result.status in {"protocol_conflict", "incomplete"}
