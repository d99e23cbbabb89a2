"""The ``openai-responses`` encoder: unified events as an OpenAI Responses stream.

Writes the body of ``POST /v1/responses`` with ``stream: true`` as "Responses
streaming events" describes it (platform.openai.com/docs/api-reference/responses-streaming,
checked 2026-11-29) and as the openai-python 3.57.0 ``ResponseStreamState``
accumulates it (``lib/streaming/responses/_responses.py``). Every event is
``event: <type>`` / ``data: {"type": <type>, "sequence_number": n, ...}``,
numbered from 0 with no gap; there is no ``[DONE]``.

* ``response.created`` and ``response.in_progress`` (the response id: the
  source's message id, else ``resp_…``);
* output items, one open at a time (``_sequence.py``), each announced by
  ``response.output_item.added`` and ended by ``response.output_item.done``
  with the whole item: ``message`` (``output_text`` and ``refusal`` parts),
  ``reasoning`` (``summary_text`` and ``reasoning_text`` parts,
  ``encrypted_content`` for redacted reasoning), ``function_call`` and
  ``custom_tool_call`` (arguments by their ``.delta`` / ``.done`` events),
  and the built-in tools the caller runs, as items of their own type sent
  whole when the call completes (added and done, no argument events, as a
  responses source sends them; ``_mapping.BUILTIN_CALLS``); arguments that
  are not the item's inputs make a ``function_call`` instead, declared;
* the terminal event with the whole output and the usage:
  ``response.completed``, or ``response.incomplete`` (``max_output_tokens``
  or ``content_filter``); an error is an ``error`` event carrying the error
  both nested (as OpenAI sends it: the SDK raises on it) and flat (the SDK's
  ``ResponseErrorEvent``), then ``response.failed``. A cut stream gets no
  terminal event.

The texts are kept until their ``.done`` events and the terminal response,
which repeat them whole. The mapping rules are ``_mapping.py``'s table.
"""

from __future__ import annotations

import hashlib
import secrets
from typing import Any, ClassVar

from ..events import MessageCompleted, ReasoningDelta
from ..result import Usage
from ._base import Call, dumps, quote, sse
from ._mapping import BUILTIN_CALLS, builtin_fields, lossy_stop_reason
from ._sequence import SequentialEncoder

__all__ = ["OpenAIResponsesEncoder"]

#: ``ResponseError.code`` values of the SDK's model; others become ``server_error``
#: in ``response.failed`` (the ``error`` event before it carries the code verbatim).
_FAILED_CODES = frozenset(
    {
        "server_error",
        "rate_limit_exceeded",
        "invalid_prompt",
        "vector_store_timeout",
        "invalid_image",
        "invalid_image_format",
        "invalid_base64_image",
        "invalid_image_url",
        "image_too_large",
        "image_too_small",
        "image_parse_error",
        "image_content_policy_violation",
        "invalid_image_mode",
        "image_file_too_large",
        "unsupported_image_media_type",
        "empty_image_file",
        "failed_to_download_image",
        "image_file_not_found",
    }
)
#: ``incomplete_details.reason`` values that a responses source ends with and
#: that are carried as they are (status ``incomplete``).
_INCOMPLETE_REASONS = frozenset({"max_messages", "steered"})
#: Part kind -> (the part's type, its text field, its delta and done event types).
_PARTS: dict[str, tuple[str, str, str, str]] = {
    "text": ("output_text", "text", "response.output_text.delta", "response.output_text.done"),
    "refusal": ("refusal", "refusal", "response.refusal.delta", "response.refusal.done"),
    "reasoning": (
        "reasoning_text",
        "text",
        "response.reasoning_text.delta",
        "response.reasoning_text.done",
    ),
    "summary": (
        "summary_text",
        "text",
        "response.reasoning_summary_text.delta",
        "response.reasoning_summary_text.done",
    ),
}


class OpenAIResponsesEncoder(SequentialEncoder):
    """Unified events -> OpenAI Responses events (``sw.encoder("openai-responses")``)."""

    target = "openai-responses"
    GROUPS: ClassVar[dict[str, str]] = {
        "text": "message",
        "refusal": "message",
        "reasoning": "reasoning",
        "summary": "reasoning",
        "redacted": "reasoning",
        "call": "call",
    }
    FREE_TEXT = True
    BUILTIN_ITEMS = True

    def __init__(self, **options: Any) -> None:
        """Options are ``Encoder``'s."""
        super().__init__(**options)
        self._seq = 0
        self._response_id = ""
        self._token = ""
        self._items = 0
        self._output: list[dict[str, Any]] = []
        self._refused = False
        # The open item: its body, output index, parts, and the open part.
        self._item: dict[str, Any] = {}
        self._output_index = -1
        self._part: str | None = None
        self._part_index = -1
        self._chunks: list[str] = []
        self._parts: dict[str, int] = {}  # parts by channel: content / summary
        self._text_head = ""
        #: Long texts by marker (see ``_value``).
        self._marker = f"@sw-{secrets.token_hex(8)}-"
        self._long: dict[str, str] = {}

    # --- reasoning ------------------------------------------------------------------

    def _apply_reasoning(self, event: ReasoningDelta, out: list[bytes]) -> bool:
        # Only the first _enter can be held back (see anthropic.py).
        if event.text:
            if not self._enter("summary" if event.kind == "summary" else "reasoning", out):
                return False
            self._emit_text(self._kind or "reasoning", event.text, out)
        if event.signature:
            self._downgrade("reasoning_signature")
        if event.redacted:
            if self._block == "reasoning" and "encrypted_content" in self._item:
                self._close_block(out)  # one encrypted_content per reasoning item
            if self._block != "reasoning" and not self._enter("redacted", out):
                return False
            self._item["encrypted_content"] = event.redacted
        return True

    # --- the wire -------------------------------------------------------------------

    def _send(self, kind: str, body: dict[str, Any], out: list[bytes]) -> None:
        seq = self._seq
        self._seq = seq + 1
        data = dumps({"type": kind, "sequence_number": seq, **body})
        if self._long and self._marker in data:
            for marker, quoted in self._long.items():
                data = data.replace(marker, quoted)
        out.append(sse(data, kind))

    def _value(self, text: str) -> str:
        """``text`` for a JSON body; a long one as a marker, quoted once and put in
        by ``_send`` (the grammar repeats whole texts in several events: each is
        then a copy, not a new encoding)."""
        if len(text) < 512:
            return text
        marker = f"{self._marker}{len(self._long)}@"
        self._long['"' + marker + '"'] = quote(text)
        return marker

    def _response(self, status: str, **fields: Any) -> dict[str, Any]:
        response: dict[str, Any] = {
            "id": self._response_id,
            "object": "response",
            "created_at": self._created,
            "status": status,
            "error": None,
            "incomplete_details": None,
            "model": self._model_name(),
            "output": list(self._output),
            "parallel_tool_calls": True,
            "tool_choice": "auto",
            "tools": [],
            "usage": None,
            "metadata": {},
        }
        response.update(fields)
        return response

    def _emit_start(self, out: list[bytes]) -> None:
        rid = self._id_option or self._message_id or f"resp_{secrets.token_hex(24)}"
        self._response_id = rid
        self._token = hashlib.sha256(rid.encode("utf-8", "replace")).hexdigest()[:32]
        self._send("response.created", {"response": self._response("in_progress")}, out)
        self._send("response.in_progress", {"response": self._response("in_progress")}, out)

    def _item_id(self, prefix: str) -> str:
        self._items += 1
        return f"{prefix}_{self._token}{self._items:04d}"

    def _open_block(self, group: str, kind: str, call: Call | None, out: list[bytes]) -> None:
        self._output_index += 1
        self._part = None
        self._parts = {}
        if group == "message":
            item: dict[str, Any] = {
                "id": self._item_id("msg"),
                "type": "message",
                "status": "in_progress",
                "role": "assistant",
                "content": [],
            }
        elif group == "reasoning":
            item = {"id": self._item_id("rs"), "type": "reasoning", "summary": []}
        else:
            assert call is not None
            fields = self._builtin_fields(call)
            if fields is not None:
                item = {
                    "id": self._item_id(BUILTIN_CALLS[call.type].prefix),
                    "type": call.type,
                    "status": "in_progress",
                    "call_id": call.id,
                    **fields,
                }
            elif call.free_text:
                item = {
                    "id": self._item_id("ctc"),
                    "type": "custom_tool_call",
                    "status": "in_progress",
                    "call_id": call.id,
                    "name": call.name,
                    "input": "",
                }
            else:
                item = {
                    "id": self._item_id("fc"),
                    "type": "function_call",
                    "status": "in_progress",
                    "arguments": "",
                    "call_id": call.id,
                    "name": call.name,
                }
            call.item = item["id"]
        self._item = item
        self._send(
            "response.output_item.added", {"output_index": self._output_index, "item": item}, out
        )
        if kind in _PARTS:
            self._open_part(kind, out)

    def _builtin_fields(self, call: Call) -> dict[str, Any] | None:
        """A built-in call's item input fields, or None: not a built-in call, or
        arguments that are not its item's (sent as a function call, declared)."""
        if call.builtin is None:
            return None
        fields = builtin_fields(call.builtin, call.arguments)
        if fields is None:
            self._downgrade_builtin(call.builtin)
            call.builtin = None
            return None
        call.native = True
        return fields

    def _where(self) -> dict[str, Any]:
        return {"item_id": self._item["id"], "output_index": self._output_index}

    def _open_part(self, kind: str, out: list[bytes]) -> None:
        part_type, field, _, _ = _PARTS[kind]
        channel = "summary" if kind == "summary" else "content"
        index = self._parts.get(channel, 0)
        self._parts[channel] = index + 1
        self._part = kind
        self._part_index = index
        self._chunks = []
        part: dict[str, Any] = {"type": part_type, field: ""}
        if kind == "text":
            part = {"type": "output_text", "annotations": [], "logprobs": [], "text": ""}
        where = self._where()
        if kind == "summary":
            body = {**where, "summary_index": index, "part": part}
            self._send("response.reasoning_summary_part.added", body, out)
        else:
            self._send(
                "response.content_part.added", {**where, "content_index": index, "part": part}, out
            )
        if kind == "text":
            self._text_head = (
                ',"item_id":'
                + quote(self._item["id"])
                + ',"output_index":'
                + str(self._output_index)
                + ',"content_index":'
                + str(index)
                + ',"delta":'
            )
        elif kind == "refusal":
            self._refused = True

    def _close_part(self, out: list[bytes]) -> None:
        kind = self._part
        if kind is None:
            return
        self._part = None
        part_type, field, _, done = _PARTS[kind]
        text = self._value("".join(self._chunks))
        self._chunks = []
        where = self._where()
        index = self._part_index
        part: dict[str, Any] = {"type": part_type, field: text}
        if kind == "summary":
            self._send(done, {**where, "summary_index": index, "text": text}, out)
            self._send(
                "response.reasoning_summary_part.done",
                {**where, "summary_index": index, "part": part},
                out,
            )
            self._item["summary"].append(part)
            return
        index_field = {"content_index": index}
        if kind == "text":
            part = {"type": "output_text", "annotations": [], "logprobs": [], "text": text}
            self._send(done, {**where, **index_field, "text": text, "logprobs": []}, out)
        else:
            self._send(done, {**where, **index_field, field: text}, out)
        self._send("response.content_part.done", {**where, **index_field, "part": part}, out)
        self._item.setdefault("content", []).append(part)

    def _switch_part(self, kind: str, out: list[bytes]) -> None:
        self._close_part(out)
        if kind in _PARTS:
            self._open_part(kind, out)

    def _emit_text(self, kind: str, text: str, out: list[bytes]) -> None:
        self._chunks.append(text)
        if kind == "text":
            seq = self._seq
            self._seq = seq + 1
            data = (
                '{"type":"response.output_text.delta","sequence_number":'
                + str(seq)
                + self._text_head
                + quote(text)
                + ',"logprobs":[]}'
            )
            out.append(sse(data, "response.output_text.delta"))
            return
        index = "summary_index" if kind == "summary" else "content_index"
        body = {**self._where(), index: self._part_index, "delta": text}
        self._send(_PARTS[kind][2], body, out)

    def _emit_arguments(self, call: Call, fragment: str, out: list[bytes]) -> None:
        if not fragment or call.native:
            return  # a built-in item carries its inputs whole
        kind = (
            "response.custom_tool_call_input.delta"
            if call.free_text
            else "response.function_call_arguments.delta"
        )
        seq = self._seq
        self._seq = seq + 1
        data = (
            '{"type":"'
            + kind
            + '","sequence_number":'
            + str(seq)
            + ',"item_id":'
            + quote(self._item["id"])
            + ',"output_index":'
            + str(self._output_index)
            + ',"delta":'
            + quote(fragment)
            + "}"
        )
        out.append(sse(data, kind))

    def _close(self, group: str, out: list[bytes]) -> None:
        item = self._item
        call = self._block_call
        if call is not None and call.native:
            item["status"] = "completed"
        elif call is not None:
            raw = self._value(call.raw())
            if call.free_text:
                self._send(
                    "response.custom_tool_call_input.done", {**self._where(), "input": raw}, out
                )
                item["input"] = raw
            else:
                body = {**self._where(), "arguments": raw}
                self._send("response.function_call_arguments.done", body, out)
                item["arguments"] = raw
            item["status"] = "completed"
        else:
            self._close_part(out)
            if group == "message":
                item["status"] = "completed"
        self._send(
            "response.output_item.done", {"output_index": self._output_index, "item": item}, out
        )
        self._output.append(item)

    # --- endings --------------------------------------------------------------------

    def _usage_body(self) -> dict[str, Any] | None:
        usage: Usage | None = self._usage
        if usage is None:
            return None
        self._usage_sent = usage
        f = self._figures(usage)
        details = {"cached_tokens": f.cache_read or 0, "cache_write_tokens": f.cache_write or 0}
        return {
            "input_tokens": f.input_total or 0,
            "input_tokens_details": details,
            "output_tokens": f.output or 0,
            "output_tokens_details": {"reasoning_tokens": f.reasoning or 0},
            "total_tokens": f.total_or_sum,
        }

    def _emit_end(self, event: MessageCompleted, out: list[bytes]) -> None:
        stop = event.stop_reason
        if event.status == "truncated" or stop == "length":
            self._incomplete("max_output_tokens", out)
            return
        if stop == "content_filter" and (not self._refused or self._client_calls):
            # With function calls, completed would read as tool_calls: executable.
            self._incomplete("content_filter", out)
            return
        if lossy_stop_reason(self.target, stop) or (
            stop in ("stop", "tool_calls") and (stop == "tool_calls") != (self._client_calls > 0)
        ):
            self._downgrade("stop_reason")
        response = self._response("completed", usage=self._usage_body())
        self._send("response.completed", {"response": response}, out)

    def _incomplete(self, reason: str, out: list[bytes]) -> None:
        response = self._response(
            "incomplete", incomplete_details={"reason": reason}, usage=self._usage_body()
        )
        self._send("response.incomplete", {"response": response}, out)

    def _emit_cut(self, event: MessageCompleted, out: list[bytes]) -> None:
        reason = event.provider_stop_reason
        if event.status == "incomplete" and reason in _INCOMPLETE_REASONS:
            assert reason is not None
            self._close_block(out)
            self._incomplete(reason, out)

    def _emit_error(
        self, kind: str | None, code: str | int | None, message: str | None, out: list[bytes]
    ) -> None:
        self._ensure_started(out)
        text = message if message is not None else "the upstream stream failed"
        flat_code = None if code is None else str(code)
        error = {"type": kind, "code": code, "message": message, "param": None}
        body = {
            "code": flat_code if flat_code is not None else kind,
            "message": text,
            "param": None,
            "error": error,
        }
        self._send("error", body, out)
        failed_code = flat_code if flat_code in _FAILED_CODES else "server_error"
        response = self._response(
            "failed", error={"code": failed_code, "message": text}, usage=self._usage_body()
        )
        self._send("response.failed", {"response": response}, out)
