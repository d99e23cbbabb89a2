"""The assistant's turn for the next request, in each protocol's own request shape.

``assistant_message(result_or_stream)`` is what the next request must carry
of the turn a stream produced, so that a caller can append it, then the tool
results (``sw.tool_result``), and send the conversation on. It returns a
list, to extend the request's conversation with (provider references
checked 2026-12-01):

=====================  ======================================================
protocol               returned items (where they go in the next request)
=====================  ======================================================
``openai-chat``        one ``messages`` entry ``{"role": "assistant",
                       "content", "refusal"?, "tool_calls"?: [{"id", "type":
                       "function", "function": {"name", "arguments"}}]}``
                       (a legacy single call: ``"function_call"``); only
                       the caller's calls (below)
``openai-responses``   the response's done output items, verbatim, for
(and ``-ws``)          ``input`` (messages, reasoning items with their
                       encrypted content, ``function_call`` items, ...)
``anthropic``,         one ``messages`` entry ``{"role": "assistant",
``bedrock-invoke``     "content": [blocks]}``: text with citations, thinking
                       with its signature, redacted thinking, tool use, server
                       tool use and results
``bedrock-converse``   one ``messages`` entry ``{"role": "assistant",
                       "content": [blocks]}`` in Converse's format
``gemini``,            one ``contents`` entry ``{"role": "model", "parts"}``,
``gemini-json``        thought signatures on the parts that carried them
=====================  ======================================================

Every call in the message is answered by ``sw.tool_result(same result,
call.id, ...)``: both quote the id the stream gave the call (chat
``tool_calls[].id``, responses ``call_id``, anthropic ``tool_use.id``,
bedrock ``toolUseId``; a gemini call without an id is matched by name, and
its synthetic id is sent in neither). The providers require an answer for
every call the assistant turn carries.

Tools the provider already ran stay in the turn where the protocol has a
place for them (anthropic ``server_tool_use`` with its result block,
responses ``web_search_call`` and the other hosted items, each under the
provider's own id). Chat Completions has none: a ``tool_calls`` entry is a
call the caller must answer, and Groq's ``executed_tools`` carry no id (the
result's are synthetic, and a synthetic id is never sent as if it were the
provider's), so the chat turn holds the caller's calls only; what the
provider's tools found is in the text.

Choice 0 is the turn (a request with ``n`` > 1 continues one choice). The
realtime protocols (``openai-realtime``, ``gemini-live``) keep the
conversation in the session: there is nothing to send back, and asking is a
``UsageError``; so is asking before the stream ended.
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
