"""The encoders beyond the fixture round trips: API, the table, grammar, no buffering, rules.

``test_translate_roundtrip.py`` proves the facts survive for every fixture
and target; this module covers the rest: the public API and its misuse, the
mapping table (every downgrade an encoder can report is declared there, and
``docs/translation.md`` is its current rendering), each target's grammar and
the official SDKs' models on every fixture's output, that every content event
is on the wire when ``feed`` returns (no buffering), and the mapping rules one
by one on hand-made events (stop reasons, usage conventions, errors, cut and
cancelled streams, signatures, free-text tools, interleaved calls, options).
"""

from __future__ import annotations

import ast
import json
from pathlib import Path
from typing import Any

import pytest

import streamwire as sw
from fixture_replay import manifests
from streamwire.translate import _docs, _mapping
from streamwire.translate._usage import figures
from translate_facts import differences
from translate_grammar import check, events

REPO = Path(__file__).resolve().parent.parent
TARGETS = sw.known_encoders()
SOURCES = [f for f in manifests() if f.protocol in sw.known_protocols() and not f.messages]


def _roundtrip(
    target: str, source_events: list[sw.Event], **options: Any
) -> tuple[sw.StreamResult, list[sw.Event], bytes, sw.Encoder]:
    enc = sw.encoder(target, created=0, **options)
    wire = enc.feed(source_events) + enc.close()
    back = sw.stream(target)
    got = back.feed(wire) + back.close()
    return back.result, got, wire, enc


def _usage(**reported: Any) -> sw.Usage:
    return sw.Usage(**reported)


def _call(index: int, call_id: str, name: str, args: str, **kw: Any) -> list[sw.Event]:
    parsed = json.loads(args) if args else {}
    return [
        sw.ToolCallStarted(index=index, id=call_id, name=name, **kw),
        sw.ToolCallArgumentsDelta(index=index, id=call_id, delta=args),
        sw.ToolCallCompleted(
            index=index,
            id=call_id,
            name=name,
            type=kw.get("type", "function"),
            raw_arguments=args,
            arguments=parsed,
            invalid_reason=None,
        ),
    ]


START = sw.MessageStarted(message_id="msg_1", model="m-1", role="assistant")


def _end(stop: Any = "stop", status: Any = "completed", raw: str | None = None) -> sw.Event:
    return sw.MessageCompleted(status=status, stop_reason=stop, provider_stop_reason=raw)


# --- the API -------------------------------------------------------------------------


def test_encoders_are_registered() -> None:
    assert (
        sw.ENCODERS
        == sw.known_encoders()
        == (
            "anthropic",
            "gemini",
            "openai-chat",
            "openai-responses",
        )
    )
    for target in TARGETS:
        enc = sw.encoder(target)
        assert isinstance(enc, sw.Encoder)
        assert enc.target == target
        assert enc.content_type == "text/event-stream"
        assert enc.downgrades == []


def test_unknown_target_names_the_known_ones() -> None:
    with pytest.raises(ValueError, match="openai-chat"):
        sw.encoder("openai-completions")


@pytest.mark.parametrize("target", TARGETS)
def test_feeding_after_close_is_misuse(target: str) -> None:
    enc = sw.encoder(target)
    enc.feed([START, sw.TextDelta(text="x"), _end()])
    enc.close()
    assert enc.closed
    assert enc.close() == b""
    with pytest.raises(sw.UsageError):
        enc.feed([sw.TextDelta(text="late")])


@pytest.mark.parametrize("target", TARGETS)
def test_feeding_something_else_is_misuse(target: str) -> None:
    with pytest.raises(TypeError, match="not a unified event"):
        sw.encoder(target).feed(["text"])  # type: ignore[list-item]


def test_chat_reasoning_option_is_checked() -> None:
    with pytest.raises(ValueError, match="chat_reasoning"):
        sw.encoder("openai-chat", chat_reasoning="thoughts")


@pytest.mark.parametrize("target", TARGETS)
def test_options_name_the_message(target: str) -> None:
    result, _, _, _ = _roundtrip(
        target, [START, sw.TextDelta(text="hi"), _end()], model="over", response_id="resp_9"
    )
    assert (result.message_id, result.model, result.text) == ("resp_9", "over", "hi")


# --- the table ---------------------------------------------------------------------


def test_docs_are_the_rendered_table() -> None:
    doc = (REPO / "docs" / "translation.md").read_text(encoding="utf-8")
    assert doc == _docs.render_markdown(), (
        "docs/translation.md is stale: python -m streamwire.translate._docs > docs/translation.md"
    )


def test_every_row_has_every_target_and_unique_features() -> None:
    features = [row.feature for row in _mapping.ROWS]
    assert len(features) == len(set(features))
    for row in _mapping.ROWS:
        assert set(row.cells) == set(TARGETS), row.feature


def _reported(module: str) -> set[str]:
    """The feature names a module passes to ``_downgrade`` (literal strings; the
    one computed name is a built-in call's type, ``_downgrade_builtin``'s, each
    of ``BUILTIN_CALLS`` a row of its own)."""
    path = REPO / "python" / "streamwire" / "translate" / f"{module}.py"
    found = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and node.func.attr == "_downgrade"
        ):
            if isinstance(node.args[0], ast.Constant):
                found.add(node.args[0].value)
            else:
                assert ast.unparse(node.args[0]) == "call_type", ast.dump(node)
                found |= set(_mapping.BUILTIN_CALLS)
    return found


@pytest.mark.parametrize(
    ("target", "modules"),
    [
        ("openai-chat", ("openai_chat", "_base")),
        ("openai-responses", ("openai_responses", "_sequence", "_base")),
        ("anthropic", ("anthropic", "_sequence", "_base")),
        ("gemini", ("gemini", "_base")),
    ],
)
def test_every_reportable_downgrade_is_declared(target: str, modules: tuple[str, ...]) -> None:
    # Shared code that a target never reaches: responses carries free text (FREE_TEXT).
    unreachable = {("openai-responses", "custom_tool_call")}
    for module in modules:
        for feature in _reported(module):
            if (target, feature) not in unreachable:
                assert _mapping.downgrade_detail(target, feature)  # KeyError: undeclared


def test_an_undeclared_downgrade_cannot_be_reported() -> None:
    with pytest.raises(KeyError):
        _mapping.downgrade_detail("openai-chat", "text")
    enc = sw.encoder("openai-chat")
    with pytest.raises(KeyError):
        enc._downgrade("refusal")  # chat carries refusals: nothing to declare


# --- grammar and the SDKs' models, on every fixture -----------------------------------


@pytest.mark.parametrize("target", TARGETS)
def test_every_fixture_is_grammatical_in_every_target(target: str) -> None:
    problems = []
    for fixture in SOURCES:
        _, got = fixture.replay([fixture.fed_bytes()])
        enc = sw.encoder(target, source=fixture.protocol, created=0)
        wire = enc.feed(got) + enc.close()
        problems += [f"{fixture.name}: {p}" for p in check(target, wire)]
    assert not problems, "\n".join(problems[:20])


def test_the_grammar_checks_can_fail() -> None:
    chat = sw.encoder("openai-chat", created=0)
    wire = chat.feed([START, *_call(0, "c1", "f", "{}"), _end("tool_calls")]) + chat.close()
    broken = wire.replace(b'"index":0,"id"', b'"index":1,"id"')
    assert any("skips" in p for p in check("openai-chat", broken))
    responses = sw.encoder("openai-responses", created=0)
    wire = responses.feed([START, sw.TextDelta(text="a"), _end()]) + responses.close()
    cut = b"\n\n".join(wire.split(b"\n\n")[:2] + wire.split(b"\n\n")[3:])
    assert any("sequence_number" in p for p in check("openai-responses", cut))


# --- no buffering -------------------------------------------------------------------


@pytest.mark.parametrize("target", TARGETS)
def test_every_content_event_is_on_the_wire_when_feed_returns(target: str) -> None:
    enc = sw.encoder(target, created=0)
    assert enc.feed([START]) or target == "gemini"  # gemini has no start chunk
    stream = [
        sw.TextDelta(text="Hel"),
        sw.TextDelta(text="lo"),
        sw.ReasoningDelta(text="think"),
        sw.TextDelta(text="!"),
    ]
    for event in stream:
        out = enc.feed([event])
        assert out, f"{target} held back {event}"
        assert events(out)
    if target != "gemini":  # gemini sends calls whole, at their end
        enc.feed([sw.ToolCallStarted(index=0, id="c", name="f")])
        for piece in ('{"a"', ":1}"):
            assert enc.feed([sw.ToolCallArgumentsDelta(index=0, id="c", delta=piece)])


# --- the rules, one by one -----------------------------------------------------------


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("stop", ["stop", "length", "content_filter", "pause", "other", None])
def test_stop_reasons_arrive_or_are_declared(target: str, stop: Any) -> None:
    status = "truncated" if stop == "length" else "completed"
    source = [START, sw.TextDelta(text="x"), _end(stop, status)]
    result, got, _, enc = _roundtrip(target, source)
    src = sw.result_from_events(source, protocol="openai-chat")
    assert not differences("openai-chat", src, source, target, result, got, enc.downgrades)
    assert result.status == status
    lossy = stop is None or (target, stop) in _mapping.LOSSY_STOP_REASONS
    assert ("stop_reason" in {d.feature for d in enc.downgrades}) == lossy


@pytest.mark.parametrize("target", ["anthropic", "gemini"])
def test_a_source_raw_stop_reason_the_target_shares_is_kept(target: str) -> None:
    raw = "stop_sequence" if target == "anthropic" else "RECITATION"
    stop = "stop" if target == "anthropic" else "content_filter"
    result, _, _, _ = _roundtrip(target, [START, sw.TextDelta(text="x"), _end(stop, raw=raw)])
    assert result.provider_stop_reason == raw


@pytest.mark.parametrize("target", TARGETS)
def test_usage_is_converted_between_input_conventions(target: str) -> None:
    # Anthropic's input_tokens excludes the cache: 100 fresh + 50 read + 10 written.
    usage = _usage(
        input_tokens=100,
        output_tokens=20,
        cache_read_tokens=50,
        cache_creation_tokens=10,
        final=True,
    )
    source = [START, sw.UsageReported(usage=usage), sw.TextDelta(text="x"), _end()]
    result, got, _, enc = _roundtrip(target, source, source="anthropic")
    assert result.usage is not None
    back = figures(result.usage, target)
    assert (back.input_total, back.output, back.cache_read) == (160, 20, 50)
    src = sw.result_from_events(source, protocol="anthropic")
    assert not differences("anthropic", src, source, target, result, got, enc.downgrades)
    declared = {d.feature for d in enc.downgrades}
    assert ("usage_cache_creation" in declared) == (target in ("openai-chat", "gemini"))


def test_usage_convention_is_inferred_from_the_report() -> None:
    chat = _usage(input_tokens=10, raw={"prompt_tokens": 10})
    anthropic = _usage(input_tokens=10, cache_read_tokens=5, raw={"input_tokens": 10})
    bedrock = _usage(input_tokens=10, cache_read_tokens=5, raw={"inputTokens": 10})
    assert figures(chat, None).input_total == 10
    assert figures(anthropic, None).input_total == 15
    assert figures(bedrock, None).input_total == 15


def test_anthropic_without_usage_declares_the_placeholder() -> None:
    _, _, _, enc = _roundtrip("anthropic", [START, sw.TextDelta(text="x"), _end()])
    assert [d.feature for d in enc.downgrades] == ["usage_placeholder"]


ERROR = sw.ErrorReceived(
    phase="provider", type="overloaded_error", code=529, message="busy", retryable=True
)


@pytest.mark.parametrize("target", TARGETS)
def test_an_error_is_the_targets_error_event_and_ends_the_stream(target: str) -> None:
    source = [
        START,
        sw.TextDelta(text="par"),
        ERROR,
        sw.TextDelta(text="tial"),
        _end(None, "error"),
    ]
    result, got, wire, enc = _roundtrip(target, source)
    assert result.status == "error"
    assert result.error is not None and result.error.message == "busy"
    assert result.error.type == "overloaded_error"
    assert b"tial" not in wire
    declared = {d.feature for d in enc.downgrades}
    assert "after_error" in declared
    assert ("error_code" in declared) == (target == "anthropic")
    src = sw.result_from_events(source, protocol="anthropic")
    assert not differences("anthropic", src, source, target, result, got, enc.downgrades)


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("status", ["incomplete", "cancelled"])
def test_a_cut_stream_stays_cut(target: str, status: Any) -> None:
    source = [START, sw.TextDelta(text="half"), _end(None, status)]
    result, _, wire, enc = _roundtrip(target, source)
    assert result.status == "incomplete"
    assert result.text == "half"
    for terminal in (
        b"[DONE]",
        b'finish_reason":"',
        b"message_stop",
        b"response.completed",
        b"finishReason",
    ):
        assert terminal not in wire
    assert ("cancelled" in {d.feature for d in enc.downgrades}) == (status == "cancelled")


@pytest.mark.parametrize("target", TARGETS)
def test_a_conflicting_source_arrives_as_an_error(target: str) -> None:
    result, _, _, enc = _roundtrip(
        target, [START, sw.TextDelta(text="x"), _end("stop", "protocol_conflict")]
    )
    assert result.status == "error"
    assert result.error is not None and result.error.type == "protocol_conflict"
    assert "protocol_conflict" in {d.feature for d in enc.downgrades}


def test_anthropic_signature_closes_its_thinking_block() -> None:
    source = [
        START,
        sw.ReasoningDelta(text="hmm"),
        sw.ReasoningDelta(signature="sig-1"),
        sw.ReasoningDelta(redacted="opaque"),
        sw.TextDelta(text="answer"),
        _end(),
    ]
    result, got, wire, _ = _roundtrip("anthropic", source)
    kinds = [
        json.loads(e.data)["content_block"]["type"]
        for e in events(wire)
        if e.event == "content_block_start"
    ]
    assert kinds == ["thinking", "redacted_thinking", "text"]
    assert result.choices[0].reasoning_signatures == ("sig-1",)
    assert [e.redacted for e in got if isinstance(e, sw.ReasoningDelta) and e.redacted] == [
        "opaque"
    ]


def test_gemini_signature_rides_on_the_call_it_signs() -> None:
    source = [
        START,
        sw.ReasoningDelta(signature="sig-2"),
        *_call(0, "c1", "f", '{"a":1}'),
        _end("tool_calls"),
    ]
    result, _, wire, _ = _roundtrip("gemini", source)
    parts = [
        p
        for e in events(wire)
        for c in json.loads(e.data).get("candidates", [])
        for p in c.get("content", {}).get("parts", [])
    ]
    assert parts == [
        {"functionCall": {"name": "f", "args": {"a": 1}, "id": "c1"}, "thoughtSignature": "sig-2"}
    ]
    assert result.choices[0].reasoning_signatures == ("sig-2",)
    assert result.tool_calls[0].id == "c1"


@pytest.mark.parametrize("target", ["openai-chat", "anthropic", "gemini"])
def test_free_text_tool_input_is_wrapped_as_json(target: str) -> None:
    text = 'line one\n"quoted" \\ é'
    source = [
        START,
        sw.ToolCallStarted(index=0, id="ct1", name="shell", type="custom_tool_call"),
        sw.ToolCallArgumentsDelta(index=0, id="ct1", delta=text[:7]),
        sw.ToolCallArgumentsDelta(index=0, id="ct1", delta=text[7:]),
        sw.ToolCallCompleted(
            index=0,
            id="ct1",
            name="shell",
            type="custom_tool_call",
            raw_arguments=text,
            arguments={"input": text},
            invalid_reason=None,
        ),
        _end("tool_calls"),
    ]
    result, _, _, enc = _roundtrip(target, source)
    assert result.tool_calls[0].arguments == {"input": text}
    assert "custom_tool_call" in {d.feature for d in enc.downgrades}


def test_responses_carries_free_text_tools_natively() -> None:
    source = [
        START,
        sw.ToolCallStarted(index=0, id="ct1", name="shell", type="custom_tool_call"),
        sw.ToolCallArgumentsDelta(index=0, id="ct1", delta="ls -la"),
        sw.ToolCallCompleted(
            index=0,
            id="ct1",
            name="shell",
            type="custom_tool_call",
            raw_arguments="ls -la",
            arguments={"input": "ls -la"},
            invalid_reason=None,
        ),
        _end("tool_calls"),
    ]
    result, _, _, enc = _roundtrip("openai-responses", source)
    assert result.tool_calls[0].raw_arguments == "ls -la"
    assert result.tool_calls[0].type == "custom_tool_call"
    assert enc.downgrades == []


@pytest.mark.parametrize("target", ["openai-responses", "anthropic"])
def test_a_call_held_for_its_identity_and_never_completed_is_declared(target: str) -> None:
    # The block's start needs the id and name; the source never sent them.
    source = [
        START,
        sw.ToolCallStarted(index=0, id=None, name=None),
        sw.ToolCallArgumentsDelta(index=0, id=None, delta='{"a":'),
        _end(None, "incomplete"),
    ]
    result, _, _, enc = _roundtrip(target, source)
    assert result.tool_calls == ()
    assert [(d.feature, d.count) for d in enc.downgrades if d.feature != "usage_placeholder"] == [
        ("unfinished_tool_call", 1)
    ]


def _interleaved() -> list[sw.Event]:
    # Two calls whose fragments alternate (some chat servers), completed at the end.
    out: list[sw.Event] = [START]
    out += [
        sw.ToolCallStarted(index=0, id="a", name="f"),
        sw.ToolCallStarted(index=1, id="b", name="g"),
    ]
    for i, piece in enumerate(['{"x":', '{"y":', "1}", "2}"]):
        out.append(sw.ToolCallArgumentsDelta(index=i % 2, id="ab"[i % 2], delta=piece))
    for i, args in enumerate(['{"x":1}', '{"y":2}']):
        out.append(
            sw.ToolCallCompleted(
                index=i,
                id="ab"[i],
                name="fg"[i],
                type="function",
                raw_arguments=args,
                arguments=json.loads(args),
                invalid_reason=None,
            )
        )
    return [*out, _end("tool_calls")]


@pytest.mark.parametrize("target", TARGETS)
def test_interleaved_calls_are_put_in_sequence_without_loss(target: str) -> None:
    source = _interleaved()
    result, _, wire, enc = _roundtrip(target, source)
    assert [(c.id, c.arguments) for c in result.tool_calls] == [("a", {"x": 1}), ("b", {"y": 2})]
    assert result.executable
    assert not check(target, wire)
    assert {d.feature for d in enc.downgrades} <= {"usage_placeholder"}


def test_a_late_fragment_after_whole_json_is_declared() -> None:
    source = [
        START,
        *(_call(0, "a", "f", '{"x":1}')[:2]),
        sw.ToolCallStarted(index=1, id="b", name="g"),
        sw.ToolCallArgumentsDelta(index=0, id="a", delta=" "),
        sw.ToolCallArgumentsDelta(index=1, id="b", delta="{}"),
    ]
    enc = sw.encoder("anthropic", created=0)
    enc.feed(source)
    assert "interleaved_tool_calls" in {d.feature for d in enc.downgrades}


@pytest.mark.parametrize(
    ("option", "field"),
    [("reasoning_content", b"reasoning_content"), ("reasoning", b'"reasoning"'), ("none", None)],
)
def test_chat_reasoning_field(option: Any, field: bytes | None) -> None:
    source = [START, sw.ReasoningDelta(text="deep", kind="summary"), sw.TextDelta(text="x"), _end()]
    result, _, wire, enc = _roundtrip("openai-chat", source, chat_reasoning=option)
    declared = {d.feature for d in enc.downgrades}
    if field is None:
        assert result.reasoning == "" and "reasoning" in declared
    else:
        assert field in wire and result.reasoning == "deep" and "reasoning_summary" in declared


@pytest.mark.parametrize("target", TARGETS)
def test_extra_choices_are_carried_or_declared(target: str) -> None:
    source: list[sw.Event] = []
    for choice in (0, 1):
        source += [
            sw.MessageStarted(message_id="m", choice=choice),
            sw.TextDelta(text=f"c{choice}", choice=choice),
        ]
    source += [
        sw.MessageCompleted(
            status="completed", stop_reason="stop", provider_stop_reason=None, choice=c
        )
        for c in (0, 1)
    ]
    result, _, _, enc = _roundtrip(target, source)
    texts = [c.text for c in result.choices]
    if target in ("anthropic", "openai-responses"):
        assert texts == ["c0"] and "extra_choices" in {d.feature for d in enc.downgrades}
    else:
        assert texts == ["c0", "c1"]


@pytest.mark.parametrize("target", TARGETS)
def test_the_comparison_can_fail(target: str) -> None:
    """A lost text piece, or an undeclared downgrade, is found by ``differences``."""
    source = [START, sw.TextDelta(text="one"), sw.TextDelta(text="two"), _end()]
    enc = sw.encoder(target, created=0)
    pieces = [enc.feed([e]) for e in source] + [enc.close()]
    wire = b"".join(p for i, p in enumerate(pieces) if i != 2)  # "two" dropped
    back = sw.stream(target)
    got = back.feed(wire) + back.close()
    src = sw.result_from_events(source, protocol="openai-chat")
    assert differences("openai-chat", src, source, target, back.result, got, enc.downgrades)
    refusal = [START, sw.RefusalDelta(text="no"), _end("content_filter")]
    result, got, _, enc = _roundtrip(target, refusal)
    src = sw.result_from_events(refusal, protocol="openai-chat")
    assert not differences("openai-chat", src, refusal, target, result, got, enc.downgrades)
    if enc.downgrades:
        assert differences("openai-chat", src, refusal, target, result, got, [])
