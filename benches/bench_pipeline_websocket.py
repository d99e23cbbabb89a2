"""The WebSocket adapters: messages -> unified events -> each response's result.

Workloads (built here, one text message per server event, compact JSON as the
servers send it; shapes from the references cited in ``tests/ws_messages.py``,
checked 2026-11-29): one response of 20,000 text deltas, with its lifecycle
around it, for each protocol:

* ``openai-responses-ws``: ``response.output_text.delta`` events with every
  field the API sends (``sequence_number``, ``item_id``, ``output_index``,
  ``content_index``, ``logprobs``, ``obfuscation``);
* ``openai-realtime``: ``response.output_audio_transcript.delta`` events (a
  voice session's text), each after a ``response.output_audio.delta`` of
  100 ms of 24 kHz PCM (6,400 base64 characters), counted, never decoded;
* ``gemini-live``: ``serverContent.modelTurn`` messages of one text part.

Implementations, in the same run:

* ``streamwire``: ``sw.stream(protocol)``, ``feed_message`` per message (the
  ``str`` a WebSocket client returns), ``close``, ``result``;
* ``openai-sdk`` (OpenAI protocols): what the SDK's WebSocket connection does
  per message, ``parse_event`` (``json.loads`` + ``construct_type_unchecked``
  of the ``RealtimeServerEvent`` / ``ResponsesServerEvent`` union; openai-python
  3.57.0), plus, for Responses, ``ResponseStreamState.handle_event`` (the SDK's
  accumulator) and ``get_final_response``; the Realtime SDK has no
  accumulator, so its row only types the events: a lower bar;
* ``google-genai`` (``gemini-live``): what the SDK's Live session does per
  message (google-genai 3.6.1, checked 2026-12-06), step by step with its
  own functions (:func:`google_genai_live_messages`):
  ``AsyncSession._receive``'s ``types.LiveServerMessage()`` and its
  ``model_dump()`` (the ``kwargs`` it validates with), ``json.loads``,
  ``_LiveServerMessage_from_mldev``, ``types.LiveServerMessage._from_response``,
  then ``AsyncSession.receive``'s ``_is_interaction_complete`` (where its
  turn ends); plus a plain accumulator over the typed messages, as the SDK
  has none (``server_content.model_turn`` text parts joined, the last
  ``usage_metadata``). The socket's ``recv`` and the ``async`` machinery are
  left out, as the other peers leave out their sockets;
  ``bench_pipeline_shapes.py`` checks these steps against the SDK's own
  ``receive`` over a stub socket;
* ``naive``: ``orjson.loads`` and a plain-dict accumulator keyed on the type,
  kept as the speed reference (no statuses, no checks, no caps).

Each run checks the final text (and usage) against what the generator put in
and records ``correct``; streamwire must be correct. Throughput is messages
per second. Run once each as tests: ``pytest benches/bench_pipeline_websocket.py``;
print the ratios with ``python benches/bench_pipeline_websocket.py [rounds]``.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable, Iterator, Sequence
from functools import cache, partial
from typing import Any

import orjson
import pytest

from pipeline import final_usage, session_after
from rounds import best_times

DELTAS = 20_000
WORDS = ("stream", "wire", " parses", " every", " delta", ",", " fast", ".")
#: (final text, input tokens, output tokens)
Output = tuple[str, int | None, int | None]


def _dump(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def _pieces() -> list[str]:
    return [WORDS[i % len(WORDS)] for i in range(DELTAS)]


def _responses_ws() -> list[str]:
    rid, item = "resp_bench", "msg_bench"
    seq = iter(range(10**6))
    usage = {"input_tokens": 40, "output_tokens": DELTAS, "total_tokens": DELTAS + 40}
    out = [
        {
            "type": "response.created",
            "sequence_number": next(seq),
            "response": {"id": rid, "status": "in_progress"},
        },
        {
            "type": "response.output_item.added",
            "sequence_number": next(seq),
            "output_index": 0,
            "item": {
                "id": item,
                "type": "message",
                "role": "assistant",
                "content": [],
                "status": "in_progress",
            },
        },
        {
            "type": "response.content_part.added",
            "sequence_number": next(seq),
            "item_id": item,
            "output_index": 0,
            "content_index": 0,
            "part": {"type": "output_text", "text": "", "annotations": []},
        },
    ]
    for piece in _pieces():
        out.append(
            {
                "type": "response.output_text.delta",
                "sequence_number": next(seq),
                "item_id": item,
                "output_index": 0,
                "content_index": 0,
                "delta": piece,
                "logprobs": [],
                "obfuscation": "a1b2c3",
            }
        )
    text = "".join(_pieces())
    where = {"item_id": item, "output_index": 0, "content_index": 0}
    part = {"type": "output_text", "text": text, "annotations": []}
    done = {"id": item, "type": "message", "role": "assistant", "status": "completed"}
    out += [
        {"type": "response.output_text.done", "sequence_number": next(seq), "text": text, **where},
        {"type": "response.content_part.done", "sequence_number": next(seq), "part": part, **where},
        {
            "type": "response.output_item.done",
            "sequence_number": next(seq),
            "output_index": 0,
            "item": {**done, "content": [part]},
        },
    ]
    out.append(
        {
            "type": "response.completed",
            "sequence_number": next(seq),
            "response": {"id": rid, "status": "completed", "usage": usage},
        }
    )
    return [_dump(m) for m in out]


def _realtime() -> list[str]:
    rid, item = "resp_bench", "item_bench"
    at = {"response_id": rid, "item_id": item, "output_index": 0, "content_index": 0}
    audio = "A" * 6400
    usage = {"total_tokens": DELTAS + 40, "input_tokens": 40, "output_tokens": DELTAS}
    out: list[dict[str, Any]] = [
        {
            "type": "session.created",
            "event_id": "e0",
            "session": {"id": "sess", "model": "gpt-realtime"},
        },
        {
            "type": "response.created",
            "event_id": "e1",
            "response": {
                "id": rid,
                "object": "realtime.response",
                "status": "in_progress",
                "output": [],
            },
        },
        {
            "type": "response.output_item.added",
            "event_id": "e2",
            "response_id": rid,
            "output_index": 0,
            "item": {
                "id": item,
                "object": "realtime.item",
                "type": "message",
                "role": "assistant",
                "status": "in_progress",
                "content": [],
            },
        },
        {
            "type": "response.content_part.added",
            "event_id": "e3",
            "part": {"type": "output_audio", "transcript": ""},
            **at,
        },
    ]
    for n, piece in enumerate(_pieces()):
        out.append(
            {"type": "response.output_audio.delta", "event_id": f"a{n}", "delta": audio, **at}
        )
        out.append(
            {
                "type": "response.output_audio_transcript.delta",
                "event_id": f"t{n}",
                "delta": piece,
                **at,
            }
        )
    out.append(
        {
            "type": "response.done",
            "event_id": "e9",
            "response": {
                "id": rid,
                "object": "realtime.response",
                "status": "completed",
                "output": [],
                "usage": usage,
            },
        }
    )
    return [_dump(m) for m in out]


def _live() -> list[str]:
    out: list[dict[str, Any]] = [{"setupComplete": {}}]
    out += [
        {"serverContent": {"modelTurn": {"role": "model", "parts": [{"text": p}]}}}
        for p in _pieces()
    ]
    usage = {"promptTokenCount": 40, "responseTokenCount": DELTAS, "totalTokenCount": DELTAS + 40}
    out.append({"serverContent": {"turnComplete": True}, "usageMetadata": usage})
    return [_dump(m) for m in out]


WORKLOADS: dict[str, Callable[[], list[str]]] = {
    "openai-responses-ws": _responses_ws,
    "openai-realtime": _realtime,
    "gemini-live": _live,
}


@cache
def load(name: str) -> tuple[list[str], Output]:
    return WORKLOADS[name](), ("".join(_pieces()), 40, DELTAS)


# --- implementations -----------------------------------------------------------------------


def run_streamwire(protocol: str, messages: Sequence[str]) -> Output:
    result = session_after(protocol, messages).result
    assert result.status == "completed"
    usage = final_usage(result)
    return result.text, usage.input_tokens, usage.output_tokens


def run_openai_sdk(protocol: str, messages: Sequence[str]) -> Output:
    from openai._models import construct_type_unchecked

    if protocol == "openai-realtime":
        from openai.types.realtime import RealtimeServerEvent

        text: list[str] = []
        usage: Any = None
        for message in messages:
            event: Any = construct_type_unchecked(
                value=json.loads(message), type_=RealtimeServerEvent
            )  # type: ignore[arg-type]
            if event.type == "response.output_audio_transcript.delta":
                text.append(event.delta)
            elif event.type == "response.done":
                usage = event.response.usage
        return "".join(text), usage.input_tokens, usage.output_tokens
    from openai._types import omit
    from openai.lib.streaming.responses._responses import ResponseStreamState
    from openai.types.responses import ResponsesServerEvent  # type: ignore[attr-defined]

    state: ResponseStreamState[Any] = ResponseStreamState(input_tools=omit, text_format=omit)
    for message in messages:
        parsed: Any = construct_type_unchecked(
            value=json.loads(message), type_=ResponsesServerEvent
        )  # type: ignore[arg-type]
        for _ in state.handle_event(parsed):
            pass
    response = state._completed_response
    assert response is not None and response.usage is not None
    return response.output_text, response.usage.input_tokens, response.usage.output_tokens


def google_genai_live_messages(messages: Sequence[str | bytes]) -> Iterator[Any]:
    """The ``LiveServerMessage`` objects google-genai's Live session
    (``AsyncSession.receive``, Gemini API) yields for these messages as its
    socket's ``recv`` returns them, each made by ``AsyncSession._receive``'s
    steps with the SDK's own functions."""
    from google.genai import _live_converters, types

    for raw_response in messages:
        parameter_model = types.LiveServerMessage()
        if raw_response:
            try:
                response = json.loads(raw_response)
            except json.decoder.JSONDecodeError:
                raise ValueError(f"Failed to parse response: {raw_response!r}") from None
        else:
            response = {}
        response_dict = _live_converters._LiveServerMessage_from_mldev(response)
        if not response_dict and response:
            raise RuntimeError(response)  # the SDK's APIError
        yield types.LiveServerMessage._from_response(
            response=response_dict, kwargs=parameter_model.model_dump()
        )


def run_google_genai(protocol: str, messages: Sequence[str]) -> Output:
    from google.genai.live import _is_interaction_complete

    assert protocol == "gemini-live"
    text: list[str] = []
    usage: Any = None
    for message in google_genai_live_messages(messages):
        content = message.server_content
        if content is not None and content.model_turn is not None:
            for part in content.model_turn.parts or ():
                if part.text is not None:
                    text.append(part.text)
        usage = message.usage_metadata or usage
        if _is_interaction_complete(content):
            break  # AsyncSession.receive ends its turn here
    return "".join(text), usage.prompt_token_count, usage.response_token_count


def run_naive(protocol: str, messages: Sequence[str]) -> Output:
    text: list[str] = []
    usage: dict[str, Any] = {}
    for message in messages:
        event = orjson.loads(message)
        if protocol == "gemini-live":
            content = event.get("serverContent")
            if content is not None:
                for part in content.get("modelTurn", {}).get("parts", ()):
                    text.append(part.get("text", ""))
            if "usageMetadata" in event:
                meta = event["usageMetadata"]
                usage = {
                    "input_tokens": meta["promptTokenCount"],
                    "output_tokens": meta["responseTokenCount"],
                }
            continue
        kind = event.get("type")
        if kind in ("response.output_text.delta", "response.output_audio_transcript.delta"):
            text.append(event["delta"])
        elif kind in ("response.completed", "response.done"):
            usage = event["response"].get("usage") or {}
    return "".join(text), usage.get("input_tokens"), usage.get("output_tokens")


IMPLEMENTATIONS: dict[str, Callable[[str, Sequence[str]], Output]] = {
    "streamwire": run_streamwire,
    "openai-sdk": run_openai_sdk,
    "google-genai": run_google_genai,
    "naive": run_naive,
}
#: The SDK paths, each with the workloads of its protocols (the others run on all).
SDK_WORKLOADS = {
    "openai-sdk": ("openai-responses-ws", "openai-realtime"),
    "google-genai": ("gemini-live",),
}


def runs_on(impl: str, workload: str) -> bool:
    """Whether the implementation ``impl`` reads the workload ``workload``."""
    return workload in SDK_WORKLOADS.get(impl, (workload,))


def _pairs() -> list[tuple[str, str]]:
    return [(w, i) for w in WORKLOADS for i in IMPLEMENTATIONS if runs_on(i, w)]


@pytest.mark.parametrize(("workload_name", "impl_name"), _pairs())
def test_pipeline_websocket(benchmark: Any, workload_name: str, impl_name: str) -> None:
    messages, expected = load(workload_name)
    benchmark.group = f"pipeline/{workload_name}/messages"
    output = benchmark(IMPLEMENTATIONS[impl_name], workload_name, messages)
    correct = output == expected
    benchmark.extra_info.update(
        implementation=impl_name, workload=workload_name, messages=len(messages), correct=correct
    )
    if impl_name == "streamwire":
        assert correct, f"streamwire got {workload_name} wrong"


def main(argv: list[str]) -> None:
    """Prints messages/s per implementation and streamwire's ratio to each."""
    rounds = int(argv[0]) if argv else 5
    for name in WORKLOADS:
        messages, expected = load(name)
        impls = {impl: fn for impl, fn in IMPLEMENTATIONS.items() if runs_on(impl, name)}
        assert impls["streamwire"](name, messages) == expected
        best = best_times({impl: partial(fn, name, messages) for impl, fn in impls.items()}, rounds)
        rates = {impl: len(messages) / seconds for impl, seconds in best.items()}
        base = rates["streamwire"]
        cells = ", ".join(f"{k} {v / 1e3:,.0f}k msg/s ({base / v:.2f}x)" for k, v in rates.items())
        print(f"{name:20} {cells}")


if __name__ == "__main__":
    main(sys.argv[1:])
