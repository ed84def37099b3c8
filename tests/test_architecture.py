"""The architecture, computed from the code: the import graph and the size of modules and functions.

The rules (``../DESIGN``: dependencies point one way; no cycle; no private name crosses a module;
a module holds one idea):

* ``accounting`` imports neither ``learners`` nor ``verification``; ``learners`` does not import
  ``verification``.
* The import graph of the library has no cycle. Every import counts, including the ones inside a
  function (a lazy import hides a cycle, it does not remove it); only imports under
  ``if TYPE_CHECKING:`` are left out of the cycle check, as they never run.
* No module imports a private name (``_x``, not a dunder) of another module, and a private module
  (``pkg._m``) is imported only from inside ``pkg``.
* No library module is over :data:`MAX_MODULE_LINES` lines, no function over
  :data:`MAX_FUNCTION_LINES`.

Each rule holds with no exception: a violation fails the test and is named in its message.
"""

from __future__ import annotations

import ast
import dataclasses
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = ("accounting", "learners", "verification")
#: Which package may import which (dependencies point one way).
MAY_IMPORT = {
    "accounting": {"accounting"},
    "learners": {"accounting", "learners"},
    "verification": {"accounting", "learners", "verification"},
}
MAX_MODULE_LINES = 800
MAX_FUNCTION_LINES = 100


@dataclasses.dataclass(frozen=True)
class Import:
    importer: str
    target: str  # the module imported (or whose name is imported)
    name: str | None  # the name imported from ``target`` (``from target import name``)
    runtime: bool  # False under ``if TYPE_CHECKING:``


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _modules() -> dict[str, Path]:
    return {_module_name(p): p for pkg in PACKAGES for p in sorted((ROOT / pkg).rglob("*.py"))}


def _type_checking_nodes(tree: ast.AST) -> set[int]:
    """ids of the import nodes under ``if TYPE_CHECKING:``."""
    out: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            for stmt in node.body:
                out.update(id(n) for n in ast.walk(stmt))
    return out


def _package_of(name: str, path: Path) -> list[str]:
    """The package a relative import of module ``name`` (at ``path``) starts from."""
    return name.split(".") if path.name == "__init__.py" else name.split(".")[:-1]


def _from_target(node: ast.ImportFrom, here: list[str]) -> str:
    """The module of ``from X import ...``, relative imports resolved against package ``here``."""
    if not node.level:
        return node.module or ""
    base = here[: len(here) - node.level + 1]
    return ".".join([*base, node.module] if node.module else base)


def _imports(modules: dict[str, Path]) -> list[Import]:
    found: list[Import] = []
    for name, path in modules.items():
        tree = ast.parse(path.read_text(encoding="utf-8"))
        typing_only = _type_checking_nodes(tree)
        here = _package_of(name, path)
        for node in ast.walk(tree):
            runtime = id(node) not in typing_only
            if isinstance(node, ast.Import):
                found += [
                    Import(name, a.name, None, runtime)
                    for a in node.names
                    if a.name.split(".")[0] in PACKAGES
                ]
            elif isinstance(node, ast.ImportFrom):
                target = _from_target(node, here)
                if target.split(".")[0] not in PACKAGES:
                    continue
                for alias in node.names:
                    sub = f"{target}.{alias.name}"
                    if sub in modules:  # ``from pkg import module``
                        found.append(Import(name, sub, None, runtime))
                    else:
                        found.append(Import(name, target, alias.name, runtime))
    return found


def _private_attributes(modules: dict[str, Path]) -> set[tuple[str, str, str]]:
    """``(importer, module, name)`` of each ``alias._name`` where ``alias`` is a module of the
    project bound by an import (``from accounting import validate as v`` … ``v._short``)."""
    found: set[tuple[str, str, str]] = set()
    for name, path in modules.items():
        tree = ast.parse(path.read_text(encoding="utf-8"))
        here = _package_of(name, path)
        bound: dict[str, str] = {}
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                for a in node.names:
                    if a.name in modules and a.asname:
                        bound[a.asname] = a.name
            elif isinstance(node, ast.ImportFrom):
                target = _from_target(node, here)
                for a in node.names:
                    if f"{target}.{a.name}" in modules:
                        bound[a.asname or a.name] = f"{target}.{a.name}"
        for node in ast.walk(tree):
            if (
                isinstance(node, ast.Attribute)
                and isinstance(node.value, ast.Name)
                and node.value.id in bound
                and node.attr.startswith("_")
                and not node.attr.startswith("__")
            ):
                found.add((name, bound[node.value.id], node.attr))
    return found


@pytest.fixture(scope="module")
def graph() -> tuple[dict[str, Path], list[Import]]:
    modules = _modules()
    return modules, _imports(modules)


def _strongly_connected(nodes: list[str], edges: dict[str, set[str]]) -> list[tuple[str, ...]]:
    """Tarjan's components of more than one node (or with a self-loop), iteratively."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    components: list[tuple[str, ...]] = []
    for root in nodes:
        if root in index:
            continue
        work = [(root, iter(sorted(edges.get(root, ()))))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            v, it = work[-1]
            for w in it:
                if w not in index:
                    index[w] = low[w] = len(index)
                    stack.append(w)
                    on_stack.add(w)
                    work.append((w, iter(sorted(edges.get(w, ())))))
                    break
                if w in on_stack:
                    low[v] = min(low[v], index[w])
            else:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[v])
                if low[v] == index[v]:
                    component = []
                    while True:
                        w = stack.pop()
                        on_stack.discard(w)
                        component.append(w)
                        if w == v:
                            break
                    if len(component) > 1 or v in edges.get(v, ()):
                        components.append(tuple(sorted(component)))
    return components


def test_dependencies_point_one_way(graph: tuple[dict[str, Path], list[Import]]) -> None:
    _, imports = graph
    wrong = sorted(
        f"{i.importer} imports {i.target}"
        for i in imports
        if i.target.split(".")[0] not in MAY_IMPORT[i.importer.split(".")[0]]
    )
    assert not wrong, wrong


def test_no_import_cycle(graph: tuple[dict[str, Path], list[Import]]) -> None:
    modules, imports = graph
    edges: dict[str, set[str]] = {}
    for i in imports:
        if i.runtime and i.target in modules and i.target != i.importer:
            edges.setdefault(i.importer, set()).add(i.target)
    cycles = _strongly_connected(sorted(modules), edges)
    assert not cycles, f"import cycles: {cycles}"


def _inside(importer: str, package: str) -> bool:
    return importer == package or importer.startswith(package + ".")


def test_no_private_name_crosses_a_module(graph: tuple[dict[str, Path], list[Import]]) -> None:
    modules, imports = graph
    found: set[tuple[str, str, str]] = set()
    for i in imports:
        if i.name is not None and i.name.startswith("_") and not i.name.startswith("__"):
            found.add((i.importer, i.target, i.name))
        parts = i.target.split(".")
        for k, part in enumerate(parts):
            if part.startswith("_") and not part.startswith("__"):
                package = ".".join(parts[:k])
                if not _inside(i.importer, package):
                    found.add((i.importer, i.target, "<private module>"))
    found |= _private_attributes(modules)
    assert all(t in modules or t.split(".")[0] in PACKAGES for _, t, _ in found)
    assert not found, f"private names crossing modules: {sorted(found)}"


def test_modules_hold_one_idea(graph: tuple[dict[str, Path], list[Import]]) -> None:
    modules, _ = graph
    long = {
        name
        for name, path in modules.items()
        if len(path.read_text(encoding="utf-8").splitlines()) > MAX_MODULE_LINES
    }
    assert not long, f"modules over {MAX_MODULE_LINES} lines: {sorted(long)}"


def test_functions_are_short(graph: tuple[dict[str, Path], list[Import]]) -> None:
    modules, _ = graph
    long: set[tuple[str, str]] = set()
    for name, path in modules.items():
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                assert node.end_lineno is not None
                if node.end_lineno - node.lineno + 1 > MAX_FUNCTION_LINES:
                    long.add((name, node.name))
    assert not long, f"functions over {MAX_FUNCTION_LINES} lines: {sorted(long)}"


def test_the_rules_see_what_they_check() -> None:
    """The checks on a made-up graph: a cycle through a lazy import, a private name, a private
    module imported from outside its package, all found."""
    edges = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}
    assert _strongly_connected(["a", "b", "c", "d"], edges) == [("a", "b", "c")]
    assert _strongly_connected(["x"], {"x": {"x"}}) == [("x",)]
    assert _inside("accounting.pld.grid", "accounting.pld")
    assert not _inside("accounting.pldx", "accounting.pld")
