"""What a stream produced and how it ended: ``StreamResult`` and its parts.

Implements the result of the project's docs/design.md ("Public names", "How a
stream ends", "Usage", "Layered flags and metrics"), checked 2026-11-29.

Every class here is a frozen value. An adapter's ``result`` property returns a
snapshot, valid at any time and final once the stream was closed, cancelled or
ended by its protocol's own end marker; the mutable bookkeeping behind it lives
in :mod:`streamwire.accumulate`.

The top-level ``text``, ``tool_calls``, ``stop_reason`` ... of a result are
those of choice 0, the one a request without ``n`` produces; every choice of
an ``n > 1`` request is in ``choices``. ``status`` covers the whole stream: it
is the worst of the choices' statuses and the stream-wide facts (an error, a
conflict, a cancellation).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, NoReturn

from .kinds import CallState, ErrorPhase, Executor, IdSource, Status, StopReason

__all__ = [
    "ChoiceResult",
    "Metrics",
    "ReadOnlyDict",
    "StreamError",
    "StreamResult",
    "StreamWarning",
    "ToolCall",
    "Usage",
    "plain",
]


class ReadOnlyDict(dict[str, Any]):
    """A ``dict`` that refuses changes: the mappings a result carries.

    A real ``dict`` (``json``, orjson, pydantic and ``dataclasses.asdict``
    take it as one), which pickles, copies and deep-copies as itself; only
    the methods that would change it raise ``TypeError``. Results are shared
    snapshots, so what one reader holds must not change under another.
    """

    __slots__ = ()

    def _refuse(self, *args: object, **kwargs: object) -> NoReturn:
        raise TypeError("a result's mappings are read-only; copy with dict(...) to change one")

    __setitem__ = __delitem__ = _refuse
    clear = pop = popitem = setdefault = update = _refuse
    __ior__ = _refuse

    def __reduce__(self) -> tuple[type[ReadOnlyDict], tuple[dict[str, Any]]]:
        return (type(self), (dict(self),))

    def __copy__(self) -> ReadOnlyDict:
        return self

    def __deepcopy__(self, memo: dict[int, Any]) -> ReadOnlyDict:
        import copy

        return type(self)(copy.deepcopy(dict(self), memo))

    def __repr__(self) -> str:
        return f"ReadOnlyDict({dict.__repr__(self)})"


def plain(value: Any) -> Any:
    """``value`` as plain JSON values: dicts, lists, strings, numbers, booleans, None.

    Dataclasses become dicts of their fields, every mapping a ``dict`` with
    string keys, tuples and lists ``list``s. A value JSON has no form for
    (bytes, a datetime, ...) becomes its ``repr``; floats are kept as they
    are, non-finite ones included.
    """
    if value is None or isinstance(value, str | bool | int | float):
        return value
    if isinstance(value, Mapping):
        return {str(k): plain(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [plain(v) for v in value]
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {f.name: plain(getattr(value, f.name)) for f in dataclasses.fields(value)}
    return repr(value)


class _AsDict:
    """``as_dict()`` for the result's value classes."""

    __slots__ = ()

    def as_dict(self) -> dict[str, Any]:
        """Every field as plain JSON values (nested values too), ready for ``json.dumps``.

        The form is published as a JSON Schema, ``docs/result.schema.json``.
        """
        out: dict[str, Any] = plain(self)
        return out


@dataclass(frozen=True, slots=True, kw_only=True)
class Usage(_AsDict):
    """Token usage as the provider reported it, never an estimate.

    Figures the provider did not report are None. A later report replaces an
    earlier one (providers send cumulative figures); a ``null`` report never
    erases one.
    """

    #: Prompt / input tokens (chat ``prompt_tokens``).
    input_tokens: int | None = None
    #: Generated tokens (chat ``completion_tokens``), reasoning included.
    output_tokens: int | None = None
    #: The provider's total, when it reports one.
    total_tokens: int | None = None
    #: Input tokens read from the prompt cache (chat ``cached_tokens``).
    cache_read_tokens: int | None = None
    #: Input tokens written to the prompt cache (anthropic ``cache_creation_input_tokens``).
    cache_creation_tokens: int | None = None
    #: Output tokens spent on reasoning (chat ``reasoning_tokens``).
    reasoning_tokens: int | None = None
    #: True only when this is the provider's final figure for the stream.
    final: bool = False
    #: The provider's usage object, verbatim (read-only view).
    raw: Mapping[str, Any] | None = field(default=None, hash=False)


@dataclass(frozen=True, slots=True, kw_only=True)
class StreamError(_AsDict):
    """Why a stream ended in ``error``: an in-stream error or broken framing."""

    #: ``framing`` (bytes not the wire format, CRC, size cap), ``provider``
    #: (an in-stream error event or chunk), ``transport`` (the edge) or
    #: ``limit`` (a configured cap of the protocol layer was hit).
    phase: ErrorPhase
    #: The provider's error type, or the framing error's kind, verbatim.
    type: str | None
    #: The provider's error code, verbatim.
    code: str | int | None
    #: The message, verbatim.
    message: str | None
    #: A conservative hint: True only when retrying may succeed.
    retryable: bool
    #: The request id, when known.
    request_id: str | None = None
    #: The provider's error object as received.
    raw: Any = field(default=None, hash=False, compare=False)


@dataclass(frozen=True, slots=True, kw_only=True)
class StreamWarning(_AsDict):
    """Something worth logging that did not change how the stream ended."""

    #: A stable short code, e.g. ``missing_done``, ``data_after_done``,
    #: ``partial_event_discarded``, ``usage_not_object``.
    code: str
    #: A human-readable explanation.
    message: str


@dataclass(frozen=True, slots=True, kw_only=True)
class Metrics(_AsDict):
    """Counters and (with an injected clock) timings of one stream.

    Timings are seconds measured with the ``clock`` option of the stream,
    from the stream's creation; they are None when no clock was given (the
    sans-IO layers never read a clock on their own). Their resolution is one
    ``feed()`` call: every event returned by a call is stamped with its time.
    """

    #: Bytes fed to the stream.
    bytes_received: int = 0
    #: Framing-level events (SSE events, EventStream messages, WebSocket messages).
    wire_events: int = 0
    #: Unified events emitted.
    events: int = 0
    #: Seconds from creation to the first unified event.
    time_to_first_event: float | None = None
    #: Seconds from creation to the first text, reasoning, refusal or tool call.
    time_to_first_content: float | None = None
    #: The largest gap, in seconds, between two feeds that produced events.
    largest_gap: float | None = None
    #: Unknown events and unknown fields seen (ignored and counted).
    unknown_events: int = 0
    #: Framing errors (0 or 1: a framing error ends the stream).
    framing_errors: int = 0
    #: UTF-8 bytes of visible text, all choices.
    text_bytes: int = 0
    #: UTF-8 bytes of tool-call arguments, all choices.
    argument_bytes: int = 0
    #: The framing decoder's peak buffered bytes (memory is O(largest event)).
    peak_buffered_bytes: int = 0
    # The fields below are set by the HTTP edge (``streamwire.io``, timed by
    # ``streamwire.metrics.Timing``); the sans-IO adapters leave them None.
    #: Seconds from the request's start to its response headers (when known).
    time_to_headers: float | None = None
    #: The mean gap, in seconds, between consecutive events (events of one
    #: feed are 0 apart): (last event - first event) / (events - 1).
    mean_gap: float | None = None
    #: Seconds from the start to the last byte (or the end of reading).
    duration: float | None = None
    #: True when the body arrived in one burst (see ``streamwire.metrics``):
    #: likely buffered by something in between. None when not timed.
    burst: bool | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class ToolCall(_AsDict):
    """One tool call as the stream produced it (a snapshot; see ``streamwire.toolcalls``)."""

    #: The id a tool result must quote; None if the provider never sent one.
    id: str | None
    #: The tool's name; None if the provider never sent one.
    name: str | None
    #: The parsed arguments (a JSON object), or None when not (yet) valid JSON.
    arguments: dict[str, Any] | None = field(hash=False)
    #: The arguments string exactly as streamed.
    raw_arguments: str
    #: The call's state (adapter side: collecting, complete, valid, rejected).
    state: CallState
    #: True only when the whole batch may be executed (see docs/design.md).
    executable: bool
    #: Why not, when ``executable`` is False.
    not_executable_reason: str | None
    #: The call's own defect (bad JSON, schema, missing id or name, ...), or None.
    invalid_reason: str | None = None
    #: The provider's call type: chat ``function`` (legacy ``function_call``,
    #: Groq's server-run ``executed_tool``); responses the item type
    #: (``function_call``, ``custom_tool_call``, ``local_shell_call``,
    #: ``computer_call``, ``web_search_call``, ...); anthropic and bedrock
    #: ``tool_use``, ``server_tool_use`` (anthropic ``mcp_tool_use``); gemini
    #: ``function``.
    type: str = "function"
    #: The call's position among its choice's calls.
    index: int = 0
    #: The choice (candidate) it belongs to.
    choice: int = 0
    #: ``client``: for the caller to run; ``server``: run by the provider.
    executor: Executor = "client"
    #: Whether the id came from the provider or was made up by streamwire.
    id_source: IdSource = "provider"


@dataclass(frozen=True, slots=True, kw_only=True)
class ChoiceResult(_AsDict):
    """One choice (candidate) of a stream."""

    #: The choice index.
    index: int
    #: How this choice ended.
    status: Status
    #: The visible text.
    text: str
    #: The reasoning text (chat ``reasoning_content`` / ``reasoning``, ...).
    reasoning: str
    #: Reasoning signatures, verbatim, in order of arrival.
    reasoning_signatures: tuple[str, ...]
    #: The refusal text, if the model refused.
    refusal: str
    #: The tool calls, in order of appearance.
    tool_calls: tuple[ToolCall, ...]
    #: True only when the batch of ``tool_calls`` may be executed (see docs/design.md).
    executable: bool
    #: Why the batch may not be executed (``no tool calls`` when it has none);
    #: None exactly when it may.
    not_executable_reason: str | None
    #: The normalized stop reason.
    stop_reason: StopReason | None
    #: The provider's raw stop reason, never rewritten.
    provider_stop_reason: str | None


@dataclass(frozen=True, slots=True, kw_only=True)
class StreamResult(_AsDict):
    """Everything a stream produced, and how it ended, truthfully."""

    #: The wire protocol's name (``"openai-chat"``, ...).
    protocol: str
    #: How the stream ended; ``in_progress`` until it has.
    status: Status
    #: True once nothing can change any more (closed, cancelled or ended).
    final: bool
    #: Choice 0's visible text.
    text: str
    #: Choice 0's reasoning text.
    reasoning: str
    #: Choice 0's refusal text.
    refusal: str
    #: Choice 0's tool calls.
    tool_calls: tuple[ToolCall, ...]
    #: True only when choice 0's tool-call batch may be executed: the stream
    #: completed, every call is valid, nothing was truncated, filtered,
    #: cancelled or conflicting. False when there are no calls.
    executable: bool
    #: Why not (``no tool calls`` when there are none); None exactly when
    #: ``executable`` is True.
    not_executable_reason: str | None
    #: Choice 0's normalized stop reason.
    stop_reason: StopReason | None
    #: Choice 0's raw stop reason.
    provider_stop_reason: str | None
    #: The last usage the provider reported, or None.
    usage: Usage | None
    #: The error that ended the stream, or None.
    error: StreamError | None
    #: Every choice, by index.
    choices: tuple[ChoiceResult, ...]
    #: The provider's message / response id.
    message_id: str | None
    #: The model the provider named.
    model: str | None
    #: Unknown events by provider type, with counts (ignored, state intact).
    unknown_events: Mapping[str, int]
    #: Unknown fields by path (``choices[].delta.channel``), with counts.
    unknown_fields: Mapping[str, int]
    #: What made the stream ``protocol_conflict``, in order.
    conflicts: tuple[str, ...]
    #: Things worth logging that did not change the status.
    warnings: tuple[StreamWarning, ...]
    #: Counters and timings.
    metrics: Metrics
    #: The HTTP layer held (2xx), when the edge told the stream; else None.
    http_ok: bool | None
    #: The framing layer held: no framing error, every payload was the wire format.
    framing_ok: bool
    #: Every delta was applied: no conflict, no cap hit.
    deltas_ok: bool
    #: Every tool call was completed by the protocol and its arguments parsed.
    tool_args_complete: bool
    #: The assistant message's content in the provider's own request format,
    #: ready to send back in the next turn, in order (anthropic and
    #: bedrock-invoke: the ``content`` blocks: text with citations, thinking
    #: with its signature, redacted thinking, tool use, server tool use and
    #: results; openai-responses: the done output items, verbatim, in output
    #: order). Plain JSON values, shared by every result of the stream (so
    #: that reading ``result`` stays cheap): treat them as read-only, and
    #: ``copy.deepcopy`` them before changing one. Empty for protocols
    #: that keep none. Not rebuilt by ``result_from_events``.
    provider_content: tuple[dict[str, Any], ...] = ()
    #: The provider's own metrics of the stream, verbatim, under the names the
    #: provider gives them (bedrock-converse: the metadata event's ``metrics``,
    #: ``trace``, ``performanceConfig``, ``serviceTier``; bedrock-invoke:
    #: ``amazon-bedrock-invocationMetrics``). Empty when the provider sent
    #: none. A new mapping for each result; its values are shared, read-only.
    #: Not rebuilt by ``result_from_events``.
    provider_metrics: Mapping[str, Any] = field(default_factory=dict)

    def tool_call(self, call_id: str) -> ToolCall | None:
        """The call (of any choice) with this id, or None."""
        for choice in self.choices:
            for call in choice.tool_calls:
                if call.id == call_id:
                    return call
        return None
