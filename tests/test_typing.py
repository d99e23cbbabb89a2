"""The typed API stays true to the code: options per protocol, literal names, one-way imports.

``mypy --strict`` over ``tests/typing_probe.py`` (in ``.ci/run``) shows what
the types catch; these tests keep the types and the code from drifting apart:

* each protocol's ``TypedDict`` in ``streamwire.options`` lists exactly the
  options its adapter accepts, and the HTTP ones add exactly the edge's;
* the ``Literal`` protocol and target names are exactly the registered ones;
* the vocabulary's modules import one way: ``kinds`` <- ``result`` <-
  ``events`` <- ``toolcalls`` (docs/design.md "Layers"), checked on their
  import statements, ``TYPE_CHECKING`` ones included.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

import streamwire as sw
from streamwire import options
from streamwire.io._driver import EDGE_OPTIONS
from streamwire.kinds import HTTP_PROTOCOLS, PROTOCOLS, TARGETS
from streamwire.protocols import adapter_options

PACKAGE = Path(sw.__file__).resolve().parent
OPTIONS = {
    "openai-chat": options.OpenAIChatOptions,
    "openai-responses": options.OpenAIResponsesOptions,
    "anthropic": options.AnthropicOptions,
    "gemini": options.GeminiOptions,
    "gemini-json": options.GeminiJsonOptions,
    "bedrock-converse": options.BedrockConverseOptions,
    "bedrock-invoke": options.BedrockInvokeOptions,
    "openai-responses-ws": options.OpenAIResponsesWsOptions,
    "openai-realtime": options.OpenAIRealtimeOptions,
    "gemini-live": options.GeminiLiveOptions,
}
HTTP_OPTIONS = {
    "openai-chat": options.OpenAIChatHttpOptions,
    "openai-responses": options.OpenAIResponsesHttpOptions,
    "anthropic": options.AnthropicHttpOptions,
    "gemini": options.GeminiHttpOptions,
    "gemini-json": options.GeminiJsonHttpOptions,
    "bedrock-converse": options.BedrockConverseHttpOptions,
    "bedrock-invoke": options.BedrockInvokeHttpOptions,
}


def _keys(typed_dict: type) -> set[str]:
    return set(typed_dict.__required_keys__) | set(typed_dict.__optional_keys__)  # type: ignore[attr-defined]


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_each_protocols_typed_options_are_its_adapters(protocol: str) -> None:
    assert _keys(OPTIONS[protocol]) == set(adapter_options(protocol)), (
        f"streamwire/options.py is out of step with the {protocol} adapter"
    )


@pytest.mark.parametrize("protocol", HTTP_PROTOCOLS)
def test_each_http_protocols_typed_options_add_the_edges(protocol: str) -> None:
    assert _keys(HTTP_OPTIONS[protocol]) == set(adapter_options(protocol)) | EDGE_OPTIONS
    assert _keys(options.HttpOptions) == _keys(options.StreamOptions) | EDGE_OPTIONS


def test_the_literal_names_are_the_registered_ones() -> None:
    assert set(PROTOCOLS) == set(sw.known_protocols())
    assert set(TARGETS) == set(sw.known_encoders())
    from streamwire.io._wire import http_protocols

    assert set(HTTP_PROTOCOLS) == set(http_protocols())
    assert all(sw.is_protocol(p) for p in PROTOCOLS) and not sw.is_protocol("openai-chta")


def _package_imports(module: str) -> set[str]:
    """The package modules ``module`` imports (top level, relative or absolute)."""
    tree = ast.parse((PACKAGE / f"{module}.py").read_text(encoding="utf-8"))
    out: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            if node.level == 1 and node.module is not None:
                out.add(node.module.partition(".")[0])
            elif node.level == 1:
                out.update(alias.name for alias in node.names)
            elif node.module and node.module.startswith("streamwire."):
                out.add(node.module.split(".")[1])
    return out


VOCABULARY = ["kinds", "result", "events", "toolcalls"]


def test_the_vocabulary_imports_run_one_way() -> None:
    for i, module in enumerate(VOCABULARY):
        above = set(VOCABULARY[i + 1 :])
        imported = _package_imports(module)
        assert not imported & above, f"{module} imports {imported & above}, a layer above it"
    assert _package_imports("kinds") == set()
    assert _package_imports("result") == {"kinds"}


def test_event_is_the_union_of_the_event_classes() -> None:
    # (by name: a slotted dataclass leaves its first, unslotted class behind)
    names = {cls.__name__ for cls in sw.BaseEvent.__subclasses__()}
    assert {cls.__name__ for cls in sw.EVENT_TYPES} == names
    assert all(issubclass(cls, sw.BaseEvent) for cls in sw.EVENT_TYPES)
    text = sw.TextDelta(text="hi")
    assert isinstance(text, sw.Event)  # the union works with isinstance
    assert not isinstance("hi", sw.Event)
