"""The caller's tool definitions, in any provider's request format, and argument checks.

A ``ToolSet`` reads the ``tools`` the caller sent in the request, in that
request's own format, and checks each completed call against them: the name
must be a declared tool, and the arguments must satisfy its JSON Schema.
Formats accepted (provider references checked 2026-11-29):

* OpenAI Chat Completions: ``{"type": "function", "function": {"name", "parameters"}}``,
  and the legacy ``functions`` entries ``{"name", "parameters"}``;
* OpenAI Responses: ``{"type": "function", "name", "parameters"}``
  (``{"type": "custom", "name"}`` tools take free text: name checked only);
* Anthropic Messages: ``{"name", "input_schema"}``;
* Gemini: ``{"functionDeclarations": [{"name", "parameters" | "parametersJsonSchema"}]}``
  (or snake case); ``parameters`` is Gemini's OpenAPI-3.0 subset (upper-case
  ``type`` values, ``nullable``), translated to JSON Schema here;
* Bedrock Converse: ``{"toolSpec": {"name", "inputSchema": {"json": ...}}}``,
  or the whole ``toolConfig`` mapping ``{"tools": [...]}``.

Tools without a name (built-in tools such as ``{"type": "web_search"}``) have
no schema to check: their ``type`` is recorded, so that a call of a built-in
tool the caller runs (OpenAI Responses' ``{"type": "shell"}``, ...) is checked
to have been declared (``check_builtin``).

Schema validation uses the ``jsonschema`` package, an optional dependency
(``pip install 'streamwire[schema]'``) imported only when a ``ToolSet`` with
schemas is built, so that streamwire itself keeps no runtime dependencies.
What a plain install does (``validation="auto"``, the default): it checks
names, which needs nothing, and leaves the schemas unchecked; it says so
where it cannot be missed: each stream built with such a ``ToolSet`` carries
a ``tool_schemas_not_checked`` warning on its result, and the ``streamwire``
logger warns once per process. ``validation="schema"`` makes the schemas
required (``UsageError`` without ``jsonschema``); ``validation="names"``
checks names only, deliberately and without a warning.
Why ``jsonschema``: it is the reference implementation of the JSON Schema
specification in Python, maintained by a specification author, passes the
official test suite, and supports every draft up to 2020-12 (the dialect
OpenAI's and Anthropic's tool schemas are written in), choosing the draft a
schema declares with ``$schema`` and defaulting to Draft 2020-12.
"""

from __future__ import annotations

import importlib
import logging
from collections.abc import Iterable, Iterator, Mapping
from typing import Any, Literal, Protocol

from .errors import UsageError

__all__ = ["VALIDATIONS", "ToolSet", "ToolSpec", "Validation"]

#: ``auto``: schemas when ``jsonschema`` is installed, else names only (with a
#: warning); ``schema``: schemas, ``jsonschema`` required; ``names``: names only.
Validation = Literal["auto", "schema", "names"]
VALIDATIONS: tuple[Validation, ...] = ("auto", "schema", "names")

_log = logging.getLogger("streamwire")
#: The once-per-process note of a plain install (``validation="auto"``).
_warned_unchecked = False
#: Why a plain install leaves schemas unchecked, and what to do about it.
UNCHECKED = (
    "tool arguments are not validated against their JSON Schemas: the optional "
    "'jsonschema' package is not installed (pip install 'streamwire[schema]'); "
    "names are checked. Pass validation='names' to check names only without this warning."
)


class _Validator(Protocol):
    def iter_errors(self, instance: Any) -> Iterator[Any]: ...


class ToolSpec:
    """One declared tool: its name and (translated) JSON Schema, if any."""

    __slots__ = ("kind", "name", "schema")

    def __init__(self, name: str, schema: Mapping[str, Any] | None, kind: str) -> None:
        #: The tool's name, as the model must call it.
        self.name = name
        #: The arguments' JSON Schema (already translated to JSON Schema), or None.
        self.schema = schema
        #: ``function`` (JSON arguments) or ``custom`` (free-text input).
        self.kind = kind

    def __repr__(self) -> str:
        schema = "yes" if self.schema else "no"
        return f"ToolSpec(name={self.name!r}, kind={self.kind!r}, schema={schema})"


class ToolSet:
    """The tools a request declared; checks calls against them.

    Build it once and pass it to many streams (``sw.stream(..., tools=toolset)``):
    schemas are checked and compiled here, not per stream. ``validation`` is
    ``"auto"`` (the default: names, and arguments against their schemas when
    ``jsonschema`` is installed), ``"schema"`` (names and arguments; needs
    ``jsonschema``) or ``"names"`` (only that the called tool was declared).
    ``schemas_checked`` says which happened. Invalid definitions (no name, a
    duplicate name, an invalid schema) raise ``UsageError``.
    """

    def __init__(
        self,
        tools: Iterable[Mapping[str, Any]] | Mapping[str, Any],
        *,
        validation: Validation = "schema",
    ) -> None:
        if validation not in VALIDATIONS:
            raise UsageError(f"validation must be 'auto', 'schema' or 'names', not {validation!r}")
        self.validation: Validation = validation
        if not isinstance(tools, Mapping):
            tools = list(tools)  # read twice below
        self._specs: dict[str, ToolSpec] = {}
        #: The types of the declared tools without a name (built-in tools).
        self.builtins: frozenset[str] = frozenset(_builtin_types(tools))
        for spec in _read_tools(tools):
            if spec.name in self._specs:
                raise UsageError(f"tool {spec.name!r} is declared twice")
            self._specs[spec.name] = spec
        self._validators: dict[str, _Validator] = {}
        self._best_match: Any = None
        #: False when declared schemas go unchecked (``validation="auto"``
        #: without ``jsonschema``, or ``"names"``); True otherwise.
        self.schemas_checked = True
        if validation != "names":
            self._compile(required=validation == "schema")
        elif any(s.schema is not None for s in self._specs.values()):
            self.schemas_checked = False

    @property
    def unchecked_note(self) -> str | None:
        """The note a result carries when ``validation="auto"`` left schemas
        unchecked (a plain install), else None."""
        if self.schemas_checked or self.validation != "auto":
            return None
        return UNCHECKED

    def _compile(self, *, required: bool) -> None:
        global _warned_unchecked
        with_schema = [s for s in self._specs.values() if s.schema is not None]
        if not with_schema:
            return
        try:
            jsonschema = importlib.import_module("jsonschema")
        except ImportError as exc:
            if required:
                raise UsageError(
                    "validation='schema' needs the optional 'jsonschema' package "
                    "(pip install 'streamwire[schema]'); or pass validation='auto' "
                    "or validation='names' to check tool names only"
                ) from exc
            self.schemas_checked = False
            if not _warned_unchecked:
                _warned_unchecked = True
                _log.warning(UNCHECKED)
            return
        self._best_match = jsonschema.exceptions.best_match
        for spec in with_schema:
            cls = jsonschema.validators.validator_for(
                spec.schema, default=jsonschema.Draft202012Validator
            )
            try:
                cls.check_schema(spec.schema)
            except jsonschema.exceptions.SchemaError as exc:
                raise UsageError(f"tool {spec.name!r}: invalid JSON Schema: {exc.message}") from exc
            self._validators[spec.name] = cls(spec.schema)

    @property
    def names(self) -> frozenset[str]:
        """The declared tool names."""
        return frozenset(self._specs)

    def __contains__(self, name: object) -> bool:
        return name in self._specs

    def __len__(self) -> int:
        return len(self._specs)

    def spec(self, name: str) -> ToolSpec | None:
        """The declared tool of this name, or None."""
        return self._specs.get(name)

    def check_builtin(self, tool_types: tuple[str, ...]) -> str | None:
        """Why a call of a built-in tool, declared by a tool of one of
        ``tool_types``, is invalid (none was declared), or None."""
        if not self.builtins.isdisjoint(tool_types):
            return None
        return (
            f"the model called the built-in tool {tool_types[0]!r}, "
            "which the request did not declare"
        )

    def check(self, name: str, arguments: Any) -> str | None:
        """Why a call to ``name`` with these parsed arguments is invalid, or None."""
        if name not in self._specs:
            return f"the model called {name!r}, which the request did not declare"
        validator = self._validators.get(name)
        if validator is None:
            return None
        error = self._best_match(validator.iter_errors(arguments))
        if error is None:
            return None
        where = "/".join(str(p) for p in error.absolute_path) or "(root)"
        return f"arguments do not match the schema of {name!r} at {where}: {error.message}"


#: Keys of a tool definition that name a tool (every format ``_read_tool`` reads).
_NAMED_KEYS = frozenset(
    {"name", "function", "toolSpec", "functionDeclarations", "function_declarations"}
)


def _builtin_types(tools: Iterable[Mapping[str, Any]] | Mapping[str, Any]) -> Iterator[str]:
    """The ``type`` of each declared tool that has no name (a provider's built-in tool)."""
    if isinstance(tools, Mapping):
        if "tools" in tools:
            yield from _builtin_types(tools["tools"])
            return
        tools = [tools]
    for tool in tools:
        if isinstance(tool, Mapping) and not _NAMED_KEYS & tool.keys():
            kind = tool.get("type")
            if isinstance(kind, str) and kind:
                yield kind


def _read_tools(tools: Iterable[Mapping[str, Any]] | Mapping[str, Any]) -> Iterator[ToolSpec]:
    if isinstance(tools, Mapping):
        if "tools" in tools:  # a Bedrock toolConfig
            yield from _read_tools(tools["tools"])
            return
        tools = [tools]
    for tool in tools:
        if not isinstance(tool, Mapping):
            raise UsageError(f"a tool definition must be a mapping, not {type(tool).__name__}")
        yield from _read_tool(tool)


def _read_tool(tool: Mapping[str, Any]) -> Iterator[ToolSpec]:
    function = tool.get("function")
    if isinstance(function, Mapping):  # chat
        yield ToolSpec(_name(function), function.get("parameters"), "function")
        return
    spec = tool.get("toolSpec")
    if isinstance(spec, Mapping):  # bedrock
        input_schema = spec.get("inputSchema")
        schema = input_schema.get("json") if isinstance(input_schema, Mapping) else None
        yield ToolSpec(_name(spec), schema, "function")
        return
    declarations = tool.get("functionDeclarations", tool.get("function_declarations"))
    if declarations is not None:  # gemini
        for decl in declarations:
            json_schema = decl.get("parametersJsonSchema", decl.get("parameters_json_schema"))
            if json_schema is not None:
                yield ToolSpec(_name(decl), json_schema, "function")
            else:
                openapi = decl.get("parameters")
                schema = None if openapi is None else _openapi_to_json_schema(openapi)
                yield ToolSpec(_name(decl), schema, "function")
        return
    if "name" not in tool:
        return  # a built-in tool run by the provider (web search, code execution, ...)
    kind = "custom" if tool.get("type") == "custom" else "function"
    schema = tool.get("parameters", tool.get("input_schema", tool.get("inputSchema")))
    yield ToolSpec(_name(tool), None if kind == "custom" else schema, kind)


def _name(mapping: Mapping[str, Any]) -> str:
    name = mapping.get("name")
    if not isinstance(name, str) or not name:
        raise UsageError(f"a tool definition has no name: {dict(mapping)!r:.200}")
    return name


_OPENAPI_INT_KEYWORDS = (
    "minItems",
    "maxItems",
    "minLength",
    "maxLength",
    "minProperties",
    "maxProperties",
)


def _openapi_to_json_schema(schema: Any) -> Any:
    """Translates Gemini's OpenAPI-3.0 schema subset into JSON Schema.

    Gemini's ``Schema`` (ai.google.dev/api/caching#Schema, checked 2026-11-29)
    spells types in upper case (``OBJECT``), marks optional nulls with
    ``nullable`` and encodes int64 limits as strings; everything else it
    allows means the same in JSON Schema.
    """
    if not isinstance(schema, Mapping):
        return schema
    out: dict[str, Any] = {}
    for key, value in schema.items():
        if key == "type" and isinstance(value, str):
            out["type"] = value.lower()
        elif key == "properties" and isinstance(value, Mapping):
            out["properties"] = {k: _openapi_to_json_schema(v) for k, v in value.items()}
        elif key == "items":
            out["items"] = _openapi_to_json_schema(value)
        elif key in ("anyOf", "any_of") and isinstance(value, list):
            out["anyOf"] = [_openapi_to_json_schema(v) for v in value]
        elif key in _OPENAPI_INT_KEYWORDS and isinstance(value, str) and value.isdigit():
            out[key] = int(value)
        elif key in ("nullable", "propertyOrdering", "property_ordering"):
            continue
        else:
            out[key] = value
    if schema.get("nullable") is True and isinstance(out.get("type"), str):
        out["type"] = [out["type"], "null"]
    return out
