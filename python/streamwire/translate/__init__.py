"""Gateway translation: unified events re-encoded in another protocol's wire format.

Serve an OpenAI-Chat client from an Anthropic upstream, an Anthropic client
from a Responses upstream, and so on: any adapter's unified events (the
*source*) go into an encoder of the *target* protocol, which returns the
target's wire bytes as the events arrive::

    enc = sw.encoder("openai-chat", source="anthropic")
    for chunk in upstream_body:
        out = enc.feed(stream.feed(chunk))     # bytes for the client, at once
    out = enc.feed(stream.close()) + enc.close()
    enc.downgrades                             # what the target could not carry

or, all in one, ``sw.translate("anthropic", "openai-chat", chunks)``, and its
asyncio twin ``sw.atranslate("anthropic", "openai-chat", async_chunks)``.

Targets (``known_encoders()``): ``openai-chat``, ``openai-responses``,
``anthropic``, ``gemini``; sources: every registered adapter. What each target
carries, and what it declares as a downgrade instead, is the one table of
``_mapping.py`` (rendered in ``docs/translation.md``).
"""

from __future__ import annotations

import importlib
from collections.abc import AsyncIterable, AsyncIterator, Iterable, Iterator, Mapping
from typing import Any

from ..kinds import ProtocolName, TargetName
from ._base import Downgrade, Encoder

__all__ = [
    "ENCODERS",
    "Downgrade",
    "Encoder",
    "atranslate",
    "encoder",
    "known_encoders",
    "translate",
]

#: target name -> "module:Class" (imported lazily) or the encoder class itself.
_REGISTRY: dict[str, str | type[Encoder]] = {
    "anthropic": "streamwire.translate.anthropic:AnthropicEncoder",
    "gemini": "streamwire.translate.gemini:GeminiEncoder",
    "openai-chat": "streamwire.translate.openai_chat:OpenAIChatEncoder",
    "openai-responses": "streamwire.translate.openai_responses:OpenAIResponsesEncoder",
}
#: The target protocols an encoder exists for, sorted.
ENCODERS: tuple[str, ...] = tuple(sorted(_REGISTRY))


def known_encoders() -> tuple[str, ...]:
    """The target protocols an encoder exists for, sorted."""
    return tuple(sorted(_REGISTRY))


def encoder_class(target: str) -> type[Encoder]:
    """The encoder class of a target; ValueError listing the known names if unknown."""
    try:
        entry = _REGISTRY[target]
    except (KeyError, TypeError):
        known = ", ".join(known_encoders())
        raise ValueError(f"unknown target protocol {target!r}; known targets: {known}") from None
    if isinstance(entry, str):
        module_name, _, class_name = entry.partition(":")
        entry = getattr(importlib.import_module(module_name), class_name)
        if not (isinstance(entry, type) and issubclass(entry, Encoder)):
            raise TypeError(f"{module_name}:{class_name} is not an Encoder")
        _REGISTRY[target] = entry
    return entry


def encoder(
    target: TargetName,
    *,
    model: str | None = None,
    response_id: str | None = None,
    created: int | None = None,
    include_usage: bool = True,
    **options: Any,
) -> Encoder:
    """A new encoder for ``target`` (see ``Encoder`` and the target's own options).

    >>> enc = encoder("openai-chat", response_id="chatcmpl-1", model="m", created=0)
    >>> import streamwire as sw
    >>> enc.feed([sw.MessageStarted(message_id="x"), sw.TextDelta(text="hi")]).count(b"data:")
    2
    """
    return encoder_class(target)(
        model=model,
        response_id=response_id,
        created=created,
        include_usage=include_usage,
        **options,
    )


def _pair(
    source_protocol: str,
    target: TargetName,
    source_options: Mapping[str, Any] | None,
    options: dict[str, Any],
) -> tuple[Any, Encoder]:
    """The source adapter and the target encoder; raises now on a bad name or option."""
    from ..protocols import new_stream

    adapter = new_stream(source_protocol, source_options or {})
    options.setdefault("source", source_protocol)
    return adapter, encoder(target, **options)


def translate(
    source_protocol: ProtocolName,
    target: TargetName,
    chunks: Iterable[bytes],
    *,
    source_options: Mapping[str, Any] | None = None,
    **options: Any,
) -> Iterator[bytes]:
    """Re-encodes a ``source_protocol`` body into ``target``'s wire format, streaming.

    Each source chunk yields the target bytes it completed (nothing when there
    are none); the end of ``chunks`` yields what closes the target's grammar.
    ``source_options`` go to ``sw.stream(source_protocol, ...)``, the other
    options to ``sw.encoder(target, ...)`` (``source`` defaults to
    ``source_protocol``, for usage conventions). Unknown names and options
    raise here, at the call.
    """
    adapter, enc = _pair(source_protocol, target, source_options, options)
    return _translate(adapter, enc, chunks)


def _translate(adapter: Any, enc: Encoder, chunks: Iterable[bytes]) -> Iterator[bytes]:
    for chunk in chunks:
        out = enc.feed(adapter.feed(chunk))
        if out:
            yield out
    out = enc.feed(adapter.close()) + enc.close()
    if out:
        yield out


def atranslate(
    source_protocol: ProtocolName,
    target: TargetName,
    chunks: AsyncIterable[bytes],
    *,
    source_options: Mapping[str, Any] | None = None,
    **options: Any,
) -> AsyncIterator[bytes]:
    """The asyncio twin of ``translate``: ``chunks`` is an async iterable of
    body bytes (``httpx`` ``response.aiter_bytes()``, aiohttp's
    ``response.content.iter_any()``, ...), and the target bytes come out as
    they are completed: ``async for wire in sw.atranslate(...)``.

    Leaving early (``aclose()`` of the returned generator, or the task that
    iterates it cancelled, as Starlette does when its client goes away)
    cancels the source adapter and closes ``chunks`` if it can be closed (an
    async generator's ``aclose``), so that nothing goes on reading upstream.
    Unknown names and options raise here, at the call.
    """
    adapter, enc = _pair(source_protocol, target, source_options, options)
    return _atranslate(adapter, enc, chunks)


async def _atranslate(
    adapter: Any, enc: Encoder, chunks: AsyncIterable[bytes]
) -> AsyncIterator[bytes]:
    source = aiter(chunks)
    try:
        async for chunk in source:
            out = enc.feed(adapter.feed(chunk))
            if out:
                yield out
        out = enc.feed(adapter.close()) + enc.close()
        if out:
            yield out
    finally:
        if not adapter.closed:
            adapter.cancel()
        aclose = getattr(source, "aclose", None)
        if aclose is not None:
            await aclose()
