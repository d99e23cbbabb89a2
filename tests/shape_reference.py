"""A spec-literal reference for ``ShapeMatcher``, over what ``json.loads`` gives.

``ShapeMatcher`` (Rust, ``rust/core/src/shape``) must never match a payload
that the reference, applied to Python's own decoding of the same text, would
not match, and its captures must be the reference's. The reference follows
the template grammar of ``_core.pyi`` literally: objects keep their pairs (so
that repeated keys are seen), a dict shape is a closed object whose keys
ending in ``?`` are optional, a list shape a fixed-length array, ``$any`` /
``$falsy`` / ``$str`` / ``$int`` / ``$raw`` directives, ``$$`` a literal ``$``, anything
else a literal compared with Python's types (``1`` never matches ``1.0`` or
``True``).

Also: a JSON encoder with the liberties the grammar allows (whitespace,
escapes of any character, ``-0``, exponents), for payloads that
``json.dumps`` never writes.
"""

from __future__ import annotations

import json
from typing import Any

from hypothesis import strategies as st

__all__ = [
    "Pairs",
    "capture_count",
    "capture_kinds",
    "encode",
    "loads_pairs",
    "reference_match",
    "same",
]


class Pairs(list[tuple[str, Any]]):
    """A JSON object as its (key, value) pairs, in order, repeats kept."""


def loads_pairs(text: str | bytes) -> Any:
    """``json.loads`` keeping each object's pairs."""
    return json.loads(text, object_pairs_hook=Pairs)


def _field(key: str) -> tuple[str, bool]:
    return (key[:-1], True) if key.endswith("?") else (key, False)


def capture_kinds(shape: Any) -> list[str]:
    """The directives of a shape's captures, in capture order."""
    if isinstance(shape, dict):
        return [kind for v in shape.values() for kind in capture_kinds(v)]
    if isinstance(shape, list):
        return [kind for v in shape for kind in capture_kinds(v)]
    return [shape] if shape in ("$str", "$int", "$raw") else []


def capture_count(shape: Any) -> int:
    """The number of captures of a shape."""
    return len(capture_kinds(shape))


def reference_match(shape: Any, value: Any) -> list[Any] | None:
    """The captures of ``shape`` in ``value`` (from ``loads_pairs``), or None.

    A ``$raw`` capture is given as the decoded value; compare it with
    ``loads_pairs`` of the matcher's text.
    """
    out: list[Any] = []
    return out if _match(shape, value, out) else None


def _match(shape: Any, value: Any, out: list[Any]) -> bool:
    if isinstance(shape, dict):
        if type(value) is not Pairs:
            return False
        keys = [k for k, _ in value]
        if len(set(keys)) != len(keys):
            return False
        listed = {_field(k)[0] for k in shape}
        present = dict(value)
        if any(key not in listed for key in present):
            return False
        for raw_key, sub in shape.items():
            key, optional = _field(raw_key)
            if key in present:
                if not _match(sub, present[key], out):
                    return False
            elif optional:
                out.extend([None] * capture_count(sub))
            else:
                return False
        return True
    if isinstance(shape, list):
        if type(value) is not list or len(value) != len(shape):
            return False
        return all(_match(s, v, out) for s, v in zip(shape, value, strict=True))
    if isinstance(shape, str) and shape.startswith("$") and not shape.startswith("$$"):
        if shape == "$any":
            return True
        if shape == "$falsy":
            return type(value) is not float and not value
        if shape == "$str" and type(value) is str:
            out.append(value)
            return True
        if shape == "$int" and type(value) is int:
            out.append(value)
            return True
        if shape == "$raw":
            out.append(value)
            return True
        return False
    if shape is None or isinstance(shape, bool):
        return value is shape
    if isinstance(shape, int):
        return type(value) is int and value == shape
    if isinstance(shape, str):
        literal = shape[1:] if shape.startswith("$$") else shape
        return type(value) is str and value == literal
    raise TypeError(f"not a shape: {shape!r}")


# --- a liberal JSON encoder --------------------------------------------------------------

_SHORT_ESCAPES = {
    '"': '\\"',
    "\\": "\\\\",
    "\b": "\\b",
    "\f": "\\f",
    "\n": "\\n",
    "\r": "\\r",
    "\t": "\\t",
}
_WS = st.sampled_from(["", "", "", " ", "\n", "\t", "\r\n ", "  "])


def _u(code: int) -> str:
    return f"\\u{code:04x}" if code % 2 else f"\\u{code:04X}"


def _encode_str(draw: st.DrawFn, text: str) -> str:
    out = ['"']
    for ch in text:
        code = ord(ch)
        escape = draw(st.sampled_from([False, False, False, True]))
        if ch in _SHORT_ESCAPES and not (escape and ch not in '"\\'):
            out.append(_SHORT_ESCAPES[ch])
        elif code < 0x20 or escape:
            if code > 0xFFFF:
                code -= 0x10000
                out.append(_u(0xD800 + (code >> 10)) + _u(0xDC00 + (code & 0x3FF)))
            elif ch == "/" and draw(st.booleans()):
                out.append("\\/")
            else:
                out.append(_u(code))
        else:
            out.append(ch)
    out.append('"')
    return "".join(out)


def encode(draw: st.DrawFn, value: Any) -> str:
    """``value`` (``Pairs`` for objects) as JSON text with drawn whitespace,
    escapes and number spellings; ``json.loads`` gives ``value`` back."""
    ws = draw(_WS)
    if value is None or isinstance(value, bool):
        return ws + json.dumps(value)
    if isinstance(value, int):
        text = str(value)
        if value == 0 and draw(st.booleans()):
            text = "-0"
        return ws + text
    if isinstance(value, float):
        text = repr(value)
        if "e" in text and draw(st.booleans()):
            text = text.replace("e", "E")
        return ws + text
    if isinstance(value, str):
        return ws + _encode_str(draw, value)
    if isinstance(value, Pairs):
        items = [
            f"{_encode_str(draw, k)}{draw(_WS)}:{encode(draw, v)}{draw(_WS)}" for k, v in value
        ]
        return ws + "{" + ",".join(items) + draw(_WS) + "}"
    if isinstance(value, list):
        return ws + "[" + ",".join(encode(draw, v) + draw(_WS) for v in value) + draw(_WS) + "]"
    raise TypeError(f"not JSON: {value!r}")


def same(a: Any, b: Any) -> bool:
    """Equality that tells an object from an array and ``1`` from ``1.0`` or ``True``."""
    if type(a) is not type(b):
        return False
    if isinstance(a, list):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, tuple):
        return same(list(a), list(b))
    if isinstance(a, dict):
        return a.keys() == b.keys() and all(same(a[k], b[k]) for k in a)
    return bool(a == b)
