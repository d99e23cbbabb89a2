"""Shapes real providers send beyond the references, around their recorded fixtures.

Each shape has a recorded (or documented) fixture in ``fixtures/providers/``,
replayed under every chunking by ``test_fixtures.py``; this module covers
their edges: broken variants, options, the tool results of OpenAI's built-in
tools the caller runs (shell, apply patch, tool search, computer use), and
the identities those streams correlate by.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

import streamwire as sw
from bedrock_frames import converse as C
from fixture_replay import Fixture, manifests

FIXTURES = {f.name: f for f in manifests()}


def _replay(name: str, **options: Any) -> sw.Stream:
    fixture: Fixture = FIXTURES[name]
    stream = sw.stream(fixture.protocol, **{**fixture.manifest.get("options", {}), **options})
    stream.feed(fixture.raw)
    stream.close()
    return stream


def _run(protocol: str, data: bytes, **options: Any) -> sw.StreamResult:
    stream = sw.stream(protocol, **options)
    stream.feed(data)
    stream.close()
    return stream.result


def _chat(*deltas: dict[str, Any], finish: str | None = "stop", done: bool = True) -> bytes:
    chunks = [{"choices": [{"index": 0, "delta": d, "finish_reason": None}]} for d in deltas]
    if finish is not None:
        chunks.append({"choices": [{"index": 0, "delta": {}, "finish_reason": finish}]})
    body = "".join(f"data: {json.dumps(c)}\n\n" for c in chunks)
    return (body + ("data: [DONE]\n\n" if done else "")).encode()


def _responses(*events: dict[str, Any]) -> bytes:
    return "".join(f"event: {e['type']}\ndata: {json.dumps(e)}\n\n" for e in events).encode()


# --- openai-chat: typed content parts (Mistral) -------------------------------------


def test_content_parts_read_text_and_reasoning_and_count_the_rest() -> None:
    parts = [
        {"type": "thinking", "thinking": [{"type": "text", "text": "hm"}, {"type": "reference"}]},
        {"type": "thinking", "thinking": " ok"},
        {"type": "text", "text": "yes"},
        {"type": "image_url", "image_url": "https://example.com/a.png"},
    ]
    result = _run("openai-chat", _chat({"content": parts}, {"content": "!"}))
    assert result.status == "completed"
    assert (result.text, result.reasoning) == ("yes!", "hm ok")
    assert dict(result.unknown_fields) == {
        "choices[].delta.content[].thinking[].reference": 1,
        "choices[].delta.content[].image_url": 1,
    }


@pytest.mark.parametrize(
    "parts",
    [["text"], [{"type": "text", "text": 3}], [{"type": "thinking", "thinking": {"a": 1}}]],
)
def test_broken_content_parts_are_conflicts(parts: list[Any]) -> None:
    result = _run("openai-chat", _chat({"content": parts}))
    assert result.status == "protocol_conflict" and len(result.conflicts) == 1


def test_an_unknown_part_type_is_counted_under_a_bounded_name() -> None:
    result = _run("openai-chat", _chat({"content": [{"type": "x" * 500}, {"text": "t"}]}))
    assert result.status == "completed"
    assert dict(result.unknown_fields) == {
        "choices[].delta.content[]." + "x" * 64: 1,
        "choices[].delta.content[].<untyped>": 1,
    }


# --- openai-chat: annotations and executed tools ----------------------------------------


def test_annotations_of_choice_0_are_kept_in_order_and_a_non_list_is_a_conflict() -> None:
    first, second = {"type": "url_citation", "n": 1}, {"type": "url_citation", "n": 2}
    result = _run("openai-chat", _chat({"annotations": [first]}, {"annotations": [second]}))
    assert result.provider_content == ({"annotations": [first, second]},)
    assert _run("openai-chat", _chat({"annotations": {"a": 1}})).status == "protocol_conflict"


def test_an_executed_tool_that_changes_its_arguments_is_a_conflict() -> None:
    a = {"index": 0, "type": "search", "arguments": '{"q": "a"}'}
    result = _run("openai-chat", _chat({"executed_tools": [a]}, {"executed_tools": [a]}))
    assert result.status == "completed" and not result.executable
    call = result.tool_calls[0]
    assert (call.executor, call.id_source, call.arguments) == ("server", "synthetic", {"q": "a"})
    b = {**a, "arguments": '{"q": "b"}'}
    changed = _run("openai-chat", _chat({"executed_tools": [a]}, {"executed_tools": [b]}))
    assert changed.status == "protocol_conflict"
    for broken in ([{"type": "search"}], {"index": 0}):
        assert _run("openai-chat", _chat({"executed_tools": broken})).status == "protocol_conflict"


def test_executed_tools_beside_a_client_call_leave_the_batch_to_the_client_call() -> None:
    call = {"index": 0, "id": "call_1", "type": "function"}
    call["function"] = {"name": "f", "arguments": "{}"}
    wire = _chat(
        {"executed_tools": [{"index": 0, "type": "search", "arguments": "{}"}]},
        {"tool_calls": [call]},
        finish="tool_calls",
    )
    result = _run("openai-chat", wire)
    assert result.executable
    assert [c.executor for c in result.tool_calls] == ["server", "client"]
    with pytest.raises(sw.ToolResultError, match="run by the provider"):
        sw.tool_result(result, "executed_tool-0-0", "x")


# --- openai-chat: a missing finish_reason --------------------------------------------------


def test_missing_finish_reason_is_validated() -> None:
    with pytest.raises(sw.UsageError, match="missing_finish_reason"):
        sw.stream("openai-chat", missing_finish_reason="stop")  # type: ignore[arg-type]


def test_without_done_the_option_completes_nothing() -> None:
    wire = _chat({"content": "cut"}, finish=None, done=False)
    for mode in ("incomplete", "completed"):
        result = _run("openai-chat", wire, missing_finish_reason=mode)
        assert result.status == "incomplete" and result.warnings == (), mode


def test_the_option_ends_only_the_choices_without_a_finish_reason() -> None:
    wire = (
        b'data: {"choices":[{"index":0,"delta":{"content":"a"},"finish_reason":"length"}]}\n\n'
        b'data: {"choices":[{"index":1,"delta":{"content":"b"}}]}\n\ndata: [DONE]\n\n'
    )
    default = _run("openai-chat", wire)
    assert [c.status for c in default.choices] == ["truncated", "incomplete"]
    assert "choice(s) 1 " in default.warnings[0].message
    accepted = _run("openai-chat", wire, missing_finish_reason="completed")
    assert [c.status for c in accepted.choices] == ["truncated", "completed"]
    assert [c.stop_reason for c in accepted.choices] == ["length", "other"]


# --- openai-responses: built-in tools the caller runs --------------------------------------


def _item_stream(item: dict[str, Any]) -> bytes:
    response = {"id": "resp_b", "status": "in_progress", "output": []}
    done = {**response, "status": "completed", "output": [item]}
    return _responses(
        {"type": "response.created", "response": response},
        {"type": "response.output_item.added", "output_index": 0, "item": item},
        {"type": "response.output_item.done", "output_index": 0, "item": item},
        {"type": "response.completed", "response": done},
    )


SHELL = {"type": "shell_call", "id": "sh_1", "call_id": "call_sh", "status": "completed"}
SHELL["action"] = {"commands": ["ls"], "max_output_length": 100, "timeout_ms": None}


@pytest.mark.parametrize(
    ("environment", "executor"),
    [
        (None, "client"),
        ({"type": "local"}, "client"),
        ({"type": "container_auto"}, "server"),
        ({"type": "container_reference", "container_id": "cntr_1"}, "server"),
        ("local", "server"),
    ],
)
def test_a_shell_call_is_the_callers_unless_its_environment_is_hosted(
    environment: Any, executor: str
) -> None:
    item = dict(SHELL) if environment is None else {**SHELL, "environment": environment}
    result = _run("openai-responses", _item_stream(item))
    assert result.status == "completed"
    assert result.tool_calls[0].executor == executor
    assert result.executable is (executor == "client")


def test_a_server_tool_search_keeps_its_item_id() -> None:
    item = {"type": "tool_search_call", "id": "tsc_1", "call_id": None, "execution": "server"}
    item["arguments"] = {"paths": ["f"]}
    result = _run("openai-responses", _item_stream(item))
    call = result.tool_calls[0]
    assert (call.id, call.executor, result.executable) == ("tsc_1", "server", False)


def test_built_in_calls_are_checked_against_the_declared_tool_types() -> None:
    wire = _item_stream(SHELL)
    declared = _run("openai-responses", wire, tools=[{"type": "shell"}])
    assert declared.executable
    other = _run("openai-responses", wire, tools=[{"type": "function", "name": "shell"}])
    call = other.tool_calls[0]
    assert not other.executable and call.state == "rejected"
    assert call.invalid_reason is not None and "built-in tool 'shell'" in call.invalid_reason


def test_built_in_tool_results_take_their_own_item_shapes() -> None:
    shell = _run("openai-responses", _item_stream(SHELL))
    runs = [{"stdout": "", "stderr": "no", "outcome": {"type": "exit", "exit_code": 2}}]
    assert sw.tool_result(shell, "call_sh", runs)["output"] == runs
    failed = sw.tool_result(shell, "call_sh", "boom", is_error=True)
    assert failed["output"][0]["outcome"] == {"type": "exit", "exit_code": 1}
    assert failed["max_output_length"] == 100
    with pytest.raises(sw.ToolResultError, match="shell_call's output"):
        sw.tool_result(shell, "call_sh", {"stdout": "x"})
    timeout = {"stdout": "", "stderr": "", "outcome": {"type": "timeout"}}
    for runs, why in [
        ([{"stdout": "x", "outcome": {"type": "timeout"}}], r"output\[0\]: stderr must be"),
        ([timeout, {**timeout, "outcome": {"type": "exit"}}], r"output\[1\]: outcome must be"),
        (["x"], r"output\[0\] is not a"),
    ]:
        with pytest.raises(sw.ToolResultError, match=why):
            sw.tool_result(shell, "call_sh", runs)
    patch = _replay("openai-responses/vercel-apply-patch")
    call_id = patch.result.tool_calls[0].id or ""
    assert sw.tool_result(patch, call_id, None, is_error=True) == {
        "type": "apply_patch_call_output",
        "call_id": call_id,
        "status": "failed",
    }
    search = _replay("openai-responses/vercel-client-tool-search")
    with pytest.raises(sw.ToolResultError, match="list of tool definitions"):
        sw.tool_result(search, "call_RWTIIVfxsJW9fecsg6fy23Dy", "get_weather")
    with pytest.raises(sw.ToolResultError, match=r"output\[0\] is not a tool definition"):
        sw.tool_result(search, "call_RWTIIVfxsJW9fecsg6fy23Dy", ["get_weather"])
    with pytest.raises(sw.ToolResultError, match="produced no tool call"):
        sw.tool_result(search, "call_NHis2zQiYcIaO6pf9nb5q1wY", [])  # the provisional id


def test_a_provisional_call_id_is_never_released() -> None:
    # The call starts without an id and takes the done item's; without a done
    # item it has none, and nothing is executable.
    stream = _replay("openai-responses/vercel-client-tool-search")
    fixture = FIXTURES["openai-responses/vercel-client-tool-search"]
    started = [e for e in fixture.replay([fixture.raw])[1] if isinstance(e, sw.ToolCallStarted)]
    assert [e.id for e in started] == [None]
    assert stream.result.tool_calls[0].id == "call_RWTIIVfxsJW9fecsg6fy23Dy"
    cut = fixture.raw[: fixture.raw.index(b"event: response.output_item.done")]
    result = _run("openai-responses", cut + _responses({"type": "response.completed"}))
    assert result.tool_calls[0].id is None and not result.executable


SCREENSHOT = {"type": "computer_screenshot", "image_url": "data:image/png;base64,iVBORw0KGgo="}
CHECK = {"id": "cs_1", "code": "malicious_instructions", "message": "Review the page first."}
COMPUTER = {"type": "computer_call", "id": "cu_1", "call_id": "call_cu", "status": "completed"}
COMPUTER["actions"] = [{"type": "click", "button": "left", "x": 1, "y": 2}]
COMPUTER["pending_safety_checks"] = [CHECK]


def test_a_computer_call_is_answered_with_a_screenshot() -> None:
    stream = _replay("openai-responses/dotnet-computer-call")
    call = stream.result.tool_calls[0]
    assert (call.executor, call.executable, stream.result.executable) == ("client", True, True)
    assert sw.tool_result(stream, call, SCREENSHOT) == {
        "type": "computer_call_output",
        "call_id": "call_p7K8YjFwNjqMgkKhSiExgFH6",
        "output": SCREENSHOT,
    }
    by_file = {"type": "computer_screenshot", "file_id": "file_1"}
    assert sw.tool_result(stream, call, by_file)["output"] == by_file
    for output, why in [
        ("iVBORw0KGgo=", "is a screenshot"),
        ({"type": "input_image", "image_url": "https://x/a.png"}, "is a screenshot"),
        ({"type": "computer_screenshot"}, "is a screenshot"),
        ({"type": "computer_screenshot", "image_url": "u", "detail": "high"}, "is a screenshot"),
        ({"type": "computer_screenshot", "image_url": 7}, "image_url must be a non-empty"),
    ]:
        with pytest.raises(sw.ToolResultError, match=why):
            sw.tool_result(stream, call, output)
    with pytest.raises(sw.ToolResultError, match="no error flag"):
        sw.tool_result(stream, call, SCREENSHOT, is_error=True)
    with pytest.raises(sw.ToolResultError, match="not one of the pending_safety_checks"):
        sw.tool_result(stream, call, SCREENSHOT, acknowledged_safety_checks=[CHECK])


def test_pending_safety_checks_are_acknowledged_and_make_a_valid_item() -> None:
    from openai.types.responses import ResponseInputItemParam
    from pydantic import TypeAdapter

    preview = [{"type": "computer_use_preview", "display_width": 1024, "display_height": 768}]
    result = _run("openai-responses", _item_stream(COMPUTER), tools=preview)
    call = result.tool_calls[0]
    assert result.executable and call.arguments["actions"] == COMPUTER["actions"]
    pending = call.arguments["pending_safety_checks"]
    answer = sw.tool_result(result, call, SCREENSHOT, acknowledged_safety_checks=pending)
    assert answer["acknowledged_safety_checks"] == [CHECK]
    TypeAdapter(ResponseInputItemParam).validate_python(answer, strict=True)
    for checks, why in [
        ([{"code": "x"}], "with an id"),
        ([{**CHECK, "code": 3}], "code is not a string"),
        ("cs_1", "is a list"),
    ]:
        with pytest.raises(sw.ToolResultError, match=why):
            sw.tool_result(result, call, SCREENSHOT, acknowledged_safety_checks=checks)  # type: ignore[arg-type]
    shell = _run("openai-responses", _item_stream(SHELL))
    with pytest.raises(sw.ToolResultError, match="answer a computer_call's"):
        sw.tool_result(shell, "call_sh", "ok", acknowledged_safety_checks=[CHECK])


@pytest.mark.parametrize(
    ("declared", "executable"),
    [([{"type": "computer"}], True), (None, True), ([{"type": "shell"}], False)],
)
def test_a_computer_call_is_checked_against_the_declared_computer_tool(
    declared: Any, executable: bool
) -> None:
    result = _run("openai-responses", _item_stream(COMPUTER), tools=declared)
    assert result.executable is executable
    if not executable:
        assert "built-in tool 'computer'" in (result.tool_calls[0].invalid_reason or "")


# --- openai-responses: ids that do not correlate -------------------------------------------


def test_full_copies_are_never_appended_when_ids_rotate_without_an_index() -> None:
    # Ids rotate and no output_index says which item an event is for: the
    # deltas are adopted under their own ids, and the full copies repeat them.
    message = {"type": "message", "id": "msg_0", "role": "assistant", "content": []}
    text = "Hello there"
    done_item = {**message, "id": "msg_9", "content": [{"type": "output_text", "text": text}]}
    wire = _responses(
        {"type": "response.created", "response": {"id": "r"}},
        {"type": "response.output_item.added", "item": message},
        {"type": "response.output_text.delta", "item_id": "msg_1", "delta": "Hello"},
        {"type": "response.output_text.delta", "item_id": "msg_1", "delta": " there"},
        {"type": "response.output_text.done", "item_id": "msg_2", "text": text},
        {"type": "response.output_item.done", "item": done_item},
        {"type": "response.completed", "response": {"id": "r", "status": "completed"}},
    )
    result = _run("openai-responses", wire)
    assert result.text == text, "the full copies are reconciled, not appended"
    assert "full_text_reconciled" in {w.code for w in result.warnings}


def test_a_reused_output_index_with_another_type_is_still_a_conflict() -> None:
    message = {"type": "message", "id": "msg_a", "role": "assistant", "content": []}
    reasoning = {"type": "reasoning", "id": "rs_b", "summary": []}
    wire = _responses(
        {"type": "response.output_item.added", "output_index": 0, "item": message},
        {"type": "response.output_item.done", "output_index": 0, "item": reasoning},
    )
    result = _run("openai-responses", wire)
    assert result.status == "protocol_conflict"
    assert {w.code for w in result.warnings} == {"item_id_rotated"}


# --- bedrock-converse: no messageStart ------------------------------------------------------


def test_a_stream_of_only_message_stop_and_metadata_completes_with_the_warning() -> None:
    result = _run("bedrock-converse", C.stop("end_turn") + C.metadata(3, 1))
    assert result.status == "completed" and result.text == ""
    assert [w.code for w in result.warnings] == ["missing_message_start"]
    assert result.usage is not None and result.usage.final


def test_without_message_start_and_message_stop_it_stays_incomplete() -> None:
    result = _run("bedrock-converse", C.text(0, "Hel") + C.text(0, "lo"))
    assert (result.status, result.text) == ("incomplete", "Hello")
