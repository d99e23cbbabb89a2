"""``streamwire check --config FILE``: the check's options in a TOML file, so a CI job stays short.

The file is TOML 1.0 (read by ``tomllib``, or its backport ``tomli`` on
Python 3.10); the table in ``pyproject.toml`` follows PEP 518's ``[tool.*]``
convention. A key is an option's long name without its dashes, ``_`` for ``-``
(``key_passthrough = true``, ``json = "report.json"``); ``base_url`` is the
positional BASE_URL, a list. A list given to an option that takes a
comma-separated value (``client``, ``cases``, ``models``) is joined with
commas; an option that repeats (``label``, ``path``) takes a list. A
string's ``${VAR}`` is the environment variable's value. Without BASE_URL
and without ``--config``, ``[tool.streamwire.check]`` of ``./pyproject.toml``
is read, if it has one. An option on the command line overrides the file.
A key that is no option, a value of the wrong kind, a variable not set, or
a file that is no TOML is a usage error (``ConfigError``: exit status 2).

To know which options the command line gave, the check's parser has no
defaults (``defer_defaults``): an option not given is absent from its
namespace, and ``settle`` fills it from the file, else from the defaults
of a parser built the same way.
"""

from __future__ import annotations

import argparse
import os
import re
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - the backport, same API (pyproject: python_version < "3.11")
    import tomli as tomllib

__all__ = ["ConfigError", "defer_defaults", "options", "settle"]

#: The table of ``pyproject.toml`` read when neither BASE_URL nor ``--config`` is given.
PYPROJECT_TABLE = ("tool", "streamwire", "check")
_VARIABLE = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)\}")


class ConfigError(ValueError):
    """A configuration that cannot be used: a usage error (exit status 2)."""


def _actions(parser: argparse.ArgumentParser) -> list[argparse.Action]:
    # argparse lists a parser's actions only in this attribute (stable since 3.2).
    return list(parser._actions)


def options(parser: argparse.ArgumentParser) -> dict[str, argparse.Action]:
    """Each option of ``parser`` by its key in a file: its first long name
    less the dashes, ``_`` for ``-`` (a positional: its dest). ``--help``
    and ``--config`` have none."""
    out: dict[str, argparse.Action] = {}
    for action in _actions(parser):
        if action.dest in (argparse.SUPPRESS, "help", "config"):
            continue
        longs = [o for o in action.option_strings if o.startswith("--")]
        if action.option_strings and not longs:
            continue
        key = longs[0][2:].replace("-", "_") if longs else action.dest
        out[key] = action
    return out


def defer_defaults(parser: argparse.ArgumentParser) -> None:
    """Takes every default off ``parser``'s options (a help text's
    ``%(default)s`` keeps the value it showed): its namespace then holds only
    what the command line gave, for ``settle`` to complete."""
    for action in options(parser).values():
        if action.help and "%(default)" in action.help:
            action.help = action.help.replace("%(default)s", str(action.default))
        action.default = argparse.SUPPRESS


def _expand(value: Any, key: str) -> Any:
    if isinstance(value, list):
        return [_expand(item, key) for item in value]
    if not isinstance(value, str):
        return value

    def variable(match: re.Match[str]) -> str:
        name = match.group(1)
        if name not in os.environ:
            raise ConfigError(f"{key}: ${{{name}}} is not set in the environment")
        return os.environ[name]

    return _VARIABLE.sub(variable, value)


def _one(action: argparse.Action, key: str, value: Any) -> Any:
    """One value, converted as the command line's text would be."""
    if isinstance(value, bool) or not isinstance(value, str | int | float):
        raise ConfigError(f"{key}: want a string or a number, not {value!r}")
    text = str(value)
    if action.choices is not None and text not in action.choices:
        raise ConfigError(f"{key}: {text!r} is not one of {', '.join(map(str, action.choices))}")
    if action.type is None:
        return text
    if not callable(action.type):
        raise ConfigError(f"{key}: cannot convert {text!r}")
    try:
        return action.type(text)
    except (argparse.ArgumentTypeError, TypeError, ValueError) as exc:
        raise ConfigError(f"{key}: {exc}") from None


def _value(action: argparse.Action, key: str, value: Any) -> Any:
    """``value`` of the file as ``action`` would have parsed it."""
    if action.nargs == 0:  # a switch: store_true, --x/--no-x
        if not isinstance(value, bool):
            raise ConfigError(f"{key}: want true or false, not {value!r}")
        return value if action.const is None or action.const is True else not value
    if action.nargs in ("*", "+") or isinstance(action, argparse._AppendAction):
        items = value if isinstance(value, list) else [value]
        return [_one(action, key, item) for item in items]
    if isinstance(value, list):  # a comma-separated option's names
        if not all(isinstance(item, str) for item in value):
            raise ConfigError(f"{key}: want a list of strings, not {value!r}")
        value = ",".join(value)
    return _one(action, key, value)


def _read(path: Path) -> dict[str, Any]:
    try:
        with path.open("rb") as f:
            data: dict[str, Any] = tomllib.load(f)
            return data
    except OSError as exc:
        raise ConfigError(f"cannot read {path}: {exc.strerror or exc}") from None
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{path} is no TOML: {exc}") from None


def _pyproject(path: Path) -> dict[str, Any]:
    """``[tool.streamwire.check]`` of ``path``, if it has one."""
    if not path.is_file():
        return {}
    table: Any = _read(path)
    for name in PYPROJECT_TABLE:
        table = table.get(name) if isinstance(table, dict) else None
    if table is not None and not isinstance(table, dict):
        raise ConfigError(f"{path}: [tool.streamwire.check] is no table")
    return table or {}


def _source(given: Mapping[str, Any], cwd: Path) -> tuple[str, dict[str, Any]]:
    """Where the file's values come from, and they: ``--config``, else the
    project's pyproject.toml when BASE_URL was not given, else none."""
    if given.get("config"):
        path = Path(given["config"])
        return str(path), _read(path)
    if "base_url" not in given:
        path = cwd / "pyproject.toml"
        return f"{path} [tool.streamwire.check]", _pyproject(path)
    return "", {}


def settle(
    args: argparse.Namespace, parser: argparse.ArgumentParser, cwd: Path | None = None
) -> argparse.Namespace:
    """``args`` (what the command line gave, ``defer_defaults``) completed by
    the file's values, then by ``parser``'s defaults. Raises ``ConfigError``."""
    given = vars(args)
    source, values = _source(given, cwd or Path.cwd())
    table = options(parser)
    out = parser.parse_args([])
    for key, value in values.items():
        action = table.get(key)
        if action is None:
            known = ", ".join(sorted(table))
            raise ConfigError(f"{source}: unknown option {key!r}; known: {known}")
        setattr(out, action.dest, _value(action, key, _expand(value, key)))
    for name, value in given.items():
        setattr(out, name, value)
    return out
