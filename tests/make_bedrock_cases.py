"""The ``bedrock-converse`` fixtures beyond the twelve regression cases: one behaviour each.

Used by ``make_bedrock_fixtures.py`` (run that); the ``bedrock-invoke`` cases
are in ``make_bedrock_invoke_cases.py``.
Every ``expect`` is written from the Bedrock and Anthropic references and
docs/design.md, never from streamwire's output.
"""

from __future__ import annotations

from typing import Any

from bedrock_frames import (
    Case,
    call,
    converse,
    error_frame,
    event_frame,
    exception_frame,
    expect_completed,
    expect_error,
    expect_started,
    expect_text,
    expect_usage,
    usage,
)

C = converse
CV = "bedrock-converse"
IV = "bedrock-invoke"


def _case(
    name: str, frames: list[bytes], exercises: str, expect: dict[str, Any], **kw: Any
) -> Case:
    return Case(CV, name, b"".join(frames), exercises, expect, **kw)


def _text_then(*frames: bytes, text: str = "Kept") -> list[bytes]:
    return [C.start(), C.text(0, text), *frames]


def _flip(frame: bytes, offset: int) -> bytes:
    damaged = bytearray(frame)
    damaged[offset] ^= 0x01
    return bytes(damaged)


def errors() -> list[Case]:
    """Exceptions, error frames, framing errors and bodies that are not EventStream."""
    out: list[Case] = []
    stream_error = {
        "message": "Received a client error from the model",
        "originalStatusCode": 400,
        "originalMessage": "prompt is too long",
    }
    out.append(
        _case(
            "exception-model-stream-error",
            _text_then(exception_frame("modelStreamErrorException", stream_error)),
            "modelStreamErrorException with the model's originalStatusCode 400: its code; not "
            "retryable (the request itself was refused)",
            {
                "status": "error",
                "text": "Kept",
                "error": {
                    "phase": "provider",
                    "type": "modelStreamErrorException",
                    "code": 400,
                    "message": "Received a client error from the model (prompt is too long)",
                    "retryable": False,
                },
            },
        )
    )
    message = "Input is too long for requested model."
    out.append(
        _case(
            "exception-validation",
            _text_then(exception_frame("validationException", {"message": message})),
            "validationException in the stream: error, not retryable",
            {
                "status": "error",
                "error": {
                    "phase": "provider",
                    "type": "validationException",
                    "code": None,
                    "message": message,
                    "retryable": False,
                },
            },
        )
    )
    message = (
        "The system encountered an unexpected error during processing. Try your request again."
    )
    out.append(
        _case(
            "exception-first-frame",
            [exception_frame("internalServerException", {"message": message})],
            "internalServerException as the only frame: error, retryable, no MessageStarted",
            {
                "status": "error",
                "text": "",
                "usage": None,
                "events": [
                    expect_error("provider", "internalServerException", None, True, message),
                    expect_completed("error", None, None),
                ],
            },
        )
    )
    out.append(
        _case(
            "error-frame-unmodeled",
            [C.start(), error_frame("InternalFailure", "The request processing has failed.")],
            "an unmodeled error frame (:message-type error, :error-code, :error-message, empty "
            "payload): error with the code, retryable",
            {
                "status": "error",
                "error": {
                    "phase": "provider",
                    "type": "InternalFailure",
                    "code": "InternalFailure",
                    "message": "The request processing has failed.",
                    "retryable": True,
                },
            },
        )
    )
    bad = _flip(C.text(0, " lost"), -8)
    out.append(
        _case(
            "framing-error-mid-stream",
            [*_text_then(bad), C.text(0, " after"), C.block_stop(0), C.stop("end_turn")],
            "a frame whose message CRC does not match, mid-stream: error with phase framing and "
            "kind message_crc, what came before kept, nothing after it parsed",
            {
                "status": "error",
                "text": "Kept",
                "framing_ok": False,
                "error": {"phase": "framing", "type": "message_crc", "retryable": False},
                "wire_events": 2,
                "events": [
                    expect_started(),
                    expect_text("Kept"),
                    expect_error("framing", "message_crc", None, False),
                    expect_completed("error", None, None),
                ],
            },
        )
    )
    out.append(
        _case(
            "event-too-large",
            [C.start(), C.text(0, "x" * 400), C.stop("end_turn")],
            "a frame larger than max_message_bytes: error (framing, length) after the frames "
            "before it",
            {
                "status": "error",
                "text": "",
                "error": {"phase": "framing", "type": "length", "retryable": False},
                "events_of_type": {"MessageStarted": 1, "TextDelta": 0},
            },
            options={"max_message_bytes": 256},
        )
    )
    out.append(
        _case(
            "invalid-json-payload",
            [C.start(), event_frame("contentBlockDelta", b"not json", pad=None)],
            "an event whose payload is not JSON: error (framing, invalid_json)",
            {
                "status": "error",
                "error": {"phase": "framing", "type": "invalid_json", "retryable": False},
            },
        )
    )
    json_body = b'{"message":"The security token included in the request is invalid."}'
    out.append(
        Case(
            CV,
            "not-eventstream-json",
            json_body,
            "the body is an HTTP error's JSON, not EventStream: a clear not_eventstream error "
            "with the body's message, never a checksum complaint",
            {
                "status": "error",
                "framing_ok": False,
                "wire_events": 0,
                "error": {
                    "phase": "framing",
                    "type": "not_eventstream",
                    "code": None,
                    "message": "the body is not AWS EventStream but JSON (an HTTP error "
                    "response?): The security token included in the request is invalid.",
                    "retryable": False,
                },
                "events": [
                    expect_error("framing", "not_eventstream", None, False),
                    expect_completed("error", None, None),
                ],
            },
            ext="body",
            options={"http_status": 403},
        )
    )
    throttled = (
        b'{"__type":"com.amazon.coral.availability#ThrottlingException",\n'
        b' "message":"Rate exceeded"}\n'
    )
    out.append(
        Case(
            CV,
            "not-eventstream-json-throttled",
            throttled,
            "an HTTP 429 JSON body with a namespaced __type: not_eventstream, the type as the "
            "code, retryable",
            {
                "status": "error",
                "error": {
                    "phase": "framing",
                    "type": "not_eventstream",
                    "code": "ThrottlingException",
                    "message": "the body is not AWS EventStream but JSON (an HTTP error "
                    "response?): Rate exceeded",
                    "retryable": True,
                },
            },
            ext="body",
            options={"http_status": 429},
        )
    )
    html = (
        b"<html>\r\n<head><title>502 Bad Gateway</title></head>\r\n<body>\r\n"
        b"<center><h1>502 Bad Gateway</h1></center>\r\n</body>\r\n</html>\r\n"
    )
    out.append(
        Case(
            CV,
            "not-eventstream-html",
            html,
            "a proxy's HTML error page: not_eventstream naming HTML; retryable from the 502 status",
            {
                "status": "error",
                "error": {
                    "phase": "framing",
                    "type": "not_eventstream",
                    "code": None,
                    "message": "the body is not AWS EventStream but HTML (an error page?): "
                    "<html> <head><title>502 Bad Gateway</title></head> <body> <center><h1>502 "
                    "Bad Gateway</h1></center> </body> </html>",
                    "retryable": True,
                },
            },
            ext="body",
            options={"http_status": 502},
        )
    )
    out.append(
        _case(
            "empty-body",
            [],
            "an empty body: incomplete, no usage, no error",
            {
                "status": "incomplete",
                "error": None,
                "usage": None,
                "events": [expect_completed("incomplete", None, None)],
            },
            ext="eventstream",
        )
    )
    return out


def endings() -> list[Case]:
    """Stop reasons, metadata, and what may follow messageStop."""
    out: list[Case] = []
    tid = "tooluse_end01"
    tool = [C.tool_start(1, tid, "lookup"), C.tool_input(1, '{"q":"x"}'), C.block_stop(1)]
    out.append(
        _case(
            "missing-metadata",
            [*_text_then(C.block_stop(0), *tool, C.stop("tool_use"))],
            "messageStop without the metadata event: completed (messageStop is the terminal "
            "signal), the calls executable, no usage, a missing_metadata warning",
            {
                "status": "completed",
                "stop_reason": "tool_calls",
                "executable": True,
                "usage": None,
                "warnings": ["missing_metadata"],
                "events_tail": [expect_completed("completed", "tool_calls", "tool_use")],
            },
        )
    )
    out.append(
        _case(
            "metadata-before-stop",
            [*_text_then(C.block_stop(0), C.metadata(8, 2)), C.stop("end_turn")],
            "metadata before messageStop (relays and other clients' test suites emit this "
            "order): reported at once, not final; nothing follows the stop, so at the end of "
            "input the same usage is final",
            {
                "status": "completed",
                "usage": usage(8, 2, final=True),
                "warnings": ["metadata_before_stop"],
                "events_tail": [
                    expect_usage(8, 2, final=False),
                    expect_usage(8, 2, final=True),
                    expect_completed("completed", "stop", "end_turn"),
                ],
            },
        )
    )
    tid = "tooluse_relay01"
    relay = [C.start(), C.tool_start(0, tid, "lookup"), C.tool_input(0, '{"q":"y"}')]
    relay += [C.block_stop(0), C.metadata(12, 9), C.stop("tool_use")]
    out.append(
        _case(
            "metadata-before-stop-tool",
            relay,
            "a relay's order for a tool call: metadata (usage and metrics) before messageStop "
            "tool_use; completed, executable, the usage final once the input ends",
            {
                "status": "completed",
                "stop_reason": "tool_calls",
                "executable": True,
                "tool_calls": [call(0, tid, "lookup", '{"q":"y"}')],
                "usage": usage(12, 9, final=True),
                "warnings": ["metadata_before_stop"],
                "conflicts_count": 0,
            },
        )
    )
    out.append(
        _case(
            "metadata-before-and-after-stop",
            [*_text_then(C.block_stop(0), C.metadata(8, 2)), C.stop("end_turn"), C.metadata(8, 5)],
            "a metadata before messageStop and the documented one after it: the later usage "
            "replaces the earlier and is the final one",
            {
                "status": "completed",
                "usage": usage(8, 5, final=True),
                "warnings": ["metadata_before_stop"],
                "events_tail": [
                    expect_usage(8, 5, final=True),
                    expect_completed("completed", "stop", "end_turn"),
                ],
            },
        )
    )
    for name, reason in (
        ("max-tokens", "max_tokens"),
        ("context-window-exceeded", "model_context_window_exceeded"),
    ):
        out.append(
            _case(
                name,
                _text_then(C.block_stop(0), C.stop(reason), C.metadata(30, 64)),
                f"stopReason {reason}: truncated, stop_reason length, the raw value kept",
                {
                    "status": "truncated",
                    "stop_reason": "length",
                    "provider_stop_reason": reason,
                    "usage": usage(30, 64),
                    "events_tail": [
                        expect_usage(30, 64, final=True),
                        expect_completed("truncated", "length", reason),
                    ],
                },
            )
        )
    cut = [C.tool_start(1, "tooluse_cut", "lookup"), C.tool_input(1, '{"q": "unfin')]
    out.append(
        _case(
            "max-tokens-tool-call",
            [*_text_then(C.block_stop(0), *cut, C.block_stop(1)), C.stop("max_tokens")],
            "a tool call cut by max_tokens: truncated, its input invalid, nothing executable",
            {
                "status": "truncated",
                "executable": False,
                "arguments_valid_json": False,
                "tool_calls": [{**call(0, "tooluse_cut", "lookup", '{"q": "unfin', valid=False)}],
            },
        )
    )
    trace = {"guardrail": {"outputAssessments": {}}}
    for name, reason in (
        ("guardrail-intervened", "guardrail_intervened"),
        ("content-filtered", "content_filtered"),
    ):
        tool = [C.tool_start(1, f"tooluse_{reason}", "send"), C.tool_input(1, "{}")]
        metadata = {"usage": {"inputTokens": 9, "outputTokens": 1, "totalTokens": 10}}
        out.append(
            _case(
                name,
                [
                    *_text_then(C.block_stop(0), *tool, C.block_stop(1), C.stop(reason)),
                    event_frame("metadata", {**metadata, "trace": trace}),
                ],
                f"stopReason {reason}: completed with stop_reason content_filter, never executable",
                {
                    "status": "completed",
                    "stop_reason": "content_filter",
                    "provider_stop_reason": reason,
                    "executable": False,
                    "tool_calls": [
                        {"id": f"tooluse_{reason}", "state": "valid", "executable": False}
                    ],
                },
            )
        )
    bad = [C.tool_start(1, "tooluse_bad", "lookup"), C.tool_input(1, '{"q": }'), C.block_stop(1)]
    out.append(
        _case(
            "malformed-tool-use",
            [*_text_then(C.block_stop(0), *bad, C.stop("malformed_tool_use")), C.metadata(5, 6)],
            "stopReason malformed_tool_use: status error with the reason as its type, the raw "
            "reason and the final usage kept",
            {
                "status": "error",
                "stop_reason": "error",
                "provider_stop_reason": "malformed_tool_use",
                "executable": False,
                "usage": usage(5, 6),
                "error": {"phase": "provider", "type": "malformed_tool_use", "retryable": False},
            },
        )
    )
    out.append(
        _case(
            "content-after-stop",
            [*_text_then(C.stop("end_turn"), C.text(0, " late")), C.metadata(4, 2)],
            "a text delta after messageStop: protocol_conflict, the late text ignored",
            {"status": "protocol_conflict", "text": "Kept", "conflicts_count": 1},
        )
    )
    out.append(
        _case(
            "data-after-metadata",
            [*_text_then(C.stop("end_turn"), C.metadata(4, 2)), C.text(0, " late")],
            "an event after the metadata event (the end of the stream): ignored with a warning",
            {"status": "completed", "text": "Kept", "warnings": ["data_after_end"]},
        )
    )
    out.append(
        _case(
            "stop-reason-changed",
            _text_then(C.stop("end_turn"), C.stop("max_tokens"), C.metadata(4, 2)),
            "a second messageStop with another stopReason: protocol_conflict (the first kept)",
            {
                "status": "protocol_conflict",
                "provider_stop_reason": "end_turn",
                "conflicts_count": 1,
            },
        )
    )
    return out


def blocks() -> list[Case]:
    """Content blocks: reasoning, citations, server tools, and what contradicts a block."""
    out: list[Case] = []
    signature = "RXVJQ0NrZ0lCUkFCR0FJcVFPc2lnbmF0dXJl"
    redacted = "RXRrRUNrZ0lCeEFCR0FJcVFKcmVkYWN0ZWQ="
    frames = [
        C.start(),
        C.delta(0, {"reasoningContent": {"text": "Let me think"}}),
        C.delta(0, {"reasoningContent": {"text": " step by step."}}),
        C.delta(0, {"reasoningContent": {"signature": signature}}),
        C.block_stop(0),
        C.delta(1, {"reasoningContent": {"redactedContent": redacted}}),
        C.block_stop(1),
        C.text(2, "Done."),
        C.block_stop(2),
        C.stop("end_turn"),
        C.metadata(20, 30),
    ]

    def reasoning(text: str = "", sig: str | None = None, red: str | None = None) -> dict[str, Any]:
        return {"event": "ReasoningDelta", "text": text, "signature": sig, "redacted": red}

    out.append(
        _case(
            "reasoning-signature-redacted",
            frames,
            "reasoningContent text and signature (kept verbatim for the next turn), a redacted "
            "reasoning block, then text",
            {
                "status": "completed",
                "text": "Done.",
                "choices": [{"index": 0, "reasoning": "Let me think step by step."}],
                "provider_content": [
                    {
                        "reasoningContent": {
                            "reasoningText": {
                                "text": "Let me think step by step.",
                                "signature": signature,
                            }
                        }
                    },
                    {"reasoningContent": {"redactedContent": redacted}},
                    {"text": "Done."},
                ],
                "events": [
                    expect_started(),
                    reasoning("Let me think"),
                    reasoning(" step by step."),
                    reasoning(sig=signature),
                    reasoning(red=redacted),
                    expect_text("Done."),
                    expect_usage(20, 30, final=True),
                    expect_completed("completed", "stop", "end_turn"),
                ],
            },
        )
    )
    citation = {
        "title": "Handbook",
        "sourceContent": [{"text": "Paris is the capital."}],
        "location": {"documentChar": {"documentIndex": 0, "start": 0, "end": 21}},
    }
    out.append(
        _case(
            "citations",
            [
                C.start(),
                C.text(0, "Paris."),
                C.delta(0, {"citation": citation}),
                C.block_stop(0),
                C.stop("end_turn"),
                C.metadata(3, 2),
            ],
            "a citation delta in a text block: known (kept in the stream's citations), not "
            "unknown, no text",
            {"status": "completed", "text": "Paris.", "unknown_fields": {}, "warnings": []},
        )
    )
    server = [
        C.start(),
        C.tool_start(0, "srvtool_01", "web_search", type="server_tool_use"),
        C.tool_input(0, '{"query":"weather"}'),
        C.block_stop(0),
        event_frame(
            "contentBlockStart",
            {
                "contentBlockIndex": 1,
                "start": {
                    "toolResult": {
                        "toolUseId": "srvtool_01",
                        "type": "web_search",
                        "status": "success",
                    }
                },
            },
        ),
        C.delta(1, {"toolResult": [{"text": "Sunny, 21 C"}]}),
        C.block_stop(1),
        C.text(2, "It is sunny."),
        C.block_stop(2),
        C.stop("end_turn"),
    ]
    out.append(
        _case(
            "server-tool-use",
            server,
            "a server tool use (toolUse type server_tool_use) and its toolResult block: reported, "
            "run by Bedrock, never offered for execution; the result is not text",
            {
                "status": "completed",
                "text": "It is sunny.",
                "executable": False,
                "tool_calls": [
                    {"id": "srvtool_01", "name": "web_search", "type": "server_tool_use"}
                ],
                "provider_content": [
                    {
                        "toolUse": {
                            "toolUseId": "srvtool_01",
                            "name": "web_search",
                            "input": {"query": "weather"},
                            "type": "server_tool_use",
                        }
                    },
                    {"text": "It is sunny."},
                ],
                "unknown_fields": {},
            },
        )
    )
    out.append(
        _case(
            "parameterless-tool-call",
            [
                C.start(),
                C.tool_start(0, "tooluse_now", "get_time"),
                C.block_stop(0),
                C.stop("tool_use"),
                C.metadata(5, 5),
            ],
            "a tool call with no input fragment at all: arguments {}, valid, executable",
            {
                "status": "completed",
                "executable": True,
                "tool_calls": [{**call(0, "tooluse_now", "get_time", "{}"), "raw_arguments": ""}],
            },
        )
    )
    conflicts = [
        (
            "delta-wrong-kind",
            [C.start(), C.delta(0, {"reasoningContent": {"text": "hmm"}}), C.text(0, "oops")],
            "a text delta for a reasoning block: protocol_conflict, the text ignored",
        ),
        (
            "tool-delta-without-start",
            [C.start(), C.tool_input(1, '{"a":1}')],
            "a toolUse fragment for a block that never started: it cannot be correlated to a "
            "call, protocol_conflict",
        ),
        (
            "block-started-twice",
            [C.start(), C.tool_start(1, "tooluse_a", "f"), C.tool_start(1, "tooluse_b", "g")],
            "a second contentBlockStart for an open block: protocol_conflict, the first kept",
        ),
        (
            "delta-after-block-stop",
            [C.start(), C.text(0, "a"), C.block_stop(0), C.text(0, "b")],
            "a delta for a block after its contentBlockStop: protocol_conflict, ignored",
        ),
        (
            "content-before-message-start",
            [C.text(0, "early"), C.start(), C.text(0, "ok")],
            "a delta before messageStart: protocol_conflict, ignored",
        ),
    ]
    for name, frames, exercises in conflicts:
        out.append(
            _case(
                name,
                [*frames, C.block_stop(0), C.stop("end_turn"), C.metadata(1, 1)],
                exercises,
                {"status": "protocol_conflict", "conflicts_count": 1, "executable": False},
            )
        )
    empty_start = {"contentBlockIndex": 0, "start": {}}
    out.append(
        _case(
            "text-block-empty-start",
            [
                C.start(),
                event_frame("contentBlockStart", empty_start),
                C.text(0, "Hello"),
                C.text(0, " there"),
                C.block_stop(0),
                C.stop("end_turn"),
                C.metadata(6, 2),
            ],
            "a contentBlockStart whose start is {} for a text block (relays send one for every "
            "block): tolerated with a warning, the text kept, no conflict",
            {
                "status": "completed",
                "text": "Hello there",
                "warnings": ["block_start_empty"],
                "conflicts_count": 0,
                "provider_content": [{"text": "Hello there"}],
                "usage": usage(6, 2),
            },
        )
    )
    tid = "tooluse_empty01"
    mixed = [
        C.start(),
        event_frame("contentBlockStart", empty_start),
        C.delta(0, {"reasoningContent": {"text": "Look it up."}}),
        C.block_stop(0),
        event_frame("contentBlockStart", {"contentBlockIndex": 1, "start": {}}),
        C.text(1, "Checking."),
        C.block_stop(1),
        C.tool_start(2, tid, "lookup"),
        C.tool_input(2, '{"q":"z"}'),
        C.block_stop(2),
        C.stop("tool_use"),
        C.metadata(9, 7),
    ]
    out.append(
        _case(
            "blocks-empty-start",
            mixed,
            "empty starts ({}) for a reasoning and a text block, then a tool block with its "
            "toolUse start: each empty start's first delta decides its kind; executable",
            {
                "status": "completed",
                "text": "Checking.",
                "choices": [{"index": 0, "reasoning": "Look it up."}],
                "executable": True,
                "tool_calls": [call(0, tid, "lookup", '{"q":"z"}')],
                "warnings": ["block_start_empty"],
                "conflicts_count": 0,
            },
        )
    )
    out.append(
        _case(
            "empty-start-tool-fragment",
            [
                C.start(),
                event_frame("contentBlockStart", empty_start),
                C.tool_input(0, '{"q":"z"}'),
                C.block_stop(0),
                C.stop("tool_use"),
                C.metadata(3, 3),
            ],
            "an empty start ({}) then a toolUse fragment: the start named no call, so the "
            "fragment cannot be correlated to one (a conflict, as for a block never started)",
            {
                "status": "protocol_conflict",
                "conflicts_count": 1,
                "tool_call_count": 0,
                "executable": False,
            },
        )
    )
    dup = [C.tool_start(0, "tooluse_same", "f"), C.tool_input(0, "{}"), C.block_stop(0)]
    dup += [C.tool_start(1, "tooluse_same", "g"), C.tool_input(1, "{}"), C.block_stop(1)]
    out.append(
        _case(
            "duplicate-tool-ids",
            [C.start(), *dup, C.stop("tool_use"), C.metadata(1, 1)],
            "two tool calls with the same toolUseId: the batch is not executable",
            {
                "status": "completed",
                "executable": False,
                "call_ids_unique": False,
                "tool_calls": [{"state": "valid"}, {"state": "rejected", "executable": False}],
            },
        )
    )
    return out


def behaviours() -> list[Case]:
    """Every ``bedrock-converse`` case beyond the twelve."""
    return [*errors(), *endings(), *blocks()]
