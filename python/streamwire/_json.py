"""Decoding one JSON text per payload, as fast as the environment allows.

Every data payload of a JSON protocol is decoded exactly once, here. RFC
8259 (checked 2026-11-29) is the grammar; acceptance is the standard
library's ``json`` module's, exactly, whichever decoder runs, so the outcome
never depends on whether the optional ``orjson`` is installed
(``streamwire[fast]``):

* without orjson, the C scanner (``JSONDecoder.scan_once``) is called
  directly and the trailing whitespace checked here, skipping the work
  ``json.loads`` does around it;
* orjson accepts a subset of what ``json`` accepts (no ``NaN``, no lone
  surrogates), so a text it rejects is retried with the standard library;
  it reads an integer beyond 64 bits as a float, so a text with a run of
  ``WIDE_INT_DIGITS`` digits goes to the standard library directly.

Nesting is capped at ``MAX_DEPTH`` (docs/design.md "Limits and memory"): a
deeper text raises ``JsonDepthError``, a ``ValueError``, before any decoder
runs, never a ``RecursionError``, even for a caller already deep in its stack.

``same_json``: two texts that spell one value differently (whitespace, key
order, ``1e1`` for ``10``, escapes) are the same JSON; objects compare as key
sets (a text with a duplicate key is nobody's value), numbers by their exact
decimal value, and ``true`` is never ``1``. ``dumps`` writes a lone
surrogate (valid JSON, and upstreams send it) as its JSON escape, so every
output path that writes upstream strings as UTF-8 survives the round trip.
"""

from __future__ import annotations

import json
import json.scanner
import re
from collections.abc import Callable
from decimal import Decimal
from typing import Any

from ._core import has_digit_run, json_nesting_exceeds

__all__ = [
    "ACCELERATED",
    "MAX_DEPTH",
    "JsonDepthError",
    "check_depth",
    "dumps",
    "escape_surrogates",
    "failure",
    "loads",
    "same_json",
]

# The C scanner the decoder itself uses (``JSONDecoder.scan_once``); typeshed
# types make_scanner's argument as its own class, hence the ignore.
_scan_once = json.scanner.make_scanner(json.JSONDecoder())  # type: ignore[arg-type]
_JSON_WS = " \t\n\r"
#: The fewest digits of an integer outside the 64-bit range (2**63 has 19).
WIDE_INT_DIGITS = 19
#: The deepest nesting of arrays and objects a decoded text may have.
MAX_DEPTH = 256


class JsonDepthError(ValueError):
    """A JSON text nests deeper than ``MAX_DEPTH`` levels (or deeper than the
    caller's remaining stack allows); adapters report it as ``json_too_deep``."""

    def __init__(self) -> None:
        super().__init__(f"the JSON text nests deeper than {MAX_DEPTH} levels")


def failure(exc: ValueError | None, text: str | bytes, what: str) -> tuple[str, str]:
    """The error type and message of a failed decode of ``what`` (``"a data
    payload"``, ...): ``json_too_deep`` for ``JsonDepthError``, else
    ``invalid_json`` with the text's beginning."""
    if isinstance(exc, JsonDepthError):
        return "json_too_deep", f"{what} nests deeper than {MAX_DEPTH} levels"
    return "invalid_json", f"{what} is not JSON: {text[:80]!r}"


def check_depth(text: str | bytes) -> None:
    """Raises ``JsonDepthError`` if ``text`` nests deeper than ``MAX_DEPTH``: one
    vectorized bracket count in Rust, and only for texts longer than that."""
    if len(text) > MAX_DEPTH and json_nesting_exceeds(text, MAX_DEPTH):
        raise JsonDepthError


_SURROGATE = re.compile("[\ud800-\udfff]")


def _escape(match: re.Match[str]) -> str:
    return f"\\u{ord(match[0]):04x}"


def escape_surrogates(text: str) -> str:
    """JSON text (as ``json.dumps(..., ensure_ascii=False)`` writes it) with
    each lone surrogate written as its escape: the same JSON value, and text
    that encodes as UTF-8. ASCII text is returned at once."""
    if text.isascii():
        return text
    return _SURROGATE.sub(_escape, text)


def dumps(value: Any, *, indent: int | None = None) -> str:
    """JSON text of ``value``, non-ASCII kept as is, lone surrogates escaped;
    compact unless ``indent`` is given."""
    separators = (",", ":") if indent is None else None
    return escape_surrogates(
        json.dumps(value, ensure_ascii=False, indent=indent, separators=separators)
    )


def _loads_stdlib(text: str) -> Any:
    try:
        value, end = _scan_once(text, 0)
    except StopIteration:
        # Not a value at offset 0 (leading whitespace, or garbage): let the
        # full decoder handle it and produce its precise error.
        return json.loads(text)
    if end != len(text) and text[end:].strip(_JSON_WS):
        raise json.JSONDecodeError("Extra data", text, end)
    return value


def loads_checked(text: str) -> Any:
    """The standard library's decode of a text that passed ``check_depth``."""
    try:
        return _loads_stdlib(text)
    except RecursionError:
        raise JsonDepthError from None


def _make_loads() -> tuple[Callable[[str], Any], bool]:
    try:
        import orjson
    except ImportError:

        def loads_stdlib(text: str) -> Any:
            check_depth(text)
            return loads_checked(text)

        return loads_stdlib, False
    orjson_loads = orjson.loads
    orjson_error = orjson.JSONDecodeError

    def loads_accelerated(text: str) -> Any:
        check_depth(text)
        if has_digit_run(text, WIDE_INT_DIGITS):
            return loads_checked(text)
        try:
            return orjson_loads(text)
        except orjson_error:
            return loads_checked(text)

    return loads_accelerated, True


loads: Callable[[str], Any]
#: Whether the optional ``orjson`` accelerator is in use.
ACCELERATED: bool
loads, ACCELERATED = _make_loads()
loads.__doc__ = (
    "Decodes one JSON text; raises ValueError if invalid (json.JSONDecodeError) "
    "or nested too deep (JsonDepthError)."
)


def _reject_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


def _unique_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    value = dict(pairs)
    if len(value) != len(pairs):
        raise ValueError("a duplicate key")
    return value


#: Reads numbers exactly (``Decimal``) and refuses what ``same_json`` cannot compare.
_EXACT = json.JSONDecoder(
    parse_float=Decimal, parse_constant=_reject_constant, object_pairs_hook=_unique_keys
)


def same_json(a: str, b: str) -> bool:
    """Whether two JSON texts are the same value (see the module docstring);
    False when either is not JSON, nests deeper than ``MAX_DEPTH`` or has a
    duplicate key. Never raises."""
    try:
        check_depth(a)
        check_depth(b)
        pending = [(_EXACT.decode(a), _EXACT.decode(b))]
    except (ValueError, RecursionError):
        return False
    while pending:  # a loop, not recursion: callers may be deep in their stack
        x, y = pending.pop()
        kind = type(x)
        if kind is dict:
            if type(y) is not dict or x.keys() != y.keys():
                return False
            pending.extend((x[key], y[key]) for key in x)
        elif kind is list:
            if type(y) is not list or len(x) != len(y):
                return False
            pending.extend(zip(x, y, strict=True))
        elif kind is int or kind is Decimal:
            if (type(y) is not int and type(y) is not Decimal) or x != y:
                return False
        elif kind is not type(y) or x != y:  # str, bool, None
            return False
    return True
