"""The official clients as acceptance oracles: each SDK stream helper, in one comparable form.

``run_sdk(target, client, tool_names)`` opens the stream helper of the SDK
that speaks ``target`` and returns what it accumulated as a ``Final``: the
text, the tool calls (id, name, parsed arguments, raw arguments string where
the SDK keeps one), the stop reason's category and the usage figures.

* ``openai-chat``: ``client.chat.completions.stream(...)`` ->
  ``get_final_completion()`` (``ChatCompletionStreamState`` underneath);
* ``openai-responses``: ``client.responses.stream(...)`` ->
  ``get_final_response()`` (``ResponseStreamState`` underneath);
* ``anthropic``: ``client.messages.stream(...)`` -> ``get_final_message()``.

The tools are declared ``strict`` (chat and responses), so the SDKs parse
every call's arguments themselves with ``json.loads``: a call whose
arguments the SDK cannot parse fails the test there, as it would fail a user.
One exception: openai-python's chat helper takes a call as finished (and
parses its arguments) as soon as a fragment of *another* call arrives
(``ChatCompletionStreamState``, ``_add_tool_done_event``), so it cannot
accumulate interleaved argument fragments with strict tools, not even from
the source's own bytes. OpenAI itself sends calls one after the other; some
hand-written sources interleave them (``interleaved_calls``), and for those
the chat tools are declared non-strict and the test parses the arguments.

``expected_final(result)`` is the same form from the *source* stream's
``StreamResult``; ``assert_same`` compares the two.

The SDKs are given an HTTP client of their own making's library (recent
``openai`` and ``anthropic`` releases use ``httpx2``, older ones ``httpx``;
``sdk_http`` finds which), either with a ``MockTransport`` serving our bytes
(``mock_client``: fed directly) or plain, pointed at the example gateway.
Keys are fake, retries off, timeouts bounded.
"""

from __future__ import annotations

import functools
import importlib
import json
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from types import ModuleType
from typing import Any

import anthropic
import openai
from openai import omit
from openai.lib.streaming.chat import ChatCompletionStreamState
from openai.lib.streaming.responses import ResponseStreamState

import streamwire as sw
from fixture_replay import Fixture, manifests

__all__ = [
    "SDK_TARGETS",
    "Call",
    "Final",
    "assert_same",
    "expected_final",
    "fixture",
    "interleaved_calls",
    "make_client",
    "mock_client",
    "run_sdk",
    "run_state",
    "sdk_http",
    "source_error",
    "source_events",
    "source_result",
]

#: The targets an official Python SDK streams, and the SDK module of each.
SDK_TARGETS = ("openai-chat", "openai-responses", "anthropic")
_SDK = {"openai-chat": openai, "openai-responses": openai, "anthropic": anthropic}
#: Bounds every SDK request: a test that hangs fails instead.
SDK_TIMEOUT = 10.0
FAKE_KEY = "sk-test-not-a-real-key"
MODEL = "test-model"


@dataclass(frozen=True)
class Call:
    """One tool call as a client sees it."""

    id: str | None
    name: str | None
    #: The parsed arguments (a JSON object), or the raw string when it does not parse.
    arguments: Any
    #: The arguments string as streamed (None where the SDK keeps only the parsed input).
    raw: str | None


@dataclass(frozen=True)
class Final:
    """What a client accumulated from one stream."""

    text: str
    calls: tuple[Call, ...]
    #: The stop reason's category: ``stop``, ``tool_calls``, ``length``, ``content_filter``, ...
    stop: str | None
    input_tokens: int | None
    output_tokens: int | None


# --- the SDKs' HTTP library -------------------------------------------------


def sdk_http(target: str) -> ModuleType:
    """The httpx-like module the SDK for ``target`` is built on (``httpx2`` or ``httpx``)."""
    base = importlib.import_module(f"{_SDK[target].__name__}._base_client")
    for name in ("httpx2", "httpx"):
        module = getattr(base, name, None)
        if isinstance(module, ModuleType):
            return module
    raise RuntimeError(f"cannot tell which HTTP library {_SDK[target].__name__} uses")


def make_client(target: str, base_url: str, http_client: Any = None) -> Any:
    """The SDK client for ``target`` with a fake key, no retries, bounded timeouts."""
    http = sdk_http(target)
    if http_client is None:
        http_client = http.Client(timeout=SDK_TIMEOUT)
    kwargs = {
        "api_key": FAKE_KEY,
        "base_url": base_url,
        "http_client": http_client,
        "max_retries": 0,
        "timeout": SDK_TIMEOUT,
    }
    if target == "anthropic":
        return anthropic.Anthropic(**kwargs)
    return openai.OpenAI(**kwargs)


def mock_client(
    target: str, chunks: Sequence[bytes], content_type: str, seen: list[Any] | None = None
) -> Any:
    """The SDK client for ``target`` whose every request is answered with ``chunks``.

    The response streams: each chunk is its own read, as our encoder wrote it.
    ``seen`` collects the requests the SDK made.
    """
    http = sdk_http(target)

    def answer(request: Any) -> Any:
        if seen is not None:
            seen.append(request)
        return http.Response(200, headers={"content-type": content_type}, content=iter(chunks))

    transport = http.MockTransport(answer)
    return make_client(target, "http://sdk.invalid/v1", http.Client(transport=transport))


# --- running a stream helper -------------------------------------------------


def _loads(raw: str) -> Any:
    try:
        return json.loads(raw)
    except ValueError:
        return raw


_CHAT_STOP = {
    "stop": "stop",
    "tool_calls": "tool_calls",
    "function_call": "tool_calls",
    "length": "length",
    "content_filter": "content_filter",
}
_ANTHROPIC_STOP = {
    "end_turn": "stop",
    "stop_sequence": "stop",
    "tool_use": "tool_calls",
    "max_tokens": "length",
    "model_context_window_exceeded": "length",
    "refusal": "content_filter",
    "pause_turn": "pause",
}


def _chat_tools(tool_names: Sequence[str], strict: bool) -> dict[str, Any]:
    tools = [
        {
            "type": "function",
            "function": {"name": n, "parameters": {"type": "object"}, "strict": strict},
        }
        for n in tool_names
    ]
    return {"tools": tools} if tools else {}


def _chat_request(model: str) -> dict[str, Any]:
    return {
        "model": model,
        "messages": [{"role": "user", "content": "hello"}],
        "stream_options": {"include_usage": True},
    }


def _chat_final(completion: Any) -> Final:
    choice = completion.choices[0]
    calls = []
    for tc in choice.message.tool_calls or []:
        fn = tc.function
        parsed = getattr(fn, "parsed_arguments", None)
        calls.append(
            Call(tc.id, fn.name, _loads(fn.arguments) if parsed is None else parsed, fn.arguments)
        )
    usage = completion.usage
    return Final(
        text=choice.message.content or "",
        calls=tuple(calls),
        stop=_CHAT_STOP.get(choice.finish_reason, "other"),
        input_tokens=None if usage is None else usage.prompt_tokens,
        output_tokens=None if usage is None else usage.completion_tokens,
    )


def _chat(client: Any, tool_names: Sequence[str], model: str, strict: bool) -> Final:
    tools = _chat_tools(tool_names, strict)
    with client.chat.completions.stream(**_chat_request(model), **tools) as stream:
        return _chat_final(stream.get_final_completion())


def _responses_tools(tool_names: Sequence[str], strict: bool) -> dict[str, Any]:
    tools = [
        {"type": "function", "name": n, "parameters": {"type": "object"}, "strict": strict}
        for n in tool_names
    ]
    return {"tools": tools} if tools else {}


def _responses_final(response: Any) -> Final:
    text = []
    calls = []
    for item in response.output:
        if item.type == "message":
            text += [part.text for part in item.content if part.type == "output_text"]
        elif item.type == "function_call":
            parsed = getattr(item, "parsed_arguments", None)
            args = parsed if parsed is not None else _loads(item.arguments)
            calls.append(Call(item.call_id, item.name, args, item.arguments))
    if response.status == "incomplete":
        reason = response.incomplete_details.reason if response.incomplete_details else None
        stop = "length" if reason == "max_output_tokens" else reason
    elif response.status == "completed":
        stop = "tool_calls" if calls else "stop"
    else:
        stop = response.status
    usage = response.usage
    return Final(
        text="".join(text),
        calls=tuple(calls),
        stop=stop,
        input_tokens=None if usage is None else usage.input_tokens,
        output_tokens=None if usage is None else usage.output_tokens,
    )


def _responses(client: Any, tool_names: Sequence[str], model: str, strict: bool) -> Final:
    tools = _responses_tools(tool_names, strict)
    with client.responses.stream(model=model, input="hello", **tools) as stream:
        return _responses_final(stream.get_final_response())


def _anthropic(client: Any, tool_names: Sequence[str], model: str, strict: bool) -> Final:
    tools = [{"name": n, "input_schema": {"type": "object"}} for n in tool_names]
    extra: dict[str, Any] = {"tools": tools} if tools else {}
    with client.messages.stream(
        model=model, max_tokens=1024, messages=[{"role": "user", "content": "hello"}], **extra
    ) as stream:
        message = stream.get_final_message()
    text = [block.text for block in message.content if block.type == "text"]
    calls = [
        Call(block.id, block.name, block.input, None)
        for block in message.content
        if block.type == "tool_use"
    ]
    stop = message.stop_reason
    return Final(
        text="".join(text),
        calls=tuple(calls),
        stop=_ANTHROPIC_STOP.get(stop, "other") if stop is not None else None,
        input_tokens=message.usage.input_tokens,
        output_tokens=message.usage.output_tokens,
    )


_RUNNERS: dict[str, Callable[[Any, Sequence[str], str, bool], Final]] = {
    "openai-chat": _chat,
    "openai-responses": _responses,
    "anthropic": _anthropic,
}


def run_sdk(
    target: str, client: Any, tool_names: Sequence[str], model: str = MODEL, *, strict: bool = True
) -> Final:
    """Streams one request with ``target``'s SDK helper and returns what it accumulated
    (``strict``: declare the tools strict, so the SDK parses the arguments)."""
    return _RUNNERS[target](client, tool_names, model, strict)


def run_state(target: str, client: Any, tool_names: Sequence[str], *, strict: bool = True) -> Final:
    """The documented alternative to the stream helpers: ``create(stream=True)``
    and the SDK's state object fed each chunk or event (openai targets only)."""
    if target == "openai-chat":
        tools = _chat_tools(tool_names, strict)
        chat_state: Any = ChatCompletionStreamState(input_tools=tools.get("tools", omit))
        with client.chat.completions.create(**_chat_request(MODEL), **tools, stream=True) as chunks:
            for chunk in chunks:
                chat_state.handle_chunk(chunk)
        return _chat_final(chat_state.get_final_completion())
    tools = _responses_tools(tool_names, strict)
    state = ResponseStreamState(input_tools=tools.get("tools", omit), text_format=omit)
    completed = None
    with client.responses.create(model=MODEL, input="hello", **tools, stream=True) as events:
        for event in events:
            for out in state.handle_event(event):
                if out.type == "response.completed":
                    completed = out.response
    assert completed is not None, "no response.completed"
    return _responses_final(completed)


def interleaved_calls(events: Iterable[sw.Event]) -> bool:
    """True when argument fragments of one call arrive after another call's began."""
    order: list[int] = []
    for event in events:
        if isinstance(event, sw.ToolCallStarted | sw.ToolCallArgumentsDelta):
            if event.index in order and order[-1] != event.index:
                return True
            if not order or order[-1] != event.index:
                order.append(event.index)
    return False


# --- the source's facts, and the comparison ------------------------------------


@functools.cache
def _fixtures() -> dict[tuple[str, str], Fixture]:
    return {(f.protocol, f.manifest["case"]): f for f in manifests()}


def fixture(protocol: str, case: str) -> Fixture:
    """The fixture ``case`` of ``protocol`` (manifest and raw bytes)."""
    return _fixtures()[protocol, case]


@functools.cache
def _source(protocol: str, case: str) -> tuple[tuple[sw.Event, ...], sw.StreamResult]:
    stream = sw.stream(protocol)
    events = stream.feed(fixture(protocol, case).raw) + stream.close()
    return tuple(events), stream.result


def source_events(protocol: str, case: str) -> tuple[sw.Event, ...]:
    """The unified events of the whole fixture."""
    return _source(protocol, case)[0]


def source_error(protocol: str, case: str) -> sw.StreamError:
    """The in-stream error a fixture ends with."""
    result = _source(protocol, case)[1]
    assert result.status == "error" and result.error is not None, f"{protocol}/{case}"
    return result.error


@functools.cache
def source_result(protocol: str, case: str) -> sw.StreamResult:
    """What the source adapter makes of the whole fixture: the facts to carry."""
    result = _source(protocol, case)[1]
    # The cases are chosen to be complete, valid streams, with no cached
    # input (whose counting differs between protocols, so an input figure
    # would be converted, not carried); anything else is a broken case list.
    assert result.status == "completed", f"{protocol}/{case}: {result.status}"
    usage = result.usage
    cached = usage and (usage.cache_read_tokens or usage.cache_creation_tokens)
    assert not cached, f"{protocol}/{case}: cached input {usage}"
    return result


def client_calls(result: sw.StreamResult) -> list[sw.ToolCall]:
    """The calls a client is offered (server-side tools are reported, never offered)."""
    return [c for c in result.tool_calls if c.executor == "client"]


def expected_final(result: sw.StreamResult) -> Final:
    """The ``Final`` a faithful translation of ``result``'s stream gives any client."""
    usage = result.usage
    return Final(
        text=result.text,
        calls=tuple(Call(c.id, c.name, c.arguments, c.raw_arguments) for c in client_calls(result)),
        stop=result.stop_reason,
        input_tokens=None if usage is None else usage.input_tokens,
        output_tokens=None if usage is None else usage.output_tokens,
    )


def assert_same(
    expected: Final, actual: Final, *, provider_ids: Iterable[bool], target: str, where: str
) -> None:
    """``actual`` (what the SDK accumulated) states ``expected``'s facts.

    Call ids must be carried when the provider sent them (``provider_ids``);
    a synthetic id (gemini sends none) must still be a non-empty, unique id.
    The arguments string must arrive verbatim where the target keeps one
    (chat, responses), unless the source's was empty (a parameterless call,
    which a target may spell ``{}``).
    """
    assert actual.text == expected.text, f"{where}: text {actual.text!r:.200}"
    assert len(actual.calls) == len(expected.calls), f"{where}: calls {actual.calls!r:.600}"
    ids = [c.id for c in actual.calls]
    assert all(isinstance(i, str) and i for i in ids), f"{where}: call ids {ids}"
    assert len(set(ids)) == len(ids), f"{where}: call ids not unique {ids}"
    for i, (want, got, provider_id) in enumerate(
        zip(expected.calls, actual.calls, provider_ids, strict=True)
    ):
        at = f"{where}: call {i}"
        if provider_id:
            assert got.id == want.id, f"{at}: id {got.id!r} != {want.id!r}"
        assert got.name == want.name, f"{at}: name {got.name!r} != {want.name!r}"
        assert got.arguments == want.arguments, f"{at}: arguments {got.arguments!r:.300}"
        if target != "anthropic" and want.raw:
            assert got.raw == want.raw, f"{at}: raw arguments {got.raw!r:.300}"
    assert actual.stop == expected.stop, f"{where}: stop {actual.stop!r} != {expected.stop!r}"
    if expected.input_tokens is not None or expected.output_tokens is not None:
        got_usage = (actual.input_tokens, actual.output_tokens)
        want_usage = (expected.input_tokens, expected.output_tokens)
        assert got_usage == want_usage, f"{where}: usage {got_usage} != {want_usage}"
