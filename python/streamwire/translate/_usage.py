"""Usage conventions: which input figures count cached tokens, and conversion between them.

Providers disagree on what "input tokens" means. OpenAI (``prompt_tokens``,
Responses ``input_tokens``) and Gemini (``promptTokenCount``) count every
input token, cached ones included, and report the cached part beside it
(``cached_tokens``, ``cachedContentTokenCount``). Anthropic (``input_tokens``,
"Prompt caching", platform.claude.com/docs) and Bedrock (``TokenUsage``:
``inputTokens`` beside ``cacheReadInputTokens`` and ``cacheWriteInputTokens``,
docs.aws.amazon.com/bedrock/latest/APIReference) count only the fresh tokens.
All checked 2026-11-29. ``Usage.input_tokens`` keeps each provider's own
figure (docs/design.md: usage is what the provider reported), so an encoder must
know which convention a report follows before it writes the target's:
``figures(usage, source)`` gives the inclusive figures, from which every
target's own are derived. Conversion only adds or subtracts reported figures;
nothing is estimated.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from ..result import Usage

__all__ = ["INPUT_INCLUDES_CACHE", "Figures", "figures", "input_includes_cache"]

#: Whether a protocol's input figure includes the cached (read and written)
#: tokens. Anthropic and Bedrock report them beside ``input_tokens``.
INPUT_INCLUDES_CACHE: Mapping[str, bool] = {
    "openai-chat": True,
    "openai-responses": True,
    "openai-responses-ws": True,
    "gemini": True,
    "gemini-json": True,
    "gemini-live": True,
    "anthropic": False,
    "bedrock-invoke": False,
    "bedrock-converse": False,
}


def input_includes_cache(usage: Usage, source: str | None) -> bool:
    """Whether ``usage.input_tokens`` counts cached tokens: by the source protocol
    when known, else by the provider's own field names in ``usage.raw``."""
    if source is not None and source in INPUT_INCLUDES_CACHE:
        return INPUT_INCLUDES_CACHE[source]
    raw: Mapping[str, Any] = usage.raw or {}
    if "prompt_tokens" in raw or "promptTokenCount" in raw or "input_tokens_details" in raw:
        return True
    if "inputTokens" in raw or "inputTokenCount" in raw:
        return False
    # Anthropic's figures (input_tokens with the cache figures beside it, no total).
    return "total_tokens" in raw


@dataclass(frozen=True, slots=True)
class Figures:
    """A usage report in one convention: input counts every input token."""

    #: Every input token: fresh, read from the cache and written to it.
    input_total: int | None
    #: Output tokens, reasoning included.
    output: int | None
    #: The provider's total, when it reported one.
    total: int | None
    cache_read: int | None
    cache_write: int | None
    reasoning: int | None

    @property
    def input_fresh(self) -> int | None:
        """Input tokens neither read from nor written to the cache (Anthropic's)."""
        if self.input_total is None:
            return None
        return max(0, self.input_total - (self.cache_read or 0) - (self.cache_write or 0))

    @property
    def total_or_sum(self) -> int:
        """The reported total, else input + output (targets that require one)."""
        if self.total is not None:
            return self.total
        return (self.input_total or 0) + (self.output or 0)


def figures(usage: Usage, source: str | None) -> Figures:
    """A report's figures with input made inclusive (see ``INPUT_INCLUDES_CACHE``)."""
    input_tokens = usage.input_tokens
    if input_tokens is not None and not input_includes_cache(usage, source):
        input_tokens += (usage.cache_read_tokens or 0) + (usage.cache_creation_tokens or 0)
    return Figures(
        input_total=input_tokens,
        output=usage.output_tokens,
        total=usage.total_tokens,
        cache_read=usage.cache_read_tokens,
        cache_write=usage.cache_creation_tokens,
        reasoning=usage.reasoning_tokens,
    )
