"""The ``gemini`` adapter: Gemini ``streamGenerateContent?alt=sse`` (and Vertex AI's).

With ``alt=sse`` the Gemini API streams server-sent events whose data is one
``GenerateContentResponse`` JSON object each, separated by CRLF blank lines
(``\\r\\n\\r\\n``; the Rust SSE decoder handles every line ending), with no
end marker: the stream ends at EOF, and a ``finishReason`` on each candidate
is the terminal signal (Gemini API reference, ``models.streamGenerateContent``,
ai.google.dev/api/generate-content; Vertex AI reference,
``projects.locations.publishers.models.streamGenerateContent``; both checked
2026-11-29). What the chunks mean is shared with ``gemini-json`` and lives in
``gemini_chunks.py`` (candidates, endings, usage, errors) and
``gemini_parts.py`` (text, thoughts, signatures, function calls, Vertex
streamed arguments).

The SSE layer itself:

* an event with a name other than ``message`` -> ``UnknownEvent``;
* an empty data payload is a keep-alive; ``[DONE]`` (which Gemini never
  sends, but OpenAI-style proxies add) is ignored with a warning
  ``unexpected_done``; any other payload that is not JSON -> status ``error``
  (phase ``framing``, type ``invalid_json``).
* A body that is JSON rather than SSE (its first non-blank byte is ``{`` or
  ``[``: an HTTP error's ``{"error": ...}``, or a request made without
  ``alt=sse``) is parsed as the JSON array of ``gemini-json`` instead of
  being silently read as an empty event stream; a ``not_sse`` warning says so.

``result.provider_content`` holds candidate 0's parts in Gemini's request
format, to send back as ``model_content(result)`` in the next turn.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from .._core import DEFAULT_MAX_EVENT_BYTES, SseEvent
from .._json import failure, loads
from ..errors import UsageError
from ..events import Event
from ..kinds import EnumNumbering
from ..result import StreamResult
from ._base import SseStream
from .gemini_chunks import SHAPES, GeminiChunks
from .gemini_json import JsonBody, sync_json_counters

__all__ = ["GeminiStream", "model_content"]

_BLANK = b" \t\r\n"


def model_content(result: StreamResult) -> dict[str, Any]:
    """The ``Content`` to append to the next request's ``contents``:
    ``{"role": "model", "parts": [...]}`` with candidate 0's parts, thought
    signatures on the parts that carried them."""
    return {"role": "model", "parts": [dict(part) for part in result.provider_content]}


class GeminiStream(SseStream):
    """Gemini SSE stream adapter (``sw.stream("gemini")``)."""

    protocol = "gemini"
    shapes = SHAPES

    def __init__(
        self,
        *,
        max_candidates: int = 128,
        enum_numbering: EnumNumbering = "either",
        **options: Any,
    ) -> None:
        """Options: ``max_candidates`` caps the candidates; ``enum_numbering``
        (``"either"``, ``"vertex"`` or ``"gemini-api"``) says whose numbers an
        enum sent as an integer is read by (``gemini_enums.py``); the rest are
        ``SseStream``'s (``max_event_bytes`` also caps a JSON body's element)
        and ``Stream``'s."""
        self._max_element_bytes = int(options.get("max_event_bytes", DEFAULT_MAX_EVENT_BYTES))
        super().__init__(**options)
        self._chunks = GeminiChunks(
            self._acc, max_candidates=max_candidates, enum_numbering=enum_numbering
        )
        self._on_chunk = self._chunks.on_chunk
        self._fast_text = self._chunks.fast_text
        self._take = self._chunks.take
        #: ``sniff`` until the first non-blank byte, then ``sse`` or ``json``.
        self._mode = "sniff"
        self._json: JsonBody | None = None
        self._skipped = 0

    def feed(self, data: bytes | bytearray | memoryview) -> list[Event]:
        if self._mode == "sse":
            return super().feed(data)
        if self._mode == "sniff" and not self._closed:
            head = bytes(data).lstrip(_BLANK)
            if head[:1] in (b"{", b"["):
                self._mode = "json"
                self._json = JsonBody(self._acc, self._chunks, self._max_element_bytes)
                self._acc.warn(
                    "not_sse",
                    "the body is JSON, not an event stream: read as the JSON array of "
                    "streamGenerateContent without alt=sse",
                )
                self._skipped = memoryview(data).nbytes - len(head)
                data = head
            elif head:
                self._mode = "sse"
                self._sink = self._chunks
        if self._json is not None:
            if self._closed:
                raise UsageError(f"the {self.protocol} stream was closed; it cannot be fed")
            self._acc.cached = None
            out: list[Event] = []
            self._json.feed(data, out)
            return self._emit(out)
        return super().feed(data)

    def _end_input(self, out: list[Event]) -> None:
        if self._json is None:
            super()._end_input(out)
        else:
            self._json.close()

    def _on_sse(self, events: Sequence[SseEvent | tuple[Any, ...]], out: list[Event]) -> None:
        on_chunk = self._on_chunk
        fast_text = self._fast_text
        take = self._take
        at, count = 0, len(events)
        while at < count:
            event = events[at]
            if isinstance(event, tuple):
                # A chunk of SHAPES, matched in Rust while framing (gemini_chunks.py):
                # a run taken in Rust, or this one by fast_text, or the general path.
                end = take(events, at, out)
                if end != at:
                    at = end
                    continue
                _, text, index, usage, response_id, ticket = event
                at += 1
                if fast_text(text, index, usage, response_id, out):
                    continue
                event = self._decoder.matched_event(ticket)
            else:
                at += 1
            if event.event != "message":
                out.append(self._acc.unknown_event(event.event, event.data))
                continue
            data = event.data
            try:
                chunk = loads(data)
            except ValueError as exc:
                self._not_json(data, exc, out)
                continue
            on_chunk(chunk, out)

    def _not_json(self, data: str, exc: ValueError, out: list[Event]) -> None:
        stripped = data.strip()
        if not stripped:
            return  # an empty data payload is a keep-alive
        if stripped == "[DONE]":
            self._acc.warn("unexpected_done", "a [DONE] payload (not Gemini's) was ignored")
            return
        kind, message = failure(exc, data, "a data payload")
        out.append(self._acc.fail("framing", kind, None, message))

    def _sync_counters(self) -> None:
        super()._sync_counters()
        if self._json is not None:
            fed = self._decoder.bytes_fed + self._skipped
            sync_json_counters(self._acc, self._json, fed)
