"""The shape of ``backends/``: one package per database, the same module names for the same jobs,
entry points that resolve, and no import circle between the modules."""

from __future__ import annotations

import ast
import importlib
import tomllib
from collections.abc import Iterator
from pathlib import Path

import pytest

import backends

ROOT = Path(backends.__file__).parent
#: The job of each module name; a package has the ones its database needs.
JOBS = {
    "adapter",
    "capabilities",
    "factory",
    "config",
    "errors",
    "schema",
    "statements",
}
#: Modules only one database needs.
OWN_MODULES = {
    "postgres": {"connections", "watchdog"},
    # Batch calls re-requesting unprocessed work; the transaction that stores a commit and its branch.
    "dynamodb": {"batch", "transaction"},
    # The Data API requests and the merging of ReadRows streams.
    "bigtable": {"messages"},
    # PyMySQL has no connection pool.
    "mariadb": {"pool"},
}
EVERY_PACKAGE_HAS = {"adapter", "capabilities", "factory"}


def _packages() -> list[Path]:
    return sorted(p for p in ROOT.iterdir() if p.is_dir() and (p / "__init__.py").exists())


def test_backends_holds_only_packages() -> None:
    loose = sorted(p.name for p in ROOT.glob("*.py") if p.name != "__init__.py")
    assert loose == [], "every database gets a package of its own under backends/"


@pytest.mark.parametrize("package", _packages(), ids=lambda p: p.name)
def test_each_package_uses_the_shared_module_names(package: Path) -> None:
    modules = {p.stem for p in package.glob("*.py") if p.name != "__init__.py"}
    assert modules >= EVERY_PACKAGE_HAS
    assert modules - JOBS <= OWN_MODULES.get(package.name, set())


def _entry_points() -> dict[str, str]:
    pyproject = tomllib.loads((ROOT.parent / "pyproject.toml").read_text())
    found: dict[str, str] = pyproject["project"]["entry-points"]["lochkit.backends"]
    return found


def test_every_entry_point_names_a_package_that_exports_its_factory() -> None:
    names = _entry_points()
    assert set(names) == {
        "inmemory",
        "rocksdb",
        "postgres",
        "cockroachdb",
        "mariadb",
        "mongodb",
        "cassandra",
        "scylladb",
        "dynamodb",
        "bigtable",
    }
    packages = {p.name for p in _packages()}
    for name, target in names.items():
        module, _, attr = target.partition(":")
        assert module.removeprefix("backends.") in packages, target
        factory = getattr(importlib.import_module(module), attr)
        assert factory.name == name
        assert factory.__module__ == f"{module}.factory", "the factory lives in the package's factory.py"


def _imports(path: Path, module: str, modules: set[str]) -> Iterator[str]:
    """Every module of ``modules`` that ``path`` imports, at the top, in functions or for typing."""
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            yield from (alias.name for alias in node.names if alias.name in modules)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parent = package.rsplit(".", node.level - 1)[0]
                base = f"{parent}.{base}" if base else parent
            for alias in node.names:
                # ``from package import module`` imports the module; ``from module import name``
                # imports the module itself.
                target = f"{base}.{alias.name}" if f"{base}.{alias.name}" in modules else base
                if target in modules:
                    yield target


def _import_graph() -> dict[str, set[str]]:
    files = {
        ".".join(("backends", *p.relative_to(ROOT).with_suffix("").parts)).removesuffix(".__init__"): p
        for p in ROOT.rglob("*.py")
    }
    return {
        module: {target for target in _imports(path, module, set(files)) if target != module}
        for module, path in files.items()
    }


def _circles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components of more than one module (Tarjan's algorithm)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for target in sorted(graph[node]):
            if target not in index:
                visit(target)
                low[node] = min(low[node], low[target])
            elif target in on_stack:
                low[node] = min(low[node], index[target])
        if low[node] == index[node]:
            component = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.append(member)
                if member == node:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return found


def test_no_import_circle_between_backend_modules() -> None:
    """Counting imports inside functions and under ``TYPE_CHECKING`` too: a deferred import hides a
    circle from Python, not from the reader."""
    graph = _import_graph()
    assert len(graph) > len(_packages()), "the graph must see the modules"
    assert _circles(graph) == []


def test_the_circle_finder_finds_a_circle() -> None:
    assert _circles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
