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

from pipeline import CHUNK, Load, final_usage, print_rates, replaced, stream_result
from rounds import bench_case
from streamwire import _json
from streamwire.protocols import _eventstream, bedrock
from workloads import es_workload

WORKLOAD = "bedrock-converse"
#: (text, stop reason, (input tokens, output tokens, total tokens))
Output = tuple[str, str | None, tuple[int | None, int | None, int | None]]


@cache
def load() -> Load:
    source = es_workload(WORKLOAD)
    text: list[str] = []
    stop = None
    usage: tuple[int | None, int | None, int | None] = (None, None, None)
    for event_type, payload in source.expected:
        body = json.loads(payload)
        if event_type == "contentBlockDelta":
            text.append(body["delta"]["text"])
        elif event_type == "messageStop":
            stop = body["stopReason"]
        elif event_type == "metadata":
            u = body["usage"]
            usage = (u["inputTokens"], u["outputTokens"], u["totalTokens"])
    expected: Output = ("".join(text), stop, usage)
    return Load(WORKLOAD, source.wire, expected, len(source.expected))


# --- implementations -------------------------------------------------------------------


def run_streamwire(chunks: Sequence[bytes]) -> Output:
    result = stream_result("bedrock-converse", chunks)
    usage = final_usage(result)
    figures = (usage.input_tokens, usage.output_tokens, usage.total_tokens)
    return result.text, result.provider_stop_reason, figures


def run_streamwire_stdlib(chunks: Sequence[bytes]) -> Output:
    places = (bedrock, "_fast_loads"), (_eventstream, "loads_payload")
    with replaced(_loads_payload_stdlib, *places):
        return run_streamwire(chunks)


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
    print_rates([load()], IMPLEMENTATIONS, rounds, {"botocore": 15.0})


if __name__ == "__main__":
    main(sys.argv[1:])
