"""Structure-aware fuzzing of every adapter: what a hostile upstream can say, said.

docs/design.md: bad upstream input never raises out of an adapter, reading
``result`` never raises, and every status is one of the six. This fuzzer takes
every fixture (the manifests under ``fixtures/``), decodes its wire into units
(``wire_units.py``: SSE events, EventStream messages with the JSON inside a
``bedrock-invoke`` chunk, gemini-json elements, WebSocket messages), and
mutates what the stream says:

* type confusion: any JSON value of any payload replaced by a value of
  another type (null, booleans, small integers (a Gemini enum sent as its
  number), integers at and past int32 and 64 bits, floats, empty and long
  strings, lone surrogates, empty and small arrays and objects, a value
  nested past ``_json.MAX_DEPTH`` or just within it, or another node of the
  same stream);
* structure: a key deleted, an unknown key added (with a long name), a unit
  dropped, repeated or moved, an SSE event renamed, an EventStream header
  changed or dropped; raw bodies get their bytes flipped.

Two passes. The systematic one (``field_cases``) confuses every field: for
each protocol, each distinct field path of its fixtures (by event type:
``content_block_delta/delta.text``), once for each value of ``SYSTEMATIC``
and once deleted, fed whole. The random one (``make_case``) stacks up to
five mutations of any kind. Each random case is fed under a random chunking
(WebSocket: as ``str``, ``bytes`` or ``dict``), its result read at random
points, and ended by ``close()`` or, at a random point, ``cancel()``; HTTP
cases also go through ``sw.translate`` into a random target, whose output the
target's own adapter must read. A
case fails when anything raises, a status or error is not typed, an event
or the result is not serializable, or the result changes when read twice.

Cases are reproducible: case ``n`` of seed ``s`` is always the same, and a
failure names both (``python tests/hostile_fuzz.py --seed s --case n``
replays one). The test (``test_fuzz_hostile.py``) runs for a bounded time;
``make fuzz-python`` for longer.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import random
import sys
import time
import traceback
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

import streamwire as sw
from fixture_replay import Fixture, manifests
from streamwire.io.serialize import event_dict, result_dict
from wire_units import NOT_JSON, Unit, Wire, decode_wire

__all__ = ["Case", "Failure", "field_cases", "fuzz", "make_case", "run_case", "systematic"]

STATUSES = frozenset(
    {"completed", "truncated", "error", "incomplete", "cancelled", "protocol_conflict"}
)
PHASES = frozenset({"framing", "provider", "transport", "limit"})
HTTP_TARGETS = tuple(sw.known_encoders())


def _nested(depth: int, leaf: Any = 1) -> Any:
    """Arrays and objects alternately, ``depth`` levels deep, built without recursion."""
    value: Any = leaf
    for i in range(depth):
        value = [value] if i % 2 else {"k": value}
    return value


def _copy(value: Any) -> Any:
    """A deep copy of a JSON tree, built without recursion: a value an earlier
    mutation confused may nest thousands of levels deep, past what
    ``copy.deepcopy`` (recursive) follows from a test's stack, and the
    harness must never fail on its own values."""
    if not isinstance(value, dict | list):
        return value
    top: Any = {} if isinstance(value, dict) else []
    stack = [(value, top)]
    while stack:
        source, target = stack.pop()
        items = source.items() if isinstance(source, dict) else enumerate(source)
        for key, item in items:
            new = item
            if isinstance(item, dict | list):
                new = {} if isinstance(item, dict) else []
                stack.append((item, new))
            if isinstance(target, dict):
                target[key] = new
            else:
                target.append(new)
    return top


def _copy_unit(unit: Unit) -> Unit:
    return dataclasses.replace(
        unit, payload=_copy(unit.payload), inner=_copy(unit.inner), headers=dict(unit.headers)
    )


def _confusions(rng: random.Random, donor: Any) -> Any:
    """One value of a type the field may not expect."""
    pick = rng.randrange(22)
    return [
        None,
        True,
        False,
        0,
        -1,
        rng.randrange(1 << 40),
        1 << 64,
        -(1 << 63) - 1,
        1.5,
        "",
        "x",
        "\ud800",
        "a" * rng.choice((100, 5000)),
        [],
        [None],
        [{}],
        {},
        {"index": 0, "type": "text"},
        _nested(300),
        _nested(250),
        {"k" * 200: [1, "\udfff"]},
        donor,
    ][pick]


@dataclass
class Case:
    """One fuzz case: a mutated fixture and how to feed it."""

    seed: int
    number: int
    fixture: str
    protocol: str
    options: dict[str, Any]
    wire: Wire
    mutations: list[str]
    #: Byte offsets to cut the wire at (HTTP), or each message's form (WebSocket).
    cuts: list[int] = field(default_factory=list)
    forms: list[str] = field(default_factory=list)
    #: Cancel before this chunk / message (None: close at the end).
    cancel_at: int | None = None
    #: Read ``result`` after these chunks.
    reads: set[int] = field(default_factory=set)
    target: str | None = None

    def describe(self) -> str:
        return (
            f"seed {self.seed} case {self.number}: {self.protocol} {self.fixture}, "
            f"mutations {self.mutations}, cuts {len(self.cuts)}, cancel_at {self.cancel_at}, "
            f"target {self.target}"
        )


class Failure(AssertionError):
    """A case broke an invariant (or something raised)."""


#: The values every field is confused with, in the systematic pass.
SYSTEMATIC: tuple[Any, ...] = (
    None,
    True,
    0,
    -1,
    7,  # a Gemini finishReason number Vertex AI and the Gemini API name differently
    1 << 31,  # the first integer past int32, where enum numbers end
    1 << 64,
    1.5,
    "",
    "x",
    "\ud800",
    [],
    [None],
    {},
    {"index": 0},
    _nested(300),
)
_DELETE: Any = object()


# --- mutating ---------------------------------------------------------------


def _nodes(value: Any, out: list[tuple[Any, Any]]) -> None:
    """Every (container, key) pair of a JSON tree, iteratively."""
    stack = [value]
    while stack:
        node = stack.pop()
        if isinstance(node, dict):
            for key, item in node.items():
                out.append((node, key))
                stack.append(item)
        elif isinstance(node, list):
            for i, item in enumerate(node):
                out.append((node, i))
                stack.append(item)


def _json_roots(wire: Wire) -> list[tuple[Unit, str]]:
    roots = []
    for unit in wire.units:
        if unit.payload is not NOT_JSON:
            roots.append((unit, "payload"))
        if unit.inner is not NOT_JSON:
            roots.append((unit, "inner"))
    return roots


def _mutate_json(wire: Wire, rng: random.Random) -> str:
    roots = _json_roots(wire)
    if not roots:
        return "none"
    unit, attr = rng.choice(roots)
    root = getattr(unit, attr)
    nodes: list[tuple[Any, Any]] = []
    _nodes(root, nodes)
    if not nodes or rng.random() < 0.05:
        setattr(unit, attr, _confusions(rng, None))
        return f"{attr}=confused"
    container, key = rng.choice(nodes)
    action = rng.random()
    if action < 0.7:
        donor_unit, donor_attr = rng.choice(roots)
        donors: list[tuple[Any, Any]] = []
        _nodes(getattr(donor_unit, donor_attr), donors)
        donor = _copy(rng.choice(donors)[0]) if donors else None
        container[key] = _confusions(rng, donor)
        return f"{attr}[{key!r:.20}]=confused"
    if action < 0.85 and isinstance(container, dict):
        del container[key]
        return f"{attr}: del {key!r:.20}"
    if isinstance(container, dict):
        name = rng.choice(("x_unknown", "u" * rng.choice((50, 3000)), "\ud800"))
        container[name] = _confusions(rng, None)
        return f"{attr}: add {name[:10]!r}"
    container.append(_confusions(rng, None))
    return f"{attr}: append"


def _mutate_structure(wire: Wire, rng: random.Random) -> str:
    units = wire.units
    if wire.kind == "raw" or not units:
        body = bytearray(wire.body)
        if body:
            body[rng.randrange(len(body))] = rng.randrange(256)
        wire.body = bytes(body)
        return "flip a byte"
    i = rng.randrange(len(units))
    choice = rng.random()
    if choice < 0.25:
        del units[i]
        return f"drop unit {i}"
    if choice < 0.5:
        units.insert(rng.randrange(len(units) + 1), _copy_unit(units[i]))
        return f"repeat unit {i}"
    if choice < 0.7:
        unit = units.pop(i)
        units.insert(rng.randrange(len(units) + 1), unit)
        return f"move unit {i}"
    unit = units[i]
    if wire.kind == "sse":
        names = [u.event for u in units] + ["error", "ping", "x" * 300, None]
        unit.event = rng.choice(names)
        return f"rename unit {i}"
    if wire.kind == "eventstream" and unit.headers:
        name = rng.choice(sorted(unit.headers))
        if rng.random() < 0.5:
            del unit.headers[name]
            return f"drop header {name}"
        unit.headers[name] = rng.choice(
            ["event", "exception", "error", "chunk", "contentBlockDelta", "", "x" * 200, 7, True]
        )
        return f"set header {name}"
    unit.payload = NOT_JSON
    unit.text = rng.choice(["", "[DONE]", "{", "[" * 2000, "not json", "\ud800"])
    return f"unit {i} not json"


# --- cases ------------------------------------------------------------------


def _fixtures() -> list[Fixture]:
    found = [f for f in manifests() if f.protocol in sw.known_protocols()]
    found.sort(key=lambda f: f.name)
    return found


_FIXTURES: list[Fixture] | None = None


def make_case(seed: int, number: int) -> Case:
    """Case ``number`` of ``seed``: always the same case."""
    rng = random.Random(seed * 1_000_003 + number)
    fixture = rng.choice(_fixtures_once())
    raw = fixture.raw if not fixture.messages else "\n".join(fixture.message_lines()).encode()
    wire = decode_wire(fixture.protocol, raw)
    mutations = []
    for _ in range(rng.choice((1, 1, 2, 3, 5))):
        if rng.random() < 0.75:
            mutations.append(_mutate_json(wire, rng))
        else:
            mutations.append(_mutate_structure(wire, rng))
    case = Case(
        seed,
        number,
        fixture.name,
        fixture.protocol,
        dict(fixture.manifest.get("options", {})),
        wire,
        mutations,
    )
    if wire.kind == "messages":
        count = len(wire.units)
        case.forms = [rng.choice(("str", "bytes", "dict")) for _ in range(count)]
        steps = count
    else:
        size = len(wire.encode())
        cuts = rng.choice((0, 1, 3, max(1, size // 50), max(1, size // 4)))
        case.cuts = sorted(rng.randrange(size + 1) for _ in range(min(cuts, size)))
        steps = len(case.cuts) + 1
        if rng.random() < 0.3:
            case.target = rng.choice(HTTP_TARGETS)
    if rng.random() < 0.25:
        case.cancel_at = rng.randrange(steps + 1)
    case.reads = {rng.randrange(steps + 1) for _ in range(rng.choice((0, 1, 3)))}
    return case


def _chunks(case: Case) -> list[bytes]:
    data = case.wire.encode()
    out, start = [], 0
    for cut in case.cuts:
        out.append(data[start:cut])
        start = cut
    out.append(data[start:])
    return out


def _messages(case: Case) -> list[Any]:
    out: list[Any] = []
    for unit, form in zip(case.wire.units, case.forms, strict=True):
        text = unit.data()
        if form == "dict" and isinstance(unit.payload, dict):
            out.append(_copy(unit.payload))
        elif form == "bytes":
            out.append(text.encode("utf-8", "surrogatepass"))
        else:
            out.append(text)
    return out


def _check_result(result: sw.StreamResult, where: str, *, serialize: bool = True) -> None:
    if result.status not in STATUSES:
        raise Failure(f"{where}: status {result.status!r}")
    if not result.final:
        raise Failure(f"{where}: not final after the end")
    if result.status == "error":
        error = result.error
        if error is None or error.phase not in PHASES:
            raise Failure(f"{where}: an error status without a typed error: {error!r}")
        if error.type is not None and type(error.type) is not str:
            raise Failure(f"{where}: error.type is {type(error.type).__name__}")
    for call in result.tool_calls:
        if call.executable and result.status != "completed":
            raise Failure(f"{where}: an executable call in a {result.status} stream")
        if call.executable == (call.not_executable_reason is not None):
            raise Failure(
                f"{where}: call {call.index} executable {call.executable} and "
                f"not_executable_reason {call.not_executable_reason!r}"
            )
    for verdict in (result, *result.choices):
        if verdict.executable == (verdict.not_executable_reason is not None):
            raise Failure(
                f"{where}: executable {verdict.executable} and "
                f"not_executable_reason {verdict.not_executable_reason!r}"
            )
    if serialize:
        json.dumps(result_dict(result), ensure_ascii=True)


def _feed(case: Case) -> tuple[sw.Stream, list[sw.Event]]:
    stream = sw.stream(case.protocol, **case.options)
    events: list[sw.Event] = []
    items: list[Any] = _messages(case) if case.wire.kind == "messages" else _chunks(case)
    feed: Callable[[Any], list[sw.Event]] = (
        stream.feed_message if case.wire.kind == "messages" else stream.feed
    )
    for step, item in enumerate(items):
        if case.cancel_at == step:
            break
        events += feed(item)
        if step in case.reads:
            stream.result  # noqa: B018 - reading must never raise
    events += stream.cancel() if case.cancel_at is not None else stream.close()
    return stream, events


def run_case(case: Case) -> None:
    """Runs one case; raises ``Failure`` (with the case) if an invariant broke."""
    try:
        stream, events = _feed(case)
        result = stream.result
        _check_result(result, "result")
        for r in getattr(stream, "results", ()):
            _check_result(r, "a response's result", serialize=False)
        for event in events:
            if not isinstance(event, sw.Event):
                raise Failure(f"not an event: {event!r:.100}")
            json.dumps(event_dict(event), ensure_ascii=True)
        if stream.result != result:
            raise Failure("the result changed when read again")
        if case.target is not None:
            _translate(case)
    except Failure as exc:
        raise Failure(f"{case.describe()}: {exc}") from exc
    except BaseException as exc:
        detail = "".join(traceback.format_exception(exc)[-6:])
        raise Failure(f"{case.describe()}: raised {type(exc).__name__}: {exc}\n{detail}") from exc


def _translate(case: Case) -> None:
    assert case.target is not None
    out = b"".join(
        sw.translate(case.protocol, case.target, _chunks(case), source_options=case.options)
    )
    reader = sw.stream(case.target)
    reader.feed(out)
    reader.close()
    _check_result(reader.result, f"translated into {case.target}", serialize=False)


def _root_name(unit: Unit, root: Any) -> str:
    kind = root.get("type") if isinstance(root, dict) else None
    if isinstance(kind, str) and len(kind) < 60:
        return kind
    if unit.event is not None:
        return unit.event
    name = unit.headers.get(":event-type") or unit.headers.get(":message-type")
    return str(name) if name is not None else ""


def _paths(root: Any) -> Iterator[tuple[str, tuple[Any, ...]]]:
    """(normalized path, exact path) of every node of a JSON tree (lists as ``[]``)."""
    stack: list[tuple[Any, str, tuple[Any, ...]]] = [(root, "", ())]
    while stack:
        node, name, exact = stack.pop()
        if not isinstance(node, dict | list):
            continue
        items = node.items() if isinstance(node, dict) else enumerate(node)
        for key, item in items:
            step = f".{key}" if isinstance(key, str) else "[]"
            stack.append((item, name + step, (*exact, key)))
            yield name + step, (*exact, key)


def field_cases() -> Iterator[Case]:
    """The systematic pass: every distinct field of every protocol's fixtures,
    confused with each ``SYSTEMATIC`` value and deleted, one case each."""
    seen: set[tuple[str, str, str]] = set()
    number = 0
    # Each field from the smallest fixture that has it: the cheapest replay.
    for fixture in sorted(_fixtures_once(), key=lambda f: (len(f.raw), f.name)):
        raw = fixture.raw if not fixture.messages else "\n".join(fixture.message_lines()).encode()
        wire = decode_wire(fixture.protocol, raw)
        for at, unit in enumerate(wire.units):
            for attr in ("payload", "inner"):
                root = getattr(unit, attr)
                if root is NOT_JSON:
                    continue
                for name, exact in _paths(root):
                    key = (fixture.protocol, _root_name(unit, root), f"{attr}{name}")
                    if key in seen:
                        continue
                    seen.add(key)
                    for value in (*SYSTEMATIC, _DELETE):
                        yield _field_case(fixture, wire, at, attr, exact, value, number)
                        number += 1


def _field_case(
    fixture: Fixture, wire: Wire, at: int, attr: str, path: tuple[Any, ...], value: Any, n: int
) -> Case:
    units = list(wire.units)
    units[at] = _copy_unit(units[at])
    changed = Wire(wire.protocol, wire.kind, units, wire.body)
    node = getattr(units[at], attr)
    for key in path[:-1]:
        node = node[key]
    shown = "deleted" if value is _DELETE else f"{type(value).__name__} {value!r:.20}"
    if value is _DELETE:
        del node[path[-1]]
    else:
        node[path[-1]] = _copy(value)
    mutation = f"unit {at} {attr}{list(path)}: {shown}"
    options = dict(fixture.manifest.get("options", {}))
    case = Case(-1, n, fixture.name, fixture.protocol, options, changed, [mutation])
    if changed.kind == "messages":
        case.forms = ["str"] * len(changed.units)
    return case


def _fixtures_once() -> list[Fixture]:
    global _FIXTURES
    if _FIXTURES is None:
        _FIXTURES = _fixtures()
    return _FIXTURES


def systematic() -> tuple[int, list[str]]:
    """Runs the whole systematic pass; returns (cases run, failures)."""
    failures: list[str] = []
    count = 0
    for case in field_cases():
        count += 1
        try:
            run_case(case)
        except Failure as exc:
            failures.append(str(exc))
    return count, failures


def cases(seed: int, start: int = 0) -> Iterator[Case]:
    """Case ``start``, ``start + 1``, ... of ``seed``."""
    number = start
    while True:
        yield make_case(seed, number)
        number += 1


def fuzz(seconds: float, seed: int, *, stop_at_first: bool = True) -> tuple[int, list[str]]:
    """Runs cases of ``seed`` for ``seconds``; returns (cases run, failures)."""
    deadline = time.monotonic() + seconds
    failures: list[str] = []
    count = 0
    for case in cases(seed):
        if time.monotonic() >= deadline:
            break
        count += 1
        try:
            run_case(case)
        except Failure as exc:
            failures.append(str(exc))
            if stop_at_first:
                break
    return count, failures


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seconds", type=float, default=60.0, help="the whole run's budget")
    parser.add_argument("--seed", type=int, default=None, help="the random pass's seed")
    parser.add_argument("--case", type=int, default=None, help="replay this one random case")
    parser.add_argument("--random-only", action="store_true", help="skip the systematic pass")
    parser.add_argument("--keep-going", action="store_true")
    args = parser.parse_args(argv)
    seed = args.seed if args.seed is not None else random.SystemRandom().randrange(1 << 31)
    if args.case is not None:
        case = make_case(seed, args.case)
        print(case.describe())
        run_case(case)
        print("ok")
        return 0
    start = time.monotonic()
    failures: list[str] = []
    if not args.random_only:
        count, failures = systematic()
        print(f"systematic: {count} cases, {len(failures)} failures")
    remaining = max(0.0, args.seconds - (time.monotonic() - start))
    count, found = fuzz(remaining, seed, stop_at_first=not args.keep_going)
    failures += found
    for failure in failures:
        print(failure, file=sys.stderr)
    print(f"random: seed {seed}, {count} cases in {remaining:.0f} s, {len(found)} failures")
    return 1 if failures else 0


if __name__ == "__main__":
    raise SystemExit(main())
