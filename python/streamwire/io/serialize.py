"""Events and results as plain JSON values, for recordings, the CLI and logs.

The public form is ``event.as_dict()`` and ``result.as_dict()``; these are
the names recordings and the CLI have always used for it. Both walk every
field (``streamwire.result.plain``: dataclasses become objects, mappings
objects, tuples lists), so a field added to the result later is serialized
without a change here. Values JSON cannot hold (bytes, datetimes, ...)
become their ``repr``; non-finite floats stay as Python's ``json`` writes
them (``NaN``, ``Infinity``), which ``json`` reads back.
"""

from __future__ import annotations

from typing import Any

from .. import _json
from ..events import Event
from ..result import StreamResult, plain

__all__ = ["dumps", "event_dict", "jsonable", "result_dict"]


#: ``value`` as nested dicts, lists, strings, numbers, booleans and None.
jsonable = plain


def event_dict(event: Event) -> dict[str, Any]:
    """One unified event as a JSON object, ``{"event": <class name>, <field>: <value>}``."""
    return event.as_dict()


def result_dict(result: StreamResult) -> dict[str, Any]:
    """Every field of a result as a JSON object."""
    return result.as_dict()


def dumps(value: Any, *, indent: int | None = None) -> str:
    """JSON text of ``jsonable(value)``, UTF-8 text kept as is (lone
    surrogates escaped, see ``_json.dumps``)."""
    return _json.dumps(jsonable(value), indent=indent)
