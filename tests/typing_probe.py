"""What the types catch: checked by ``mypy --strict`` in ``.ci/run``, never run.

Every line marked ``# type: ignore[<code>]`` is a mistake the typed API
exists to catch; mypy's ``warn_unused_ignores`` (part of ``--strict``)
fails the run if one of them stops being an error. The unmarked lines are
the right ways, which must type-check as they are.
"""

from __future__ import annotations

from typing import Any

from typing_extensions import assert_never

import streamwire as sw


def options(response: Any, name: str) -> None:
    sw.stream("openai-chat", strict_done=True, max_choices=2)
    sw.stream("openai-chat", strict_dnoe=True)  # type: ignore[call-overload]
    sw.stream("openai-chta")  # type: ignore[call-overload]
    sw.stream("anthropic", strict_done=True)  # type: ignore[call-overload]
    sw.stream(name)  # type: ignore[call-overload]
    if sw.is_protocol(name):
        sw.stream(name, tools=[], validation="names")
    sw.stream("anthropic", validation="strict")  # type: ignore[call-overload]
    sw.iter_events(response, "anthropic", idle_timeout=30.0, max_event_bytes=1 << 20)
    sw.iter_events(response, "anthropic", idle_timout=30.0)  # type: ignore[call-overload]
    sw.iter_events(response, "openai-realtime")  # type: ignore[call-overload]
    sw.aiter_events(response, "bedrock-invoke", model_format="anthropic", record=True)
    sw.aiter_events(response, "bedrock-invoke", model_format="llama")  # type: ignore[call-overload]
    sw.encoder("openai-chat", source="anthropic")
    sw.encoder("bedrock-converse")  # type: ignore[arg-type]
    opts: sw.options.OpenAIChatOptions = {"strict_done": True}
    sw.stream("openai-chat", **opts)


def every_event(event: sw.Event) -> str:
    match event:
        case sw.MessageStarted(model=model):
            return model or ""
        case sw.TextDelta(text=text) | sw.RefusalDelta(text=text):
            return text
        case sw.ReasoningDelta(text=text):
            return text
        case sw.ToolCallStarted() | sw.ToolCallArgumentsDelta() | sw.ToolCallCompleted():
            return "call"
        case sw.UsageReported(usage=usage):
            return str(usage.output_tokens)
        case sw.MessageCompleted(status=status):
            return status
        case sw.ErrorReceived() | sw.UnknownEvent():
            return "other"
        case _:
            assert_never(event)


def a_missed_case(event: sw.Event) -> str:
    match event:
        case sw.TextDelta(text=text):
            return text
        case _:
            assert_never(event)  # type: ignore[arg-type]


def results(r: sw.StreamResult) -> None:
    for call in r.tool_calls:
        sw.tool_result(r, call, "ok")
        sw.tool_result(r, call.id, "ok")  # type: ignore[arg-type]
    status: sw.Status = r.status
    row: dict[str, Any] = r.as_dict()
    turn: list[dict[str, Any]] = sw.assistant_message(r)
    del status, row, turn
