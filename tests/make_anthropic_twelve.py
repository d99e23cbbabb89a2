"""The twelve regression cases every streaming gateway must pass, as Anthropic streams.

The same list as ``fixtures/regression/openai-chat``: short text; long text
without buffering; every split point; several events in one read;
keep-alives and blank lines; one tool call; parallel tool calls; argument JSON
split anywhere; a failing tool; an in-stream error; an unknown event; cancel
and disconnect. Written by ``make_anthropic_fixtures.py`` (see there); every
``expect`` is written from Anthropic's streaming reference and docs/design.md.
"""

# ruff: noqa: E501 (fixture data: one-line case descriptions and payloads)

from __future__ import annotations

import hashlib
import json
import random

from make_anthropic_fixtures import U25, Body, T, U, completed, started, usage, write


def twelve_cases() -> None:
    """The twelve regression cases."""

    # 01 short text
    mid = "msg_reg01shorttext"
    s = Body(mid).start(
        {
            "input_tokens": 12,
            "cache_creation_input_tokens": 0,
            "cache_read_input_tokens": 0,
            "output_tokens": 1,
        }
    )
    s.bstart(0, {"type": "text", "text": ""}).ping().td(0, "Hello").td(0, ", world").td(0, "!")
    s.bstop(0).mdelta("end_turn", {"output_tokens": 6}).mstop()
    write(
        "01-short-text",
        s.bytes(),
        "short text: message_start, one text block, ping, message_delta, message_stop",
        {
            "status": "completed",
            "text": "Hello, world!",
            "stop_reason": "stop",
            "provider_stop_reason": "end_turn",
            "usage": usage(12, 6),
            "executable": False,
            "tool_call_count": 0,
            "warnings": [],
            "error": None,
            "conflicts": [],
            "unknown_events": {},
            "unknown_fields": {},
            "wire_events": 9,
            "provider_content": [{"type": "text", "text": "Hello, world!"}],
            "events": [
                started(mid),
                U(12, 1),
                T("Hello"),
                T(", world"),
                T("!"),
                U(12, 6),
                U(12, 6, final=True),
                completed("completed", "stop", "end_turn"),
            ],
        },
    )

    # 02 long text
    mid = "msg_reg02longtext"
    rng = random.Random(20261129)
    tokens = [
        " the",
        " stream",
        " parser",
        " café",
        " naïve",
        ' "quoted"',
        " back\\slash",
        "你好",
        "世界",
        "模型",
        "🙂",
        "🚀",
        "👍🏽",
        "👩\u200d💻",
        "\n",
        "\t",
        " `code`",
        " 42",
    ]
    pieces = ["".join(rng.choice(tokens) for _ in range(rng.randint(1, 4))) for _ in range(1500)]
    s = Body(mid).start(
        {
            "input_tokens": 20,
            "cache_creation_input_tokens": 0,
            "cache_read_input_tokens": 0,
            "output_tokens": 1,
        }
    )
    s.bstart(0, {"type": "text", "text": ""})
    for p in pieces:
        s.td(0, p)
    s.bstop(0).mdelta("end_turn", {"output_tokens": 1500}).mstop()
    raw = s.bytes()
    text = "".join(pieces)
    largest = max(len(p.encode()) for p in s.parts)
    write(
        "02-long-text",
        raw,
        "long text (1,500 deltas: ASCII, CJK, emoji, escapes): no whole-stream buffering; the framing buffer never holds more than the largest event",
        {
            "status": "completed",
            "text_sha256": hashlib.sha256(text.encode()).hexdigest(),
            "text_length": len(text),
            "stop_reason": "stop",
            "usage": usage(20, 1500),
            "warnings": [],
            "error": None,
            "max_peak_buffered_bytes": largest,
            "events_of_type": {"TextDelta": 1500, "MessageCompleted": 1},
        },
        notes=[
            "max_peak_buffered_bytes is the size of the largest event (its event and data lines and the blank line): memory held by the framing is O(largest event), never O(stream)"
        ],
    )

    # 03 network splits: CRLF and multi-byte text
    mid = "msg_reg03splits"
    s = Body(mid, eol="\r\n").start(U25)
    parts3 = ["Ünïcödé ", "你好，世界", " 🚀", " 👩\u200d👩\u200d👧", " café\r\nend"]
    s.textblock(0, *parts3).mdelta("end_turn", {"output_tokens": 9}).mstop()
    write(
        "03-network-splits",
        s.bytes(),
        "multi-byte UTF-8 (2-, 3- and 4-byte sequences, a ZWJ sequence) and CRLF line endings: replayed at every split point, so cuts land inside code points and between CR and LF",
        {
            "status": "completed",
            "text": "".join(parts3),
            "stop_reason": "stop",
            "warnings": [],
            "events": [
                started(mid),
                U(25, 1),
                *[T(p) for p in parts3],
                U(25, 9),
                U(25, 9, final=True),
                completed("completed", "stop", "end_turn"),
            ],
        },
    )

    # 04 several events in one read
    mid = "msg_reg04several"
    s = Body(mid).start(U25)
    digits = [str(i) for i in range(15)]
    s.textblock(0, *digits).mdelta("end_turn", {"output_tokens": 15}).mstop()
    write(
        "04-several-events-one-read",
        s.bytes(),
        "twenty events, fifteen of them text deltas, in one read (the 'whole' chunking feeds them in a single call): every event returned, in order",
        {
            "status": "completed",
            "text": "".join(digits),
            "warnings": [],
            "wire_events": 20,
            "events": [
                started(mid),
                U(25, 1),
                *[T(d) for d in digits],
                U(25, 15),
                U(25, 15, final=True),
                completed("completed", "stop", "end_turn"),
            ],
        },
    )

    # 05 keep-alives
    mid = "msg_reg05keepalive"
    s = Body(mid)
    s.text(": keep-alive\n\n\n\nretry: 3000\n\n")
    s.start(U25).ping().text(": ping\n\n")
    s.bstart(0, {"type": "text", "text": ""})
    s.ev({"type": "ping"}, raw='{"type": "ping"}')
    s.td(0, "still ").text("data:\n\n:\n\n\n\n").ping().td(0, "here")
    s.bstop(0).ping().mdelta("end_turn", {"output_tokens": 3}).text(": bye\n\n").mstop()
    write(
        "05-keepalives-blank-lines",
        s.bytes(),
        "SSE comments, blank lines, a retry field, an empty data payload and ping events between events: keep-alives, not unknown events",
        {
            "status": "completed",
            "text": "still here",
            "warnings": [],
            "unknown_events": {},
            "unknown_fields": {},
            "conflicts": [],
            "events": [
                started(mid),
                U(25, 1),
                T("still "),
                T("here"),
                U(25, 3),
                U(25, 3, final=True),
                completed("completed", "stop", "end_turn"),
            ],
        },
    )

    # 06 one tool call
    mid = "msg_reg06tool"
    args6 = '{"city": "Berlin", "unit": "celsius"}'
    s = Body(mid).start(U25)
    s.textblock(0, "Let me ", "check.")
    s.tool(
        1,
        "toolu_reg06weather",
        "get_weather",
        ["", '{"city": "Ber', 'lin", "unit": ', '"celsius"}'],
    )
    s.mdelta("tool_use", {"output_tokens": 40}).mstop()
    call6 = {
        "choice": 0,
        "index": 0,
        "id": "toolu_reg06weather",
        "name": "get_weather",
        "type": "tool_use",
        "raw_arguments": args6,
        "arguments": {"city": "Berlin", "unit": "celsius"},
        "state": "valid",
        "executable": True,
        "id_source": "provider",
    }
    write(
        "06-one-tool-call",
        s.bytes(),
        "one tool_use block after a text block: name, id and arguments; the first input_json_delta is empty; the result is correlated by id (tests/test_anthropic.py)",
        {
            "status": "completed",
            "text": "Let me check.",
            "stop_reason": "tool_calls",
            "provider_stop_reason": "tool_use",
            "executable": True,
            "tool_call_count": 1,
            "tool_calls": [call6],
            "call_ids_unique": True,
            "arguments_valid_json": True,
            "tool_args_complete": True,
            "usage": usage(25, 40),
            "provider_content": [
                {"type": "text", "text": "Let me check."},
                {
                    "type": "tool_use",
                    "id": "toolu_reg06weather",
                    "name": "get_weather",
                    "input": {"city": "Berlin", "unit": "celsius"},
                },
            ],
            "events_of_type": {
                "ToolCallStarted": 1,
                "ToolCallArgumentsDelta": 3,
                "ToolCallCompleted": 1,
            },
            "events_tail": [
                {
                    "event": "ToolCallArgumentsDelta",
                    "index": 0,
                    "id": "toolu_reg06weather",
                    "delta": '"celsius"}',
                    "choice": 0,
                },
                {
                    "event": "ToolCallCompleted",
                    "index": 0,
                    "id": "toolu_reg06weather",
                    "name": "get_weather",
                    "type": "tool_use",
                    "raw_arguments": args6,
                    "arguments": {"city": "Berlin", "unit": "celsius"},
                    "invalid_reason": None,
                    "executor": "client",
                    "id_source": "provider",
                    "choice": 0,
                },
                U(25, 40),
                U(25, 40, final=True),
                completed("completed", "tool_calls", "tool_use"),
            ],
        },
    )

    # 07 parallel tool calls
    mid = "msg_reg07parallel"
    s = Body(mid).start(U25)
    s.textblock(0, "Checking three cities.")
    cities = [("toolu_reg07a", "Paris"), ("toolu_reg07b", "東京"), ("toolu_reg07c", "São Paulo")]
    for i, (tid, city) in enumerate(cities, start=1):
        body = json.dumps({"city": city}, ensure_ascii=False)
        s.tool(i, tid, "get_weather", ["", body[:5], body[5:]])
    s.mdelta("tool_use", {"output_tokens": 90}).mstop()
    write(
        "07-parallel-tool-calls",
        s.bytes(),
        "parallel tool use: three tool_use blocks, each with its own buffer keyed by block index; released as one batch",
        {
            "status": "completed",
            "stop_reason": "tool_calls",
            "executable": True,
            "tool_call_count": 3,
            "call_ids_unique": True,
            "arguments_valid_json": True,
            "tool_calls": [
                {
                    "index": i,
                    "id": tid,
                    "name": "get_weather",
                    "arguments": {"city": city},
                    "raw_arguments": json.dumps({"city": city}, ensure_ascii=False),
                    "state": "valid",
                    "executable": True,
                }
                for i, (tid, city) in enumerate(cities)
            ],
            "provider_content": [{"type": "text", "text": "Checking three cities."}]
            + [
                {"type": "tool_use", "id": tid, "name": "get_weather", "input": {"city": city}}
                for tid, city in cities
            ],
        },
    )

    # 08 argument JSON split anywhere
    mid = "msg_reg08split"
    args8 = '{"query":"caf\\u00e9 \\"quoted\\" \\\\ back\\nslash","emoji":"🚀","n":1.5e3,"list":[1,2,{"k":null}]}'
    cuts = [
        '{"',
        'query":"caf',
        "\\",
        "u00",
        "e9 \\",
        '"quoted\\',
        '" \\\\',
        " back\\",
        'nslash","em',
        'oji":"',
        "🚀",
        '","n":1.5',
        "e3,",
        '"list":[1',
        ",2,{",
        '"k":nu',
        "ll}]}",
    ]
    assert "".join(cuts) == args8
    s = Body(mid).start(U25)
    s.tool(0, "toolu_reg08", "search", ["", *cuts]).mdelta(
        "tool_use", {"output_tokens": 30}
    ).mstop()
    parsed8 = json.loads(args8)
    write(
        "08-tool-args-split",
        s.bytes(),
        "argument JSON cut right after a backslash and inside a \\u escape, inside keys, strings and a number (1.5|e3), next to an emoji: no character lost or doubled",
        {
            "status": "completed",
            "tool_call_count": 1,
            "executable": True,
            "tool_calls": [
                {
                    "choice": 0,
                    "id": "toolu_reg08",
                    "name": "search",
                    "raw_arguments": args8,
                    "arguments": parsed8,
                    "state": "valid",
                    "executable": True,
                }
            ],
            "events_of_type": {"ToolCallArgumentsDelta": len(cuts)},
            "provider_content": [
                {"type": "tool_use", "id": "toolu_reg08", "name": "search", "input": parsed8}
            ],
        },
    )

    # 09 failing tool
    mid = "msg_reg09failing"
    s = Body(mid).start(U25)
    s.tool(0, "toolu_reg09_db", "run_query", ["", '{"sql": ', '"SELECT * FROM missing"}'])
    s.mdelta("tool_use", {"output_tokens": 20}).mstop()
    write(
        "09-failing-tool",
        s.bytes(),
        "a tool whose execution fails: tests/test_anthropic.py authorizes it in a ToolLedger, records the failure, and sends back a tool_result with is_error correlated by tool_use_id; a second execution of the same id is refused",
        {
            "status": "completed",
            "tool_call_count": 1,
            "executable": True,
            "tool_calls": [
                {
                    "choice": 0,
                    "id": "toolu_reg09_db",
                    "name": "run_query",
                    "raw_arguments": '{"sql": "SELECT * FROM missing"}',
                    "arguments": {"sql": "SELECT * FROM missing"},
                    "state": "valid",
                    "executable": True,
                }
            ],
        },
    )

    # 10 in-stream error
    mid = "msg_reg10error"
    s = Body(mid).start(U25)
    s.bstart(0, {"type": "text", "text": ""}).td(0, "Partial")
    s.ev(
        {
            "type": "error",
            "error": {"type": "overloaded_error", "message": "Overloaded"},
            "request_id": "req_011CSHoEeqs5C35K2UUqR7Fy",
        }
    )
    write(
        "10-in-stream-error",
        s.bytes(),
        "an overloaded_error event after some text, then EOF: status error with the provider's type, retryable, machine-readable; the message never becomes text; usage not final",
        {
            "status": "error",
            "text": "Partial",
            "stop_reason": None,
            "executable": False,
            "usage": usage(25, 1, final=False),
            "error": {
                "phase": "provider",
                "type": "overloaded_error",
                "code": None,
                "message": "Overloaded",
                "retryable": True,
            },
            "events": [
                started(mid),
                U(25, 1),
                T("Partial"),
                {
                    "event": "ErrorReceived",
                    "phase": "provider",
                    "type": "overloaded_error",
                    "code": None,
                    "message": "Overloaded",
                    "retryable": True,
                    "request_id": "req_011CSHoEeqs5C35K2UUqR7Fy",
                },
                completed("error", None, None),
            ],
        },
    )

    # 11 unknown events
    mid = "msg_reg11unknown"
    s = Body(mid).start(U25)
    s.bstart(0, {"type": "text", "text": ""}).td(0, "A")
    s.ev({"type": "content_block_annotation", "index": 0, "note": "new"})
    s.delta(0, {"type": "future_delta", "value": 1})
    s.ev(
        {
            "type": "content_block_delta",
            "index": 0,
            "delta": {"type": "text_delta", "text": "B"},
            "x_trace": "abc",
        }
    )
    s.td(0, "C").bstop(0)
    s.bstart(1, {"type": "future_block", "payload": {"k": "v"}}).bstop(1)
    s.mdelta("end_turn", {"output_tokens": 5}).mstop()
    write(
        "11-unknown-event",
        s.bytes(),
        "an unknown event type, an unknown delta type, an unknown block type and an unknown event field: ignored, counted, state intact",
        {
            "status": "completed",
            "text": "ABC",
            "stop_reason": "stop",
            "warnings": [],
            "conflicts": [],
            "unknown_events_tolerated": True,
            "unknown_events": {
                "content_block_annotation": 1,
                "content_block_delta:future_delta": 1,
                "content_block:future_block": 1,
            },
            "unknown_fields": {"content_block_delta.x_trace": 1},
            "events": [
                started(mid),
                U(25, 1),
                T("A"),
                {"event": "UnknownEvent", "provider_type": "content_block_annotation"},
                {"event": "UnknownEvent", "provider_type": "content_block_delta:future_delta"},
                T("B"),
                T("C"),
                {"event": "UnknownEvent", "provider_type": "content_block:future_block"},
                U(25, 5),
                U(25, 5, final=True),
                completed("completed", "stop", "end_turn"),
            ],
            "provider_content": [
                {"type": "text", "text": "ABC"},
                {"type": "future_block", "payload": {"k": "v"}},
            ],
        },
        notes=[
            "a block of an unknown type that received no delta is kept verbatim in provider_content (the API accepts its own blocks back); one that received deltas would be left out with a warning"
        ],
    )

    # 12a disconnect
    mid = "msg_reg12disconnect"
    s = Body(mid).start(U25)
    s.textblock(0, "Let me check.")
    s.tool(1, "toolu_reg12", "get_weather", ["", '{"city": "Ber'], stop=False)
    raw = (
        s.bytes()
        + b'event: content_block_delta\ndata: {"type":"content_block_delta","index":1,"delta":{"type":"input_js'
    )
    write(
        "12a-disconnect",
        raw,
        "the connection drops mid tool call, inside an event: incomplete, the partial event discarded, the call rejected, nothing executable, usage not final",
        {
            "status": "incomplete",
            "text": "Let me check.",
            "stop_reason": None,
            "usage": usage(25, 1, final=False),
            "executable": False,
            "tool_call_count": 1,
            "tool_args_complete": False,
            "tool_calls": [
                {
                    "choice": 0,
                    "id": "toolu_reg12",
                    "name": "get_weather",
                    "raw_arguments": '{"city": "Ber',
                    "arguments": None,
                    "state": "rejected",
                    "executable": False,
                }
            ],
            "warnings": ["partial_event_discarded"],
            "provider_content": [{"type": "text", "text": "Let me check."}],
            "events_tail": [completed("incomplete", None, None)],
        },
    )

    # 12b cancel
    mid = "msg_reg12cancel"
    s = Body(mid).start(U25)
    s.bstart(0, {"type": "text", "text": ""}).td(0, "One").td(0, " two").td(0, " three")
    cut = len(s.bytes())
    s.bstop(0).tool(1, "toolu_reg12c", "notify", ["", '{"to":"ops"}'])
    s.mdelta("tool_use", {"output_tokens": 19}).mstop()
    write(
        "12b-cancel",
        s.bytes(),
        "the caller cancels after three text deltas: cancelled, usage not final, nothing executable",
        {
            "status": "cancelled",
            "text": "One two three",
            "executable": False,
            "tool_call_count": 0,
            "usage": usage(25, 1, final=False),
            "events_tail": [completed("cancelled", None, None)],
        },
        replay={"end": "cancel", "at_byte": cut},
        notes=[
            "replay: the first at_byte bytes are fed under every chunking, then cancel() is called"
        ],
    )
