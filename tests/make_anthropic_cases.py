"""Anthropic fixtures that pin one adapter behaviour each: endings, tools, content, usage.

Written by ``make_anthropic_fixtures.py`` (see there); every ``expect`` is
written from Anthropic's streaming reference and docs/design.md.
"""

# ruff: noqa: E501 (fixture data: one-line case descriptions and payloads)

from __future__ import annotations

from make_anthropic_fixtures import U25, Body, T, U, completed, started, usage, write


def behaviour_cases() -> None:
    """Writes the endings, tool, content and usage cases."""
    mid = "msg_regwrongkind"
    s = Body(mid).start(U25)
    s.bstart(0, {"type": "tool_use", "id": "toolu_wrong", "name": "lookup", "input": {}})
    s.jd(0, '{"q": 1}').td(0, "not for a tool block").bstop(0)
    s.mdelta("tool_use", {"output_tokens": 9}).mstop()
    write(
        "wrong-kind-delta",
        s.bytes(),
        "a text_delta for a tool_use block: a delta of the wrong kind is a protocol conflict; nothing executable",
        {
            "status": "protocol_conflict",
            "conflicts_count": 1,
            "deltas_ok": False,
            "executable": False,
            "text": "",
            "tool_call_count": 1,
        },
    )

    mid = "msg_regmaxtokens"
    s = Body(mid).start(U25)
    s.textblock(0, "Writing the file.")
    s.tool(
        1,
        "toolu_regmax",
        "make_file",
        ["", '{"filename": "a.txt", "lines": ["one", "tw'],
        stop=False,
    )
    s.mdelta("max_tokens", {"output_tokens": 64}).mstop()
    write(
        "max-tokens-mid-tool",
        s.bytes(),
        "max_tokens cuts a tool_use input (its block never stops), then message_delta and message_stop: truncated, the call rejected, never executable; usage final",
        {
            "status": "truncated",
            "stop_reason": "length",
            "provider_stop_reason": "max_tokens",
            "executable": False,
            "tool_call_count": 1,
            "tool_args_complete": False,
            "tool_calls": [
                {
                    "id": "toolu_regmax",
                    "name": "make_file",
                    "arguments": None,
                    "raw_arguments": '{"filename": "a.txt", "lines": ["one", "tw',
                    "state": "rejected",
                    "executable": False,
                }
            ],
            "usage": usage(25, 64),
            "warnings": ["block_not_stopped"],
            "conflicts": [],
            "provider_content": [{"type": "text", "text": "Writing the file."}],
            "events_tail": [U(25, 64, final=True), completed("truncated", "length", "max_tokens")],
        },
    )

    mid = "msg_regcontext"
    s = Body(mid).start(U25)
    s.textblock(0, "A very long answer").mdelta(
        "model_context_window_exceeded", {"output_tokens": 7}
    ).mstop()
    write(
        "context-window-exceeded",
        s.bytes(),
        "stop_reason model_context_window_exceeded: truncated (stop reason length), the raw value kept",
        {
            "status": "truncated",
            "stop_reason": "length",
            "provider_stop_reason": "model_context_window_exceeded",
            "text": "A very long answer",
        },
    )

    mid = "msg_regrefusal"
    s = Body(mid).start(U25)
    s.textblock(0, "I can help with part of that, but")
    s.tool(1, "toolu_regrefusal", "run", ["", '{"cmd": "x"}'])
    s.mdelta("refusal", {"output_tokens": 12}).mstop()
    write(
        "refusal",
        s.bytes(),
        "stop_reason refusal after streamed text and a tool call: completed, stop reason content_filter, nothing executable",
        {
            "status": "completed",
            "stop_reason": "content_filter",
            "provider_stop_reason": "refusal",
            "text": "I can help with part of that, but",
            "executable": False,
            "tool_call_count": 1,
            "tool_calls": [{"id": "toolu_regrefusal", "state": "valid", "executable": False}],
        },
    )

    WS_RESULT = {
        "type": "web_search_tool_result",
        "tool_use_id": "srvtoolu_regsearch",
        "content": [
            {
                "type": "web_search_result",
                "title": "Example",
                "url": "https://example.com/",
                "encrypted_content": "EqQBCioIAhgC",
                "page_age": None,
            }
        ],
    }
    mid = "msg_regpause"
    s = Body(mid).start(U25)
    s.textblock(0, "Searching.")
    s.tool(
        1,
        "srvtoolu_regpause",
        "web_search",
        ["", '{"query": "streamwire"}'],
        kind="server_tool_use",
    )
    s.mdelta(
        "pause_turn", {"output_tokens": 15, "server_tool_use": {"web_search_requests": 1}}
    ).mstop()
    write(
        "pause-turn",
        s.bytes(),
        "stop_reason pause_turn with a server tool call still missing its result: completed, stop reason pause; the server call is reported, never executable; the content is kept to send back",
        {
            "status": "completed",
            "stop_reason": "pause",
            "provider_stop_reason": "pause_turn",
            "executable": False,
            "tool_call_count": 1,
            "tool_calls": [
                {
                    "id": "srvtoolu_regpause",
                    "name": "web_search",
                    "type": "server_tool_use",
                    "arguments": {"query": "streamwire"},
                    "state": "valid",
                    "executable": False,
                }
            ],
            "provider_content": [
                {"type": "text", "text": "Searching."},
                {
                    "type": "server_tool_use",
                    "id": "srvtoolu_regpause",
                    "name": "web_search",
                    "input": {"query": "streamwire"},
                },
            ],
        },
    )

    mid = "msg_regserver"
    cite = {
        "type": "web_search_result_location",
        "cited_text": "Example text",
        "url": "https://example.com/",
        "title": "Example",
        "encrypted_index": "EpMBCioIAhgC",
    }
    s = Body(mid).start(U25)
    s.tool(
        0,
        "srvtoolu_regsearch",
        "web_search",
        ["", '{"query": ', '"example"}'],
        kind="server_tool_use",
    )
    s.bstart(1, WS_RESULT).bstop(1)
    s.bstart(2, {"citations": [], "type": "text", "text": ""})
    s.delta(2, {"type": "citations_delta", "citation": cite}).td(2, "Example says so").bstop(2)
    s.tool(3, "toolu_regafter", "save", ["", '{"note": "done"}'])
    s.mdelta(
        "tool_use", {"output_tokens": 60, "server_tool_use": {"web_search_requests": 1}}
    ).mstop()
    write(
        "server-tools",
        s.bytes(),
        "server_tool_use (web_search) with streamed input, its web_search_tool_result whole at start, cited text, then a client tool_use: the server call is reported, never executable; the client call alone is the batch",
        {
            "status": "completed",
            "stop_reason": "tool_calls",
            "text": "Example says so",
            "executable": True,
            "tool_call_count": 2,
            "tool_calls": [
                {
                    "index": 0,
                    "id": "srvtoolu_regsearch",
                    "name": "web_search",
                    "type": "server_tool_use",
                    "arguments": {"query": "example"},
                    "state": "valid",
                    "executable": False,
                },
                {
                    "index": 1,
                    "id": "toolu_regafter",
                    "name": "save",
                    "type": "tool_use",
                    "arguments": {"note": "done"},
                    "state": "valid",
                    "executable": True,
                },
            ],
            "provider_content": [
                {
                    "type": "server_tool_use",
                    "id": "srvtoolu_regsearch",
                    "name": "web_search",
                    "input": {"query": "example"},
                },
                WS_RESULT,
                {"type": "text", "text": "Example says so", "citations": [cite]},
                {
                    "type": "tool_use",
                    "id": "toolu_regafter",
                    "name": "save",
                    "input": {"note": "done"},
                },
            ],
            "events_of_type": {"ToolCallStarted": 2, "ToolCallCompleted": 2},
        },
    )

    mid = "msg_regmcp"
    MCP_RESULT = {
        "type": "mcp_tool_result",
        "tool_use_id": "mcptoolu_reg",
        "is_error": False,
        "content": [{"type": "text", "text": "3 open issues"}],
    }
    s = Body(mid).start(U25)
    s.bstart(
        0,
        {
            "type": "mcp_tool_use",
            "id": "mcptoolu_reg",
            "name": "list_issues",
            "server_name": "tracker",
            "input": {},
        },
    )
    s.jd(0, '{"state": "open"}').bstop(0)
    s.bstart(1, MCP_RESULT).bstop(1)
    s.textblock(2, "There are 3 open issues.").mdelta("end_turn", {"output_tokens": 30}).mstop()
    write(
        "mcp-tool-use",
        s.bytes(),
        "an MCP connector call (mcp_tool_use) and its mcp_tool_result: run by the provider, reported, never executable; both kept verbatim for the next turn",
        {
            "status": "completed",
            "stop_reason": "stop",
            "executable": False,
            "tool_call_count": 1,
            "tool_calls": [
                {
                    "id": "mcptoolu_reg",
                    "name": "list_issues",
                    "type": "mcp_tool_use",
                    "arguments": {"state": "open"},
                    "state": "valid",
                    "executable": False,
                }
            ],
            "provider_content": [
                {
                    "type": "mcp_tool_use",
                    "id": "mcptoolu_reg",
                    "name": "list_issues",
                    "server_name": "tracker",
                    "input": {"state": "open"},
                },
                MCP_RESULT,
                {"type": "text", "text": "There are 3 open issues."},
            ],
        },
    )

    mid = "msg_regthinking"
    SIG = "EqQBCgIYAhIM1gbcDa9GJwZA2b3hGgxBdjrkzLoky3dl1pkiMOYds+EOdS/hBS5VK3lOXa7B5PVt/ZUKeCjxWx0="
    s = Body(mid).start(U25)
    s.bstart(0, {"type": "thinking", "thinking": "", "signature": ""})
    s.delta(0, {"type": "thinking_delta", "thinking": "The user wants "})
    s.delta(0, {"type": "thinking_delta", "thinking": "the weather; "})
    s.delta(0, {"type": "thinking_delta", "thinking": "call the tool."})
    s.delta(0, {"type": "signature_delta", "signature": SIG}).bstop(0)
    s.textblock(1, "Checking.")
    s.tool(2, "toolu_regthink", "get_weather", ["", '{"city": "Oslo"}'])
    s.mdelta("tool_use", {"output_tokens": 80}).mstop()
    write(
        "thinking-signature",
        s.bytes(),
        "extended thinking: thinking_delta then signature_delta (kept verbatim), then text and a tool call; the thinking block with its signature is ready to send back",
        {
            "status": "completed",
            "stop_reason": "tool_calls",
            "executable": True,
            "text": "Checking.",
            "choices": [{"index": 0, "reasoning": "The user wants the weather; call the tool."}],
            "provider_content": [
                {
                    "type": "thinking",
                    "thinking": "The user wants the weather; call the tool.",
                    "signature": SIG,
                },
                {"type": "text", "text": "Checking."},
                {
                    "type": "tool_use",
                    "id": "toolu_regthink",
                    "name": "get_weather",
                    "input": {"city": "Oslo"},
                },
            ],
            "events": [
                started(mid),
                U(25, 1),
                {
                    "event": "ReasoningDelta",
                    "text": "The user wants ",
                    "signature": None,
                    "redacted": None,
                    "kind": "text",
                },
                {"event": "ReasoningDelta", "text": "the weather; "},
                {"event": "ReasoningDelta", "text": "call the tool."},
                {"event": "ReasoningDelta", "text": "", "signature": SIG, "redacted": None},
                T("Checking."),
                {
                    "event": "ToolCallStarted",
                    "index": 0,
                    "id": "toolu_regthink",
                    "name": "get_weather",
                    "type": "tool_use",
                    "executor": "client",
                },
                {"event": "ToolCallArgumentsDelta", "delta": '{"city": "Oslo"}'},
                {
                    "event": "ToolCallCompleted",
                    "arguments": {"city": "Oslo"},
                    "invalid_reason": None,
                },
                U(25, 80),
                U(25, 80, final=True),
                completed("completed", "tool_calls", "tool_use"),
            ],
        },
    )

    mid = "msg_regredacted"
    REDACTED = "EmwKAhgBEgy3va3pzix/LafPsn4aDFIT2Xlxh0L5L8rLVyIwxtE3rAFBa8cr3qpPkNRj2YfWXGmKDxH4mPnZ5sQ7vB5URj"
    s = Body(mid).start(U25)
    s.bstart(0, {"type": "redacted_thinking", "data": REDACTED}).bstop(0)
    s.textblock(1, "Done.").mdelta("end_turn", {"output_tokens": 40}).mstop()
    write(
        "redacted-thinking",
        s.bytes(),
        "a redacted_thinking block (data whole at start, no deltas): reported as ReasoningDelta(redacted=...), kept verbatim for the next turn",
        {
            "status": "completed",
            "text": "Done.",
            "provider_content": [
                {"type": "redacted_thinking", "data": REDACTED},
                {"type": "text", "text": "Done."},
            ],
            "events": [
                started(mid),
                U(25, 1),
                {"event": "ReasoningDelta", "text": "", "signature": None, "redacted": REDACTED},
                T("Done."),
                U(25, 40),
                U(25, 40, final=True),
                completed("completed", "stop", "end_turn"),
            ],
        },
    )

    mid = "msg_regcitations"
    C1 = {
        "type": "char_location",
        "cited_text": "The grass is green. ",
        "document_index": 0,
        "document_title": "Facts",
        "start_char_index": 0,
        "end_char_index": 20,
    }
    C2 = {
        "type": "char_location",
        "cited_text": "The sky is blue.",
        "document_index": 0,
        "document_title": "Facts",
        "start_char_index": 20,
        "end_char_index": 36,
    }
    s = Body(mid).start(U25)
    s.textblock(0, "According to the document: ")
    s.bstart(1, {"citations": [], "type": "text", "text": ""})
    s.delta(1, {"type": "citations_delta", "citation": C1}).td(1, "the grass is green")
    s.delta(1, {"type": "citations_delta", "citation": C2}).td(1, " and the sky is blue").bstop(1)
    s.textblock(2, ".").mdelta("end_turn", {"output_tokens": 30}).mstop()
    write(
        "citations",
        s.bytes(),
        "citations_delta on a text block: the citations are kept on the block, in order, for the next turn; the text is unchanged",
        {
            "status": "completed",
            "text": "According to the document: the grass is green and the sky is blue.",
            "provider_content": [
                {"type": "text", "text": "According to the document: "},
                {
                    "type": "text",
                    "text": "the grass is green and the sky is blue",
                    "citations": [C1, C2],
                },
                {"type": "text", "text": "."},
            ],
            "events_of_type": {"TextDelta": 4},
        },
    )

    mid = "msg_regusage"
    s = Body(mid).start(
        {
            "input_tokens": 2095,
            "cache_creation_input_tokens": 0,
            "cache_read_input_tokens": 1800,
            "output_tokens": 1,
            "service_tier": "standard",
        }
    )
    s.textblock(0, "Cached answer.")
    s.ev(
        {
            "type": "message_delta",
            "delta": {"stop_reason": None, "stop_sequence": None},
            "usage": {"output_tokens": 50},
        }
    )
    s.mdelta(
        "end_turn",
        {
            "input_tokens": 2095,
            "cache_read_input_tokens": None,
            "output_tokens": 120,
            "server_tool_use": {"web_search_requests": 1},
        },
    )
    s.mstop()
    write(
        "usage-replacement",
        s.bytes(),
        "cumulative usage: two message_delta reports replace (never add to) the output figure; the input and cache figures of message_start survive reports that omit them or send null",
        {
            "status": "completed",
            "usage": {
                "input_tokens": 2095,
                "output_tokens": 120,
                "total_tokens": None,
                "cache_read_tokens": 1800,
                "cache_creation_tokens": 0,
                "final": True,
                "raw": {
                    "input_tokens": 2095,
                    "cache_creation_input_tokens": 0,
                    "cache_read_input_tokens": 1800,
                    "output_tokens": 120,
                    "service_tier": "standard",
                    "server_tool_use": {"web_search_requests": 1},
                },
            },
            "events_of_type": {"UsageReported": 4},
            "events_tail": [
                U(2095, 120, cr=1800),
                U(2095, 120, cr=1800, final=True),
                completed("completed", "stop", "end_turn"),
            ],
        },
        notes=[
            "total_tokens is null: Anthropic reports no total and streamwire never estimates one"
        ],
    )

    mid = "msg_regstopseq"
    s = Body(mid).start(U25)
    s.textblock(0, "Counting: 1, 2, 3")
    s.mdelta("stop_sequence", {"output_tokens": 8}, stop_sequence="4").mstop()
    write(
        "stop-sequence",
        s.bytes(),
        "stop_reason stop_sequence: completed, stop reason stop, the raw value kept",
        {
            "status": "completed",
            "stop_reason": "stop",
            "provider_stop_reason": "stop_sequence",
            "text": "Counting: 1, 2, 3",
        },
    )

    # JSON type decides, event names omitted / renamed; whitespace padding inside JSON
