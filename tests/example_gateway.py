"""Imports the example gateway (``examples/gateway``) for the tests, without touching ``sys.path``.

The example is not part of the package; it is loaded from its folder as the
package ``streamwire_example_gateway`` (its modules import each other
relatively), once per test session.
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

__all__ = ["GATEWAY_DIR", "load_gateway"]

GATEWAY_DIR = Path(__file__).resolve().parent.parent / "examples" / "gateway"
_NAME = "streamwire_example_gateway"


def load_gateway() -> ModuleType:
    """The example gateway package (``create_app``, ``GatewayConfig``, ``mapping``, ...)."""
    module = sys.modules.get(_NAME)
    if module is not None:
        return module
    spec = importlib.util.spec_from_file_location(
        _NAME, GATEWAY_DIR / "__init__.py", submodule_search_locations=[str(GATEWAY_DIR)]
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[_NAME] = module
    try:
        spec.loader.exec_module(module)
    except BaseException:
        del sys.modules[_NAME]
        raise
    return module
