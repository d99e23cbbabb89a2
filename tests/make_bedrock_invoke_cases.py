"""The ``bedrock-invoke`` fixtures (Anthropic models): one behaviour each.

Used by ``make_bedrock_fixtures.py`` (run that). Every ``expect`` is written
from the Bedrock and Anthropic references and docs/design.md (and, for the
unified events of Anthropic's stream, the anthropic machine's documented
contract), never from streamwire's output.
"""

from __future__ import annotations

import json
from typing import Any

from bedrock_frames import (
    INVOKE_METHOD,
    Case,
    anthropic_chunk,
    call,
    chunk_frame,
    event_frame,
    exception_frame,
    expect_completed,
    expect_started,
    expect_text,
    expect_usage,
)

IV = "bedrock-invoke"

MESSAGE = {
    "id": "msg_bdrk_01A",
    "type": "message",
    "role": "assistant",
    "model": "claude-sonnet-4-20250514",
    "content": [],
    "stop_reason": None,
    "stop_sequence": None,
    "usage": {"input_tokens": 25, "output_tokens": 1},
}
METRICS = {
    "inputTokenCount": 25,
    "outputTokenCount": 9,
    "invocationLatency": 812,
    "firstByteLatency": 301,
}


def _anthropic(*middle: bytes, reason: str = "end_turn", output: int | None = 9) -> list[bytes]:
    delta: dict[str, Any] = {"delta": {"stop_reason": reason, "stop_sequence": None}}
    if output is not None:
        delta["usage"] = {"output_tokens": output}
    return [
        anthropic_chunk("message_start", message=MESSAGE),
        *middle,
        anthropic_chunk("message_delta", **delta),
        chunk_frame({"type": "message_stop", "amazon-bedrock-invocationMetrics": METRICS}),
    ]


def _text_block(index: int, *pieces: str) -> list[bytes]:
    start = {"type": "text", "text": ""}
    frames = [anthropic_chunk("content_block_start", index=index, content_block=start)]
    for piece in pieces:
        delta = {"type": "text_delta", "text": piece}
        frames.append(anthropic_chunk("content_block_delta", index=index, delta=delta))
    return [*frames, anthropic_chunk("content_block_stop", index=index)]


def _icase(
    name: str, frames: list[bytes], exercises: str, expect: dict[str, Any], **kw: Any
) -> Case:
    return Case(IV, name, b"".join(frames), exercises, expect, method=INVOKE_METHOD, **kw)


def invoke_cases() -> list[Case]:
    """The ``bedrock-invoke`` cases (Anthropic models)."""
    out: list[Case] = []
    started = expect_started(message_id="msg_bdrk_01A", model="claude-sonnet-4-20250514")
    out.append(
        _icase(
            "anthropic-text",
            _anthropic(*_text_block(0, "Hello", " from Bedrock.")),
            "Anthropic events base64-encoded in chunk.bytes, through the anthropic machine; "
            "amazon-bedrock-invocationMetrics on the last chunk kept",
            {
                "status": "completed",
                "text": "Hello from Bedrock.",
                "stop_reason": "stop",
                "provider_stop_reason": "end_turn",
                "usage": {"input_tokens": 25, "output_tokens": 9, "final": True},
                "unknown_fields": {},
                "warnings": [],
                "wire_events": 7,
                "events": [
                    started,
                    expect_usage(25, 1, final=False, total=False),
                    expect_text("Hello"),
                    expect_text(" from Bedrock."),
                    expect_usage(25, 9, final=False, total=False),
                    expect_usage(25, 9, final=True, total=False),
                    expect_completed("completed", "stop", "end_turn"),
                ],
            },
        )
    )
    tool_start = {"type": "tool_use", "id": "toolu_bdrk_01", "name": "get_weather", "input": {}}
    pieces = ['{"city": ', '"Paris"}']
    tool = [anthropic_chunk("content_block_start", index=1, content_block=tool_start)]
    for piece in pieces:
        delta = {"type": "input_json_delta", "partial_json": piece}
        tool.append(anthropic_chunk("content_block_delta", index=1, delta=delta))
    tool.append(anthropic_chunk("content_block_stop", index=1))
    out.append(
        _icase(
            "anthropic-tool-use",
            _anthropic(*_text_block(0, "Checking."), *tool, reason="tool_use"),
            "an Anthropic tool_use block inside chunks: one executable call; its result is "
            "built in Anthropic's format",
            {
                "status": "completed",
                "stop_reason": "tool_calls",
                "executable": True,
                "tool_calls": [{**call(0, "toolu_bdrk_01", "get_weather", "".join(pieces))}],
                "provider_content": [
                    {"type": "text", "text": "Checking."},
                    {
                        "type": "tool_use",
                        "id": "toolu_bdrk_01",
                        "name": "get_weather",
                        "input": {"city": "Paris"},
                    },
                ],
            },
        )
    )
    thinking = [
        anthropic_chunk(
            "content_block_start", index=0, content_block={"type": "thinking", "thinking": ""}
        ),
        anthropic_chunk(
            "content_block_delta", index=0, delta={"type": "thinking_delta", "thinking": "Hmm."}
        ),
        anthropic_chunk(
            "content_block_delta", index=0, delta={"type": "signature_delta", "signature": "c2ln"}
        ),
        anthropic_chunk("content_block_stop", index=0),
    ]
    out.append(
        _icase(
            "anthropic-thinking",
            _anthropic(*thinking, *_text_block(1, "Answer.")),
            "extended thinking with its signature, then text",
            {
                "status": "completed",
                "text": "Answer.",
                "choices": [{"index": 0, "reasoning": "Hmm."}],
                "events_of_type": {"ReasoningDelta": 2},
            },
        )
    )
    out.append(
        _icase(
            "no-model-usage",
            _anthropic(*_text_block(0, "Hi."), output=None),
            "no usage in message_delta: the invocation metrics' token counts are the final usage",
            {
                "status": "completed",
                "usage": {"input_tokens": 25, "output_tokens": 9, "final": True},
            },
        )
    )
    timeout = exception_frame("modelTimeoutException", {"message": "Model has timed out."})
    head = [anthropic_chunk("message_start", message=MESSAGE), *_text_block(0, "Partial")]
    out.append(
        _icase(
            "model-timeout",
            [*head, timeout],
            "modelTimeoutException after some content (InvokeModelWithResponseStream only): "
            "error, retryable, the text kept",
            {
                "status": "error",
                "text": "Partial",
                "executable": False,
                "error": {
                    "phase": "provider",
                    "type": "modelTimeoutException",
                    "code": None,
                    "message": "Model has timed out.",
                    "retryable": True,
                },
            },
        )
    )
    throttled = exception_frame("throttlingException", {"message": "Too many requests"})
    out.append(
        _icase(
            "throttling-first",
            [throttled],
            "throttlingException before any chunk: error, retryable",
            {
                "status": "error",
                "error": {"phase": "provider", "type": "throttlingException", "retryable": True},
                "events_of_type": {"MessageStarted": 0},
            },
        )
    )
    overloaded = chunk_frame(
        {"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}
    )
    out.append(
        _icase(
            "anthropic-error-in-chunk",
            [*head, overloaded],
            "an Anthropic error event inside a chunk: error with Anthropic's type, retryable",
            {
                "status": "error",
                "error": {"phase": "provider", "type": "overloaded_error", "retryable": True},
            },
        )
    )
    not_base64 = event_frame("chunk", {"bytes": "!!not base64!!"})
    out.append(
        _icase(
            "invalid-chunk-bytes",
            [anthropic_chunk("message_start", message=MESSAGE), not_base64],
            "a chunk whose bytes are not base64: error (framing, invalid_chunk)",
            {
                "status": "error",
                "error": {"phase": "framing", "type": "invalid_chunk", "retryable": False},
            },
        )
    )
    out.append(
        _icase(
            "unknown-event",
            _anthropic(event_frame("someFutureEvent", {"x": 1}), *_text_block(0, "Fine.")),
            "an unknown :event-type between chunks: ignored and counted; the stream completes",
            {
                "status": "completed",
                "text": "Fine.",
                "unknown_events": {"someFutureEvent": 1},
                "unknown_fields": {},
            },
        )
    )
    cut = _text_block(0, "Hel", "lo")
    out.append(
        _icase(
            "disconnect",
            [anthropic_chunk("message_start", message=MESSAGE), *cut[:2], cut[2][:40]],
            "the connection drops inside a chunk frame: incomplete, the partial frame discarded",
            {
                "status": "incomplete",
                "text": "Hel",
                "warnings": ["partial_message_discarded"],
                "usage": {"final": False},
            },
        )
    )
    body = json.dumps(
        {"message": "Malformed input request, please reformat your input and try again."}
    )
    out.append(
        Case(
            IV,
            "not-eventstream-json",
            body.encode(),
            "an HTTP 400 JSON body instead of EventStream: not_eventstream, not retryable",
            {
                "status": "error",
                "error": {"phase": "framing", "type": "not_eventstream", "retryable": False},
            },
            method=INVOKE_METHOD,
            ext="body",
            options={"http_status": 400},
        )
    )
    return out
