"""The two tables by which an adapter shapes ``sw.tool_result`` for its protocol.

``sw.tool_result`` (``streamwire.toolresults``, docs/design.md "Tool calls",
checked 2026-12-01) answers a call of any protocol, and two things about
the answer are the adapter's to say: which result a call belongs to (a
WebSocket session holds one per response) and why an unknown call id is
wrong (an item id quoted for a call id). Each adapter fills these tables,
keyed by its protocol name, when its module is imported; ``toolresults``
reads them. They live here, in the adapters' layer, so that an adapter
fills them without importing ``toolresults``, which sits above the adapters
(it takes their ``Stream``).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ..result import StreamResult

__all__ = ["RESULT_RESOLVERS", "UNKNOWN_ID_HINTS"]

#: protocol -> a function ``(result_or_stream, result, call_id) -> str`` that
#: explains why an unknown call id is wrong (e.g. an item id quoted instead of
#: the call id); its text is appended to the refusal. Filled by the adapters.
UNKNOWN_ID_HINTS: dict[str, Callable[[Any, StreamResult, str], str]] = {}
#: protocol -> a function ``(result_or_stream, call_id) -> StreamResult`` that
#: picks the result a tool result answers (a WebSocket session holds one result
#: per response: the one that made the call) and refuses, by raising
#: ``ToolResultError``, a call that may get no result (one the provider
#: cancelled). Filled by the adapters.
RESULT_RESOLVERS: dict[str, Callable[[Any, str], StreamResult]] = {}
