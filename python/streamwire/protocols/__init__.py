"""Protocol adapters, by wire-protocol name, and ``stream()`` to make one.

The names are docs/design.md's (checked 2026-11-29): HTTP ``openai-chat``,
``openai-responses``, ``anthropic``, ``gemini``, ``gemini-json``,
``bedrock-converse``, ``bedrock-invoke``; WebSocket ``openai-responses-ws``,
``openai-realtime``, ``gemini-live``. Each adapter lives in its own module and
is imported only when first asked for, so ``import streamwire`` stays cheap.
A protocol is available once its adapter is registered here.
"""

from __future__ import annotations

import difflib
import importlib
import inspect
from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Any, Literal, TypeGuard, overload

from ..kinds import PROTOCOLS, ProtocolName
from ._base import Stream

if TYPE_CHECKING:
    from typing_extensions import Unpack  # typing.Unpack from Python 3.11

    from ..options import (
        AnthropicOptions,
        BedrockConverseOptions,
        BedrockInvokeOptions,
        GeminiJsonOptions,
        GeminiLiveOptions,
        GeminiOptions,
        OpenAIChatOptions,
        OpenAIRealtimeOptions,
        OpenAIResponsesOptions,
        OpenAIResponsesWsOptions,
        StreamOptions,
    )

__all__ = [
    "Stream",
    "adapter_class",
    "adapter_options",
    "check_options",
    "is_protocol",
    "known_protocols",
    "new_stream",
    "register_protocol",
    "stream",
]

#: name -> "module:Class" (imported lazily) or the adapter class itself.
_REGISTRY: dict[str, str | type[Stream]] = {
    "openai-chat": "streamwire.protocols.openai_chat:OpenAIChatStream",
    "openai-responses": "streamwire.protocols.openai_responses:OpenAIResponsesStream",
    "anthropic": "streamwire.protocols.anthropic:AnthropicStream",
    "bedrock-converse": "streamwire.protocols.bedrock:BedrockConverseStream",
    "bedrock-invoke": "streamwire.protocols.bedrock_invoke:BedrockInvokeStream",
    "gemini": "streamwire.protocols.gemini:GeminiStream",
    "gemini-json": "streamwire.protocols.gemini_json:GeminiJsonStream",
    "openai-responses-ws": "streamwire.protocols.openai_responses_ws:OpenAIResponsesSession",
    "openai-realtime": "streamwire.protocols.openai_realtime:OpenAIRealtimeSession",
    "gemini-live": "streamwire.protocols.gemini_live:GeminiLiveSession",
}


def register_protocol(name: str, adapter: str | type[Stream]) -> None:
    """Registers an adapter class (or its ``"module:Class"`` path) under ``name``."""
    _REGISTRY[name] = adapter


def is_protocol(name: object) -> TypeGuard[ProtocolName]:
    """True when ``sw.stream(name)`` knows the name (built in, or registered).

    Narrows a ``str`` read from configuration to ``ProtocolName`` for a type
    checker: ``if not sw.is_protocol(name): raise ...``.
    """
    return isinstance(name, str) and (name in PROTOCOLS or name in _REGISTRY)


def known_protocols() -> tuple[str, ...]:
    """The registered protocol names, sorted."""
    return tuple(sorted(_REGISTRY))


def adapter_class(protocol: str) -> type[Stream]:
    """The adapter class of a protocol; ValueError listing the known names if unknown."""
    try:
        entry = _REGISTRY[protocol]
    except (KeyError, TypeError):
        known = ", ".join(known_protocols())
        raise ValueError(f"unknown protocol {protocol!r}; known protocols: {known}") from None
    if isinstance(entry, str):
        module_name, _, class_name = entry.partition(":")
        entry = getattr(importlib.import_module(module_name), class_name)
        if not (isinstance(entry, type) and issubclass(entry, Stream)):
            raise TypeError(f"{module_name}:{class_name} is not a Stream adapter")
        _REGISTRY[protocol] = entry
    return entry


_OPTIONS: dict[type[Stream], frozenset[str]] = {}


def adapter_options(protocol: str) -> frozenset[str]:
    """The keyword options ``sw.stream(protocol, ...)`` accepts.

    Read from the signatures of the adapter's ``__init__`` and of each base
    it passes ``**options`` on to, so a registered adapter's own options are
    known too.
    """
    cls = adapter_class(protocol)
    names = _OPTIONS.get(cls)
    if names is None:
        found: set[str] = set()
        for klass in cls.__mro__:
            init = klass.__dict__.get("__init__")
            if init is None:
                continue
            params = list(inspect.signature(init).parameters.values())[1:]  # after self
            found.update(
                p.name for p in params if p.kind in (p.KEYWORD_ONLY, p.POSITIONAL_OR_KEYWORD)
            )
            if not any(p.kind is p.VAR_KEYWORD for p in params):
                break
        names = _OPTIONS[cls] = frozenset(found)
    return names


def check_options(
    protocol: str, given: Iterable[str], extra: frozenset[str] = frozenset(), *, where: str
) -> None:
    """Raises ``TypeError`` naming the first option neither the adapter nor
    ``extra`` accepts, with the closest accepted names."""
    accepted = adapter_options(protocol) | extra
    for name in given:
        if name not in accepted:
            close = difflib.get_close_matches(name, accepted, n=3)
            hint = f"; did you mean {' or '.join(map(repr, close))}?" if close else ""
            raise TypeError(
                f"{where}: unknown option {name!r} for {protocol}{hint} "
                f"(accepted: {', '.join(sorted(accepted))})"
            )


@overload
def stream(protocol: Literal["openai-chat"], **options: Unpack[OpenAIChatOptions]) -> Stream: ...
@overload
def stream(
    protocol: Literal["openai-responses"], **options: Unpack[OpenAIResponsesOptions]
) -> Stream: ...
@overload
def stream(protocol: Literal["anthropic"], **options: Unpack[AnthropicOptions]) -> Stream: ...
@overload
def stream(protocol: Literal["gemini"], **options: Unpack[GeminiOptions]) -> Stream: ...
@overload
def stream(protocol: Literal["gemini-json"], **options: Unpack[GeminiJsonOptions]) -> Stream: ...
@overload
def stream(
    protocol: Literal["bedrock-converse"], **options: Unpack[BedrockConverseOptions]
) -> Stream: ...
@overload
def stream(
    protocol: Literal["bedrock-invoke"], **options: Unpack[BedrockInvokeOptions]
) -> Stream: ...
@overload
def stream(
    protocol: Literal["openai-responses-ws"], **options: Unpack[OpenAIResponsesWsOptions]
) -> Stream: ...
@overload
def stream(
    protocol: Literal["openai-realtime"], **options: Unpack[OpenAIRealtimeOptions]
) -> Stream: ...
@overload
def stream(protocol: Literal["gemini-live"], **options: Unpack[GeminiLiveOptions]) -> Stream: ...
@overload
def stream(protocol: ProtocolName, **options: Unpack[StreamOptions]) -> Stream: ...
def stream(protocol: str, **options: Any) -> Stream:
    """A new sans-IO adapter for ``protocol`` (see the adapter's options).

    Examples:
        >>> s = stream("openai-chat")
        >>> events = s.feed(b'data: {"choices":[{"index":0,"delta":{"content":"hi"}}]}\\n\\n')
        >>> [type(e).__name__ for e in events]
        ['MessageStarted', 'TextDelta']

    An unknown protocol is a ``ValueError``; an option the adapter does not
    take is a ``TypeError`` naming the closest ones it does. For a type
    checker the protocol is a ``ProtocolName`` (a name held in a ``str``
    is narrowed with ``is_protocol``), and the options are those of the
    protocol's ``TypedDict`` in ``streamwire.options``.
    """
    return new_stream(protocol, options)


def new_stream(protocol: str, options: Mapping[str, Any], *, where: str = "sw.stream") -> Stream:
    """``stream(protocol, **options)`` for a name and options known only at run
    time (untyped: the same checks, at run time only)."""
    cls = adapter_class(protocol)
    if options:
        check_options(protocol, options, where=where)
    return cls(**options)
