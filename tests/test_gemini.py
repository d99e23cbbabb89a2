"""The ``gemini`` adapter beyond its fixtures.

Fixture replays (``test_fixtures.py``) cover the wire behaviours; this module
covers the candidate machine over every (state, input) pair, the endings,
thought signatures and the content for the next turn, synthetic call ids,
the SSE layer and non-SSE bodies, the fast path against the general path,
and that no input, however broken, makes the adapter raise. The function-call
machine, Vertex streamed arguments, tool results and caps are in
``test_gemini_calls.py``.
"""

from __future__ import annotations

import itertools
import json
import re
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

import streamwire as sw
from chunking import split_at
from fixture_replay import Fixture
from gemini_streams import GEMINI_FIXTURES, RID, chunk, fixture, run, sse
from streamwire.protocols import gemini, gemini_chunks, gemini_json
from streamwire.result import ReadOnlyDict

# --- the interface ----------------------------------------------------------------


def test_registered_with_the_interface() -> None:
    assert {"gemini", "gemini-json"} <= set(sw.known_protocols())
    for protocol in ("gemini", "gemini-json"):
        stream = sw.stream(protocol)
        assert stream.result.status == "in_progress" and not stream.result.final
        stream.close()
        with pytest.raises(sw.UsageError, match="closed"):
            stream.feed(b"data: {}\r\n\r\n")
        assert stream.close() == [] and stream.cancel() == []
        with pytest.raises(sw.UsageError, match="not a WebSocket protocol"):
            sw.stream(protocol).feed_message("{}")


def test_cancel_mid_stream_and_after_the_end() -> None:
    stream = sw.stream("gemini")
    stream.feed(sse(chunk([{"text": "a"}])))
    assert [e.as_dict()["status"] for e in stream.cancel()] == ["cancelled"]
    assert stream.result.status == "cancelled" and stream.result.text == "a"
    done = sw.stream("gemini")
    done.feed(sse(chunk([{"text": "a"}], "STOP")))
    done.close()
    assert done.cancel() == [] and done.result.status == "completed"


def test_result_before_the_end_and_any_buffer() -> None:
    data = sse(chunk([{"text": "é"}], "STOP"))
    for buffer in (data, bytearray(data), memoryview(data)):
        stream = sw.stream("gemini")
        stream.feed(buffer)
        assert stream.result.status == "in_progress" and stream.result.text == "é"
        assert stream.result.stop_reason == "stop"
        stream.close()
        assert stream.result.status == "completed"


def test_clock_metrics() -> None:
    ticks = iter(float(i) for i in range(100))
    stream = sw.stream("gemini", clock=lambda: next(ticks))
    stream.feed(sse({"usageMetadata": {"promptTokenCount": 3}, "responseId": RID}))
    stream.feed(sse(chunk([{"text": "a"}], "STOP")))
    stream.close()
    metrics = stream.result.metrics
    assert metrics.time_to_first_event is not None and metrics.time_to_first_content is not None
    assert metrics.time_to_first_content > metrics.time_to_first_event


# --- the candidate machine --------------------------------------------------------

CANDIDATE_INPUTS = {
    "content": chunk([{"text": "b"}]),
    "response": chunk([{"functionResponse": {"name": "f", "response": {}}}, {"text": "b"}]),
    "finish": chunk(None, "STOP"),
    "empty": chunk([]),
}


def test_candidate_table_is_complete() -> None:
    table = gemini_chunks.CANDIDATE_TRANSITIONS
    pairs = set(itertools.product(gemini_chunks.CANDIDATE_PHASES, gemini_chunks.CANDIDATE_INPUTS))
    assert set(table) == pairs


@pytest.mark.parametrize(
    ("phase", "input_"),
    list(itertools.product(gemini_chunks.CANDIDATE_PHASES, gemini_chunks.CANDIDATE_INPUTS)),
)
def test_candidate_transition(phase: str, input_: str) -> None:
    stream = sw.stream("gemini")
    call = {"functionCall": {"name": "f", "args": {}}}
    stream.feed(sse(chunk([{"text": "a"}, call], "STOP" if phase == "finished" else None)))
    stream.feed(sse(CANDIDATE_INPUTS[input_]))
    action, following = gemini_chunks.CANDIDATE_TRANSITIONS[phase, input_]  # type: ignore[index]
    core = stream._chunks  # type: ignore[attr-defined]
    assert core._phases[0] == following
    result = stream.result
    assert bool(result.conflicts) == (action == "after_finish"), result.conflicts
    assert result.text == ("ab" if action in ("apply", "serve", "resume") else "a")
    served = action in ("serve", "resume")
    assert result.tool_calls[0].executor == ("server" if served else "client")


def test_a_changed_finish_reason_is_a_conflict() -> None:
    stream, _ = run(sse(chunk([{"text": "a"}], "STOP"), chunk(None, "SAFETY")))
    result = stream.result
    assert result.status == "protocol_conflict" and result.provider_stop_reason == "STOP"
    assert "changed its finishReason" in result.conflicts[0]


# --- endings ----------------------------------------------------------------------

ENDINGS = [
    ("STOP", "completed", "stop"),
    ("MAX_TOKENS", "truncated", "length"),
    *[
        (reason, "completed", "content_filter")
        for reason in (
            "SAFETY",
            "RECITATION",
            "BLOCKLIST",
            "PROHIBITED_CONTENT",
            "SPII",
            "IMAGE_SAFETY",
            "IMAGE_PROHIBITED_CONTENT",
            "IMAGE_RECITATION",
            "MODEL_ARMOR",
        )
    ],
    *[
        (reason, "error", "error")
        for reason in (
            "MALFORMED_FUNCTION_CALL",
            "UNEXPECTED_TOOL_CALL",
            "TOO_MANY_TOOL_CALLS",
            "MALFORMED_RESPONSE",
            "MISSING_THOUGHT_SIGNATURE",
        )
    ],
    *[
        (reason, "completed", "other")
        for reason in (
            "OTHER",
            "LANGUAGE",
            "IMAGE_OTHER",
            "NO_IMAGE",
            "FINISH_REASON_UNSPECIFIED",
            "A_REASON_NOT_YET_DOCUMENTED",
        )
    ],
]


@pytest.mark.parametrize(("reason", "status", "stop"), ENDINGS)
def test_finish_reasons(reason: str, status: str, stop: str) -> None:
    stream, events = run(sse(chunk([{"text": "x"}]), chunk(None, reason)))
    result = stream.result
    assert (result.status, result.stop_reason, result.provider_stop_reason) == (
        status,
        stop,
        reason,
    )
    assert events[-1].as_dict()["provider_stop_reason"] == reason
    if status == "error":
        assert result.error is not None and result.error.type == reason
        assert not result.error.retryable


# --- enums as numbers (gemini_enums.py) -----------------------------------------------

NUMBERED = [
    # (number, enum_numbering, provider_stop_reason, stop reason, warning)
    (1, "either", "STOP", "stop", None),
    (2, "either", "MAX_TOKENS", "length", None),
    (5, "either", "OTHER", "other", None),
    (11, "either", "IMAGE_SAFETY", "content_filter", None),
    (7, "either", "7", "content_filter", "ambiguous_enum_number"),
    (6, "either", "6", "other", "ambiguous_enum_number"),
    (17, "either", "17", "content_filter", "ambiguous_enum_number"),
    (6, "vertex", "BLOCKLIST", "content_filter", None),
    (6, "gemini-api", "LANGUAGE", "other", None),
    (10, "vertex", "MODEL_ARMOR", "content_filter", None),
    (13, "gemini-api", "TOO_MANY_TOOL_CALLS", "error", None),
    (17, "vertex", "17", "other", "unknown_enum_number"),
    (-1, "either", "-1", "other", "unknown_enum_number"),
]


@pytest.mark.parametrize(("number", "numbering", "raw", "stop", "warning"), NUMBERED)
def test_a_finish_reason_number_is_read_by_its_numbering(
    number: int, numbering: str, raw: str, stop: str, warning: str | None
) -> None:
    for protocol, body in (("gemini", sse), ("gemini-json", _array)):
        stream, events = run(
            body(chunk([{"text": "x"}]), chunk(None, number)),  # type: ignore[arg-type]
            protocol,
            enum_numbering=numbering,
        )
        result = stream.result
        assert (result.provider_stop_reason, result.stop_reason) == (raw, stop)
        assert [w.code for w in result.warnings] == ([warning] if warning else [])
        assert not result.conflicts
        assert events[-1].as_dict()["provider_stop_reason"] == raw


def test_a_repeated_finish_is_the_same_as_a_name_or_a_number() -> None:
    stream, _ = run(sse(chunk([{"text": "a"}], "STOP"), chunk(None, 1)))  # type: ignore[arg-type]
    assert stream.result.status == "completed" and not stream.result.conflicts
    stream, _ = run(sse(chunk([{"text": "a"}], 1), chunk(None, 2)))  # type: ignore[arg-type]
    assert "changed its finishReason from 'STOP' to 'MAX_TOKENS'" in stream.result.conflicts[0]


def test_a_block_reason_number() -> None:
    feedback = {"promptFeedback": {"blockReason": 5}, "responseId": RID}
    for numbering, raw in (
        ("either", "5"),
        ("vertex", "MODEL_ARMOR"),
        ("gemini-api", "IMAGE_SAFETY"),
    ):
        stream, _ = run(sse(feedback), enum_numbering=numbering)
        result = stream.result
        assert (result.status, result.stop_reason) == ("completed", "content_filter")
        assert result.provider_stop_reason == raw and not result.conflicts


def test_an_unknown_numbering_is_refused() -> None:
    for protocol in ("gemini", "gemini-json"):
        with pytest.raises(sw.UsageError, match="enum_numbering"):
            sw.stream(protocol, enum_numbering="v1")


def _array(*chunks: Any) -> bytes:
    return ("[" + ",".join(json.dumps(c) for c in chunks) + "]").encode()


# --- server-side tool turns -------------------------------------------------------------

CALL = {"functionCall": {"name": "f", "args": {"x": 1}}}


def _response(name: str = "f", **extra: Any) -> dict[str, Any]:
    return {"functionResponse": {"name": name, "response": {"output": 1}, **extra}}


def test_an_answer_after_stop_resumes_the_candidate() -> None:
    stream, events = run(
        sse(chunk([CALL], "STOP"), chunk([_response()]), chunk([{"text": "one"}], "STOP"))
    )
    result = stream.result
    assert (result.status, result.stop_reason, result.text) == ("completed", "stop", "one")
    (call,) = result.tool_calls
    assert call.executor == "server" and not call.executable and not result.executable
    completed = [e for e in events if isinstance(e, sw.ToolCallCompleted)]
    assert [e.executor for e in completed] == ["client", "server"]
    assert sw.result_from_events(events, protocol="gemini").tool_calls == result.tool_calls


@pytest.mark.parametrize(
    "after",
    [
        [chunk([_response("g")])],  # answers no call of the candidate
        [chunk([_response(id="other")])],  # an id that is none of its calls'
        # answered, finished again, then answered again: no call is waiting
        [chunk([_response()]), chunk([{"text": "."}], "STOP"), chunk([_response()])],
    ],
)
def test_an_answer_to_nothing_after_the_finish_is_still_a_conflict(after: list[Any]) -> None:
    stream, _ = run(sse(chunk([CALL], "STOP"), *after))
    assert stream.result.status == "protocol_conflict"
    assert "after its finishReason" in stream.result.conflicts[-1]


def test_only_a_stop_is_resumed() -> None:
    stream, _ = run(sse(chunk([CALL], "MAX_TOKENS"), chunk([_response()])))
    assert stream.result.status == "protocol_conflict"
    assert stream.result.tool_calls[0].executor == "client"


def test_the_unanswered_calls_stay_the_callers() -> None:
    other = {"functionCall": {"name": "g", "args": {}}}
    stream, _ = run(
        sse(chunk([CALL, other], "STOP"), chunk([_response()]), chunk([{"text": "."}], "STOP"))
    )
    result = stream.result
    assert [c.executor for c in result.tool_calls] == ["server", "client"]
    assert result.stop_reason == "tool_calls" and result.executable
    assert [c.executable for c in result.tool_calls] == [False, True]


def test_an_answer_in_the_calls_own_chunk_matches_by_id() -> None:
    calls = [{"functionCall": {"id": "a", "name": "f", "args": {}}}, _response(id="a")]
    stream, _ = run(sse(chunk(calls), chunk([{"text": "done"}], "STOP")))
    result = stream.result
    assert result.tool_calls[0].executor == "server" and result.stop_reason == "stop"
    assert not result.conflicts and result.text == "done"


def test_stop_with_calls_and_filters_are_never_executable() -> None:
    call = {"functionCall": {"name": "f", "args": {}}}
    stop, _ = run(sse(chunk([call], "STOP")))
    assert stop.result.stop_reason == "tool_calls" and stop.result.executable
    for reason in ("SAFETY", "MAX_TOKENS", "MALFORMED_FUNCTION_CALL"):
        other, _ = run(sse(chunk([call], reason)))
        assert not other.result.executable
        assert other.result.tool_calls[0].not_executable_reason


def test_eof_without_finish_is_incomplete() -> None:
    stream, _events = run(sse(chunk([{"text": "a"}], usageMetadata={"promptTokenCount": 2})))
    result = stream.result
    assert result.status == "incomplete" and result.stop_reason is None
    assert result.usage is not None and not result.usage.final


@pytest.mark.parametrize(
    ("error", "retryable"),
    [
        ({"code": 503, "message": "overloaded", "status": "UNAVAILABLE"}, True),
        ({"code": 429, "message": "quota", "status": "RESOURCE_EXHAUSTED"}, True),
        ({"code": 500, "message": "internal", "status": "INTERNAL"}, True),
        ({"code": 400, "message": "bad", "status": "INVALID_ARGUMENT"}, False),
        ({"code": 403, "message": "denied", "status": "PERMISSION_DENIED"}, False),
        ("a bare string", False),
    ],
)
def test_error_chunks(error: Any, retryable: bool) -> None:
    stream, _ = run(sse(chunk([{"text": "a"}]), {"error": error}))
    result = stream.result
    assert result.status == "error" and result.error is not None
    assert result.error.phase == "provider" and result.error.retryable is retryable
    if isinstance(error, dict):
        assert (result.error.type, result.error.code) == (error["status"], error["code"])
        assert result.error.message == error["message"]


def test_prompt_feedback_without_block_reason_is_no_ending() -> None:
    ratings = {"promptFeedback": {"safetyRatings": []}, "responseId": RID}
    stream, _ = run(sse(ratings, chunk([{"text": "a"}], "STOP")))
    assert stream.result.status == "completed" and stream.result.stop_reason == "stop"


# --- signatures, content for the next turn, ids -----------------------------------


def _signatures(raw: bytes) -> list[str]:
    return re.findall(r'"thoughtSignature": ?"([^"]+)"', raw.decode())


@pytest.mark.parametrize(
    "fixture", [f for f in GEMINI_FIXTURES if "providers" in str(f.path)], ids=lambda f: f.name
)
def test_provider_content_keeps_parts_and_signatures(fixture: Fixture) -> None:
    stream, _ = fixture.replay([fixture.raw])
    result = stream.result
    sent = _signatures(fixture.raw)
    assert list(result.choices[0].reasoning_signatures) == sent
    content = gemini.model_content(result)
    parts = content["parts"]
    assert content["role"] == "model"
    assert [p["thoughtSignature"] for p in parts if "thoughtSignature" in p] == sent
    text = "".join(p["text"] for p in parts if "text" in p and not p.get("thought"))
    thought = "".join(p["text"] for p in parts if p.get("thought"))
    assert (text, thought) == (result.text, result.reasoning)
    calls = [p["functionCall"] for p in parts if "functionCall" in p]
    assert [(c["name"], c["args"]) for c in calls] == [
        (c.name, c.arguments) for c in result.tool_calls
    ]
    # A signed part is never merged with another: it comes back as it was sent.
    decoder = sw.SseDecoder()
    wire = [
        part
        for event in decoder.feed(fixture.raw) + decoder.finish()
        for cand in json.loads(event.data).get("candidates", ())
        for part in cand.get("content", {}).get("parts", ())
        if "thoughtSignature" in part
    ]
    signed = [p for p in parts if "thoughtSignature" in p]
    assert len(signed) == len(wire)
    for back, sent_part in zip(signed, wire, strict=True):
        if "text" in sent_part:
            assert back == sent_part
        else:
            assert back["functionCall"]["name"] == sent_part["functionCall"]["name"]


def test_signature_on_an_empty_last_text_part_stays_apart() -> None:
    stream, events = run(
        sse(
            chunk([{"text": "Hello"}]),
            chunk([{"text": " world"}]),
            chunk([{"text": "", "thoughtSignature": "SIG"}], "STOP"),
        )
    )
    assert gemini.model_content(stream.result)["parts"] == [
        {"text": "Hello world"},
        {"text": "", "thoughtSignature": "SIG"},
    ]
    assert events[-2].as_dict() == {
        "event": "ReasoningDelta",
        "text": "",
        "signature": "SIG",
        "redacted": None,
        "kind": "text",
        "choice": 0,
    }


def test_parallel_calls_keep_the_signature_on_the_first() -> None:
    stream, _ = fixture("07-parallel-tool-calls").replay([fixture("07-parallel-tool-calls").raw])
    parts = gemini.model_content(stream.result)["parts"]
    assert [sorted(p) for p in parts] == [["functionCall", "thoughtSignature"], ["functionCall"]]
    assert parts[0]["functionCall"] == {"name": "get_weather", "args": {"city": "Paris"}}


def test_other_parts_are_kept_verbatim_and_unknown_keys_counted() -> None:
    image = {"inlineData": {"mimeType": "image/png", "data": "iVBORw0KGgo="}}
    code = {"executableCode": {"language": "PYTHON", "code": "print(1)"}}
    stream, _ = run(sse(chunk([image, code, {"x_new": 1}, {"text": "ok"}], "STOP")))
    result = stream.result
    assert gemini.model_content(result)["parts"] == [image, code, {"text": "ok"}]
    assert dict(result.unknown_fields) == {"candidates[].content.parts[].x_new": 1}
    assert result.text == "ok" and result.status == "completed"


def test_synthetic_ids_are_unique_across_streams() -> None:
    call = chunk([{"functionCall": {"name": "f", "args": {}}}], "STOP")
    del call["responseId"]
    ids = []
    for _ in range(2):
        stream, _ = run(sse(call))
        (tool_call,) = stream.result.tool_calls
        assert tool_call.id_source == "synthetic" and tool_call.id is not None
        assert re.fullmatch(r"gemini-[0-9a-f]{12}-0-0", tool_call.id)
        ids.append(tool_call.id)
    assert ids[0] != ids[1]
    with_id, _ = run(sse(chunk([{"functionCall": {"name": "f", "args": {}}}], "STOP")))
    assert with_id.result.tool_calls[0].id == f"gemini-{RID}-0-0"


# --- the SSE layer and non-SSE bodies -----------------------------------------------


def test_sse_layer_oddities() -> None:
    stream, _events = run(
        b"event: ping\r\ndata: x\r\n\r\ndata: [1, 2]\r\n\r\n" + sse(chunk([{"text": "a"}], "STOP"))
    )
    result = stream.result
    assert dict(result.unknown_events) == {"ping": 1}
    assert result.error is not None and result.error.type == "invalid_payload"


def test_a_json_body_is_read_as_json_and_blank_lines_before_sse_are_sse() -> None:
    body = b"\r\n  " + json.dumps([chunk([{"text": "a"}], "STOP")]).encode()
    stream, _ = run(body)
    result = stream.result
    assert result.status == "completed" and result.text == "a"
    assert [w.code for w in result.warnings] == ["not_sse"]
    assert result.metrics.bytes_received == len(body) and result.metrics.wire_events == 1
    sse_stream = sw.stream("gemini")
    sse_stream.feed(b"\r\n")
    sse_stream.feed(b"\r\n" + sse(chunk([{"text": "b"}], "STOP")))
    sse_stream.close()
    assert sse_stream.result.text == "b" and sse_stream.result.warnings == ()


# --- the fast path ----------------------------------------------------------------


def test_the_sink_takes_matches_before_they_become_tuples(monkeypatch: Any) -> None:
    chunks = [
        chunk([{"text": t}], usageMetadata={"promptTokenCount": i}) for i, t in enumerate("abcdef")
    ]
    body = sse(*chunks, chunk([{"text": "."}], "STOP"))
    stream = sw.stream("gemini")
    events = stream.feed(body[:300])  # the first chunk starts the candidate
    events += stream.feed(body[300:])
    taker = stream._chunks._taker
    assert taker.sunk >= 3  # taken by the decoder's sink, in the last call
    events += stream.close()
    with monkeypatch.context() as unsunk:
        unsunk.setattr(gemini_chunks.GeminiChunks, "arm", lambda self: None)
        _, plain = run(body)
    assert events == plain
    assert stream.result.text == "abcdef."


@pytest.mark.parametrize("fixture", GEMINI_FIXTURES, ids=lambda f: f.name)
def test_fast_path_matches_general_path(fixture: Fixture, monkeypatch: Any) -> None:
    data = fixture.fed_bytes()
    fast = fixture.replay(split_at(data, range(0, len(data), 97)))
    monkeypatch.setattr(gemini.GeminiStream, "shapes", None)
    general = fixture.replay(split_at(data, range(0, len(data), 97)))
    assert fast[1] == general[1]
    assert fast[0].result.usage == general[0].result.usage


def test_fast_path_text_is_consistent_with_content() -> None:
    chunks = [chunk([{"text": t}], usageMetadata={"promptTokenCount": 1}) for t in "abc"]
    chunks.insert(2, chunk([{"text": "T", "thought": True}]))
    chunks.append(chunk([{"text": "d"}], "STOP"))
    stream, _ = run(sse(*chunks))
    assert gemini.model_content(stream.result)["parts"] == [
        {"text": "ab"},
        {"text": "T", "thought": True},
        {"text": "cd"},
    ]


# --- never raises -----------------------------------------------------------------

_ANY_JSON = st.recursive(
    st.one_of(st.none(), st.booleans(), st.integers(), st.text(max_size=5)),
    lambda inner: st.one_of(
        st.lists(inner, max_size=3), st.dictionaries(st.text(max_size=5), inner, max_size=3)
    ),
    max_leaves=8,
)
_PART = st.one_of(
    st.fixed_dictionaries({"text": st.one_of(st.text(max_size=5), _ANY_JSON)}),
    st.fixed_dictionaries(
        {"text": st.text(max_size=5), "thought": st.booleans(), "thoughtSignature": _ANY_JSON}
    ),
    st.fixed_dictionaries(
        {
            "functionCall": st.one_of(
                _ANY_JSON,
                st.fixed_dictionaries(
                    {},
                    optional={
                        "name": st.sampled_from(["f", "g", "", 3]),
                        "args": _ANY_JSON,
                        "id": _ANY_JSON,
                        "willContinue": st.booleans(),
                        "partialArgs": st.one_of(
                            _ANY_JSON,
                            st.lists(
                                st.fixed_dictionaries(
                                    {"jsonPath": st.sampled_from(["$.a", "$.b[0]", "$.a.c", "x"])},
                                    optional={
                                        "stringValue": _ANY_JSON,
                                        "numberValue": _ANY_JSON,
                                        "willContinue": st.booleans(),
                                    },
                                ),
                                max_size=3,
                            ),
                        ),
                    },
                ),
            )
        }
    ),
    _ANY_JSON,
)
_CANDIDATE = st.fixed_dictionaries(
    {},
    optional={
        "content": st.one_of(
            st.fixed_dictionaries({"parts": st.lists(_PART, max_size=3)}), _ANY_JSON
        ),
        "finishReason": st.one_of(st.sampled_from(["STOP", "MAX_TOKENS", "SAFETY"]), _ANY_JSON),
        "index": st.one_of(st.integers(-1, 2), _ANY_JSON),
    },
)
_CHUNK = st.fixed_dictionaries(
    {},
    optional={
        "candidates": st.one_of(st.lists(_CANDIDATE, max_size=2), _ANY_JSON),
        "usageMetadata": st.one_of(
            st.fixed_dictionaries({"promptTokenCount": st.integers(0, 9)}), _ANY_JSON
        ),
        "promptFeedback": _ANY_JSON,
        "error": _ANY_JSON,
        "responseId": _ANY_JSON,
    },
)


@given(st.lists(_CHUNK, max_size=6), st.randoms(use_true_random=False))
def test_no_chunk_sequence_makes_it_raise(chunks: list[Any], rng: Any) -> None:
    data = sse(*chunks)
    points = sorted(rng.sample(range(len(data) + 1), min(4, len(data) + 1)))
    for protocol, body in (("gemini", data), ("gemini-json", json.dumps(chunks).encode())):
        stream = sw.stream(protocol)
        events = []
        for piece in split_at(body, points if protocol == "gemini" else []):
            events += stream.feed(piece)
        events += stream.close()
        result = stream.result
        assert result.final and result.status != "in_progress"
        replayed = sw.result_from_events(events, protocol=protocol)
        assert replayed.status == result.status or result.conflicts


@given(st.binary(max_size=300))
def test_no_bytes_make_it_raise(data: bytes) -> None:
    for protocol in ("gemini", "gemini-json"):
        stream = sw.stream(protocol)
        stream.feed(data)
        stream.close()
        assert stream.result.final


def test_every_gemini_fixture_was_exercised() -> None:
    cases = {f.manifest["case"] for f in GEMINI_FIXTURES}
    twelve = {
        "01-short-text",
        "02-long-text",
        "03-network-splits",
        "04-several-events-one-read",
        "05-keepalives-blank-lines",
        "06-one-tool-call",
        "07-parallel-tool-calls",
        "08-tool-args-split",
        "09-failing-tool",
        "10-in-stream-error",
        "11-unknown-event",
        "12a-disconnect",
        "12b-cancel",
    }
    assert twelve <= cases and len(cases) >= 11 + 32


# --- the fast path's runs (TextUsageTaker) ------------------------------------------

#: Usage snapshots as JSON text: the ones the Rust decoder takes, and the ones it
#: declines (floats, wide or negative-zero integers, a lone surrogate, duplicate
#: keys, deep nesting, not an object), which the Python fast path then takes.
_USAGE_TEXTS = [
    '{"promptTokenCount":1}',
    '{"promptTokenCount":1}',
    '{ "promptTokenCount" : 1 ,\t"candidatesTokenCount":2 }',
    '{"candidatesTokenCount":2,"promptTokenCount":1}',
    '{"promptTokenCount":1.0}',
    '{"promptTokenCount":1e2}',
    '{"promptTokenCount":true,"totalTokenCount":3}',
    '{"promptTokenCount":-0,"totalTokenCount":4}',
    '{"promptTokenCount":-7,"totalTokenCount":4}',
    '{"promptTokenCount":12345678901234567890123}',
    '{"promptTokenCount":123456789012345678}',
    '{"trafficType":"ON_DEMAND"}',
    '{"promptTokenCount":5,"a":"\\ud83d\\ude00 \\u00e9\\n\\"\\\\\\/\\b\\f\\r\\t",'
    '"b":"caf\u00e9 \U0001f642"}',
    '{"promptTokenCount":5,"a":"\\ud800"}',
    '{"promptTokenCount":6,"promptTokenCount":7}',
    '{"promptTokenCount":8,"x":[[[[1]]],[],{}],"y":{"z":null,"w":false,"v":true}}',
    '{"promptTokenCount":9,"x":' + "[" * 40 + "]" * 40 + "}",
    "[1]",
    '{"thoughtsTokenCount":7}',
    '{"candidatesTokenCount":8,"thoughtsTokenCount":2,"cachedContentTokenCount":5}',
    '{"promptTokenCount":10,"k\\u0065y":1,"promptTokensDetails":[{"modality":"TEXT","tokenCount":10}]}',
    "{}",
    '{"promptTokenCount":14}',
]


def _usage_body(usages: list[str], texts: str = "abcdefghijklmnopqrstuvwxyz") -> bytes:
    events = []
    for i, usage in enumerate(usages):
        text = texts[i % len(texts)] if i % 5 else ""
        part = json.dumps({"candidates": [{"content": {"parts": [{"text": text}]}, "index": 0}]})
        events.append(f'data: {part[:-1]},"usageMetadata":{usage}}}\r\n\r\n')
    events.append(sse(chunk([{"text": "."}], "STOP")).decode())
    return "".join(events).encode()


def _replay(body: bytes, chunk_size: int) -> tuple[list[Any], sw.StreamResult]:
    stream = sw.stream("gemini")
    events = [
        e for i in range(0, len(body), chunk_size) for e in stream.feed(body[i : i + chunk_size])
    ]
    events += stream.close()
    return events, stream.result


@pytest.mark.parametrize("chunk_size", [1, 7, 4096])
def test_taken_runs_match_the_general_path(chunk_size: int, monkeypatch: Any) -> None:
    body = _usage_body(_USAGE_TEXTS)
    taken = []
    real = gemini_chunks.TextUsageTaker

    def counting(*args: Any, **kwargs: Any) -> Any:
        taker = real(*args, **kwargs)
        taken.append(taker)
        return taker

    monkeypatch.setattr(gemini_chunks, "TextUsageTaker", counting)
    fast_events, fast = _replay(body, chunk_size)
    assert sum(t.taken for t in taken) >= 10  # the Rust runs were taken
    # The runs again with no sink: every match becomes a tuple first.
    with monkeypatch.context() as unsunk:
        unsunk.setattr(gemini_chunks.GeminiChunks, "arm", lambda self: None)
        tuple_events, _ = _replay(body, chunk_size)
    monkeypatch.setattr(gemini.GeminiStream, "shapes", None)
    general_events, general = _replay(body, chunk_size)
    assert fast_events == general_events == tuple_events
    assert fast.usage == general.usage and fast.warnings == general.warnings
    assert fast.text == general.text and fast.status == general.status
    for f, g in zip(fast_events, general_events, strict=True):
        if isinstance(f, sw.UsageReported):
            assert type(f.usage.raw) is type(g.usage.raw) is ReadOnlyDict
            assert list(f.usage.raw) == list(g.usage.raw)


_FIGURE = st.one_of(st.integers(-(10**20), 10**20), st.booleans(), st.none(), st.floats(0, 9))
_USAGE = st.one_of(
    st.fixed_dictionaries(
        {},
        optional={
            k: _FIGURE
            for k in (
                "promptTokenCount",
                "candidatesTokenCount",
                "totalTokenCount",
                "thoughtsTokenCount",
                "cachedContentTokenCount",
            )
        },
    ),
    _ANY_JSON,
)


@given(st.lists(_USAGE, min_size=1, max_size=6))
def test_taken_runs_match_the_general_path_for_any_usage(usages: list[Any]) -> None:
    body = _usage_body([json.dumps(u, ensure_ascii=bool(i % 2)) for i, u in enumerate(usages)])
    fast_events, fast = _replay(body, 4096)
    saved = gemini.GeminiStream.shapes
    gemini.GeminiStream.shapes = None
    try:
        general_events, general = _replay(body, 4096)
    finally:
        gemini.GeminiStream.shapes = saved
    assert fast_events == general_events
    assert fast.usage == general.usage and fast.warnings == general.warnings


def test_a_sink_goes_with_its_out_list() -> None:
    decoder = sw.SseDecoder()
    taker = sw.stream("gemini")._chunks._taker  # type: ignore[attr-defined]
    with pytest.raises(TypeError, match="go together"):
        decoder.feed_matched(b"data: {}\n\n", gemini_chunks.SHAPES, taker)
    with pytest.raises(TypeError, match="go together"):
        decoder.feed_matched(b"data: {}\n\n", gemini_chunks.SHAPES, None, [])
    with pytest.raises(TypeError, match="TextUsageTaker or a TextTaker"):
        decoder.feed_matched(b"data: {}\n\n", gemini_chunks.SHAPES, object(), [])


# --- usage snapshots decoded by patching the last one (rust/py/src/snapshot.rs) -------

_SNAPSHOT_KEYS = (
    "promptTokenCount",
    "candidatesTokenCount",
    "totalTokenCount",
    "thoughtsTokenCount",
    "cachedContentTokenCount",
)
_COUNT = st.one_of(
    st.integers(0, 10**6),
    st.integers(-(10**18) + 1, 10**18 - 1),
    st.sampled_from([0, -1, 9, 10, 99, 100, 10**17, 10**18 - 1]),
)
#: Values a count may turn into that the patch must not take as an integer.
_ODD = st.sampled_from(
    ["-0", "1.5", "1e3", "1E+2", '"7"', "null", "true", "[1]", "12345678901234567890"]
)
_STEPS = ["counts"] * 4 + ["appear", "vanish", "detail", "odd", "same", "spacing"]


@st.composite
def _snapshot_texts(draw: Any) -> tuple[list[str], str]:
    """A stream's usage snapshots as JSON text, each the last one changed: its
    counts (most often), a field that appears or vanishes, a count in the
    nested ``promptTokensDetails``, a value that is no integer, the spacing,
    or nothing at all; spaced as the Gemini API spaces them or compact."""
    separators = draw(st.sampled_from([(",", ": "), (",", ":"), (", ", " : ")]))
    current: dict[str, Any] = {
        k: draw(_COUNT) for k in draw(st.lists(st.sampled_from(_SNAPSHOT_KEYS), unique=True))
    }
    details = draw(st.one_of(st.none(), _COUNT))
    # Where the nested list goes among the counts (the API puts it before
    # thoughtsTokenCount): a nested count that changes is no outer member's.
    at = draw(st.integers(0, len(_SNAPSHOT_KEYS)))
    texts = []
    for _ in range(draw(st.integers(1, 12))):
        step = draw(st.sampled_from(_STEPS))
        odd: tuple[str, str] | None = None
        if step == "counts" and current:
            for key in draw(st.lists(st.sampled_from(sorted(current)), min_size=1, unique=True)):
                current[key] = draw(_COUNT)
        elif step == "appear":
            current[draw(st.sampled_from(_SNAPSHOT_KEYS))] = draw(_COUNT)
        elif step == "vanish" and current:
            del current[draw(st.sampled_from(sorted(current)))]
        elif step == "detail":
            details = draw(st.one_of(st.none(), _COUNT))
        elif step == "odd" and current:
            odd = (draw(st.sampled_from(sorted(current))), draw(_ODD))
        elif step == "spacing":
            separators = draw(st.sampled_from([(",", ": "), (",", ":"), (", ", " : ")]))
        items = list(current.items())
        if details is not None:
            items.insert(at, ("promptTokensDetails", [{"modality": "TEXT", "tokenCount": details}]))
        body = dict(items)
        if odd is not None:
            body[odd[0]] = "\0odd\0"
        text = json.dumps(body, separators=separators)
        if odd is not None:
            text = text.replace('"\\u0000odd\\u0000"', odd[1])
        texts.append(text)
    return texts, draw(st.sampled_from(["\r\n", "\n"]))


def _snapshot_body(usages: list[str], eol: str, protocol: str) -> bytes:
    datas = []
    for i, usage in enumerate(usages):
        part = json.dumps({"candidates": [{"content": {"parts": [{"text": f"t{i}"}]}, "index": 0}]})
        datas.append(f'{part[:-1]},"usageMetadata":{usage}}}')
    datas.append(json.dumps(chunk([{"text": "."}], "STOP")))
    if protocol == "gemini-json":
        return ("[" + f"{eol},{eol}".join(datas) + "]").encode()
    return "".join(f"data: {d}{eol}{eol}" for d in datas).encode()


def _fast_and_general(body: bytes, protocol: str) -> tuple[Any, Any, Any]:
    def replay() -> tuple[list[Any], sw.Stream]:
        stream = sw.stream(protocol)
        events = [e for i in range(0, len(body), 512) for e in stream.feed(body[i : i + 512])]
        return events + stream.close(), stream

    fast_events, fast = replay()
    owner: Any = gemini.GeminiStream if protocol == "gemini" else gemini_json.JsonBody
    saved = owner.shapes
    owner.shapes = None
    try:
        general_events, general = replay()
    finally:
        owner.shapes = saved
    assert fast_events == general_events
    assert fast.result.usage == general.result.usage
    assert fast.result.warnings == general.result.warnings
    assert fast.result.status == general.result.status
    for f, g in zip(fast_events, general_events, strict=True):
        if isinstance(f, sw.UsageReported):
            assert type(f.usage.raw) is type(g.usage.raw) is ReadOnlyDict
            assert list(f.usage.raw) == list(g.usage.raw)
    taker = fast._chunks._taker  # type: ignore[attr-defined]
    return fast_events, fast, taker


@given(_snapshot_texts(), st.sampled_from(["gemini", "gemini-json"]))
def test_patched_snapshots_match_the_general_path(stream: Any, protocol: str) -> None:
    usages, eol = stream
    _fast_and_general(_snapshot_body(usages, eol, protocol), protocol)


@pytest.mark.parametrize("protocol", ["gemini", "gemini-json"])
@pytest.mark.parametrize("eol", ["\r\n", "\n"])
def test_a_snapshot_whose_counts_change_is_patched(protocol: str, eol: str) -> None:
    # Shaped as the Gemini API sends a 2.5 model's snapshots (workloads.py,
    # gemini-tools): the first without candidatesTokenCount, then each with
    # its counts grown, through the lengths of their digits.
    usages = []
    for i in range(60):
        body: dict[str, Any] = {"promptTokenCount": 1187}
        if i:
            body["candidatesTokenCount"] = 7 * i
        body["totalTokenCount"] = 2196 + 7 * i * i
        body["promptTokensDetails"] = [{"modality": "TEXT", "tokenCount": 1187}]
        body["thoughtsTokenCount"] = 1009
        usages.append(json.dumps(body, separators=(",", ": ")))
    events, _, taker = _fast_and_general(_snapshot_body(usages, eol, protocol), protocol)
    assert taker.taken >= 55 and taker.patched >= 55
    reported = [e.usage for e in events if isinstance(e, sw.UsageReported)]
    assert len(reported) == 60
    assert reported[-1].raw["candidatesTokenCount"] == 7 * 59
    assert reported[-1].output_tokens == 7 * 59 + 1009
    # Each snapshot's mapping is its own; its nested values are the ones of
    # the stream's earlier snapshots that held the same (read-only) values.
    assert len({id(u.raw) for u in reported}) == len(reported)
    details = [{"modality": "TEXT", "tokenCount": 1187}]
    assert all(u.raw["promptTokensDetails"] == details for u in reported)


def test_a_changed_mapping_does_not_change_the_next_snapshot() -> None:
    # The mapping handed out is read-only; one changed behind its back (as
    # dict's own methods can) is no base for the next snapshot's patch.
    usages = [json.dumps({"promptTokenCount": 5, "totalTokenCount": n}) for n in range(10, 20)]
    body = _snapshot_body(usages, "\r\n", "gemini")
    stream = sw.stream("gemini")
    events = stream.feed(body[:300])
    for event in events:
        if isinstance(event, sw.UsageReported):
            dict.__setitem__(event.usage.raw, "promptTokenCount", 99)
            dict.__setitem__(event.usage.raw, "extra", 1)
    events = stream.feed(body[300:]) + stream.close()
    later = [e.usage.raw for e in events if isinstance(e, sw.UsageReported)]
    assert later and all(set(raw) == {"promptTokenCount", "totalTokenCount"} for raw in later)
    assert all(raw["promptTokenCount"] == 5 for raw in later)
    assert stream._chunks._taker.patched >= 5  # type: ignore[attr-defined]
