"""The one mapping table of gateway translation: what each target carries, and how.

Every rule of re-encoding unified events into another protocol's wire format
is data in this module, and nothing else decides it:

* ``ROWS``: one row per feature of a stream (text, reasoning, signatures,
  refusals, tool calls, stop reasons, usage, errors, truncation,
  cancellation, ...), one cell per target protocol saying how the target
  carries it, and, where the target cannot, the *declared downgrade*: the
  ``Downgrade.detail`` an encoder reports on ``enc.downgrades`` when a stream
  needs it. An encoder can only report a downgrade that is in this table
  (``downgrade_detail`` raises ``KeyError`` otherwise), so what a target loses
  is listed here or nowhere.
* ``BUILTIN_CALLS``: the built-in tools the caller runs (OpenAI Responses
  ``local_shell_call``, ``shell_call``, ...): the item fields their arguments
  fill where the target has their items, and a row each, whose downgrade
  says what a function call in their place loses.
* ``STOP_REASONS`` / ``RAW_STOP_REASONS``: the normalized ``stop_reason`` to
  each target's raw value, and the raw values a target shares with a source
  (passed through verbatim).
* ``INPUT_INCLUDES_CACHE`` (from ``_usage.py``): whether a protocol's input
  figure counts cached tokens, so that usage is converted, never misread.

``docs/translation.md`` is rendered from this module (regenerate with
``python -m streamwire.translate._docs > docs/translation.md``; checked by
``tests/test_translate.py``). The provider references, checked 2026-11-29,
are each protocol's page in docs/protocols/.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from ..events import StopReason
from ..protocols.anthropic_machine import STOP_REASONS as ANTHROPIC_STOP_REASONS
from ..protocols.gemini_chunks import STOP_REASONS as GEMINI_STOP_REASONS
from ..protocols.openai_responses_calls import BUILTIN_CLIENT_CALLS
from ..protocols.openai_responses_calls import CALLS as RESPONSES_CALLS
from ._usage import INPUT_INCLUDES_CACHE, Figures, figures, input_includes_cache

__all__ = [
    "BUILTIN_CALLS",
    "INPUT_INCLUDES_CACHE",
    "RAW_STOP_REASONS",
    "ROWS",
    "STOP_REASONS",
    "TARGETS",
    "BuiltinCall",
    "Cell",
    "Figures",
    "Row",
    "builtin_fields",
    "downgrade_detail",
    "figures",
    "input_includes_cache",
    "lossy_stop_reason",
    "target_stop_reason",
]

#: The target protocols, in the table's column order.
TARGETS: tuple[str, ...] = ("openai-chat", "openai-responses", "anthropic", "gemini")


@dataclass(frozen=True, slots=True)
class Cell:
    """How one target carries one feature."""

    #: What the target's wire carries for it.
    how: str
    #: When set, what is lost when a stream needs this feature: the detail of
    #: the ``Downgrade`` the encoder reports. None: always carried.
    downgrade: str | None = None


@dataclass(frozen=True, slots=True)
class Row:
    """One feature of a stream and how every target carries it."""

    #: The stable feature name (``Downgrade.feature``).
    feature: str
    #: What the feature is, on the source side (unified events).
    source: str
    #: Target protocol -> cell.
    cells: Mapping[str, Cell]


def _row(feature: str, source: str, **cells: Cell) -> Row:
    by_target = {name.replace("_", "-"): cell for name, cell in cells.items()}
    assert set(by_target) == set(TARGETS), feature
    return Row(feature, source, by_target)


def _all(how: str, downgrade: str | None = None) -> dict[str, Cell]:
    cell = Cell(how, downgrade)
    return {t.replace("-", "_"): cell for t in TARGETS}


@dataclass(frozen=True, slots=True)
class BuiltinCall:
    """A built-in tool the caller runs (an OpenAI Responses item type), as carried.

    ``openai-responses`` sends the item of its own type, whole when the call
    completes (the source's item carries its inputs only when done), with
    the call's arguments as its input fields; the other targets have no such
    item and send a function call named after the tool, the arguments as
    they are.
    """

    #: The tool's name (the call's ``name``: the request's tool type).
    tool: str
    #: The item id's prefix, as OpenAI gives it (``lsh_…``).
    prefix: str
    #: The item's input fields the arguments hold, with their JSON type; none:
    #: the arguments are the item's ``arguments`` object (a tool search).
    fields: Mapping[str, type]
    #: The fields of which the arguments must hold one.
    one_of: tuple[str, ...]
    #: Item fields the arguments may leave out, and their value then.
    defaults: Mapping[str, object]
    #: Item fields of fixed value.
    constants: Mapping[str, object]
    #: What the arguments look like, for the table.
    shape: str
    #: The output item that answers the call (lost with the item type), for the table.
    output: str


#: The JSON type of each input field of a built-in call item.
_INPUT_TYPES: Mapping[str, type] = {
    "action": dict,
    "actions": list,
    "operation": dict,
    "pending_safety_checks": list,
}


def _builtin(
    call_type: str,
    prefix: str,
    shape: str,
    output: str,
    *,
    one_of: tuple[str, ...] = (),
    defaults: Mapping[str, object] | None = None,
    constants: Mapping[str, object] | None = None,
) -> BuiltinCall:
    """A row of ``BUILTIN_CALLS``: the tool name and input fields are the adapter's."""
    spec = RESPONSES_CALLS[call_type]
    assert spec.name is not None and call_type in BUILTIN_CLIENT_CALLS, call_type
    fields = {name: _INPUT_TYPES[name] for name in spec.inputs}
    return BuiltinCall(
        spec.name,
        prefix,
        fields,
        one_of or tuple(fields),
        defaults or {},
        constants or {},
        shape,
        output,
    )


#: Caller-run built-in calls (``protocols/openai_responses_calls.py``): their
#: arguments are the item's input fields as a JSON object.
BUILTIN_CALLS: Mapping[str, BuiltinCall] = {
    "local_shell_call": _builtin(
        "local_shell_call",
        "lsh",
        '``{"action": {"type": "exec", "command", "env", ...}}``',
        "local_shell_call_output",
    ),
    "shell_call": _builtin(
        "shell_call",
        "sh",
        '``{"action": {"commands", "max_output_length", "timeout_ms"}}``',
        "shell_call_output (each command's stdout, stderr and outcome)",
    ),
    "apply_patch_call": _builtin(
        "apply_patch_call",
        "apc",
        '``{"operation": {"type", "path", "diff"}}``',
        "apply_patch_call_output",
    ),
    "tool_search_call": _builtin(
        "tool_search_call",
        "tsc",
        "the search's own ``arguments`` object",
        "tool_search_output (the tool definitions to load)",
        constants={"execution": "client"},
    ),
    "computer_call": _builtin(
        "computer_call",
        "cu",
        '``{"action" | "actions", "pending_safety_checks"}``',
        "computer_call_output (a screenshot, and the acknowledged safety checks)",
        one_of=("action", "actions"),
        defaults={"pending_safety_checks": []},
    ),
}


def builtin_fields(call_type: str, arguments: object) -> dict[str, object] | None:
    """The item's input fields for a built-in call's parsed ``arguments``, or
    None when they are not the item's (the call is then sent as a function call)."""
    builtin = BUILTIN_CALLS[call_type]
    if not isinstance(arguments, dict):
        return None
    if not builtin.fields:
        return {"arguments": arguments, **builtin.constants}
    if any(type(value) is not builtin.fields.get(key) for key, value in arguments.items()):
        return None
    if not any(key in arguments for key in builtin.one_of):
        return None
    return {**builtin.defaults, **arguments, **builtin.constants}


def _builtin_row(call_type: str, builtin: BuiltinCall) -> Row:
    lost = (
        f"a {call_type} sent as a function call named {builtin.tool}, its arguments "
        f"the item's inputs: the item type is lost, and with it its {builtin.output}"
    )
    function = f"a function call ``{builtin.tool}`` with arguments {builtin.shape}"
    return _row(
        call_type,
        f"a call of a built-in tool the caller runs (responses ``{call_type}``)",
        openai_chat=Cell(function, lost),
        openai_responses=Cell(
            f"a ``{call_type}`` item (``call_id``; the arguments as its input fields), "
            "sent whole when the call completes",
            f"a {call_type} whose arguments are not its item's inputs was sent as a "
            f"function call named {builtin.tool}",
        ),
        anthropic=Cell(f"a ``tool_use`` block ``{builtin.tool}`` with input {builtin.shape}", lost),
        gemini=Cell(f"a ``functionCall`` ``{builtin.tool}`` with args {builtin.shape}", lost),
    )


#: The table. Order: identity, content, tool calls, endings, usage, errors, the rest.
ROWS: tuple[Row, ...] = (
    _row(
        "message",
        "``MessageStarted``: message id, model",
        openai_chat=Cell("chunk ``id`` (the source's message id, else ``chatcmpl-…``), ``model``"),
        openai_responses=Cell(
            "``response.created`` + ``response.in_progress``; response ``id`` "
            "(the source's, else ``resp_…``), ``model``; item ids derived from it"
        ),
        anthropic=Cell(
            "``message_start``: message ``id`` (the source's, else ``msg_…``), ``model``"
        ),
        gemini=Cell("``responseId`` and ``modelVersion`` on every chunk"),
    ),
    _row(
        "extra_choices",
        "choices (candidates) other than 0 (``n > 1``)",
        openai_chat=Cell("every choice, by its ``index``"),
        openai_responses=Cell(
            "one response per stream", "only choice 0 is carried; the other choices are dropped"
        ),
        anthropic=Cell(
            "one message per stream", "only choice 0 is carried; the other choices are dropped"
        ),
        gemini=Cell("every candidate, by its ``index``"),
    ),
    _row(
        "text",
        "``TextDelta``",
        openai_chat=Cell("``delta.content``"),
        openai_responses=Cell(
            "a ``message`` item's ``output_text`` part: ``response.output_text.delta``"
        ),
        anthropic=Cell("a ``text`` block: ``text_delta``"),
        gemini=Cell("a ``{text}`` part"),
    ),
    _row(
        "reasoning",
        "``ReasoningDelta.text`` (kind ``text``)",
        openai_chat=Cell(
            "``delta.reasoning_content`` (the DeepSeek / vLLM extension; option "
            "``chat_reasoning``: ``reasoning_content`` (default), ``reasoning`` "
            "(OpenRouter, Groq) or ``none``)",
            "reasoning dropped (option chat_reasoning='none')",
        ),
        openai_responses=Cell(
            "a ``reasoning`` item's ``reasoning_text`` part: ``response.reasoning_text.delta``"
        ),
        anthropic=Cell("a ``thinking`` block: ``thinking_delta``"),
        gemini=Cell('a ``{text, "thought": true}`` part'),
    ),
    _row(
        "reasoning_summary",
        "``ReasoningDelta.text`` of kind ``summary`` (a summary of the reasoning)",
        openai_chat=Cell(
            "as reasoning", "carried as reasoning: the target cannot mark it as a summary"
        ),
        openai_responses=Cell("a ``summary_text`` part: ``response.reasoning_summary_text.delta``"),
        anthropic=Cell(
            "as thinking", "carried as thinking: the target cannot mark it as a summary"
        ),
        gemini=Cell(
            "as a thought part", "carried as a thought: the target cannot mark it as a summary"
        ),
    ),
    _row(
        "reasoning_signature",
        "``ReasoningDelta.signature`` (opaque, verbatim)",
        openai_chat=Cell("no field", "reasoning signatures dropped: chat has no field for them"),
        openai_responses=Cell(
            "no field",
            "reasoning signatures dropped: responses has no field for them "
            "(encrypted_content is redacted reasoning, not a signature)",
        ),
        anthropic=Cell(
            "``signature_delta``, which closes its ``thinking`` block (a signature "
            "without thinking text gets a block of its own)"
        ),
        gemini=Cell(
            "``thoughtSignature`` on the next part of the same feed (a function call, "
            'a thought), else on an empty ``{"text": ""}`` part'
        ),
    ),
    _row(
        "redacted_reasoning",
        "``ReasoningDelta.redacted`` (encrypted reasoning, verbatim)",
        openai_chat=Cell("no field", "redacted reasoning dropped: chat has no field for it"),
        openai_responses=Cell("``encrypted_content`` of a ``reasoning`` item"),
        anthropic=Cell("a ``redacted_thinking`` block with the ``data``"),
        gemini=Cell("no field", "redacted reasoning dropped: gemini has no field for it"),
    ),
    _row(
        "refusal",
        "``RefusalDelta``",
        openai_chat=Cell("``delta.refusal``"),
        openai_responses=Cell("a ``refusal`` part: ``response.refusal.delta``"),
        anthropic=Cell(
            "as text; the stop reason says ``refusal``",
            "refusal text sent as text: anthropic has no refusal content",
        ),
        gemini=Cell(
            "as text; the finish reason says ``SAFETY``",
            "refusal text sent as text: gemini has no refusal content",
        ),
    ),
    _row(
        "tool_call",
        "``ToolCallStarted`` / ``ToolCallArgumentsDelta`` / ``ToolCallCompleted`` (client calls)",
        openai_chat=Cell(
            "``delta.tool_calls[]``: ``index`` = the call's position in its choice; "
            "``id``, ``type``, ``function.name`` once, when known; each argument "
            "fragment as it arrives; a call with no argument text gets ``{}``"
        ),
        openai_responses=Cell(
            "a ``function_call`` item (``call_id`` = the call id, item id ``fc_…``); "
            "``response.function_call_arguments.delta`` per fragment; ``.done`` and "
            "``output_item.done`` at the call's end; a call with no argument text "
            "gets ``{}``"
        ),
        anthropic=Cell(
            "a ``tool_use`` block (``id``, ``name``); ``input_json_delta`` per "
            "fragment; ``content_block_stop`` at the call's end"
        ),
        gemini=Cell(
            "a ``functionCall`` part ``{name, args, id}`` when the call completes "
            "(Gemini sends calls whole: the fragments are held until then; a "
            "synthetic id is not sent)"
        ),
    ),
    _row(
        "custom_tool_call",
        "a call whose input is free text (responses ``custom_tool_call``)",
        openai_chat=Cell(
            'a function call with arguments ``{"input": <text>}``, streamed',
            'free-text tool input wrapped as JSON {"input": ...}',
        ),
        openai_responses=Cell(
            "a ``custom_tool_call`` item: ``response.custom_tool_call_input.delta``"
        ),
        anthropic=Cell(
            'a ``tool_use`` block with input ``{"input": <text>}``, streamed',
            'free-text tool input wrapped as JSON {"input": ...}',
        ),
        gemini=Cell(
            'a ``functionCall`` with args ``{"input": <text>}``',
            'free-text tool input wrapped as JSON {"input": ...}',
        ),
    ),
    *(_builtin_row(call_type, spec) for call_type, spec in BUILTIN_CALLS.items()),
    _row(
        "server_tool_call",
        "a call the provider runs itself (``executor='server'``: web search, code "
        "execution, MCP, ...)",
        openai_chat=Cell(
            "not offered", "provider-run tool calls dropped: never offered to the client"
        ),
        openai_responses=Cell(
            "not offered", "provider-run tool calls dropped: never offered to the client"
        ),
        anthropic=Cell(
            "a ``server_tool_use`` block when the source's was one; others not offered",
            "provider-run tool calls other than anthropic server_tool_use dropped",
        ),
        gemini=Cell("not offered", "provider-run tool calls dropped: never offered to the client"),
    ),
    _row(
        "served_tool_call",
        "a client call the provider then answered itself in the same stream (gemini's "
        "server-side tool turns: a second ``ToolCallCompleted``, ``executor='server'``)",
        **_all(
            "offered as the client's: it was on the wire before the answer came",
            "a call the provider ran itself was already sent as the client's: a "
            "streaming re-encoder cannot withdraw it",
        ),
    ),
    _row(
        "invalid_tool_arguments",
        "a completed call whose arguments are not a JSON object",
        openai_chat=Cell("streamed verbatim: the client's parser sees the same text"),
        openai_responses=Cell("streamed verbatim: the client's parser sees the same text"),
        anthropic=Cell("streamed verbatim: the client's parser sees the same text"),
        gemini=Cell(
            "``args`` must be an object",
            "a call with invalid JSON arguments was dropped: gemini args must be an object",
        ),
    ),
    _row(
        "unfinished_tool_call",
        "a call the source stream ended inside (abandoned)",
        openai_chat=Cell(
            "left open in a cut stream, as the source left it",
            "the finish_reason completes every call, one the source left unfinished too",
        ),
        openai_responses=Cell(
            "left open (no ``output_item.done``) in a cut stream, as the source left it",
            "an unfinished call's item was closed (before the terminal event, or to "
            "send what followed it): the client's parser completes it; or, held back "
            "(its id or name unknown, or a built-in item sent whole), it was not sent",
        ),
        anthropic=Cell(
            "left open (no ``content_block_stop``), as the source left it",
            "an unfinished call's block was stopped to send what followed it: the "
            "client's parser completes it; or, held back (its id or name unknown), "
            "it was not sent",
        ),
        gemini=Cell(
            "never sent",
            "an unfinished call was not sent: gemini sends calls whole",
        ),
    ),
    _row(
        "tool_call_completion",
        "a call the source completed (``ToolCallCompleted``) in a stream that then "
        "ends without its stop reason (cut, error, conflict)",
        openai_chat=Cell(
            "chat completes calls only at the choice's ``finish_reason``",
            "a completed call arrives unfinished: the stream ended without a finish_reason",
        ),
        openai_responses=Cell("``output_item.done`` when the call completes"),
        anthropic=Cell("``content_block_stop`` when the call completes"),
        gemini=Cell("the whole call when it completes"),
    ),
    _row(
        "arguments_mismatch",
        "a call whose streamed fragments do not add up to its final arguments "
        "(Vertex ``partialArgs`` out of order)",
        openai_chat=Cell(
            "fragments as they arrived",
            "the fragments sent do not add up to the final arguments (already streamed)",
        ),
        openai_responses=Cell(
            "fragments as they arrived",
            "the fragments sent do not add up to the final arguments (already streamed)",
        ),
        anthropic=Cell(
            "fragments as they arrived",
            "the fragments sent do not add up to the final arguments (already streamed)",
        ),
        gemini=Cell("the final arguments (calls are sent whole)"),
    ),
    _row(
        "interleaved_tool_calls",
        "fragments of several calls interleaved (some compatible chat servers)",
        openai_chat=Cell("carried: fragments are keyed by ``index``, in any order"),
        openai_responses=Cell(
            "items are sequential: a call's item closes when the next item starts "
            "if its arguments are whole JSON by then; otherwise what follows is "
            "held until they are (or the call completes)",
            "argument fragments arriving after their call's item closed were dropped",
        ),
        anthropic=Cell(
            "blocks are sequential: a ``tool_use`` block stops when the next block "
            "starts if its input is whole JSON by then; otherwise what follows is "
            "held until it is (or the call completes)",
            "argument fragments arriving after their call's block stopped were dropped",
        ),
        gemini=Cell("carried: calls are sent whole"),
    ),
    _row(
        "tool_call_identity",
        "a call whose id or name is unknown when it starts",
        openai_chat=Cell("``id`` and ``name`` sent once, when they become known"),
        openai_responses=Cell(
            "the item waits (fragments held) until the id and name are known",
            "a call without an id or name got a generated one",
        ),
        anthropic=Cell(
            "the block waits (fragments held) until the id and name are known",
            "a call without an id or name got a generated one",
        ),
        gemini=Cell(
            "sent whole, with the final id and name",
            "a call without a name was sent with an empty name",
        ),
    ),
    _row(
        "stop_reason",
        "``MessageCompleted.stop_reason`` (status ``completed`` or ``truncated``)",
        openai_chat=Cell(
            "``finish_reason``: stop, length, tool_calls, content_filter",
            "pause, other and a missing stop reason have no chat finish_reason: sent as stop",
        ),
        openai_responses=Cell(
            "``response.completed`` (stop, tool_calls, a refusal's content_filter); "
            "``response.incomplete`` with ``incomplete_details.reason`` "
            "``max_output_tokens`` (length) or ``content_filter``; responses has "
            "no stop reason of its own: stop vs tool_calls is whether function "
            "calls were made",
            "the stop reason is not representable (pause, other, none, or stop vs "
            "tool_calls disagreeing with the calls made): sent as response.completed",
        ),
        anthropic=Cell(
            "``message_delta.delta.stop_reason``: end_turn (or the source's "
            "stop_sequence), max_tokens, tool_use, refusal, pause_turn",
            "other (or no stop reason) has no anthropic stop_reason: sent as end_turn",
        ),
        gemini=Cell(
            "``finishReason``: STOP, MAX_TOKENS, SAFETY (or the source's own "
            "Gemini reason), OTHER; Gemini has no tool_calls reason: STOP with "
            "function calls is one",
            "the stop reason is not representable (pause, none, or stop vs "
            "tool_calls disagreeing with the calls made): sent as STOP / OTHER",
        ),
    ),
    _row(
        "usage",
        "``UsageReported``: the last report (input, output, total, cache reads, reasoning)",
        openai_chat=Cell(
            "a final chunk with empty ``choices`` and ``usage`` (``include_usage``; "
            "``usage: null`` on every other chunk), before ``[DONE]``; "
            "``prompt_tokens`` counts cached tokens "
            "(``prompt_tokens_details.cached_tokens``), ``total_tokens`` the "
            "source's or input + output",
            "the last usage report could not be carried",
        ),
        openai_responses=Cell(
            "``usage`` of the terminal response (``input_tokens`` counts cached "
            "tokens, ``input_tokens_details.cached_tokens``, "
            "``output_tokens_details.reasoning_tokens``)",
            "the last usage report could not be carried (responses has usage only "
            "in its terminal event)",
        ),
        anthropic=Cell(
            "``message_start.message.usage`` (the input figures known by then) and "
            "cumulative ``message_delta.usage`` (input, output, cache figures); "
            "``input_tokens`` excludes cache reads and writes",
            "the last usage report could not be carried (anthropic has usage only "
            "in message_start and message_delta)",
        ),
        gemini=Cell(
            "``usageMetadata`` on the next chunk and on the finish chunk "
            "(``promptTokenCount`` counts cached tokens; ``candidatesTokenCount`` "
            "= output - reasoning; ``thoughtsTokenCount`` = reasoning)",
            "the last usage report could not be carried",
        ),
    ),
    _row(
        "usage_total",
        "``Usage.total_tokens`` when it is not input + output (e.g. Gemini's tool-use "
        "prompt tokens)",
        openai_chat=Cell("``total_tokens``"),
        openai_responses=Cell("``total_tokens``"),
        anthropic=Cell(
            "no total (clients add input and output)",
            "the reported total is not input + output, and anthropic has no total field",
        ),
        gemini=Cell("``totalTokenCount``"),
    ),
    _row(
        "usage_placeholder",
        "a stream that reports no usage",
        openai_chat=Cell("no usage chunk"),
        openai_responses=Cell("``usage: null``"),
        anthropic=Cell(
            "usage is required in ``message_start`` and ``message_delta``",
            "the source reported no usage: zeros were sent where anthropic requires usage",
        ),
        gemini=Cell("no ``usageMetadata``"),
    ),
    _row(
        "usage_cache_creation",
        "``Usage.cache_creation_tokens``",
        openai_chat=Cell(
            "counted in ``prompt_tokens``",
            "cache-write tokens counted in prompt_tokens: chat has no field for them",
        ),
        openai_responses=Cell("``input_tokens_details.cache_write_tokens``"),
        anthropic=Cell("``cache_creation_input_tokens``"),
        gemini=Cell(
            "counted in ``promptTokenCount``",
            "cache-write tokens counted in promptTokenCount: gemini has no field for them",
        ),
    ),
    _row(
        "usage_reasoning_tokens",
        "``Usage.reasoning_tokens``",
        openai_chat=Cell("``completion_tokens_details.reasoning_tokens``"),
        openai_responses=Cell("``output_tokens_details.reasoning_tokens``"),
        anthropic=Cell(
            "counted in ``output_tokens``",
            "reasoning tokens counted in output_tokens: anthropic reports no breakdown",
        ),
        gemini=Cell("``thoughtsTokenCount``"),
    ),
    _row(
        "error",
        "``ErrorReceived`` (provider, framing or limit): the stream ends in ``error``",
        openai_chat=Cell('a ``{"error": {"message", "type", "code"}}`` chunk; no ``[DONE]``'),
        openai_responses=Cell(
            'an ``error`` event ``{"error": {"type", "code", "message"}}`` (as '
            "OpenAI sends it), then ``response.failed``"
        ),
        anthropic=Cell('``event: error`` with ``{"type": "error", "error": {"type", "message"}}``'),
        gemini=Cell('a ``{"error": {"code", "message", "status"}}`` chunk (status = type)'),
    ),
    _row(
        "error_code",
        "``ErrorReceived.code``",
        openai_chat=Cell("``error.code``"),
        openai_responses=Cell("``error.code``"),
        anthropic=Cell(
            "no field", "the error code was dropped: anthropic errors carry a type only"
        ),
        gemini=Cell(
            "``error.code``, an HTTP status (a source code that is none is replaced by the "
            "status its type names, 500 else)",
            "the error code was replaced by an HTTP status: Gemini's code is a number",
        ),
    ),
    _row(
        "after_error",
        "events after an error",
        **_all(
            "nothing follows the error event (it is terminal in every target)",
            "events after the error were dropped: the error event is terminal",
        ),
    ),
    _row(
        "truncation",
        "status ``truncated`` (stop reason ``length``)",
        openai_chat=Cell("``finish_reason: length``"),
        openai_responses=Cell("``response.incomplete``, reason ``max_output_tokens``"),
        anthropic=Cell("``stop_reason: max_tokens``"),
        gemini=Cell("``finishReason: MAX_TOKENS``"),
    ),
    _row(
        "incomplete",
        "status ``incomplete``: the source ended without its terminal signal",
        openai_chat=Cell("cut: no ``finish_reason``, no ``[DONE]``"),
        openai_responses=Cell(
            "cut: no terminal event; a source ``response.incomplete`` with reason "
            "``max_messages`` or ``steered`` is carried as one"
        ),
        anthropic=Cell("cut: no ``message_delta`` stop reason, no ``message_stop``"),
        gemini=Cell("cut: no ``finishReason``"),
    ),
    _row(
        "cancelled",
        "status ``cancelled`` (the caller cancelled the source)",
        **_all(
            "cut, as ``incomplete``",
            "the source was cancelled: the stream is cut (the client sees it incomplete)",
        ),
    ),
    _row(
        "protocol_conflict",
        "status ``protocol_conflict`` (the source contradicted itself)",
        **_all(
            "the target's error event, type ``protocol_conflict``",
            "the source contradicted itself: sent as an error of type protocol_conflict",
        ),
    ),
    _row(
        "unknown_event",
        "``UnknownEvent``",
        **_all("not carried", "unknown source events were dropped"),
    ),
    _row(
        "not_in_events",
        "citations, annotations, logprobs, images, server tool results, provider metrics, warnings",
        **_all(
            "not carried: the unified events do not carry them (see the source's "
            "``StreamResult``: ``provider_content``, ``provider_metrics``, ``warnings``)"
        ),
    ),
)

_CELLS: dict[tuple[str, str], Cell] = {
    (target, row.feature): cell for row in ROWS for target, cell in row.cells.items()
}


def downgrade_detail(target: str, feature: str) -> str:
    """The declared downgrade of ``feature`` for ``target``; KeyError if none is declared."""
    detail = _CELLS[target, feature].downgrade
    if detail is None:
        raise KeyError(f"{target} declares no downgrade of {feature!r}")
    return detail


# --- stop reasons -----------------------------------------------------------------

#: Normalized stop reason -> each target's raw value. ``openai-responses`` is
#: decided by its encoder (terminal event and incomplete reason), so not here.
STOP_REASONS: Mapping[str, Mapping[StopReason, str]] = {
    "openai-chat": {
        "stop": "stop",
        "length": "length",
        "tool_calls": "tool_calls",
        "content_filter": "content_filter",
        "pause": "stop",
        "other": "stop",
        "error": "stop",
    },
    "anthropic": {
        "stop": "end_turn",
        "length": "max_tokens",
        "tool_calls": "tool_use",
        "content_filter": "refusal",
        "pause": "pause_turn",
        "other": "end_turn",
        "error": "end_turn",
    },
    "gemini": {
        "stop": "STOP",
        "length": "MAX_TOKENS",
        "tool_calls": "STOP",
        "content_filter": "SAFETY",
        "pause": "OTHER",
        "other": "OTHER",
        "error": "OTHER",
    },
}
#: (target, normalized stop reason) pairs the target cannot represent.
LOSSY_STOP_REASONS = frozenset(
    {
        ("openai-chat", "pause"),
        ("openai-chat", "other"),
        ("anthropic", "other"),
        ("gemini", "pause"),
        ("openai-responses", "pause"),
        ("openai-responses", "other"),
    }
)
#: Raw stop reasons a target shares with some source, by normalized category:
#: a source's raw value found here with the same category is passed verbatim.
RAW_STOP_REASONS: Mapping[str, Mapping[str, StopReason]] = {
    "openai-chat": {
        "stop": "stop",
        "length": "length",
        "tool_calls": "tool_calls",
        "content_filter": "content_filter",
    },
    "anthropic": ANTHROPIC_STOP_REASONS,
    # The decoder's table without its failures (an error is never re-sent as a
    # finish reason), plus the reasons it reads as ``other``.
    "gemini": {
        **{raw: stop for raw, stop in GEMINI_STOP_REASONS.items() if stop != "error"},
        "OTHER": "other",
        "LANGUAGE": "other",
    },
}


def lossy_stop_reason(target: str, stop: StopReason | None) -> bool:
    """Whether ``target`` cannot represent this normalized stop reason (or its absence)."""
    return stop is None or (target, stop) in LOSSY_STOP_REASONS


def target_stop_reason(target: str, stop: StopReason | None, raw: str | None) -> str:
    """The raw stop reason ``target`` sends for a normalized one (and the source's raw)."""
    known = RAW_STOP_REASONS[target]
    if raw is not None and stop is not None and known.get(raw) == stop:
        return raw
    return STOP_REASONS[target][stop or "stop"]
