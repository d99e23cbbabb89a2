"""Reading provider JSON values: the two checks every adapter makes.

A provider field is used only when it has the type it should; anything else
(null, a bool for an int, an empty string for an id) counts as absent.
"""

from __future__ import annotations

from typing import Any

__all__ = ["int_or_none", "nonempty_str"]


def int_or_none(value: Any) -> int | None:
    """``value`` if it is an int (a bool or a float is not), else None."""
    return value if type(value) is int else None


def nonempty_str(value: Any) -> str | None:
    """``value`` if it is a non-empty str, else None."""
    return value if type(value) is str and value else None
