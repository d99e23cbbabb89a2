"""Gateway translation against LiteLLM's own streaming translation, in one process.

Run in LiteLLM's venv (``benches/litellm_venv.sh``; LiteLLM at the project's
pin, ``.ci/litellm-constraints.txt``, never a dependency of streamwire) with
this checkout's package on the path; the gate (``gate.py``) does that and
merges the groups this prints (``--json -``).
Each pair is the same upstream body in 4 KiB chunks, re-encoded for a client
of another protocol, from the upstream bytes to the client bytes:

* ``anthropic -> openai-chat`` (the ``anthropic`` workload, ``workloads.py``):
  LiteLLM's ``llms/anthropic/chat/handler.py`` ``ModelResponseIterator`` over
  the body's lines (``httpx``'s ``LineDecoder``, as ``response.iter_lines()``
  gives them to it), each ``ModelResponseStream`` serialized as the proxy does
  (``model_dump_json(exclude_none=True, exclude_unset=True)``, framed
  ``data: ...``);
* ``openai-chat -> anthropic`` (the ``openai-chat`` workload): each chunk
  ``ModelResponseStream(**json)``, through ``llms/anthropic/messages/adapters/
  streaming_iterator.py``'s ``AnthropicStreamWrapper.anthropic_sse_wrapper``
  (the ``/v1/messages`` endpoint over a chat model);
* ``openai-responses -> openai-chat`` (the ``openai-responses`` workload):
  ``completion_extras/litellm_responses_transformation``'s
  ``OpenAiResponsesToChatCompletionStreamIterator`` over the body's lines,
  serialized as the proxy does.

LiteLLM's ``CustomStreamWrapper`` (usage, logging, callbacks) is left out: a
lower bar for LiteLLM. ``streamwire`` is ``sw.translate(source, target,
chunks)``. Every output is read back by streamwire's adapter for the target,
outside the timing, and its text compared with the workload's: a peer that
gets it wrong is marked (``correct``), not hidden. Latency: each upstream
SSE event's bytes fed alone, the median microseconds until its client bytes.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
from collections.abc import Callable, Iterator, Sequence
from functools import partial
from typing import Any

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")  # no network at import

import streamwire as sw
from rounds import best_times
from workloads import workload

CHUNK = 4096
PAIRS = (
    ("anthropic", "openai-chat"),
    ("openai-chat", "anthropic"),
    ("openai-responses", "openai-chat"),
)
_WORKLOAD = {
    "anthropic": "anthropic",
    "openai-chat": "openai-chat",
    "openai-responses": "openai-responses",
}


def _lines(chunks: Sequence[bytes]) -> Iterator[str]:
    """The body's lines as ``httpx.Response.iter_lines()`` yields them."""
    import codecs

    from httpx._decoders import LineDecoder

    text = codecs.getincrementaldecoder("utf-8")(errors="replace")
    lines = LineDecoder()
    for chunk in chunks:
        yield from lines.decode(text.decode(chunk))
    yield from lines.decode(text.decode(b"", True))
    yield from lines.flush()


def _chat_bytes(chunk: Any) -> bytes | None:
    """What the proxy's data generator sends for a chat chunk; None for the
    iterators' empty ``GenericStreamingChunk`` (an ``event:`` line, a ping),
    which ``CustomStreamWrapper`` drops."""
    if hasattr(chunk, "model_dump_json"):
        body = chunk.model_dump_json(exclude_none=True, exclude_unset=True).encode()
        return b"data: " + body + b"\n\n"
    if isinstance(chunk, dict) and not chunk.get("text") and not chunk.get("tool_use"):
        return None
    raise TypeError(f"an unexpected chunk: {chunk!r}"[:200])


def iter_anthropic_to_chat(chunks: Sequence[bytes]) -> Iterator[bytes]:
    from litellm.llms.anthropic.chat.handler import ModelResponseIterator

    for chunk in ModelResponseIterator(_lines(chunks), sync_stream=True):
        if (out := _chat_bytes(chunk)) is not None:
            yield out
    yield b"data: [DONE]\n\n"


def iter_chat_to_anthropic(chunks: Sequence[bytes]) -> Iterator[bytes]:
    try:  # where LiteLLM 1.110 keeps it
        from litellm.llms.anthropic.messages.adapters.streaming_iterator import (
            AnthropicStreamWrapper,
        )
    except ImportError:  # and where the pinned 1.108 does
        from litellm.llms.anthropic.pass_through.adapters.streaming_iterator import (
            AnthropicStreamWrapper,
        )
    from litellm.types.utils import ModelResponseStream

    def upstream() -> Iterator[Any]:
        for line in _lines(chunks):
            if line.startswith("data: ") and line != "data: [DONE]":
                yield ModelResponseStream(**json.loads(line[6:]))

    wrapper = AnthropicStreamWrapper(completion_stream=upstream(), model="gpt-4o")
    yield from wrapper.anthropic_sse_wrapper()


def iter_responses_to_chat(chunks: Sequence[bytes]) -> Iterator[bytes]:
    from litellm.completion_extras.litellm_responses_transformation.transformation import (
        OpenAiResponsesToChatCompletionStreamIterator,
    )

    lines = (line for line in _lines(chunks) if line.startswith("data:"))
    for chunk in OpenAiResponsesToChatCompletionStreamIterator(lines, sync_stream=True):
        if (out := _chat_bytes(chunk)) is not None:
            yield out
    yield b"data: [DONE]\n\n"


LITELLM_ITER: dict[tuple[str, str], Callable[[Sequence[bytes]], Iterator[bytes]]] = {
    ("anthropic", "openai-chat"): iter_anthropic_to_chat,
    ("openai-chat", "anthropic"): iter_chat_to_anthropic,
    ("openai-responses", "openai-chat"): iter_responses_to_chat,
}


def litellm_translate(source: str, target: str, chunks: Sequence[bytes]) -> list[bytes]:
    return list(LITELLM_ITER[source, target](chunks))


def streamwire_translate(source: str, target: str, chunks: Sequence[bytes]) -> list[bytes]:
    return list(sw.translate(source, target, chunks, created=1764412800))


def _expected_text(source: str) -> str:
    stream = sw.stream(source)
    for chunk in _chunks(source):
        stream.feed(chunk)
    stream.close()
    return stream.result.text


def _chunks(source: str) -> tuple[bytes, ...]:
    wire = workload(_WORKLOAD[source]).wire
    return tuple(wire[i : i + CHUNK] for i in range(0, len(wire), CHUNK))


def read_back(target: str, pieces: Sequence[bytes]) -> tuple[str, str]:
    stream = sw.stream(target)
    for piece in pieces:
        stream.feed(piece)
    stream.close()
    return stream.result.text, stream.result.status


def latency(source: str, target: str, run: str) -> int:
    """Median ns from an upstream SSE event's bytes to its client bytes:
    streamwire fed each event alone; LiteLLM's iterator timed per output it
    yields (it pulls the lines of the events that output needs)."""
    wire = workload(_WORKLOAD[source]).wire
    clock = time.perf_counter_ns
    times: list[int] = []
    if run == "streamwire":
        adapter = sw.stream(source)
        enc = sw.encoder(target, source=source, created=0)
        for piece in (part + b"\n\n" for part in wire.split(b"\n\n")[:-1]):
            start = clock()
            enc.feed(adapter.feed(piece))
            times.append(clock() - start)
        return int(statistics.median(times))
    outputs = iter(LITELLM_ITER[source, target](_chunks(source)))
    while True:
        start = clock()
        try:
            next(outputs)
        except StopIteration:
            break
        times.append(clock() - start)
    return int(statistics.median(times))


def groups(mode: str, rounds: int) -> list[dict[str, Any]]:
    out = []
    for source, target in PAIRS:
        chunks = _chunks(source)
        runs = {
            "streamwire": partial(streamwire_translate, source, target, chunks),
            "litellm": partial(litellm_translate, source, target, chunks),
        }
        expected = _expected_text(source)
        correct = {}
        notes = {}
        for name, run in runs.items():
            try:
                text, status = read_back(target, run())
                correct[name] = text == expected and status == "completed"
                notes[name] = status
            except Exception as exc:  # a peer that breaks is marked, not hidden
                correct[name] = False
                notes[name] = f"raised {type(exc).__name__}: {exc}"[:200]
        runs = {n: r for n, r in runs.items() if not notes[n].startswith("raised")}
        best = best_times(runs, rounds)
        events = workload(_WORKLOAD[source]).wire.count(b"\n\n")
        ratios = {"vs litellm": best["litellm"] / best["streamwire"]} if "litellm" in best else {}
        out.append(
            {
                "suite": "translate",
                "name": f"{source}->{target}",
                "unit": "events",
                "units": events,
                "seconds": best,
                "correct": correct,
                "read_back_status": notes,
                "ratios": ratios,
                "targets": {},
                "latency_ns": {n: latency(source, target, n) for n in runs},
                "per_event_us": {n: s / events * 1e6 for n, s in best.items()},
            }
        )
    return out


def main(argv: list[str]) -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n")[0])
    parser.add_argument("--json", default=None, help="'-': print the groups as JSON")
    parser.add_argument("--mode", default="full")
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args(argv)
    result = groups(args.mode, args.rounds)
    if args.json == "-":
        print(json.dumps(result))
        return
    for g in result:
        cells = ", ".join(f"{n} {us:,.1f} µs/event" for n, us in g["per_event_us"].items())
        print(f"{g['name']:34s} {cells}  {g['ratios']}  correct={g['correct']}")


if __name__ == "__main__":
    main(sys.argv[1:])
