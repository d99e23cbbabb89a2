"""Vertex AI streamed function-call arguments (``partialArgs``), assembled into JSON text.

With ``toolConfig.functionCallingConfig.streamFunctionCallArguments`` set,
Vertex AI streams one call's arguments as ``PartialArg`` fragments (Vertex AI
API reference, ``FunctionCall`` and ``PartialArg``, checked 2026-11-29)::

    {"jsonPath": "$.location", "stringValue": "Bos", "willContinue": true}
    {"jsonPath": "$.location", "stringValue": "ton"}
    {"jsonPath": "$.operations[1].price", "numberValue": 0.3}

``jsonPath`` is an RFC 9535 JSON Path to one leaf; exactly one of
``stringValue``, ``numberValue``, ``boolValue``, ``nullValue`` carries its
value; ``willContinue`` on a fragment means "another PartialArg for the
current json_path is expected to follow" (a string value split in pieces).

``PartialArgs`` does two things with the fragments of one call:

* it builds the arguments object (``root``), which is the truth;
* while the paths arrive in document order (each one names a member or array
  element that does not exist yet, the way a serializer would write them),
  it also returns the JSON text of every fragment as it arrives, so that the
  adapter can stream ``ToolCallArgumentsDelta`` events like every other
  protocol: the deltas, followed by ``close()``, are exactly
  ``json.dumps(root, separators=(",", ":"), ensure_ascii=False)``.

A path that revisits a member already written (or an earlier array element)
cannot be streamed as text: ``ordered`` becomes False, no further text is
returned, and the caller takes the arguments from ``text()`` at the end.
A path that contradicts an earlier one (a member of what was an array, an
array element past the end) or cannot be parsed is a problem the caller
records as a protocol conflict; the fragment is ignored.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from typing import Any

from .._json import MAX_DEPTH
from ._values import dump

__all__ = ["PartialArgs", "parse_json_path"]

Segment = str | int
Container = dict[str, Any] | list[Any]

#: The value fields of a ``PartialArg`` (a protobuf oneof), in the reference's order.
VALUE_FIELDS = ("nullValue", "numberValue", "stringValue", "boolValue")
_ESCAPES = {
    "b": "\b",
    "f": "\f",
    "n": "\n",
    "r": "\r",
    "t": "\t",
    "/": "/",
    "\\": "\\",
    "'": "'",
    '"': '"',
}


def parse_json_path(path: str) -> list[Segment] | None:
    """The segments of a singular JSON Path (``$.a.b[0]['c d']``), or None if it is not one.

    Only what can name one argument leaf is accepted (RFC 9535 member names
    in dot or bracket notation, non-negative indexes); wildcards, slices,
    filters and the bare root ``$`` are not.
    """
    if not path.startswith("$"):
        return None
    out: list[Segment] = []
    i, n = 1, len(path)
    while i < n:
        c = path[i]
        if c == ".":
            j = i + 1
            while j < n and path[j] not in ".[":
                j += 1
            name = path[i + 1 : j]
            if not name or name == "*":
                return None
            out.append(name)
            i = j
        elif c == "[":
            end = _bracket(path, i + 1, out)
            if end is None:
                return None
            i = end
        else:
            return None
    return out or None


def _bracket(path: str, i: int, out: list[Segment]) -> int | None:
    """Parses ``['name']``, ``["name"]`` or ``[index]`` from after the ``[``; the end."""
    n = len(path)
    if i < n and path[i] in "'\"":
        quote = path[i]
        chars: list[str] = []
        i += 1
        while i < n and path[i] != quote:
            c = path[i]
            if c == "\\":
                if i + 1 >= n:
                    return None
                esc = path[i + 1]
                if esc == "u":
                    digits = path[i + 2 : i + 6]
                    if len(digits) != 4 or not all(d in "0123456789abcdefABCDEF" for d in digits):
                        return None
                    chars.append(chr(int(digits, 16)))
                    i += 6
                    continue
                if esc not in _ESCAPES:
                    return None
                chars.append(_ESCAPES[esc])
                i += 2
                continue
            chars.append(c)
            i += 1
        if i + 1 >= n or path[i + 1] != "]":
            return None
        out.append("".join(chars))
        return i + 2
    j = path.find("]", i)
    digits = path[i:j] if j >= 0 else ""
    if not digits.isdigit() or not digits.isascii() or (len(digits) > 1 and digits[0] == "0"):
        return None
    out.append(int(digits))
    return j + 1


def _string_body(text: str) -> str:
    # json.dumps escapes one character at a time, so the bodies of the pieces
    # of a string concatenate to the body of the whole string.
    return json.dumps(text, ensure_ascii=False)[1:-1]


class PartialArgs:
    """One streamed call's arguments: the object, and its JSON text while in order."""

    __slots__ = (
        "_copy",
        "_open",
        "_path",
        "_started",
        "_string",
        "_version",
        "chars",
        "ordered",
        "root",
    )

    def __init__(self) -> None:
        #: The arguments assembled so far.
        self.root: dict[str, Any] = {}
        #: True while the text returned so far is a prefix of ``text()``.
        self.ordered = True
        #: Characters of values received (for the caller's argument cap).
        self.chars = 0
        # The containers open in the text, root first, and the segments between them.
        self._open: list[Container] = [self.root]
        self._path: list[Segment] = []
        # The leaf path of a string whose pieces are still arriving.
        self._string: list[Segment] | None = None
        self._started = False
        # Fragments applied (or refused), and ``root`` copied at that count.
        self._version = 0
        self._copy: tuple[int, dict[str, Any]] = (0, {})

    def apply(self, fragment: Mapping[str, Any]) -> tuple[str, str | None]:
        """Applies one ``PartialArg``; returns ``(json text to append, problem or None)``.

        On a problem (a malformed fragment or a path that contradicts an
        earlier one) nothing changes and the text is empty.
        """
        self._version += 1
        raw_path = fragment.get("jsonPath")
        if type(raw_path) is not str:
            return "", f"a partialArgs fragment has no jsonPath: {dump(fragment)[:120]}"
        segments = parse_json_path(raw_path)
        if segments is None:
            return "", f"the partialArgs jsonPath {raw_path[:120]!r} names no single argument"
        if len(segments) >= MAX_DEPTH:
            # Arguments nest no deeper than any decoded JSON may (_json.MAX_DEPTH).
            return "", f"the partialArgs jsonPath {raw_path[:120]!r} nests deeper than {MAX_DEPTH}"
        continues = fragment.get("willContinue") is True
        field = next((f for f in VALUE_FIELDS if f in fragment), None)
        value = fragment.get(field) if field is not None else None
        out: list[str] = []
        if self._string is not None:
            if segments == self._string and field in ("stringValue", None):
                return self._string_piece(segments, value if field else "", continues)
            # Another path: the provider ended the string without a last piece.
            if self.ordered:
                out.append('"')
            self._string = None
        problem = _check_value(field, value)
        if problem is not None:
            return "".join(out), f"{problem} at {raw_path[:120]!r}"
        parent, problem = self._parent(segments)
        if problem is not None:
            return "".join(out), f"the partialArgs jsonPath {raw_path[:120]!r} {problem}"
        leaf = segments[-1]
        if self.ordered and self._in_order(segments, parent):
            out.append(self._write(segments, field, value, continues))
        else:
            self.ordered = False
            self._store(segments, parent, leaf, field, value, continues)
        return "".join(out), None

    def close(self) -> str:
        """The text that ends the arguments (closing quote and brackets); "" if none began."""
        if not self._started or not self.ordered:
            self._string = None
            return ""
        out = ['"'] if self._string is not None else []
        self._string = None
        for container in reversed(self._open):
            out.append("}" if type(container) is dict else "]")
        self._open = [self.root]
        self._path = []
        return "".join(out)

    def text(self) -> str:
        """The arguments as compact JSON text ("" if no fragment arrived)."""
        return dump(self.root) if self._started or self.root else ""

    def snapshot(self) -> dict[str, Any]:
        """A copy of ``root`` as it is now, for a result read while fragments
        still arrive (results are frozen: ``root`` changes under them);
        copied once per applied fragment, however often it is read."""
        version, copied = self._copy
        if version != self._version:
            copied = _copy_tree(self.root)
            self._copy = (self._version, copied)
        return copied

    # --- internals -------------------------------------------------------

    def _string_piece(
        self, segments: list[Segment], piece: Any, continues: bool
    ) -> tuple[str, None]:
        text = piece if type(piece) is str else ""
        self.chars += len(text)
        parent = self._lookup(segments[:-1])
        leaf = segments[-1]
        parent[leaf] += text  # type: ignore[index]
        out = _string_body(text) if self.ordered and text else ""
        if not continues:
            self._string = None
            if self.ordered:
                out += '"'
        return out, None

    def _lookup(self, segments: list[Segment]) -> Container:
        node: Any = self.root
        for seg in segments:
            node = node[seg]
        return node  # type: ignore[no-any-return]

    def _parent(self, segments: list[Segment]) -> tuple[Container | None, str | None]:
        """The existing container of the leaf's parent path (None if it must be created),
        or a problem if the path contradicts the arguments so far."""
        node: Any = self.root
        for depth, seg in enumerate(segments):
            problem = _fits(node, seg)
            if problem is not None:
                return None, problem
            if depth == len(segments) - 1:
                return node, None
            if type(node) is dict:
                if seg not in node:
                    return None, _fits_new(segments[depth + 1 :])
                node = node[seg]
            else:
                if seg == len(node):
                    return None, _fits_new(segments[depth + 1 :])
                node = node[seg]
            if type(node) is not dict and type(node) is not list:
                return None, "goes inside a value that is not an object or array"
        return None, None  # unreachable: segments is never empty

    def _in_order(self, segments: list[Segment], parent: Container | None) -> bool:
        """Whether the leaf can be written after the text so far (no member revisited)."""
        parents = segments[:-1]
        k = 0
        limit = min(len(parents), len(self._path))
        while k < limit and parents[k] == self._path[k]:
            k += 1
        container = self._open[k]
        seg = segments[k]
        if type(container) is dict:
            return seg not in container
        return seg == len(container)

    def _write(
        self, segments: list[Segment], field: str | None, value: Any, continues: bool
    ) -> str:
        parents = segments[:-1]
        out: list[str] = []
        if not self._started:
            out.append("{")
            self._started = True
        k = 0
        limit = min(len(parents), len(self._path))
        while k < limit and parents[k] == self._path[k]:
            k += 1
        for container in reversed(self._open[k + 1 :]):
            out.append("}" if type(container) is dict else "]")
        del self._open[k + 1 :]
        del self._path[k:]
        container = self._open[k]
        rest = segments[k:]
        for j, seg in enumerate(rest):
            if container:
                out.append(",")
            if type(container) is dict:
                out.append(dump(seg) + ":")
            if j == len(rest) - 1:
                out.append(self._leaf(container, seg, field, value, continues, segments))
                break
            child: Container = {} if type(rest[j + 1]) is str else []
            out.append("{" if type(child) is dict else "[")
            _put(container, seg, child)
            self._open.append(child)
            self._path.append(seg)
            container = child
        return "".join(out)

    def _leaf(
        self,
        container: Container,
        seg: Segment,
        field: str | None,
        value: Any,
        continues: bool,
        segments: list[Segment],
    ) -> str:
        scalar = _scalar(field, value)
        _put(container, seg, scalar)
        if field == "stringValue":
            self.chars += len(scalar)
            if continues:
                self._string = list(segments)
                return '"' + _string_body(scalar)
            return dump(scalar)
        text = dump(scalar)
        self.chars += len(text)
        return text

    def _store(
        self,
        segments: list[Segment],
        parent: Container | None,
        leaf: Segment,
        field: str | None,
        value: Any,
        continues: bool,
    ) -> None:
        """Out of order: build the object only."""
        self._started = True
        if parent is None:
            node: Any = self.root
            for i, seg in enumerate(segments[:-1]):
                has = seg in node if type(node) is dict else int(seg) < len(node)
                if not has:
                    _put(node, seg, {} if type(segments[i + 1]) is str else [])
                node = node[seg]
            parent = node
        assert parent is not None
        scalar = _scalar(field, value)
        _put(parent, leaf, scalar)
        self.chars += len(scalar) if type(scalar) is str else len(dump(scalar))
        if field == "stringValue" and continues:
            self._string = list(segments)


def _copy_tree(root: dict[str, Any]) -> dict[str, Any]:
    """A copy of the containers of ``root`` (the leaves are immutable),
    without recursion: the caller's stack may be nearly exhausted."""
    top: dict[str, Any] = dict(root)
    todo: list[Container] = [top]
    while todo:
        node = todo.pop()
        keys: Any = node.keys() if type(node) is dict else range(len(node))
        for key in keys:
            value = node[key]
            if type(value) is dict:
                node[key] = value = dict(value)
                todo.append(value)
            elif type(value) is list:
                node[key] = value = list(value)
                todo.append(value)
    return top


def _check_value(field: str | None, value: Any) -> str | None:
    if field is None:
        return "a partialArgs fragment carries no value"
    if field == "stringValue" and type(value) is not str:
        return "a partialArgs stringValue is not a string"
    if field == "numberValue":
        if type(value) is not int and type(value) is not float:
            return "a partialArgs numberValue is not a number"
        if type(value) is float and not math.isfinite(value):
            return "a partialArgs numberValue is not finite"
    if field == "boolValue" and type(value) is not bool:
        return "a partialArgs boolValue is not a boolean"
    return None


def _scalar(field: str | None, value: Any) -> Any:
    return None if field == "nullValue" else value


def _fits(node: Any, seg: Segment) -> str | None:
    if type(node) is dict:
        return None if type(seg) is str else f"indexes [{seg}] into an object"
    if type(seg) is not int:
        return f"names member {seg!r} of an array"
    if seg > len(node):
        return f"skips array elements (index {seg}, {len(node)} so far)"
    return None


def _fits_new(rest: list[Segment]) -> str | None:
    """Containers created for ``rest`` must start at index 0 where they are arrays."""
    for seg in rest:
        if type(seg) is int and seg != 0:
            return f"skips array elements (index {seg} of a new array)"
    return None


def _put(container: Container, seg: Segment, value: Any) -> None:
    if isinstance(container, dict):
        container[str(seg)] = value
    elif seg == len(container):
        container.append(value)
    else:
        container[int(seg)] = value
