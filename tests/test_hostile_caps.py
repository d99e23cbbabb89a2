"""Every structure a hostile stream can grow is capped (docs/design.md "Limits and memory").

* One cap on content blocks, ``max_content_blocks`` (default 4096), on every
  protocol that has blocks, items or parts; one more ends the stream in a
  ``limit`` error, ``too_many_content_blocks``. A million empty blocks used
  to end ``completed`` holding a gigabyte (anthropic, bedrock-invoke).
* Unknown event names and field paths are kept cut to ``MAX_NAME_CHARS``,
  at most ``MAX_RECORDS`` of them, with exact counts; conflict and warning
  messages are cut to ``MAX_MESSAGE_CHARS``.
* The arguments of all the calls of a stream together are capped
  (``max_total_tool_argument_chars``), and their fragments are kept
  compactly: about one byte per ASCII character, not ~30.

Memory is measured with tracemalloc (Python allocations; the Rust framing
buffers are bounded by their own caps and counted by ``peak_buffered_bytes``).
"""

from __future__ import annotations

import gc
import tracemalloc
from collections.abc import Callable, Iterator
from typing import Any

import pytest

import streamwire as sw
from hostile_builders import BLOCK_PROTOCOLS, block_stream, chat_calls, chunked, encode
from streamwire.accumulate import MAX_MESSAGE_CHARS, MAX_NAME_CHARS
from streamwire.toolcalls import MAX_RECORDS


def feed(protocol: str, units: Iterator[Any], **options: Any) -> sw.Stream:
    stream = sw.stream(protocol, **options)
    for unit in chunked(encode(protocol, units)):
        if isinstance(unit, str):
            stream.feed_message(unit)
        else:
            stream.feed(unit)
    stream.close()
    return stream


def peak_bytes(run: Callable[[], object]) -> tuple[int, object]:
    """tracemalloc's peak while ``run`` runs, and what it returned."""
    gc.collect()
    tracemalloc.start()
    try:
        value = run()
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    return peak, value


# --- one cap on content blocks -------------------------------------------------


@pytest.mark.parametrize("protocol", BLOCK_PROTOCOLS)
def test_every_protocol_caps_its_blocks_under_one_name(protocol: str) -> None:
    within = feed(protocol, block_stream(protocol, 6), max_content_blocks=6).result
    assert within.error is None and within.status == "completed"
    assert len(within.provider_content) == 6 or protocol == "openai-realtime"
    over = feed(protocol, block_stream(protocol, 7), max_content_blocks=6).result
    assert over.status == "error"
    assert over.error is not None
    assert (over.error.phase, over.error.type) == ("limit", "too_many_content_blocks")
    assert "max_content_blocks (6)" in (over.error.message or "")
    assert len(over.provider_content) <= 6


@pytest.mark.parametrize("protocol", BLOCK_PROTOCOLS)
def test_the_default_cap_is_4096_blocks(protocol: str) -> None:
    assert feed(protocol, block_stream(protocol, 4096)).result.error is None
    error = feed(protocol, block_stream(protocol, 4097)).result.error
    assert error is not None and error.type == "too_many_content_blocks"


def test_a_flood_of_empty_blocks_holds_no_more_than_the_cap() -> None:
    # The attack (a million empty text blocks), scaled: past the cap,
    # 5x the blocks must not hold more memory.
    def run(blocks: int) -> sw.StreamResult:
        return feed("anthropic", block_stream("anthropic", blocks)).result

    small, result = peak_bytes(lambda: run(8_000))
    large, _ = peak_bytes(lambda: run(40_000))
    assert isinstance(result, sw.StreamResult) and result.status == "error"
    assert large < 1.5 * small, (small, large)


# --- unknown names, conflicts and warnings ------------------------------------------


def test_unknown_event_names_are_kept_cut_with_exact_counts() -> None:
    # 150 distinct names of 256 KiB, each twice: 100 kept (cut), the rest <other>.
    names = [f"{i:03d}" + "x" * (256 * 1024) for i in range(150)]
    body = b"".join(sw.encode_sse("{}", event=name) for name in names + names)
    stream = sw.stream("openai-chat")
    stream.feed(body)
    stream.close()
    unknown = stream.result.unknown_events
    assert sum(unknown.values()) == 300
    assert len(unknown) == MAX_RECORDS + 1
    assert unknown["<other>"] == 100
    assert all(len(name) <= MAX_NAME_CHARS for name in unknown)
    assert unknown[names[0][: MAX_NAME_CHARS - 3] + "..."] == 2


def test_unknown_field_paths_and_messages_are_cut() -> None:
    long = "k" * (1 << 20)
    chunk = f'{{"id":"c","{long}":1,"choices":[{{"index":0,"delta":{{"{long}":2}}}}]}}'
    stream = sw.stream("anthropic")
    # An event type of a megabyte before message_start: a conflict naming it.
    stream.feed(sw.encode_sse(f'{{"type":"content_block_stop","index":0,"{long}":1}}'))
    stream.close()
    chat = sw.stream("openai-chat")
    chat.feed(sw.encode_sse(chunk) * 3)
    chat.close()
    fields = chat.result.unknown_fields
    assert sum(fields.values()) == 6
    assert all(len(path) <= MAX_NAME_CHARS for path in fields)
    for result in (stream.result, chat.result):
        for text in (*result.conflicts, *(w.message for w in result.warnings)):
            assert len(text) <= MAX_MESSAGE_CHARS
    assert stream.result.conflicts and stream.result.unknown_fields


# --- tool arguments ------------------------------------------------------------------


def _chat_fragments(chars: int, width: int) -> Iterator[dict[str, Any]]:
    start = {
        "index": 0,
        "id": "call_0",
        "type": "function",
        "function": {"name": "f", "arguments": ""},
    }
    yield {"id": "c", "choices": [{"index": 0, "delta": {"tool_calls": [start]}}]}
    piece = "a" * width
    for _ in range(chars // width):
        fragment = {"index": 0, "function": {"arguments": piece}}
        yield {"id": "c", "choices": [{"index": 0, "delta": {"tool_calls": [fragment]}}]}


@pytest.mark.parametrize("protocol", ["openai-chat", "anthropic"])
def test_argument_fragments_are_kept_compactly(protocol: str) -> None:
    chars = 1 << 17  # in two-character fragments, the worst case
    if protocol == "openai-chat":
        units = _chat_fragments(chars, 2)
    else:
        units = _anthropic_fragments(chars, 2)
    stream = sw.stream(protocol)
    wire = list(chunked(encode(protocol, units)))
    gc.collect()
    tracemalloc.start()
    try:
        before, _ = tracemalloc.get_traced_memory()
        for chunk in wire:
            stream.feed(chunk)  # the events are dropped: what stays is the stream's
        held, _ = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    per_char = (held - before) / chars
    assert per_char < 4, f"{per_char:.1f} bytes per character held"
    stream.close()
    (call,) = stream.result.tool_calls
    assert len(call.raw_arguments) == chars and call.raw_arguments == "a" * chars


def _anthropic_fragments(chars: int, width: int) -> Iterator[dict[str, Any]]:
    yield from list(block_stream("anthropic", 0))[:1]
    start = {"type": "tool_use", "id": "toolu_0", "name": "f", "input": {}}
    yield {"type": "content_block_start", "index": 0, "content_block": start}
    piece = "a" * width
    for _ in range(chars // width):
        delta = {"type": "input_json_delta", "partial_json": piece}
        yield {"type": "content_block_delta", "index": 0, "delta": delta}


def test_the_arguments_of_all_calls_together_are_capped() -> None:
    # Three calls just under the per-call cap (8 Mi characters) pass the
    # stream's (16 Mi); each one alone would be accepted.
    piece = "a" * 65536
    per_call = (8 << 20) - 1024

    def units() -> Iterator[dict[str, Any]]:
        for i in range(3):
            head = {"index": i, "id": f"call_{i}", "type": "function", "function": {"name": "f"}}
            yield {"id": "c", "choices": [{"index": 0, "delta": {"tool_calls": [head]}}]}
            for _ in range(per_call // len(piece)):
                fragment = {"index": i, "function": {"arguments": piece}}
                yield {"id": "c", "choices": [{"index": 0, "delta": {"tool_calls": [fragment]}}]}
        yield {"id": "c", "choices": [{"index": 0, "delta": {}, "finish_reason": "tool_calls"}]}

    result = feed("openai-chat", units()).result
    assert result.status == "error"
    assert result.error is not None and result.error.type == "tool_arguments_too_large"
    assert "max_total_tool_argument_chars" in (result.error.message or "")
    assert [c.state for c in result.tool_calls] == ["rejected", "rejected", "rejected"]
    kept = sum(len(c.raw_arguments) for c in result.tool_calls)
    assert kept <= 16 << 20


def test_the_total_cap_counts_characters_not_grants() -> None:
    # 400 calls open at once under a total that just fits them: each call is
    # granted room ahead of its characters, and the grants of the others are
    # taken back when one needs it, so the cap counts characters only.
    result = feed(
        "openai-chat",
        chat_calls(400, '{"a": "' + "x" * 30 + '"}'),
        max_tool_calls=1000,
        max_total_tool_argument_chars=400 * 40,
    ).result
    assert result.error is None, result.error
    assert all(c.state == "valid" for c in result.tool_calls)
