"""The worked examples' process helpers (``examples/kit_processes.py``), for the tests.

``free_port()``, ``wait_listening(port, proc, name)`` (a server started as a
process of its own listens, or its exit fails the test) and ``make_ca(folder)``,
loaded from the examples so that each is written once.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path

__all__ = ["free_port", "make_ca", "wait_listening"]

_spec = importlib.util.spec_from_file_location(
    "streamwire_example_kit_processes_tests",
    Path(__file__).resolve().parents[2] / "examples" / "kit_processes.py",
)
assert _spec is not None and _spec.loader is not None
_module = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(_module)
free_port = _module.free_port
make_ca = _module.make_ca
wait_listening = _module.wait_listening
