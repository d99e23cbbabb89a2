"""The acceptance kit: test a gateway or upstream with the cases, report its capability matrix.

Layer [5] of docs/design.md: it builds on the layers below as a user would
(``sw.stream``, ``sw.encoder``, ``sw.tool_result``, ``sw.SseDecoder``,
``sw.encode_eventstream``, ``streamwire.metrics.Timing``), shares the HTTP
edge's wire facts (media types, error bodies, credentials) instead of copying
them, and brings no dependency of its own (its HTTP server and client are the
standard library's asyncio streams). docs/kit.md is the operator's guide; the
names below are stable.

    async with MockUpstream() as mock:               # the mock upstream
        plan = CheckPlan(routes=[Route("http://127.0.0.1:4000")], mock_url=mock.url)
        cells = await run_check(plan)                # every (case, client, delivery)
    report = build_report(cells)
    report.matrix, report.verdicts, report.exit_status

Command line: ``streamwire mock-upstream`` and ``streamwire check``
(``kit/cli.py``).
"""

from .cases import CASE_NAMES, CASES, Case
from .cell import LAYERS, Cell
from .check import CheckPlan, Route, run_check
from .delivery import DELIVERIES
from .mock import MockUpstream
from .names import CLIENTS, UPSTREAM_PROTOCOLS
from .report import Report, build_report
from .verdicts import VERDICT_NAMES

__all__ = [
    "CASES",
    "CASE_NAMES",
    "CLIENTS",
    "DELIVERIES",
    "LAYERS",
    "UPSTREAM_PROTOCOLS",
    "VERDICT_NAMES",
    "Case",
    "Cell",
    "CheckPlan",
    "MockUpstream",
    "Report",
    "Route",
    "build_report",
    "run_check",
]
