"""The ``openai-realtime`` fixture cases (see ``make_ws_fixtures.py``).

Written by hand from the references named in ``ws_cases.METHOD``; every
``expect`` from the references and docs/design.md, never from streamwire's output.
"""

from __future__ import annotations

from typing import Any

from ws_cases import SESSION_CLEAN, call, case, usage
from ws_messages import Realtime, realtime_usage

__all__ = ["realtime"]


# --- openai-realtime ---------------------------------------------------------------------------


def realtime() -> list[dict[str, Any]]:
    P = "openai-realtime"
    MODEL = "gpt-realtime-2025-08-28"
    out = []

    rt = Realtime()
    out.append(
        case(
            P,
            "01-text",
            [
                rt.session_created(),
                rt.created("resp_rt01"),
                *rt.text_message("resp_rt01", "item_rt01", 0, ["Hello", ", world"]),
                rt.done(
                    "resp_rt01",
                    "completed",
                    [
                        rt.message_item(
                            "item_rt01",
                            "completed",
                            [{"type": "output_text", "text": "Hello, world"}],
                        )
                    ],
                    realtime_usage(20, 4),
                ),
                rt.e(
                    "rate_limits.updated",
                    rate_limits=[
                        {
                            "name": "tokens",
                            "limit": 20000,
                            "remaining": 19976,
                            "reset_seconds": 0.07,
                        }
                    ],
                ),
            ],
            "one text response (GA event names); response.done is the terminal signal",
            {
                "status": "completed",
                "stop_reason": "stop",
                "provider_stop_reason": "completed",
                "text": "Hello, world",
                "usage": usage(20, 4, reasoning=None),
                "error": None,
                "warnings": [],
                "wire_events": 9,
                "events": [
                    {"event": "MessageStarted", "message_id": "resp_rt01", "model": MODEL},
                    {"event": "TextDelta", "text": "Hello"},
                    {"event": "TextDelta", "text": ", world"},
                    {"event": "UsageReported", "usage": usage(20, 4, reasoning=None)},
                    {
                        "event": "MessageCompleted",
                        "status": "completed",
                        "stop_reason": "stop",
                        "provider_stop_reason": "completed",
                    },
                ],
                "results": [{"status": "completed", "final": True, "model": MODEL}],
                "session": {"response_count": 1, **SESSION_CLEAN},
            },
        )
    )

    rt = Realtime()
    args = '{"city":"Paris"}'
    out.append(
        case(
            P,
            "02-tool-call",
            [
                rt.session_created(),
                rt.created("resp_rt02"),
                *rt.call(
                    "resp_rt02",
                    "item_rt02",
                    "call_rt02",
                    "get_weather",
                    0,
                    ['{"city":', '"Paris"}'],
                ),
                rt.done(
                    "resp_rt02",
                    "completed",
                    [rt.call_item("item_rt02", "call_rt02", "get_weather", args, "completed")],
                    realtime_usage(40, 12),
                ),
            ],
            "one function call keyed by item, identified by call_id",
            {
                "status": "completed",
                "stop_reason": "tool_calls",
                "executable": True,
                "tool_calls": [
                    call(
                        0, "call_rt02", "get_weather", {"city": "Paris"}, args, type="function_call"
                    )
                ],
                "events_of_type": {
                    "ToolCallStarted": 1,
                    "ToolCallArgumentsDelta": 2,
                    "ToolCallCompleted": 1,
                },
            },
        )
    )

    rt = Realtime()
    a, b = '{"city":"Paris"}', '{"timezone":"Europe/Paris"}'
    out.append(
        case(
            P,
            "03-parallel-tool-calls",
            [
                rt.session_created(),
                rt.created("resp_rt03"),
                *rt.call("resp_rt03", "item_rt03a", "call_rt03a", "get_weather", 0, [a]),
                *rt.call(
                    "resp_rt03",
                    "item_rt03b",
                    "call_rt03b",
                    "get_time",
                    1,
                    ['{"timezone":', '"Europe/Paris"}'],
                ),
                rt.done(
                    "resp_rt03",
                    "completed",
                    [
                        rt.call_item("item_rt03a", "call_rt03a", "get_weather", a, "completed"),
                        rt.call_item("item_rt03b", "call_rt03b", "get_time", b, "completed"),
                    ],
                    realtime_usage(41, 30),
                ),
            ],
            "two function calls in one response",
            {
                "status": "completed",
                "stop_reason": "tool_calls",
                "executable": True,
                "tool_call_count": 2,
                "call_ids_unique": True,
                "tool_calls": [
                    call(0, "call_rt03a", "get_weather", {"city": "Paris"}, a),
                    call(1, "call_rt03b", "get_time", {"timezone": "Europe/Paris"}, b),
                ],
            },
        )
    )

    rt = Realtime()
    part = '{"city":"Pa'
    at = {
        "response_id": "resp_rt04",
        "item_id": "item_rt04",
        "output_index": 0,
        "call_id": "call_rt04",
    }
    out.append(
        case(
            P,
            "04-cancel-mid-call",
            [
                rt.session_created(),
                rt.created("resp_rt04"),
                rt.e(
                    "response.output_item.added",
                    response_id="resp_rt04",
                    output_index=0,
                    item=rt.call_item("item_rt04", "call_rt04", "get_weather", "", "in_progress"),
                ),
                rt.e("response.function_call_arguments.delta", delta=part, **at),
                rt.e(
                    "input_audio_buffer.speech_started", audio_start_ms=1840, item_id="item_rt04u"
                ),
                rt.e("response.function_call_arguments.done", arguments=part, **at),
                rt.e(
                    "response.output_item.done",
                    response_id="resp_rt04",
                    output_index=0,
                    item=rt.call_item("item_rt04", "call_rt04", "get_weather", part, "incomplete"),
                ),
                rt.done(
                    "resp_rt04",
                    "cancelled",
                    [rt.call_item("item_rt04", "call_rt04", "get_weather", part, "incomplete")],
                    realtime_usage(40, 6),
                    status_details={"type": "cancelled", "reason": "turn_detected"},
                ),
            ],
            "the user speaks while a call streams: the response ends cancelled (turn_detected)",
            {
                "status": "cancelled",
                "stop_reason": "other",
                "provider_stop_reason": "turn_detected",
                "executable": False,
                "tool_calls": [call(0, "call_rt04", "get_weather", None, part, ok=False)],
                "usage": usage(40, 6, reasoning=None),
                "session": {"response_count": 1, **SESSION_CLEAN},
            },
            notes=[
                "response.function_call_arguments.done is 'also emitted when a Response is "
                "interrupted, incomplete, or cancelled' (openai-python's model docstring): "
                "here with the partial arguments, which are not JSON"
            ],
        )
    )

    rt = Realtime()
    voice = (
        "Invalid value: 'nova'. Supported values are: 'alloy', 'ash', 'ballad', 'coral', "
        "'echo', 'sage', 'shimmer', 'verse', 'marin', and 'cedar'."
    )
    failed = {"type": "server_error", "code": "server_error", "message": "The server had an error."}
    at = {"response_id": "resp_rt05", "item_id": "item_rt05", "output_index": 0, "content_index": 0}
    out.append(
        case(
            P,
            "05-error",
            [
                rt.session_created(),
                rt.e(
                    "error",
                    error={
                        "type": "invalid_request_error",
                        "code": "invalid_value",
                        "message": voice,
                        "param": "session.audio.output.voice",
                        "event_id": "event_client_001",
                    },
                ),
                rt.created("resp_rt05"),
                rt.e(
                    "response.output_item.added",
                    response_id="resp_rt05",
                    output_index=0,
                    item=rt.message_item("item_rt05", "in_progress", []),
                ),
                rt.e("response.content_part.added", part={"type": "output_text", "text": ""}, **at),
                rt.e("response.output_text.delta", delta="Partial", **at),
                rt.done(
                    "resp_rt05",
                    "failed",
                    [],
                    None,
                    status_details={"type": "failed", "error": failed},
                ),
            ],
            "a recoverable error event (the session's) and a response that fails",
            {
                "status": "error",
                "stop_reason": "error",
                "provider_stop_reason": "failed",
                "text": "Partial",
                "error": {
                    "phase": "provider",
                    "type": "server_error",
                    "code": "server_error",
                    "message": "The server had an error.",
                    "retryable": True,
                },
                "usage": None,
                "session": {
                    "response_count": 1,
                    "errors": [
                        {
                            "phase": "provider",
                            "type": "invalid_request_error",
                            "code": "invalid_value",
                            "message": voice,
                            "retryable": False,
                        }
                    ],
                },
            },
        )
    )

    rt = Realtime()
    events = rt.text_message("resp_rt06", "item_rt06", 0, ["Known", " text"], beta=True)
    video = rt.e(
        "response.output_video.delta",
        response_id="resp_rt06",
        item_id="item_rt06",
        output_index=0,
        content_index=1,
        delta="AAAA",
    )
    out.append(
        case(
            P,
            "06-unknown-event",
            [
                rt.session_created(),
                rt.e("conversation.item.future_event", item_id="item_rt06u"),
                rt.created("resp_rt06"),
                *events[:3],
                video,
                *events[3:],
                rt.done(
                    "resp_rt06",
                    "completed",
                    [
                        rt.message_item(
                            "item_rt06", "completed", [{"type": "text", "text": "Known text"}]
                        )
                    ],
                    realtime_usage(10, 2),
                ),
            ],
            "the older (beta) text event names; unknown event types in a response and in "
            "the session",
            {
                "status": "completed",
                "text": "Known text",
                "unknown_events": {"response.output_video.delta": 1},
                "unknown_events_tolerated": True,
                "conflicts_count": 0,
                "session": {
                    "response_count": 1,
                    "unknown_events": {"conversation.item.future_event": 1},
                    "errors": [],
                },
            },
        )
    )

    rt = Realtime()
    args = '{"city":"Paris"}'
    at = {
        "response_id": "resp_rt07c",
        "item_id": "item_rt07d",
        "output_index": 0,
        "content_index": 0,
    }
    first_items = [
        rt.message_item(
            "item_rt07a", "completed", [{"type": "output_audio", "transcript": "Let me check."}]
        ),
        rt.call_item("item_rt07b", "call_rt07", "get_weather", args, "completed"),
    ]
    out.append(
        case(
            P,
            "07-session",
            [
                rt.session_created(),
                rt.created("resp_rt07a"),
                *rt.audio_message(
                    "resp_rt07a", "item_rt07a", 0, ["Let me ", "check."], ["AAAAAA==", "AAECAwQF"]
                ),
                *rt.call("resp_rt07a", "item_rt07b", "call_rt07", "get_weather", 1, [args]),
                rt.done("resp_rt07a", "completed", first_items, realtime_usage(50, 30)),
                rt.e(
                    "conversation.item.added",
                    previous_item_id="item_rt07b",
                    item={
                        "id": "item_rt07o",
                        "object": "realtime.item",
                        "type": "function_call_output",
                        "call_id": "call_rt07",
                        "output": '{"temperature_c":18,"sky":"sunny"}',
                    },
                ),
                rt.created("resp_rt07b"),
                *rt.audio_message(
                    "resp_rt07b",
                    "item_rt07c",
                    0,
                    ["It is sunny", " in Paris."],
                    ["AAAA", "AAAAAAAA"],
                    beta=True,
                ),
                rt.done(
                    "resp_rt07b",
                    "completed",
                    [
                        rt.message_item(
                            "item_rt07c",
                            "completed",
                            [{"type": "audio", "transcript": "It is sunny in Paris."}],
                        )
                    ],
                    realtime_usage(90, 20, 50),
                ),
                rt.created("resp_rt07c"),
                rt.e(
                    "response.output_item.added",
                    response_id="resp_rt07c",
                    output_index=0,
                    item=rt.message_item("item_rt07d", "in_progress", []),
                ),
                rt.e(
                    "response.content_part.added",
                    part={"type": "output_audio", "transcript": ""},
                    **at,
                ),
                rt.e("response.output_audio.delta", delta="AAAA", **at),
                rt.e("response.output_audio_transcript.delta", delta="Anything", **at),
                rt.done(
                    "resp_rt07c",
                    "cancelled",
                    [],
                    realtime_usage(110, 3),
                    status_details={"type": "cancelled", "reason": "client_cancelled"},
                ),
            ],
            "a voice session: audio with transcripts and a call, the answer in beta event "
            "names, then a response the client cancelled",
            {
                "status": "cancelled",
                "text": "Anything",
                "provider_stop_reason": "client_cancelled",
                "results": [
                    {
                        "status": "completed",
                        "text": "Let me check.",
                        "stop_reason": "tool_calls",
                        "executable": True,
                        "message_id": "resp_rt07a",
                        "model": MODEL,
                        "tool_calls": [
                            call(0, "call_rt07", "get_weather", {"city": "Paris"}, args)
                        ],
                        "provider_metrics": {"audio_deltas": 2, "audio_bytes": 10},
                    },
                    {
                        "status": "completed",
                        "text": "It is sunny in Paris.",
                        "stop_reason": "stop",
                        "provider_metrics": {"audio_deltas": 2, "audio_bytes": 9},
                        "usage": usage(90, 20, 50, reasoning=None),
                    },
                    {
                        "status": "cancelled",
                        "text": "Anything",
                        "provider_stop_reason": "client_cancelled",
                        "provider_metrics": {"audio_deltas": 1, "audio_bytes": 3},
                    },
                ],
                "session": {"response_count": 3, **SESSION_CLEAN},
            },
        )
    )

    rt = Realtime()
    spaced, compact = '{"a": 2, "b": 3}', '{"a":2,"b":3}'
    at = {"response_id": "resp_rt08", "item_id": "item_rt08", "output_index": 0}
    out.append(
        case(
            P,
            "08-args-respelled",
            [
                rt.session_created(),
                rt.created("resp_rt08"),
                rt.e(
                    "response.output_item.added",
                    response_id="resp_rt08",
                    output_index=0,
                    item=rt.call_item("item_rt08", "call_rt08", "add", "", "in_progress"),
                ),
                rt.e("response.function_call_arguments.delta", delta='{"a": 2, ', **at),
                rt.e("response.function_call_arguments.delta", delta='"b": 3}', **at),
                rt.e("response.function_call_arguments.done", arguments=spaced, **at),
                rt.e(
                    "response.output_item.done",
                    response_id="resp_rt08",
                    output_index=0,
                    item=rt.call_item("item_rt08", "call_rt08", "add", compact, "completed"),
                ),
                rt.done(
                    "resp_rt08",
                    "completed",
                    [rt.call_item("item_rt08", "call_rt08", "add", compact, "completed")],
                    realtime_usage(30, 10),
                ),
            ],
            "the done item spells the arguments compactly, the deltas with spaces: the same "
            "JSON, the same arguments; the deltas' text is kept, with a warning",
            {
                "status": "completed",
                "stop_reason": "tool_calls",
                "executable": True,
                "tool_calls": [
                    call(0, "call_rt08", "add", {"a": 2, "b": 3}, spaced, type="function_call")
                ],
                "results": [
                    {
                        "status": "completed",
                        "warnings": ["arguments_respelled"],
                        "conflicts_count": 0,
                    }
                ],
                "session": {"response_count": 1, **SESSION_CLEAN},
            },
        )
    )
    return out
