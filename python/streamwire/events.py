"""The unified events every protocol adapter emits.

Whatever the wire protocol (OpenAI Chat Completions, OpenAI Responses,
Anthropic Messages, Gemini, Bedrock, the WebSocket protocols), an adapter turns
its bytes into this one small vocabulary. The naming grammar follows h11's
``_events.py`` and h2's ``events.py``: lifecycle facts are past tense
(``MessageStarted``, ``ToolCallCompleted``), increments end in ``Delta``.
The contract they implement is the project's docs/design.md ("Public names",
"Tool calls", "Usage"), checked 2026-11-29.

Every event is a frozen, slotted, keyword-only dataclass: immutable, typed and
cheap to hold. Events are created once per upstream delta on the caller's hot
path, and a frozen dataclass's generated ``__init__`` is slow: it must set each
field through ``object.__setattr__`` and takes keyword arguments. Measured on
CPython 3.11 for a two-field event (``benches``-style ``timeit``, best of 5)::

    @dataclass(frozen=True, slots=True, kw_only=True) __init__   ~310 ns
    plain slotted class, cached object.__setattr__              ~280 ns
    plain slotted class, slot descriptors' __set__              ~215 ns
    tuple subclass with properties (slower attribute reads)     ~240 ns
    object.__new__ + slot descriptors' __set__, positional      ~125 ns
    _core.Builder.one (the same steps from Rust), positional       ~65 ns

So the public classes stay ordinary frozen dataclasses (a caller constructing
one gets the checked keyword-only ``__init__``, equality, hashing, pattern
matching and mypy's full understanding), and the adapters build the per-delta
events through the ``new_*`` functions at the bottom of this module. Each is a
``_core.Builder``: it allocates with the class's allocator (what
``object.__new__`` does) and fills the slots through ``object.__setattr__``,
from Rust. That bypasses the frozen ``__setattr__`` exactly once, at birth, as
the dataclass's own ``__init__`` does, and gives the same immutable object
faster still: ~65 ns per two-field event one at a time, ~40 ns each for a run
of deltas of one block (``new_*_deltas``; the adapters' fast paths receive
runs, see ``ShapeMatcher(runs=True)``), same measurement.
``tests/test_events.py`` checks that each fast constructor yields an object
equal to the regular constructor's.

Reprs truncate long text so that logging an event never floods a log line.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field, fields
from typing import Any, TypeAlias

from ._core import Builder
from .kinds import ErrorPhase, Executor, IdSource, ReasoningKind, Status, StopReason
from .result import Usage, plain

__all__ = [
    "EVENT_TYPES",
    "BaseEvent",
    "ErrorPhase",
    "ErrorReceived",
    "Event",
    "Executor",
    "IdSource",
    "MessageCompleted",
    "MessageStarted",
    "ReasoningDelta",
    "ReasoningKind",
    "RefusalDelta",
    "Status",
    "StopReason",
    "TextDelta",
    "ToolCallArgumentsDelta",
    "ToolCallCompleted",
    "ToolCallStarted",
    "UnknownEvent",
    "UsageReported",
]

_REPR_LIMIT = 80


def _short(value: object) -> str:
    if isinstance(value, str) and len(value) > _REPR_LIMIT:
        return f"{value[: _REPR_LIMIT - 20]!r}…(+{len(value) - _REPR_LIMIT + 20} chars)"
    text = repr(value)
    if len(text) > _REPR_LIMIT:
        return text[: _REPR_LIMIT - 1] + "…"
    return text


class BaseEvent:
    """Base class of every unified event (``Event`` is the union of them all)."""

    __slots__ = ()

    def __repr__(self) -> str:
        parts = ", ".join(f"{f.name}={_short(getattr(self, f.name))}" for f in fields(self))  # type: ignore[arg-type]
        return f"{type(self).__name__}({parts})"

    def as_dict(self) -> dict[str, Any]:
        """The event as plain JSON values, ``{"event": <class name>, <field>: <value>, ...}``.

        Nested values (``Usage``, the provider's raw objects) become plain
        dicts and lists too, ready for ``json.dumps``.
        """
        out: dict[str, Any] = {"event": type(self).__name__}
        for f in fields(self):  # type: ignore[arg-type]
            out[f.name] = plain(getattr(self, f.name))
        return out


@dataclass(frozen=True, slots=True, kw_only=True, repr=False)
class MessageStarted(BaseEvent):
    """The provider started an assistant message (one per choice when ``n > 1``)."""

    #: The provider's id of the message or response (chat: the chunk ``id``).
    message_id: str | None = None
    #: The model the provider says produced the message.
    model: str | None = None
    #: The role the provider announced, normally ``"assistant"``.
    role: str | None = None
    #: The choice (candidate) index; 0 unless the request asked for several.
    choice: int = 0


@dataclass(frozen=True, slots=True, kw_only=True, repr=False)
class TextDelta(BaseEvent):
    """A piece of the assistant's visible text; append it to what came before."""

    #: The new text, never empty.
    text: str
    #: The choice (candidate) index.
    choice: int = 0


@dataclass(frozen=True, slots=True, kw_only=True, repr=False)
class ReasoningDelta(BaseEvent):
    """A piece of the model's reasoning, or a signature or redacted block for it.

    Signatures and redacted data are opaque: they are kept verbatim, because
    the next turn must send them back byte for byte.
    """

    #: Reasoning text to append (``""`` when the delta only carries a signature).
    text: str = ""
    #: A signature over the reasoning, verbatim (anthropic ``signature_delta``,
    #: gemini ``thoughtSignature``, OpenRouter ``reasoning_details``), else None.
    signature: str | None = None
    #: Redacted (encrypted) reasoning data, verbatim, else None.
    redacted: str | None = None
    #: ``"text"`` for the reasoning itself, ``"summary"`` for a summary of it.
    kind: ReasoningKind = "text"
    #: The choice (candidate) index.
    choice: int = 0


@dataclass(frozen=True, slots=True, kw_only=True, repr=False)
class RefusalDelta(BaseEvent):
    """A piece of a refusal message (the model declined to answer)."""

    #: The new refusal text, never empty.
    text: str
    #: The choice (candidate) index.
    choice: int = 0


@dataclass(frozen=True, slots=True, kw_only=True, repr=False)
class ToolCallStarted(BaseEvent):
    """The model began a tool call.

    Identity fields may be unknown (None) here if the provider sends them
    later; ``ToolCallCompleted`` carries the final values.
    """

    #: The call's position among the choice's calls, in order of appearance.
    index: int
    #: The id a tool result must quote, if already known.
    id: str | None
    #: The tool's name, if already known.
    name: str | None
    #: The provider's call type (chat ``function``, legacy ``function_call``, ...).
    type: str = "function"
    #: ``client``: offered for the caller to run; ``server``: the provider runs it.
    executor: Executor = "client"
    #: ``provider``, or ``synthetic`` when streamwire made the id up.
    id_source: IdSource = "provider"
    #: The choice (candidate) index.
    choice: int = 0


@dataclass(frozen=True, slots=True, kw_only=True, repr=False)
class ToolCallArgumentsDelta(BaseEvent):
    """A fragment of a tool call's arguments (a piece of a JSON text, usually)."""

    #: The call's position among the choice's calls (as in ``ToolCallStarted``).
    index: int
    #: The call's id, if known when the fragment arrived.
    id: str | None
    #: The fragment, appended verbatim to the arguments string.
    delta: str
    #: The choice (candidate) index.
    choice: int = 0


@dataclass(frozen=True, slots=True, kw_only=True, repr=False)
class ToolCallCompleted(BaseEvent):
    """A tool call is complete: its arguments were parsed (once) and checked.

    Whether the call may be *executed* is decided for the whole batch when the
    stream ends (``StreamResult.executable``), not by this event.
    """

    #: The call's position among the choice's calls.
    index: int
    #: The id a tool result must quote (None if the provider never sent one).
    id: str | None
    #: The tool's name (None if the provider never sent one).
    name: str | None
    #: The provider's call type.
    type: str
    #: The full arguments string exactly as streamed.
    raw_arguments: str
    #: The parsed arguments (a JSON object), or None when invalid.
    arguments: dict[str, Any] | None = field(hash=False)
    #: Why the call is invalid (bad JSON, not an object, schema violation,
    #: missing id or name, ...), or None when it is valid.
    invalid_reason: str | None
    #: Who runs it.
    executor: Executor = "client"
    #: ``provider``, or ``synthetic`` when streamwire made the id up.
    id_source: IdSource = "provider"
    #: The choice (candidate) index.
    choice: int = 0


@dataclass(frozen=True, slots=True, kw_only=True, repr=False)
class UsageReported(BaseEvent):
    """The provider reported token usage; this report replaces any earlier one."""

    #: The usage as reported (``usage.final`` says whether it is the final figure).
    usage: Usage


@dataclass(frozen=True, slots=True, kw_only=True, repr=False)
class MessageCompleted(BaseEvent):
    """The message (one choice) ended; ``status`` says how, truthfully."""

    #: How it ended (see docs/design.md "How a stream ends").
    status: Status
    #: The normalized stop reason, or None when the provider gave none.
    stop_reason: StopReason | None
    #: The provider's raw stop reason, never rewritten.
    provider_stop_reason: str | None
    #: The choice (candidate) index.
    choice: int = 0


@dataclass(frozen=True, slots=True, kw_only=True, repr=False)
class ErrorReceived(BaseEvent):
    """An error ended the stream: in-stream from the provider, or a broken framing."""

    #: Which layer failed.
    phase: ErrorPhase
    #: The provider's error type (or the framing error's kind), verbatim.
    type: str | None
    #: The provider's error code, verbatim (a string or a number).
    code: str | int | None
    #: The human-readable message, verbatim.
    message: str | None
    #: A conservative hint: True only when retrying the same request may work.
    retryable: bool
    #: The request id, when the provider or the caller supplied one.
    request_id: str | None = None
    #: The provider's error object as received (None for framing errors).
    raw: Any = field(default=None, hash=False)


@dataclass(frozen=True, slots=True, kw_only=True, repr=False)
class UnknownEvent(BaseEvent):
    """An event the adapter does not know; ignored (state intact) and counted."""

    #: The provider's name for it (an SSE event name, a JSON ``type``, ...).
    provider_type: str
    #: The raw payload, verbatim, for logging.
    raw: str


#: Every unified event: a union, so that ``match`` (and ``isinstance``) narrow
#: it and a type checker can tell when a ``match`` misses a case.
Event: TypeAlias = (
    MessageStarted
    | TextDelta
    | ReasoningDelta
    | RefusalDelta
    | ToolCallStarted
    | ToolCallArgumentsDelta
    | ToolCallCompleted
    | UsageReported
    | MessageCompleted
    | ErrorReceived
    | UnknownEvent
)
#: The event classes, in the order of ``Event``.
EVENT_TYPES: tuple[type[BaseEvent], ...] = Event.__args__


# --- fast constructors for the per-delta events ------------------------------
# See the module docstring: each is a ``_core.Builder`` (the class's allocator
# and ``object.__setattr__`` per field, from Rust), taking every field
# positionally. Only the events created once per upstream delta have one; the
# rest are rare enough for their regular constructors. Internal.

_text = Builder(TextDelta, "text", "choice")
#: The ``Builder`` of ``new_text_delta`` (for ``MessageMatcher(build=...)``).
text_delta_builder = _text
#: ``TextDelta(text=text, choice=choice)`` as ``new_text_delta(text, choice)``.
new_text_delta: Callable[[str, int], TextDelta] = _text.one
#: ``[TextDelta(text=t, choice=choice) for t in texts]`` as
#: ``new_text_deltas(texts, choice)``.
new_text_deltas: Callable[[list[str], int], list[TextDelta]] = _text.build
#: ``RefusalDelta(text=text, choice=choice)`` as ``new_refusal_delta(text, choice)``.
new_refusal_delta: Callable[[str, int], RefusalDelta] = Builder(RefusalDelta, "text", "choice").one
#: ``ReasoningDelta(...)`` as ``new_reasoning_delta(text, signature, redacted,
#: kind, choice)``.
_reasoning = Builder(ReasoningDelta, "text", "signature", "redacted", "kind", "choice")
#: The ``Builder`` of ``new_reasoning_delta`` (for a ``TextTaker``).
reasoning_delta_builder = _reasoning
new_reasoning_delta: Callable[[str, str | None, str | None, ReasoningKind, int], ReasoningDelta] = (
    _reasoning.one
)
#: ``[ReasoningDelta(text=t, ...) for t in texts]`` as
#: ``new_reasoning_deltas(texts, signature, redacted, kind, choice)``.
new_reasoning_deltas: Callable[
    [list[str], str | None, str | None, ReasoningKind, int], list[ReasoningDelta]
] = _reasoning.build
#: ``ToolCallArgumentsDelta(...)`` as ``new_arguments_delta(index, call_id,
#: delta, choice)``.
new_arguments_delta: Callable[[int, str | None, str, int], ToolCallArgumentsDelta] = Builder(
    ToolCallArgumentsDelta, "index", "id", "delta", "choice"
).one
#: ``[ToolCallArgumentsDelta(index=index, id=call_id, delta=d, choice=choice) for
#: d in deltas]`` as ``new_arguments_deltas(deltas, index, call_id, choice)``.
new_arguments_deltas: Callable[[list[str], int, str | None, int], list[ToolCallArgumentsDelta]] = (
    Builder(ToolCallArgumentsDelta, "delta", "index", "id", "choice").build
)
#: ``UsageReported(usage=usage)`` as ``new_usage_reported(usage)``.
new_usage_reported: Callable[[Usage], UsageReported] = Builder(UsageReported, "usage").one
