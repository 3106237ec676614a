"""Parameter paths: one grammar and one parser for naming a value in the configuration tree.

Every tool that names a parameter uses this module: `sim-scripts/run.py --set`, the sweep runner's axes and ties
(drivers/sweep), and the pandas columns of analysis (`cfg.<path>`, `param.<path>`).

The grammar (the one Python itself uses for attribute and item access, so a path reads like the expression that
reaches the value)::

    path  := name step*
    step  := "." name          a parameter of a parameter object (or a key of a mapping)     caches.llc.size
           | "[" digits "]"    an item of a list, counted from 0                              nics[1].pcie_lanes
           | "[" key "]"       an entry of a mapping; on a list of `key=value` strings        workload.argv[prefetch]
                               (a guest's argv) the entry `key=`
    name  := [A-Za-z_][A-Za-z0-9_]*
    key   := [A-Za-z_][A-Za-z0-9_.-]*

Why this one: it is the only one of the three grammars used before (`nics.1.x` in --set, `workload.argv[name]` in
sweeps, `cfg.nics[0].socket` in analysis) that can say all three things (list items, mapping entries, parameters)
without one form meaning two things, and it is what `config.json` looks like from Python. The older `--set` form
`nics.1.x` is accepted as an alias of `nics[1].x` (a dotted part that is all digits is a list index); it is never
ambiguous, because parameter names cannot start with a digit, and `canonical()` turns it into the `[1]` form (the
form columns and sweep stores use).

A bad path is a ParamError that names the bad part and the valid choices there (the parameters of that object, the
indices of that list).
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass
from typing import Any

from .params import ParamError, SimObject

_NAME = r"[A-Za-z_][A-Za-z0-9_]*"
_TOKEN = re.compile(rf"\.({_NAME})|\.(\d+)|\[(\d+)\]|\[([A-Za-z_][A-Za-z0-9_.\-]*)\]")


@dataclass(frozen=True)
class Step:
    """One step of a path: `kind` is 'name' (a parameter or mapping key after a dot), 'index' (a list item) or
    'key' (a mapping entry in brackets)."""
    kind: str
    value: str | int

    def text(self) -> str:
        if self.kind == "name":
            return f".{self.value}"
        return f"[{self.value}]"


def parse(path: str) -> tuple[Step, ...]:
    """The steps of `path` (see the module doc); a ParamError naming the position of a syntax error."""
    if not isinstance(path, str) or not path:
        raise ParamError(f"parameter path {path!r}: empty; expected a name such as caches.llc.size")
    head = re.match(_NAME, path)
    if head is None:
        raise ParamError(f"parameter path {path!r}: must start with a parameter name ([A-Za-z_][A-Za-z0-9_]*)")
    steps = [Step("name", head.group())]
    pos = head.end()
    while pos < len(path):
        m = _TOKEN.match(path, pos)
        if m is None:
            raise ParamError(f"parameter path {path!r}: cannot read {path[pos:]!r} (at character {pos}); expected "
                             "'.name', '[index]' or '[key]'")
        name, dotted_index, index, key = m.groups()
        if name is not None:
            steps.append(Step("name", name))
        elif key is not None:
            steps.append(Step("key", key))
        else:
            steps.append(Step("index", int(dotted_index if dotted_index is not None else index)))
        pos = m.end()
    return tuple(steps)


def format_path(steps: tuple[Step, ...] | list[Step]) -> str:
    """The canonical text of a path: dotted names, `[i]` for list items, `[key]` for mapping entries."""
    return "".join(s.text() for s in steps).removeprefix(".")


@functools.lru_cache(maxsize=4096)
def canonical(path: str) -> str:
    """`path` in the canonical form (`nics.1.x` -> `nics[1].x`); a ParamError when it does not parse."""
    return format_path(parse(path))


def column(prefix: str, path: str) -> str:
    """The analysis column of a path: `cfg.nics[0].socket`, `param.workload.argv[prefetch]`."""
    return f"{prefix}.{canonical(path)}"


@functools.lru_cache(maxsize=4096)
def _key_step(key: str) -> str:
    return f".{key}" if re.fullmatch(_NAME, key) else f"[{key}]"


def flatten(tree: Any) -> dict[str, Any]:
    """Every leaf of a resolved configuration (plain dicts and lists, as config.json holds it) by its path, in the
    canonical form. A list of parameter objects is descended into (`nics[0].socket`); any other list is a leaf."""
    out: dict[str, Any] = {}

    def walk(node: Any, path: str) -> None:
        if isinstance(node, dict):
            for key, value in node.items():
                step = _key_step(key)
                walk(value, path + step if path else step.removeprefix("."))
        elif isinstance(node, list) and node and all(isinstance(v, dict) for v in node):
            for i, value in enumerate(node):
                walk(value, f"{path}[{i}]")
        else:
            out[path] = node

    walk(tree, "")
    return out


# ---- walking the tree ---------------------------------------------------------------------------------------------

def _describe(obj: Any) -> str:
    if isinstance(obj, SimObject):
        return type(obj).__name__
    if isinstance(obj, list):
        return f"a list of {len(obj)}"
    return type(obj).__name__


def _choices(obj: Any) -> str:
    """What can follow at `obj`, for error messages."""
    if isinstance(obj, SimObject):
        return f"its parameters are: {', '.join(obj._params)}"
    if isinstance(obj, dict):
        return f"its keys are: {', '.join(map(str, obj)) or 'none'}"
    if isinstance(obj, list):
        if obj and all(isinstance(v, str) and "=" in v for v in obj):
            return f"its entries are: {', '.join(v.partition('=')[0] for v in obj)} (or an index 0..{len(obj) - 1})"
        return f"its indices are 0..{len(obj) - 1}" if obj else "it is empty"
    return f"it is a value ({type(obj).__name__}), not an object or a list"


def _step(obj: Any, step: Step, where: str) -> Any:
    """The value one step below `obj` (`where` is the path so far, for messages)."""
    at = f"{where}{step.text()}" if where else str(step.value)
    if step.kind == "name":
        if isinstance(obj, SimObject):
            if step.value not in obj._params:
                raise ParamError(f"{at}: {type(obj).__name__} has no parameter {step.value!r}; {_choices(obj)}")
            return getattr(obj, step.value)
        if isinstance(obj, dict):
            if step.value not in obj:
                raise ParamError(f"{at}: no key {step.value!r}; {_choices(obj)}")
            return obj[step.value]
        if isinstance(obj, list):
            raise ParamError(f"{at}: {where} is {_describe(obj)}: give an index first, e.g. {where}[0].{step.value}")
        raise ParamError(f"{at}: {where} is a value ({type(obj).__name__}), not a parameter object")
    if step.kind == "index":
        if not isinstance(obj, list):
            raise ParamError(f"{at}: {where} is not a list ({_describe(obj)}); {_choices(obj)}")
        if step.value >= len(obj):
            raise ParamError(f"{at}: {step.value} is not an index of {where} (it has {len(obj)} entries)")
        return obj[step.value]
    if isinstance(obj, dict):
        if step.value not in obj:
            raise ParamError(f"{at}: no key {step.value!r}; {_choices(obj)}")
        return obj[step.value]
    if isinstance(obj, list) and all(isinstance(v, str) for v in obj):
        for entry in obj:
            name, sep, value = entry.partition("=")
            if sep and name == step.value:
                return value
        raise ParamError(f"{at}: {where} has no entry {step.value}=...; {_choices(obj)}")
    raise ParamError(f"{at}: [{step.value}] names an entry of a mapping or a key=value list, and {where} is "
                     f"{_describe(obj)}; {_choices(obj)}")


def _walk(root: Any, steps: tuple[Step, ...] | list[Step]) -> tuple[Any, str]:
    """The value the steps reach below `root`, and the canonical path walked (for messages)."""
    obj, where = root, ""
    for step in steps:
        obj = _step(obj, step, where)
        where = f"{where}{step.text()}" if where else str(step.value)
    return obj, where


def get(root: Any, path: str) -> Any:
    """The value at `path` below `root` (a SimObject tree, or a resolved configuration of dicts and lists)."""
    return _walk(root, parse(path))[0]


def set_value(root: SimObject, path: str, value: Any) -> None:
    """Set the parameter at `path` below `root` (a SimObject tree) through its declaration, so the value is checked
    (a ParamError naming it). `[i]` on a list-valued parameter replaces item i; `[key]` on a list of `key=value`
    strings (a guest's argv) replaces that entry, or appends it when there is none."""
    steps = parse(path)
    *parents, leaf = steps
    owner, where = _walk(root, parents)
    if leaf.kind == "name":
        if isinstance(owner, list):
            raise ParamError(f"{path}: {where} is {_describe(owner)}: give an index first, e.g. "
                             f"{where}[0].{leaf.value}")
        if not isinstance(owner, SimObject):
            raise ParamError(f"{path}: {where} is a value ({type(owner).__name__}), not a parameter object")
        if leaf.value not in owner._params:
            raise ParamError(f"{path}: {type(owner).__name__} has no parameter {leaf.value!r}; {_choices(owner)}")
        setattr(owner, leaf.value, value)
        return
    # A list or argv entry: the list is a parameter of the object one step up.
    if not parents or parents[-1].kind != "name":
        raise ParamError(f"{path}: {where} is not a parameter whose items can be set; set a parameter of an "
                         "object, an item of a list parameter (x[i]) or an argv entry (argv[name])")
    holder, name, current = _walk(root, parents[:-1])[0], parents[-1].value, owner
    if not isinstance(holder, SimObject) or not isinstance(current, list):
        raise ParamError(f"{path}: {where} is not a list ({_describe(current)}): {leaf.text()} names a list item "
                         "or a key=value entry")
    if holder._params[name].kind == "child":
        raise ParamError(f"{path}: {where}[{leaf.value}] is a parameter object; set one of its parameters "
                         f"({where}[{leaf.value}].name)")
    if leaf.kind == "index":
        if leaf.value >= len(current):
            raise ParamError(f"{path}: {leaf.value} is not an index of {where} (it has {len(current)} entries)")
        setattr(holder, name, [*current[:leaf.value], value, *current[leaf.value + 1:]])
        return
    if not all(isinstance(v, str) for v in current):
        raise ParamError(f"{path}: [{leaf.value}] names a key=value entry, and {where} is not a list of strings")
    kept = [a for a in current if a.partition("=")[0] != leaf.value]
    setattr(holder, name, [*kept, f"{leaf.value}={value}"])
