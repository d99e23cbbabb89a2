"""streamwire's pytest plugin as registered: options and a fixture, nothing imported until asked.

The entry point (``pytest11``: ``streamwire``) names this module, outside
the ``streamwire`` package: importing anything inside it imports the
library first, which every pytest session of a project that installs
streamwire would pay. This module adds the ``--sw-*`` options and the
``streamwire_check`` fixture, and registers the kit's plugin
(``streamwire.kit.pytest_plugin``, docs/kit/comparisons.md) when an option asks for it.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from typing import Any

import pytest

__all__ = ["add_options", "streamwire_check"]

#: The options that turn the kit's plugin on.
_ASKING = ("sw_gateway", "sw_fixtures", "sw_against")


def pytest_addoption(parser: pytest.Parser) -> None:
    add_options(parser)


def add_options(parser: pytest.Parser) -> None:
    """Adds the ``--sw-*`` options, once."""
    group = parser.getgroup("streamwire", "streamwire acceptance kit (docs/kit/comparisons.md)")
    if any("--sw-gateway" in option.names() for option in group.options):
        return
    group.addoption(
        "--sw-gateway",
        action="append",
        default=[],
        metavar="URL",
        help="a gateway's base URL (repeatable: one route each): each cell a test item",
    )
    group.addoption(
        "--sw-label",
        action="append",
        default=[],
        metavar="NAME",
        help="a route's name (one per --sw-gateway, in order)",
    )
    group.addoption(
        "--sw-client",
        default="",
        metavar="PROTOCOLS",
        help="client protocols, comma-separated, or all",
    )
    group.addoption("--sw-cases", default="", metavar="NAMES", help="cases (default all)")
    group.addoption(
        "--sw-delivery", default="whole", metavar="MODES", help="deliveries (default whole)"
    )
    group.addoption(
        "--sw-models",
        default="{model}",
        metavar="TEMPLATE",
        help="the model-name template (default {model})",
    )
    group.addoption("--sw-sdk", default="", metavar="SDKS", help="also the SDK cells of these")
    group.addoption("--sw-unary", action="store_true", help="also the unary cells")
    group.addoption("--sw-mock", default=None, metavar="URL", help="an existing mock upstream")
    group.addoption(
        "--sw-mock-port",
        type=int,
        default=0,
        metavar="N",
        help="the port of the mock the plugin starts (the gateway calls it)",
    )
    group.addoption(
        "--sw-against",
        default=None,
        metavar="BASELINE.json",
        help="gate on changes from this report instead of on the cells' layers",
    )
    group.addoption(
        "--sw-accepted",
        default=None,
        metavar="FILE",
        help="the reviewed accepted changes (streamwire compare)",
    )
    group.addoption("--sw-json", default=None, metavar="FILE", help="write the run's report")
    group.addoption(
        "--sw-fixtures",
        default=None,
        metavar="DIR",
        help="replay these recorded fixtures, each an item",
    )


def pytest_configure(config: pytest.Config) -> None:
    if any(getattr(config.option, name, None) for name in _ASKING):
        if not config.pluginmanager.has_plugin("streamwire.kit"):
            plugin = importlib.import_module("streamwire.kit.pytest_plugin")
            config.pluginmanager.register(plugin, "streamwire.kit")


@pytest.fixture
def streamwire_check() -> Callable[..., Any]:
    """A function that runs ``streamwire check`` in-process and returns its report:
    ``streamwire_check(url, clients=[...], cases=[...], deliveries=["whole"], **plan)``
    (the rest of ``CheckPlan``'s fields as keywords)."""
    plugin = importlib.import_module("streamwire.kit.pytest_plugin")
    runner: Callable[..., Any] = plugin.check_runner()
    return runner
