"""The ``openai-responses-ws`` fixture cases (see ``make_ws_fixtures.py``).

Written by hand from the references named in ``ws_cases.METHOD``; every
``expect`` from the references and docs/design.md, never from streamwire's output.
"""

from __future__ import annotations

from typing import Any

from ws_cases import SESSION_CLEAN, call, case, usage
from ws_messages import Responses, responses_error, responses_usage

__all__ = ["responses_ws"]


# --- openai-responses-ws -----------------------------------------------------------------------


def responses_ws() -> list[dict[str, Any]]:
    P = "openai-responses-ws"
    out = []

    r = Responses("resp_ws01")
    out.append(
        case(
            P,
            "01-text",
            [
                r.created(),
                r.in_progress(),
                *r.message_events("msg_ws01", 0, ["Hello", ", world"]),
                r.completed([r.message_item("msg_ws01", "Hello, world")], responses_usage(12, 3)),
            ],
            "one response.create answered with text on the socket",
            {
                "status": "completed",
                "stop_reason": "stop",
                "provider_stop_reason": "completed",
                "text": "Hello, world",
                "executable": False,
                "tool_call_count": 0,
                "usage": usage(12, 3),
                "error": None,
                "warnings": [],
                "conflicts_count": 0,
                "wire_events": 10,
                "events": [
                    {"event": "MessageStarted", "message_id": "resp_ws01", "choice": 0},
                    {"event": "TextDelta", "text": "Hello"},
                    {"event": "TextDelta", "text": ", world"},
                    {"event": "UsageReported", "usage": usage(12, 3)},
                    {
                        "event": "MessageCompleted",
                        "status": "completed",
                        "stop_reason": "stop",
                        "provider_stop_reason": "completed",
                    },
                ],
                "results": [{"status": "completed", "final": True, "message_id": "resp_ws01"}],
                "session": {"response_count": 1, **SESSION_CLEAN},
            },
        )
    )

    r = Responses("resp_ws02")
    args = '{"city":"Paris"}'
    out.append(
        case(
            P,
            "02-tool-call",
            [
                r.created(),
                r.call_added("fc_ws02", "call_ws02", "get_weather", 0),
                r.arguments_delta("fc_ws02", 0, '{"city":'),
                r.arguments_delta("fc_ws02", 0, '"Paris"}'),
                *r.call_done("fc_ws02", "call_ws02", "get_weather", 0, args),
                r.completed(
                    [r.call_item("fc_ws02", "call_ws02", "get_weather", args, "completed")],
                    responses_usage(30, 18),
                ),
            ],
            "one function call: its call_id (not the item id) is the call's id",
            {
                "status": "completed",
                "stop_reason": "tool_calls",
                "executable": True,
                "tool_calls": [
                    call(
                        0, "call_ws02", "get_weather", {"city": "Paris"}, args, type="function_call"
                    )
                ],
                "usage": usage(30, 18),
                "events_of_type": {
                    "ToolCallStarted": 1,
                    "ToolCallArgumentsDelta": 2,
                    "ToolCallCompleted": 1,
                    "MessageCompleted": 1,
                },
                "session": {"response_count": 1, **SESSION_CLEAN},
            },
        )
    )

    r = Responses("resp_ws03")
    a, b = '{"city":"Paris"}', '{"timezone":"Europe/Paris"}'
    out.append(
        case(
            P,
            "03-parallel-tool-calls",
            [
                r.created(),
                r.call_added("fc_ws03a", "call_ws03a", "get_weather", 0),
                r.arguments_delta("fc_ws03a", 0, a),
                *r.call_done("fc_ws03a", "call_ws03a", "get_weather", 0, a),
                r.call_added("fc_ws03b", "call_ws03b", "get_time", 1),
                r.arguments_delta("fc_ws03b", 1, '{"timezone":'),
                r.arguments_delta("fc_ws03b", 1, '"Europe/Paris"}'),
                *r.call_done("fc_ws03b", "call_ws03b", "get_time", 1, b),
                r.completed(
                    [
                        r.call_item("fc_ws03a", "call_ws03a", "get_weather", a, "completed"),
                        r.call_item("fc_ws03b", "call_ws03b", "get_time", b, "completed"),
                    ],
                    responses_usage(31, 40),
                ),
            ],
            "two function calls in one response: released together",
            {
                "status": "completed",
                "stop_reason": "tool_calls",
                "executable": True,
                "tool_call_count": 2,
                "call_ids_unique": True,
                "arguments_valid_json": True,
                "tool_calls": [
                    call(0, "call_ws03a", "get_weather", {"city": "Paris"}, a),
                    call(1, "call_ws03b", "get_time", {"timezone": "Europe/Paris"}, b),
                ],
            },
        )
    )

    r = Responses("resp_ws04")
    out.append(
        case(
            P,
            "04-cancel-mid-call",
            [
                r.created(),
                r.call_added("fc_ws04", "call_ws04", "get_weather", 0),
                r.arguments_delta("fc_ws04", 0, '{"city":"Pa'),
                r.arguments_delta("fc_ws04", 0, 'ris"}'),
                *r.call_done("fc_ws04", "call_ws04", "get_weather", 0, '{"city":"Paris"}'),
            ],
            "the caller cancels while a call's arguments stream: never executable",
            {
                "status": "cancelled",
                "executable": False,
                "tool_args_complete": False,
                "tool_calls": [call(0, "call_ws04", "get_weather", None, '{"city":"Pa', ok=False)],
                "usage": None,
                "events_tail": [{"event": "MessageCompleted", "status": "cancelled"}],
                "results": [{"status": "cancelled", "final": True}],
            },
            replay={"end": "cancel", "at_message": 3},
        )
    )

    r = Responses("resp_ws05")
    message = "The server had an error while processing your request. Sorry about that!"
    added = r.message_events("msg_ws05", 0, ["Partial"])[:3]
    out.append(
        case(
            P,
            "05-error",
            [
                r.created(),
                *added,
                responses_error("server_error", message, "server_error", 500),
            ],
            "an error event on the socket ends the response in flight, text kept",
            {
                "status": "error",
                "text": "Partial",
                "stop_reason": None,
                "provider_stop_reason": None,
                "error": {
                    "phase": "provider",
                    "type": "server_error",
                    "code": "server_error",
                    "message": message,
                    "retryable": True,
                },
                "usage": None,
                "results": [{"status": "error", "final": True, "message_id": "resp_ws05"}],
                "session": {"response_count": 1, "errors": []},
            },
        )
    )

    r = Responses("resp_ws06")
    where = {"item_id": "msg_ws06", "output_index": 0, "content_index": 0}
    item = {"id": "msg_ws06", "type": "message", "status": "in_progress", "role": "assistant"}
    part = {"type": "output_text", "annotations": [], "text": ""}
    out.append(
        case(
            P,
            "06-unknown-event",
            [
                r.created(),
                r.event("response.output_item.added", output_index=0, item={**item, "content": []}),
                r.event("response.content_part.added", part=part, **where),
                {
                    **r.event("response.output_text.delta", delta="Known", logprobs=[], **where),
                    "future_field": 1,
                },
                r.event(
                    "response.reasoning_trace.delta", item_id="msg_ws06", output_index=0, delta="?"
                ),
                r.event("response.output_text.delta", delta=" text", logprobs=[], **where),
                r.event("response.output_text.done", text="Known text", logprobs=[], **where),
                r.event(
                    "response.output_item.done",
                    output_index=0,
                    item=r.message_item("msg_ws06", "Known text"),
                ),
                r.completed([r.message_item("msg_ws06", "Known text")], responses_usage(8, 2)),
                {"type": "connection.keepalive"},
            ],
            "an unknown event type in a response, an unknown field, an unknown session message",
            {
                "status": "completed",
                "text": "Known text",
                "warnings": [],
                "unknown_events": {"response.reasoning_trace.delta": 1},
                "unknown_fields": {"future_field": 1},
                "unknown_events_tolerated": True,
                "conflicts_count": 0,
                "events_of_type": {"UnknownEvent": 2, "TextDelta": 2},
                "session": {
                    "response_count": 1,
                    "unknown_events": {"connection.keepalive": 1},
                    "errors": [],
                },
            },
        )
    )

    a = Responses("resp_ws07a")
    b = Responses("resp_ws07b", previous="resp_ws07a")
    d = Responses("resp_ws07d")
    args = '{"city":"Paris"}'
    sunny = "It is 18°C and sunny in Paris."
    missing = "Previous response with id 'resp_ws07x' not found."
    out.append(
        case(
            P,
            "07-session",
            [
                a.created(),
                a.call_added("fc_ws07", "call_ws07", "get_weather", 0),
                a.arguments_delta("fc_ws07", 0, args),
                *a.call_done("fc_ws07", "call_ws07", "get_weather", 0, args),
                a.completed(
                    [a.call_item("fc_ws07", "call_ws07", "get_weather", args, "completed")],
                    responses_usage(40, 12),
                ),
                b.created(),
                *b.message_events("msg_ws07b", 0, ["It is 18°C", " and sunny in Paris."]),
                b.completed([b.message_item("msg_ws07b", sunny)], responses_usage(70, 9, 40)),
                responses_error(
                    "previous_response_not_found",
                    missing,
                    "invalid_request_error",
                    400,
                    param="previous_response_id",
                ),
                d.created(),
                *d.message_events("msg_ws07d", 0, ["Starting over."]),
                d.completed([d.message_item("msg_ws07d", "Starting over.")], responses_usage(5, 3)),
            ],
            "a session: a call, its answer chained by previous_response_id, a failed "
            "response.create (previous_response_not_found), a fresh chain",
            {
                "status": "completed",
                "text": "Starting over.",
                "results": [
                    {
                        "status": "completed",
                        "stop_reason": "tool_calls",
                        "executable": True,
                        "message_id": "resp_ws07a",
                        "tool_calls": [
                            call(0, "call_ws07", "get_weather", {"city": "Paris"}, args)
                        ],
                        "usage": usage(40, 12),
                    },
                    {
                        "status": "completed",
                        "stop_reason": "stop",
                        "text": sunny,
                        "message_id": "resp_ws07b",
                        "usage": usage(70, 9, 40),
                    },
                    {
                        "status": "error",
                        "text": "",
                        "message_id": None,
                        "error": {
                            "phase": "provider",
                            "type": "invalid_request_error",
                            "code": "previous_response_not_found",
                            "message": missing,
                            "retryable": False,
                        },
                    },
                    {"status": "completed", "text": "Starting over.", "message_id": "resp_ws07d"},
                ],
                "session": {"response_count": 4, **SESSION_CLEAN},
            },
        )
    )

    r = Responses("resp_ws08")
    spaced, compact = '{"a": 2, "b": 3}', '{"a":2,"b":3}'
    out.append(
        case(
            P,
            "08-args-respelled",
            [
                r.created(),
                r.call_added("fc_ws08", "call_ws08", "add", 0),
                r.arguments_delta("fc_ws08", 0, '{"a": 2, '),
                r.arguments_delta("fc_ws08", 0, '"b": 3}'),
                r.event(
                    "response.function_call_arguments.done",
                    item_id="fc_ws08",
                    output_index=0,
                    arguments=spaced,
                ),
                r.event(
                    "response.output_item.done",
                    output_index=0,
                    item=r.call_item("fc_ws08", "call_ws08", "add", compact, "completed"),
                ),
                r.completed(
                    [r.call_item("fc_ws08", "call_ws08", "add", compact, "completed")],
                    responses_usage(22, 14),
                ),
            ],
            "the done item spells the arguments compactly, the deltas and "
            "function_call_arguments.done with spaces (a translating proxy): the same JSON, "
            "the same arguments; the deltas' text is kept, with a warning",
            {
                "status": "completed",
                "stop_reason": "tool_calls",
                "executable": True,
                "tool_calls": [
                    call(0, "call_ws08", "add", {"a": 2, "b": 3}, spaced, type="function_call")
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
