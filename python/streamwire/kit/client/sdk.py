"""The SDK path: the same cases read by the providers' official SDKs, pointed at the gateway.

streamwire's reading of a gateway's output is not its clients' reading: a
body streamwire accepts can still make an SDK's stream helper raise or lose
a field. An SDK cell (``--sdk``) sends a case's request through the SDK (the
kit's own request, ``raw.client_request``, as the SDK's keyword arguments),
reads the answer with the SDK's own helper and keeps its final object
(docs/kit/outputs.md, "The SDK path", says which helper for each SDK).

That object, as the protocol's whole-answer JSON (``model_dump``), is read
by ``unary.read_answer`` and compared (``judge/sdk.py``) with streamwire's own
translation of the upstream's stream into the client protocol
(``rules.reference``). An in-stream error must surface as the SDK's API
error (``_ERRORS``); any other exception is the SDK failing on the gateway's
output, and its type and message are the evidence. The cell's one judged
layer is ``sdk``; its failure is the verdict ``sdk_incompatible``.

The SDKs are the extra ``streamwire[kit-sdk]``; this module imports them
only when an SDK cell runs (``import streamwire`` never does).
"""

from __future__ import annotations

import asyncio
import importlib
import importlib.metadata
import json
import time
import traceback
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timezone
from typing import Any

from ..vocab.cases import Case
from ..vocab.httpio import within
from ..vocab.names import SDKS
from .raw import MAX_TIMES, client_request
from .unary import MAX_ITEMS, read_answer, unary_result

__all__ = [
    "SDK_CASES",
    "SDK_DELIVERIES",
    "SDK_PACED_CASES",
    "SdkAnswer",
    "ask",
    "missing_sdks",
    "sdk_version",
    "test_record",
]

#: The module each SDK is imported as, and its distribution (for its version).
_MODULES: Mapping[str, str] = {
    "openai": "openai",
    "anthropic": "anthropic",
    "google-genai": "google.genai",
    "boto3": "boto3",
}
#: The cases an SDK cell asks: those whose facts an SDK's final object
#: carries (text, calls, the end, usage, an error), and the wire shapes a
#: parser meets (split, merged, keep-alives, unknown events). Timing, cancel,
#: slow-reader, silence and retry cases are the raw cells' (an SDK reads them
#: the same way); the reasoning case asks for reasoning as the raw cell does
#: (the kit's request's own options, as the SDK's keyword arguments).
SDK_CASES: tuple[str, ...] = (
    "short-text",
    "split-anywhere",
    "merged-events",
    "keepalive",
    "unknown-event",
    "single-tool",
    "parallel-tools",
    "chunked-json-args",
    "in-stream-error",
    "truncated",
    "truncated-tool",
    "usage",
    "reasoning",
    "in-stream-error-internal",
    "in-stream-error-throttled",
)
#: The deliveries an SDK cell runs in: the whole and tiny ones for what its
#: parser meets; the paced one for its streaming layer, judged from the times
#: the SDK yields its content (``SdkAnswer.content``), on ``SDK_PACED_CASES``.
SDK_DELIVERIES: tuple[str, ...] = ("whole", "tiny", "paced")
#: The cases an SDK cell reads paced: text spread over 1.5 s (a hop that
#: holds an SDK's answer, or batches it, shows it there).
SDK_PACED_CASES: tuple[str, ...] = ("short-text",)
#: The most characters of an SDK's exception message kept as evidence.
_MESSAGE = 500


def sdk_version(sdk: str) -> str | None:
    """The installed version of ``sdk`` (None: not installed)."""
    try:
        return importlib.metadata.version(sdk)
    except importlib.metadata.PackageNotFoundError:
        return None


def missing_sdks(sdks: Sequence[str]) -> list[str]:
    """The SDKs of ``sdks`` that are not installed."""
    missing = []
    for sdk in sdks:
        try:
            importlib.import_module(_MODULES[sdk])
        except ImportError:
            missing.append(sdk)
    return missing


@dataclass
class SdkAnswer:
    """What one SDK call gave: its final object, its API error, or what it raised."""

    sdk: str
    client: str
    #: The final object as the protocol's whole-answer JSON (None: none was made).
    answer: dict[str, Any] | None = None
    #: The SDK's API error: its class, the HTTP status, the provider's error type, the message.
    error: dict[str, Any] | None = None
    #: Anything else the SDK raised: (class, message).
    raised: tuple[str, str] | None = None
    seconds: float = 0.0
    #: How many stream events (or chunks) the SDK yielded.
    events: int = 0
    #: What the SDK's helper did on the way (a ``LengthFinishReasonError`` read through).
    notes: list[str] = field(default_factory=list)
    #: The content as the SDK yielded it: ``(time.time(), kind, characters)``,
    #: kinds as the mock's log names them (``text``, ``reasoning``): the
    #: streaming layer times a paced SDK cell by it.
    content: list[tuple[float, str, int]] = field(default_factory=list)

    def took(self, kind: str, text: object) -> None:
        """The SDK yielded ``text`` of ``kind`` just now (anything not a
        non-empty string is no content)."""
        if isinstance(text, str) and text and len(self.content) < MAX_TIMES:
            self.content.append((time.time(), kind, len(text)))

    def evidence(self) -> dict[str, Any]:
        answer = None
        if self.answer is not None:
            text = json.dumps(self.answer, ensure_ascii=False, default=str)
            answer = text if len(text) <= 2000 else text[:2000] + "..."
        return {
            "sdk": self.sdk,
            "version": sdk_version(self.sdk),
            "events": self.events,
            "content_events": len(self.content),
            "seconds": round(self.seconds, 4),
            "answer": answer,
            "error": self.error,
            "raised": list(self.raised) if self.raised else None,
            "notes": self.notes,
        }


def _raised(exc: BaseException) -> tuple[str, str]:
    """(the exception's class, its message); an exception without a message
    (an SDK's bare ``assert``) is told by where it was raised: the innermost
    frame's file, line and code."""
    kind = type(exc)
    message = str(exc).strip()
    if not message:
        frames = traceback.extract_tb(exc.__traceback__)
        if frames:
            last = frames[-1]
            where = "/".join(last.filename.replace("\\", "/").split("/")[-2:])
            message = f"no message; raised at {where}:{last.lineno}: {last.line or '?'}"
        else:
            message = "no message"
    return f"{kind.__module__}.{kind.__qualname__}", message[:_MESSAGE]


def _dump(obj: Any, **options: Any) -> dict[str, Any]:
    # warnings=False: an SDK's own unions (openai's Responses output items) make
    # pydantic warn about its serializer; the dump is what the object holds.
    value = obj.model_dump(mode="json", warnings=False, **options)
    if not isinstance(value, dict):
        raise TypeError(f"the final object dumps to {type(value).__name__}")
    return value


def _kwargs(body: Mapping[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in body.items() if k != "stream"}


# --- each SDK's call -------------------------------------------------------------------


async def _openai(
    client: str, base: str, key: str, model: str, body: dict[str, Any], out: SdkAnswer
) -> None:
    openai: Any = importlib.import_module("openai")
    sdk = openai.AsyncOpenAI(api_key=key, base_url=f"{base}/v1", max_retries=0, timeout=60.0)
    try:
        if client == "openai-chat":
            try:
                async with sdk.chat.completions.stream(**_kwargs(body)) as stream:
                    async for event in stream:
                        out.events += 1
                        if getattr(event, "type", None) == "content.delta":
                            out.took("text", getattr(event, "delta", None))
                    final = await stream.get_final_completion()
            except openai.LengthFinishReasonError as exc:
                # The helper's word for an answer the output limit cut.
                out.notes.append("LengthFinishReasonError: the completion it carries is read")
                final = exc.completion
            out.answer = _dump(final)
            return
        terminal = None
        async with sdk.responses.stream(**_kwargs(body)) as stream:
            async for event in stream:
                out.events += 1
                kind = getattr(event, "type", None)
                if kind == "response.output_text.delta":
                    out.took("text", getattr(event, "delta", None))
                elif kind in ("response.completed", "response.incomplete", "response.failed"):
                    terminal = event.response
                elif kind == "error":
                    out.error = {
                        "class": "ResponseErrorEvent",
                        "status": None,
                        "type": getattr(event, "code", None),
                        "message": str(getattr(event, "message", ""))[:_MESSAGE],
                    }
        if terminal is not None:
            out.answer = _dump(terminal)
    finally:
        await sdk.close()


def _openai_error(exc: Any) -> dict[str, Any]:
    body = _d(getattr(exc, "body", None))
    inner = _d(body.get("error")) or body
    return {
        "class": type(exc).__name__,
        "status": getattr(exc, "status_code", None),
        "type": inner.get("type") or inner.get("code") or getattr(exc, "type", None),
        "message": str(getattr(exc, "message", exc))[:_MESSAGE],
    }


async def _anthropic(
    client: str, base: str, key: str, model: str, body: dict[str, Any], out: SdkAnswer
) -> None:
    anthropic: Any = importlib.import_module("anthropic")
    sdk = anthropic.AsyncAnthropic(api_key=key, base_url=base, max_retries=0, timeout=60.0)
    try:
        async with sdk.messages.stream(**_kwargs(body)) as stream:
            async for event in stream:
                out.events += 1
                kind = getattr(event, "type", None)
                if kind == "text":
                    out.took("text", getattr(event, "text", None))
                elif kind == "thinking":
                    out.took("reasoning", getattr(event, "thinking", None))
            final = await stream.get_final_message()
        out.answer = _dump(final)
    finally:
        await sdk.close()


def _anthropic_error(exc: Any) -> dict[str, Any]:
    body = _d(getattr(exc, "body", None))
    inner = _d(body.get("error")) or body
    return {
        "class": type(exc).__name__,
        "status": getattr(exc, "status_code", None),
        "type": inner.get("type"),
        "message": str(getattr(exc, "message", exc))[:_MESSAGE],
    }


async def _genai(
    client: str, base: str, key: str, model: str, body: dict[str, Any], out: SdkAnswer
) -> None:
    genai: Any = importlib.import_module("google.genai")
    types: Any = importlib.import_module("google.genai.types")
    options = types.HttpOptions(base_url=base, api_version="v1beta", timeout=60_000)
    sdk = genai.Client(api_key=key, http_options=options)
    config = dict(body.get("generationConfig") or {})
    if body.get("tools"):
        config["tools"] = body["tools"]
    chunks: list[dict[str, Any]] = []
    try:
        stream = await sdk.aio.models.generate_content_stream(
            model=model,
            contents=body["contents"],
            config=types.GenerateContentConfig.model_validate(config),
        )
        async for chunk in stream:
            out.events += 1
            dumped = _dump(chunk, by_alias=True, exclude_none=True)
            for part in _parts(dumped):
                out.took("reasoning" if part.get("thought") is True else "text", part.get("text"))
            if len(chunks) < MAX_ITEMS:
                chunks.append(dumped)
    finally:
        await sdk.aio.aclose()
    out.answer = _joined(chunks)


def _genai_error(exc: Any) -> dict[str, Any]:
    return {
        "class": type(exc).__name__,
        "status": getattr(exc, "code", None),
        "type": getattr(exc, "status", None),
        "message": str(getattr(exc, "message", exc))[:_MESSAGE],
    }


def _d(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _index(value: Any, default: int) -> int:
    return value if type(value) is int and 0 <= value < MAX_ITEMS else default


def _parts(chunk: dict[str, Any]) -> list[dict[str, Any]]:
    """Candidate 0's parts in one Gemini chunk."""
    candidates = chunk.get("candidates")
    for c in map(_d, candidates if isinstance(candidates, list) else []):
        if c.get("index", 0) == 0:
            parts = _d(c.get("content")).get("parts")
            return [p for p in (parts if isinstance(parts, list) else []) if isinstance(p, dict)]
    return []


def _joined(chunks: Sequence[Any]) -> dict[str, Any]:
    """Gemini's chunks as one GenerateContentResponse: every part of candidate
    0 in order, the last finish reason, usage, model version and response id."""
    parts: list[Any] = []
    whole: dict[str, Any] = {}
    candidate: dict[str, Any] = {"index": 0}
    for chunk in map(_d, chunks):
        for key in ("usageMetadata", "modelVersion", "responseId"):
            if key in chunk:
                whole[key] = chunk[key]
        candidates = chunk.get("candidates")
        for c in map(_d, candidates if isinstance(candidates, list) else []):
            if c.get("index", 0) != 0:
                continue
            more = _d(c.get("content")).get("parts")
            parts.extend(p for p in (more if isinstance(more, list) else []) if isinstance(p, dict))
            if "finishReason" in c:
                candidate["finishReason"] = c["finishReason"]
    candidate["content"] = {"role": "model", "parts": parts[: 4 * MAX_ITEMS]}
    return {"candidates": [candidate], **whole}


def _boto3_call(
    client: str, base: str, key: str, body: dict[str, Any], model: str, out: SdkAnswer
) -> None:
    boto3: Any = importlib.import_module("boto3")
    config: Any = importlib.import_module("botocore.config")
    botocore: Any = importlib.import_module("botocore")
    session = boto3.session.Session(
        aws_access_key_id="swkit", aws_secret_access_key="swkit", region_name="us-east-1"
    )
    sdk = session.client(
        "bedrock-runtime",
        endpoint_url=base,
        config=config.Config(
            retries={"total_max_attempts": 1},
            read_timeout=60,
            connect_timeout=10,
            signature_version=botocore.UNSIGNED,
        ),
    )

    def bearer(request: Any, **_: Any) -> None:
        # The run's key as a Bedrock API key (Authorization: Bearer, what
        # AWS_BEARER_TOKEN_BEDROCK makes boto3 send), as the raw cells send it.
        request.headers["Authorization"] = f"Bearer {key}"

    sdk.meta.events.register("request-created.bedrock-runtime.*", bearer)
    try:
        if client == "bedrock-converse":
            response = sdk.converse_stream(modelId=model, **body)
            events: list[Any] = []
            for event in response["stream"]:
                out.events += 1
                piece = _d(_d(_d(event).get("contentBlockDelta")).get("delta"))
                out.took("text", piece.get("text"))
                if len(events) < 4 * MAX_ITEMS:
                    events.append(event)
            out.answer = _converse_joined(events)
        else:
            response = sdk.invoke_model_with_response_stream(
                modelId=model,
                body=json.dumps(body).encode(),
                contentType="application/json",
                accept="application/json",
            )
            pieces: list[Any] = []
            for event in response["body"]:
                out.events += 1
                data = _d(_d(event).get("chunk")).get("bytes")
                if isinstance(data, bytes) and len(pieces) < 4 * MAX_ITEMS:
                    piece = json.loads(data)
                    delta = _d(_d(piece).get("delta"))
                    if delta.get("type") == "text_delta":
                        out.took("text", delta.get("text"))
                    elif delta.get("type") == "thinking_delta":
                        out.took("reasoning", delta.get("thinking"))
                    pieces.append(piece)
            out.answer = _messages_joined(pieces)
            error = _d(out.answer.get("error"))
            if error:
                # boto3 hands the chunks over as bytes: the Anthropic error event
                # in one is how this path surfaces an in-stream error.
                out.error = {
                    "class": "error event",
                    "status": None,
                    "type": error.get("type"),
                    "message": str(error.get("message"))[:_MESSAGE],
                }
    finally:
        sdk.close()


def _boto3_error(exc: Any) -> dict[str, Any]:
    response = _d(getattr(exc, "response", None))
    error = _d(response.get("Error"))
    status = _d(response.get("ResponseMetadata")).get("HTTPStatusCode")
    return {
        "class": type(exc).__name__,
        "status": status,
        "type": error.get("Code"),
        "message": str(error.get("Message") or exc)[:_MESSAGE],
    }


def _converse_joined(events: Sequence[Any]) -> dict[str, Any]:
    """ConverseStream's events as the whole Converse answer: its content blocks
    in order (text joined, a tool use's input parsed), the stop reason, usage."""
    blocks: dict[int, dict[str, Any]] = {}
    inputs: dict[int, str] = {}
    answer: dict[str, Any] = {}
    for event in map(_d, events):
        if "contentBlockStart" in event:
            start = _d(event["contentBlockStart"])
            use = _d(start.get("start")).get("toolUse")
            if isinstance(use, dict):
                index = _index(start.get("contentBlockIndex"), len(blocks))
                blocks[index] = {"toolUse": dict(use)}
        elif "contentBlockDelta" in event:
            delta = _d(event["contentBlockDelta"])
            index = _index(delta.get("contentBlockIndex"), 0)
            piece = _d(delta.get("delta"))
            if isinstance(piece.get("text"), str):
                block = blocks.setdefault(index, {"text": ""})
                block["text"] = str(block.get("text", "")) + piece["text"]
            elif isinstance(_d(piece.get("toolUse")).get("input"), str):
                inputs[index] = inputs.get(index, "") + piece["toolUse"]["input"]
            elif isinstance(piece.get("reasoningContent"), dict):
                thought = blocks.setdefault(index, {"reasoningContent": {"reasoningText": {}}})
                into = _d(_d(thought.get("reasoningContent")).get("reasoningText"))
                part = piece["reasoningContent"]
                if isinstance(part.get("text"), str):
                    into["text"] = str(into.get("text", "")) + part["text"]
                if isinstance(part.get("signature"), str):
                    into["signature"] = part["signature"]
                thought["reasoningContent"] = {"reasoningText": into}
        elif "messageStop" in event:
            answer["stopReason"] = _d(event["messageStop"]).get("stopReason")
        elif "metadata" in event:
            answer["usage"] = _d(event["metadata"]).get("usage")
    for index, text in inputs.items():
        block = blocks.setdefault(index, {"toolUse": {}})
        block["toolUse"] = {**_d(block.get("toolUse")), "input": _object_or_text(text)}
    content = [blocks[i] for i in sorted(blocks)]
    return {"output": {"message": {"role": "assistant", "content": content}}, **answer}


def _messages_joined(events: Sequence[Any]) -> dict[str, Any]:
    """Anthropic's stream events (InvokeModelWithResponseStream's chunks) as
    the whole Messages answer."""
    message: dict[str, Any] = {}
    blocks: dict[int, dict[str, Any]] = {}
    inputs: dict[int, str] = {}
    usage: dict[str, Any] = {}
    for event in map(_d, events):
        kind = event.get("type")
        if kind == "message_start":
            start = _d(event.get("message"))
            message.update({k: v for k, v in start.items() if k not in ("content", "usage")})
            usage.update(_d(start.get("usage")))
        elif kind == "content_block_start" and isinstance(event.get("content_block"), dict):
            blocks[_index(event.get("index"), len(blocks))] = dict(event["content_block"])
        elif kind == "content_block_delta":
            index, delta = _index(event.get("index"), 0), _d(event.get("delta"))
            block = blocks.setdefault(index, {"type": "text", "text": ""})
            if delta.get("type") == "text_delta" and isinstance(delta.get("text"), str):
                block["text"] = str(block.get("text", "")) + delta["text"]
            elif delta.get("type") == "thinking_delta" and isinstance(delta.get("thinking"), str):
                block["thinking"] = str(block.get("thinking", "")) + delta["thinking"]
            elif delta.get("type") == "signature_delta" and isinstance(delta.get("signature"), str):
                block["signature"] = delta["signature"]
            elif delta.get("type") == "input_json_delta" and isinstance(
                delta.get("partial_json"), str
            ):
                inputs[index] = inputs.get(index, "") + delta["partial_json"]
        elif kind == "message_delta":
            message.update(_d(event.get("delta")))
            usage.update(_d(event.get("usage")))
        elif kind == "error":
            message["error"] = _d(event.get("error"))
    for index, text in inputs.items():
        blocks.setdefault(index, {"type": "tool_use"})["input"] = _object_or_text(text)
    return {
        **message,
        "type": "message",
        "content": [blocks[i] for i in sorted(blocks)],
        "usage": usage,
    }


def _object_or_text(text: str) -> Any:
    try:
        return json.loads(text) if text else {}
    except ValueError:
        return text


async def _boto3(
    client: str, base: str, key: str, model: str, body: dict[str, Any], out: SdkAnswer
) -> None:
    await asyncio.to_thread(_boto3_call, client, base, key, body, model, out)


_CALLS = {"openai": _openai, "anthropic": _anthropic, "google-genai": _genai, "boto3": _boto3}
_ERRORS = {
    "openai": ("openai", "APIError", _openai_error),
    "anthropic": ("anthropic", "APIError", _anthropic_error),
    "google-genai": ("google.genai.errors", "APIError", _genai_error),
    "boto3": ("botocore.exceptions", "ClientError", _boto3_error),
}


async def ask(
    sdk: str,
    client: str,
    case: Case,
    model: str,
    base_url: str,
    key: str,
    *,
    canary: str | None = None,
    timeout: float = 120.0,
    cell: str | None = None,
) -> SdkAnswer:
    """``case``'s request through ``sdk`` to the gateway at ``base_url``, read by
    the SDK's own helper. Never raises for what the gateway sent: an SDK's
    exception is kept (``SdkAnswer.error`` or ``.raised``)."""
    if client not in SDKS[sdk]:
        raise ValueError(f"{sdk} does not speak {client}; it speaks {', '.join(SDKS[sdk])}")
    _, _, body = client_request(client, case, model, base_url, key, canary=canary, cell=cell)
    out = SdkAnswer(sdk, client)
    module, name, describe = _ERRORS[sdk]
    api_error: Any = getattr(importlib.import_module(module), name)
    started = time.monotonic()
    try:
        call = _CALLS[sdk](client, base_url.rstrip("/"), key, model, body, out)
        await within(call, timeout)
    except api_error as exc:
        out.error = describe(exc)
    except asyncio.TimeoutError:
        out.raised = ("TimeoutError", f"no answer within the kit's {timeout:.0f} s")
    except Exception as exc:  # any exception on the gateway's output is the evidence
        out.raised = _raised(exc)
    out.seconds = time.monotonic() - started
    return out


def test_record(
    answer: SdkAnswer, model: str, sent_at: float, entry: Mapping[str, Any] | None
) -> dict[str, Any]:
    """An SDK cell's test record, as ``check.test_record`` keeps a raw cell's:
    the SDK and its version as the client, how the answer ended, its usage."""
    result = None
    if answer.answer is not None:
        events, problem = read_answer(answer.client, json.dumps(answer.answer).encode())
        result = unary_result(answer.client, events) if problem is None else None
    usage = result.usage if result is not None else None
    figures = None
    if usage is not None:
        figures = {k: v for k, v in usage.as_dict().items() if k != "raw" and v is not None}
    request_id = entry.get("request_id") if entry else None
    status = (answer.error or {}).get("status") if answer.error else (200 if result else None)
    return {
        "client": f"{answer.sdk} {sdk_version(answer.sdk) or '?'}",
        "protocol": answer.client,
        "model": model,
        "model_answered": result.model if result is not None else None,
        "time": datetime.fromtimestamp(sent_at, timezone.utc).isoformat(timespec="milliseconds"),
        "upstream_request_id": request_id if isinstance(request_id, str) else None,
        "status": status,
        "total": round(answer.seconds, 4),
        "completion": result.status if result is not None else None,
        "stop_reason": result.stop_reason if result is not None else None,
        "usage": figures,
    }
