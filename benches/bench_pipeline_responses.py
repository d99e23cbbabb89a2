"""The whole ``openai-responses`` pipeline: body bytes -> unified events -> final result.

Workload (4 KiB chunks, as a socket delivers them): ``openai-responses`` of
``workloads.py``, an OpenAI Responses stream of 20,000
``response.output_text.delta`` events with every field the API sends
(``sequence_number``, ``item_id``, ``output_index``, ``content_index``,
``logprobs``, ``obfuscation``), framed ``event: NAME`` / ``data: {...}``, and the
lifecycle, ``.done`` copies and ``response.completed`` (with usage) around them
(API reference "Responses streaming events", checked 2026-11-29).

Implementations, in the same run:

* ``streamwire``: ``sw.stream("openai-responses")``, ``feed`` per chunk,
  ``close``, ``result`` (JSON via orjson when installed, see
  ``streamwire/_json.py``);
* ``streamwire-stdlib-json``: the same with the standard library's decoder
  forced, i.e. streamwire with no optional package installed;
* ``openai-sdk``: what ``client.responses.stream(...)`` does with a response
  body (openai-python 3.57.0): the SDK's ``SSEDecoder.iter_bytes``, the
  ``Stream.__stream__`` loop (``[DONE]`` check, ``sse.json()`` i.e.
  ``json.loads``, the legacy ``error`` check, ``construct_type`` of the
  ``ResponseStreamEvent`` union, as ``_process_response_data`` does without
  strict validation), then ``ResponseStreamState.handle_event`` for every event
  (which accumulates the snapshot and builds the SDK's own delta events) and
  ``get_final_response`` (``state._completed_response``), reading its
  ``output_text`` and ``usage``;
* ``naive``: a ``bytes.find(b"\\n\\n")`` splitter, the ``data:`` line found by
  ``bytes.find``, ``orjson.loads`` and a plain-dict accumulator keyed on the
  JSON ``type``: fast and not correct (no CR/CRLF, no multi-line data, no
  errors, no statuses, no sequence checks, no caps), kept as the speed
  reference.

Each run checks its output (the final text and the usage figures) against what
the generator put in, and records ``correct`` in ``extra_info``; streamwire
must be correct. Throughput is SSE events per second (the same count for every
implementation).

Run once each as tests: ``pytest benches/bench_pipeline_responses.py``.
Measure with pytest-benchmark (``--benchmark-enable``), or print the ratios
against the issue's targets (>= 20x the SDK path, >= 1.5x naive) with
``python benches/bench_pipeline_responses.py [rounds]``.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable, Sequence
from functools import cache
from typing import Any

import orjson
import pytest

from pipeline import CHUNK, Load, final_usage, print_rates, replaced, stream_result
from rounds import bench_case
from streamwire import _json
from streamwire.protocols import openai_responses
from workloads import workload

#: (final text, input tokens, output tokens)
Output = tuple[str, int | None, int | None]


@cache
def load(name: str) -> Load:
    source = workload(name)
    text: list[str] = []
    usage: dict[str, Any] = {}
    for data in source.expected:
        event = json.loads(data)
        if event["type"] == "response.output_text.delta":
            text.append(event["delta"])
        elif event["type"] == "response.completed":
            usage = event["response"]["usage"]
    expected: Output = ("".join(text), usage["input_tokens"], usage["output_tokens"])
    return Load(name, source.wire, expected, len(source.expected))


# --- implementations -----------------------------------------------------------------


def run_streamwire(chunks: Sequence[bytes]) -> Output:
    result = stream_result("openai-responses", chunks)
    usage = final_usage(result)
    return result.text, usage.input_tokens, usage.output_tokens


def run_streamwire_stdlib(chunks: Sequence[bytes]) -> Output:
    with replaced(_json._loads_stdlib, (openai_responses, "loads")):
        return run_streamwire(chunks)


def run_openai_sdk(chunks: Sequence[bytes]) -> Output:
    from openai._models import construct_type
    from openai._streaming import SSEDecoder
    from openai._types import omit
    from openai._utils import is_mapping
    from openai.lib.streaming.responses._responses import ResponseStreamState
    from openai.types.responses import ResponseStreamEvent

    state: ResponseStreamState[Any] = ResponseStreamState(input_tools=omit, text_format=omit)
    for sse in SSEDecoder().iter_bytes(iter(chunks)):
        if sse.data.startswith("[DONE]"):
            break
        data = sse.json()
        if is_mapping(data) and data.get("error"):
            raise RuntimeError(data["error"])
        event = construct_type(type_=ResponseStreamEvent, value=data)
        for _ in state.handle_event(event):  # type: ignore[arg-type]
            pass
    response = state._completed_response
    assert response is not None and response.usage is not None
    return response.output_text, response.usage.input_tokens, response.usage.output_tokens


def run_naive(chunks: Sequence[bytes]) -> Output:
    buffer = b""
    text: list[str] = []
    usage: dict[str, Any] = {}
    for chunk in chunks:
        buffer += chunk
        start = 0
        while (end := buffer.find(b"\n\n", start)) >= 0:
            data = buffer.find(b"data: ", start, end)
            start = end + 2
            if data < 0:
                continue
            event = orjson.loads(buffer[data + 6 : end])
            kind = event.get("type")
            if kind == "response.output_text.delta":
                text.append(event["delta"])
            elif kind == "response.completed":
                usage = event["response"].get("usage") or {}
        buffer = buffer[start:]
    return "".join(text), usage.get("input_tokens"), usage.get("output_tokens")


IMPLEMENTATIONS: dict[str, Callable[[Sequence[bytes]], Output]] = {
    "streamwire": run_streamwire,
    "streamwire-stdlib-json": run_streamwire_stdlib,
    "openai-sdk": run_openai_sdk,
    "naive": run_naive,
}
WORKLOADS = ("openai-responses",)


@pytest.mark.parametrize("impl_name", list(IMPLEMENTATIONS))
@pytest.mark.parametrize("workload_name", WORKLOADS)
def test_pipeline_responses(benchmark: Any, workload_name: str, impl_name: str) -> None:
    run = IMPLEMENTATIONS[impl_name]
    bench_case(benchmark, load(workload_name), workload_name, impl_name, run, chunk_size=CHUNK)


def main(argv: list[str]) -> None:
    """Prints events/s and the ratios to the targets, all implementations in one run."""
    rounds = int(argv[0]) if argv else 5
    targets = {"openai-sdk": 20.0, "naive": 1.5}
    print_rates([load(n) for n in WORKLOADS], IMPLEMENTATIONS, rounds, targets)


if __name__ == "__main__":
    main(sys.argv[1:])
