"""The pipelines on streams shaped the way the providers send them today.

The gate's first workloads of each protocol are its dominant message repeated
(one text delta after another); real streams mix in what those never show.
These workloads, generated here (``workloads.py`` for the Gemini body), each
follow one provider's documented shape, checked 2026-12-02:

* ``gemini-tools`` (``workloads.py``): Gemini 2.5 ``alt=sse``, CRLF,
  Google's JSON spacing, a ``usageMetadata`` snapshot that changes on every
  chunk (with ``promptTokensDetails`` and ``thoughtsTokenCount``), a
  ``functionCall`` part with a long ``thoughtSignature`` near the end, a last
  chunk of an empty text part and ``finishReason``;
* ``gemini-json-tools``: the same chunks as the JSON array of
  ``streamGenerateContent`` without ``alt=sse``, elements separated by
  ``\\r\\n,\\r\\n`` as the API separates them;
* ``anthropic-thinking-tools``: an Anthropic Messages answer with extended
  thinking and tools (streaming reference; the thinking deltas' sizes as in
  ``fixtures/providers/anthropic/prism-thinking.sse``): ``message_start``
  with prompt-cache usage, 12,000 ``thinking_delta`` events closed by a
  ``signature_delta``, a text block, four ``tool_use`` blocks, a ``ping``
  every 1,000 events, ``message_delta`` with cumulative usage;
* ``openai-realtime-voice``: an OpenAI Realtime voice session (API reference
  "Realtime server events", GA event names): the user's turn (buffer and
  conversation events, its transcription), then an audio answer, base64
  ``response.output_audio.delta`` events of 2,000 to 8,000 characters (1 to 5
  after each transcript delta, as the audio trails the transcript) with
  their ``response.output_audio_transcript.delta`` events, then in the same
  response a function call whose arguments stream as deltas, ``response.done``
  with usage details and ``rate_limits.updated``; then the call's output
  echoed (``conversation.item.added`` / ``.done``) and a second response, a
  text answer (``response.output_text.delta``);
* ``gemini-live-tools``: a Gemini Live session (API reference "Live API -
  WebSockets API reference") as the server sends it, JSON in binary frames
  (``bytes``): ``setupComplete``, a text turn (``serverContent.modelTurn``
  parts, ``generationComplete``, ``turnComplete`` with ``usageMetadata``), a
  tool-call turn (``toolCall``), then the answer after the tool response;
* ``gemini-live-audio``: a native-audio Live session: the user's speech
  transcribed, each answer as ``inlineData`` audio parts (24 kHz PCM, base64
  of 2,000 to 8,000 characters) after each piece of its
  ``outputTranscription``, ``turnComplete`` with usage by modality, a tool
  call between the two answers.

Implementations, in the same run:

* ``streamwire``: ``sw.stream(protocol)``, ``feed`` per 4 KiB chunk (or
  ``feed_message`` per message), ``close``, its results;
* ``anthropic-sdk`` (``anthropic-thinking-tools``): what
  ``client.messages.stream(...)`` does up to its final message
  (``bench_pipeline_anthropic.anthropic_sdk_snapshot``);
* ``openai-sdk`` (Realtime): the SDK's per-message work, ``json.loads`` and
  ``construct_type_unchecked`` of ``RealtimeServerEvent``, plus a plain
  accumulator over the typed events (the SDK has none);
* ``google-genai`` (``gemini-tools``, the two Live sessions; google-genai
  3.6.1, checked 2026-12-06): the SDK's per-chunk work, its own functions
  step by step, plus a plain accumulator over its typed objects (it has
  none). SSE: what ``client.models.generate_content_stream`` does with each
  event (``bench_pipeline_gemini.google_genai_responses``: its line reader
  over the chunks, ``json.loads``, ``json.dumps`` and ``json.loads`` again,
  ``_GenerateContentResponse_from_mldev``,
  ``GenerateContentResponse._from_response``, ``StreamContinuation.observe``),
  then each response's text parts joined, its ``function_call`` parts' name
  and ``args`` collected, the last ``finish_reason`` and ``usage_metadata``
  (output tokens: ``candidates_token_count`` plus ``thoughts_token_count``);
  the ``thoughtSignature`` arrives as ``Part.thought_signature`` (decoded to
  bytes), which the output does not compare. Live: what
  ``AsyncSession.receive`` does with each message
  (``bench_pipeline_websocket.google_genai_live_messages``: ``json.loads``,
  ``_LiveServerMessage_from_mldev``, ``LiveServerMessage._from_response``;
  ``_is_interaction_complete`` for the turn's end), then per turn the
  ``model_turn`` text parts and ``output_transcription`` texts joined,
  ``tool_call.function_calls`` collected (a tool-call message ends its
  answer, as for the naive reader) and the
  turn's ``usage_metadata``. ``test_google_genai_live_is_the_sdks_path``
  checks the Live steps against the SDK's own ``receive`` over a stub socket
  (``bench_pipeline_gemini.py`` checks the SSE ones). The JSON array
  (``gemini-json-tools``) has no SDK peer: google-genai never reads it;
* ``naive``: the speed reference, ``orjson.loads`` per event (after a
  ``bytes.find`` splitter, or the array's separators) and a plain-dict walk
  that collects what the check compares: fast, and not correct (no line
  ending rules, no statuses, no checks, no caps).

Each run's output (text, calls, finish, usage; per response for a session;
the audio's decoded size for Realtime) is checked against what the generator
put in; streamwire must be correct. Run once each as tests: ``pytest
benches/bench_pipeline_shapes.py``; print the ratios with ``python
benches/bench_pipeline_shapes.py [rounds]``.
"""

from __future__ import annotations

import base64
import json
import random
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import cache, partial
from typing import Any

import orjson
import pytest

import streamwire as sw
from bench_pipeline_anthropic import anthropic_sdk_snapshot
from bench_pipeline_gemini import google_genai_responses
from bench_pipeline_websocket import google_genai_live_messages
from pipeline import CHUNK, final_usage, session_after, stream_result
from rounds import best_times
from workloads import chunks_of, cut, gemini_tools_facts, tool_arguments, workload

SEED = 20261202

#: A call as the checks compare it: ``(name, parsed arguments)``.
Call = tuple[str, Any]
#: One response (or turn): ``(text, calls, (input tokens, output tokens))``.
Answer = tuple[str, tuple[Call, ...], tuple[int | None, int | None]]


@dataclass(frozen=True)
class Load:
    """A workload: its input (byte chunks or messages) and the output it must give."""

    name: str
    protocol: str
    #: Byte chunks for an HTTP protocol, messages for a WebSocket one.
    units: tuple[Any, ...]
    expected: Any
    #: Wire events (SSE events, array elements, messages): the throughput's unit.
    events: int
    #: The largest event or message, in bytes (peak memory's unit).
    largest: int


def _dump(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


# --- Gemini ---------------------------------------------------------------------------------

#: ``(text, calls, finish reason, (input, output, total tokens))``
GeminiOutput = tuple[str, tuple[Call, ...], str | None, tuple[int | None, ...]]


def _gemini_expected() -> GeminiOutput:
    facts = gemini_tools_facts()
    return facts.text, facts.calls, facts.finish_reason, facts.usage


def _gemini_load(name: str) -> Load:
    source = workload("gemini-tools")
    largest = max(len(d.encode()) for d in source.expected) + 16
    if name == "gemini-tools":
        wire = source.wire
        protocol = "gemini"
    else:
        wire = ("[" + "\r\n,\r\n".join(source.expected) + "]").encode()
        protocol = "gemini-json"
    return Load(
        name, protocol, chunks_of(wire, CHUNK), _gemini_expected(), len(source.expected), largest
    )


def _gemini_result(result: sw.StreamResult) -> GeminiOutput:
    usage = final_usage(result)
    calls = tuple((c.name or "", c.arguments) for c in result.tool_calls)
    assert all(c.executable for c in result.tool_calls)
    figures = (usage.input_tokens, usage.output_tokens, usage.total_tokens)
    return result.text, calls, result.provider_stop_reason, figures


def run_streamwire_http(protocol: str, chunks: Sequence[bytes]) -> GeminiOutput:
    return _gemini_result(stream_result(protocol, chunks))


def _gemini_walk(body: dict[str, Any], state: dict[str, Any]) -> None:
    for candidate in body.get("candidates") or ():
        for part in (candidate.get("content") or {}).get("parts") or ():
            if "text" in part:
                state["text"].append(part["text"])
            elif "functionCall" in part:
                call = part["functionCall"]
                state["calls"].append((call.get("name"), call.get("args")))
        state["finish"] = candidate.get("finishReason") or state["finish"]
    state["usage"] = body.get("usageMetadata") or state["usage"]


def _gemini_output(state: dict[str, Any]) -> GeminiOutput:
    usage = state["usage"]
    output = usage.get("candidatesTokenCount", 0) + usage.get("thoughtsTokenCount", 0)
    figures = (usage.get("promptTokenCount"), output, usage.get("totalTokenCount"))
    return "".join(state["text"]), tuple(state["calls"]), state["finish"], figures


def _gemini_state() -> dict[str, Any]:
    return {"text": [], "calls": [], "finish": None, "usage": {}}


def run_naive_sse(chunks: Sequence[bytes]) -> GeminiOutput:
    state = _gemini_state()
    buffer = b""
    for chunk in chunks:
        buffer += chunk
        start = 0
        while (end := buffer.find(b"\r\n\r\n", start)) >= 0:
            event = buffer[start:end]
            start = end + 4
            if event.startswith(b"data: "):
                _gemini_walk(orjson.loads(event[6:]), state)
        buffer = buffer[start:]
    return _gemini_output(state)


def run_naive_json(chunks: Sequence[bytes]) -> GeminiOutput:
    """The array split at its ``\\r\\n,\\r\\n`` separators (which the elements,
    being compact JSON, never hold), each element ``orjson.loads``-ed."""
    state = _gemini_state()
    buffer = b""
    first = True
    for chunk in chunks:
        buffer += chunk
        if first and buffer:
            buffer = buffer[1:]  # the "["
            first = False
        start = 0
        while (end := buffer.find(b"\r\n,\r\n", start)) >= 0:
            _gemini_walk(orjson.loads(buffer[start:end]), state)
            start = end + 5
        buffer = buffer[start:]
    if buffer.endswith(b"]"):
        _gemini_walk(orjson.loads(buffer[:-1]), state)
    return _gemini_output(state)


def run_google_genai_sse(chunks: Sequence[bytes]) -> GeminiOutput:
    text: list[str] = []
    calls: list[Call] = []
    finish = None
    usage: Any = None
    for response in google_genai_responses(chunks):
        for candidate in response.candidates or ():
            for part in (candidate.content.parts if candidate.content else None) or ():
                if part.text is not None:
                    text.append(part.text)
                elif part.function_call is not None:
                    calls.append((part.function_call.name or "", part.function_call.args))
            finish = candidate.finish_reason or finish
        usage = response.usage_metadata or usage
    output = (usage.candidates_token_count or 0) + (usage.thoughts_token_count or 0)
    figures = (usage.prompt_token_count, output, usage.total_token_count)
    return "".join(text), tuple(calls), None if finish is None else finish.value, figures


# --- OpenAI Realtime ------------------------------------------------------------------------

#: ``(answers, decoded audio bytes)``
RealtimeOutput = tuple[tuple[Answer, ...], int]

_ALNUM = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
_WORDS = (" the", " weather", " in", " Paris", " is", " mild", ",", " about", " 18", " degrees")
_WORDS += (" and", " sunny", ".", " I", " can", " check", " tomorrow", " too", " for", " you")


def _realtime() -> tuple[list[str], RealtimeOutput]:
    rng = random.Random(SEED)
    counter = iter(range(10**9))

    def eid() -> str:
        return "event_" + "".join(rng.choices(_ALNUM, k=21))

    def ident(prefix: str) -> str:
        return prefix + "_" + "".join(rng.choices(_ALNUM, k=21))

    sid, r1, r2 = ident("sess"), ident("resp"), ident("resp")
    user_item, answer_item, call_item, text_item = (ident("item") for _ in range(4))
    call_id = "call_" + "".join(rng.choices(_ALNUM, k=16))
    pool = base64.b64encode(rng.randbytes(6000 * 4)).decode()
    out: list[dict[str, Any]] = []

    def event(kind: str, **fields: Any) -> None:
        next(counter)
        out.append({"type": kind, "event_id": eid(), **fields})

    session = {
        "type": "realtime",
        "object": "realtime.session",
        "id": sid,
        "model": "gpt-realtime-2025-08-28",
        "output_modalities": ["audio"],
        "instructions": "You are a helpful voice assistant.",
        "tools": [{"type": "function", "name": "get_weather", "parameters": {"type": "object"}}],
        "tool_choice": "auto",
        "max_output_tokens": "inf",
        "tracing": None,
        "prompt": None,
        "expires_at": 1764720000,
        "audio": {
            "input": {
                "format": {"type": "audio/pcm", "rate": 24000},
                "transcription": {"model": "gpt-4o-mini-transcribe"},
                "noise_reduction": None,
                "turn_detection": {"type": "server_vad", "threshold": 0.5},
            },
            "output": {"format": {"type": "audio/pcm", "rate": 24000}, "voice": "marin"},
        },
        "include": None,
    }
    event("session.created", session=session)
    event("session.updated", session=session)
    event("input_audio_buffer.speech_started", audio_start_ms=1120, item_id=user_item)
    event("input_audio_buffer.speech_stopped", audio_end_ms=3480, item_id=user_item)
    event("input_audio_buffer.committed", previous_item_id=None, item_id=user_item)
    user = {
        "id": user_item,
        "type": "message",
        "status": "completed",
        "role": "user",
        "content": [{"type": "input_audio", "transcript": None}],
    }
    event("conversation.item.added", previous_item_id=None, item=user)
    event("conversation.item.done", previous_item_id=None, item=user)

    def response(rid: str, status: str, output: list[Any], usage: Any) -> dict[str, Any]:
        return {
            "object": "realtime.response",
            "id": rid,
            "status": status,
            "status_details": None,
            "output": output,
            "conversation_id": "conv_" + sid[5:],
            "output_modalities": ["audio"] if rid == r1 else ["text"],
            "max_output_tokens": "inf",
            "audio": {"output": {"format": {"type": "audio/pcm", "rate": 24000}, "voice": "marin"}},
            "usage": usage,
            "metadata": None,
        }

    event("response.created", response=response(r1, "in_progress", [], None))
    heard = ["What's", " the", " weather", " in", " Paris", "?"]
    for piece in heard:
        event(
            "conversation.item.input_audio_transcription.delta",
            item_id=user_item,
            content_index=0,
            delta=piece,
        )
    event(
        "conversation.item.input_audio_transcription.completed",
        item_id=user_item,
        content_index=0,
        transcript="".join(heard),
        usage={"type": "tokens", "total_tokens": 31, "input_tokens": 24, "output_tokens": 7},
    )
    message = {
        "id": answer_item,
        "type": "message",
        "status": "in_progress",
        "role": "assistant",
        "content": [],
    }
    event("response.output_item.added", response_id=r1, output_index=0, item=message)
    event("conversation.item.added", previous_item_id=user_item, item=message)
    at = {"response_id": r1, "item_id": answer_item, "output_index": 0, "content_index": 0}
    event("response.content_part.added", **at, part={"type": "audio", "transcript": ""})
    transcript: list[str] = []
    audio_bytes = 0
    for _ in range(3000):
        piece = rng.choice(_WORDS)
        transcript.append(piece)
        event("response.output_audio_transcript.delta", **at, delta=piece)
        for _ in range(rng.randint(1, 5)):
            size = rng.randrange(2000, 8001, 4)
            start = rng.randrange(0, len(pool) - size, 4)
            delta = pool[start : start + size]
            audio_bytes += len(base64.b64decode(delta))
            event("response.output_audio.delta", **at, delta=delta)
    said = "".join(transcript)
    event("response.output_audio.done", **at)
    event("response.output_audio_transcript.done", **at, transcript=said)
    event("response.content_part.done", **at, part={"type": "audio", "transcript": said})
    done_message = {
        **message,
        "status": "completed",
        "content": [{"type": "output_audio", "transcript": said}],
    }
    event("response.output_item.done", response_id=r1, output_index=0, item=done_message)
    event("conversation.item.done", previous_item_id=user_item, item=done_message)
    arguments = _dump({"location": "Paris, France", "unit": "celsius", "days": 3, "hourly": True})
    call = {
        "id": call_item,
        "type": "function_call",
        "status": "in_progress",
        "name": "get_weather",
        "call_id": call_id,
        "arguments": "",
    }
    event("response.output_item.added", response_id=r1, output_index=1, item=call)
    event("conversation.item.added", previous_item_id=answer_item, item=call)
    where = {"response_id": r1, "item_id": call_item, "output_index": 1, "call_id": call_id}
    for i in range(0, len(arguments), 3):
        event("response.function_call_arguments.delta", **where, delta=arguments[i : i + 3])
    event("response.function_call_arguments.done", **where, name="get_weather", arguments=arguments)
    done_call = {**call, "status": "completed", "arguments": arguments}
    event("response.output_item.done", response_id=r1, output_index=1, item=done_call)
    event("conversation.item.done", previous_item_id=answer_item, item=done_call)
    usage1 = {
        "total_tokens": 6342,
        "input_tokens": 1412,
        "output_tokens": 4930,
        "input_token_details": {
            "text_tokens": 1380,
            "audio_tokens": 32,
            "image_tokens": 0,
            "cached_tokens": 1280,
            "cached_tokens_details": {"text_tokens": 1280, "audio_tokens": 0, "image_tokens": 0},
        },
        "output_token_details": {"text_tokens": 812, "audio_tokens": 4118},
    }
    event("response.done", response=response(r1, "completed", [done_message, done_call], usage1))

    def limits(remaining: int) -> None:
        rate_limits = [
            {"name": "requests", "limit": 5000, "remaining": 4999, "reset_seconds": 0.012},
            {"name": "tokens", "limit": 800000, "remaining": remaining, "reset_seconds": 0.47},
        ]
        event("rate_limits.updated", rate_limits=rate_limits)

    limits(793658)
    result = {
        "id": ident("item"),
        "type": "function_call_output",
        "call_id": call_id,
        "output": '{"forecast":["sunny","cloudy","rain"],"high_c":[18,17,14]}',
    }
    event("conversation.item.added", previous_item_id=call_item, item=result)
    event("conversation.item.done", previous_item_id=call_item, item=result)
    event("response.created", response=response(r2, "in_progress", [], None))
    text_message = {**message, "id": text_item}
    event("response.output_item.added", response_id=r2, output_index=0, item=text_message)
    event("conversation.item.added", previous_item_id=result["id"], item=text_message)
    at = {"response_id": r2, "item_id": text_item, "output_index": 0, "content_index": 0}
    event("response.content_part.added", **at, part={"type": "text", "text": ""})
    written: list[str] = []
    for _ in range(4000):
        piece = rng.choice(_WORDS)
        written.append(piece)
        event("response.output_text.delta", **at, delta=piece)
    text = "".join(written)
    event("response.output_text.done", **at, text=text)
    event("response.content_part.done", **at, part={"type": "text", "text": text})
    done_text = {**text_message, "status": "completed", "content": [{"type": "text", "text": text}]}
    event("response.output_item.done", response_id=r2, output_index=0, item=done_text)
    event("conversation.item.done", previous_item_id=result["id"], item=done_text)
    usage2 = {
        "total_tokens": 7821,
        "input_tokens": 6455,
        "output_tokens": 1366,
        "input_token_details": {
            "text_tokens": 2305,
            "audio_tokens": 4150,
            "image_tokens": 0,
            "cached_tokens": 6272,
            "cached_tokens_details": {"text_tokens": 2176, "audio_tokens": 4096, "image_tokens": 0},
        },
        "output_token_details": {"text_tokens": 1366, "audio_tokens": 0},
    }
    event("response.done", response=response(r2, "completed", [done_text], usage2))
    limits(785837)
    answers = (
        (said, (("get_weather", json.loads(arguments)),), (1412, 4930)),
        (text, (), (6455, 1366)),
    )
    return [_dump(m) for m in out], (answers, audio_bytes)


def _session_answers(session: Any) -> tuple[Answer, ...]:
    answers = []
    for result in session.results:
        assert result.status == "completed", result.status
        usage = result.usage
        figures = (None, None) if usage is None else (usage.input_tokens, usage.output_tokens)
        calls = tuple((c.name or "", c.arguments) for c in result.tool_calls)
        answers.append((result.text, calls, figures))
    return tuple(answers)


def run_streamwire_realtime(messages: Sequence[str]) -> RealtimeOutput:
    session = session_after("openai-realtime", messages)
    audio = sum(r.provider_metrics.get("audio_bytes", 0) for r in session.results)
    return _session_answers(session), audio


def _b64_size(text: str) -> int:
    return len(text) * 3 // 4 - (2 if text.endswith("==") else text.endswith("="))


def run_naive_realtime(messages: Sequence[str]) -> RealtimeOutput:
    answers: dict[str, dict[str, Any]] = {}
    audio = 0
    for message in messages:
        event = orjson.loads(message)
        kind = event.get("type")
        if kind == "response.output_audio.delta":
            audio += _b64_size(event["delta"])
        elif kind in ("response.output_audio_transcript.delta", "response.output_text.delta"):
            answers[event["response_id"]]["text"].append(event["delta"])
        elif kind == "response.function_call_arguments.delta":
            answers[event["response_id"]]["calls"][event["item_id"]][1].append(event["delta"])
        elif kind == "response.output_item.added":
            item = event["item"]
            if item.get("type") == "function_call":
                calls = answers[event["response_id"]]["calls"]
                calls[item["id"]] = (item.get("name"), [])
        elif kind == "response.created":
            answers[event["response"]["id"]] = {"text": [], "calls": {}, "usage": {}}
        elif kind == "response.done":
            response = event["response"]
            answers[response["id"]]["usage"] = response.get("usage") or {}
    return tuple(
        (
            "".join(a["text"]),
            tuple((name, orjson.loads("".join(args))) for name, args in a["calls"].values()),
            (a["usage"].get("input_tokens"), a["usage"].get("output_tokens")),
        )
        for a in answers.values()
    ), audio


def run_openai_sdk_realtime(messages: Sequence[str]) -> RealtimeOutput:
    from openai._models import construct_type_unchecked
    from openai.types.realtime import RealtimeServerEvent

    answers: dict[str, dict[str, Any]] = {}
    audio = 0
    for message in messages:
        event: Any = construct_type_unchecked(
            value=json.loads(message),
            type_=RealtimeServerEvent,  # type: ignore[arg-type]
        )
        kind = event.type
        if kind == "response.output_audio.delta":
            audio += _b64_size(event.delta)
        elif kind in ("response.output_audio_transcript.delta", "response.output_text.delta"):
            answers[event.response_id]["text"].append(event.delta)
        elif kind == "response.function_call_arguments.delta":
            answers[event.response_id]["calls"][event.item_id][1].append(event.delta)
        elif kind == "response.output_item.added" and event.item.type == "function_call":
            answers[event.response_id]["calls"][event.item.id] = (event.item.name, [])
        elif kind == "response.created":
            answers[event.response.id] = {"text": [], "calls": {}, "usage": None}
        elif kind == "response.done":
            answers[event.response.id]["usage"] = event.response.usage
    out = []
    for a in answers.values():
        usage = a["usage"]
        calls = tuple((name, json.loads("".join(args))) for name, args in a["calls"].values())
        out.append(("".join(a["text"]), calls, (usage.input_tokens, usage.output_tokens)))
    return tuple(out), audio


# --- Anthropic --------------------------------------------------------------------------

#: ``(text, reasoning, signatures, calls as (id, name, input), (input, output,
#: cache read, cache write))``: Anthropic's input figure leaves the cache out.
AnthropicOutput = tuple[
    str, str, tuple[str, ...], tuple[tuple[str, str, Any], ...], tuple[int, ...]
]

#: What the Anthropic workload's message costs: input not cached, cache read
#: and cache written (the prompt cache's fields, as the API reports them).
_ANTHROPIC_USAGE = {"input_tokens": 38, "cache_read_input_tokens": 14_336}
_ANTHROPIC_USAGE |= {"cache_creation_input_tokens": 2_113}


def _anthropic() -> tuple[bytes, int, AnthropicOutput]:
    """An Anthropic Messages answer with extended thinking and tools, as the API
    streams it: ``message_start`` with prompt-cache usage (``cache_creation``
    split by TTL, ``service_tier``), a thinking block of 12,000
    ``thinking_delta`` events closed by a ``signature_delta``, a text block,
    four ``tool_use`` blocks (each input's first fragment empty), a ``ping``
    every 1,000 events as a long answer carries them, ``message_delta`` with
    cumulative usage, ``message_stop``."""
    rng = random.Random(SEED + 2)
    frames: list[bytes] = []

    def send(obj: dict[str, Any], spaced: bool = False) -> None:
        data = json.dumps(obj) if spaced else _dump(obj)
        frames.append(f"event: {obj['type']}\ndata: {data}\n\n".encode())
        if len(frames) % 1000 == 0:
            frames.append(b'event: ping\ndata: {"type": "ping"}\n\n')

    def delta(index: int, body: dict[str, Any]) -> None:
        send({"type": "content_block_delta", "index": index, "delta": body})

    def words(low: int, high: int) -> str:
        return "".join(rng.choice(_WORDS) for _ in range(rng.randint(low, high)))

    usage = {**_ANTHROPIC_USAGE, "output_tokens": 4, "service_tier": "standard"}
    usage["cache_creation"] = {"ephemeral_5m_input_tokens": 2_113, "ephemeral_1h_input_tokens": 0}
    message = {
        "id": "msg_01ShapedThinkingToolsBench",
        "type": "message",
        "role": "assistant",
        "model": "claude-sonnet-4-5-20250929",
        "content": [],
        "stop_reason": None,
        "stop_sequence": None,
        "usage": usage,
    }
    send({"type": "message_start", "message": message})
    thinking_block = {"type": "thinking", "thinking": "", "signature": ""}
    send({"type": "content_block_start", "index": 0, "content_block": thinking_block})
    frames.append(b'event: ping\ndata: {"type": "ping"}\n\n')
    thinking = [words(4, 14) for _ in range(12_000)]
    for piece in thinking:
        delta(0, {"type": "thinking_delta", "thinking": piece})
    signature = base64.b64encode(rng.randbytes(420)).decode()
    delta(0, {"type": "signature_delta", "signature": signature})
    send({"type": "content_block_stop", "index": 0})
    send({"type": "content_block_start", "index": 1, "content_block": {"type": "text", "text": ""}})
    text = [words(1, 6) for _ in range(4_000)]
    for piece in text:
        delta(1, {"type": "text_delta", "text": piece})
    send({"type": "content_block_stop", "index": 1})
    calls = []
    for i in range(4):
        call_id, name, index = f"toolu_01Shaped{i:02d}", f"search_{i % 2}", i + 2
        args = tool_arguments(rng, i)
        block = {"type": "tool_use", "id": call_id, "name": name, "input": {}}
        send({"type": "content_block_start", "index": index, "content_block": block})
        delta(index, {"type": "input_json_delta", "partial_json": ""})
        for piece in cut(rng, json.dumps(args, ensure_ascii=False), 900):
            delta(index, {"type": "input_json_delta", "partial_json": piece})
        send({"type": "content_block_stop", "index": index})
        calls.append((call_id, name, args))
    end = {"stop_reason": "tool_use", "stop_sequence": None}
    output = 9_213
    send(
        {
            "type": "message_delta",
            "delta": end,
            "usage": {**_ANTHROPIC_USAGE, "output_tokens": output},
        }
    )
    send({"type": "message_stop"})
    figures = (_ANTHROPIC_USAGE["input_tokens"], output, 14_336, 2_113)
    expected = ("".join(text), "".join(thinking), (signature,), tuple(calls), figures)
    return b"".join(frames), len(frames), expected


def run_streamwire_anthropic(chunks: Sequence[bytes]) -> AnthropicOutput:
    result = stream_result("anthropic", chunks)
    usage = final_usage(result)
    calls = tuple((c.id or "", c.name or "", c.arguments) for c in result.tool_calls)
    assert all(c.executable for c in result.tool_calls)
    figures = (usage.input_tokens, usage.output_tokens, usage.cache_read_tokens)
    figures += (usage.cache_creation_tokens,)
    choice = result.choices[0]
    return result.text, result.reasoning, choice.reasoning_signatures, calls, figures  # type: ignore[return-value]


def _anthropic_figures(usage: Any) -> tuple[int, ...]:
    read, write = usage["cache_read_input_tokens"], usage["cache_creation_input_tokens"]
    return (usage["input_tokens"], usage["output_tokens"], read, write)


def run_naive_anthropic(chunks: Sequence[bytes]) -> AnthropicOutput:
    buffer = b""
    blocks: dict[int, dict[str, Any]] = {}
    usage: dict[str, Any] = {}
    for chunk in chunks:
        buffer += chunk
        start = 0
        while (end := buffer.find(b"\n\n", start)) >= 0:
            event = buffer[start:end]
            start = end + 2
            at = event.find(b"data: ")
            if at < 0:
                continue
            obj = orjson.loads(event[at + 6 :])
            kind = obj["type"]
            if kind == "content_block_delta":
                delta = obj["delta"]
                block = blocks[obj["index"]]
                step = delta["type"]
                if step == "text_delta":
                    block["parts"].append(delta["text"])
                elif step == "thinking_delta":
                    block["parts"].append(delta["thinking"])
                elif step == "input_json_delta":
                    block["parts"].append(delta["partial_json"])
                elif step == "signature_delta":
                    block["signature"] = delta["signature"]
            elif kind == "content_block_start":
                blocks[obj["index"]] = {**obj["content_block"], "parts": []}
            elif kind == "message_start":
                usage.update(obj["message"]["usage"])
            elif kind == "message_delta":
                usage.update(obj["usage"])
        buffer = buffer[start:]

    def joined(kind: str) -> str:
        return "".join("".join(b["parts"]) for b in blocks.values() if b["type"] == kind)

    signatures = tuple(b["signature"] for b in blocks.values() if b["type"] == "thinking")
    calls = tuple(
        (b["id"], b["name"], orjson.loads("".join(b["parts"]) or "{}"))
        for b in blocks.values()
        if b["type"] == "tool_use"
    )
    return joined("text"), joined("thinking"), signatures, calls, _anthropic_figures(usage)


def run_anthropic_sdk(chunks: Sequence[bytes]) -> AnthropicOutput:
    """``client.messages.stream(...)`` up to its final message, step by step
    (``bench_pipeline_anthropic.anthropic_sdk_snapshot``)."""
    snapshot = anthropic_sdk_snapshot(chunks)
    content = snapshot.content

    def joined(kind: str, field: str) -> str:
        return "".join(getattr(b, field) for b in content if b.type == kind)

    signatures = tuple(b.signature for b in content if b.type == "thinking")
    calls = tuple((b.id, b.name, b.input) for b in content if b.type == "tool_use")
    usage = snapshot.usage.model_dump()
    return (
        joined("text", "text"),
        joined("thinking", "thinking"),
        signatures,
        calls,
        _anthropic_figures(usage),
    )


# --- Gemini Live ----------------------------------------------------------------------------


def _live() -> tuple[list[bytes], tuple[Answer, ...]]:
    rng = random.Random(SEED + 1)
    out: list[dict[str, Any]] = [{"setupComplete": {}}]
    answers: list[Answer] = []

    def text_turn(parts: int, prompt: int) -> None:
        pieces = [
            "".join(rng.choice(_WORDS) for _ in range(rng.randint(1, 6))) for _ in range(parts)
        ]
        out.extend({"serverContent": {"modelTurn": {"parts": [{"text": p}]}}} for p in pieces)
        out.append({"serverContent": {"generationComplete": True}})
        response = rng.randint(parts, 3 * parts)
        usage = {
            "promptTokenCount": prompt,
            "responseTokenCount": response,
            "totalTokenCount": prompt + response,
            "promptTokensDetails": [{"modality": "TEXT", "tokenCount": prompt}],
            "responseTokensDetails": [{"modality": "TEXT", "tokenCount": response}],
        }
        out.append({"serverContent": {"turnComplete": True}, "usageMetadata": usage})
        answers.append(("".join(pieces), (), (prompt, response)))

    text_turn(8000, 412)
    args = {"location": "Paris, France", "unit": "celsius", "days": 3}
    call_id = f"function-call-{rng.randrange(10**18)}"
    call = {"id": call_id, "name": "get_weather", "args": args}
    out.append({"toolCall": {"functionCalls": [call]}})
    answers.append(("", (("get_weather", args),), (None, None)))
    text_turn(8000, 8530)
    return [_dump(m).encode() for m in out], tuple(answers)


def _live_audio() -> tuple[list[bytes], tuple[Answer, ...]]:
    """A native-audio Live session as the server sends it: the user's speech
    transcribed (``inputTranscription``), then each answer as audio
    (``modelTurn`` parts of ``inlineData``, 24 kHz PCM in base64 of 2,000 to
    8,000 characters, 1 to 3 after each transcript piece) and its transcript
    (``outputTranscription``), ``generationComplete``, ``turnComplete`` with
    usage by modality; a tool call between the two answers."""
    rng = random.Random(SEED + 3)
    out: list[dict[str, Any]] = [{"setupComplete": {}}]
    answers: list[Answer] = []
    mime = "audio/pcm;rate=24000"

    def answer(pieces: int, prompt: int) -> None:
        heard = "".join(rng.choice(_WORDS) for _ in range(12))
        out.append({"serverContent": {"inputTranscription": {"text": heard}}})
        said = []
        for _ in range(pieces):
            piece = "".join(rng.choice(_WORDS) for _ in range(rng.randint(1, 3)))
            said.append(piece)
            out.append({"serverContent": {"outputTranscription": {"text": piece}}})
            for _ in range(rng.randint(1, 3)):
                audio = base64.b64encode(rng.randbytes(rng.randint(1500, 6000))).decode()
                inline = {"inlineData": {"mimeType": mime, "data": audio}}
                out.append({"serverContent": {"modelTurn": {"parts": [inline]}}})
        out.append({"serverContent": {"generationComplete": True}})
        response = 25 * pieces
        usage = {
            "promptTokenCount": prompt,
            "responseTokenCount": response,
            "totalTokenCount": prompt + response,
            "promptTokensDetails": [{"modality": "AUDIO", "tokenCount": prompt}],
            "responseTokensDetails": [{"modality": "AUDIO", "tokenCount": response}],
        }
        out.append({"serverContent": {"turnComplete": True}, "usageMetadata": usage})
        answers.append(("".join(said), (), (prompt, response)))

    answer(1500, 318)
    args = {"location": "Lyon, France", "unit": "celsius"}
    call = {"id": f"function-call-{rng.randrange(10**18)}", "name": "get_weather", "args": args}
    out.append({"toolCall": {"functionCalls": [call]}})
    answers.append(("", (("get_weather", args),), (None, None)))
    answer(1500, 2907)
    return [_dump(m).encode() for m in out], tuple(answers)


def run_streamwire_live(messages: Sequence[bytes]) -> tuple[Answer, ...]:
    return _session_answers(session_after("gemini-live", messages))


def run_naive_live(messages: Sequence[bytes]) -> tuple[Answer, ...]:
    answers: list[Answer] = []
    text: list[str] = []
    calls: list[Call] = []
    for message in messages:
        event = orjson.loads(message)
        content = event.get("serverContent")
        if content is not None:
            for part in (content.get("modelTurn") or {}).get("parts") or ():
                text.append(part.get("text", ""))
            said = content.get("outputTranscription")
            if said is not None:
                text.append(said.get("text", ""))
        tool_call = event.get("toolCall")
        if tool_call is not None:
            calls = [(c["name"], c.get("args")) for c in tool_call.get("functionCalls") or ()]
            answers.append(("".join(text), tuple(calls), (None, None)))
            text, calls = [], []
        if content is not None and content.get("turnComplete"):
            meta = event.get("usageMetadata") or {}
            figures = (meta.get("promptTokenCount"), meta.get("responseTokenCount"))
            answers.append(("".join(text), tuple(calls), figures))
            text, calls = [], []
    return tuple(answers)


def run_google_genai_live(messages: Sequence[bytes]) -> tuple[Answer, ...]:
    from google.genai.live import _is_interaction_complete

    answers: list[Answer] = []
    text: list[str] = []
    calls: list[Call] = []
    for message in google_genai_live_messages(messages):
        content = message.server_content
        if content is not None and content.model_turn is not None:
            for part in content.model_turn.parts or ():
                if part.text is not None:
                    text.append(part.text)
        if content is not None and content.output_transcription is not None:
            text.append(content.output_transcription.text or "")
        if message.tool_call is not None:
            calls = [(c.name or "", c.args) for c in message.tool_call.function_calls or ()]
            answers.append(("".join(text), tuple(calls), (None, None)))
            text, calls = [], []
        if _is_interaction_complete(content):
            usage = message.usage_metadata
            figures = (
                (None, None)
                if usage is None
                else (usage.prompt_token_count, usage.response_token_count)
            )
            answers.append(("".join(text), tuple(calls), figures))
            text, calls = [], []
    return tuple(answers)


class _Socket:
    """A Live session's socket that answers ``recv`` with the given messages."""

    def __init__(self, messages: Sequence[bytes | str]) -> None:
        self._messages = iter(messages)

    async def recv(self, decode: bool = True) -> bytes | str:
        return next(self._messages)


def _sdk_live(messages: Sequence[bytes | str]) -> list[Any]:
    """What google-genai's own ``AsyncSession.receive`` yields, called once a
    turn, when its socket receives ``messages`` (the Gemini API's session)."""
    import asyncio
    from types import SimpleNamespace

    from google.genai.live import AsyncSession

    async def receive_all() -> list[Any]:
        client: Any = SimpleNamespace(vertexai=False)
        session = AsyncSession(api_client=client, websocket=_Socket(messages))  # type: ignore[arg-type]
        out: list[Any] = []
        while len(out) < len(messages):
            out += [message async for message in session.receive()]
        return out

    return asyncio.run(receive_all())


def test_google_genai_live_is_the_sdks_path() -> None:
    """The ``google-genai`` Live peer's steps yield what the SDK's session
    itself yields: on ``gemini-live-tools`` with most text messages left out
    (both turns' ends and the tool call kept), binary frames as the server
    sends them, and on the start and end of ``gemini-live`` (text frames)."""
    import bench_pipeline_websocket

    frames = load("gemini-live-tools").units
    kept = [
        f for i, f in enumerate(frames) if i < 30 or i > len(frames) - 30 or b"modelTurn" not in f
    ]
    texts, _ = bench_pipeline_websocket.load("gemini-live")
    for messages in (kept, [*texts[:30], *texts[-30:]]):
        assert list(google_genai_live_messages(messages)) == _sdk_live(messages)
    typed = list(google_genai_live_messages(kept))
    assert sum(m.tool_call is not None for m in typed) == 1
    assert sum(bool(m.server_content and m.server_content.turn_complete) for m in typed) == 2


# --- the workloads --------------------------------------------------------------------------


@cache
def load(name: str) -> Load:
    if name in ("gemini-tools", "gemini-json-tools"):
        return _gemini_load(name)
    if name == "openai-realtime-voice":
        messages, expected = _realtime()
        largest = max(len(m.encode()) for m in messages)
        return Load(name, "openai-realtime", tuple(messages), expected, len(messages), largest)
    if name == "anthropic-thinking-tools":
        wire, events, expected = _anthropic()
        largest = max(len(e) for e in wire.split(b"\n\n"))
        return Load(name, "anthropic", chunks_of(wire, CHUNK), expected, events, largest)
    if name in ("gemini-live-tools", "gemini-live-audio"):
        frames, answers = _live() if name == "gemini-live-tools" else _live_audio()
        largest = max(len(f) for f in frames)
        return Load(name, "gemini-live", tuple(frames), answers, len(frames), largest)
    raise KeyError(name)


WORKLOADS = (
    "gemini-tools",
    "gemini-json-tools",
    "anthropic-thinking-tools",
    "openai-realtime-voice",
    "gemini-live-tools",
    "gemini-live-audio",
)
#: Per workload: implementation -> run(units).
IMPLEMENTATIONS: dict[str, dict[str, Callable[[Sequence[Any]], Any]]] = {
    "gemini-tools": {
        "streamwire": partial(run_streamwire_http, "gemini"),
        "google-genai": run_google_genai_sse,
        "naive": run_naive_sse,
    },
    "gemini-json-tools": {
        "streamwire": partial(run_streamwire_http, "gemini-json"),
        "naive": run_naive_json,
    },
    "anthropic-thinking-tools": {
        "streamwire": run_streamwire_anthropic,
        "anthropic-sdk": run_anthropic_sdk,
        "naive": run_naive_anthropic,
    },
    "openai-realtime-voice": {
        "streamwire": run_streamwire_realtime,
        "openai-sdk": run_openai_sdk_realtime,
        "naive": run_naive_realtime,
    },
    "gemini-live-tools": {
        "streamwire": run_streamwire_live,
        "google-genai": run_google_genai_live,
        "naive": run_naive_live,
    },
    "gemini-live-audio": {
        "streamwire": run_streamwire_live,
        "google-genai": run_google_genai_live,
        "naive": run_naive_live,
    },
}


@pytest.mark.parametrize(
    ("workload_name", "impl_name"),
    [(w, i) for w in WORKLOADS for i in IMPLEMENTATIONS[w]],
)
def test_pipeline_shapes(benchmark: Any, workload_name: str, impl_name: str) -> None:
    data = load(workload_name)
    benchmark.group = f"pipeline/{workload_name}"
    output = benchmark(IMPLEMENTATIONS[workload_name][impl_name], data.units)
    correct = output == data.expected
    benchmark.extra_info.update(
        implementation=impl_name, workload=workload_name, events=data.events, correct=correct
    )
    # Every implementation here reads these workloads right (the naive ones
    # only because they hold nothing a naive reader gets wrong).
    assert correct, f"{impl_name} got {workload_name} wrong"


def main(argv: list[str]) -> None:
    """Prints events/s per implementation and streamwire's ratio to each."""
    rounds = int(argv[0]) if argv else 5
    names = [a for a in argv[1:] if a in WORKLOADS] or list(WORKLOADS)
    for name in names:
        data = load(name)
        impls = IMPLEMENTATIONS[name]
        for impl, run in impls.items():
            assert run(data.units) == data.expected, f"{impl} got {name} wrong"
        best = best_times({impl: partial(run, data.units) for impl, run in impls.items()}, rounds)
        per = best["streamwire"] / data.events * 1e9
        ratios = ", ".join(
            f"vs {impl} {seconds / best['streamwire']:.2f}x"
            for impl, seconds in best.items()
            if impl != "streamwire"
        )
        print(f"{name:22} {per:7.0f} ns per event, {ratios}")


if __name__ == "__main__":
    main(sys.argv[1:])
