"""Provider JSON values: reading them (the two checks every adapter makes),
and writing one back as JSON text (``dump``).

A provider field is used only when it has the type it should; anything else
(null, a bool for an int, an empty string for an id) counts as absent.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any, Literal

__all__ = ["RAW_CAP", "dump", "int_or_none", "nonempty_str"]

#: The most characters of a value's JSON text an ``UnknownEvent.raw`` keeps.
RAW_CAP = 4096


def int_or_none(value: Any) -> int | None:
    """``value`` if it is an int (a bool or a float is not), else None."""
    return value if type(value) is int else None


def nonempty_str(value: Any) -> str | None:
    """``value`` if it is a non-empty str, else None."""
    return value if type(value) is str and value else None


def dump(
    value: Any,
    *,
    spacing: Literal["compact", "spaced"] = "compact",
    cap: int | None = None,
    default: Callable[[Any], Any] | None = None,
) -> str:
    """``value`` as JSON text, non-ASCII characters as they are.

    ``spacing``: ``"compact"`` (``,`` and ``:``) or ``"spaced"`` (``json.dumps``'
    own ``", "`` and ``": "``). ``cap``: the most characters kept (``RAW_CAP``
    for an ``UnknownEvent.raw``), None for the whole text. ``default``: as
    ``json.dumps``' (``repr`` for a value that may hold what JSON cannot).
    """
    separators = (",", ":") if spacing == "compact" else None
    text = json.dumps(value, ensure_ascii=False, separators=separators, default=default)
    return text if cap is None else text[:cap]
