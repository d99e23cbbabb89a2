"""Writes ``docs/result.schema.json``: the JSON Schema of ``StreamResult.as_dict()``.

For consumers outside Python (a log pipeline, a dashboard, another
language's service reading recorded results). The schema is derived from
the result's dataclasses themselves: their type hints give each field's
JSON type, their ``#:`` comments its description, and a field added to the
result later appears here the next time this script runs.
``tests/test_serialize.py`` checks that the committed file is what this
script writes, and validates real results against it.

    python docs/result_schema.py          # rewrites docs/result.schema.json
    python docs/result_schema.py --check  # exits 1 if the file is out of date

Dialect: JSON Schema 2020-12. Mappings are objects with string keys, tuples
arrays, ``None`` is ``null``; a field typed ``Any`` (the provider's raw
objects) is any JSON value.
"""

from __future__ import annotations

import ast
import dataclasses
import inspect
import json
import sys
import types
import typing
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import streamwire as sw
from streamwire import result as result_module

SCHEMA_PATH = Path(__file__).with_name("result.schema.json")


def _descriptions(cls: type) -> dict[str, str]:
    """Each field's ``#:`` comment lines, joined."""
    lines, _ = inspect.getsourcelines(cls)  # a module-level class: no indent to strip
    tree = ast.parse("".join(lines))
    out: dict[str, str] = {}
    body = tree.body[0]
    assert isinstance(body, ast.ClassDef)
    for node in body.body:
        if isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            comment: list[str] = []
            i = node.lineno - 2
            while i >= 0 and lines[i].strip().startswith("#:"):
                comment.insert(0, lines[i].strip()[2:].strip())
                i -= 1
            if comment:
                out[node.target.id] = " ".join(comment)
    return out


def _type(hint: Any, defs: dict[str, Any]) -> dict[str, Any]:
    origin = typing.get_origin(hint)
    args = typing.get_args(hint)
    if hint is Any:
        return {}
    if hint is type(None):
        return {"type": "null"}
    if hint is str:
        return {"type": "string"}
    if hint is bool:
        return {"type": "boolean"}
    if hint is int:
        return {"type": "integer"}
    if hint is float:
        return {"type": "number"}
    if origin is typing.Literal:
        return {"enum": list(args)}
    if origin in (typing.Union, types.UnionType):
        options = [_type(a, defs) for a in args]
        return {"anyOf": options}
    if origin is tuple:
        assert len(args) == 2 and args[1] is Ellipsis, hint
        return {"type": "array", "items": _type(args[0], defs)}
    if origin in (dict, Mapping):
        return {"type": "object", "additionalProperties": _type(args[1], defs)}
    if dataclasses.is_dataclass(hint):
        _define(hint, defs)
        return {"$ref": f"#/$defs/{hint.__name__}"}
    raise TypeError(f"no JSON Schema for {hint!r}")


def _object(cls: type, defs: dict[str, Any]) -> dict[str, Any]:
    hints = typing.get_type_hints(cls, vars(result_module))
    notes = _descriptions(cls)
    properties: dict[str, Any] = {}
    for f in dataclasses.fields(cls):
        prop = _type(hints[f.name], defs)
        if f.name in notes:
            prop = {"description": notes[f.name], **prop}
        properties[f.name] = prop
    doc = (inspect.getdoc(cls) or "").split("\n\n")[0].replace("\n", " ")
    return {
        "type": "object",
        "description": doc,
        "properties": properties,
        "required": [f.name for f in dataclasses.fields(cls)],
        "additionalProperties": False,
    }


def _define(cls: type, defs: dict[str, Any]) -> None:
    if cls.__name__ not in defs:
        defs[cls.__name__] = {}  # placeholder: breaks recursion
        defs[cls.__name__] = _object(cls, defs)


def build() -> dict[str, Any]:
    """The schema, as a JSON value."""
    defs: dict[str, Any] = {}
    top = _object(sw.StreamResult, defs)
    return {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "title": "streamwire StreamResult.as_dict()",
        **top,
        "$defs": dict(sorted(defs.items())),
    }


def render() -> str:
    """The file's text."""
    return json.dumps(build(), indent=2, ensure_ascii=False) + "\n"


def main(argv: list[str]) -> int:
    text = render()
    if "--check" in argv:
        current = SCHEMA_PATH.read_text(encoding="utf-8") if SCHEMA_PATH.exists() else ""
        if current != text:
            print(f"{SCHEMA_PATH.name} is out of date: run python docs/result_schema.py")
            return 1
        return 0
    SCHEMA_PATH.write_text(text, encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
