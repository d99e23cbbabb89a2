"""The ``openai-chat`` fast path's chunk shapes, matched in Rust while framing.

Nearly every chunk of a Chat Completions stream (OpenAI API reference, "The
chat completion chunk object", checked 2026-11-29) is one running choice's
text, or one arguments fragment of an open call; with reasoning models of
compatible servers, one piece of reasoning (DeepSeek's and vLLM's
``reasoning_content``, vLLM's newer ``reasoning``). ``chunk_shape_specs``
writes those shapes in ``ShapeMatcher``'s template language (``_core.pyi``);
``openai_chat.py`` compiles them and handles a matched chunk without building
any Python object for the rest of its JSON.

A shape may admit only what the general path would do nothing with for such
a chunk: fields it never reads (any value), delta fields whose value is falsy
(``null``, ``""``, ``[]``: it skips them), a repeated ``role`` (ignored once
the choice started). Anything else
must decline, above all an unknown field, which the general path counts.
Which fields the general path ignores is the adapter's knowledge, so it is
passed in.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

__all__ = ["ARGUMENTS", "REASONING", "TEXT", "chunk_shape_specs"]

#: Template index of a text chunk; captures (choice index, text).
TEXT = 0
#: Template index of an arguments fragment; captures (choice index, call index, fragment).
ARGUMENTS = 1
#: Template indexes of a reasoning chunk (``reasoning_content``, then
#: ``reasoning``); captures (choice index, text).
REASONING = (2, 3)


def chunk_shape_specs(
    ignored_chunk_fields: Iterable[str], ignored_choice_fields: Iterable[str]
) -> list[tuple[str, dict[str, Any]]]:
    """The ``(sse event type, shape)`` templates, in ``TEXT``, ``ARGUMENTS``,
    ``REASONING`` order."""

    def chunk(delta: dict[str, Any]) -> dict[str, Any]:
        # One choice (index optional: its absence falls back, as a missing
        # choice state does), no finish_reason, no usage, no error.
        choice: dict[str, Any] = {"index?": "$int", "delta": delta, "finish_reason?": None}
        choice.update({f"{key}?": "$any" for key in sorted(ignored_choice_fields)})
        shape: dict[str, Any] = {f"{key}?": "$any" for key in sorted(ignored_chunk_fields)}
        # No usage report, and no Groq usage either (the adapter reads x_groq.usage).
        x_groq = {"id?": "$any", "seed?": "$any", "usage?": None}
        shape.update({"usage?": None, "x_groq?": x_groq, "choices": [choice]})
        return shape

    text = {
        "content": "$str",
        "role?": "$any",
        **_falsy("refusal", "reasoning_content", "reasoning", "tool_calls"),
        **_falsy("function_call", "reasoning_details"),
    }
    arguments = {
        "tool_calls": [
            {
                "index": "$int",
                # Identity fields are read unless null: only null is admitted.
                **_nulls("id", "type"),
                "function": {"arguments": "$str", **_nulls("name")},
            }
        ],
        "role?": "$any",
        **_falsy("content", "refusal", "reasoning_content", "reasoning"),
        **_falsy("function_call", "reasoning_details"),
    }
    # One of the two reasoning fields, the other one absent or falsy (the
    # general path takes the first non-empty of the two).
    reasoning_content = {
        "reasoning_content": "$str",
        "role?": "$any",
        **_falsy("content", "refusal", "reasoning", "tool_calls"),
        **_falsy("function_call", "reasoning_details"),
    }
    reasoning = {
        "reasoning": "$str",
        "role?": "$any",
        **_falsy("content", "refusal", "reasoning_content", "tool_calls"),
        **_falsy("function_call", "reasoning_details"),
    }
    return [
        ("message", chunk(text)),
        ("message", chunk(arguments)),
        ("message", chunk(reasoning_content)),
        ("message", chunk(reasoning)),
    ]


def _nulls(*keys: str) -> dict[str, None]:
    """Optional fields that may only be null."""
    return {f"{key}?": None for key in keys}


def _falsy(*keys: str) -> dict[str, str]:
    """Optional delta fields whose value may be anything falsy: the general
    path skips a delta field whose value is falsy, whatever the field."""
    return {f"{key}?": "$falsy" for key in keys}
