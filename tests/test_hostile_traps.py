"""Performance traps a hostile (or merely large) stream used to spring, kept shut.

Each test compares the cost of an input with that of one ten times larger,
measured in this process's CPU time (``time.process_time``, best of three), so
that a busy machine does not decide it: a linear cost grows ~10x, the
quadratic ones these tests guard against grew ~100x.

* The duplicate-id check at a call's completion looked at every other call:
  100,000 calls took minutes. It is one lookup now.
* ``.result`` read after every chunk rebuilt everything (texts joined again,
  ``provider_content`` deep-copied): quadratic in the stream. Only what
  changed is rebuilt now.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from typing import Any

import pytest

import streamwire as sw
from hostile_builders import block_stream, chat_calls, encode

#: A linear cost grows 10x for 10x the input; these grew ~100x.
MAX_GROWTH = 35


def cpu_seconds(run: Callable[[], object], rounds: int = 3) -> float:
    best = float("inf")
    for _ in range(rounds):
        start = time.process_time()
        run()
        best = min(best, time.process_time() - start)
    return best


def growth(run: Callable[[int], object], small: int) -> float:
    run(small)  # warm up (imports, caches)
    return cpu_seconds(lambda: run(10 * small)) / cpu_seconds(lambda: run(small))


def _feed(protocol: str, units: Iterator[Any], *, read_each: bool, **options: Any) -> sw.Stream:
    stream = sw.stream(protocol, **options)
    for unit in encode(protocol, units):
        if isinstance(unit, str):
            stream.feed_message(unit)
        else:
            stream.feed(unit)
        if read_each:
            stream.result  # noqa: B018 - what a caller reading per chunk does
    stream.close()
    return stream


def test_completing_many_calls_is_linear() -> None:
    def run(calls: int) -> None:
        stream = _feed("openai-chat", chat_calls(calls), read_each=False, max_tool_calls=calls)
        assert len(stream.result.tool_calls) == calls
        assert stream.result.tool_calls[-1].state == "valid"

    assert growth(run, 1000) < MAX_GROWTH


def _tool_blocks(ids: list[str]) -> Iterator[dict[str, Any]]:
    yield next(block_stream("anthropic", 0))  # message_start
    for i, call_id in enumerate(ids):
        start = {"type": "tool_use", "id": call_id, "name": "f", "input": {}}
        yield {"type": "content_block_start", "index": i, "content_block": start}
        yield {"type": "content_block_stop", "index": i}
    yield {"type": "message_delta", "delta": {"stop_reason": "tool_use"}}
    yield {"type": "message_stop"}


def test_duplicate_ids_are_still_found() -> None:
    distinct = _feed("anthropic", _tool_blocks([f"t{i}" for i in range(50)]), read_each=False)
    assert distinct.result.executable
    assert all(c.state == "valid" for c in distinct.result.tool_calls)
    ids = ["t0", "t1", "t2", "t1"]
    same = _feed("anthropic", _tool_blocks(ids), read_each=False).result
    reasons = [c.invalid_reason for c in same.tool_calls]
    duplicate = "the call id 't1' is used by another call"
    # The first t1 completed before the second arrived; the second is refused.
    assert reasons == [None, None, None, duplicate]
    assert not same.executable


@pytest.mark.parametrize(
    "protocol", ["anthropic", "bedrock-converse", "gemini", "openai-responses", "openai-realtime"]
)
def test_reading_the_result_after_every_chunk_is_linear(protocol: str) -> None:
    text = "" if protocol in ("openai-responses", "openai-realtime") else "ab"

    def run(blocks: int) -> None:
        stream = _feed(protocol, block_stream(protocol, blocks, text), read_each=True)
        assert stream.result.error is None
        assert len(stream.result.provider_content) == blocks or protocol == "openai-realtime"

    assert growth(run, 300) < MAX_GROWTH
