"""The check under GitHub Actions (``GITHUB_ACTIONS=true``): annotations and the step summary.

GitHub reads workflow commands from a step's output ("Workflow commands
for GitHub Actions", checked 2026-12-01): ``::error title=T::MESSAGE``
and ``::warning title=T::MESSAGE`` become annotations on the run. Their
data is escaped as the runner expects: in the message ``%`` as ``%25``,
``\\r`` as ``%0D`` and ``\\n`` as ``%0A``; in a property's value, also
``:`` as ``%3A`` and ``,`` as ``%2C``. Every string a gateway or its
upstream chose (a verdict's reason) goes through the same escaping, so it
can neither end the command nor start another.

One ``::error`` per verdict that fails the run (every verdict but
``verdicts.ACCEPTABLE``), one per flaky cell, and one ``::warning`` per
acceptable (degraded) verdict. Where ``GITHUB_STEP_SUMMARY`` names a file,
the report's Markdown page (``Report.write_markdown``: the matrix and the
verdicts) is appended to it.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TextIO

from ..judge.verdicts import ACCEPTABLE
from .document import Report
from .reproduce import by_verdict

__all__ = ["command", "escape_data", "escape_property", "to_actions", "workflow_commands"]


def escape_data(text: str) -> str:
    """A workflow command's message, escaped."""
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def escape_property(text: str) -> str:
    """A workflow command's property value, escaped."""
    return escape_data(text).replace(":", "%3A").replace(",", "%2C")


def command(level: str, title: str, message: str) -> str:
    """``::level title=...::message``, escaped."""
    return f"::{level} title={escape_property(title)}::{escape_data(message)}"


def workflow_commands(report: Report) -> list[str]:
    """The run's annotations: each verdict (an error, or a warning when it is
    acceptable), then each flaky cell (an error)."""
    commands = by_verdict(report.cells)
    lines = []
    for v in report.verdicts:
        level = "warning" if v["name"] in ACCEPTABLE else "error"
        title = f"{v['name']}: {v['route']} <- {v['client']}"
        message = [
            f"{v['why']}",
            f"cases: {', '.join(v['cases'])}; layers: {', '.join(v['layers'])}; {v['cells']} cells",
            f"do: {v['advice']}",
        ]
        reproduce = commands.get((v["name"], v["route"], v["client"]))
        if reproduce:
            message.append(f"reproduce: {reproduce}")
        lines.append(command(level, title, "\n".join(message)))
    for cell, words in report.flaky():
        title = f"flaky: {cell.case} {cell.route} <- {cell.client} ({cell.delivery})"
        text = words + (f"\nreproduce: {cell.reproduce}" if cell.reproduce else "")
        lines.append(command("error", title, text))
    return lines


def to_actions(report: Report, out: TextIO, title: str, environ: Mapping[str, str]) -> None:
    """Writes the annotations to ``out`` and appends the Markdown page to the
    step summary, if ``environ`` names one."""
    for line in workflow_commands(report):
        out.write(line + "\n")
    out.flush()
    summary = environ.get("GITHUB_STEP_SUMMARY")
    if summary:
        with open(summary, "a", encoding="utf-8") as f:
            report.write_markdown(f, title)
            f.write("\n")
