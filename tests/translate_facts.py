"""What a translated stream must keep: source result vs target result, or a declared downgrade.

``differences(...)`` compares what the source adapter made of its bytes with
what the target adapter makes of the re-encoded bytes, fact by fact (status
category, stop reason, text, reasoning and signatures, refusals, tool calls
with ids, names and arguments, usage in one convention, the error, the
message id and model), and returns every difference that no declared
downgrade (``enc.downgrades``) accounts for. The rules of what a downgrade
excuses are the mapping table's (``streamwire/translate/_mapping.py``).
"""

from __future__ import annotations

from typing import Any

import streamwire as sw
from streamwire.toolcalls import ABANDONED
from streamwire.translate._mapping import BUILTIN_CALLS
from streamwire.translate._usage import figures

#: Source status -> the target status it must arrive as, and the downgrade
#: that must be declared when they differ.
STATUS: dict[str, tuple[str, str | None]] = {
    "completed": ("completed", None),
    "truncated": ("truncated", None),
    "error": ("error", None),
    "incomplete": ("incomplete", None),
    "cancelled": ("incomplete", "cancelled"),
    "protocol_conflict": ("error", "protocol_conflict"),
}
SINGLE_CHOICE = frozenset({"anthropic", "openai-responses"})
REFUSAL_AS_TEXT = frozenset({"anthropic", "gemini"})
SIGNATURES = frozenset({"anthropic", "gemini"})
REDACTED = frozenset({"anthropic", "openai-responses"})
#: Downgrades that may change whether a carried call can be executed.
CALL_DOWNGRADES = frozenset(
    {"unfinished_tool_call", "arguments_mismatch", "interleaved_tool_calls", "tool_call_completion"}
)


def _same_figure(a: int | None, b: int | None) -> bool:
    return (a or 0) == (b or 0)


def _text_with_refusal(events: list[sw.Event], choice: int) -> str:
    parts = [
        e.text
        for e in events
        if isinstance(e, sw.TextDelta | sw.RefusalDelta) and e.choice == choice
    ]
    return "".join(parts)


def _redacted(events: list[sw.Event], choice: int) -> list[str]:
    return [
        e.redacted
        for e in events
        if isinstance(e, sw.ReasoningDelta) and e.redacted and e.choice == choice
    ]


def _joined(events: list[sw.Event], kind: type[Any], choice: int) -> str:
    return "".join(e.text for e in events if type(e) is kind and e.choice == choice)


def _before_error(events: list[sw.Event]) -> list[sw.Event]:
    for i, event in enumerate(events):
        if isinstance(event, sw.ErrorReceived):
            return events[:i]
    return events


def differences(
    source: str,
    src: sw.StreamResult,
    src_events: list[sw.Event],
    target: str,
    tgt: sw.StreamResult,
    tgt_events: list[sw.Event],
    downgrades: list[sw.Downgrade],
) -> list[str]:
    """Every fact the target lost that no declared downgrade accounts for."""
    declared = {d.feature for d in downgrades}
    out: list[str] = []

    def need(feature: str, what: str) -> None:
        if feature not in declared:
            out.append(f"{what} (no {feature!r} downgrade declared)")

    # The target's own stream is clean, whatever the source was.
    if tgt.conflicts:
        out.append(f"the target stream has conflicts: {tgt.conflicts}")
    if not tgt.framing_ok:
        out.append(f"the target stream broke framing: {tgt.error}")
    partial = "after_error" in declared

    choices = [c for c in src.choices if target not in SINGLE_CHOICE or c.index == 0]
    if target in SINGLE_CHOICE and len(src.choices) > 1:
        need("extra_choices", f"{len(src.choices)} choices, one carried")
    by_index = {c.index: c for c in tgt.choices}
    for choice in choices:
        got = by_index.get(choice.index)
        if got is None:
            out.append(f"choice {choice.index} is missing")
            continue
        out.extend(_choice(target, choice, got, src_events, tgt_events, need, partial, declared))
        served = _served(src_events, choice.index)
        out.extend(_calls(target, src, tgt, choice.index, need, partial, declared, served))

    out.extend(_usage(source, src, target, tgt, need, declared))
    out.extend(_error(src, tgt, need, declared))
    if src.message_id is not None and tgt.message_id != src.message_id:
        out.append(f"message id {src.message_id!r} became {tgt.message_id!r}")
    if src.model is not None and tgt.model != src.model:
        out.append(f"model {src.model!r} became {tgt.model!r}")
    return out


def _choice(
    target: str,
    choice: sw.ChoiceResult,
    got: sw.ChoiceResult,
    src_events: list[sw.Event],
    tgt_events: list[sw.Event],
    need: Any,
    partial: bool,
    declared: set[str],
) -> list[str]:
    out: list[str] = []
    where = f"choice {choice.index}"
    expected, feature = STATUS[choice.status]
    if got.status != expected:
        out.append(f"{where}: status {choice.status} arrived as {got.status}")
    elif feature is not None:
        need(feature, f"{where}: status {choice.status} arrived as {got.status}")
    if expected in ("completed", "truncated") and got.stop_reason != choice.stop_reason:
        need("stop_reason", f"{where}: stop reason {choice.stop_reason} -> {got.stop_reason}")
    # After an error the target has exactly what came before it (after_error).
    before = _before_error(src_events) if partial else src_events
    text = _joined(before, sw.TextDelta, choice.index)
    refusal = _joined(before, sw.RefusalDelta, choice.index)
    reasoning = _joined(before, sw.ReasoningDelta, choice.index)
    if refusal and target in REFUSAL_AS_TEXT:
        need("refusal", f"{where}: refusal sent as text")
        text = _text_with_refusal(before, choice.index)
    elif got.refusal != refusal:
        out.append(f"{where}: refusal {refusal!r:.80} -> {got.refusal!r:.80}")
    if got.text != text:
        out.append(f"{where}: text {text!r:.120} -> {got.text!r:.120}")
    if reasoning and not got.reasoning and "reasoning" in declared:
        pass
    elif got.reasoning != reasoning:
        out.append(f"{where}: reasoning {reasoning!r:.80} -> {got.reasoning!r:.80}")
    sigs = [
        e.signature
        for e in before
        if isinstance(e, sw.ReasoningDelta) and e.signature and e.choice == choice.index
    ]
    if target in SIGNATURES:
        if list(got.reasoning_signatures) != sigs:
            out.append(f"{where}: signatures {len(sigs)} -> {len(got.reasoning_signatures)}")
    elif sigs:
        need("reasoning_signature", f"{where}: signatures not carried")
    redacted = _redacted(before, choice.index)
    if target in REDACTED:
        got_redacted = _redacted(tgt_events, choice.index)
        if got_redacted != redacted:
            out.append(f"{where}: redacted reasoning {len(redacted)} -> {len(got_redacted)}")
    elif redacted:
        need("redacted_reasoning", f"{where}: redacted reasoning not carried")
    return out


def _carried(target: str, call: sw.ToolCall) -> bool:
    if call.executor == "client":
        return True
    return target == "anthropic" and call.type == "server_tool_use"


def _served(events: list[sw.Event], choice: int) -> set[int]:
    """The calls a source completed as the client's, then as the provider's
    (gemini's server-side tool turns): the target had sent them already."""
    first: dict[int, str] = {}
    served = set()
    for event in events:
        if isinstance(event, sw.ToolCallCompleted) and event.choice == choice:
            was = first.setdefault(event.index, event.executor)
            if was == "client" and event.executor == "server":
                served.add(event.index)
    return served


def _calls(
    target: str,
    src: sw.StreamResult,
    tgt: sw.StreamResult,
    index: int,
    need: Any,
    partial: bool,
    declared: set[str],
    served: set[int],
) -> list[str]:
    out: list[str] = []
    src_calls = [c for c in src.choices[_position(src, index)].tool_calls]
    tgt_calls = list(tgt.choices[_position(tgt, index)].tool_calls)
    if served:
        need("served_tool_call", f"choice {index}: calls the provider answered were offered")
    if any(not _carried(target, c) and c.index not in served for c in src_calls):
        need("server_tool_call", f"choice {index}: provider-run calls not offered")
    expected = [c for c in src_calls if _carried(target, c) or c.index in served]
    if target == "gemini":
        kept = []
        for call in expected:
            # After an error, a call may be missing for that reason alone (after_error).
            if call.invalid_reason == ABANDONED:
                if not partial:
                    need("unfinished_tool_call", f"call {call.id} unfinished, not sent")
            elif call.arguments is None:
                if not partial:
                    need("invalid_tool_arguments", f"call {call.id} invalid, dropped")
            else:
                kept.append(call)
        expected = kept
    elif len(expected) > len(tgt_calls) and not partial:
        # A call held back (identity unknown, or a built-in item sent whole)
        # that the source never completed is not sent (unfinished_tool_call).
        sent = {c.id for c in tgt_calls}
        kept = []
        for call in expected:
            if call.invalid_reason == ABANDONED and (call.id is None or call.id not in sent):
                need("unfinished_tool_call", f"call {call.id} unfinished, not sent")
            else:
                kept.append(call)
        expected = kept
    if partial:
        expected = expected[: len(tgt_calls)]
    if len(expected) != len(tgt_calls):
        return [f"choice {index}: {len(expected)} calls -> {len(tgt_calls)}"]
    for want, got in zip(expected, tgt_calls, strict=True):
        where = f"choice {index} call {want.index}"
        if want.name != got.name and not (want.name is None and "tool_call_identity" in declared):
            out.append(f"{where}: name {want.name!r} -> {got.name!r}")
        synthetic = want.id_source == "synthetic" and target == "gemini"
        if (
            want.id != got.id
            and not synthetic
            and not (want.id is None and "tool_call_identity" in declared)
        ):
            out.append(f"{where}: id {want.id!r} -> {got.id!r}")
        offered = want.index in served  # the target offers it as the client's
        if got.executable != want.executable and not declared & CALL_DOWNGRADES and not offered:
            out.append(f"{where}: executable {want.executable} -> {got.executable}")
        if want.type == "custom_tool_call" and target != "openai-responses":
            need("custom_tool_call", f"{where}: free-text input wrapped")
        if want.executor == "client" and want.type in BUILTIN_CALLS:
            if got.type != want.type:
                need(want.type, f"{where}: a {want.type} arrived as a {got.type}")
            elif target != "openai-responses":
                out.append(f"{where}: {target} cannot carry a {want.type}, yet one arrived")
        if want.arguments is not None:
            if got.arguments == want.arguments or partial:
                pass
            elif got.arguments is None and got.invalid_reason == ABANDONED:
                need("tool_call_completion", f"{where}: completed call arrived unfinished")
            elif not declared & {"interleaved_tool_calls", "arguments_mismatch"}:
                out.append(f"{where}: arguments {want.arguments!r:.80} -> {got.arguments!r:.80}")
        elif want.type != "custom_tool_call" and got.raw_arguments != want.raw_arguments:
            if not (partial and want.raw_arguments.startswith(got.raw_arguments)):
                raw = f"{want.raw_arguments!r:.80} -> {got.raw_arguments!r:.80}"
                out.append(f"{where}: raw arguments {raw}")
    return out


def _position(result: sw.StreamResult, index: int) -> int:
    return next(i for i, c in enumerate(result.choices) if c.index == index)


def _usage(
    source: str,
    src: sw.StreamResult,
    target: str,
    tgt: sw.StreamResult,
    need: Any,
    declared: set[str],
) -> list[str]:
    if "usage" in declared:
        return []
    if src.usage is None:
        if tgt.usage is not None:
            need("usage_placeholder", "usage appeared where the source reported none")
        return []
    if tgt.usage is None:
        return ["usage was lost"]
    want, got = figures(src.usage, source), figures(tgt.usage, target)
    out = []
    for name in ("input_total", "output", "cache_read"):
        if not _same_figure(getattr(want, name), getattr(got, name)):
            out.append(f"usage {name}: {getattr(want, name)} -> {getattr(got, name)}")
    if want.total is not None and not _same_figure(want.total, got.total):
        if target != "anthropic":
            out.append(f"usage total: {want.total} -> {got.total}")
        elif want.total != (want.input_total or 0) + (want.output or 0):
            need("usage_total", f"usage total: {want.total} -> {got.total}")
    if want.reasoning and not _same_figure(want.reasoning, got.reasoning):
        need("usage_reasoning_tokens", f"usage reasoning: {want.reasoning} -> {got.reasoning}")
    if want.cache_write and not _same_figure(want.cache_write, got.cache_write):
        need("usage_cache_creation", f"usage cache writes: {want.cache_write} -> {got.cache_write}")
    return out


def _error(src: sw.StreamResult, tgt: sw.StreamResult, need: Any, declared: set[str]) -> list[str]:
    want, got = src.error, tgt.error
    if want is None:
        if got is None:
            return []
        if got.type == "protocol_conflict" and "protocol_conflict" in declared:
            return []
        return [f"an error appeared: {got}"]
    if got is None:
        return [f"the error was lost: {want}"]
    out = []
    if want.message is not None and got.message != want.message:
        out.append(f"error message {want.message!r:.80} -> {got.message!r:.80}")
    if want.type is not None and got.type != want.type:
        out.append(f"error type {want.type!r} -> {got.type!r}")
    if want.code is not None and got.code != want.code:
        need("error_code", f"error code {want.code!r} -> {got.code!r}")
    return out
