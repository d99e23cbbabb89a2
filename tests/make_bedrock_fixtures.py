"""Writes the hand-made Bedrock fixtures: ``fixtures/regression/bedrock-{converse,invoke}/``.

Run ``python tests/make_bedrock_fixtures.py`` from the repository root; it
rewrites every raw body and manifest it owns (deterministically: the same bytes
each time). The bodies are built with ``sw.encode_eventstream`` from frames
written by hand after the provider references (see ``bedrock_frames.py``), and
every ``expect`` below is written from those references and docs/design.md, never
from streamwire's output. ``tests/test_fixtures.py`` replays them.

Cases ``01``-``12b`` are the twelve regression cases every streaming gateway
must pass (the same list as ``fixtures/regression/openai-chat``); the others
pin one adapter behaviour each (``make_bedrock_cases.py``, and
``make_bedrock_invoke_cases.py`` for ``bedrock-invoke``).
"""

from __future__ import annotations

import hashlib
import json
import random
import sys
from pathlib import Path

import streamwire as sw
from bedrock_frames import (
    Case,
    call,
    converse,
    event_frame,
    exception_frame,
    expect_args,
    expect_completed,
    expect_error,
    expect_started,
    expect_text,
    expect_tool_completed,
    expect_tool_started,
    expect_usage,
    usage,
)

ROOT = Path(__file__).resolve().parent.parent / "fixtures" / "regression"
RECORDED = ROOT.parent / "providers" / "bedrock-converse"


C = converse
DONE = expect_completed("completed", "stop", "end_turn")


def twelve() -> list[Case]:
    """The twelve regression cases."""
    cases: list[Case] = []
    add = cases.append

    body = [C.start(), C.text(0, "Hello"), C.text(0, ", world"), C.block_stop(0)]
    body += [C.stop("end_turn"), C.metadata(10, 4, 210)]
    add(
        Case(
            "bedrock-converse",
            "01-short-text",
            b"".join(body),
            "a short text answer: messageStart, two text deltas, contentBlockStop, messageStop, "
            "metadata with the final usage",
            {
                "status": "completed",
                "text": "Hello, world",
                "stop_reason": "stop",
                "provider_stop_reason": "end_turn",
                "usage": usage(10, 4),
                "error": None,
                "warnings": [],
                "framing_ok": True,
                "wire_events": 6,
                "events": [
                    expect_started(),
                    expect_text("Hello"),
                    expect_text(", world"),
                    expect_usage(10, 4, final=True),
                    DONE,
                ],
            },
        )
    )

    rng = random.Random(20261129)
    tokens = [" the", " stream", " café", " naïve", ' "q"', " back\\slash", "你好", "🙂", "\n"]
    pieces = ["".join(rng.choice(tokens) for _ in range(rng.randint(1, 5))) for _ in range(1500)]
    text = "".join(pieces)
    frames = [C.start()] + [C.text(0, p, pad=rng.randint(1, 62)) for p in pieces]
    frames += [C.block_stop(0), C.stop("end_turn"), C.metadata(20, 1500)]
    add(
        Case(
            "bedrock-converse",
            "02-long-text",
            b"".join(frames),
            "long text (1,500 deltas: ASCII, CJK, emoji, escapes): no whole-stream buffering; "
            "the framing buffer never holds more than the largest message",
            {
                "status": "completed",
                "text_sha256": hashlib.sha256(text.encode()).hexdigest(),
                "text_length": len(text),
                "stop_reason": "stop",
                "usage": usage(20, 1500),
                "warnings": [],
                "error": None,
                "max_peak_buffered_bytes": max(len(f) for f in frames),
                "events_of_type": {"TextDelta": 1500},
            },
            notes=["max_peak_buffered_bytes is the largest frame: memory is O(largest message)"],
        )
    )

    parts = ["Ünïcödé ", "你好，", "世界 ", "🚀 ", "👩\u200d👩\u200d👧", " café\r\nend"]
    body = [C.start(), *(C.text(0, p) for p in parts), C.block_stop(0), C.stop("end_turn")]
    add(
        Case(
            "bedrock-converse",
            "03-network-splits",
            b"".join(body),
            "multi-byte UTF-8 in the payloads (2-, 3- and 4-byte sequences, a ZWJ sequence) and "
            "CRLF in the text: replayed at every split point, so cuts land inside preludes, "
            "headers, CRCs and code points",
            {
                "status": "completed",
                "text": "".join(parts),
                "stop_reason": "stop",
                "usage": None,
                "warnings": ["missing_metadata"],
                "events": [expect_started(), *(expect_text(p) for p in parts), DONE],
            },
            notes=["no metadata event: completed with a missing_metadata warning, no usage"],
        )
    )

    digits = [str(i) for i in range(15)]
    body = [C.start(1), *(C.text(0, d, pad=1) for d in digits), C.block_stop(0)]
    body += [C.stop("end_turn"), C.metadata(3, 15)]
    add(
        Case(
            "bedrock-converse",
            "04-several-events-one-read",
            b"".join(body),
            "nineteen small frames in one read (the 'whole' chunking feeds them in a single "
            "call): every event returned, in order",
            {
                "status": "completed",
                "text": "".join(digits),
                "warnings": [],
                "wire_events": 19,
                "events": [
                    expect_started(),
                    *(expect_text(d) for d in digits),
                    expect_usage(3, 15, final=True),
                    DONE,
                ],
            },
        )
    )

    body = [C.start(62), C.text(0, "", pad=40), C.block_stop(0), C.text(1, "still ", pad=1)]
    body += [C.text(1, "", pad=62), C.text(1, "here", pad=17), C.block_stop(1)]
    body += [C.stop("end_turn", pad=33), C.metadata(7, 3)]
    add(
        Case(
            "bedrock-converse",
            "05-padding-and-empty-deltas",
            b"".join(body),
            "Bedrock's padding member p (1 to 62 characters) on every event and empty text "
            "deltas (gpt-oss sends a whole empty block): ignored, not unknown, no empty TextDelta",
            {
                "status": "completed",
                "text": "still here",
                "warnings": [],
                "provider_content": [{"text": "still here"}],
                "unknown_events": {},
                "unknown_fields": {},
                "events": [
                    expect_started(),
                    expect_text("still "),
                    expect_text("here"),
                    expect_usage(7, 3, final=True),
                    DONE,
                ],
            },
            notes=["EventStream has no keep-alives: this is the SSE case's counterpart"],
        )
    )

    tid = "tooluse_reg06weather"
    fragments = ['{"city":', '"Paris",', '"units":"c"}']
    raw = "".join(fragments)
    body = [C.start(), C.text(0, "Let me check the weather."), C.block_stop(0)]
    body += [C.tool_start(1, tid, "get_weather"), *(C.tool_input(1, f) for f in fragments)]
    body += [C.block_stop(1), C.stop("tool_use"), C.metadata(412, 71)]
    add(
        Case(
            "bedrock-converse",
            "06-one-tool-call",
            b"".join(body),
            "one tool call: contentBlockStart with toolUseId and name, input in three fragments, "
            "completed at its contentBlockStop; stopReason tool_use (tests/test_bedrock.py builds "
            "the correlated toolResult)",
            {
                "status": "completed",
                "stop_reason": "tool_calls",
                "provider_stop_reason": "tool_use",
                "text": "Let me check the weather.",
                "tool_call_count": 1,
                "tool_calls": [{**call(0, tid, "get_weather", raw), "executable": True}],
                "executable": True,
                "call_ids_unique": True,
                "arguments_valid_json": True,
                "usage": usage(412, 71),
                "warnings": [],
                "provider_content": [
                    {"text": "Let me check the weather."},
                    {
                        "toolUse": {
                            "toolUseId": tid,
                            "name": "get_weather",
                            "input": json.loads(raw),
                        }
                    },
                ],
                "events": [
                    expect_started(),
                    expect_text("Let me check the weather."),
                    expect_tool_started(0, tid, "get_weather"),
                    *(expect_args(0, tid, f) for f in fragments),
                    expect_tool_completed(0, tid, "get_weather", raw, json.loads(raw)),
                    expect_usage(412, 71, final=True),
                    expect_completed("completed", "tool_calls", "tool_use"),
                ],
            },
        )
    )

    specs = [
        ("tooluse_reg07a", "get_weather", ['{"city"', ':"Oslo"', "}"]),
        ("tooluse_reg07b", "get_time", ['{"tz":', '"Europe/', 'Oslo"}']),
        ("tooluse_reg07c", "get_news", ["{}"]),
    ]
    body = [C.start(), C.text(0, "Checking three things."), C.block_stop(0)]
    body += [C.tool_start(1, specs[0][0], specs[0][1]), C.tool_start(2, specs[1][0], specs[1][1])]
    for a, b in zip(specs[0][2], specs[1][2], strict=True):
        body += [C.tool_input(1, a), C.tool_input(2, b)]
    body += [C.block_stop(1), C.tool_start(3, specs[2][0], specs[2][1])]
    body += [C.tool_input(3, "{}"), C.block_stop(2), C.block_stop(3), C.stop("tool_use")]
    body += [C.metadata(500, 90)]
    add(
        Case(
            "bedrock-converse",
            "07-parallel-tool-calls",
            b"".join(body),
            "three tool calls with independent buffers keyed by contentBlockIndex, two of them "
            "open at once with their fragments interleaved, stopped out of order",
            {
                "status": "completed",
                "stop_reason": "tool_calls",
                "tool_call_count": 3,
                "tool_calls": [
                    {**call(i, s[0], s[1], "".join(s[2])), "executable": True}
                    for i, s in enumerate(specs)
                ],
                "executable": True,
                "call_ids_unique": True,
                "arguments_valid_json": True,
                "usage": usage(500, 90),
                "warnings": [],
            },
        )
    )

    arguments = {
        "query": 'naïve "quoted" back\\slash 数据 🙂',
        "n": 42,
        "deep": {"a": [1, 2.5, None]},
    }
    raw = json.dumps(arguments, ensure_ascii=False)
    cuts = list(range(1, len(raw), 3))
    fragments = [raw[a:b] for a, b in zip([0, *cuts], [*cuts, len(raw)], strict=True)]
    tid = "tooluse_reg08split"
    body = [C.start(), C.tool_start(0, tid, "search"), *(C.tool_input(0, f) for f in fragments)]
    body += [C.block_stop(0), C.stop("tool_use"), C.metadata(40, 30)]
    add(
        Case(
            "bedrock-converse",
            "08-tool-args-split",
            b"".join(body),
            "tool input JSON cut every three characters, inside escapes, strings and multi-byte "
            "characters: no character lost or doubled, parsed once at contentBlockStop",
            {
                "status": "completed",
                "tool_calls": [{**call(0, tid, "search", raw), "executable": True}],
                "arguments_valid_json": True,
                "executable": True,
                "events_of_type": {"ToolCallArgumentsDelta": len(fragments)},
            },
        )
    )

    tid = "tooluse_reg09db"
    raw = '{"sql":"SELECT * FROM missing"}'
    body = [C.start(), C.tool_start(0, tid, "run_query"), C.tool_input(0, raw)]
    body += [C.block_stop(0), C.stop("tool_use"), C.metadata(33, 12)]
    add(
        Case(
            "bedrock-converse",
            "09-failing-tool",
            b"".join(body),
            "a tool whose execution fails: tests/test_bedrock.py authorizes it in a ToolLedger, "
            "records the failure and sends back a toolResult with status error, correlated by "
            "toolUseId; a second execution of the same id is refused",
            {
                "status": "completed",
                "tool_call_count": 1,
                "executable": True,
                "tool_calls": [{**call(0, tid, "run_query", raw), "executable": True}],
            },
        )
    )

    message = "Too many tokens, please wait before trying again."
    body = [
        C.start(),
        C.text(0, "Partial"),
        exception_frame("throttlingException", {"message": message}),
    ]
    add(
        Case(
            "bedrock-converse",
            "10-in-stream-error",
            b"".join(body),
            "a throttlingException frame after some text, then EOF: status error with the "
            "exception type, retryable, machine-readable; the message never becomes text",
            {
                "status": "error",
                "text": "Partial",
                "stop_reason": None,
                "usage": None,
                "executable": False,
                "error": {
                    "phase": "provider",
                    "type": "throttlingException",
                    "code": None,
                    "message": message,
                    "retryable": True,
                },
                "events": [
                    expect_started(),
                    expect_text("Partial"),
                    expect_error("provider", "throttlingException", None, True, message),
                    expect_completed("error", None, None),
                ],
            },
        )
    )

    unknown_kind = sw.encode_eventstream(
        [(":message-type", "notice"), (":content-type", "application/json")], b'{"x":1}'
    )
    body = [event_frame("messageStart", {"role": "assistant", "x_new": 1}), C.text(0, "A")]
    body += [event_frame("someFutureEvent", {"x": 1}), C.delta(0, {"text": "B", "audioHint": "h"})]
    body += [unknown_kind, C.text(0, "C"), C.block_stop(0), C.stop("end_turn"), C.metadata(5, 3)]
    add(
        Case(
            "bedrock-converse",
            "11-unknown-event",
            b"".join(body),
            "an unknown :event-type, an unknown :message-type, an unknown payload member and an "
            "unknown delta member: ignored, counted, state intact",
            {
                "status": "completed",
                "text": "ABC",
                "stop_reason": "stop",
                "warnings": [],
                "unknown_events": {"someFutureEvent": 1, ":message-type notice": 1},
                "unknown_fields": {"messageStart.x_new": 1, "contentBlockDelta.delta.audioHint": 1},
                "unknown_events_tolerated": True,
                "events_of_type": {"UnknownEvent": 2, "TextDelta": 3},
            },
        )
    )

    tid = "tooluse_reg12"
    cut = C.tool_input(1, 'lin"}')
    body = [C.start(), C.text(0, "Let me check."), C.block_stop(0)]
    body += [C.tool_start(1, tid, "get_weather"), C.tool_input(1, '{"city": "Ber'), cut[:30]]
    add(
        Case(
            "bedrock-converse",
            "12a-disconnect",
            b"".join(body),
            "the connection drops inside a frame, mid tool call: incomplete, the partial frame "
            "discarded, the call rejected, nothing executable, no usage",
            {
                "status": "incomplete",
                "text": "Let me check.",
                "stop_reason": None,
                "usage": None,
                "executable": False,
                "tool_call_count": 1,
                "tool_args_complete": False,
                "tool_calls": [
                    {
                        **call(0, tid, "get_weather", '{"city": "Ber', valid=False),
                        "executable": False,
                    }
                ],
                "warnings": ["partial_message_discarded"],
                "events_tail": [expect_completed("incomplete", None, None)],
            },
        )
    )

    head = [C.start(), C.text(0, "One"), C.text(0, " two"), C.text(0, " three")]
    at = sum(len(f) for f in head) + 7
    body = [*head, C.text(0, " four"), C.block_stop(0), C.stop("end_turn"), C.metadata(9, 4)]
    add(
        Case(
            "bedrock-converse",
            "12b-cancel",
            b"".join(body),
            "the caller cancels after three deltas, inside the fourth frame: cancelled, no usage "
            "(Bedrock reports it only at the end), nothing executable",
            {
                "status": "cancelled",
                "text": "One two three",
                "executable": False,
                "tool_call_count": 0,
                "usage": None,
                "events_tail": [expect_completed("cancelled", None, None)],
            },
            replay={"end": "cancel", "at_byte": at},
            notes=["replay: the first at_byte bytes are fed under every chunking, then cancel()"],
        )
    )
    return cases


def reencode_vercel() -> bytes:
    """``vercel-reasoning.jsonl`` (decoded events, one ``{eventType: payload}`` a line) as the
    EventStream body they were decoded from: one event frame per line, Bedrock's three
    headers, the payload re-serialized compactly, no padding added."""
    frames = []
    for line in (RECORDED / "vercel-reasoning.jsonl").read_text(encoding="utf-8").splitlines():
        if line.strip():
            ((event_type, payload),) = json.loads(line).items()
            frames.append(event_frame(event_type, payload, pad=None))
    return b"".join(frames)


def main() -> None:
    from make_bedrock_cases import behaviours
    from make_bedrock_invoke_cases import invoke_cases

    cases = [*twelve(), *behaviours(), *invoke_cases()]
    names = set()
    for case in cases:
        key = (case.protocol, case.name)
        assert key not in names, key
        names.add(key)
        folder = ROOT / case.protocol
        folder.mkdir(parents=True, exist_ok=True)
        (folder / f"{case.name}.{case.ext}").write_bytes(case.body)
        text = json.dumps(case.manifest(), ensure_ascii=False, indent=2) + "\n"
        (folder / f"{case.name}.json").write_text(text, encoding="utf-8")
    (RECORDED / "vercel-reasoning.eventstream").write_bytes(reencode_vercel())
    print(f"wrote {len(cases)} fixtures under {ROOT.name}/ and one recording", file=sys.stderr)


if __name__ == "__main__":
    main()
