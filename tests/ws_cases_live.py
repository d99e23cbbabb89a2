"""The ``gemini-live`` fixture cases (see ``make_ws_fixtures.py``).

Written by hand from the references named in ``ws_cases.METHOD``; every
``expect`` from the references and docs/design.md, never from streamwire's output.
"""

from __future__ import annotations

from typing import Any

from ws_cases import SESSION_CLEAN, call, case, usage
from ws_messages import Message, live_audio, live_calls, live_text, live_usage

__all__ = ["live"]


# --- gemini-live -------------------------------------------------------------------------------


def live() -> list[dict[str, Any]]:
    P = "gemini-live"
    setup: Message = {"setupComplete": {}}
    out = []

    def live_usage_expect(prompt: int, response: int) -> dict[str, Any]:
        return usage(prompt, response, cached=None, reasoning=None)

    out.append(
        case(
            P,
            "01-text",
            [
                setup,
                live_text("Hello"),
                live_text(", world"),
                {"serverContent": {"generationComplete": True}},
                {"serverContent": {"turnComplete": True}, "usageMetadata": live_usage(9, 3)},
            ],
            "one text turn: generationComplete, then turnComplete with the turn's usage",
            {
                "status": "completed",
                "stop_reason": "stop",
                "provider_stop_reason": "turnComplete",
                "text": "Hello, world",
                "usage": live_usage_expect(9, 3),
                "error": None,
                "warnings": [],
                "events": [
                    {"event": "MessageStarted", "message_id": None},
                    {"event": "TextDelta", "text": "Hello"},
                    {"event": "TextDelta", "text": ", world"},
                    {"event": "UsageReported", "usage": live_usage_expect(9, 3)},
                    {
                        "event": "MessageCompleted",
                        "status": "completed",
                        "stop_reason": "stop",
                        "provider_stop_reason": "turnComplete",
                    },
                ],
                "provider_content": [{"text": "Hello, world"}],
                "session": {"response_count": 1, **SESSION_CLEAN},
            },
        )
    )

    out.append(
        case(
            P,
            "02-tool-call",
            [
                setup,
                live_calls(("fc-live-2", "get_weather", {"city": "Paris"})),
                live_text("It's sunny in Paris."),
                {"serverContent": {"turnComplete": True}, "usageMetadata": live_usage(40, 8)},
            ],
            "a toolCall ends its turn (the model waits for the toolResponse); the answer is "
            "the next turn",
            {
                "status": "completed",
                "text": "It's sunny in Paris.",
                "results": [
                    {
                        "status": "completed",
                        "stop_reason": "tool_calls",
                        "provider_stop_reason": "toolCall",
                        "executable": True,
                        "tool_calls": [
                            call(
                                0,
                                "fc-live-2",
                                "get_weather",
                                {"city": "Paris"},
                                '{"city":"Paris"}',
                                type="function",
                            )
                        ],
                        "usage": None,
                    },
                    {
                        "status": "completed",
                        "stop_reason": "stop",
                        "text": "It's sunny in Paris.",
                        "usage": live_usage_expect(40, 8),
                    },
                ],
                "session": {"response_count": 2, **SESSION_CLEAN},
            },
        )
    )

    out.append(
        case(
            P,
            "03-parallel-tool-calls",
            [
                setup,
                live_calls(
                    ("fc-live-3a", "get_weather", {"city": "Paris"}),
                    ("fc-live-3b", "get_time", {"timezone": "Europe/Paris"}),
                ),
                {"serverContent": {"turnComplete": True}, "usageMetadata": live_usage(35, 12)},
            ],
            "two calls in one toolCall; a turnComplete right after is absorbed by that turn",
            {
                "status": "completed",
                "stop_reason": "tool_calls",
                "executable": True,
                "tool_call_count": 2,
                "call_ids_unique": True,
                "tool_calls": [
                    call(0, "fc-live-3a", "get_weather", {"city": "Paris"}, '{"city":"Paris"}'),
                    call(
                        1,
                        "fc-live-3b",
                        "get_time",
                        {"timezone": "Europe/Paris"},
                        '{"timezone":"Europe/Paris"}',
                    ),
                ],
                "usage": live_usage_expect(35, 12),
                "session": {"response_count": 1, **SESSION_CLEAN},
            },
        )
    )

    out.append(
        case(
            P,
            "04-cancel-mid-call",
            [
                setup,
                live_calls(
                    ("fc-live-4a", "search_flights", {"to": "LIS"}),
                    ("fc-live-4b", "book_hotel", {"city": "Lisbon"}),
                ),
                {"serverContent": {"interrupted": True}},
                {"toolCallCancellation": {"ids": ["fc-live-4a", "fc-live-4b"]}},
                {"serverContent": {"turnComplete": True}},
            ],
            "the user interrupts while calls run: toolCallCancellation withdraws calls "
            "already reported",
            {
                "status": "completed",
                "provider_stop_reason": "toolCall",
                "executable": False,
                "tool_calls": [
                    call(
                        0, "fc-live-4a", "search_flights", {"to": "LIS"}, '{"to":"LIS"}', ok=False
                    ),
                    call(
                        1,
                        "fc-live-4b",
                        "book_hotel",
                        {"city": "Lisbon"},
                        '{"city":"Lisbon"}',
                        ok=False,
                    ),
                ],
                "events_of_type": {"ToolCallCompleted": 4, "MessageCompleted": 1},
                "session": {"response_count": 1, **SESSION_CLEAN},
            },
            notes=[
                "the turn itself ended with its toolCall (completed); the cancellation makes "
                "its calls not executable afterwards, and a second ToolCallCompleted per call "
                "carries the withdrawal"
            ],
        )
    )

    out.append(
        case(
            P,
            "05-error",
            [
                setup,
                live_text("Calling the tool"),
                {
                    "serverContent": {
                        "turnComplete": True,
                        "turnCompleteReason": "MALFORMED_FUNCTION_CALL",
                    }
                },
            ],
            "a turn that ends with turnCompleteReason MALFORMED_FUNCTION_CALL: the "
            "generation failed",
            {
                "status": "error",
                "stop_reason": "error",
                "provider_stop_reason": "MALFORMED_FUNCTION_CALL",
                "text": "Calling the tool",
                "error": {
                    "phase": "provider",
                    "type": "MALFORMED_FUNCTION_CALL",
                    "code": None,
                    "retryable": False,
                },
            },
        )
    )

    out.append(
        case(
            P,
            "06-unknown-event",
            [
                setup,
                {"futureServerMessage": {"detail": 1}},
                live_text("Known"),
                {
                    "serverContent": {
                        "modelTurn": {"parts": [{"text": " text"}]},
                        "futureField": True,
                    }
                },
                {"serverContent": {"inputTranscription": {"text": "hello?"}}},
                {"serverContent": {"turnComplete": True}},
            ],
            "an unknown message, an unknown serverContent field, a known field with nothing "
            "to report",
            {
                "status": "completed",
                "text": "Known text",
                "unknown_events": {},
                "unknown_fields": {"serverContent.futureField": 1},
                "unknown_events_tolerated": True,
                "conflicts_count": 0,
                "session": {
                    "response_count": 1,
                    "unknown_events": {"futureServerMessage": 1},
                    "errors": [],
                },
            },
        )
    )

    out.append(
        case(
            P,
            "07-session",
            [
                setup,
                live_audio("AAAAAA==", "Hi there."),
                live_audio("AAECAwQF"),
                {"serverContent": {"generationComplete": True}},
                {"serverContent": {"turnComplete": True}, "usageMetadata": live_usage(20, 6)},
                {"sessionResumptionUpdate": {"newHandle": "handle-live-7", "resumable": True}},
                live_audio("AAAA", "Well, let"),
                {"serverContent": {"interrupted": True}},
                {"serverContent": {"turnComplete": True}, "usageMetadata": live_usage(30, 2)},
                live_text("Sure."),
                {"serverContent": {"turnComplete": True}},
                {"goAway": {"timeLeft": "50s"}},
            ],
            "a native-audio session: audio counted, transcripts as text, an interrupted turn, "
            "resumption handle, goAway",
            {
                "status": "completed",
                "text": "Sure.",
                "results": [
                    {
                        "status": "completed",
                        "text": "Hi there.",
                        "stop_reason": "stop",
                        "provider_metrics": {"audio_deltas": 2, "audio_bytes": 10},
                        "usage": live_usage_expect(20, 6),
                    },
                    {
                        "status": "cancelled",
                        "text": "Well, let",
                        "provider_stop_reason": "interrupted",
                        "provider_metrics": {"audio_deltas": 1, "audio_bytes": 3},
                        "usage": live_usage_expect(30, 2),
                    },
                    {"status": "completed", "text": "Sure.", "usage": None},
                ],
                "session": {"response_count": 3, "warnings": ["go_away"], "errors": []},
            },
        )
    )
    out.append(
        case(
            P,
            "08-tool-call-empty",
            [
                setup,
                live_text("Checking."),
                {"toolCall": {}},
                live_text("Nothing to call."),
                {"serverContent": {"turnComplete": True}},
            ],
            "a toolCall whose optional functionCalls is left out (toolCall: {}): no calls, "
            "nothing contradicted; it still ends its turn, with a warning",
            {
                "status": "completed",
                "text": "Nothing to call.",
                "results": [
                    {
                        "status": "completed",
                        "text": "Checking.",
                        "stop_reason": "stop",
                        "provider_stop_reason": "toolCall",
                        "executable": False,
                        "tool_calls": [],
                        "warnings": ["tool_call_empty"],
                        "conflicts_count": 0,
                    },
                    {"status": "completed", "text": "Nothing to call.", "warnings": []},
                ],
                "session": {"response_count": 2, **SESSION_CLEAN},
            },
        )
    )
    out.append(
        case(
            P,
            "09-turn-complete-reason-number",
            [
                setup,
                live_text("Hello."),
                {"serverContent": {"generationComplete": True}},
                {"serverContent": {"turnComplete": True, "turnCompleteReason": 7}},
            ],
            "a turnCompleteReason sent as a number (the ProtoJSON form of an enum) that no "
            "reference we checked numbers: kept as its decimal text and reported, never a "
            "conflict; the turn completed",
            {
                "status": "completed",
                "text": "Hello.",
                "stop_reason": "other",
                "provider_stop_reason": "7",
                "results": [
                    {
                        "status": "completed",
                        "stop_reason": "other",
                        "provider_stop_reason": "7",
                        "warnings": ["unknown_enum_number"],
                        "conflicts_count": 0,
                    }
                ],
                "session": {"response_count": 1, **SESSION_CLEAN},
            },
            notes=[
                "TurnCompleteReason's numbers are in no reference we could check (the js-genai, "
                "java-genai and dotnet-genai types list names only), so every number is unknown; "
                "an unknown reason ends a completed turn as 'other', as an unknown name does"
            ],
        )
    )
    return out
