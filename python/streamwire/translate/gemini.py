"""The ``gemini`` encoder: unified events as a Gemini ``streamGenerateContent?alt=sse`` body.

Writes what the Gemini API streams with ``alt=sse`` (API reference,
``models.streamGenerateContent``, ``GenerateContentResponse``, ``Candidate``,
``Part``, ``UsageMetadata``, ai.google.dev/api/generate-content; the
"Thought signatures" guide, ai.google.dev/gemini-api/docs/thought-signatures;
both checked 2026-11-29): ``data: {GenerateContentResponse}`` events, each
with *new* parts, ``modelVersion`` and ``responseId``, and no end marker.

* Text is a ``{"text"}`` part, reasoning a ``{"text", "thought": true}`` part,
  one chunk per delta, for its candidate (``index``: the choice).
* A function call is one ``{"functionCall": {"name", "args", "id"}}`` part,
  sent when the call completes: Gemini streams calls whole, so the argument
  fragments are held until then (``args`` is the parsed object; a synthetic
  id is not sent: the client's parser makes its own, as it does for Gemini).
* A thought signature rides on the next part of the same ``feed`` call for
  its candidate (the function call or thought it signs, as Gemini sends it),
  else on an empty ``{"text": ""}`` part of its own.
* ``usageMetadata`` goes on the next chunk after a report and on the finish
  chunk: ``promptTokenCount`` counts cached tokens, ``candidatesTokenCount`` is
  output less reasoning, ``thoughtsTokenCount`` the reasoning.
* The finish chunk carries the candidate's ``finishReason``. A cut stream
  gets none (and its usage, if unsent, on a chunk of its own). An error is a
  ``{"error": {"code", "message", "status"}}`` chunk; nothing follows it. Its
  ``code`` is an HTTP status, as Gemini's is (clients compare it as a number:
  google-genai raises a ``TypeError`` on any other): the source's own when it
  is one, else one for its type (``error_code``); ``status`` keeps the source's
  type, so that a client can still tell what failed.

Refusals and redacted reasoning have no Gemini form (declared downgrades).
The mapping rules are ``_mapping.py``'s table.
"""

from __future__ import annotations

import secrets
from typing import Any

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
from ..result import Usage
from ._base import Call, Encoder, dumps, quote, sse, started_event
from ._mapping import lossy_stop_reason, target_stop_reason

__all__ = ["GeminiEncoder", "error_code"]

#: An error type's HTTP status, by a word in it (the first that matches).
_STATUS_WORDS: tuple[tuple[tuple[str, ...], int], ...] = (
    (("rate", "throttl", "quota", "exhausted", "too_many"), 429),
    (("overload", "unavailable", "capacity"), 503),
    (("timeout", "deadline"), 504),
    (("invalid", "bad_request", "validation"), 400),
    (("permission", "forbidden"), 403),
    (("auth", "unauthenticated", "api_key"), 401),
    (("not_found",), 404),
)


def error_code(kind: str | None, code: str | int | None) -> int:
    """The HTTP status a Gemini error chunk carries as its ``code``: the source's
    code when it is one (100-599), else the status its type names (a rate limit
    429, an overload 503, ...), else 500."""
    if type(code) is int and 100 <= code <= 599:
        return code
    if isinstance(code, str) and code.isdigit() and 100 <= int(code) <= 599:
        return int(code)
    words = (kind or "").lower()
    for keys, status in _STATUS_WORDS:
        if any(k in words for k in keys):
            return status
    return 500


class _Candidate:
    __slots__ = ("calls", "ended", "order", "prefix", "sent", "signature", "suffix")

    def __init__(self, index: int) -> None:
        self.prefix = '{"candidates":[{"content":{"parts":['
        self.suffix = '],"role":"model"},"index":' + str(index) + "}]"
        self.signature: str | None = None
        #: Client calls sent for this candidate.
        self.calls = 0
        self.ended = False
        #: A chunk of this candidate was sent (the client has seen it start).
        self.sent = False
        #: Carried calls in start order, with their part once complete (None before):
        #: a call is sent when every call started before it was (calls keep their order).
        self.order: list[tuple[Call, str | None]] = []


class GeminiEncoder(Encoder):
    """Unified events -> Gemini response chunks (``sw.encoder("gemini")``)."""

    target = "gemini"

    def __init__(self, **options: Any) -> None:
        """Options are ``Encoder``'s."""
        super().__init__(**options)
        self._tail: str | None = None
        self._candidates: dict[int, _Candidate] = {}
        self._calls: dict[tuple[int, int], Call] = {}

    # --- chunks ---------------------------------------------------------------------

    def _chunk_tail(self) -> str:
        tail = self._tail
        if tail is None:
            response_id = self._id_option or self._message_id or secrets.token_hex(12)
            tail = self._tail = (
                ',"modelVersion":'
                + quote(self._model_name())
                + ',"responseId":'
                + quote(response_id)
                + "}"
            )
        return tail

    def _candidate(self, index: int) -> _Candidate:
        cand = self._candidates.get(index)
        if cand is None:
            cand = self._candidates[index] = _Candidate(index)
        return cand

    def _usage_field(self) -> str:
        usage = self._usage
        if usage is None or usage is self._usage_sent:
            return ""
        self._usage_sent = usage
        return ',"usageMetadata":' + self._usage_json(usage)

    def _usage_json(self, usage: Usage) -> str:
        f = self._figures(usage)
        body: dict[str, int] = {}
        if f.input_total is not None:
            body["promptTokenCount"] = f.input_total
        if f.output is not None:
            body["candidatesTokenCount"] = max(0, f.output - (f.reasoning or 0))
        body["totalTokenCount"] = f.total_or_sum
        if f.reasoning is not None:
            body["thoughtsTokenCount"] = f.reasoning
        if f.cache_read is not None:
            body["cachedContentTokenCount"] = f.cache_read
        if f.cache_write:
            self._downgrade("usage_cache_creation")
        return dumps(body)

    def _part(self, index: int, part: str, out: list[bytes]) -> None:
        """One chunk with one part for candidate ``index`` (its pending signature on it)."""
        cand = self._candidates.get(index) or self._candidate(index)
        cand.sent = True
        signature = cand.signature
        if signature is not None and part:
            cand.signature = None
            part = part[:-1] + ',"thoughtSignature":' + quote(signature) + "}"
        out.append(sse(cand.prefix + part + cand.suffix + self._usage_field() + self._chunk_tail()))

    def _announce(self, out: list[bytes]) -> None:
        """An empty chunk for each started candidate the client has not seen yet (before
        an error or a cut end: the message did start, with its id and model)."""
        for index, cand in self._candidates.items():
            if not cand.sent:
                self._part(index, "", out)

    def _flush_signature(self, index: int, out: list[bytes]) -> None:
        cand = self._candidates.get(index)
        if cand is not None and cand.signature is not None:
            self._part(index, '{"text":""}', out)

    # --- content --------------------------------------------------------------------

    def _on_started(self, event: MessageStarted, out: list[bytes]) -> None:
        self._record_start(event)
        self._candidate(event.choice)

    def _on_text(self, event: TextDelta, out: list[bytes]) -> None:
        cand = self._candidates.get(event.choice)
        tail = self._tail
        if (
            cand is not None
            and tail is not None
            and cand.signature is None
            and self._usage is self._usage_sent
        ):
            # The fast path: ``_part`` with nothing to add to the chunk.
            cand.sent = True
            text = '{"text":' + quote(event.text) + "}"
            out.append(sse(cand.prefix + text + cand.suffix + tail))
        else:
            self._part(event.choice, '{"text":' + quote(event.text) + "}", out)

    def _on_refusal(self, event: RefusalDelta, out: list[bytes]) -> None:
        self._downgrade("refusal")
        self._part(event.choice, '{"text":' + quote(event.text) + "}", out)

    def _on_reasoning(self, event: ReasoningDelta, out: list[bytes]) -> None:
        index = event.choice
        cand = self._candidates.get(index) or self._candidate(index)
        if event.text:
            if event.kind == "summary":
                self._downgrade("reasoning_summary")
            part = '{"text":' + quote(event.text) + ',"thought":true}'
            if event.signature:
                self._flush_signature(index, out)
                cand.signature = event.signature
            self._part(index, part, out)
        elif event.signature:
            self._flush_signature(index, out)
            cand.signature = event.signature
        if event.redacted:
            self._downgrade("redacted_reasoning")

    def _end_of_feed(self, out: list[bytes]) -> None:
        if self._failed:
            return
        for index, cand in self._candidates.items():
            if cand.signature is not None:
                self._flush_signature(index, out)

    # --- tool calls: held until complete ------------------------------------------------

    def _on_call_started(self, event: ToolCallStarted, out: list[bytes]) -> None:
        key = (event.choice, event.index)
        if key in self._calls:
            return
        call = self._calls[key] = Call(event, 0)
        call.held = True
        if event.executor == "server":
            call.dropped = True
            self._downgrade("server_tool_call")
            return
        if call.free_text:
            self._downgrade("custom_tool_call")
        if call.builtin is not None:
            self._downgrade_builtin(call.builtin)
        cand = self._candidates.get(event.choice) or self._candidate(event.choice)
        cand.order.append((call, None))

    def _on_arguments(self, event: ToolCallArgumentsDelta, out: list[bytes]) -> None:
        call = self._calls.get((event.choice, event.index))
        if call is not None and not call.dropped:
            call.parts.append(event.delta)

    def _on_call_completed(self, event: ToolCallCompleted, out: list[bytes]) -> None:
        key = (event.choice, event.index)
        call = self._calls.get(key)
        if call is None:
            self._on_call_started(started_event(event), out)
            call = self._calls[key]
        if call.dropped or call.completed:
            return
        call.completed = True
        cand = self._candidates.get(event.choice) or self._candidate(event.choice)
        part: str | None = None
        if event.arguments is None:
            call.dropped = True
            self._downgrade("invalid_tool_arguments")
        else:
            name = event.name or call.name
            if not name:
                self._downgrade("tool_call_identity")
            function: dict[str, Any] = {"name": name or "", "args": event.arguments}
            call_id = event.id or call.id
            if call_id is not None and event.id_source == "provider":
                function["id"] = call_id
            part = dumps({"functionCall": function})
        cand.order = [(c, part if c is call else p) for c, p in cand.order]
        self._send_calls(event.choice, cand, out, everything=False)

    def _send_calls(self, index: int, cand: _Candidate, out: list[bytes], everything: bool) -> None:
        """Sends the complete calls at the front of the order (all complete ones at the end)."""
        order = cand.order
        while order:
            call, part = order[0]
            if not call.completed and not everything:
                return
            del order[0]
            if part is not None:
                if call.executor == "client":
                    cand.calls += 1
                self._part(index, part, out)

    # --- endings --------------------------------------------------------------------

    def _on_completed(self, event: MessageCompleted, out: list[bytes]) -> None:
        index = event.choice
        cand = self._candidates.get(index) or self._candidate(index)
        if cand.ended:
            return
        cand.ended = True
        self._send_calls(index, cand, out, everything=True)
        self._unfinished(index)
        status = event.status
        if status == "completed" or status == "truncated":
            stop = event.stop_reason
            if lossy_stop_reason(self.target, stop) or (
                stop in ("stop", "tool_calls") and (stop == "tool_calls") != (cand.calls > 0)
            ):
                self._downgrade("stop_reason")
            finish = target_stop_reason(self.target, stop, event.provider_stop_reason)
            cand.sent = True
            parts = ""
            if cand.signature is not None:
                parts = '{"text":"","thoughtSignature":' + quote(cand.signature) + "}"
                cand.signature = None
            usage = self._usage
            tail = ""
            if usage is not None:
                self._usage_sent = usage
                tail = ',"usageMetadata":' + self._usage_json(usage)
            out.append(
                sse(
                    cand.prefix
                    + parts
                    + '],"role":"model"},"finishReason":'
                    + quote(finish)
                    + ',"index":'
                    + str(index)
                    + "}]"
                    + tail
                    + self._chunk_tail()
                )
            )
        elif not self._end_failed(status, out):
            if status == "cancelled":
                self._downgrade("cancelled")
            self._flush_signature(index, out)
            self._announce(out)
            self._usage_only(out)

    def _unfinished(self, index: int | None) -> None:
        """Calls of a candidate (or of all) that the source never completed: never sent."""
        for (choice, _), call in self._calls.items():
            if (index is None or choice == index) and not call.completed and not call.dropped:
                call.dropped = True
                self._downgrade("unfinished_tool_call")

    def _usage_only(self, out: list[bytes]) -> None:
        field = self._usage_field()
        if field:
            out.append(sse("{" + field[1:] + self._chunk_tail()))

    def _on_error(self, event: ErrorReceived, out: list[bytes]) -> None:
        self._send_error(event.type, event.code, event.message, out)

    def _send_error(
        self, kind: str | None, code: str | int | None, message: str | None, out: list[bytes]
    ) -> None:
        for index, cand in self._candidates.items():
            self._send_calls(index, cand, out, everything=True)
            self._flush_signature(index, out)
        self._unfinished(None)
        self._announce(out)
        status = error_code(kind, code)
        if code is not None and code != status:
            self._downgrade("error_code")
        out.append(sse(dumps({"error": {"code": status, "message": message, "status": kind}})))
        self._fail()

    def _on_close(self, out: list[bytes]) -> None:
        if self._failed:
            return
        for index, cand in self._candidates.items():
            self._send_calls(index, cand, out, everything=True)
            self._flush_signature(index, out)
        self._unfinished(None)
        self._announce(out)
        self._usage_only(out)
