"""Imports go one way: no import cycle among the modules of models, drivers, power, analysis and configs, nor among
the modules of each Rust crate (models/timing, models/params, models/engine/*).

The graph is read from the source with Python's `ast`: every `import` and `from ... import` of a project module, at
module level or inside a function (a deferred import is still a dependency), but not those under
`if TYPE_CHECKING:` (annotations only, never executed). A cycle is reported as the chain of modules that closes it.

A Rust module depends on every module its `crate::`, `super::` and `self::` paths name (in `use` declarations and
in code), outside `#[cfg(test)]` items; a parent's `pub use` of its children (a facade) is not a dependency, and
`mod` declarations are not either. Cargo itself refuses cycles between crates.
"""

from __future__ import annotations

import ast
import graphlib
import pathlib

import rust_source

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


# ---- Rust: the modules of each crate -----------------------------------------------------------------------------

def _rust_module(src: pathlib.Path, path: pathlib.Path) -> tuple[str, ...]:
    parts = path.relative_to(src).with_suffix("").parts
    return parts[:-1] if parts[-1] in ("mod", "lib", "main") else parts


def _rust_paths(toks: list[tuple[str, str, int]]) -> list[list[str]]:
    """Every path starting with crate, super or self (`super::super::x::Y`), a `use` group's branches expanded
    (`use super::{a::B, C}`), the statements of `pub use` left out."""
    words = [(k, t) for k, t, _ in toks if k != "str"]
    out, i = [], 0
    while i < len(words):
        if words[i][1] == "pub" and i + 1 < len(words) and words[i + 1][1] == "use":
            while i < len(words) and words[i][1] != ";":
                i += 1
            continue
        if words[i][1] not in ("crate", "super", "self") or i + 1 >= len(words) or words[i + 1][1] != "::":
            i += 1
            continue
        path, i = [words[i][1]], i + 1
        while i + 1 < len(words) and words[i][1] == "::" and words[i + 1][0] == "word":
            path.append(words[i + 1][1])
            i += 2
        if i + 1 < len(words) and words[i][1] == "::" and words[i + 1][1] == "{":
            # A group: each branch's first name extends the path (deeper levels resolve from there).
            depth, i = 1, i + 2
            first = True
            while i < len(words) and depth:
                t = words[i][1]
                depth += {"{": 1, "}": -1}.get(t, 0)
                if depth == 1 and first and words[i][0] == "word":
                    out.append(path + [t])
                first = t == "," and depth == 1 or (first and t == "{")
                i += 1
            continue
        out.append(path)
    return out


def rust_module_graph() -> dict[str, set[str]]:
    """Each module of each crate (`kvsim-timing::mem::prefetch`) and the modules of its crate it depends on."""
    graph: dict[str, set[str]] = {}
    for src in rust_source.crate_source_dirs():
        crate = src.parent.name
        files = rust_source.crate_sources(src)
        modules = {_rust_module(src, p) for p in files}
        for path, toks in files.items():
            here = _rust_module(src, path)
            deps = set()
            for ref in _rust_paths(toks):
                base, rest = {"crate": (), "self": here}.get(ref[0], here), ref[1:]
                if ref[0] == "super":
                    base = here[:-1]
                    while rest and rest[0] == "super":
                        base, rest = base[:-1], rest[1:]
                target = base
                for part in rest:
                    if target + (part,) not in modules:
                        break
                    target += (part,)
                if target != here:
                    deps.add(f"{crate}::{'::'.join(target)}")
            graph.setdefault(f"{crate}::{'::'.join(here)}", set()).update(deps)
    for deps in graph.values():
        deps &= set(graph)
    return graph


def test_the_rust_graph_sees_the_module_paths():
    graph = rust_module_graph()
    assert "timing::mem::array" in graph["timing::mem::hierarchy"]       # use super::array::CacheArray
    assert "timing::" in graph["timing::mem::array"]                     # use crate::{ratio, Clock, ...}
    assert "timing::mem" in graph["timing::mem::hierarchy"]              # use super::{Agent, CohType, ...}
    toks = rust_source.tokens("pub use array::X;\nuse super::{a::B, c, d::{e, f}};\nfn g() { crate::x::y(); }")
    assert _rust_paths(toks) == [["super", "a"], ["super", "c"], ["super", "d"], ["crate", "x", "y"]]


def test_no_module_cycles_in_the_rust_crates():
    found = cycles(rust_module_graph())
    assert found == [], "module cycles in the Rust crates (modules that use each other, directly or not):\n" + \
        "\n".join(found)
