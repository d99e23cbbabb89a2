"""The kit inside a team's own pytest suite: each cell a test item, the gate a pytest run.

Registered only when asked: the entry point (``pytest11``: ``streamwire``)
is the light module ``_streamwire_pytest``, which adds the ``--sw-*``
options and the ``streamwire_check`` fixture and registers this module when
an option names a gateway, a baseline or fixtures; a pytest session that
asks for none of them imports nothing of streamwire.

Each item is one cell of the plan, its id ``<case>[<client>-<route>-<delivery>]``,
so ``-k``, ``--junitxml`` and the rest work as for any test. The selected
cells run once, together, when the first of them runs; a failing item's
message is its layers' evidence and its verdict, and an inconclusive cell is
skipped. ``--sw-against`` makes the items the upgrade gate
(``report/compare.py``), with one more item, ``streamwire-compare``;
``--sw-fixtures DIR`` adds an item per recorded fixture (``fixtures.py``).
docs/kit/comparisons.md ("Inside a team's own pytest suite") has every
option and an example test.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

if TYPE_CHECKING:
    from .judge.cell import Cell
    from .report.document import Report
    from .run.check import CheckPlan

__all__ = ["check_runner"]

_STATE = pytest.StashKey["_Run"]()


def pytest_addoption(parser: pytest.Parser) -> None:
    """The ``--sw-*`` options (``_streamwire_pytest``: added once, whichever
    module pytest registered first)."""
    from _streamwire_pytest import add_options

    add_options(parser)


def _names(text: str, known: Sequence[str], what: str, named: Sequence[str] = ()) -> list[str]:
    if text.strip() == "all":
        return list(known)
    names = [n.strip() for n in text.split(",") if n.strip()]
    unknown = [n for n in names if n not in known and n not in named]
    if unknown:
        raise pytest.UsageError(f"unknown {what} {', '.join(unknown)}; known: {', '.join(known)}")
    return names


def _plan(config: pytest.Config) -> CheckPlan:
    from .run.check import CheckPlan, Route
    from .vocab.cases import CASE_NAMES
    from .vocab.delivery import DELIVERIES
    from .vocab.names import CLIENTS, SDKS, WS_WIRE

    option = config.option
    gateways: list[str] = option.sw_gateway
    labels: list[str] = option.sw_label
    if labels and len(labels) != len(gateways):
        raise pytest.UsageError("give one --sw-label per --sw-gateway")
    if not option.sw_client:
        raise pytest.UsageError("--sw-gateway needs --sw-client")
    try:
        return CheckPlan(
            routes=[
                Route(url, option.sw_models, label)
                for url, label in zip(gateways, labels or [""] * len(gateways), strict=True)
            ],
            clients=_names(option.sw_client, CLIENTS, "client protocol", tuple(WS_WIRE)),
            cases=_names(option.sw_cases, CASE_NAMES, "case") if option.sw_cases else CASE_NAMES,
            deliveries=_names(option.sw_delivery, DELIVERIES, "delivery"),
            unary=option.sw_unary,
            sdks=_names(option.sw_sdk, tuple(SDKS), "SDK") if option.sw_sdk else (),
            mock_url=option.sw_mock,
            mock_port=option.sw_mock_port,
        )
    except ValueError as exc:
        raise pytest.UsageError(str(exc)) from exc


class _Run:
    """The plugin's one check run: its plan, the items selected, and (once run) the cells."""

    def __init__(self, config: pytest.Config, plan: CheckPlan) -> None:
        self.config = config
        self.plan = plan
        self.selected: set[str] = set()
        self.cells: dict[str, Cell] | None = None
        self.report: Report | None = None
        self.comparison: Any = None

    def ensure(self) -> None:
        """Runs the selected items' cells, once."""
        if self.cells is not None:
            return
        from dataclasses import replace

        from .report.document import build_report
        from .run.check import run_check

        wanted = [k for k in keys(self.plan) if k[0] in self.selected]
        plan = replace(
            self.plan,
            cases=list(dict.fromkeys(k[1].case for k in wanted)),
            clients=list(dict.fromkeys(k[1].protocol for k in wanted)),
            deliveries=[d for d in self.plan.deliveries if any(k[1].delivery == d for k in wanted)],
        )
        # replace() makes a new run id, key and canary: the run's own.
        cells = asyncio.run(run_check(plan)) if wanted else []
        self.cells = {_item_id(c): c for c in cells}
        routes = [{"label": r.name, "base_url": r.base_url, "model": r.model} for r in plan.routes]
        self.report = build_report(cells, routes=routes)
        option = self.config.option
        if option.sw_json:
            with open(option.sw_json, "w", encoding="utf-8") as out:
                self.report.write_json(out)
        if option.sw_against:
            from .report.compare import compare, load_accepted

            baseline = json.loads(Path(option.sw_against).read_text(encoding="utf-8"))
            accepted: dict[tuple[str, str], str] = {}
            if option.sw_accepted:
                accepted = load_accepted(Path(option.sw_accepted).read_text(encoding="utf-8"))
            current = json.loads(json.dumps(self.report.as_dict(), default=str))
            self.comparison = compare(baseline, current, accepted)


class _Key:
    """What an item's id is made of."""

    def __init__(self, case: str, client: str, route: str, delivery: str, protocol: str) -> None:
        self.case, self.client, self.route, self.delivery = case, client, route, delivery
        self.protocol = protocol


def keys(plan: CheckPlan) -> list[tuple[str, _Key]]:
    """(item id, its key) of every cell of ``plan``, raw cells then SDK cells."""
    out = []
    from .vocab.transport import split_label

    for route, case, client, delivery in plan.keys():
        key = _Key(case, client, route.name, delivery, split_label(client)[0])
        out.append((_name(key), key))
    for route, case, sdk, client, delivery in plan.sdk_keys():
        key = _Key(case, f"{client} via {sdk}", route.name, delivery, client)
        out.append((_name(key), key))
    return out


def _name(key: _Key) -> str:
    return f"{key.case}[{key.client}-{key.route}-{key.delivery}]"


def _item_id(cell: Cell) -> str:
    return f"{cell.case}[{cell.client}-{cell.route}-{cell.delivery}]"


class CellFailed(Exception):
    """A cell's failing layers, as the item's failure message."""


class _Cells(pytest.Collector):
    def collect(self) -> Iterator[pytest.Item]:
        return iter(())


class _KitItem(pytest.Item):
    """An item whose failure is its evidence in words (``CellFailed``), not a traceback."""

    def repr_failure(self, excinfo: pytest.ExceptionInfo[BaseException], style: Any = None) -> str:
        if isinstance(excinfo.value, CellFailed):
            return str(excinfo.value)
        return str(super().repr_failure(excinfo))

    def reportinfo(self) -> tuple[str, int | None, str]:
        return "streamwire", None, self.name


class CellItem(_KitItem):
    """One cell of the plan, run when the first selected cell runs."""

    def __init__(self, *, key: _Key, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.key = key

    def runtest(self) -> None:
        run = self.config.stash[_STATE]
        run.ensure()
        assert run.cells is not None
        cell = run.cells.get(self.name)
        if cell is None:
            raise CellFailed(f"the run has no cell {self.name}")
        if run.comparison is not None:
            mine = [
                c
                for c in run.comparison.regressions
                if c.cell == f"{cell.case} {cell.client} {cell.route} {cell.delivery}"
            ]
            if mine:
                raise CellFailed(
                    "changed from the baseline:\n"
                    + "\n".join(f"  {c.what}: {c.old!r} -> {c.new!r}" for c in mine)
                )
            return
        if cell.inconclusive and not cell.failed:
            pytest.skip("inconclusive: the kit's own limit cut the cell short")
        if _fails(cell):
            raise CellFailed(_failure(cell))


class CompareItem(_KitItem):
    """The gate's verdicts and missing cells (``--sw-against``)."""

    def runtest(self) -> None:
        run = self.config.stash[_STATE]
        run.ensure()
        if run.comparison is None:
            return
        rest = [c for c in run.comparison.regressions if c.kind in ("added", "missing")]
        if rest:
            raise CellFailed(
                "changed from the baseline:\n" + "\n".join(f"  {c.cell}: {c.what}" for c in rest)
            )


class FixtureItem(_KitItem):
    """One recorded fixture, replayed under every chunking (``fixtures.check_fixture``)."""

    def __init__(self, *, fixture: Any, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.fixture = fixture

    def runtest(self) -> None:
        from .fixtures import check_fixture

        problems = check_fixture(self.fixture)
        if problems:
            raise CellFailed(
                f"{self.fixture.path}: the replay differs from the recording:\n"
                + "\n".join(f"  {p}" for p in problems)
            )

    def reportinfo(self) -> tuple[str, int | None, str]:
        return str(self.fixture.path), None, self.name


class BrokenFixtureItem(_KitItem):
    """A manifest that cannot be replayed: a failing item that says why."""

    def __init__(self, *, path: Path, problem: str, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.path_of_manifest = path
        self.problem = problem

    def runtest(self) -> None:
        raise CellFailed(self.problem)

    def reportinfo(self) -> tuple[str, int | None, str]:
        return str(self.path_of_manifest), None, self.name


def _fixture_items(session: pytest.Session, directory: Path) -> list[pytest.Item]:
    from .fixtures import Fixture, FixtureError, manifest_paths

    if not directory.is_dir():
        raise pytest.UsageError(f"--sw-fixtures {directory}: no such directory")
    parent = _Cells.from_parent(session, name="streamwire-fixtures")
    items: list[pytest.Item] = []
    for path in manifest_paths(directory):
        try:
            fixture = Fixture(path)
        except FixtureError as exc:
            name = path.relative_to(directory).as_posix()
            items.append(
                BrokenFixtureItem.from_parent(parent, name=name, path=path, problem=str(exc))
            )
            continue
        items.append(FixtureItem.from_parent(parent, name=fixture.name, fixture=fixture))
    return items


def _fails(cell: Cell) -> bool:
    """A layer failed, or degraded with a verdict that fails a run (any but
    ``semantic_downgrade``: a loss the client protocol cannot help)."""
    from .judge.verdicts import ACCEPTABLE, cell_verdicts

    return cell.failed or any(name not in ACCEPTABLE for name, _ in cell_verdicts(cell))


def _failure(cell: Cell) -> str:
    from .judge.verdicts import VERDICT_RULES, cell_verdicts

    advice = {r.name: r.advice for r in VERDICT_RULES}
    lines = [f"{cell.case} through {cell.route} as {cell.client} ({cell.delivery}):"]
    named = dict((layer, name) for name, layer in cell_verdicts(cell))
    for layer, check in cell.checks.items():
        if check.verdict not in ("fail", "degraded"):
            continue
        verdict = named.get(layer)
        lines.append(f"  {layer}: {check.verdict}: {check.why}")
        if verdict:
            lines.append(f"    verdict {verdict}: {advice.get(verdict, '')}")
    if cell.reproduce:
        lines.append(f"  reproduce: {cell.reproduce}")
    return "\n".join(lines)


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(
    session: pytest.Session, config: pytest.Config, items: list[pytest.Item]
) -> None:
    if config.option.sw_fixtures:
        items.extend(_fixture_items(session, Path(config.option.sw_fixtures)))
    if not config.option.sw_gateway:
        return
    plan = _plan(config)
    config.stash[_STATE] = _Run(config, plan)
    parent = _Cells.from_parent(session, name="streamwire")
    for name, key in keys(plan):
        items.append(CellItem.from_parent(parent, name=name, key=key))
    if config.option.sw_against:
        items.append(CompareItem.from_parent(parent, name="streamwire-compare"))


def pytest_collection_finish(session: pytest.Session) -> None:
    run = session.config.stash.get(_STATE, None)
    if run is not None:
        run.selected = {item.name for item in session.items if isinstance(item, CellItem)}


def check_runner() -> Callable[..., Report]:
    """A function that runs ``streamwire check`` in-process and returns its report:
    ``run(url, clients=[...], cases=[...], deliveries=["whole"], **plan)``
    (the rest of ``CheckPlan``'s fields as keywords): the ``streamwire_check``
    fixture's value."""
    from .report.document import build_report
    from .run.check import CheckPlan, Route, run_check

    def run(url: str, **options: Any) -> Report:
        options.setdefault("deliveries", ["whole"])
        options.setdefault("unary", False)
        plan = CheckPlan(routes=[Route(url)], **options)
        return build_report(asyncio.run(run_check(plan)))

    return run
