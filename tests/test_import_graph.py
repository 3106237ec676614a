"""Imports go one way: no import cycle among the modules of models, drivers, power, analysis and configs.

The graph is read from the source with Python's `ast`: every `import` and `from ... import` of a project module, at
module level or inside a function (a deferred import is still a dependency), but not those under
`if TYPE_CHECKING:` (annotations only, never executed). A cycle is reported as the chain of modules that closes it.
"""

from __future__ import annotations

import ast
import graphlib
import pathlib

ROOT = pathlib.Path(__file__).resolve().parent.parent
PACKAGES = ("models", "drivers", "power", "analysis", "configs")


def _module_name(path: pathlib.Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _is_type_checking(node: ast.If) -> bool:
    test = node.test
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or \
        (isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING")


def _imports(tree: ast.AST, module: str, is_package: bool, modules: set[str]) -> set[str]:
    """The modules `module` imports: `from pkg import name` imports the module pkg.name when there is one (then pkg
    only as the package it already is part of), else pkg."""
    found: set[str] = set()
    package = module if is_package else module.rpartition(".")[0]

    def visit(node: ast.AST) -> None:
        if isinstance(node, ast.If) and _is_type_checking(node):
            for child in node.orelse:
                visit(child)
            return
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[:len(package.split(".")) - (node.level - 1)]
                target = ".".join(base + ([node.module] if node.module else []))
            else:
                target = node.module or ""
            for alias in node.names:
                found.add(f"{target}.{alias.name}" if f"{target}.{alias.name}" in modules else target)
        for child in ast.iter_child_nodes(node):
            visit(child)

    visit(tree)
    return found


def import_graph() -> dict[str, set[str]]:
    """Each project module and the project modules it imports."""
    files = {_module_name(p): p for pkg in PACKAGES for p in (ROOT / pkg).rglob("*.py")}
    graph: dict[str, set[str]] = {m: set() for m in files}
    for module, path in files.items():
        for target in _imports(ast.parse(path.read_text()), module, path.name == "__init__.py", set(files)):
            if target in files and target != module:
                graph[module].add(target)
    return graph


def _reachable(graph: dict[str, set[str]], start: str) -> set[str]:
    seen, todo = set(), [start]
    while todo:
        for nxt in graph[todo.pop()] - seen:
            seen.add(nxt)
            todo.append(nxt)
    return seen


def cycles(graph: dict[str, set[str]]) -> list[str]:
    """One cycle (as `a -> b -> a`) for every group of modules that import each other, directly or not."""
    reach = {m: _reachable(graph, m) for m in graph}
    groups = {frozenset({m} | {n for n in reach[m] if m in reach[n]}) for m in graph if m in reach[m]}
    out = []
    for group in sorted(groups, key=sorted):
        try:
            graphlib.TopologicalSorter({m: graph[m] & group for m in group}).prepare()
        except graphlib.CycleError as err:
            out.append(" -> ".join(reversed(err.args[1])))
    return out


def test_the_graph_sees_the_imports():
    graph = import_graph()
    assert "models.stats_paths" in graph["power.activity"]
    assert "models.param_path" in graph["drivers.sweep.points"]
    assert "drivers.sweep.execute" in graph["drivers.sweep"]
    found = cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}})
    assert len(found) == 1 and set(found[0].split(" -> ")) == {"a", "b", "c"}


def test_no_import_cycles():
    found = cycles(import_graph())
    assert found == [], "import cycles (modules that import each other, directly or not):\n" + "\n".join(found)
