"""Results and events as values: ``as_dict()``, pickle, copies, ``asdict``, orjson, pydantic.

Every fixture's result (and the results of a cancel, a cut, an HTTP error)
and every event it produced goes through each way a caller serializes or
copies a value, and comes back equal; ``as_dict()`` is plain JSON, equal to
what orjson and pydantic make of the same object, and it validates against
the published schema ``docs/result.schema.json``, which must be what
``docs/result_schema.py`` writes today.
"""

from __future__ import annotations

import copy
import dataclasses
import importlib.util
import json
import pickle
from pathlib import Path
from typing import Any

import jsonschema
import orjson
import pytest
from pydantic import TypeAdapter

import streamwire as sw
from fixture_replay import manifests
from streamwire.io._driver import Driver

DOCS = Path(__file__).resolve().parent.parent / "docs"


def _schema_script() -> Any:
    spec = importlib.util.spec_from_file_location("result_schema", DOCS / "result_schema.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _cases() -> list[tuple[str, sw.StreamResult, list[sw.Event]]]:
    out = []
    for fixture in manifests():
        s = sw.stream(fixture.protocol, **fixture.manifest.get("options", {}))
        if fixture.messages:
            events = [e for line in fixture.message_lines() for e in s.feed_message(line)]
        else:
            events = s.feed(fixture.raw)
        events += s.close()
        out.append((fixture.name, s.result, events))
    s = sw.stream("openai-chat", clock=lambda: 0.0)
    events = s.feed(b'data: {"choices":[{"index":0,"delta":{"content":"hi"}}]}\n\n') + s.cancel()
    out.append(("cancelled", s.result, events))
    s = sw.stream("anthropic")
    out.append(("in-progress", s.result, []))
    driver = Driver("anthropic", {}, clock=lambda: 1.0)
    driver.on_headers(529, (("content-type", "application/json"),))
    body = b'{"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}'
    out.append(("http-error", driver.result, driver.on_error_body(body)))
    return out


CASES = _cases()
IDS = [c[0] for c in CASES]
SCHEMA = json.loads((DOCS / "result.schema.json").read_text(encoding="utf-8"))
RESULT_TYPE = TypeAdapter(sw.StreamResult)
EVENT_TYPES = {cls: TypeAdapter(cls) for cls in sw.EVENT_TYPES}
VALIDATOR = jsonschema.Draft202012Validator(SCHEMA)


def test_the_published_schema_is_what_the_script_writes() -> None:
    assert _schema_script().render() == (DOCS / "result.schema.json").read_text(encoding="utf-8")
    jsonschema.Draft202012Validator.check_schema(SCHEMA)


@pytest.mark.parametrize(("name", "result", "events"), CASES, ids=IDS)
def test_results_serialize_every_way(
    name: str, result: sw.StreamResult, events: list[sw.Event]
) -> None:
    plain = result.as_dict()
    assert json.loads(json.dumps(plain, allow_nan=False)) == plain  # plain JSON
    VALIDATOR.validate(plain)
    assert pickle.loads(pickle.dumps(result)) == result
    assert copy.deepcopy(result) == result and copy.copy(result) == result
    assert json.loads(json.dumps(dataclasses.asdict(result))) == plain
    assert json.loads(orjson.dumps(result)) == plain
    assert RESULT_TYPE.dump_python(result, mode="json") == plain
    assert RESULT_TYPE.validate_python(plain) == result


@pytest.mark.parametrize(("name", "result", "events"), CASES, ids=IDS)
def test_events_serialize_every_way(
    name: str, result: sw.StreamResult, events: list[sw.Event]
) -> None:
    # One event of each kind: the kinds differ, not the events of one kind.
    for event in {type(e): e for e in events}.values():
        plain = event.as_dict()
        assert plain["event"] == type(event).__name__
        assert json.loads(json.dumps(plain, allow_nan=False)) == plain
        assert pickle.loads(pickle.dumps(event)) == event
        assert copy.deepcopy(event) == event
        fields = {k: v for k, v in plain.items() if k != "event"}
        assert json.loads(orjson.dumps(event)) == fields
        assert EVENT_TYPES[type(event)].dump_python(event, mode="json") == fields


def test_a_results_mappings_are_read_only_dicts() -> None:
    result = next(r for _, r, _ in CASES if r.usage is not None and r.usage.raw)
    assert isinstance(result.usage, sw.Usage) and isinstance(result.usage.raw, dict)
    for mapping in (result.usage.raw, result.unknown_events, result.provider_metrics):
        assert isinstance(mapping, sw.ReadOnlyDict)
        with pytest.raises(TypeError, match="read-only"):
            mapping["x"] = 1  # type: ignore[index]
        with pytest.raises(TypeError, match="read-only"):
            mapping.update(x=1)
    copied = dict(result.usage.raw)
    copied["x"] = 1  # a copy is an ordinary dict
    assert "x" not in result.usage.raw
