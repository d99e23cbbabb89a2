"""A call's full arguments (a ``.done`` copy) checked against its deltas.

OpenAI Responses (HTTP and WebSocket) and Realtime repeat a call's arguments
whole, in ``function_call_arguments.done`` (and its MCP kin) and in the done
item, after streaming them as deltas (OpenAI API reference, "Responses
streaming events" and "Realtime server events", checked 2026-11-29). The
deltas are the value the caller gets; a copy must be the same arguments.

The same arguments may be spelled differently: a translating proxy
re-serializes the done item (``{"a":2,"b":3}`` against the deltas'
``{"a": 2, "b": 3}``), and the openai SDK, which parses the done item,
reads the call either way. So a copy whose text differs but that is the
same JSON value (``_json.same_json``) keeps the deltas' text and is
reported (warning ``arguments_respelled``); a copy with other values, or
one that is not JSON, contradicts the deltas (``protocol_conflict``), and so
does any difference in a free-text input (custom tools), whose text is the
value.
"""

from __future__ import annotations

from .._json import same_json
from ..accumulate import Accumulator
from ..toolcalls import CallBuffer

__all__ = ["check_full_arguments"]


def check_full_arguments(
    acc: Accumulator,
    call: CallBuffer,
    streamed: str,
    full: str,
    where: str,
    *,
    free_text: bool = False,
) -> None:
    """Records how a full copy of ``call``'s arguments differs from its deltas, if it does."""
    if streamed == full:
        return
    if not free_text and same_json(streamed, full):
        acc.warn(
            "arguments_respelled",
            f"{where}: the full arguments of call {call.id!r} spell the same JSON as its "
            "deltas differently; the deltas' text was kept",
        )
        return
    acc.conflict(
        f"{where}: the full arguments of call {call.id!r} ({len(full)} chars) differ "
        f"from its deltas ({len(streamed)} chars)"
    )
