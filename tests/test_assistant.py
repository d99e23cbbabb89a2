"""``sw.assistant_message``: the next turn in each protocol's shape, answered by ``tool_result``.

For every recorded or hand-written HTTP stream that ended with tool calls,
the assistant turn and one tool result per client call make a valid next
request: the chat, responses and anthropic items are validated against the
official SDKs' own request types (pydantic's ``TypeAdapter`` over their
``TypedDict``s, strict about keys and value types), bedrock and gemini
against their documented shapes, and every call id in the turn is answered
by exactly one tool result quoting it. The tool output is what a caller
gives each kind of call: a JSON value for a function, the stdout of a
shell command, the tool definitions a client-run tool search loaded, the
screenshot a computer call asked for.
"""

from __future__ import annotations

from typing import Any

import pytest
from anthropic.types import MessageParam
from openai.types.chat import ChatCompletionMessageParam
from openai.types.responses import ResponseInputItemParam
from pydantic import TypeAdapter

import streamwire as sw
from fixture_replay import manifests

#: Where each protocol's turn goes, and the SDK request type that checks it.
SDK_TYPES: dict[str, Any] = {
    "openai-chat": TypeAdapter(list[ChatCompletionMessageParam]),
    "openai-responses": TypeAdapter(list[ResponseInputItemParam]),
    "anthropic": TypeAdapter(list[MessageParam]),
    "bedrock-invoke": TypeAdapter(list[MessageParam]),
}

TOOL_FIXTURES = [
    f
    for f in manifests()
    if not f.messages
    and f.expect.get("status") == "completed"
    and f.expect.get("tool_call_count", 0) >= 1
]


#: The responses call item types the caller answers.
RESPONSES_CALLS = frozenset(
    {
        "function_call",
        "custom_tool_call",
        "local_shell_call",
        "shell_call",
        "apply_patch_call",
        "tool_search_call",
        "computer_call",
    }
)
#: What a tool search loaded: tool definitions in the request's own shape.
LOADED_TOOLS = [
    {
        "type": "function",
        "name": "get_weather",
        "description": "The weather in a city.",
        "parameters": {"type": "object", "properties": {"city": {"type": "string"}}},
        "strict": False,
    }
]
SCREENSHOT = {"type": "computer_screenshot", "image_url": "data:image/png;base64,iVBORw0KGgo="}


def _output(call: sw.ToolCall) -> Any:
    """The output a caller gives a call of this kind."""
    if call.type == "tool_search_call":
        return LOADED_TOOLS
    if call.type == "computer_call":
        return SCREENSHOT
    if call.type == "shell_call":
        return "Desktop\n"
    return {"ok": True}


def _result(fixture: Any) -> sw.StreamResult:
    s = sw.stream(fixture.protocol, **fixture.manifest.get("options", {}))
    s.feed(fixture.raw)
    s.close()
    return s.result


def _ids_in_turn(protocol: str, turn: list[dict[str, Any]]) -> list[str | None]:
    if protocol == "openai-chat":
        return [c["id"] for c in turn[0].get("tool_calls", [])]
    if protocol == "openai-responses":
        return [i["call_id"] for i in turn if i.get("type") in RESPONSES_CALLS]
    if protocol in ("anthropic", "bedrock-invoke"):
        return [b["id"] for b in turn[0]["content"] if b.get("type") == "tool_use"]
    if protocol == "bedrock-converse":
        return [b["toolUse"]["toolUseId"] for b in turn[0]["content"] if "toolUse" in b]
    parts = turn[0]["parts"]  # gemini
    return [p["functionCall"].get("id") for p in parts if "functionCall" in p]


def _id_in_result(protocol: str, item: dict[str, Any]) -> str | None:
    if protocol == "openai-chat":
        return str(item["tool_call_id"])
    if protocol == "openai-responses":
        # local_shell_call_output names the call's call_id "id" (the schema's)
        field = "id" if item["type"] == "local_shell_call_output" else "call_id"
        return str(item[field])
    if protocol in ("anthropic", "bedrock-invoke"):
        return str(item["tool_use_id"])
    if protocol == "bedrock-converse":
        return str(item["toolResult"]["toolUseId"])
    result: str | None = item["functionResponse"].get("id")
    return result


def test_there_are_tool_streams_for_every_protocol_with_a_turn() -> None:
    protocols = {f.protocol for f in TOOL_FIXTURES}
    assert {
        "openai-chat",
        "openai-responses",
        "anthropic",
        "gemini",
        "bedrock-converse",
    } <= protocols


@pytest.mark.parametrize("fixture", TOOL_FIXTURES, ids=[f.name for f in TOOL_FIXTURES])
def test_the_turn_and_its_tool_results_make_a_valid_next_request(fixture: Any) -> None:
    result = _result(fixture)
    protocol = fixture.protocol
    turn = sw.assistant_message(result)
    assert turn == sw.assistant_message(result)  # the same turn each time ...
    turn[0].clear()
    assert sw.assistant_message(result)[0]  # ... and a copy: the result is unchanged
    turn = sw.assistant_message(result)
    calls = [c for c in result.tool_calls if c.executor == "client"]
    answers = [sw.tool_result(result, c, _output(c)) for c in calls if c.id is not None]
    sdk_type = SDK_TYPES.get(protocol)
    if sdk_type is not None:
        answers_as_sent = (
            [{"role": "user", "content": answers}]
            if protocol in ("anthropic", "bedrock-invoke")
            else answers
        )
        sdk_type.validate_python(turn + answers_as_sent, strict=True)
    elif protocol == "bedrock-converse":
        assert [set(m) for m in turn] == [{"role", "content"}] and turn[0]["role"] == "assistant"
    else:
        assert turn[0]["role"] == "model" and turn[0]["parts"]
    in_turn = [i for i in _ids_in_turn(protocol, turn) if i is not None]
    provider_ids = [c.id for c in calls if c.id_source == "provider"]
    assert sorted(in_turn) == sorted(provider_ids), fixture.name
    assert sorted(
        _id_in_result(protocol, a) or "" for a in answers if _id_in_result(protocol, a)
    ) == (sorted(provider_ids))


def test_a_chat_turn_without_calls_and_a_refusal() -> None:
    s = sw.stream("openai-chat")
    s.feed(
        b'data: {"choices":[{"index":0,"delta":{"content":"Hello"},"finish_reason":"stop"}]}\n\n'
        b"data: [DONE]\n\n"
    )
    assert sw.assistant_message(s) == [{"role": "assistant", "content": "Hello"}]


def test_a_running_stream_and_a_realtime_session_are_refused() -> None:
    s = sw.stream("openai-chat")
    with pytest.raises(sw.UsageError, match="has not ended"):
        sw.assistant_message(s)
    live = sw.stream("gemini-live")
    live.close()
    with pytest.raises(sw.UsageError, match="keeps the conversation"):
        sw.assistant_message(live)
