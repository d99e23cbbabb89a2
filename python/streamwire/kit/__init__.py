"""The acceptance kit: test a gateway or upstream with the cases, report its capability matrix.

Layer [5] of docs/design.md: it builds on the layers below as a user would
(``sw.stream``, ``sw.encoder``, ``sw.tool_result``, ``sw.SseDecoder``,
``sw.encode_eventstream``, ``streamwire.metrics.Timing``), shares the HTTP
edge's wire facts (media types, error bodies, credentials) instead of copying
them, and brings no dependency of its own (its HTTP server and client are the
standard library's asyncio streams; ``--config`` reads TOML with ``tomli``
on Python 3.10, ``tomllib`` after). docs/kit.md is the operator's guide; the
names below are stable.

    async with MockUpstream() as mock:               # the mock upstream
        plan = CheckPlan(routes=[Route("http://127.0.0.1:4000")], mock_url=mock.url)
        cells = await run_check(plan)                # every (case, client, delivery)
    report = build_report(cells)
    report.matrix, report.verdicts, report.exit_status
    load = await run_load(LoadPlan(plan, concurrency=200))   # the same cells under load

Command line: ``streamwire mock-upstream``, ``streamwire check`` and
``streamwire compare`` (``kit/cli.py``); in a pytest suite, the plugin
``streamwire.kit.pytest_plugin`` (``pytest --sw-gateway URL ...``).
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .fixtures import check_directory, check_fixture
    from .judge.cell import LAYERS, Cell
    from .judge.verdicts import VERDICT_NAMES
    from .report.compare import Comparison
    from .report.compare import compare as compare_reports
    from .report.document import Report, build_report
    from .report.paths import compare_paths
    from .run.check import CheckPlan, Route, run_check
    from .run.load import LoadPlan, LoadReport, run_load
    from .upstream.mock import MockUpstream
    from .vocab.cases import CASE_NAMES, CASES, Case
    from .vocab.delivery import DELIVERIES
    from .vocab.names import CLIENTS, SDKS, UPSTREAM_PROTOCOLS

#: Each public name -> the module (and name there) that defines it: imported on
#: first use, so that the pytest plugin's entry point costs a pytest session
#: nothing until a test asks for the kit.
_WHERE = {
    "CASES": ("vocab.cases", "CASES"),
    "CASE_NAMES": ("vocab.cases", "CASE_NAMES"),
    "Case": ("vocab.cases", "Case"),
    "LAYERS": ("judge.cell", "LAYERS"),
    "Cell": ("judge.cell", "Cell"),
    "CheckPlan": ("run.check", "CheckPlan"),
    "Route": ("run.check", "Route"),
    "run_check": ("run.check", "run_check"),
    "Comparison": ("report.compare", "Comparison"),
    "compare_reports": ("report.compare", "compare"),
    "DELIVERIES": ("vocab.delivery", "DELIVERIES"),
    "check_directory": ("fixtures", "check_directory"),
    "check_fixture": ("fixtures", "check_fixture"),
    "LoadPlan": ("run.load", "LoadPlan"),
    "LoadReport": ("run.load", "LoadReport"),
    "run_load": ("run.load", "run_load"),
    "MockUpstream": ("upstream.mock", "MockUpstream"),
    "CLIENTS": ("vocab.names", "CLIENTS"),
    "SDKS": ("vocab.names", "SDKS"),
    "UPSTREAM_PROTOCOLS": ("vocab.names", "UPSTREAM_PROTOCOLS"),
    "compare_paths": ("report.paths", "compare_paths"),
    "Report": ("report.document", "Report"),
    "build_report": ("report.document", "build_report"),
    "VERDICT_NAMES": ("judge.verdicts", "VERDICT_NAMES"),
}


def __getattr__(name: str) -> Any:
    where = _WHERE.get(name)
    if where is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f".{where[0]}", __name__), where[1])
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})


__all__ = [
    "CASES",
    "CASE_NAMES",
    "CLIENTS",
    "DELIVERIES",
    "LAYERS",
    "SDKS",
    "UPSTREAM_PROTOCOLS",
    "VERDICT_NAMES",
    "Case",
    "Cell",
    "CheckPlan",
    "Comparison",
    "LoadPlan",
    "LoadReport",
    "MockUpstream",
    "Report",
    "Route",
    "build_report",
    "check_directory",
    "check_fixture",
    "compare_paths",
    "compare_reports",
    "run_check",
    "run_load",
]
