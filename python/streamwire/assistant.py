"""The assistant's turn for the next request, in each protocol's own request shape.

``assistant_message(result_or_stream)`` is what the next request must carry
of the turn a stream produced, so that a caller can append it, then the tool
results (``sw.tool_result``), and send the conversation on. It returns a
list, to extend the request's conversation with (provider references
checked 2026-12-01; each protocol's page in docs/protocols/ has the shape):

=====================  ======================================================
protocol               returned items (where they go in the next request)
=====================  ======================================================
``openai-chat``        one ``messages`` entry ``{"role": "assistant", ...}``
                       with the caller's calls only
``openai-responses``   the response's done output items, verbatim, for
(and ``-ws``)          ``input``
``anthropic``,         one ``messages`` entry ``{"role": "assistant",
``bedrock-invoke``     "content": [blocks]}``
``bedrock-converse``   the same, in Converse's block format
``gemini``, ``-json``  one ``contents`` entry ``{"role": "model", "parts"}``
=====================  ======================================================

Every call in it is answered by ``sw.tool_result`` with the id the stream
gave the call. Tools the provider already ran stay in the turn where the
protocol has a place for them; a synthetic id is never sent as if it were
the provider's (docs/design.md "Tool calls"). Choice 0 is the turn; the
realtime protocols keep the conversation in the session, so asking for them
is a ``UsageError``, and so is asking before the stream ended.
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from typing import Any

from .errors import UsageError
from .protocols import Stream
from .result import StreamResult

__all__ = ["assistant_message"]


def assistant_message(result_or_stream: StreamResult | Stream) -> list[dict[str, Any]]:
    """The assistant's turn as the next request's conversation items (see the module docstring)."""
    result = result_or_stream.result if isinstance(result_or_stream, Stream) else result_or_stream
    if not result.final:
        raise UsageError(
            f"the {result.protocol} stream has not ended: its assistant turn is not known yet"
        )
    try:
        build = _BUILDERS[result.protocol]
    except KeyError:
        if result.protocol in _SESSION_KEPT:
            raise UsageError(
                f"a {result.protocol} session keeps the conversation itself: "
                "send only the tool results (sw.tool_result)"
            ) from None
        raise UsageError(f"no assistant-message format for protocol {result.protocol!r}") from None
    # A copy: the caller may edit it; the result (a shared snapshot) must not change.
    return copy.deepcopy(build(result))


def _chat(result: StreamResult) -> list[dict[str, Any]]:
    calls = [call for call in result.tool_calls if call.executor == "client"]
    message: dict[str, Any] = {"role": "assistant", "content": result.text or None}
    if result.refusal:
        message["refusal"] = result.refusal
    if calls and calls[0].type == "function_call":  # the deprecated single function call
        call = calls[0]
        message["function_call"] = {"name": call.name, "arguments": call.raw_arguments}
    elif calls:
        message["tool_calls"] = [
            {
                "id": call.id,
                "type": "function",
                "function": {"name": call.name, "arguments": call.raw_arguments},
            }
            for call in calls
        ]
    elif message["content"] is None:
        message["content"] = ""  # a message without tool calls needs content
    return [message]


def _items(result: StreamResult) -> list[dict[str, Any]]:
    return list(result.provider_content)


def _blocks(result: StreamResult) -> list[dict[str, Any]]:
    return [{"role": "assistant", "content": list(result.provider_content)}]


def _gemini(result: StreamResult) -> list[dict[str, Any]]:
    from .protocols.gemini import model_content

    return [model_content(result)]


_BUILDERS: dict[str, Callable[[StreamResult], list[dict[str, Any]]]] = {
    "openai-chat": _chat,
    "openai-responses": _items,
    "openai-responses-ws": _items,
    "anthropic": _blocks,
    "bedrock-invoke": _blocks,
    "bedrock-converse": _blocks,
    "gemini": _gemini,
    "gemini-json": _gemini,
}
_SESSION_KEPT = frozenset({"openai-realtime", "gemini-live"})
