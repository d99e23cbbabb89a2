"""The ``openai-chat`` fast path's chunk shapes, matched in Rust while framing.

Nearly every chunk of a Chat Completions stream (OpenAI API reference, "The
chat completion chunk object", checked 2026-11-29) is one running choice's
text, or one arguments fragment of an open call. ``chunk_shape_specs`` writes
those two shapes in ``ShapeMatcher``'s template language (``_core.pyi``);
``openai_chat.py`` compiles them and handles a matched chunk without building
any Python object for the rest of its JSON.

A shape may admit only what the general path would do nothing with for such
a chunk: fields it never reads (any value), ``null`` where it skips null
values, a repeated ``role`` (ignored once the choice started). Anything else
must decline, above all an unknown field, which the general path counts.
Which fields the general path ignores is the adapter's knowledge, so it is
passed in.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

__all__ = ["ARGUMENTS", "TEXT", "chunk_shape_specs"]

#: Template index of a text chunk; captures (choice index, text).
TEXT = 0
#: Template index of an arguments fragment; captures (choice index, call index, fragment).
ARGUMENTS = 1


def chunk_shape_specs(
    ignored_chunk_fields: Iterable[str], ignored_choice_fields: Iterable[str]
) -> list[tuple[str, dict[str, Any]]]:
    """The ``(sse event type, shape)`` templates, in ``TEXT``, ``ARGUMENTS`` order."""

    def chunk(delta: dict[str, Any]) -> dict[str, Any]:
        # One choice (index optional: its absence falls back, as a missing
        # choice state does), no finish_reason, no usage, no error.
        choice: dict[str, Any] = {"index?": "$int", "delta": delta, "finish_reason?": None}
        choice.update({f"{key}?": "$any" for key in sorted(ignored_choice_fields)})
        shape: dict[str, Any] = {f"{key}?": "$any" for key in sorted(ignored_chunk_fields)}
        # No usage report, and no Groq usage either (the adapter reads x_groq.usage).
        shape.update(
            {"usage?": None, "x_groq?": {"id?": "$any", "usage?": None}, "choices": [choice]}
        )
        return shape

    text = {
        "content": "$str",
        "role?": "$any",
        **_nulls("refusal", "reasoning_content", "reasoning", "tool_calls"),
        **_nulls("function_call", "reasoning_details"),
    }
    arguments = {
        "tool_calls": [
            {
                "index": "$int",
                **_nulls("id", "type"),
                "function": {"arguments": "$str", **_nulls("name")},
            }
        ],
        "role?": "$any",
        **_nulls("content", "refusal", "reasoning_content", "reasoning"),
        **_nulls("function_call", "reasoning_details"),
    }
    return [("message", chunk(text)), ("message", chunk(arguments))]


def _nulls(*keys: str) -> dict[str, None]:
    """Delta fields that may come as null (the general path skips null values)."""
    return {f"{key}?": None for key in keys}
