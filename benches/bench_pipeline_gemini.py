"""The whole ``gemini`` pipeline: body bytes -> unified events -> final result.

Workload (``workloads.py``, ``gemini``): 20,000 SSE events with CRLF
separators, each a ``GenerateContentResponse`` with one text part and a
``usageMetadata`` snapshot, the last with ``finishReason: STOP``; fed in
4 KiB chunks, as a socket delivers them. The same chunks re-serialized as the
JSON array of ``streamGenerateContent`` without ``alt=sse`` (``[e1\\r\\n,\\r\\ne2
...]``) make the ``gemini-json`` workload.

Implementations, in the same run:

* ``streamwire``: ``sw.stream("gemini")``, ``feed`` per chunk, ``close``,
  ``result`` (JSON via orjson when installed, see ``streamwire/_json.py``);
* ``streamwire-stdlib-json``: the same with the standard library's decoder
  forced, i.e. streamwire with no optional package installed;
* ``naive``: a ``bytes.find(b"\\r\\n\\r\\n")`` splitter, ``orjson.loads`` and a
  plain-dict accumulator (text parts joined, last ``usageMetadata``, last
  ``finishReason``): fast and not correct (no LF or CR endings, no comments,
  no errors, no statuses, no calls, no caps), kept as the speed reference.
* ``google-genai``: what ``client.models.generate_content_stream`` does with
  the response (google-genai 3.6.1, checked 2026-12-06), step by step with
  the SDK's own functions (:func:`google_genai_responses`), plus a plain
  accumulator over its typed chunks, since the SDK has none (it yields one
  ``GenerateContentResponse`` per SSE event; ``Chat`` only keeps their
  ``Content`` for its history): each response's text parts joined, the last
  ``finish_reason`` (its ``.value``, the wire's string) and the last
  ``usage_metadata``. Per event the SDK runs ``HttpResponse.segments``
  (``_iter_response_stream`` over an httpx response whose body is the
  chunks: ``_iter_sse_lines`` over its ``iter_bytes()``, ``data:`` lines
  joined at each blank line; ``_load_json_from_response``, i.e.
  ``json.loads``), ``request_streamed`` (``json.dumps`` of that dict
  again, the ``{"error":`` check, a ``types.HttpResponse`` of headers and
  body), ``_generate_content_stream`` (``json.loads`` of the body,
  ``_GenerateContentResponse_from_mldev``,
  ``types.GenerateContentResponse._from_response``, a second
  ``types.HttpResponse`` for ``sdk_http_response``; ``_verify_response``,
  left out, is a no-op but in the SDK's replay tests),
  ``StreamContinuation.observe`` (automatic continuation) and
  ``generate_content_stream``'s own per-chunk step (the model's ``Content``
  kept for automatic function calling, with no function to call).
  ``test_google_genai_is_the_sdks_path`` checks that these steps yield what
  the SDK's ``generate_content_stream`` yields, with its transport answering
  the same chunks. The JSON array (``gemini-json``) has
  no SDK peer: google-genai never reads it (it always streams with
  ``alt=sse``; its line reader would take the array's first line,
  ``[{...}``, for a whole JSON text and fail to parse it).
* ``streamwire-json`` (workload ``gemini-json``): ``sw.stream("gemini-json")``
  over the array, for the incremental array scanner's cost.

Each run checks its output (final text, finish reason, final usage figures)
against what the generator put in, and records ``correct`` in
``extra_info``; streamwire must be correct. Throughput is chunks (events or
array elements) per second, the same count for every implementation.

Run once each as tests: ``pytest benches/bench_pipeline_gemini.py``. Measure
with pytest-benchmark (``--benchmark-enable``), or print events/s and the
ratios to the naive reference and the SDK path with ``python
benches/bench_pipeline_gemini.py``.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable, Iterator, Sequence
from functools import cache, partial
from typing import Any

import orjson
import pytest

from pipeline import CHUNK, Load, final_usage, replaced, stream_result
from rounds import bench_case, best_times
from streamwire import _json
from streamwire.protocols import gemini, gemini_chunks
from workloads import chunks_of, workload

#: (text, finishReason, (promptTokenCount, candidatesTokenCount, totalTokenCount))
Output = tuple[str, str | None, tuple[int | None, int | None, int | None]]


def _expected(datas: Sequence[str]) -> Output:
    text = []
    finish = None
    usage: dict[str, Any] = {}
    for data in datas:
        body = json.loads(data)
        for candidate in body["candidates"]:
            text += [part["text"] for part in candidate["content"]["parts"]]
            finish = candidate.get("finishReason", finish)
        usage = body["usageMetadata"]
    figures = (
        usage.get("promptTokenCount"),
        usage.get("candidatesTokenCount"),
        usage.get("totalTokenCount"),
    )
    return "".join(text), finish, figures


@cache
def load(name: str) -> Load:
    source = workload("gemini")
    expected = _expected(source.expected)
    if name == "gemini":
        return Load(name, source.wire, expected, len(source.expected))
    array = "[" + "\r\n,\r\n".join(source.expected) + "]"
    return Load(name, array.encode(), expected, len(source.expected))


# --- implementations -----------------------------------------------------------------


def _run(protocol: str, chunks: Sequence[bytes]) -> Output:
    result = stream_result(protocol, chunks)
    usage = final_usage(result)
    candidates = usage.output_tokens  # no thoughts in this workload
    return (
        result.text,
        result.provider_stop_reason,
        (
            usage.input_tokens,
            candidates,
            usage.total_tokens,
        ),
    )


def run_streamwire(chunks: Sequence[bytes]) -> Output:
    return _run("gemini", chunks)


def run_streamwire_stdlib(chunks: Sequence[bytes]) -> Output:
    with replaced(_json._loads_stdlib, (gemini, "loads"), (gemini_chunks, "loads")):
        return _run("gemini", chunks)


def run_streamwire_json(chunks: Sequence[bytes]) -> Output:
    return _run("gemini-json", chunks)


def run_naive(chunks: Sequence[bytes]) -> Output:
    buffer = b""
    text: list[str] = []
    finish = None
    usage: dict[str, Any] = {}
    for chunk in chunks:
        buffer += chunk
        start = 0
        while (end := buffer.find(b"\r\n\r\n", start)) >= 0:
            event = buffer[start:end]
            start = end + 4
            if not event.startswith(b"data: "):
                continue
            body = orjson.loads(event[6:])
            for candidate in body.get("candidates") or ():
                for part in (candidate.get("content") or {}).get("parts") or ():
                    if "text" in part:
                        text.append(part["text"])
                finish = candidate.get("finishReason") or finish
            usage = body.get("usageMetadata") or usage
        buffer = buffer[start:]
    figures = (
        usage.get("promptTokenCount"),
        usage.get("candidatesTokenCount"),
        usage.get("totalTokenCount"),
    )
    return "".join(text), finish, figures


#: The model the SDK path's request names (its parameters are built per stream).
GENAI_MODEL = "gemini-2.5-flash"
#: The response's headers, which google-genai copies into every chunk it
#: yields (``sdk_http_response``): headers of the kind a Gemini API stream
#: has (illustrative, not recorded; their number barely changes the cost).
GENAI_HEADERS = {
    "content-type": "text/event-stream",
    "content-disposition": "attachment",
    "vary": "Origin, X-Origin, Referer",
    "transfer-encoding": "chunked",
    "date": "Sun, 06 Dec 2026 12:00:00 GMT",
    "server": "scaffolding on HTTPServer2",
    "x-xss-protection": "0",
    "x-frame-options": "SAMEORIGIN",
    "x-content-type-options": "nosniff",
    "server-timing": "gfet4t7; dur=412",
    "alt-svc": 'h3=":443"; ma=2592000,h3-29=":443"; ma=2592000',
}


def _genai_segments(chunks: Sequence[bytes]) -> Iterator[str]:
    """google-genai's ``HttpResponse._iter_response_stream`` on these chunks:
    the SDK's own method, over an httpx response whose body is the chunks
    (httpx's identity decoding of each chunk is the only step added, a few
    microseconds a 4 KiB chunk against the SDK's ~230 per event)."""
    import httpx
    from google.genai._api_client import HttpResponse

    body = httpx.Response(200, headers=GENAI_HEADERS, content=iter(chunks))
    response = HttpResponse(GENAI_HEADERS, response_stream=body)
    stream: Iterator[str] = response._iter_response_stream()
    return stream


def google_genai_responses(chunks: Sequence[bytes]) -> Iterator[Any]:
    """The ``GenerateContentResponse`` objects google-genai's
    ``client.models.generate_content_stream`` yields for an ``alt=sse``
    response delivered in ``chunks`` (Gemini API, no config), each made by
    the SDK's own per-chunk steps (module docstring)."""
    from google.genai import _extra_utils, types
    from google.genai._api_client import HttpResponse
    from google.genai.models import _GenerateContentResponse_from_mldev

    # Per stream: Models._generate_content_stream's parameters,
    # _generate_content_stream_with_continuation's state and first hop.
    parameter_model = types._GenerateContentParameters(model=GENAI_MODEL, contents="Hi")
    state = _extra_utils.StreamContinuation(None)
    state.start_hop()
    afc_history: list[Any] = []  # Models.generate_content_stream's, empty on a first call
    model_output = []
    for segment in _genai_segments(chunks):
        # HttpResponse.segments
        segment_dict = HttpResponse._load_json_from_response(segment)
        # BaseApiClient.request_streamed
        chunk_dump = json.dumps(segment_dict)
        if chunk_dump.startswith('{"error":'):
            raise RuntimeError(chunk_dump)
        response = types.HttpResponse(headers=GENAI_HEADERS, body=chunk_dump)
        # Models._generate_content_stream (Gemini API: the mldev converter)
        response_dict = {} if not response.body else json.loads(response.body)
        response_dict = _GenerateContentResponse_from_mldev(response_dict, None, parameter_model)
        return_value = types.GenerateContentResponse._from_response(
            response=response_dict, kwargs={}
        )
        return_value.sdk_http_response = types.HttpResponse(headers=response.headers)
        # Models._generate_content_stream_with_continuation
        chunk = state.observe(return_value)
        # Models.generate_content_stream (automatic function calling, no function map)
        if _extra_utils.should_append_afc_history(None) and afc_history:
            chunk.automatic_function_calling_history = afc_history
        if chunk.candidates and chunk.candidates[0].content:
            model_output.append(chunk.candidates[0].content)
        yield chunk
    state.end_hop(None)


def run_google_genai(chunks: Sequence[bytes]) -> Output:
    text: list[str] = []
    finish = None
    usage: Any = None
    for response in google_genai_responses(chunks):
        for candidate in response.candidates or ():
            for part in (candidate.content.parts if candidate.content else None) or ():
                if part.text is not None:
                    text.append(part.text)
            finish = candidate.finish_reason or finish
        usage = response.usage_metadata or usage
    figures = (usage.prompt_token_count, usage.candidates_token_count, usage.total_token_count)
    return "".join(text), None if finish is None else finish.value, figures


IMPLEMENTATIONS: dict[str, Callable[[Sequence[bytes]], Output]] = {
    "streamwire": run_streamwire,
    "streamwire-stdlib-json": run_streamwire_stdlib,
    "naive": run_naive,
    "google-genai": run_google_genai,
}
CASES = [("gemini", impl) for impl in IMPLEMENTATIONS] + [("gemini-json", "streamwire-json")]
_ALL = {**IMPLEMENTATIONS, "streamwire-json": run_streamwire_json}


@pytest.mark.parametrize(("workload_name", "impl_name"), CASES)
def test_pipeline_gemini(benchmark: Any, workload_name: str, impl_name: str) -> None:
    run = _ALL[impl_name]
    bench_case(benchmark, load(workload_name), workload_name, impl_name, run, chunk_size=CHUNK)


def _sdk_stream(chunks: Sequence[bytes]) -> list[Any]:
    """What google-genai's own ``generate_content_stream`` yields when its
    transport (``BaseApiClient._request``) answers with ``chunks``."""
    import httpx
    from google import genai
    from google.genai._api_client import HttpResponse

    client = genai.Client(api_key="bench", vertexai=False)

    def request(http_request: Any, http_options: Any = None, stream: bool = False) -> Any:
        assert stream and http_request.url.endswith("streamGenerateContent?alt=sse")
        body = httpx.Response(200, headers=GENAI_HEADERS, content=iter(chunks))
        return HttpResponse(GENAI_HEADERS, response_stream=body)

    client._api_client._request = request  # type: ignore[method-assign]
    return list(client.models.generate_content_stream(model=GENAI_MODEL, contents="Hi"))


def test_google_genai_is_the_sdks_path() -> None:
    """The ``google-genai`` peer's steps yield what the SDK itself yields, on
    the end of ``gemini-tools`` (text chunks, the signed function call, the
    last chunk's finish reason), in 4 KiB chunks."""
    source = workload("gemini-tools")
    wire = source.wire[source.event_ends[-300] :]
    chunks = chunks_of(wire, CHUNK)
    ours = list(google_genai_responses(chunks))
    assert len(ours) == 299
    assert ours == _sdk_stream(chunks)
    call = ours[-2].candidates[0].content.parts[0]
    assert call.function_call.name == "get_weather" and call.thought_signature


def main(argv: list[str]) -> None:
    """Prints events/s and the ratios to the naive reference and the SDK
    path, all in one run.

    Rounds are interleaved (each round times every implementation once) and
    the best round of each counts, so that a load change on the machine
    affects every implementation alike.
    """
    rounds = int(argv[0]) if argv else 5
    decoder = "orjson" if _json.ACCELERATED else "stdlib"
    print(f"json decoder for streamwire: {decoder}; best CPU time of {rounds} interleaved rounds")
    correct = {impl: _ALL[impl](load(name).chunks) == load(name).expected for name, impl in CASES}
    best = best_times(
        {impl: partial(_ALL[impl], load(name).chunks) for name, impl in CASES}, rounds
    )
    for name, impl in CASES:
        events = load(name).events
        rate = events / best[impl]
        per = best[impl] / events * 1e9
        print(
            f"{name:12s} {impl:24s} {rate:>12,.0f} events/s {per:7.0f} ns/event  "
            f"correct={correct[impl]}"
        )
    for impl in ("streamwire", "streamwire-stdlib-json", "streamwire-json"):
        print(f"{impl:24s} {best['naive'] / best[impl]:5.2f}x naive")
    print(f"{'streamwire':24s} {best['google-genai'] / best['streamwire']:5.1f}x google-genai")


if __name__ == "__main__":
    main(sys.argv[1:])
