"""Events and results as plain JSON values, for recordings, the CLI and logs.

``event_dict`` is ``Event.as_dict()`` made JSON-safe; ``result_dict`` walks
every field of a ``StreamResult`` (dataclasses become objects, mappings
objects, tuples lists), so a field added to the result later is serialized
without a change here. Values JSON cannot hold (bytes, datetimes, ...)
become their ``repr``; non-finite floats stay as Python's ``json`` writes
them (``NaN``, ``Infinity``), which ``json`` reads back.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Mapping
from typing import Any

from ..events import Event
from ..result import StreamResult

__all__ = ["dumps", "event_dict", "jsonable", "result_dict"]


def jsonable(value: Any) -> Any:
    """``value`` as nested dicts, lists, strings, numbers, booleans and None."""
    if value is None or isinstance(value, str | bool | int | float):
        return value
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {f.name: jsonable(getattr(value, f.name)) for f in dataclasses.fields(value)}
    if isinstance(value, Mapping):
        return {str(k): jsonable(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [jsonable(v) for v in value]
    return repr(value)


def event_dict(event: Event) -> dict[str, Any]:
    """One unified event as a JSON object, ``{"event": <class name>, <field>: <value>}``."""
    out: dict[str, Any] = jsonable(event.as_dict())
    return out


def result_dict(result: StreamResult) -> dict[str, Any]:
    """Every field of a result as a JSON object."""
    out: dict[str, Any] = jsonable(result)
    return out


def dumps(value: Any, *, indent: int | None = None) -> str:
    """``json.dumps`` of ``jsonable(value)``, UTF-8 text kept as is."""
    return json.dumps(jsonable(value), ensure_ascii=False, indent=indent)
