"""Translation of the built-in tool calls the caller runs (OpenAI Responses items).

``local_shell_call``, ``shell_call``, ``apply_patch_call``, ``tool_search_call``
and ``computer_call`` are client calls with item types and output items of
their own. Each recorded stream of one, re-encoded into each target:
``openai-responses`` sends the item of its own type, and the translated
stream's next turn is still answered in the item's own output shape (the
openai SDK's request types accept both); the other targets send a function
call named after the tool with the same arguments, and declare that the item
type is lost, never silently. Then the edges: arguments that are not the
item's inputs, and a call the source never completed.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from openai.types.responses import ResponseInputItemParam
from pydantic import TypeAdapter

import streamwire as sw
from fixture_replay import Fixture, manifests
from streamwire.translate._mapping import BUILTIN_CALLS, downgrade_detail
from translate_facts import differences
from translate_grammar import check

TARGETS = sw.known_encoders()
BUILTIN_FIXTURES = {
    "local_shell_call": "openai-responses/vercel-local-shell",
    "shell_call": "openai-responses/vercel-shell-local",
    "apply_patch_call": "openai-responses/vercel-apply-patch",
    "tool_search_call": "openai-responses/vercel-client-tool-search",
    "computer_call": "openai-responses/dotnet-computer-call",
}
FIXTURES = {f.name: f for f in manifests()}
#: An answer for each kind (what a caller gives ``sw.tool_result``).
OUTPUTS: dict[str, Any] = {
    "local_shell_call": "Desktop\n",
    "shell_call": "Desktop\n",
    "apply_patch_call": "applied",
    "tool_search_call": [
        {"type": "function", "name": "weather", "parameters": None, "strict": False}
    ],
    "computer_call": {"type": "computer_screenshot", "file_id": "file_1"},
}
INPUT_ITEMS = TypeAdapter(list[ResponseInputItemParam])


def _translate(fixture: Fixture, target: str) -> tuple[sw.StreamResult, bytes, sw.Encoder]:
    source = sw.stream(fixture.protocol)
    enc = sw.encoder(target, source=fixture.protocol, created=0)
    wire = enc.feed(source.feed(fixture.raw)) + enc.feed(source.close()) + enc.close()
    back = sw.stream(target)
    back.feed(wire)
    back.close()
    return back.result, wire, enc


def test_every_built_in_call_type_has_a_recorded_stream_and_a_row() -> None:
    from streamwire.protocols.openai_responses_calls import BUILTIN_CLIENT_CALLS

    assert set(BUILTIN_FIXTURES) == set(BUILTIN_CALLS) == BUILTIN_CLIENT_CALLS
    for call_type in BUILTIN_CALLS:
        assert FIXTURES[BUILTIN_FIXTURES[call_type]].expect["tool_calls"][0]["type"] == call_type
        for target in TARGETS:
            assert call_type in downgrade_detail(target, call_type)


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("call_type", list(BUILTIN_FIXTURES))
def test_a_built_in_call_keeps_its_item_or_declares_its_loss(call_type: str, target: str) -> None:
    fixture = FIXTURES[BUILTIN_FIXTURES[call_type]]
    want = fixture.expect["tool_calls"][0]
    result, wire, enc = _translate(fixture, target)
    assert check(target, wire) == []
    assert result.status == "completed" and result.executable
    (call,) = result.tool_calls
    assert (call.id, call.name, call.arguments) == (want["id"], want["name"], want["arguments"])
    declared = {d.feature: d.count for d in enc.downgrades}
    if target == "openai-responses":
        assert call.type == call_type and call_type not in declared
        turn = sw.assistant_message(result)
        answer = sw.tool_result(result, call, OUTPUTS[call_type])
        INPUT_ITEMS.validate_python([*turn, answer], strict=True)
        assert [i["type"] for i in turn if i.get("call_id") == call.id] == [call_type]
    else:
        assert call.type != call_type and declared.get(call_type) == 1


@pytest.mark.parametrize(
    ("call_type", "arguments"),
    [
        ("shell_call", {"cmd": "ls"}),  # not the item's input field
        ("apply_patch_call", {"operation": "create a.txt"}),  # not an object
        ("computer_call", {"pending_safety_checks": []}),  # no action
        ("local_shell_call", {}),
    ],
)
def test_arguments_that_are_not_the_items_inputs_make_a_declared_function_call(
    call_type: str, arguments: dict[str, Any]
) -> None:
    raw = json.dumps(arguments)
    name = BUILTIN_CALLS[call_type].tool
    events: list[sw.Event] = [
        sw.MessageStarted(message_id="resp_1", model="m"),
        sw.ToolCallStarted(index=0, id="call_1", name=name, type=call_type),
        sw.ToolCallCompleted(
            index=0,
            id="call_1",
            name=name,
            type=call_type,
            raw_arguments=raw,
            arguments=arguments,
            invalid_reason=None,
        ),
        sw.MessageCompleted(
            status="completed", stop_reason="tool_calls", provider_stop_reason=None
        ),
    ]
    enc = sw.encoder("openai-responses", created=0)
    wire = enc.feed(events) + enc.close()
    assert check("openai-responses", wire) == []
    back = sw.stream("openai-responses")
    back.feed(wire)
    back.close()
    (call,) = back.result.tool_calls
    assert (call.type, call.name, call.raw_arguments) == ("function_call", name, raw)
    assert [d.feature for d in enc.downgrades] == [call_type]


@pytest.mark.parametrize("target", TARGETS)
def test_a_built_in_call_the_source_never_completed_is_declared(target: str) -> None:
    fixture = FIXTURES[BUILTIN_FIXTURES["local_shell_call"]]
    cut = fixture.raw[: fixture.raw.rindex(b"event: response.output_item.done")]
    source = sw.stream(fixture.protocol)
    enc = sw.encoder(target, source=fixture.protocol, created=0)
    wire = enc.feed(source.feed(cut)) + enc.feed(source.close()) + enc.close()
    assert source.result.status == "incomplete" and source.result.tool_calls
    declared = {d.feature for d in enc.downgrades}
    back = sw.stream(target)
    back.feed(wire)
    back.close()
    if target in ("openai-responses", "gemini"):
        # Held to be sent whole: never sent, and said so.
        assert back.result.tool_calls == () and "unfinished_tool_call" in declared
    else:
        # Sent as a function call as it began, left open as the source left it.
        assert [c.name for c in back.result.tool_calls] == ["local_shell"]
        assert "local_shell_call" in declared


def test_the_round_trip_comparison_finds_an_undeclared_loss_of_the_item_type() -> None:
    # test_translate_roundtrip's rule for these calls, shown to fail without the downgrade.
    fixture = FIXTURES[BUILTIN_FIXTURES["shell_call"]]
    source = sw.stream(fixture.protocol)
    src_events = source.feed(fixture.raw) + source.close()
    enc = sw.encoder("anthropic", source=fixture.protocol, created=0)
    back = sw.stream("anthropic")
    tgt_events = back.feed(enc.feed(src_events) + enc.close()) + back.close()
    args = (fixture.protocol, source.result, src_events, "anthropic", back.result, tgt_events)
    assert differences(*args, enc.downgrades) == []
    kept = [d for d in enc.downgrades if d.feature != "shell_call"]
    assert differences(*args, kept) == [
        "choice 0 call 0: a shell_call arrived as a tool_use (no 'shell_call' downgrade declared)"
    ]
