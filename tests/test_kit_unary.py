"""The non-streaming answer: the mock's JSON bodies, read back as the stream of the same answer.

Every unary case's whole answer, in every protocol the mock writes one for,
must read back (``unary.read_answer``) to the case's facts: text, reasoning
and its signature, each call's id, name and arguments, the end, and the usage
in full, parts included. An error case's answer is the provider's error
status with its type. Whatever the body, reading it never raises.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import random
import time
from typing import Any

import pytest

from streamwire.io._wire import http_error, to_headers
from streamwire.kit import CLIENTS
from streamwire.kit.client.raw import Observation, client_request, observe
from streamwire.kit.client.unary import MAX_BODY, MAX_ITEMS, read_answer, unary_result
from streamwire.kit.judge.rules import _same_type
from streamwire.kit.upstream.wire import render_json
from streamwire.kit.vocab.cases import CASES, UNARY_CASES, truth, usage_of

#: The protocols a client asks the whole answer in, each the mock's own body.
PROTOCOLS = CLIENTS
_SIGNED = {"anthropic", "gemini", "bedrock-converse", "bedrock-invoke"}


@pytest.mark.parametrize("protocol", PROTOCOLS)
@pytest.mark.parametrize("name", UNARY_CASES)
def test_each_whole_answer_reads_back_to_the_case_s_facts(name: str, protocol: str) -> None:
    case = CASES[name]
    status, headers, body = render_json(case, protocol, model="sw-m")
    facts = truth(case, protocol)
    if case.error:
        assert status >= 400
        kind = http_error(status, to_headers(headers), body).type
        assert facts.error_type is not None
        # AWS names its exceptions in UpperCamelCase in x-amzn-errortype.
        assert _same_type(kind, facts.error_type), (kind, facts.error_type)
        if protocol.startswith("bedrock") and case.error_kind is not None:
            assert kind is not None and kind[0].isupper()
        return
    assert status == 200 and ("content-type", "application/json") in headers
    events, problem = read_answer(protocol, body)
    assert problem is None
    result = unary_result(protocol, events)
    assert result.text == facts.text
    assert result.reasoning == facts.reasoning
    if facts.signature and protocol in _SIGNED:
        assert result.choices[0].reasoning_signatures == (facts.signature,)
    got = [(c.name, c.arguments) for c in result.tool_calls]
    assert got == [(tool, args) for _, tool, args in facts.calls]
    for call, (cid, _, _) in zip(result.tool_calls, facts.calls, strict=True):
        if cid is not None:
            assert call.id == cid and call.id_source == "provider"
        else:  # Gemini's calls have no id: named as streamwire's adapter names them
            assert call.id and call.id_source == "synthetic"
    assert (result.status, result.stop_reason) == (facts.status, facts.stop_reason)
    want = usage_of(case, protocol, final=True)
    usage = result.usage
    assert usage is not None
    for figure in (
        "input_tokens",
        "output_tokens",
        "cache_read_tokens",
        "cache_creation_tokens",
        "reasoning_tokens",
    ):
        assert getattr(usage, figure) == getattr(want, figure), figure


def test_the_usage_case_s_parts_are_in_each_protocol_s_own_fields() -> None:
    case = CASES["usage"]
    bodies = {p: json.loads(render_json(case, p, model="m")[2]) for p in PROTOCOLS}
    assert bodies["openai-chat"]["usage"]["prompt_tokens_details"] == {"cached_tokens": 1000}
    assert bodies["openai-chat"]["usage"]["prompt_tokens"] == 1234
    assert bodies["openai-responses"]["usage"]["output_tokens_details"] == {"reasoning_tokens": 30}
    anthropic = bodies["anthropic"]["usage"]
    assert anthropic["input_tokens"] == 34 and anthropic["cache_read_input_tokens"] == 1000
    assert anthropic["cache_creation_input_tokens"] == 200
    gemini = bodies["gemini"]["usageMetadata"]
    assert gemini["cachedContentTokenCount"] == 1000 and gemini["thoughtsTokenCount"] == 30
    converse = bodies["bedrock-converse"]["usage"]
    assert converse["cacheReadInputTokens"] == 1000 and converse["cacheWriteInputTokens"] == 200


@pytest.mark.parametrize(
    ("body", "words"),
    [
        (b"", "not JSON"),
        (b"\xff\xfe", "not JSON"),
        (b"[1, 2]", "a JSON list"),
        (b"null", "a JSON NoneType"),
        (b'{"choices": []}', "no choice 0"),
        (b"[" * 5000 + b"]" * 5000, "not JSON"),
        (b"data: {}\n\n", "not JSON"),
    ],
)
def test_a_body_that_is_no_answer_is_a_problem_in_words(body: bytes, words: str) -> None:
    events, problem = read_answer("openai-chat", body)
    assert events == [] and problem is not None and words in problem


def test_an_oversized_body_is_not_read() -> None:
    events, problem = read_answer("anthropic", b" " * (MAX_BODY + 1))
    assert events == [] and problem is not None and "passed" in problem


def test_calls_are_capped_and_a_call_s_bad_arguments_are_invalid_not_raised() -> None:
    calls = [
        {"id": f"c{i}", "type": "function", "function": {"name": "f", "arguments": "{"}}
        for i in range(MAX_ITEMS * 2)
    ]
    body = json.dumps({"choices": [{"index": 0, "message": {"tool_calls": calls}}]})
    events, problem = read_answer("openai-chat", body.encode())
    assert problem is None
    result = unary_result("openai-chat", events)
    assert len(result.tool_calls) == MAX_ITEMS
    assert all(c.arguments is None for c in result.tool_calls)
    assert not result.executable


_ODD: list[Any] = [None, True, 0, -1, 1.5, "", "x", [], {}, [None], {"": None}, 2**70]


def _mutations(value: Any, rng: random.Random) -> Any:
    """``value`` with some of its members replaced by values of the wrong type."""
    if isinstance(value, dict):
        return {
            k: rng.choice(_ODD) if rng.random() < 0.2 else _mutations(v, rng)
            for k, v in value.items()
        }
    if isinstance(value, list):
        return [rng.choice(_ODD) if rng.random() < 0.2 else _mutations(v, rng) for v in value]
    return value


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_reading_never_raises_whatever_the_body(protocol: str) -> None:
    rng = random.Random(f"unary/{protocol}")
    bodies = [json.loads(render_json(CASES[n], protocol, model="m")[2]) for n in UNARY_CASES]
    for n in range(400):
        value = _mutations(rng.choice(bodies), rng)
        raw = json.dumps(value).encode()
        if n % 4 == 0:  # cut anywhere
            raw = raw[: rng.randrange(len(raw) + 1)]
        events, problem = read_answer(protocol, raw)
        assert (events == []) == (problem is not None)
        result = unary_result(protocol, events)
        if problem is None:
            assert result.status in ("completed", "truncated", "error")


def test_an_aws_type_matches_in_either_case_of_its_first_letter_only() -> None:
    assert _same_type("ThrottlingException", "throttlingException")
    assert _same_type("throttlingException", "throttlingException")
    assert not _same_type("Overloaded_error", "overloaded_error")
    assert not _same_type(None, "throttlingException")
    assert not _same_type("ValidationException", "throttlingException")


def test_a_whole_answer_that_trickles_in_is_cut_by_the_kit_s_total_limit() -> None:
    """Each read comes within the read timeout, but the body never ends: the
    whole answer's limit cuts it (the kit's limit, not a gateway verdict)."""

    async def trickle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await reader.readuntil(b"\r\n\r\n")
        writer.write(b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\n\r\n{")
        with contextlib.suppress(ConnectionError):
            for _ in range(100):
                writer.write(b" ")
                await writer.drain()
                await asyncio.sleep(0.05)
        writer.close()

    async def go() -> Observation:
        server = await asyncio.start_server(trickle, "127.0.0.1", 0)
        port = server.sockets[0].getsockname()[1]
        url, headers, body = client_request(
            "anthropic",
            CASES["short-text"],
            "sw-short-text.unary",
            f"http://127.0.0.1:{port}",
            stream=False,
        )
        started = time.monotonic()
        obs = await observe(
            "anthropic", url, headers, body, read_timeout=2.0, total_timeout=0.5, unary=True
        )
        assert time.monotonic() - started < 2.0
        server.close()
        return obs

    obs = asyncio.run(go())
    assert obs.kit_limit == "total_timeout" and obs.result is None
    assert obs.failure is not None and "still arriving" in obs.failure
