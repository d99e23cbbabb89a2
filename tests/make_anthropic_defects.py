"""Anthropic fixtures that pin one adapter behaviour each: the wire and its defects.

Event names and padding, misplaced events, errors, defective blocks and
payloads. Written by ``make_anthropic_fixtures.py`` (see there); every
``expect`` is written from Anthropic's streaming reference and docs/design.md.
"""

# ruff: noqa: E501 (fixture data: one-line case descriptions and payloads)

from __future__ import annotations

from make_anthropic_fixtures import MODEL, U25, Body, completed, usage, write


def defect_cases() -> None:
    """Writes the wire and defect cases."""
    mid = "msg_regnames"
    s = Body(mid)
    s.ev(
        {
            "type": "message_start",
            "message": {
                "id": mid,
                "type": "message",
                "role": "assistant",
                "model": MODEL,
                "content": [],
                "stop_reason": None,
                "stop_sequence": None,
                "usage": {"input_tokens": 25, "output_tokens": 1},
            },
        },
        name=None,
    )
    s.ev(
        None,
        name="content_block_start",
        raw='{ "type" : "content_block_start", "index" : 0, "content_block" : {"type":"text","text":""}   }',
    )
    s.ev(
        None,
        name="message",
        raw='{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"Pad"}          }',
    )
    s.ev(
        None,
        name="delta",
        raw='{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"ded"} }',
    )
    s.ev(None, name=None, raw='\t{"type":"content_block_stop","index":0}\t')
    s.ev(
        {
            "type": "message_delta",
            "delta": {"stop_reason": "end_turn", "stop_sequence": None},
            "usage": {"output_tokens": 3},
        },
        name=None,
    )
    s.ev(None, name="done", raw='{"type": "message_stop"}')
    write(
        "event-names-ignored",
        s.bytes(),
        "events dispatched on their JSON type: data-only events without an event line, a generic 'message' name, renamed event names, whitespace padding inside and around the JSON",
        {
            "status": "completed",
            "text": "Padded",
            "stop_reason": "stop",
            "unknown_events": {},
            "warnings": [],
            "conflicts": [],
            "usage": usage(25, 3, cr=None, cc=None),
        },
    )

    mid = "msg_regafterstop"
    s = Body(mid).start(U25)
    s.bstart(0, {"type": "text", "text": ""}).td(0, "Done")
    s.mdelta("end_turn", {"output_tokens": 3}).td(0, " and more").bstop(0).mstop()
    write(
        "content-after-stop-reason",
        s.bytes(),
        "a text delta after message_delta's stop_reason: content after the terminal stop reason is a protocol conflict (the block may still stop)",
        {
            "status": "protocol_conflict",
            "text": "Done",
            "conflicts_count": 1,
            "provider_stop_reason": "end_turn",
        },
    )

    mid = "msg_regbeforestart"
    s = Body(mid)
    s.bstart(0, {"type": "text", "text": ""}).td(0, "orphan")
    s.start(U25).textblock(0, "Real").mdelta("end_turn", {"output_tokens": 2}).mstop()
    write(
        "content-before-message-start",
        s.bytes(),
        "content blocks before message_start: a protocol conflict (each event before it is recorded); what follows is applied",
        {
            "status": "protocol_conflict",
            "text": "Real",
            "conflicts_count": 2,
        },
    )

    mid = "msg_regdataafter"
    s = Body(mid).start(U25)
    s.textblock(0, "Final").mdelta("end_turn", {"output_tokens": 2}).mstop()
    s.td(0, " extra").ping().mstop()
    s.text("data: [DONE]\n\n")
    write(
        "data-after-message-stop",
        s.bytes(),
        "events after message_stop (the end marker) and a chat-style [DONE]: ignored with warnings, the status stays completed",
        {
            "status": "completed",
            "text": "Final",
            "warnings": ["data_after_stop", "done_marker"],
            "conflicts": [],
            "usage": usage(25, 2),
        },
    )

    mid = "msg_regerrortext"
    s = Body(mid).start(U25)
    s.bstart(0, {"type": "text", "text": ""}).td(0, "Hi")
    s.ev(None, name="error", raw="Internal server error")
    write(
        "error-event-text-body",
        s.bytes(),
        "an error event whose body is not JSON (as some proxies send): status error with the text as the message, never text; not retryable (no type to go by)",
        {
            "status": "error",
            "text": "Hi",
            "error": {
                "phase": "provider",
                "type": None,
                "code": None,
                "message": "Internal server error",
                "retryable": False,
            },
        },
    )

    s = Body("none")
    s.ev({"type": "error", "error": {"type": "api_error", "message": "Internal server error"}})
    write(
        "error-before-message-start",
        s.bytes(),
        "an api_error before anything else: status error, retryable, no message started",
        {
            "status": "error",
            "text": "",
            "usage": None,
            "error": {
                "phase": "provider",
                "type": "api_error",
                "message": "Internal server error",
                "retryable": True,
            },
            "events": [
                {
                    "event": "ErrorReceived",
                    "phase": "provider",
                    "type": "api_error",
                    "retryable": True,
                },
                completed("error", None, None),
            ],
        },
    )

    mid = "msg_regbadindex"
    s = Body(mid).start(U25)
    s.textblock(0, "ok").td(5, "lost").bstop(7).mdelta("end_turn", {"output_tokens": 2}).mstop()
    write(
        "delta-for-unknown-block",
        s.bytes(),
        "a delta and a stop for block indexes that never started: they cannot be correlated, protocol conflicts",
        {
            "status": "protocol_conflict",
            "text": "ok",
            "conflicts_count": 2,
        },
    )

    mid = "msg_regtwice"
    s = Body(mid).start(U25)
    s.textblock(0, "one").bstart(0, {"type": "text", "text": ""}).bstop(0)
    s.mdelta("end_turn", {"output_tokens": 2}).mstop()
    write(
        "block-started-twice",
        s.bytes(),
        "content_block_start twice for the same index: a protocol conflict; a repeated stop is a warning",
        {
            "status": "protocol_conflict",
            "text": "one",
            "conflicts_count": 1,
            "warnings": ["repeated_block_stop"],
        },
    )

    mid = "msg_regstopchanged"
    s = Body(mid).start(U25)
    s.textblock(0, "x").mdelta("end_turn", {"output_tokens": 1})
    s.mdelta("max_tokens", {"output_tokens": 2}).mstop()
    write(
        "stop-reason-changed",
        s.bytes(),
        "a second message_delta with a different stop_reason: a protocol conflict; the first one is kept",
        {
            "status": "protocol_conflict",
            "provider_stop_reason": "end_turn",
            "conflicts_count": 1,
        },
    )

    mid = "msg_reginputstart"
    s = Body(mid).start(U25)
    s.bstart(
        0,
        {"type": "tool_use", "id": "toolu_whole", "name": "lookup", "input": {"id": 7, "tag": "ü"}},
    )
    s.bstop(0).mdelta("tool_use", {"output_tokens": 5}).mstop()
    write(
        "tool-input-at-start",
        s.bytes(),
        "a tool_use whose input arrives whole in content_block_start and no input_json_delta follows (as compatible servers send it): the start's input is the call's arguments",
        {
            "status": "completed",
            "executable": True,
            "tool_calls": [
                {
                    "id": "toolu_whole",
                    "name": "lookup",
                    "arguments": {"id": 7, "tag": "ü"},
                    "state": "valid",
                    "executable": True,
                }
            ],
            "provider_content": [
                {
                    "type": "tool_use",
                    "id": "toolu_whole",
                    "name": "lookup",
                    "input": {"id": 7, "tag": "ü"},
                }
            ],
            "events_of_type": {"ToolCallArgumentsDelta": 1},
        },
    )

    mid = "msg_regbadjson"
    s = Body(mid).start(U25)
    s.textblock(0, "Calling.")
    s.tool(1, "toolu_badjson", "lookup", ["", '{"id": 7,', ' "tag": }'])
    s.mdelta("tool_use", {"output_tokens": 5}).mstop()
    write(
        "tool-input-invalid-json",
        s.bytes(),
        "a stopped tool_use whose input is not valid JSON: completed, the call rejected with its raw arguments kept, nothing executable, the block left out of provider_content",
        {
            "status": "completed",
            "executable": False,
            "arguments_valid_json": False,
            "tool_calls": [
                {
                    "id": "toolu_badjson",
                    "raw_arguments": '{"id": 7, "tag": }',
                    "arguments": None,
                    "state": "rejected",
                    "executable": False,
                }
            ],
            "warnings": ["content_block_unusable"],
            "provider_content": [{"type": "text", "text": "Calling."}],
        },
    )

    mid = "msg_regnostop"
    s = Body(mid).start(U25)
    s.textblock(0, "Short").mstop()
    write(
        "message-stop-without-stop-reason",
        s.bytes(),
        "message_stop with no message_delta: completed (the end marker arrived) with no stop reason and a warning; usage not final (only message_start's placeholder output figure came)",
        {
            "status": "completed",
            "stop_reason": None,
            "provider_stop_reason": None,
            "warnings": ["missing_stop_reason"],
            "usage": usage(25, 1, final=False),
        },
    )

    mid = "msg_regtoolarge"
    s = Body(mid).start(U25)
    s.bstart(0, {"type": "text", "text": ""}).td(0, "ok").td(0, "x" * 400).td(0, "never")
    write(
        "event-too-large",
        s.bytes(),
        "an event larger than max_event_bytes: a framing error, status error, what came before is kept",
        {
            "status": "error",
            "text": "ok",
            "framing_ok": False,
            "error": {"phase": "framing", "type": "event_too_large"},
        },
        options={"max_event_bytes": 400},
    )

    mid = "msg_regbadpayload"
    s = Body(mid).start(U25)
    s.bstart(0, {"type": "text", "text": ""}).td(0, "ok")
    s.ev(
        None,
        name="content_block_delta",
        raw='{"type":"content_block_delta","index":0,"delta":{"type":"text_de',
    )
    write(
        "invalid-json-payload",
        s.bytes(),
        "a data payload that is not JSON: a framing error (the body is not the wire format), status error, what came before is kept",
        {
            "status": "error",
            "text": "ok",
            "framing_ok": False,
            "error": {"phase": "framing", "type": "invalid_json", "retryable": False},
        },
    )
