"""Hostile variants of the regression fixtures, for the tests of docs/design.md's promise
that bad upstream input never raises out of an adapter and every structure is capped.

Each builder starts from a protocol's own regression fixture (its text case,
``01-*``, or its tool-call case, ``06-one-tool-call`` / ``02-tool-call``),
decoded into units by ``wire_units.py``, and changes what the stream says:
a payload nested deeper than any decoder follows, tool arguments nested that
deep, and so on. ``run`` replays the result under a chunking and returns the
stream, its events and its result; ``at_stack_depth`` runs a function from a
caller that is already deep in its own recursion.
"""

from __future__ import annotations

import base64
import copy
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, TypeVar

import streamwire as sw
from wire_units import NOT_JSON, WEBSOCKET, Unit, Wire, decode_wire

__all__ = [
    "HTTP_PROTOCOLS",
    "JSON_PROTOCOLS",
    "at_stack_depth",
    "chunkings_of",
    "deep_array",
    "deep_object",
    "deep_unit",
    "fixture_wire",
    "replay",
    "run",
    "with_arguments",
    "with_field",
    "with_full_arguments",
    "with_unit",
]

T = TypeVar("T")
FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "regression"
#: Every protocol whose payloads are JSON: all of them.
JSON_PROTOCOLS = tuple(sorted(sw.known_protocols()))
HTTP_PROTOCOLS = tuple(p for p in JSON_PROTOCOLS if p not in WEBSOCKET)
_TEXT = {"bedrock-invoke": "anthropic-text"}
_CALL = {"bedrock-invoke": "anthropic-tool-use"}


def fixture_wire(protocol: str, case: str = "text") -> Wire:
    """The units of a protocol's text (``case="text"``) or tool-call (``"call"``)
    fixture, or of its regression case of that name."""
    folder = FIXTURES / protocol
    if case not in ("text", "call"):
        path = next(p for p in folder.iterdir() if p.stem == case and p.suffix != ".json")
    elif protocol in WEBSOCKET:
        name = "01-text" if case == "text" else "02-tool-call"
        path = folder / f"{name}.jsonl"
    else:
        name = (_TEXT if case == "text" else _CALL).get(protocol)
        if name is None:
            name = "01-short-text" if case == "text" else "06-one-tool-call"
        path = next(p for p in folder.iterdir() if p.stem == name and p.suffix != ".json")
    return decode_wire(protocol, path.read_bytes())


def deep_array(depth: int) -> str:
    """A JSON text of ``depth`` nested arrays: ``[[[...]]]``."""
    return "[" * depth + "]" * depth


def deep_object(depth: int) -> Any:
    """A value of ``depth`` nested objects, built without recursion: ``{"a": {"a": ...}}``."""
    root: dict[str, Any] = {}
    node = root
    for _ in range(depth - 1):
        child: dict[str, Any] = {}
        node["a"] = child
        node = child
    return root


def deep_unit(wire: Wire, text: str) -> Unit:
    """A unit of the wire's kind whose payload is ``text`` (e.g. ``deep_array(1000)``):
    an unnamed SSE event, an EventStream event like the wire's second message
    (for ``bedrock-invoke``, a chunk whose inner event is ``text``), an array
    element (an object holding ``text``: the splitter takes objects only), a
    message."""
    if wire.kind == "eventstream":
        headers = dict(wire.units[1].headers)
        if wire.protocol == "bedrock-invoke":
            encoded = base64.b64encode(text.encode()).decode("ascii")
            return Unit({"bytes": encoded}, headers=headers)
        return Unit(NOT_JSON, text, headers=headers)
    if wire.kind == "json":
        # The array splitter takes objects only: the deep value is a member.
        return Unit(NOT_JSON, '{"candidates":' + text + "}")
    return Unit(NOT_JSON, text)


def with_unit(wire: Wire, at: int, unit: Unit) -> Wire:
    """A copy of ``wire`` with ``unit`` inserted before unit ``at``."""
    units = [copy.deepcopy(u) for u in wire.units]
    units.insert(at, unit)
    return Wire(wire.protocol, wire.kind, units, wire.body)


#: Fields that carry one fragment of a call's arguments, and fields that repeat them whole.
_FRAGMENTS = frozenset({"partial_json"})
_WHOLE = frozenset({"arguments"})


def with_arguments(wire: Wire, text: str, value: Any) -> Wire:
    """A copy of a tool-call fixture whose call has the arguments ``text``
    (whose JSON value is ``value``): the first streamed fragment carries all of
    it, the later ones nothing, every whole copy the same text; where a
    protocol sends the arguments as an object (Gemini's ``args``), ``value``."""
    units = [copy.deepcopy(u) for u in wire.units]
    first = [True]
    for unit in units:
        if unit.payload is not NOT_JSON:
            unit.payload = _rewrite(unit.payload, text, value, first)
        if unit.inner is not NOT_JSON:
            unit.inner = _rewrite(unit.inner, text, value, first)
    return Wire(wire.protocol, wire.kind, units, wire.body)


def with_full_arguments(wire: Wire, text: str) -> Wire:
    """A copy of a Responses or Realtime tool-call fixture whose whole copies of
    the arguments (``function_call_arguments.done``, the done item, the
    terminal response's output) are ``text``; the deltas stay as they were."""
    units = [copy.deepcopy(u) for u in wire.units]
    for unit in units:
        if unit.payload is not NOT_JSON:
            unit.payload = _replace(unit.payload, "arguments", text, nonempty=True)
    return Wire(wire.protocol, wire.kind, units, wire.body)


def with_field(wire: Wire, key: str, value: Any) -> Wire:
    """A copy of ``wire`` whose every ``key`` (e.g. ``finishReason``) is ``value``."""
    units = [copy.deepcopy(u) for u in wire.units]
    for unit in units:
        if unit.payload is not NOT_JSON:
            unit.payload = _replace(unit.payload, key, value, nonempty=False)
    return Wire(wire.protocol, wire.kind, units, wire.body)


def _replace(node: Any, key: str, value: Any, *, nonempty: bool) -> Any:
    if isinstance(node, list):
        return [_replace(item, key, value, nonempty=nonempty) for item in node]
    if not isinstance(node, dict):
        return node
    return {
        k: value
        if k == key and (item or not nonempty)
        else _replace(item, key, value, nonempty=nonempty)
        for k, item in node.items()
    }


def _fragment(first: list[bool], text: str) -> str:
    if first[0]:
        first[0] = False
        return text
    return ""


def _rewrite(node: Any, text: str, value: Any, first: list[bool]) -> Any:
    if isinstance(node, list):
        return [_rewrite(item, text, value, first) for item in node]
    if not isinstance(node, dict):
        return node
    out = {}
    kind = node.get("type")
    for key, item in node.items():
        if key in _FRAGMENTS and isinstance(item, str):
            out[key] = _fragment(first, text)
        elif key == "delta" and isinstance(item, str) and "arguments" in str(kind):
            out[key] = _fragment(first, text)  # responses and realtime argument deltas
        elif key == "input" and isinstance(item, str):
            out[key] = _fragment(first, text)  # bedrock-converse toolUse.input
        elif key == "function" and isinstance(item, dict) and type(item.get("arguments")) is str:
            out[key] = {**item, "arguments": _fragment(first, text)}  # a chat fragment
        elif key in _WHOLE and isinstance(item, str) and item:
            out[key] = text  # an announcement's "" stays: the deltas follow it
        elif key == "args" and isinstance(item, dict):
            out[key] = value
        else:
            out[key] = _rewrite(item, text, value, first)
    return out


def replay(
    protocol: str, wire: Wire, chunks: list[bytes] | None = None, *, cancel: bool = False
) -> tuple[sw.Stream, list[sw.Event]]:
    """Replays ``wire`` (fed as ``chunks`` of its bytes, if given; WebSocket
    wires message by message), then closes (or cancels) the stream; its
    result is not read yet."""
    stream = sw.stream(protocol)
    events: list[sw.Event] = []
    if wire.kind == "messages":
        for message in wire.messages():
            events += stream.feed_message(message)
    else:
        for chunk in chunks if chunks is not None else [wire.encode()]:
            events += stream.feed(chunk)
    events += stream.cancel() if cancel else stream.close()
    return stream, events


def run(
    protocol: str, wire: Wire, chunks: list[bytes] | None = None, *, cancel: bool = False
) -> tuple[sw.Stream, list[sw.Event], sw.StreamResult]:
    """``replay``, and the stream's result."""
    stream, events = replay(protocol, wire, chunks, cancel=cancel)
    return stream, events, stream.result


def at_stack_depth(frames_left: int, fn: Callable[[], T]) -> T:
    """Calls ``fn`` from a stack that leaves it about ``frames_left`` frames
    before the recursion limit."""
    depth = 0
    frame = sys._getframe()
    while frame is not None:
        depth += 1
        frame = frame.f_back  # type: ignore[assignment]

    def down(n: int) -> T:
        return fn() if n <= 0 else down(n - 1)

    return down(sys.getrecursionlimit() - depth - frames_left)


def chunkings_of(wire: Wire) -> Iterator[tuple[str, list[bytes]]]:
    """The chunkings of ``chunking.py`` for a byte wire; one for a message wire."""
    from chunking import chunkings

    if wire.kind == "messages":
        yield "messages", []
        return
    yield from chunkings(wire.encode(), random_rounds=4)
