"""Performance traps a hostile (or merely large) stream used to spring, kept shut.

Each test compares the cost of an input with that of one ten times larger,
measured in this process's CPU time (``time.process_time``, best of three), so
that a busy machine does not decide it: a linear cost grows ~10x, the
quadratic ones these tests guard against grew ~100x.

* The duplicate-id check at a call's completion looked at every other call:
  100,000 calls took minutes. It is one lookup now.
* ``.result`` read after every chunk rebuilt everything (texts joined again,
  ``provider_content`` deep-copied): quadratic in the stream. Only what
  changed is rebuilt now, and the results of one stream share what did not:
  so a result already handed out must never change as the stream goes on
  (checked here for every fixture, read after every chunk).
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Iterator
from typing import Any

import pytest

import streamwire as sw
from fixture_replay import Fixture, manifests
from hostile_builders import block_stream, chat_calls, encode
from streamwire.io.serialize import result_dict

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


@pytest.mark.timed
def test_completing_many_calls_is_linear() -> None:
    def run(calls: int) -> None:
        stream = _feed("openai-chat", chat_calls(calls), read_each=False, max_tool_calls=calls)
        assert len(stream.result.tool_calls) == calls
        assert stream.result.tool_calls[-1].state == "valid"

    assert growth(run, 1000) < MAX_GROWTH


@pytest.mark.timed
def test_answering_many_gemini_calls_is_linear() -> None:
    # Each functionResponse finds the call it answers in O(1): a stream of
    # many calls answered (and many answers to nothing) stays linear.
    def run(calls: int) -> None:
        call = {"functionCall": {"name": "f", "args": {}}}
        answer = {"functionResponse": {"name": "f", "response": {}}}
        stray = {"functionResponse": {"name": "g", "response": {}}}
        chunks = [
            {"candidates": [{"content": {"parts": [call] * calls}, "finishReason": "STOP"}]},
            {"candidates": [{"content": {"parts": [answer] * calls + [stray] * calls}}]},
            {"candidates": [{"content": {"parts": [{"text": "ok"}]}, "finishReason": "STOP"}]},
        ]
        body = "".join(f"data: {json.dumps(c)}\r\n\r\n" for c in chunks).encode()
        stream = sw.stream("gemini", max_tool_calls=calls, max_content_blocks=4 * calls)
        stream.feed(body)
        stream.close()
        result = stream.result
        assert result.status == "completed" and result.text == "ok"
        assert all(c.executor == "server" for c in result.tool_calls)

    assert growth(run, 300) < MAX_GROWTH


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


@pytest.mark.timed
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


def _read_along(fixture: Fixture, units: list[Any]) -> None:
    """Feeds ``units``, reading ``.result`` after each; every result read must
    still say at the end what it said when it was read."""
    stream = sw.stream(fixture.protocol, **fixture.manifest.get("options", {}))
    feed = stream.feed_message if fixture.messages else stream.feed
    seen: list[tuple[sw.StreamResult, str]] = []
    for unit in units:
        feed(unit)
        result = stream.result
        seen.append((result, json.dumps(result_dict(result), ensure_ascii=True)))
    if fixture.manifest.get("replay", {}).get("end") == "cancel":
        stream.cancel()
    else:
        stream.close()
    for step, (result, said) in enumerate(seen):
        now = json.dumps(result_dict(result), ensure_ascii=True)
        assert now == said, f"{fixture.name}: the result read after unit {step} changed"


@pytest.mark.parametrize("fixture", list(manifests()), ids=lambda f: f.name)
def test_a_result_read_along_the_way_never_changes(fixture: Fixture) -> None:
    if fixture.messages:
        units: list[Any] = fixture.message_lines()
    else:
        data = fixture.fed_bytes()
        step = max(1, len(data) // 40)  # some 40 reads, wherever the cuts fall
        units = [data[i : i + step] for i in range(0, len(data), step)]
    _read_along(fixture, units)


def _chat(*deltas: dict[str, Any]) -> list[bytes]:
    chunks = [{"id": "c", "choices": [{"index": 0, "delta": d}]} for d in deltas]
    chunks.append({"id": "c", "choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]})
    return [f"data: {json.dumps(c)}\n\n".encode() for c in chunks] + [b"data: [DONE]\n\n"]


def test_kept_annotations_and_executed_tools_do_not_change_an_earlier_result() -> None:
    # openai-chat keeps these in one provider_content item each, growing or
    # merged as more arrive: an earlier result keeps the item as it was.
    search = {"index": 0, "type": "search", "arguments": "{}"}
    units = _chat(
        {"annotations": [{"type": "url_citation", "n": 1}]},
        {"executed_tools": [search]},
        {"annotations": [{"type": "url_citation", "n": 2}]},
        {"executed_tools": [{**search, "output": "found"}]},
    )
    stream = sw.stream("openai-chat")
    reads = []
    for unit in units:
        stream.feed(unit)
        reads.append(stream.result)
    stream.close()
    assert [r.provider_content for r in reads[:4]] == [
        ({"annotations": [{"type": "url_citation", "n": 1}]},),
        ({"annotations": [{"type": "url_citation", "n": 1}]}, {"executed_tools": [search]}),
        (
            {"annotations": [{"type": "url_citation", "n": 1}, {"type": "url_citation", "n": 2}]},
            {"executed_tools": [search]},
        ),
        (
            {"annotations": [{"type": "url_citation", "n": 1}, {"type": "url_citation", "n": 2}]},
            {"executed_tools": [{**search, "output": "found"}]},
        ),
    ]
