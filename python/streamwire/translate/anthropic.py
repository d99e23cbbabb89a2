"""The ``anthropic`` encoder: unified events as an Anthropic Messages stream.

Writes the body of ``POST /v1/messages`` with ``stream: true`` as Anthropic's
streaming reference describes it ("Streaming Messages",
platform.claude.com/docs/en/build-with-claude/streaming, checked 2026-11-29)
and as the anthropic-python 2.14.0 ``MessageStream`` accumulates it
(``lib/streaming/_messages.py``: ``accumulate_event`` appends a block per
``content_block_start`` and finds it again by ``index``): every event is
``event: <type>`` / ``data: {"type": <type>, ...}``.

* ``message_start`` (id, model, empty content, usage with the input figures
  known by the end of the ``feed`` call that started the message: Anthropic
  sends them there, other sources at the end, and ``message_delta`` repeats
  them all);
* content blocks, indexed 0, 1, ... in order, one open at a time
  (``_sequence.py``): ``text`` (``text_delta``), ``thinking``
  (``thinking_delta``, then ``signature_delta`` just before its
  ``content_block_stop``, as the API sends it), ``redacted_thinking`` (its
  ``data`` in the start), ``tool_use`` (``id``, ``name``, ``input: {}``, then
  ``input_json_delta`` fragments) and ``server_tool_use`` for a source's own;
* ``message_delta`` with the mapped ``stop_reason`` and cumulative usage
  (``input_tokens`` excludes cache reads and writes, which go beside it), then
  ``message_stop``;
* an error is ``event: error`` with ``{"type": "error", "error": {"type",
  "message"}}`` (the SDK raises on it); nothing follows it. A cut stream gets
  no ``message_delta`` stop reason and no ``message_stop``.

Refusals have no content type of their own: they are sent as text, and the
stop reason says ``refusal`` (a declared downgrade). The mapping rules are
``_mapping.py``'s table.
"""

from __future__ import annotations

import secrets
from typing import Any, ClassVar

from ..events import MessageCompleted, ReasoningDelta
from ..result import Usage
from ._base import Call, dumps, quote, sse
from ._mapping import lossy_stop_reason, target_stop_reason
from ._sequence import SequentialEncoder

__all__ = ["AnthropicEncoder"]

_DELTA = "content_block_delta"


class AnthropicEncoder(SequentialEncoder):
    """Unified events -> Anthropic Messages events (``sw.encoder("anthropic")``)."""

    target = "anthropic"
    CLOSE_UNFINISHED = False
    NO_ARGUMENTS = ""
    GROUPS: ClassVar[dict[str, str]] = {
        "text": "text",
        "refusal": "text",
        "reasoning": "thinking",
        "summary": "thinking",
        "redacted": "redacted",
        "call": "call",
    }

    def __init__(self, **options: Any) -> None:
        """Options are ``Encoder``'s."""
        super().__init__(**options)
        self._index = -1
        self._text_prefix = ""
        self._args_prefix = ""
        self._redacted = ""

    # --- reasoning ------------------------------------------------------------------

    def _apply_reasoning(self, event: ReasoningDelta, out: list[bytes]) -> bool:
        # Only the first _enter can be held back (later ones leave a thinking
        # block, not a call), so a held event is never half sent.
        if event.text:
            summary = event.kind == "summary"
            if not self._enter("summary" if summary else "reasoning", out):
                return False
            if summary:
                self._downgrade("reasoning_summary")
            self._emit_text("reasoning", event.text, out)
        if event.signature:
            if self._block != "thinking" and not self._enter("reasoning", out):
                return False
            body = {"type": "signature_delta", "signature": event.signature}
            self._delta(body, out)
            self._close_block(out)
        if event.redacted:
            self._redacted = event.redacted
            if not self._enter("redacted", out):
                return False
            self._close_block(out)
        return True

    # --- the wire -------------------------------------------------------------------

    def _send(self, kind: str, body: dict[str, Any], out: list[bytes]) -> None:
        out.append(sse(dumps({"type": kind, **body}), kind))

    def _delta(self, delta: dict[str, Any], out: list[bytes]) -> None:
        self._send(_DELTA, {"index": self._index, "delta": delta}, out)

    def _emit_start(self, out: list[bytes]) -> None:
        message_id = self._id_option or self._message_id or f"msg_{secrets.token_hex(12)}"
        usage = self._usage
        if usage is None:
            start_usage: dict[str, int] = {"input_tokens": 0, "output_tokens": 0}
        else:
            start_usage = self._usage_body(usage, start=True)
            self._usage_sent = usage
        message: dict[str, Any] = {
            "id": message_id,
            "type": "message",
            "role": "assistant",
            "model": self._model_name(),
            "content": [],
            "stop_reason": None,
            "stop_sequence": None,
            "usage": start_usage,
        }
        self._send("message_start", {"message": message}, out)

    def _usage_body(self, usage: Usage, *, start: bool = False) -> dict[str, int]:
        f = self._figures(usage)
        body = {"input_tokens": f.input_fresh or 0, "output_tokens": f.output or 0}
        if f.cache_write is not None:
            body["cache_creation_input_tokens"] = f.cache_write
        if f.cache_read is not None:
            body["cache_read_input_tokens"] = f.cache_read
        if not start:
            if f.reasoning:
                self._downgrade("usage_reasoning_tokens")
            if f.total is not None and f.total != (f.input_total or 0) + (f.output or 0):
                self._downgrade("usage_total")
        return body

    def _open_block(self, group: str, kind: str, call: Call | None, out: list[bytes]) -> None:
        self._index = index = self._index + 1
        block: dict[str, Any]
        if group == "text":
            block = {"type": "text", "text": ""}
            self._text_prefix = (
                '{"type":"content_block_delta","index":'
                + str(index)
                + ',"delta":{"type":"text_delta","text":'
            )
        elif group == "thinking":
            block = {"type": "thinking", "thinking": "", "signature": ""}
        elif group == "redacted":
            block = {"type": "redacted_thinking", "data": self._redacted}
        else:
            assert call is not None
            kind = "server_tool_use" if call.executor == "server" else "tool_use"
            block = {"type": kind, "id": call.id, "name": call.name, "input": {}}
            self._args_prefix = (
                '{"type":"content_block_delta","index":'
                + str(index)
                + ',"delta":{"type":"input_json_delta","partial_json":'
            )
        self._send("content_block_start", {"index": index, "content_block": block}, out)

    def _switch_part(self, kind: str, out: list[bytes]) -> None:
        pass  # text and refusal share a text block; thinking and summary a thinking block

    def _emit_text(self, kind: str, text: str, out: list[bytes]) -> None:
        if kind == "text":
            out.append(sse(self._text_prefix + quote(text) + "}}", _DELTA))
        elif kind == "refusal":
            self._downgrade("refusal")
            out.append(sse(self._text_prefix + quote(text) + "}}", _DELTA))
        else:
            self._delta({"type": "thinking_delta", "thinking": text}, out)

    def _emit_arguments(self, call: Call, fragment: str, out: list[bytes]) -> None:
        if fragment:
            out.append(sse(self._args_prefix + quote(fragment) + "}}", _DELTA))

    def _close(self, group: str, out: list[bytes]) -> None:
        self._send("content_block_stop", {"index": self._index}, out)

    def _carries_server_call(self, call: Call) -> bool:
        return call.type == "server_tool_use"

    def _emit_end(self, event: MessageCompleted, out: list[bytes]) -> None:
        stop = event.stop_reason
        if lossy_stop_reason(self.target, stop):
            self._downgrade("stop_reason")
        reason = target_stop_reason(self.target, stop, event.provider_stop_reason)
        usage = self._usage
        if usage is None:
            body: dict[str, int] = {"output_tokens": 0}
        else:
            body = self._usage_body(usage)
            self._usage_sent = usage
        delta = {"stop_reason": reason, "stop_sequence": None}
        self._send("message_delta", {"delta": delta, "usage": body}, out)
        self._send("message_stop", {}, out)

    def _emit_cut(self, event: MessageCompleted, out: list[bytes]) -> None:
        pass  # no message_delta stop reason, no message_stop: the client sees it cut

    def _emit_error(
        self, kind: str | None, code: str | int | None, message: str | None, out: list[bytes]
    ) -> None:
        if self._message:
            self._ensure_started(out)
        if code is not None:
            self._downgrade("error_code")
        self._send("error", {"error": {"type": kind, "message": message}}, out)

    def _on_close(self, out: list[bytes]) -> None:
        super()._on_close(out)
        if self._started and self._usage is None:
            self._downgrade("usage_placeholder")
