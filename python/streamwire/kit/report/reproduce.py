"""Each verdict's command: the ``reproduce`` line of the first failing cell that raised it.

The command itself is the client side's (``raw.command``): what the kit
sent for the cell, as one ``curl`` command line with the key left to the shell.
"""

from __future__ import annotations

from collections.abc import Iterable

from ..client.command import KEY_VAR, cell_command, curl_command, key_variable
from ..judge.cell import Cell
from ..judge.verdicts import cell_verdicts, control_cells

__all__ = ["FAILING", "KEY_VAR", "by_verdict", "cell_command", "curl_command", "key_variable"]

#: The cell states whose JSON carries their command (``Cell.state``).
FAILING = frozenset({"fail", "flaky"})


def by_verdict(cells: Iterable[Cell]) -> dict[tuple[str, str, str], str]:
    """(verdict, route, client) -> the command of the first failing (or
    flaky) cell that raised it: one command beside each verdict."""
    cells = list(cells)
    controls = control_cells(cells)
    out: dict[tuple[str, str, str], str] = {}
    for cell in cells:
        if not cell.reproduce or cell.state not in FAILING:
            continue
        control = controls.get((cell.route, cell.client, cell.delivery, cell.case))
        for name, _ in cell_verdicts(cell, control):
            out.setdefault((name, cell.route, cell.client), cell.reproduce)
    return out
