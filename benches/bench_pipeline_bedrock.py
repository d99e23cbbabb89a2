"""The whole ``bedrock-converse`` pipeline: body bytes -> unified events -> final result.

Workload: ``bedrock-converse`` of ``workloads.py`` (the EventStream benches'
Bedrock-ConverseStream-shaped body: 20,000 messages, ``messageStart``, 19,996
text ``contentBlockDelta``, ``contentBlockStop``, ``messageStop``,
``metadata``, each with Bedrock's three headers and its ``p`` padding), in
4 KiB chunks as a socket delivers them.

Implementations, in the same run:

* ``streamwire``: ``sw.stream("bedrock-converse")``, ``feed`` per chunk,
  ``close``, ``result`` (JSON via orjson when installed, see
  ``streamwire/_json.py``);
* ``streamwire-stdlib-json``: the same with the standard library's decoder
  forced, i.e. streamwire with no optional package installed;
* ``botocore``: what ``client.converse_stream(...)["stream"]`` does with the
  response body, reproduced without a network: botocore's own
  ``EventStream`` over the chunks (``EventStreamBuffer`` framing, then per
  message ``to_response_dict`` and ``EventStreamJSONParser.parse`` against
  the ``ConverseStreamOutput`` shape of botocore's bundled ``bedrock-runtime``
  service model, as ``RestJSONParser`` sets it up), and then what a user
  does with the parsed events: accumulate the text deltas, keep the stop
  reason and the usage.

Each run checks its output (text, stop reason, usage) against what the
generator put in and records ``correct`` in ``extra_info``; streamwire must be
correct. Throughput is EventStream messages per second (the same count for
every implementation). The issue's target: streamwire >= 15x botocore.

Run once each as tests: ``pytest benches/bench_pipeline_bedrock.py``. Measure
with pytest-benchmark (``--benchmark-enable``), or print the ratios with
``python benches/bench_pipeline_bedrock.py [rounds]``.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable, Sequence
from functools import cache
from typing import Any

import pytest

import streamwire as sw
from rounds import bench_case, measure
from streamwire import _json
from streamwire.protocols import _eventstream, bedrock
from workloads import es_workload

CHUNK = 4096
WORKLOAD = "bedrock-converse"
#: (text, stop reason, (input tokens, output tokens, total tokens))
Output = tuple[str, str | None, tuple[int | None, int | None, int | None]]


class Load:
    """The workload in 4 KiB chunks and the output a parser must give."""

    def __init__(self) -> None:
        load = es_workload(WORKLOAD)
        self.wire = load.wire
        self.chunks = tuple(load.wire[i : i + CHUNK] for i in range(0, len(load.wire), CHUNK))
        self.events = len(load.expected)
        text: list[str] = []
        stop = None
        usage: tuple[int | None, int | None, int | None] = (None, None, None)
        for event_type, payload in load.expected:
            body = json.loads(payload)
            if event_type == "contentBlockDelta":
                text.append(body["delta"]["text"])
            elif event_type == "messageStop":
                stop = body["stopReason"]
            elif event_type == "metadata":
                u = body["usage"]
                usage = (u["inputTokens"], u["outputTokens"], u["totalTokens"])
        self.expected: Output = ("".join(text), stop, usage)


@cache
def load() -> Load:
    return Load()


# --- implementations -------------------------------------------------------------------


def run_streamwire(chunks: Sequence[bytes]) -> Output:
    stream = sw.stream("bedrock-converse")
    feed = stream.feed
    for chunk in chunks:
        feed(chunk)
    stream.close()
    result = stream.result
    assert result.status == "completed" and result.usage is not None and result.usage.final
    usage = result.usage
    figures = (usage.input_tokens, usage.output_tokens, usage.total_tokens)
    return result.text, result.provider_stop_reason, figures


def run_streamwire_stdlib(chunks: Sequence[bytes]) -> Output:
    previous = bedrock._fast_loads, _eventstream.loads_payload
    bedrock._fast_loads = _eventstream.loads_payload = _loads_payload_stdlib
    try:
        return run_streamwire(chunks)
    finally:
        bedrock._fast_loads, _eventstream.loads_payload = previous


def _loads_payload_stdlib(payload: bytes) -> Any:
    return _json._loads_stdlib(payload.decode("utf-8"))


@cache
def _botocore_shape() -> Any:
    import botocore.session

    model = botocore.session.get_session().get_service_model("bedrock-runtime")
    return model.operation_model("ConverseStream").output_shape.members["stream"]


class _Body:
    """The ``raw_stream`` botocore's ``EventStream`` reads: ``stream()`` yields chunks."""

    def __init__(self, chunks: Sequence[bytes]) -> None:
        self._chunks = chunks

    def stream(self) -> Any:
        return iter(self._chunks)

    def close(self) -> None:
        pass


def run_botocore(chunks: Sequence[bytes]) -> Output:
    from botocore.eventstream import EventStream
    from botocore.parsers import EventStreamJSONParser

    stream = EventStream(
        _Body(chunks), _botocore_shape(), EventStreamJSONParser(), "ConverseStream"
    )
    text: list[str] = []
    stop = None
    usage: tuple[int | None, int | None, int | None] = (None, None, None)
    for event in stream:
        if "contentBlockDelta" in event:
            delta = event["contentBlockDelta"]["delta"]
            if "text" in delta:
                text.append(delta["text"])
        elif "messageStop" in event:
            stop = event["messageStop"]["stopReason"]
        elif "metadata" in event:
            u = event["metadata"]["usage"]
            usage = (u.get("inputTokens"), u.get("outputTokens"), u.get("totalTokens"))
    return "".join(text), stop, usage


IMPLEMENTATIONS: dict[str, Callable[[Sequence[bytes]], Output]] = {
    "streamwire": run_streamwire,
    "streamwire-stdlib-json": run_streamwire_stdlib,
    "botocore": run_botocore,
}


@pytest.mark.parametrize("impl_name", list(IMPLEMENTATIONS))
def test_pipeline_bedrock(benchmark: Any, impl_name: str) -> None:
    bench_case(benchmark, load(), WORKLOAD, impl_name, IMPLEMENTATIONS[impl_name], chunk_size=CHUNK)


def main(argv: list[str]) -> None:
    """Prints events/s (CPU time) and the ratio to the target, all implementations in one run."""
    rounds = int(argv[0]) if argv else 5
    decoder = "orjson" if _json.ACCELERATED else "stdlib"
    print(f"json decoder for streamwire: {decoder}; best CPU time of {rounds} interleaved rounds")
    correct, rates = measure(load(), IMPLEMENTATIONS, rounds)
    for impl, rate in rates.items():
        print(f"{WORKLOAD} {impl:24s} {rate:>12,.0f} events/s  correct={correct[impl]}")
    for impl in ("streamwire", "streamwire-stdlib-json"):
        print(
            f"{WORKLOAD} {impl:24s} {rates[impl] / rates['botocore']:6.1f}x botocore (target 15x)"
        )


if __name__ == "__main__":
    main(sys.argv[1:])
