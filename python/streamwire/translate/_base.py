"""The encoder interface every target protocol implements, and what they share.

An encoder is the mirror image of an adapter (``protocols/_base.py``): it is
fed unified events, as any adapter emits them, and returns the wire bytes of
its target protocol for them at once::

    enc = sw.encoder("anthropic", model=None, response_id=None, created=None,
                     include_usage=True, source="openai-chat")
    body = enc.feed(events)     # bytes for these events (b"" when the grammar must wait)
    body = enc.close()          # the input ended: whatever the grammar still needs
    enc.downgrades              # what the target could not carry, declared
    enc.content_type            # "text/event-stream"

It holds back only what the target's grammar forces it to (a Gemini call is
sent whole; an Anthropic ``message_start`` waits for the end of the ``feed``
call that started the message, so that input usage reported with it is in it).
The SSE framing is the Rust encoder's (``sw.encode_sse``). Everything the
target cannot carry is a declared downgrade of the mapping table
(``_mapping.py``): ``Downgrade(feature, detail, count)``, never silent.

Encoders are layer [4] of docs/design.md (checked 2026-11-29): the only clock they
read is ``time.time()``, once, for the ``created`` timestamp when the caller
gives none.

Common rules, for every target:

* an ``ErrorReceived`` becomes the target's own error event (never text), and
  is terminal: content after it is dropped (``after_error``);
* ``MessageCompleted`` decides the ending: ``completed`` and ``truncated``
  send the target's terminal events with the mapped stop reason; ``error``
  sends nothing more (the error event was sent); ``incomplete`` and
  ``cancelled`` cut the stream (no terminal event, so the client sees it
  incomplete); ``protocol_conflict`` sends an error event of that type;
* usage: the last ``UsageReported`` is what the target carries, converted
  between input conventions (``_usage.figures``); when it cannot be put on
  the wire, ``usage`` is declared at ``close()``.
"""

from __future__ import annotations

import json
import time
from abc import ABC, abstractmethod
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from json.encoder import encode_basestring
from typing import Any, ClassVar

from .._core import encode_sse
from .._json import escape_surrogates
from ..errors import UsageError
from ..events import (
    ErrorReceived,
    Event,
    MessageCompleted,
    MessageStarted,
    ReasoningDelta,
    RefusalDelta,
    TextDelta,
    ToolCallArgumentsDelta,
    ToolCallCompleted,
    ToolCallStarted,
    UnknownEvent,
    UsageReported,
)
from ..kinds import Executor
from ..result import Usage
from ._mapping import BUILTIN_CALLS, downgrade_detail
from ._usage import Figures, figures

__all__ = [
    "Call",
    "Downgrade",
    "Encoder",
    "dumps",
    "json_complete",
    "quote",
    "sse",
    "started_event",
]

#: A JSON string literal of a str (non-ASCII kept as UTF-8, as providers send it).
quote: Callable[[str], str] = encode_basestring


def dumps(value: Any) -> str:
    """Compact JSON, non-ASCII as UTF-8 (the providers' own style)."""
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def sse(data: str, event: str | None = None) -> bytes:
    """One SSE event, framed by the Rust encoder."""
    try:
        return encode_sse(data, event)
    except UnicodeEncodeError:
        # A lone surrogate (upstream JSON may carry one) has no UTF-8 form:
        # the JSON data says it as an escape, the same value for the client.
        return encode_sse(escape_surrogates(data), event)


def json_complete(text: str) -> bool:
    """Whether ``text`` is one whole JSON value (a call's arguments that may end)."""
    stripped = text.rstrip()
    if not stripped or stripped[-1] not in '}]"el0123456789':
        return False
    try:
        json.loads(stripped)
    except ValueError:
        return False
    return True


@dataclass(frozen=True, slots=True, kw_only=True)
class Downgrade:
    """Something the target protocol could not carry, as the mapping table declares it."""

    #: The feature (a row of the mapping table, e.g. ``reasoning_signature``).
    feature: str
    #: What was lost, or how it was carried instead.
    detail: str
    #: How many times a stream needed it (events, calls, reports).
    count: int


class Call:
    """One tool call as an encoder tracks it (choice, index, identity, arguments)."""

    __slots__ = (
        "arguments",
        "builtin",
        "choice",
        "closed",
        "completed",
        "dropped",
        "executor",
        "free_text",
        "held",
        "id",
        "id_sent",
        "id_source",
        "index",
        "item",
        "name",
        "name_sent",
        "native",
        "opened",
        "parts",
        "prefixed",
        "type",
        "wrap",
    )

    def __init__(self, event: ToolCallStarted, index: int, *, native_free_text: bool = False):
        self.choice = event.choice
        #: The call's index on the target's wire (carried calls only, in order).
        self.index = index
        self.id = event.id
        self.name = event.name
        self.type = event.type
        self.executor = event.executor
        self.id_source = event.id_source
        #: Free-text input (responses custom tools), not JSON.
        self.free_text = event.type == "custom_tool_call"
        #: The item type of a built-in tool the caller runs (``BUILTIN_CALLS``), or None.
        self.builtin = (
            event.type if event.type in BUILTIN_CALLS and event.executor == "client" else None
        )
        #: Sent as the built-in item of its own type (responses), not a function call.
        self.native = False
        #: The parsed arguments, once the source completed the call.
        self.arguments: Any = None
        #: Free text sent as JSON ``{"input": ...}`` (targets without free-text tools).
        self.wrap = self.free_text and not native_free_text
        #: The arguments streamed so far, verbatim (as the source sent them).
        self.parts: list[str] = []
        #: Held: not on the wire yet (identity unknown, or the target sends calls whole).
        self.held = False
        #: On the wire: the target's start of the call was sent.
        self.opened = False
        #: The target's end of the call was sent.
        self.closed = False
        #: The source completed it (``ToolCallCompleted``).
        self.completed = False
        #: Not carried (a provider-run call the target cannot offer).
        self.dropped = False
        #: The wrapped free-text prefix was sent.
        self.prefixed = False
        #: The target's item id (responses).
        self.item = ""
        #: The id and the name were sent (targets that send them once, when known).
        self.id_sent = False
        self.name_sent = False

    def raw(self) -> str:
        """The arguments so far, verbatim."""
        return "".join(self.parts)

    def wire_fragment(self, fragment: str) -> str:
        """A fragment as the target sends it: verbatim, or JSON-escaped inside
        ``{"input": "...`` for a free-text input carried as a function call."""
        if not self.wrap:
            return fragment
        escaped = quote(fragment)[1:-1]
        if not self.prefixed:
            self.prefixed = True
            return '{"input":"' + escaped
        return escaped

    def wire_end(self) -> str:
        """What ends a wrapped free-text input (``""`` otherwise, and once sent)."""
        if not self.wrap or self.closed:
            return ""
        if not self.prefixed:
            self.prefixed = True
            return '{"input":""}'
        return '"}'

    def complete_json(self) -> bool:
        """Whether the arguments so far can be the whole of them (see ``json_complete``)."""
        return self.free_text or json_complete(self.raw())


def started_event(event: ToolCallCompleted) -> ToolCallStarted:
    """The ``ToolCallStarted`` a completed call implies (for a call never started)."""
    return ToolCallStarted(
        index=event.index,
        id=event.id,
        name=event.name,
        type=event.type,
        executor=event.executor,
        id_source=event.id_source,
        choice=event.choice,
    )


Handler = Callable[[Any, list[bytes]], None]
#: What an error makes terminal: content and further errors are dropped after it.
_CONTENT_AND_ERRORS: tuple[type[Event], ...] = (
    TextDelta,
    ReasoningDelta,
    RefusalDelta,
    ToolCallStarted,
    ToolCallArgumentsDelta,
    ToolCallCompleted,
    ErrorReceived,
)


class Encoder(ABC):
    """A target protocol's encoder: unified events in, wire bytes out."""

    #: The target protocol's name (``sw.encoder(target)``).
    target: ClassVar[str]
    #: The response's ``Content-Type``.
    content_type: ClassVar[str] = "text/event-stream"

    def __init__(
        self,
        *,
        model: str | None = None,
        response_id: str | None = None,
        created: int | None = None,
        include_usage: bool = True,
        source: str | None = None,
    ) -> None:
        """Options common to every target.

        Args:
            model: the model name to send (default: the source's).
            response_id: the message / response id to send (default: the
                source's, else a generated one in the target's style).
            created: the creation time (Unix seconds) the target's grammar
                carries (default: now, read once).
            include_usage: send usage (openai-chat: the final usage chunk of
                ``stream_options.include_usage``); other targets always carry
                usage where their grammar puts it.
            source: the source protocol, for converting usage conventions
                (default: inferred from each report's own field names).
        """
        self._model_option = model
        self._id_option = response_id
        self._created = int(time.time()) if created is None else int(created)
        self._include_usage = include_usage
        self._source = source
        self._counts: dict[str, int] = {}
        self._closed = False
        self._failed = False
        #: The source's message id and model (first ``MessageStarted``).
        self._message_id: str | None = None
        self._model: str | None = None
        #: The last usage report, and the last one put on the wire.
        self._usage: Usage | None = None
        self._usage_sent: Usage | None = None
        #: Who runs each completed call, by (choice, index).
        self._completed: dict[tuple[int, int], Executor] = {}
        self._handlers: dict[type[Event], Handler] = {
            TextDelta: self._on_text,
            ReasoningDelta: self._on_reasoning,
            RefusalDelta: self._on_refusal,
            ToolCallStarted: self._on_call_started,
            ToolCallArgumentsDelta: self._on_arguments,
            ToolCallCompleted: self._on_completion,
            UsageReported: self._on_usage,
            MessageStarted: self._on_started,
            MessageCompleted: self._on_completed,
            ErrorReceived: self._on_error,
            UnknownEvent: self._on_unknown,
        }

    # --- the interface -------------------------------------------------------------

    def feed(self, events: Iterable[Event]) -> bytes:
        """The wire bytes for these events (``b""`` if the grammar must wait)."""
        if self._closed:
            raise UsageError(f"the {self.target} encoder was closed; it cannot be fed")
        out: list[bytes] = []
        for event in events:
            # Read the table per event: an error swaps it (see ``_fail``).
            handler = self._handlers.get(type(event))
            if handler is None:
                raise TypeError(f"not a unified event: {event!r:.80}")
            handler(event, out)
        self._end_of_feed(out)
        return b"".join(out)

    def close(self) -> bytes:
        """The input ended: the bytes the target's grammar still needs (idempotent)."""
        if self._closed:
            return b""
        self._closed = True
        out: list[bytes] = []
        self._on_close(out)
        usage = self._usage
        if usage is not None and usage is not self._usage_sent and self._include_usage:
            self._downgrade("usage")
        return b"".join(out)

    @property
    def downgrades(self) -> list[Downgrade]:
        """What the target could not carry so far, in order of first occurrence."""
        return [
            Downgrade(feature=f, detail=downgrade_detail(self.target, f), count=n)
            for f, n in self._counts.items()
        ]

    @property
    def closed(self) -> bool:
        """True after ``close()``."""
        return self._closed

    # --- shared helpers ------------------------------------------------------------

    def _downgrade(self, feature: str, count: int = 1) -> None:
        counts = self._counts
        if feature not in counts:
            downgrade_detail(self.target, feature)  # KeyError: not declared in the table
            counts[feature] = count
        else:
            counts[feature] += count

    def _downgrade_builtin(self, call_type: str) -> None:
        """A caller-run built-in call sent as a function call (its own row of the table)."""
        self._downgrade(call_type)

    def _figures(self, usage: Usage) -> Figures:
        return figures(usage, self._source)

    def _record_start(self, event: MessageStarted) -> None:
        if self._message_id is None:
            self._message_id = event.message_id
        if self._model is None:
            self._model = event.model

    def _model_name(self) -> str:
        return self._model_option or self._model or "unknown"

    def _fail(self) -> None:
        """An error was sent: it is terminal, what follows is dropped and counted."""
        self._failed = True
        handlers = dict(self._handlers)
        for kind in _CONTENT_AND_ERRORS:
            handlers[kind] = self._after_error
        handlers[MessageStarted] = handlers[MessageCompleted] = self._ignore
        self._handlers = handlers

    def _on_completion(self, event: ToolCallCompleted, out: list[bytes]) -> None:
        """A call's completion goes to the target once. A later one that hands a
        client call to the provider (gemini's server-side tool turns) comes when
        the call was already sent as the client's: a downgrade."""
        key = (event.choice, event.index)
        before = self._completed.get(key)
        self._completed[key] = event.executor
        if before is None:
            self._on_call_completed(event, out)
        elif before == "client" and event.executor == "server":
            self._downgrade("served_tool_call")

    def _after_error(self, event: Event, out: list[bytes]) -> None:
        self._downgrade("after_error")

    def _ignore(self, event: Event, out: list[bytes]) -> None:  # noqa: B027 - a no-op handler
        """Events that carry nothing after an error (its start and end)."""

    def _on_usage(self, event: UsageReported, out: list[bytes]) -> None:
        self._usage = event.usage

    def _on_unknown(self, event: UnknownEvent, out: list[bytes]) -> None:
        self._downgrade("unknown_event")

    def _end_of_feed(self, out: list[bytes]) -> None:  # noqa: B027 - optional hook
        """After each ``feed`` call's events (lazy starts are sent here)."""

    # --- per target ---------------------------------------------------------------

    @abstractmethod
    def _on_text(self, event: TextDelta, out: list[bytes]) -> None: ...

    @abstractmethod
    def _on_reasoning(self, event: ReasoningDelta, out: list[bytes]) -> None: ...

    @abstractmethod
    def _on_refusal(self, event: RefusalDelta, out: list[bytes]) -> None: ...

    @abstractmethod
    def _on_call_started(self, event: ToolCallStarted, out: list[bytes]) -> None: ...

    @abstractmethod
    def _on_arguments(self, event: ToolCallArgumentsDelta, out: list[bytes]) -> None: ...

    @abstractmethod
    def _on_call_completed(self, event: ToolCallCompleted, out: list[bytes]) -> None: ...

    @abstractmethod
    def _on_started(self, event: MessageStarted, out: list[bytes]) -> None: ...

    @abstractmethod
    def _on_completed(self, event: MessageCompleted, out: list[bytes]) -> None: ...

    @abstractmethod
    def _on_error(self, event: ErrorReceived, out: list[bytes]) -> None: ...

    @abstractmethod
    def _on_close(self, out: list[bytes]) -> None: ...

    @abstractmethod
    def _send_error(
        self, kind: str | None, code: str | int | None, message: str | None, out: list[bytes]
    ) -> None:
        """Sends an error in the target's grammar; the stream ends there."""

    def _end_failed(self, status: str, out: list[bytes]) -> bool:
        """Sends a failed ending (``protocol_conflict`` or ``error``) as the
        target's error; False (nothing sent) for any other status."""
        if status == "protocol_conflict":
            self._downgrade("protocol_conflict")
            message = "the upstream stream contradicted itself (protocol_conflict)"
            self._send_error("protocol_conflict", None, message, out)
            return True
        if status == "error":
            self._send_error("error", None, "the upstream stream failed", out)
            return True
        return False
