"""One output item of an OpenAI Responses response, as its stream is read.

The record that ``openai_responses_items.py`` (which routes each event to its
item, with the per-item machine ``ITEM_TRANSITIONS``) and
``openai_responses_calls.py`` (the tool call an item may be) both hold: an
item's id, output index, type and state, and its call buffer. It lives in a
module of its own so that the two depend on it, and the items on the calls,
one way (docs/design.md "Layers"; OpenAI API reference, "Responses streaming
events", checked 2026-11-29).
"""

from __future__ import annotations

from typing import Literal

from ..toolcalls import CallBuffer

__all__ = ["Item", "ItemState"]

#: Where an item is in its machine: not announced yet, streaming, or done.
ItemState = Literal["absent", "open", "done"]


class Item:
    """One output item while the response streams."""

    __slots__ = ("call", "id", "implicit", "index", "redacted", "rotated", "state", "type")

    def __init__(self, item_id: str | None, index: int | None, item_type: str) -> None:
        self.id = item_id
        self.index = index
        self.type = item_type
        self.state: ItemState = "open"
        #: Adopted from content that arrived before its announcement.
        self.implicit = False
        self.call: CallBuffer | None = None
        #: The encrypted reasoning already reported (reasoning items).
        self.redacted: str | None = None
        #: Events named this item under other ids (warned once).
        self.rotated = False
