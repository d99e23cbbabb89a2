"""Decoding one JSON text per payload, as fast as the environment allows.

Every SSE data payload of a JSON protocol is decoded exactly once, here. RFC
8259 (checked 2026-11-29) is the grammar; acceptance is the standard library's
``json`` module's, exactly, whichever decoder runs:

* ``json.loads`` spends about 45% of its time outside the C scanner (type
  checks, the ``JSONDecoder.decode`` wrapper, two whitespace regexes). Calling
  the C scanner (``JSONDecoder.scan_once``) directly and checking the trailing
  whitespace ourselves does the same work in ~1.0 us instead of ~1.9 us for a
  260-byte chat chunk (CPython 3.11, best of 5).
* ``orjson``, when installed (it is optional: ``pip install streamwire[fast]``;
  streamwire has no runtime dependencies), takes ~0.47 us for the same chunk.
  It accepts a subset of what ``json`` accepts (no ``NaN``, no lone
  surrogates), so a text it rejects is retried with the standard library
  before being called invalid. An integer beyond 64 bits it does not reject
  but reads as a float (orjson 3.13), where ``json`` keeps the exact int; such
  an integer has at least 19 digits, so a text with a 19-digit run goes to the
  standard library directly (``has_digit_run``, a probe every 19 bytes in
  Rust). So the outcome never depends on whether orjson is installed.
"""

from __future__ import annotations

import json
import json.scanner
from collections.abc import Callable
from typing import Any

from ._core import has_digit_run

__all__ = ["ACCELERATED", "loads"]

# The C scanner the decoder itself uses (``JSONDecoder.scan_once``); typeshed
# types make_scanner's argument as its own class, hence the ignore.
_scan_once = json.scanner.make_scanner(json.JSONDecoder())  # type: ignore[arg-type]
_JSON_WS = " \t\n\r"
#: The fewest digits of an integer outside the 64-bit range (2**63 has 19).
WIDE_INT_DIGITS = 19


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


def _make_loads() -> tuple[Callable[[str], Any], bool]:
    try:
        import orjson
    except ImportError:
        return _loads_stdlib, False
    orjson_loads = orjson.loads
    orjson_error = orjson.JSONDecodeError

    def loads_accelerated(text: str) -> Any:
        if has_digit_run(text, WIDE_INT_DIGITS):
            return _loads_stdlib(text)
        try:
            return orjson_loads(text)
        except orjson_error:
            return _loads_stdlib(text)

    return loads_accelerated, True


loads: Callable[[str], Any]
#: Whether the optional ``orjson`` accelerator is in use.
ACCELERATED: bool
loads, ACCELERATED = _make_loads()
loads.__doc__ = "Decodes one JSON text; raises ValueError (json.JSONDecodeError) if invalid."
