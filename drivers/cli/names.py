"""Names the command line takes (configs, parameter paths, subcommands, config arguments): listing them, and "did
you mean" for a name that is not one of them (difflib's closest matches)."""

from __future__ import annotations

import difflib
import inspect
import json
from typing import Any, Callable, Iterator

from models.params import ParamError, SimObject


def close_matches(name: str, choices: list[str], n: int = 3) -> list[str]:
    """The known names nearest to `name`, best first (none when nothing is close)."""
    return difflib.get_close_matches(name, choices, n=n, cutoff=0.6)


def suggestion(name: str, choices: list[str]) -> str:
    """`did you mean 'a' or 'b'?` naming the closest known names, else `known: ...` listing them all."""
    near = close_matches(name, choices)
    if near:
        return f"did you mean {' or '.join(repr(n) for n in near)}?"
    return f"known: {', '.join(choices)}"


def unknown(what: str, name: str, choices: list[str]) -> str:
    """The message for an unknown name: the closest known ones when some are close, else every known one."""
    return f"unknown {what} {name!r}; {suggestion(name, choices)}"


def one_of(what: str, choices) -> Callable[[str], str]:
    """An argparse `type` accepting one of `choices` and answering any other name with the closest ones."""
    import argparse

    def check(name: str) -> str:
        if name not in choices:
            raise argparse.ArgumentTypeError(unknown(what, name, list(choices)))
        return name

    return check


def walk(obj: SimObject, prefix: str = "") -> Iterator[tuple[str, SimObject, str]]:
    """(path, owner, parameter name) for every parameter under `obj`, in the --set grammar: `caches.llc.size`,
    `nics.1.port_gbps` (an entry of a list of parameter objects)."""
    for name, param in obj._params.items():
        path = f"{prefix}{name}"
        if param.kind != "child":
            yield path, obj, name
        elif param.many:
            for i, child in enumerate(getattr(obj, name)):
                yield from walk(child, f"{path}.{i}.")
        else:
            yield from walk(getattr(obj, name), f"{path}.")


def object_paths(obj: SimObject, prefix: str = "") -> Iterator[str]:
    """The path of every parameter object under `obj` (`caches`, `caches.llc`, `nics.0`)."""
    for name, param in obj._params.items():
        if param.kind != "child":
            continue
        children = getattr(obj, name) if param.many else [getattr(obj, name)]
        for i, child in enumerate(children):
            path = f"{prefix}{name}" + (f".{i}" if param.many else "")
            yield path
            yield from object_paths(child, f"{path}.")


def path_hint(system: SimObject, path: str, *, objects: bool = False) -> str:
    """`; did you mean 'a' or 'b'?` naming the parameter paths of `system` closest to `path` (with `objects`,
    parameter objects such as `caches.llc` too), or a pointer to `kvsim params` when none is close."""
    leaves = [p for p, _, _ in walk(system)]
    known = leaves + (list(object_paths(system)) if objects else [])
    # A path whose last part is right but sits elsewhere (`rob_entries` for `core.rob_entries`) is close too.
    tail = [p for p in leaves if p.rsplit(".", 1)[-1] == path.rsplit(".", 1)[-1]]
    near = close_matches(path, known) or tail[:3]
    if near:
        return f"; did you mean {' or '.join(repr(n) for n in near)}?"
    return " (`kvsim params` lists every parameter)"


def check_path(system: SimObject, path: str, *, objects: bool = False) -> None:
    """Raise ParamError naming the closest paths when `path` is not a parameter of `system` (with `objects`, a
    parameter object such as `caches.llc` is accepted too)."""
    known = [p for p, _, _ in walk(system)] + (list(object_paths(system)) if objects else [])
    if path not in known:
        raise ParamError(f"{type(system).__name__} has no parameter {path!r}{path_hint(system, path, objects=objects)}")


def parse_value(text: str) -> Any:
    """A command-line value: JSON when it parses (numbers, lists, booleans), else the string itself."""
    try:
        return json.loads(text)
    except json.JSONDecodeError:
        return text


def config_arguments(module) -> dict[str, inspect.Parameter]:
    """The keyword arguments a config's system() takes (Mercury's `core_kind`, `cores`, ...)."""
    params = inspect.signature(module.system).parameters
    return {n: p for n, p in params.items() if p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY)}


def parse_config_args(module, assignments: list[str]) -> dict[str, Any]:
    """`--arg NAME=VALUE` items as keyword arguments of the config's system(); an unknown name is refused with
    the closest ones."""
    known = config_arguments(module)
    out: dict[str, Any] = {}
    for item in assignments:
        name, sep, text = item.partition("=")
        name = name.strip()
        if not sep:
            raise ParamError(f"--arg {item!r}: expected NAME=VALUE")
        if name not in known:
            raise ParamError(f"--arg {item!r}: " + unknown(f"argument of {module.__name__}.system()", name,
                                                           list(known)))
        out[name] = parse_value(text)
    return out
