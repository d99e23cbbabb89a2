"""Imports in ``python/streamwire`` run one way: no circle, nothing up the layers.

docs/design.md ("Imports") lists the package's layers, bottom first, in a
table this test reads, and says why. The graph is built from
the source with the standard library's ``ast``, nothing imported, and every
import counts, wherever it is written:

* at module level, inside a function or a method (a lazy import still runs),
  and under ``if TYPE_CHECKING:`` (strict: a name a type needs is shared by
  both modules, and belongs below both);
* ``import a.b.c`` and ``from a.b import c`` import the packages ``a`` and
  ``a.b`` too (their ``__init__`` runs), except the importing module's own
  parent packages, which are already being imported;
* ``from pkg import name`` imports the module ``pkg.name`` when there is one,
  else the package ``pkg`` (its ``__init__`` defines the name);
* a module that calls ``importlib.import_module`` (or ``__import__``) is
  taken to import every package module its string constants name
  (``"streamwire.protocols.openai_chat:OpenAIChatStream"``): the lazy
  registries.

The extension module ``streamwire._core`` imports nothing of the package.

``benches/`` is no package: a folder of top-level modules on ``sys.path``
(pytest puts it there), imported by plain name (``from rounds import
best_times``). Its modules have no layers, but no circle either.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from conftest import REPO_ROOT

PACKAGE = "streamwire"
SOURCE = REPO_ROOT / "python"
BENCHES = REPO_ROOT / "benches"
DESIGN = REPO_ROOT / "docs" / "design.md"
#: Modules that exist without a ``.py`` source (the Rust extension).
EXTENSIONS = ("streamwire._core",)


@dataclass(frozen=True)
class Edge:
    """One import: ``source`` imports ``target`` (how: ``top``, ``function``,
    ``type_checking`` or ``by_name``), at ``line``."""

    source: str
    target: str
    how: str
    line: int


@dataclass
class Graph:
    modules: set[str] = field(default_factory=set)
    packages: set[str] = field(default_factory=set)
    edges: list[Edge] = field(default_factory=list)

    def targets(self, module: str) -> set[str]:
        return {e.target for e in self.edges if e.source == module}


def _parents(name: str) -> list[str]:
    parts = name.split(".")
    return [".".join(parts[:n]) for n in range(1, len(parts))]


def _modules(root: Path, package: str | None) -> tuple[dict[str, Path], set[str]]:
    if package is None:
        return {path.stem: path for path in sorted(root.glob("*.py"))}, set()
    found: dict[str, Path] = {}
    packages: set[str] = set()
    for path in sorted((root / package).rglob("*.py")):
        parts = list(path.relative_to(root).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
            packages.add(".".join(parts))
        found[".".join(parts)] = path
    return found, packages


def _is_type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def _imports_by_name(tree: ast.Module) -> bool:
    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            func = node.func
            name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", None)
            if name in ("import_module", "__import__"):
                return True
    return False


def build(root: Path, package: str | None, extensions: Iterable[str] = ()) -> Graph:
    """The import graph of ``package`` under ``root`` or, with no package, of
    the top-level modules in the folder ``root`` (see the module docstring)."""
    sources, packages = _modules(root, package)
    graph = Graph(modules=set(sources) | set(extensions), packages=packages)
    for module, path in sources.items():
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
        graph.edges += _edges(graph, module, tree, package)
    return graph


def _edges(graph: Graph, module: str, tree: ast.Module, package: str | None) -> list[Edge]:
    """The imports of one module's source."""
    is_package = module in graph.packages
    own_parents = set(_parents(module))
    out: list[Edge] = []

    def add(target: str, how: str, line: int, *, implied: bool = False) -> None:
        if target not in graph.modules or target == module:
            return
        if implied and target in own_parents:
            return
        out.append(Edge(module, target, how, line))

    def base_of(node: ast.ImportFrom) -> str:
        if not node.level:
            return node.module or ""
        parts = module.split(".")
        if not is_package:
            parts.pop()
        parts = parts[: len(parts) - (node.level - 1)]
        return ".".join(parts + ([node.module] if node.module else []))

    def visit(node: ast.AST, how: str) -> None:
        if isinstance(node, ast.Import):
            for alias in node.names:
                for parent in _parents(alias.name):
                    add(parent, how, node.lineno, implied=True)
                add(alias.name, how, node.lineno)
        elif isinstance(node, ast.ImportFrom):
            base = base_of(node)
            for parent in _parents(base):
                add(parent, how, node.lineno, implied=True)
            submodules = [f"{base}.{a.name}" for a in node.names]
            names_only = [s for s in submodules if s not in graph.modules]
            # The package's __init__ runs; it is what is imported when a
            # name is one it defines rather than a submodule.
            add(base, how, node.lineno, implied=not names_only)
            for sub in submodules:
                add(sub, how, node.lineno)
        if isinstance(node, ast.If) and _is_type_checking(node.test):
            for child in node.body:
                visit(child, "type_checking")
            for child in node.orelse:
                visit(child, how)
            return
        inner = how
        if how == "top" and isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            inner = "function"
        for child in ast.iter_child_nodes(node):
            visit(child, inner)

    visit(tree, "top")
    # A folder's modules are named by plain words, which any string may be.
    if package is not None and _imports_by_name(tree):
        for node in ast.walk(tree):
            if isinstance(node, ast.Constant) and isinstance(node.value, str):
                name = node.value.partition(":")[0]
                if name.startswith(package + "."):
                    add(name, "by_name", node.lineno)
    return out


def circles(graph: Graph) -> list[list[str]]:
    """The strongly connected components of more than one module, each sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    out: list[list[str]] = []
    targets = {m: sorted(graph.targets(m)) for m in graph.modules}

    def connect(start: str) -> None:
        # Tarjan's algorithm, iterative (the graph is small, but recursion
        # depth should not depend on it).
        work = [(start, 0)]
        index[start] = low[start] = len(index)
        stack.append(start)
        on_stack.add(start)
        while work:
            node, i = work.pop()
            if i < len(targets[node]):
                work.append((node, i + 1))
                nxt = targets[node][i]
                if nxt not in index:
                    index[nxt] = low[nxt] = len(index)
                    stack.append(nxt)
                    on_stack.add(nxt)
                    work.append((nxt, 0))
                elif nxt in on_stack:
                    low[node] = min(low[node], index[nxt])
                continue
            if work:
                parent = work[-1][0]
                low[parent] = min(low[parent], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    out.append(sorted(component))

    for module in sorted(graph.modules):
        if module not in index:
            connect(module)
    return sorted(out)


def read_layers(text: str, package: str = PACKAGE) -> list[tuple[str, list[str]]]:
    """The rows of docs/design.md's import-layer table: (layer, module names)."""
    start = text.index("<!-- import layers:")
    end = text.index("<!-- end of import layers -->")
    rows = []
    for line in text[start:end].splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) != 2 or cells[0] in ("layer", "---") or set(cells[0]) <= {"-"}:
            continue
        # The names in backticks, outside parentheses (which comment on them).
        names = re.findall(r"`([A-Za-z_][A-Za-z0-9_.]*)`", re.sub(r"\([^)]*\)", "", cells[1]))
        modules = [package if n == package else f"{package}.{n}" for n in names]
        rows.append((cells[0], modules))
    return rows


def layer_of(layers: list[tuple[str, list[str]]]) -> Mapping[str, int]:
    """Listed name -> its row number (bottom 0)."""
    return {name: n for n, (_, names) in enumerate(layers) for name in names}


def placed(module: str, listed: Mapping[str, int]) -> int | None:
    """The row of ``module``: its own, else that of its closest listed package."""
    for name in (module, *reversed(_parents(module))):
        if name in listed:
            return listed[name]
    return None


def upward(graph: Graph, listed: Mapping[str, int]) -> list[str]:
    """Every import whose target sits in a higher row than its source."""
    out = []
    for edge in graph.edges:
        source, target = placed(edge.source, listed), placed(edge.target, listed)
        if source is not None and target is not None and target > source:
            out.append(f"{edge.source}:{edge.line} imports {edge.target} ({edge.how})")
    return out


# --- the package --------------------------------------------------------------


@pytest.fixture(scope="module")
def graph() -> Graph:
    return build(SOURCE, PACKAGE, EXTENSIONS)


@pytest.fixture(scope="module")
def layers() -> list[tuple[str, list[str]]]:
    return read_layers(DESIGN.read_text(encoding="utf-8"))


def test_the_graph_sees_the_imports(graph: Graph) -> None:
    # A graph that missed imports would pass every check below.
    assert len(graph.modules) > 100 and len(graph.edges) > 400
    hows = {(e.source, e.target): e.how for e in graph.edges}
    assert hows["streamwire.io._driver", "streamwire.protocols"] == "top"  # implied package
    assert hows["streamwire.toolcalls", "streamwire.tooldefs"] == "type_checking"
    assert hows["streamwire._cli_inspect", "streamwire._cli_replay"] == "function"
    assert hows["streamwire.protocols", "streamwire.protocols.openai_chat"] == "by_name"
    assert hows["streamwire.kit.run.live", "streamwire"] == "top"  # from .. import __version__
    assert ("streamwire.io.serialize", "streamwire") not in hows  # from .. import _json


def test_no_import_circle(graph: Graph) -> None:
    assert circles(graph) == []


def test_every_module_has_a_layer(graph: Graph, layers: list[tuple[str, list[str]]]) -> None:
    listed = layer_of(layers)
    assert len(listed) == sum(len(names) for _, names in layers), "a name listed twice"
    assert sorted(set(listed) - graph.modules) == [], "a listed name that is not a module"
    assert sorted(m for m in graph.modules if placed(m, listed) is None) == []


def test_no_import_runs_up_the_layers(graph: Graph, layers: list[tuple[str, list[str]]]) -> None:
    assert upward(graph, layer_of(layers)) == []


# --- the benches --------------------------------------------------------------


def test_no_import_circle_among_the_benches() -> None:
    graph = build(BENCHES, None)
    # A graph that missed imports would pass.
    assert len(graph.modules) > 20
    hows = {(e.source, e.target): e.how for e in graph.edges}
    assert hows["groups", "bench_pipeline_chat"] == "top"
    assert hows["gate", "groups"] == "function"
    assert hows["bench_pipeline_shapes", "pipeline"] == "top"
    assert circles(graph) == []


# --- the checks themselves ------------------------------------------------------------


def _write(root: Path, files: Mapping[str, str]) -> None:
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")


@pytest.mark.parametrize(
    ("files", "circle"),
    [
        # directly, at module level
        ({"a.py": "from . import b\n", "b.py": "from .a import x\n"}, ["p.a", "p.b"]),
        # through a function-level import and a third module
        (
            {
                "a.py": "def f():\n    from .b import y\n",
                "b.py": "import p.c\n",
                "c.py": "from p import a\n",
            },
            ["p.a", "p.b", "p.c"],
        ),
        # under TYPE_CHECKING
        (
            {
                "a.py": (
                    "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from .b import B\n"
                ),
                "b.py": "from .a import A\n",
            },
            ["p.a", "p.b"],
        ),
        # a package __init__ importing a module that imports a name of the __init__
        ({"__init__.py": "from .a import f\n", "a.py": "from . import VERSION\n"}, ["p", "p.a"]),
        # a subpackage's __init__ runs when one of its modules is imported
        (
            {"q/__init__.py": "from ..a import g\n", "q/m.py": "", "a.py": "from .q.m import h\n"},
            ["p.a", "p.q"],
        ),
        # a lazy registry, by name
        (
            {
                "a.py": "import importlib\nR = {'x': 'p.b:B'}\nimportlib.import_module('p.b')\n",
                "b.py": "from .a import R\n",
            },
            ["p.a", "p.b"],
        ),
    ],
)
def test_a_circle_is_found_however_it_is_written(
    tmp_path: Path, files: dict[str, str], circle: list[str]
) -> None:
    _write(tmp_path / "p", {"__init__.py": "", **files})
    assert circles(build(tmp_path, "p")) == [circle]


def test_a_circle_among_a_folders_modules_is_found(tmp_path: Path) -> None:
    _write(
        tmp_path,
        {
            "a.py": "import b\nimport json\n",  # json: not one of the folder's
            "b.py": "def f():\n    from c import g\n",
            "c.py": "from a import x\n",
            # a string names no module of a folder: "a" is a word
            "d.py": "import importlib\nimportlib.import_module('a')\n",
            "sub/e.py": "import d\n",  # below the folder: not one of its modules
        },
    )
    graph = build(tmp_path, None)
    assert graph.modules == {"a", "b", "c", "d"}
    assert circles(graph) == [["a", "b", "c"]]
    assert graph.targets("a") == {"b"} and graph.targets("d") == set()


def test_what_is_not_a_circle(tmp_path: Path) -> None:
    _write(
        tmp_path / "p",
        {
            "__init__.py": "from .a import f\n",
            # its own parent package is already being imported: no edge
            "a.py": "from . import b\nfrom .b import g\n",
            "b.py": "X = 'p.a'\n",  # a string, but b imports nothing by name
        },
    )
    graph = build(tmp_path, "p")
    assert circles(graph) == []
    assert graph.targets("p.a") == {"p.b"} and graph.targets("p.b") == set()


def test_an_import_up_the_layers_is_found(tmp_path: Path) -> None:
    _write(
        tmp_path / "p",
        {
            "__init__.py": "",
            "low.py": "def f():\n    from .high import g\n",
            "high.py": "from . import low\n",
            "sub/__init__.py": "",
            "sub/x.py": "from ..low import f\n",
        },
    )
    text = (
        "<!-- import layers: -->\n| layer | modules |\n|---|---|\n"
        "| bottom | `low` |\n| middle | `sub` |\n| top | `high`, `p` |\n"
        "<!-- end of import layers -->\n"
    )
    rows = read_layers(text, "p")
    assert rows == [("bottom", ["p.low"]), ("middle", ["p.sub"]), ("top", ["p.high", "p"])]
    listed = layer_of(rows)
    assert placed("p.sub.x", listed) == 1
    assert upward(build(tmp_path, "p"), listed) == ["p.low:2 imports p.high (function)"]
