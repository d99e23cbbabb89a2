"""Builders of WebSocket server messages, as the providers' references describe them.

Shared by ``make_ws_fixtures.py`` (the fixtures) and the WebSocket adapter
tests. Shapes, checked 2026-11-29:

* OpenAI Responses (WebSocket mode): the typed ``response.*`` events of
  "Responses streaming events" (platform.openai.com/docs/api-reference/
  responses-streaming), one per message, ``sequence_number`` counting from 0
  in each response; ``error`` as in the "WebSocket Mode" guide
  (developers.openai.com/api/docs/guides/websocket-mode).
* OpenAI Realtime: "Realtime server events" (platform.openai.com/docs/
  api-reference/realtime-server-events) and openai-python's
  ``types/realtime`` models: every event has an ``event_id``; response events
  carry ``response_id``.
* Gemini Live: ``BidiGenerateContentServerMessage`` ("Live API - WebSockets
  API reference", ai.google.dev/api/live; google-genai ``LiveServerMessage``).
"""

from __future__ import annotations

import itertools
import json
from typing import Any

Message = dict[str, Any]


def line(message: Message) -> str:
    """One message as one compact JSON line (the fixtures' form)."""
    return json.dumps(message, ensure_ascii=False, separators=(",", ":"))


# --- OpenAI Responses, WebSocket mode ----------------------------------------------------------


class Responses:
    """The events of one Responses response, numbered from 0."""

    def __init__(self, rid: str, model: str = "gpt-5.2-2025-12-11", previous: str | None = None):
        self.rid = rid
        self.model = model
        self.previous = previous
        self._seq = itertools.count()

    def _e(self, kind: str, **fields: Any) -> Message:
        return {"type": kind, "sequence_number": next(self._seq), **fields}

    def response(self, status: str, **extra: Any) -> Message:
        return {
            "id": self.rid,
            "object": "response",
            "created_at": 1764400000,
            "status": status,
            "model": self.model,
            "previous_response_id": self.previous,
            "output": extra.pop("output", []),
            "usage": extra.pop("usage", None),
            **extra,
        }

    def created(self) -> Message:
        return self._e("response.created", response=self.response("in_progress"))

    def in_progress(self) -> Message:
        return self._e("response.in_progress", response=self.response("in_progress"))

    def completed(self, output: list[Any], usage: Message) -> Message:
        return self._e(
            "response.completed", response=self.response("completed", output=output, usage=usage)
        )

    def message_events(self, item_id: str, index: int, deltas: list[str]) -> list[Message]:
        text = "".join(deltas)
        empty = {"id": item_id, "type": "message", "status": "in_progress", "role": "assistant"}
        part = {"type": "output_text", "annotations": [], "text": ""}
        done_part = {**part, "text": text}
        where = {"item_id": item_id, "output_index": index, "content_index": 0}
        return [
            self._e(
                "response.output_item.added", output_index=index, item={**empty, "content": []}
            ),
            self._e("response.content_part.added", part=part, **where),
            *(self._e("response.output_text.delta", delta=d, logprobs=[], **where) for d in deltas),
            self._e("response.output_text.done", text=text, logprobs=[], **where),
            self._e("response.content_part.done", part=done_part, **where),
            self._e(
                "response.output_item.done",
                output_index=index,
                item=self.message_item(item_id, text),
            ),
        ]

    @staticmethod
    def message_item(item_id: str, text: str) -> Message:
        return {
            "id": item_id,
            "type": "message",
            "status": "completed",
            "role": "assistant",
            "content": [{"type": "output_text", "annotations": [], "text": text}],
        }

    @staticmethod
    def call_item(item_id: str, call_id: str, name: str, arguments: str, status: str) -> Message:
        return {
            "id": item_id,
            "type": "function_call",
            "status": status,
            "arguments": arguments,
            "call_id": call_id,
            "name": name,
        }

    def call_added(self, item_id: str, call_id: str, name: str, index: int) -> Message:
        item = self.call_item(item_id, call_id, name, "", "in_progress")
        return self._e("response.output_item.added", output_index=index, item=item)

    def arguments_delta(self, item_id: str, index: int, delta: str) -> Message:
        return self._e(
            "response.function_call_arguments.delta",
            item_id=item_id,
            output_index=index,
            delta=delta,
        )

    def call_done(
        self, item_id: str, call_id: str, name: str, index: int, arguments: str
    ) -> list[Message]:
        return [
            self._e(
                "response.function_call_arguments.done",
                item_id=item_id,
                output_index=index,
                arguments=arguments,
            ),
            self._e(
                "response.output_item.done",
                output_index=index,
                item=self.call_item(item_id, call_id, name, arguments, "completed"),
            ),
        ]

    def event(self, kind: str, **fields: Any) -> Message:
        return self._e(kind, **fields)


def responses_usage(input_tokens: int, output_tokens: int, cached: int = 0) -> Message:
    return {
        "input_tokens": input_tokens,
        "input_tokens_details": {"cached_tokens": cached},
        "output_tokens": output_tokens,
        "output_tokens_details": {"reasoning_tokens": 0},
        "total_tokens": input_tokens + output_tokens,
    }


def responses_error(
    code: str, message: str, kind: str | None, status: int, **extra: Any
) -> Message:
    error: Message = {"code": code, "message": message, **extra}
    if kind is not None:
        error = {"type": kind, **error}
    return {"type": "error", "status": status, "error": error}


# --- OpenAI Realtime ---------------------------------------------------------------------------


class Realtime:
    """Realtime server events; ``event_id`` numbered across the session."""

    def __init__(self) -> None:
        self._ids = itertools.count(1)

    def e(self, kind: str, **fields: Any) -> Message:
        return {"type": kind, "event_id": f"event_{next(self._ids):03d}", **fields}

    def session_created(self, model: str = "gpt-realtime-2025-08-28") -> Message:
        return self.e(
            "session.created",
            session={
                "type": "realtime",
                "object": "realtime.session",
                "id": "sess_rt01",
                "model": model,
                "output_modalities": ["audio"],
            },
        )

    @staticmethod
    def response(rid: str, status: str, **extra: Any) -> Message:
        return {
            "object": "realtime.response",
            "id": rid,
            "status": status,
            "status_details": extra.pop("status_details", None),
            "output": extra.pop("output", []),
            "conversation_id": "conv_rt01",
            "usage": extra.pop("usage", None),
            **extra,
        }

    def created(self, rid: str) -> Message:
        return self.e("response.created", response=self.response(rid, "in_progress"))

    def done(
        self, rid: str, status: str, output: list[Any], usage: Message | None, **kw: Any
    ) -> Message:
        return self.e(
            "response.done", response=self.response(rid, status, output=output, usage=usage, **kw)
        )

    @staticmethod
    def message_item(item_id: str, status: str, content: list[Message]) -> Message:
        return {
            "id": item_id,
            "object": "realtime.item",
            "type": "message",
            "status": status,
            "role": "assistant",
            "content": content,
        }

    def text_message(
        self, rid: str, item_id: str, index: int, deltas: list[str], beta: bool = False
    ) -> list[Message]:
        text = "".join(deltas)
        at = {"response_id": rid, "item_id": item_id, "output_index": index, "content_index": 0}
        kind = "text" if beta else "output_text"
        delta_type = "response.text.delta" if beta else "response.output_text.delta"
        done_type = "response.text.done" if beta else "response.output_text.done"
        return [
            self.e(
                "response.output_item.added",
                response_id=rid,
                output_index=index,
                item=self.message_item(item_id, "in_progress", []),
            ),
            self.e("response.content_part.added", part={"type": kind, "text": ""}, **at),
            *(self.e(delta_type, delta=d, **at) for d in deltas),
            self.e(done_type, text=text, **at),
            self.e("response.content_part.done", part={"type": kind, "text": text}, **at),
            self.e(
                "response.output_item.done",
                response_id=rid,
                output_index=index,
                item=self.message_item(item_id, "completed", [{"type": kind, "text": text}]),
            ),
        ]

    def audio_message(
        self,
        rid: str,
        item_id: str,
        index: int,
        transcript: list[str],
        audio: list[str],
        beta: bool = False,
        status: str = "completed",
    ) -> list[Message]:
        text = "".join(transcript)
        at = {"response_id": rid, "item_id": item_id, "output_index": index, "content_index": 0}
        kind = "audio" if beta else "output_audio"
        prefix = "response.audio" if beta else "response.output_audio"
        events = [
            self.e(
                "response.output_item.added",
                response_id=rid,
                output_index=index,
                item=self.message_item(item_id, "in_progress", []),
            ),
            self.e("response.content_part.added", part={"type": kind, "transcript": ""}, **at),
        ]
        for chunk, words in itertools.zip_longest(audio, transcript):
            if chunk is not None:
                events.append(self.e(f"{prefix}.delta", delta=chunk, **at))
            if words is not None:
                events.append(self.e(f"{prefix}_transcript.delta", delta=words, **at))
        events += [
            self.e(f"{prefix}.done", **at),
            self.e(f"{prefix}_transcript.done", transcript=text, **at),
            self.e("response.content_part.done", part={"type": kind, "transcript": text}, **at),
            self.e(
                "response.output_item.done",
                response_id=rid,
                output_index=index,
                item=self.message_item(item_id, status, [{"type": kind, "transcript": text}]),
            ),
        ]
        return events

    @staticmethod
    def call_item(item_id: str, call_id: str, name: str, arguments: str, status: str) -> Message:
        return {
            "id": item_id,
            "object": "realtime.item",
            "type": "function_call",
            "status": status,
            "call_id": call_id,
            "name": name,
            "arguments": arguments,
        }

    def call(
        self,
        rid: str,
        item_id: str,
        call_id: str,
        name: str,
        index: int,
        deltas: list[str],
        status: str = "completed",
    ) -> list[Message]:
        arguments = "".join(deltas)
        at = {"response_id": rid, "item_id": item_id, "output_index": index, "call_id": call_id}
        return [
            self.e(
                "response.output_item.added",
                response_id=rid,
                output_index=index,
                item=self.call_item(item_id, call_id, name, "", "in_progress"),
            ),
            *(self.e("response.function_call_arguments.delta", delta=d, **at) for d in deltas),
            self.e("response.function_call_arguments.done", arguments=arguments, **at),
            self.e(
                "response.output_item.done",
                response_id=rid,
                output_index=index,
                item=self.call_item(item_id, call_id, name, arguments, status),
            ),
        ]


def realtime_usage(input_tokens: int, output_tokens: int, cached: int = 0) -> Message:
    return {
        "total_tokens": input_tokens + output_tokens,
        "input_tokens": input_tokens,
        "output_tokens": output_tokens,
        "input_token_details": {
            "cached_tokens": cached,
            "text_tokens": input_tokens,
            "audio_tokens": 0,
        },
        "output_token_details": {"text_tokens": output_tokens, "audio_tokens": 0},
    }


# --- Gemini Live -------------------------------------------------------------------------------


def live_text(*texts: str) -> Message:
    return {
        "serverContent": {"modelTurn": {"role": "model", "parts": [{"text": t} for t in texts]}}
    }


def live_audio(data: str, transcript: str | None = None) -> Message:
    content: Message = {
        "modelTurn": {
            "role": "model",
            "parts": [{"inlineData": {"mimeType": "audio/pcm;rate=24000", "data": data}}],
        }
    }
    if transcript is not None:
        content["outputTranscription"] = {"text": transcript}
    return {"serverContent": content}


def live_usage(prompt: int, response: int) -> Message:
    return {
        "promptTokenCount": prompt,
        "responseTokenCount": response,
        "totalTokenCount": prompt + response,
        "promptTokensDetails": [{"modality": "TEXT", "tokenCount": prompt}],
        "responseTokensDetails": [{"modality": "TEXT", "tokenCount": response}],
    }


def live_calls(*calls: tuple[str, str, dict[str, Any]]) -> Message:
    return {"toolCall": {"functionCalls": [{"id": i, "name": n, "args": a} for i, n, a in calls]}}
