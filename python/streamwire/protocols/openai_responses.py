"""The ``openai-responses`` adapter: OpenAI Responses API streaming over SSE.

Implements the body of ``POST /v1/responses`` with ``stream: true`` as the
OpenAI API reference describes it ("Streaming events",
platform.openai.com/docs/api-reference/responses-streaming, checked
2026-11-29): SSE events ``event: <type>`` / ``data: <JSON event>``, each JSON
object carrying its own ``type`` and a ``sequence_number``; the stream ends
with ``response.completed``, ``response.incomplete`` or ``response.failed``,
and has no ``[DONE]`` sentinel (compatible servers such as OpenRouter send
one, and omit the ``event:`` lines: both are tolerated). docs/design.md (checked
2026-11-29) gives the statuses, tool-call and usage rules.

This module is the SSE layer only: it decodes each ``data:`` payload once
(``streamwire._json.loads``) and hands the dict to a ``ResponsesMachine``
(``openai_responses_machine.py``), which the WebSocket mode
(``openai-responses-ws``) runs per response as well. Per SSE event:

* the JSON ``type`` is what is dispatched on; the SSE ``event:`` name is only
  a fallback for a payload without ``type``. A name that disagrees with the
  ``type`` is a warning (``event_name_mismatch``);
* ``[DONE]`` -> ``ResponsesMachine.on_done_marker``; an empty payload is a
  keep-alive; a payload that is not JSON is a framing error
  (``invalid_json``), except under ``event: error``, where the text is the
  error message; JSON that is not an object is ``invalid_payload``.

``cancel()`` after the terminal event decides the status as ``close()``
would: the response had ended, the caller only stopped reading.

Tool results (``sw.tool_result``) quote the call's ``call_id``; quoting the
item id (``fc_...``) instead is refused with a message naming the right id
(see ``unknown_call_id_hint``).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from .._core import ShapeMatcher, SseEvent
from .._json import failure, loads
from ..events import Event, new_text_delta
from ..result import StreamResult
from ._base import SseStream, Stream
from ._tool_hooks import UNKNOWN_ID_HINTS
from .openai_responses_items import Part, open_text_part
from .openai_responses_machine import ResponsesMachine

__all__ = ["SHAPES", "OpenAIResponsesStream", "ResponsesMachine", "unknown_call_id_hint"]

#: The shape of a text delta as OpenAI sends it, for the fast path (matched in
#: Rust while framing, see ``ShapeMatcher``): captures ``sequence_number``,
#: ``item_id``, ``content_index`` (None when absent) and ``delta``. Objects are
#: closed: a payload with any other field is declined and takes the general path.
_TEXT_DELTA = {
    "type": "response.output_text.delta",
    "sequence_number?": "$int",
    "item_id": "$str",
    "output_index?": "$any",
    "content_index?": "$int",
    "delta": "$str",
    "logprobs?": "$any",
    "obfuscation?": "$any",
}
#: Named events (OpenAI) and data-only events (compatible servers).
SHAPES = ShapeMatcher([("response.output_text.delta", _TEXT_DELTA), ("message", _TEXT_DELTA)])


class OpenAIResponsesStream(SseStream):
    """OpenAI Responses stream adapter (``sw.stream("openai-responses")``)."""

    protocol = "openai-responses"
    shapes = SHAPES

    def __init__(self, **options: Any) -> None:
        """Options are ``SseStream``'s and ``Stream``'s (``max_content_blocks``
        caps the output items plus their content parts, ...)."""
        super().__init__(**options)
        #: The response's state machine (``openai_responses_machine.py``).
        self.machine = ResponsesMachine(self._acc)
        #: The fast path's last part: ``(item_id, content_index, part)``, or None.
        self._fast: tuple[str, int, Part] | None = None

    def _on_sse(self, events: Sequence[SseEvent | tuple[Any, ...]], out: list[Event]) -> None:
        machine = self.machine
        parts = machine.items.parts
        text = machine.choice.text
        append = out.append
        fast = self._fast
        seq = machine.sequence
        streaming = machine.phase == "streaming"
        for event in events:
            if isinstance(event, tuple):
                # The fast path (measured: nearly every event of a stream is one):
                # a text delta of the exact shape of _TEXT_DELTA, for an open text
                # part the general path made, in sequence. It does exactly what the
                # general path does for such an event (tested:
                # test_fast_path_matches_general_path), with far fewer calls.
                _, number, item_id, index, delta, ticket = event
                if streaming and (number is None or (seq is not None and number == seq + 1)):
                    if index is None:
                        index = 0
                    if fast is not None and item_id == fast[0] and index == fast[1]:
                        part: Part | None = fast[2]
                    else:
                        part = open_text_part(parts, item_id, index)
                        if part is not None:
                            fast = (item_id, index, part)
                    if part is not None:
                        if number is not None:
                            seq = number
                        if delta:
                            part.chunks.append(delta)
                            text.append(delta)
                            append(new_text_delta(delta, 0))
                        continue
                sse = self._decoder.matched_event(ticket)
            else:
                sse = event
            machine.sequence = seq
            self._on_event(sse, out)
            # The general path may have changed anything: reload, forget the part.
            seq = machine.sequence
            streaming = machine.phase == "streaming"
            fast = None
        machine.sequence = seq
        self._fast = fast

    def _on_event(self, event: SseEvent, out: list[Event]) -> None:
        """The general path: one SSE event, decoded, to the machine."""
        data = event.data
        try:
            obj = loads(data)
        except ValueError as exc:
            self._not_json(event, exc, out)
            return
        if type(obj) is not dict:
            message = "a data payload is not a JSON object"
            out.append(self._acc.fail("framing", "invalid_payload", None, message))
            return
        name = event.event
        if name != "message" and name != obj.get("type"):
            self._named(name, obj)
        self.machine.on_event(obj, out, data)

    def _named(self, name: str, obj: dict[str, Any]) -> None:
        kind = obj.get("type")
        if kind is None:
            obj["type"] = name  # the event name is all the payload has
        else:
            self._acc.warn(
                "event_name_mismatch",
                f"an SSE event named {name!r} carries a payload of type {kind!r}",
            )

    def _not_json(self, event: SseEvent, exc: ValueError, out: list[Event]) -> None:
        data = event.data
        stripped = data.strip()
        if stripped == "[DONE]":
            self.machine.on_done_marker(out)
        elif not stripped:
            pass  # an empty data payload is a keep-alive
        elif event.event == "error":
            self.machine.on_event({"type": "error", "message": data}, out, data)
        else:
            kind, message = failure(exc, data, "a data payload")
            out.append(self._acc.fail("framing", kind, None, message))

    def _on_eof(self, out: list[Event]) -> None:
        self.machine.on_eof(out)

    def cancel(self) -> list[Event]:
        if not self._closed and self.machine.terminal:
            # The response had ended: the caller only stopped reading.
            self._closed = True
            self._acc.cached = None
            out: list[Event] = []
            self.machine.on_eof(out)
            return self._emit(out)
        return super().cancel()


def unknown_call_id_hint(source: StreamResult | Stream, result: StreamResult, call_id: str) -> str:
    """Why ``call_id`` is not a call of this response, when it can tell: the item
    id of a call (``fc_...``) quoted instead of its ``call_id``."""
    if isinstance(source, OpenAIResponsesStream):
        for item in source.machine.items.items:
            call = item.call
            if item.id == call_id and call is not None and call.id is not None:
                return (
                    f": {call_id!r} is the output item id of the {call.type} call "
                    f"{call.name!r}; a tool result must quote its call_id {call.id!r}"
                )
    if call_id.startswith(("fc_", "ctc_")):
        calls = ", ".join(f"{c.id!r} ({c.name})" for c in result.tool_calls if c.id) or "none"
        return (
            f": {call_id!r} looks like an output item id; a tool result must quote the "
            f"call's call_id (this response's calls: {calls})"
        )
    return ""


# The WebSocket mode quotes call ids the same way.
UNKNOWN_ID_HINTS["openai-responses"] = unknown_call_id_hint
UNKNOWN_ID_HINTS["openai-responses-ws"] = unknown_call_id_hint
