"""The acceptance cases: what the mock upstream streams, as data, and the facts a gateway must keep.

The twelve cases of the streaming-compatibility practice, plus three
(``truncated``, ``usage``, ``reasoning``); their names are stable, since tests
outside the project select them. Each ``Case`` is protocol-neutral: its text
deltas, reasoning, tool calls (argument fragments as they are cut on the
wire), stop reason, error and usage. ``script(case, upstream)`` turns it into
the unified events (``streamwire.events``) that ``upstream/wire.py`` encodes in the
upstream's wire format; ``truth(case, upstream)`` is what a correct reading
of that stream derives, in unified terms, and what the judge holds a gateway's
answer to. The regression fixtures (``fixtures/regression/<protocol>/01-...``
to ``12b-...``) are the same twelve cases written by hand per protocol; the
kit cannot read them (a ``pip install`` has no ``fixtures/``), so it builds
its streams from these definitions, and ``tests/test_kit_cases.py`` checks
that every adapter reads each rendered stream back to exactly these facts.

Delivery shaping a case asks for itself (``shaping``): ``merged`` writes
several events per write, ``split`` cuts the body at hostile offsets (inside
CRLF pairs, UTF-8 characters, JSON tokens, EventStream preludes) whatever
the delivery; ``keepalive`` inserts the protocol's keep-alives during a
silence; ``unknown`` inserts an event type (or field) no gateway has seen;
``gap`` paces the case's events whatever the delivery (``cancel`` needs a
stream still running when the client hangs up).

What a case makes the mock, the client and the judge do beyond that is its
kind (``Case.kind``, ``kinds/``): a hang-up, a follow-up, a failed first
attempt, a silence, a slow reader, or none.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Any, Literal

from ...events import (
    ErrorReceived,
    Event,
    IdSource,
    MessageCompleted,
    MessageStarted,
    ReasoningDelta,
    Status,
    StopReason,
    TextDelta,
    ToolCallArgumentsDelta,
    ToolCallCompleted,
    ToolCallStarted,
    UsageReported,
)
from ...result import Usage
from ...translate._usage import INPUT_INCLUDES_CACHE
from .kinds.base import PLAIN, Kind
from .kinds.cancel import Cancel
from .kinds.follow_up import FollowUp
from .kinds.head_of_line import HOL_WAIT, HeadOfLine
from .kinds.refused import Refused
from .kinds.retry import Mode, Retry
from .kinds.silence import Silence, Where
from .kinds.slow_reader import (
    MAX_SLOW_BYTES,
    MAX_SLOW_DELTAS,
    SLOW_DELTA_CHARS,
    SLOW_DELTAS,
    SLOW_READER_AFTER,
    SlowReader,
    slow_text,
)
from .toolturn import call_id

__all__ = [
    "CASES",
    "CASE_NAMES",
    "ERROR_KINDS",
    "MAX_SLOW_BYTES",
    "MAX_SLOW_DELTAS",
    "PROMPT",
    "PROMPT_LEAD",
    "PROTOCOL_PARTS",
    "SALT_MARK",
    "SLOW_DELTAS",
    "SLOW_DELTA_CHARS",
    "SLOW_READER_AFTER",
    "TOOLS",
    "UNARY_CASES",
    "UPSTREAM_ERRORS",
    "USAGE_PARTS",
    "Call",
    "Case",
    "Truth",
    "call_id",
    "cell_model",
    "prompt_for",
    "salted",
    "script",
    "sized",
    "truth",
    "upstream_error",
    "usage_of",
    "usage_parts_of",
]

Shaping = Literal["events", "merged", "split"]

#: The parts of a usage report beyond its input and output, by the kit's
#: names, and the ``streamwire.Usage`` field that holds each.
USAGE_PARTS: Mapping[str, str] = {
    "cache_read": "cache_read_tokens",
    "cache_write": "cache_creation_tokens",
    "reasoning": "reasoning_tokens",
}
#: The parts each upstream protocol reports, by its provider's documented
#: fields (checked 2026-12-02): Chat Completions ``prompt_tokens_details.
#: cached_tokens`` and ``completion_tokens_details.reasoning_tokens``;
#: Responses ``input_tokens_details.cached_tokens`` and
#: ``output_tokens_details.reasoning_tokens``; Anthropic
#: ``cache_read_input_tokens`` and ``cache_creation_input_tokens`` (no
#: reasoning count); Gemini ``cachedContentTokenCount`` and
#: ``thoughtsTokenCount``; Bedrock's ``TokenUsage`` ``cacheReadInputTokens``
#: and ``cacheWriteInputTokens`` (InvokeModel carries Anthropic's body).
PROTOCOL_PARTS: Mapping[str, frozenset[str]] = {
    "openai-chat": frozenset({"cache_read", "reasoning"}),
    "openai-responses": frozenset({"cache_read", "reasoning"}),
    "anthropic": frozenset({"cache_read", "cache_write"}),
    "gemini": frozenset({"cache_read", "reasoning"}),
    "gemini-json": frozenset({"cache_read", "reasoning"}),
    "bedrock-converse": frozenset({"cache_read", "cache_write"}),
    "bedrock-invoke": frozenset({"cache_read", "cache_write"}),
}


@dataclass(frozen=True)
class Call:
    """One tool call: its name and its argument text as cut on the wire."""

    name: str
    fragments: tuple[str, ...]

    @property
    def raw_arguments(self) -> str:
        return "".join(self.fragments)

    @property
    def arguments(self) -> Any:
        return json.loads(self.raw_arguments)


@dataclass(frozen=True)
class Case:
    """One acceptance case, protocol-neutral (see the module docstring)."""

    name: str
    #: What it proves, in one line.
    purpose: str
    text: tuple[str, ...] = ()
    reasoning: tuple[str, ...] = ()
    #: A signature over the reasoning (sent where the protocol has one).
    signature: str | None = None
    calls: tuple[Call, ...] = ()
    #: Fragments of the calls interleaved on the wire (where the protocol can).
    interleave: bool = False
    #: The normalized stop reason; None when the stream ends in an error.
    stop: StopReason | None = "stop"
    #: The stream ends in the upstream's in-stream error event.
    error: bool = False
    #: Which error (``ERROR_KINDS``; None: the protocol's overloaded or
    #: unavailable error, ``UPSTREAM_ERRORS``).
    error_kind: str | None = None
    #: (input, output) tokens of the final usage report; input counts every
    #: input token, cached ones included (each protocol's own figure is
    #: derived from it: ``usage_of``).
    usage: tuple[int, int] = (12, 7)
    #: The report's parts beyond input and output (``USAGE_PARTS``), sent
    #: where the upstream's protocol has a field for them (``PROTOCOL_PARTS``).
    usage_parts: tuple[tuple[str, int], ...] = ()
    shaping: Shaping = "events"
    keepalive: bool = False
    unknown: bool = False
    #: Seconds between events whatever the delivery (None: the delivery decides).
    gap: float | None = None
    #: What the case makes the mock, the client and the judge do (``kinds/``).
    kind: Kind = PLAIN
    #: The client asks for usage where its protocol makes it optional.
    wants_usage: bool = False
    #: The client asks for the model's reasoning, as each protocol's SDK does.
    wants_reasoning: bool = False
    #: The client asks for a small output limit.
    max_tokens: int | None = None
    #: The request's tools carry their descriptions (clients often send none).
    tools_described: bool = True
    #: Under ``paced`` the text must start reaching the client while the mock
    #: still sends it, and arrive spread: it is long enough that no hop's
    #: latency explains holding it back (``timed.streaming``).
    stream_early: bool = False
    #: The deliveries the case runs in (None: all). A case whose point is
    #: time or failure, not how the bytes are cut, runs ``whole`` only.
    only: tuple[str, ...] | None = None

    # What the kind says, for callers that ask by the case's old fields.
    @property
    def cancel_after(self) -> int | None:
        """The client hangs up after this many text deltas."""
        return self.kind.after if isinstance(self.kind, Cancel) else None

    @property
    def follow_up(self) -> tuple[str, ...]:
        """The upstream's answer to the client's failed tool result."""
        return self.kind.answer if isinstance(self.kind, FollowUp) else ()

    @property
    def retry(self) -> Mode | None:
        """How the first attempt fails."""
        return self.kind.mode if isinstance(self.kind, Retry) else None

    @property
    def silence(self) -> Where | None:
        """Where the upstream says nothing for ``--silence`` seconds."""
        return self.kind.where if isinstance(self.kind, Silence) else None

    @property
    def slow_reader(self) -> bool:
        """The client stops reading for a while, then reads on."""
        return isinstance(self.kind, SlowReader)

    def text_of(self, attempt: int = 1) -> tuple[str, ...]:
        """The text deltas of ``attempt`` (a retry case's attempts differ)."""
        if not self.kind.per_attempt:
            return self.text
        return tuple(t.replace("{attempt}", str(attempt)) for t in self.text)

    def calls_of(self, attempt: int = 1) -> tuple[Call, ...]:
        """The calls of ``attempt``: a retry case's attempts' arguments differ."""
        if not self.kind.per_attempt:
            return self.calls
        mark = str(attempt)
        return tuple(
            Call(c.name, tuple(f.replace("{attempt}", mark) for f in c.fragments))
            for c in self.calls
        )


def sized(case: Case, deltas: int) -> Case:
    """The slow-reader ``case`` with ``deltas`` deltas of text (and as many
    output tokens): an answer larger than what the hop's kernel buffers can
    take, so that the mock finishing it while the client reads nothing is the
    hop's buffering, not its sockets' (``wire.slow_reader_deltas``: the mock
    sizes it in its upstream's protocol, and logs the deltas for the judge).
    Any other case is returned as it is."""
    sized_case: Case = case.kind.sized(case, deltas)
    return sized_case


def _long_text() -> tuple[str, ...]:
    # 8,200 deltas of 128 characters: 1,049,600 bytes, just over 1 MiB.
    filler = "streamwire long text: the gateway must neither buffer it whole nor grow. "
    out = []
    for i in range(8200):
        head = f"[{i:05d}] "
        out.append((head + filler * 2)[:127] + "\n")
    return tuple(out)


_ARGS_CHUNKED = (
    '{"title": "Ünïcödé \\"notes\\"", "body": "line 1\\nline 2\\ttabbed \\\\ back'
    'slash", "tags": ["日本語", "emoji 🚀", "\\ud83d\\ude80 escaped", "\\u00e9t\\u00e9"], '
    '"matrix": [[1, 2], [3, [4, 5.5e-3]]], "nested": {"deep": {"deeper": [true, false, null]}}}'
)


def _cut(text: str, width: int) -> tuple[str, ...]:
    return tuple(text[i : i + width] for i in range(0, len(text), width))


CASES: Mapping[str, Case] = {
    case.name: case
    for case in (
        Case(
            "short-text",
            "a short text answer, unchanged, with its stop reason and usage",
            text=("Hello", " from", " the", " streamwire", " mock."),
        ),
        Case(
            "long-text",
            "1 MiB of text in 8,200 small deltas: nothing lost, nothing buffered whole",
            text=_long_text(),
            usage=(12, 8200),
            stream_early=True,
        ),
        Case(
            "split-anywhere",
            "the body cut inside CRLF pairs, UTF-8 characters and JSON tokens",
            text=(
                "Grüße, ",
                "世界",
                " 👋🏽 ",
                '"quoted" ',
                "back\\slash",
                "\nline two ",
                "naïve ✓",
            ),
            shaping="split",
        ),
        Case(
            "merged-events",
            "many events in one write",
            text=tuple(f"w{i:02d} " for i in range(40)),
            shaping="merged",
            usage=(12, 40),
        ),
        Case(
            "keepalive",
            "keep-alives (comments, pings, blank lines) during a silence before the text",
            text=("Still ", "here ", "after ", "the ", "pings."),
            keepalive=True,
        ),
        Case(
            "single-tool",
            "one tool call: id, name and arguments exact",
            text=("Let me add those.",),
            calls=(Call("add_numbers", ('{"a": ', '2, "b"', ": 3}")),),
            stop="tool_calls",
        ),
        Case(
            "parallel-tools",
            "two calls whose argument fragments interleave",
            text=("Checking both.",),
            calls=(
                Call("add_numbers", ('{"a": 1', "0, ", '"b": 32}')),
                Call("ping", ('{"host": "exam', 'ple.com", ', '"count": 2}')),
            ),
            interleave=True,
            stop="tool_calls",
        ),
        Case(
            "chunked-json-args",
            "arguments with escapes, newlines, CJK, emoji and nested arrays, cut anywhere",
            calls=(Call("write_note", _cut(_ARGS_CHUNKED, 7)),),
            stop="tool_calls",
        ),
        Case(
            "tool-error-result",
            "a failed tool result reaches the upstream correlated to its call, in its shape",
            calls=(Call("add_numbers", ('{"a": 1, ', '"b": "two"}')),),
            stop="tool_calls",
            kind=FollowUp(("The tool failed: ", "b must be a number.")),
        ),
        Case(
            "in-stream-error",
            "an HTTP 200 stream ending in the provider's error event: an error, with its type",
            text=("Partial ", "answer"),
            stop=None,
            error=True,
            usage=(12, 2),
        ),
        Case(
            "unknown-event",
            "an event type and a field the gateway has never seen, mid-stream",
            text=("Known ", "events ", "around ", "an unknown one."),
            unknown=True,
        ),
        Case(
            "cancel",
            "the client hangs up after three deltas (or after 1 s, if they are held): "
            "the upstream connection must close",
            text=tuple(f"tick {i:03d} " for i in range(200)),
            gap=0.02,
            kind=Cancel(after=3),
            usage=(12, 200),
        ),
        Case(
            "truncated",
            "the output token limit cut the answer: truncated, never completed",
            text=("This answer is cut", " short by the"),
            stop="length",
            # The least every provider accepts (OpenAI Responses refuses a
            # max_output_tokens below 16): a gateway may forward it to any.
            max_tokens=16,
            usage=(12, 16),
        ),
        Case(
            "usage",
            "the final usage, exactly as the upstream reported it",
            text=("Counted.",),
            usage=(1234, 56),
            usage_parts=(("cache_read", 1000), ("cache_write", 200), ("reasoning", 30)),
            wants_usage=True,
        ),
        Case(
            "reasoning",
            "reasoning text and its signature, then the answer",
            reasoning=("Let me think. ", "Two plus two is four."),
            signature="c3ctc2lnbmF0dXJlLXJlYXNvbmluZy0x",
            text=("The answer is 4.",),
            usage=(12, 30),
            wants_reasoning=True,
        ),
        Case(
            "slow-reader",
            "16 MB (more where the sockets hold more) as fast as the gateway takes it while "
            "the client stops reading for 3 s: every event arrives, the gateway holds a "
            "bounded amount, or says it gave up",
            text=slow_text(),
            usage=(12, SLOW_DELTAS),
            kind=SlowReader(),
            only=("whole",),
        ),
        Case(
            "silence-start",
            "the upstream says nothing for --silence seconds before its first event",
            text=("Thought ", "about it."),
            kind=Silence("start"),
            only=("whole",),
        ),
        Case(
            "silence-start-keepalive",
            "the same silence, with the provider's own keep-alives during it",
            text=("Thought ", "about it."),
            kind=Silence("start"),
            keepalive=True,
            only=("whole",),
        ),
        Case(
            "silence-after-tool",
            "the upstream says nothing for --silence seconds after a tool call",
            text=("Let me add those.",),
            calls=(Call("add_numbers", ('{"a": 2, ', '"b": 3}')),),
            stop="tool_calls",
            kind=Silence("after_tool"),
            only=("whole",),
        ),
        Case(
            "silence-after-tool-keepalive",
            "the same silence after a tool call, with the provider's keep-alives",
            text=("Let me add those.",),
            calls=(Call("add_numbers", ('{"a": 2, ', '"b": 3}')),),
            stop="tool_calls",
            kind=Silence("after_tool"),
            keepalive=True,
            only=("whole",),
        ),
        Case(
            "retry-before-output",
            "the first attempt fails before any byte (429, 503 or 529 with the provider's "
            "error): one clean answer, or the error",
            text=("Attempt {attempt}: ", "two plus two ", "is four."),
            kind=Retry("before_output"),
            only=("whole",),
        ),
        Case(
            "retry-after-text",
            "the first attempt's connection resets after some text: never two attempts' "
            "output in one stream",
            text=("Attempt {attempt}: ", "two plus two ", "is four."),
            kind=Retry("after_text"),
            only=("whole",),
        ),
        Case(
            "retry-after-tool",
            "the first attempt errors after a call's first fragments: its call never delivered",
            text=("Attempt {attempt}: ",),
            calls=(Call("add_numbers", ('{"a": {attempt}, ', '"b": 3}')),),
            stop="tool_calls",
            kind=Retry("after_tool"),
            only=("whole",),
        ),
        Case(
            "retry-stall",
            "the first attempt says nothing for a while: a second attempt, if any, "
            "closes the first",
            text=("Attempt {attempt}: ", "two plus two ", "is four."),
            kind=Retry("stall"),
            only=("whole",),
        ),
        Case(
            "truncated-tool",
            "a call whose arguments look whole, cut by the output limit: no executable call",
            text=("Let me add those.",),
            calls=(Call("add_numbers", ('{"a": 2, ', '"b": 3}')),),
            stop="length",
            max_tokens=16,
            usage=(12, 16),
        ),
        *(
            Case(
                f"in-stream-error-{kind}",
                f"the stream ends in the provider's {what} error: an error, with its type",
                text=("Partial ", "answer"),
                stop=None,
                error=True,
                error_kind=kind,
                usage=(12, 2),
                only=("whole",),
            )
            for kind, what in (
                ("internal", "internal"),
                ("throttled", "rate-limit"),
                ("model", "model-stream"),
            )
        ),
        Case(
            "tool-no-description",
            "one tool call where the client declared its tools without descriptions (an "
            "optional field clients often leave out): the same call, exact",
            text=("Let me add those.",),
            calls=(Call("add_numbers", ('{"a": ', '2, "b"', ": 3}")),),
            stop="tool_calls",
            tools_described=False,
        ),
        Case(
            "head-of-line",
            "a short text stream asked for while a non-streaming request waits "
            f"{HOL_WAIT:g} s on its upstream beside it: the stream is not held for that wait",
            text=("Not ", "held ", "behind ", "the ", "other."),
            kind=HeadOfLine(),
            only=("whole",),
        ),
        # Appended: existing reports keep their cases' order.
        Case(
            "rate-limited",
            "the first attempt gets HTTP 429 with Retry-After: 1 and the provider's rate-limit "
            "error and headers, a later one the answer: the answer, after a wait of at least "
            "that, or the 429 with its retry information",
            text=("Attempt {attempt}: ", "two plus two ", "is four."),
            kind=Refused(("rate_limited",)),
            only=("whole",),
        ),
        Case(
            "bad-request",
            "every attempt gets HTTP 400 with the provider's invalid-request error: never "
            "tried again, the 400 reaches the client",
            text=("Attempt {attempt}: ", "two plus two ", "is four."),
            kind=Refused(("bad_request",), every=True),
            only=("whole",),
        ),
        Case(
            "flapping",
            "a flapping primary: the first two attempts get the provider's overloaded answer "
            "(503; Anthropic's 529 overloaded_error), the third the answer: at most three "
            "attempts, with a pause between them, or the error",
            text=("Attempt {attempt}: ", "two plus two ", "is four."),
            kind=Refused(("overloaded", "overloaded")),
            only=("whole",),
        ),
    )
}
#: The case names, in the practice's order.
CASE_NAMES: tuple[str, ...] = tuple(CASES)

#: The cases a unary cell also asks with ``stream: false`` (``delivery.UNARY``):
#: those whose facts a whole answer carries (text, calls, a tool result's
#: answer, the end, usage, reasoning, an error). Cases about how a stream is
#: cut, timed, cancelled, read slowly or retried are about streams only.
UNARY_CASES: tuple[str, ...] = (
    "short-text",
    "single-tool",
    "parallel-tools",
    "tool-error-result",
    "in-stream-error",
    "truncated",
    "usage",
    "reasoning",
    "in-stream-error-internal",
    "in-stream-error-throttled",
    "in-stream-error-model",
)

#: The tools every request declares (the practice's side-effect-free tools).
TOOLS: Mapping[str, Mapping[str, Any]] = {
    "add_numbers": {
        "description": "Adds two numbers.",
        "parameters": {
            "type": "object",
            "properties": {"a": {"type": "number"}, "b": {"type": "number"}},
            "required": ["a", "b"],
        },
    },
    "ping": {
        "description": "Checks that a host answers.",
        "parameters": {
            "type": "object",
            "properties": {"host": {"type": "string"}, "count": {"type": "integer"}},
            "required": ["host"],
        },
    },
    "write_note": {
        "description": "Keeps a note.",
        "parameters": {"type": "object"},
    },
}

#: The upstream's in-stream error: (type, code, message) as the provider sends it
#: (anthropic "Errors", OpenAI "Error codes", Gemini "API troubleshooting",
#: Bedrock "ConverseStream" exceptions; checked 2026-12-01).
UPSTREAM_ERRORS: Mapping[str, tuple[str, str | int | None, str]] = {
    "openai-chat": ("server_error", None, "The server had an error while processing your request."),
    "openai-responses": ("server_error", "server_error", "The server had an error."),
    "anthropic": ("overloaded_error", None, "Overloaded"),
    "gemini": ("UNAVAILABLE", 503, "The model is overloaded. Please try again later."),
    "gemini-json": ("UNAVAILABLE", 503, "The model is overloaded. Please try again later."),
    "bedrock-converse": (
        "serviceUnavailableException",
        None,
        "Bedrock is unable to process your request.",
    ),
    "bedrock-invoke": ("overloaded_error", None, "Overloaded"),
}

#: More in-stream errors, by kind: (type, code, message) as each provider sends
#: it (the same references). ``internal``: the provider's own failure;
#: ``throttled``: a rate limit hit mid-stream; ``model``: the model's stream
#: failed (Bedrock's ``modelStreamErrorException``; the others have no type of
#: their own for it and send their internal error). Bedrock's two protocols
#: send each as an exception frame (``:message-type: exception``).
ERROR_KINDS: Mapping[str, Mapping[str, tuple[str, str | int | None, str]]] = {
    "internal": {
        "openai-chat": (
            "server_error",
            None,
            "The server had an error while processing your request.",
        ),
        "openai-responses": ("server_error", "server_error", "The server had an error."),
        "anthropic": ("api_error", None, "Internal server error"),
        "gemini": ("INTERNAL", 500, "An internal error has occurred."),
        "gemini-json": ("INTERNAL", 500, "An internal error has occurred."),
        "bedrock-converse": ("internalServerException", None, "An internal server error occurred."),
        "bedrock-invoke": ("internalServerException", None, "An internal server error occurred."),
    },
    "throttled": {
        "openai-chat": ("requests", "rate_limit_exceeded", "Rate limit reached for requests."),
        "openai-responses": ("rate_limit_exceeded", "rate_limit_exceeded", "Rate limit reached."),
        "anthropic": (
            "rate_limit_error",
            None,
            "Number of request tokens has exceeded your rate limit.",
        ),
        "gemini": ("RESOURCE_EXHAUSTED", 429, "Resource has been exhausted (e.g. check quota)."),
        "gemini-json": (
            "RESOURCE_EXHAUSTED",
            429,
            "Resource has been exhausted (e.g. check quota).",
        ),
        "bedrock-converse": (
            "throttlingException",
            None,
            "Too many requests, please wait before trying again.",
        ),
        "bedrock-invoke": (
            "throttlingException",
            None,
            "Too many requests, please wait before trying again.",
        ),
    },
    "model": {
        "openai-chat": (
            "server_error",
            None,
            "The server had an error while processing your request.",
        ),
        "openai-responses": ("server_error", "server_error", "The server had an error."),
        "anthropic": ("api_error", None, "Internal server error"),
        "gemini": ("INTERNAL", 500, "An internal error has occurred."),
        "gemini-json": ("INTERNAL", 500, "An internal error has occurred."),
        "bedrock-converse": ("modelStreamErrorException", None, "The model stream failed."),
        "bedrock-invoke": ("modelStreamErrorException", None, "The model stream failed."),
    },
}


def upstream_error(case: Case, upstream: str) -> tuple[str, str | int | None, str]:
    """The in-stream error ``case`` ends in from ``upstream``: its kind's
    (``Case.error_kind``, ``ERROR_KINDS``), else the protocol's own overloaded
    or unavailable error (``UPSTREAM_ERRORS``)."""
    if case.error_kind is not None:
        return ERROR_KINDS[case.error_kind][upstream]
    return UPSTREAM_ERRORS[upstream]


#: The upstream protocols that carry a reasoning signature (OpenAI's two have no field).
SIGNATURE_PROTOCOLS = frozenset(
    {"anthropic", "gemini", "gemini-json", "bedrock-converse", "bedrock-invoke"}
)


@dataclass(frozen=True)
class Truth:
    """What a correct reading of the case's stream derives, in unified terms."""

    status: str
    stop_reason: StopReason | None
    text: str
    reasoning: str
    signature: str | None
    #: (upstream id or None, name, parsed arguments) per call.
    calls: tuple[tuple[str | None, str, Any], ...]
    error_type: str | None
    #: (input, output) of the final usage, input counting cached tokens too;
    #: None when the upstream sends none.
    usage: tuple[int, int] | None
    follow_up: str = ""
    #: The usage parts the upstream reports (``usage_parts_of``), by name.
    usage_parts: tuple[tuple[str, int], ...] = ()


#: Every request's prompt: it names the cell (``cell_model``), so that a
#: gateway that sends one fixed model upstream still reaches the cell's case
#: (the mock reads the prompt when the model names no case).
PROMPT = "streamwire acceptance case {cell}: answer as the case says."
#: The prompt's words before the cell's name, as the mock looks for them.
PROMPT_LEAD = PROMPT.partition("{cell}")[0]


def cell_model(case: str, delivery: str, tag: str) -> str:
    """The model, and the name in the prompt, of one cell's requests:
    ``sw-<case>.<delivery>.<tag>``."""
    return f"sw-{case}.{delivery}.{tag}"


def prompt_for(cell: str, canary: str | None = None) -> str:
    """The prompt of a request for ``cell`` (``cell_model``, or a case's name),
    ending with the run's ``canary`` if it has one."""
    prompt = PROMPT.format(cell=cell)
    return f"{prompt} ({canary})" if canary else prompt


#: A salted case's mark, after each piece of its text: `` [<tag>]``.
SALT_MARK = re.compile(r" \[([A-Za-z0-9_]{1,64})\]")


def salted(case: Case, tag: str) -> Case:
    """``case`` with its stream's ``tag`` after each piece of its text (and of
    its follow-up's): the same case, and text that names the stream it was
    written for. Under load a hop that hands one stream's text to another is
    then caught by the tag (``SALT_MARK``), not only by a text that differs."""
    mark = f" [{tag}]"

    def salt(pieces: tuple[str, ...]) -> tuple[str, ...]:
        return tuple(p + mark if p else p for p in pieces)

    return replace(case, text=salt(case.text), kind=case.kind.salted(salt))


def truth(case: Case, upstream: str, *, usage_sent: bool = True, attempt: int = 1) -> Truth:
    """The facts of ``case`` as streamed by ``upstream`` (``usage_sent``: whether
    the request made the upstream report usage, see ``wire.usage_requested``;
    ``attempt``: a retry case's attempt, as it answers when it does not fail)."""
    status = "error" if case.error else ("truncated" if case.stop == "length" else "completed")
    if case.kind.hangs_up:
        status = "cancelled"
    calls = tuple(
        (call_id(upstream, case, i, attempt), c.name, c.arguments)
        for i, c in enumerate(case.calls_of(attempt))
    )
    return Truth(
        status=status,
        stop_reason=case.stop,
        text="".join(case.text_of(attempt)),
        reasoning="".join(case.reasoning),
        signature=case.signature if upstream in SIGNATURE_PROTOCOLS else None,
        calls=calls,
        error_type=upstream_error(case, upstream)[0] if case.error else None,
        usage=case.usage if usage_sent and not case.error else None,
        follow_up="".join(case.follow_up),
        usage_parts=usage_parts_of(case, upstream) if usage_sent and not case.error else (),
    )


def script(
    case: Case,
    upstream: str,
    *,
    model: str,
    usage_sent: bool = True,
    follow_up: bool = False,
    attempt: int = 1,
) -> list[Event]:
    """The unified events of ``case`` for ``upstream`` (``follow_up``: the answer
    to the tool result instead of the first response; ``attempt``: a retry
    case's attempt, whole: how the first one fails is the mock's doing)."""
    slug = case.name.replace("-", "") + (f"a{attempt}" if case.kind.per_attempt else "")
    events: list[Event] = [
        MessageStarted(message_id=f"sw{slug}{int(follow_up)}", model=model, role="assistant"),
        UsageReported(usage=usage_of(case, upstream, final=False)),
    ]
    if follow_up:
        events += [TextDelta(text=t) for t in case.follow_up]
        events.append(UsageReported(usage=usage_of(case, upstream, final=True)))
        events.append(
            MessageCompleted(status="completed", stop_reason="stop", provider_stop_reason=None)
        )
        return events
    for piece in case.reasoning:
        events.append(ReasoningDelta(text=piece))
    if case.signature is not None:
        events.append(ReasoningDelta(signature=case.signature))
    events += [TextDelta(text=t) for t in case.text_of(attempt)]
    events += _calls(case, upstream, attempt)
    if case.error:
        kind, code, message = upstream_error(case, upstream)
        events.append(
            ErrorReceived(phase="provider", type=kind, code=code, message=message, retryable=True)
        )
        events.append(MessageCompleted(status="error", stop_reason=None, provider_stop_reason=None))
        return events
    if usage_sent:
        events.append(_usage(case, upstream))
    ending: Status = "truncated" if case.stop == "length" else "completed"
    events.append(MessageCompleted(status=ending, stop_reason=case.stop, provider_stop_reason=None))
    return events


def usage_parts_of(case: Case, upstream: str) -> tuple[tuple[str, int], ...]:
    """The parts of ``case``'s usage that ``upstream``'s protocol reports."""
    has = PROTOCOL_PARTS.get(upstream, frozenset())
    return tuple((name, n) for name, n in case.usage_parts if name in has)


def usage_of(case: Case, upstream: str, *, final: bool) -> Usage:
    """``case``'s usage as ``upstream`` reports it: its parts where the protocol
    has them, and its input figure in the protocol's own convention (Anthropic
    and Bedrock count only the fresh tokens, ``INPUT_INCLUDES_CACHE``). The
    report before the end (``final=False``, Anthropic's ``message_start``)
    carries the input and one output token."""
    i, o = case.usage
    parts = dict(usage_parts_of(case, upstream))
    read, write = parts.get("cache_read"), parts.get("cache_write")
    if not INPUT_INCLUDES_CACHE.get(upstream, True):
        i -= (read or 0) + (write or 0)
    if not final:
        return Usage(
            input_tokens=i,
            output_tokens=1,
            cache_read_tokens=read,
            cache_creation_tokens=write,
            final=False,
        )
    return Usage(
        input_tokens=i,
        output_tokens=o,
        total_tokens=case.usage[0] + o,
        cache_read_tokens=read,
        cache_creation_tokens=write,
        reasoning_tokens=parts.get("reasoning"),
        final=True,
    )


def _usage(case: Case, upstream: str) -> UsageReported:
    return UsageReported(usage=usage_of(case, upstream, final=True))


def _calls(case: Case, upstream: str, attempt: int = 1) -> list[Event]:
    # Only Chat Completions keys fragments by index on the wire: the other
    # protocols send one call (block, item) after the other.
    interleave = case.interleave and upstream == "openai-chat"
    starts: list[Event] = []
    pieces: list[list[Event]] = []
    ends: list[Event] = []
    for i, call in enumerate(case.calls_of(attempt)):
        cid = call_id(upstream, case, i, attempt)
        source: IdSource = "provider" if cid is not None else "synthetic"
        starts.append(ToolCallStarted(index=i, id=cid, name=call.name, id_source=source))
        pieces.append([ToolCallArgumentsDelta(index=i, id=cid, delta=f) for f in call.fragments])
        ends.append(
            ToolCallCompleted(
                index=i,
                id=cid,
                name=call.name,
                type="function",
                raw_arguments=call.raw_arguments,
                arguments=call.arguments,
                invalid_reason=None,
                id_source=source,
            )
        )
    out: list[Event] = []
    if interleave:
        out += starts
        longest = max((len(p) for p in pieces), default=0)
        for n in range(longest):
            out += [p[n] for p in pieces if n < len(p)]
        out += ends
    else:
        for start, frags, end in zip(starts, pieces, ends, strict=True):
            out += [start, *frags, end]
    return out
