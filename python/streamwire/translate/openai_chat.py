"""The ``openai-chat`` encoder: unified events as OpenAI Chat Completions chunks.

Writes the body of ``POST /v1/chat/completions`` with ``stream: true`` as the
OpenAI API reference describes it ("The chat completion chunk object",
platform.openai.com/docs/api-reference/chat-streaming, checked 2026-11-29),
and as the openai-python 3.57.0 stream helper
(``lib/streaming/chat/_completions.py``, ``ChatCompletionStreamState``)
accumulates it: ``data: {chat.completion.chunk}`` events, then
``data: [DONE]``.

* Every chunk carries ``id``, ``object: "chat.completion.chunk"``, ``created``
  and ``model``. A choice's first chunk is ``delta: {"role": "assistant",
  "content": ""}``; then ``delta.content``, ``delta.refusal``, and reasoning
  as ``delta.reasoning_content`` (option ``chat_reasoning``: the DeepSeek /
  vLLM field by default, ``"reasoning"`` for the OpenRouter / Groq one,
  ``"none"`` to drop it; OpenAI itself streams no reasoning).
* Tool calls are ``delta.tool_calls[]`` fragments keyed by ``index``: the
  call's position among the *carried* calls of its choice (the SDK looks the
  call up by list position, so indexes have no gaps). ``id``, ``type`` and
  ``function.name`` are sent once, when known (the SDK concatenates repeated
  strings); every ``function.arguments`` fragment as it arrives.
* The finish chunk has an empty delta and the mapped ``finish_reason``; when
  every choice has finished, the usage chunk (``choices: []``, option
  ``include_usage``, with which every other chunk says ``usage: null``) and
  ``[DONE]``. A cut stream (status ``incomplete`` or
  ``cancelled``) gets neither a ``finish_reason`` nor ``[DONE]``.
* An error is a ``{"error": {"message", "type", "param", "code"}}`` chunk (the
  SDK raises ``APIError`` on it); nothing follows it.

The mapping rules are ``_mapping.py``'s table.
"""

from __future__ import annotations

import secrets
from typing import Any, Literal

from ..events import (
    ErrorReceived,
    MessageCompleted,
    MessageStarted,
    ReasoningDelta,
    RefusalDelta,
    TextDelta,
    ToolCallArgumentsDelta,
    ToolCallCompleted,
    ToolCallStarted,
)
from ._base import Call, Encoder, dumps, quote, sse, started_event
from ._mapping import lossy_stop_reason, target_stop_reason

__all__ = ["OpenAIChatEncoder"]

ChatReasoning = Literal["reasoning_content", "reasoning", "none"]
#: A chunk's end: the choice's, then ``"usage": null`` when the final chunk will
#: carry usage ("All other chunks will also include a usage field, but with a
#: null value", ``stream_options.include_usage``).
_TAILS = {
    True: ',"logprobs":null,"finish_reason":null}],"usage":null}',
    False: ',"logprobs":null,"finish_reason":null}]}',
}
_DONE = sse("[DONE]")


class _Choice:
    __slots__ = ("calls", "ended", "finished", "prefix")

    def __init__(self, prefix: str) -> None:
        #: ``{"id":…,"choices":[{"index":N,"delta":`` for this choice.
        self.prefix = prefix
        #: Calls carried so far (their target indexes are 0..len-1).
        self.calls = 0
        #: ``MessageCompleted`` arrived.
        self.ended = False
        #: Its ``finish_reason`` was sent.
        self.finished = False


class OpenAIChatEncoder(Encoder):
    """Unified events -> Chat Completions chunks (``sw.encoder("openai-chat")``)."""

    target = "openai-chat"

    def __init__(self, *, chat_reasoning: ChatReasoning = "reasoning_content", **options: Any):
        """Options: ``chat_reasoning`` names the delta field for reasoning
        (``reasoning_content``, ``reasoning``) or drops it (``none``, a declared
        downgrade); the rest are ``Encoder``'s."""
        if chat_reasoning not in ("reasoning_content", "reasoning", "none"):
            raise ValueError(
                f"chat_reasoning must be reasoning_content, reasoning or none, "
                f"not {chat_reasoning!r}"
            )
        super().__init__(**options)
        self._reasoning_key = None if chat_reasoning == "none" else quote(chat_reasoning)
        self._head: str | None = None
        self._choices: dict[int, _Choice] = {}
        self._calls: dict[tuple[int, int], Call] = {}
        self._done = False
        self._tail = _TAILS[bool(self._include_usage)]

    # --- chunks ---------------------------------------------------------------------

    def _chunk_head(self) -> str:
        head = self._head
        if head is None:
            response_id = self._id_option or self._message_id or f"chatcmpl-{secrets.token_hex(12)}"
            head = self._head = (
                '{"id":'
                + quote(response_id)
                + ',"object":"chat.completion.chunk","created":'
                + str(self._created)
                + ',"model":'
                + quote(self._model_name())
            )
        return head

    def _choice(self, index: int, out: list[bytes]) -> _Choice:
        choice = self._choices.get(index)
        if choice is None:
            prefix = self._chunk_head() + ',"choices":[{"index":' + str(index) + ',"delta":'
            choice = self._choices[index] = _Choice(prefix)
            out.append(sse(prefix + '{"role":"assistant","content":""}' + self._tail))
        return choice

    def _delta(self, index: int, delta: str, out: list[bytes]) -> None:
        choice = self._choices.get(index) or self._choice(index, out)
        out.append(sse(choice.prefix + delta + self._tail))

    # --- content --------------------------------------------------------------------

    def _on_started(self, event: MessageStarted, out: list[bytes]) -> None:
        self._record_start(event)
        self._choice(event.choice, out)

    def _on_text(self, event: TextDelta, out: list[bytes]) -> None:
        choice = self._choices.get(event.choice) or self._choice(event.choice, out)
        out.append(sse(choice.prefix + '{"content":' + quote(event.text) + "}" + self._tail))

    def _on_refusal(self, event: RefusalDelta, out: list[bytes]) -> None:
        self._delta(event.choice, '{"refusal":' + quote(event.text) + "}", out)

    def _on_reasoning(self, event: ReasoningDelta, out: list[bytes]) -> None:
        if event.text:
            key = self._reasoning_key
            if key is None:
                self._downgrade("reasoning")
            else:
                if event.kind == "summary":
                    self._downgrade("reasoning_summary")
                self._delta(event.choice, "{" + key + ":" + quote(event.text) + "}", out)
        if event.signature:
            self._downgrade("reasoning_signature")
        if event.redacted:
            self._downgrade("redacted_reasoning")

    # --- tool calls -----------------------------------------------------------------

    def _on_call_started(self, event: ToolCallStarted, out: list[bytes]) -> None:
        key = (event.choice, event.index)
        if key in self._calls:
            return
        choice = self._choices.get(event.choice) or self._choice(event.choice, out)
        call = self._calls[key] = Call(event, choice.calls)
        if event.executor == "server":
            call.dropped = True
            self._downgrade("server_tool_call")
            return
        choice.calls += 1
        if call.free_text:
            self._downgrade("custom_tool_call")
        if call.builtin is not None:
            self._downgrade_builtin(call.builtin)
        call.opened = True
        self._fragment(call, "", out, start=True)

    def _fragment(self, call: Call, arguments: str, out: list[bytes], start: bool = False) -> None:
        fields = '{"index":' + str(call.index)
        if call.id is not None and not call.id_sent:
            call.id_sent = True
            fields += ',"id":' + quote(call.id)
        if start:
            fields += ',"type":"function"'
        function = '"arguments":' + quote(arguments)
        if call.name is not None and not call.name_sent:
            call.name_sent = True
            function = '"name":' + quote(call.name) + "," + function
        delta = '{"tool_calls":[' + fields + ',"function":{' + function + "}}]}"
        self._delta(call.choice, delta, out)

    def _on_arguments(self, event: ToolCallArgumentsDelta, out: list[bytes]) -> None:
        call = self._calls.get((event.choice, event.index))
        if call is None or call.dropped:
            return
        if call.id is None and event.id is not None:
            call.id = event.id
        call.parts.append(event.delta)
        self._fragment(call, call.wire_fragment(event.delta), out)

    def _on_call_completed(self, event: ToolCallCompleted, out: list[bytes]) -> None:
        key = (event.choice, event.index)
        call = self._calls.get(key)
        if call is None:
            self._on_call_started(started_event(event), out)
            call = self._calls[key]
        if call.dropped or call.completed:
            return
        call.completed = True
        call.id = call.id or event.id
        call.name = call.name or event.name
        streamed = call.raw()
        raw = event.raw_arguments
        if not raw and not streamed and not call.wrap and event.arguments == {}:
            raw = "{}"  # no arguments: chat's own "{}" (clients json.loads it)
        rest = ""
        if raw.startswith(streamed):
            if len(raw) > len(streamed):
                call.parts.append(raw[len(streamed) :])
                rest = call.wire_fragment(raw[len(streamed) :])
        else:
            self._downgrade("arguments_mismatch")
        rest += call.wire_end()
        if (
            rest
            or (call.id is not None and not call.id_sent)
            or (call.name is not None and not call.name_sent)
        ):
            self._fragment(call, rest, out)

    # --- endings --------------------------------------------------------------------

    def _on_completed(self, event: MessageCompleted, out: list[bytes]) -> None:
        status = event.status
        index = event.choice
        if status == "completed" or status == "truncated":
            choice = self._choices.get(index) or self._choice(index, out)
            if choice.ended:
                return
            choice.ended = True
            stop = event.stop_reason
            if lossy_stop_reason(self.target, stop):
                self._downgrade("stop_reason")
            finish = target_stop_reason(self.target, stop, event.provider_stop_reason)
            tail = '{},"logprobs":null,"finish_reason":' + quote(finish) + "}]"
            tail += ',"usage":null}' if self._include_usage else "}"
            out.append(sse(choice.prefix + tail))
            choice.finished = True
            for (owner, _), call in self._calls.items():
                if owner == index and not call.completed and not call.dropped:
                    self._downgrade("unfinished_tool_call")
        else:
            self._unfinished_calls(index)
            if self._end_failed(status, out):
                return
            if status == "cancelled":
                self._downgrade("cancelled")
            cut = self._choices.get(index)
            if cut is None or cut.ended:
                return  # a cut choice that never started: nothing to announce
            cut.ended = True
        if all(c.ended for c in self._choices.values()):
            self._finish(out)

    def _unfinished_calls(self, choice: int | None) -> None:
        """Calls the source completed in a choice that gets no finish_reason."""
        for (index, _), call in self._calls.items():
            if call.completed and not call.dropped and (choice is None or index == choice):
                ended = self._choices.get(index)
                if ended is None or not ended.finished:
                    self._downgrade("tool_call_completion")

    def _finish(self, out: list[bytes]) -> None:
        if self._done:
            return
        self._done = True
        usage = self._usage
        if usage is not None and self._include_usage:
            out.append(
                sse(self._chunk_head() + ',"choices":[],"usage":' + self._usage_json(usage) + "}")
            )
            self._usage_sent = usage
        if all(c.finished for c in self._choices.values()):
            out.append(_DONE)

    def _usage_json(self, usage: Any) -> str:
        f = self._figures(usage)
        body: dict[str, Any] = {
            "prompt_tokens": f.input_total or 0,
            "completion_tokens": f.output or 0,
            "total_tokens": f.total_or_sum,
        }
        if f.cache_read is not None:
            body["prompt_tokens_details"] = {"cached_tokens": f.cache_read}
        if f.reasoning is not None:
            body["completion_tokens_details"] = {"reasoning_tokens": f.reasoning}
        if f.cache_write:
            self._downgrade("usage_cache_creation")
        return dumps(body)

    def _on_error(self, event: ErrorReceived, out: list[bytes]) -> None:
        self._unfinished_calls(None)
        self._send_error(event.type, event.code, event.message, out)

    def _send_error(
        self, kind: str | None, code: str | int | None, message: str | None, out: list[bytes]
    ) -> None:
        error = {"message": message, "type": kind, "param": None, "code": code}
        out.append(sse(dumps({"error": error})))
        self._fail()

    def _on_close(self, out: list[bytes]) -> None:
        if not self._failed and not self._done and self._choices:
            # No MessageCompleted for some choice: the stream is cut; usage if known.
            usage = self._usage
            if usage is not None and self._include_usage:
                out.append(
                    sse(
                        self._chunk_head()
                        + ',"choices":[],"usage":'
                        + self._usage_json(usage)
                        + "}"
                    )
                )
                self._usage_sent = usage
            self._done = True
