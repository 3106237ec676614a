"""`kvsim params [PATH]`: every parameter (or those under PATH) with its documentation, type, unit, range,
default and the value a config gives it; `kvsim configs [NAME]`: the configs, each with its summary and the
arguments of its system().

    kvsim params caches.llc                     # the LLC's parameters, as configured by kvs_default
    kvsim params core.rob_entries --config mercury --arg core_kind=a15
    kvsim configs                               # every config, one line each
    kvsim configs mercury                       # one config's whole description and arguments
"""

from __future__ import annotations

import argparse
import inspect
import json

from rich.console import Console
from rich.table import Table

import configs
from models.params import _KINDS, ParamError

from .names import check_path, config_arguments, parse_config_args, unknown, walk

DEFAULT_CONFIG = "kvs_default"


def load_config(name: str):
    """The config module `name`, or a ParamError naming the closest configs."""
    if name not in configs.available():
        raise ParamError(unknown("config", name, configs.available()))
    return configs.load(name)


def _shown(value) -> str:
    return json.dumps(value) if isinstance(value, (list, dict, bool)) or value is None else str(value)


def param_rows(system, prefix: str | None) -> list[dict[str, str]]:
    """One row per parameter at or under `prefix` (every parameter when None)."""
    if prefix:
        check_path(system, prefix, objects=True)
    rows = []
    for path, owner, name in walk(system):
        if prefix and path != prefix and not path.startswith(prefix + "."):
            continue
        param = owner._params[name]
        rows.append({"path": path, "type": param.kind, "unit": _KINDS[param.kind].unit,
                     "range": param._range_text(), "default": _shown(param.default),
                     "value": _shown(getattr(owner, name)), "doc": param.doc, "owner": type(owner).__name__})
    return rows


def summary_line(module) -> str:
    """A config's first sentence, from its docstring's first paragraph and never from inside a table."""
    text = inspect.getdoc(module) or ""
    lines = []
    for line in text.splitlines():
        if not line.strip() or line.lstrip().startswith("|"):
            break
        lines.append(line.strip())
    paragraph = " ".join(lines)
    end = paragraph.find(". ")
    return paragraph if end < 0 else paragraph[:end + 1]


def signature_text(module) -> str:
    args = config_arguments(module)
    return ", ".join(f"{n}={p.default!r}" if p.default is not inspect.Parameter.empty else n
                     for n, p in args.items())


def list_configs(console: Console, name: str | None = None) -> None:
    if name is not None:
        module = load_config(name)
        console.print(f"[bold]{name}[/]  system({signature_text(module)})", highlight=False)
        console.print(inspect.getdoc(module) or "", markup=False, highlight=False)
        return
    for name in configs.available():
        module = configs.load(name)
        console.print(f"[bold]{name}[/]: {summary_line(module)}", highlight=False)
        args = signature_text(module)
        if args:
            console.print(f"    --arg: {args}", markup=False, highlight=False)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="kvsim params", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("path", nargs="?", help="a parameter or parameter object (caches.llc); default: all")
    parser.add_argument("--config", default=DEFAULT_CONFIG, help="whose values to show (default kvs_default)")
    parser.add_argument("--arg", action="append", default=[], metavar="NAME=VALUE",
                        help="an argument of the config's system()")
    parser.add_argument("--json", action="store_true", help="print the rows as JSON")
    args = parser.parse_args(argv)
    console = Console()
    try:
        module = load_config(args.config)
        system = module.system(**parse_config_args(module, args.arg))
        rows = param_rows(system, args.path)
    except (ParamError, ValueError) as err:
        console.print(f"[bold red]{type(err).__name__}[/]: ", end="")
        console.print(str(err), markup=False, highlight=False)
        return 2
    if args.json:
        print(json.dumps(rows, indent=1))
        return 0
    table = Table(title=f"{args.path or 'every parameter'} ({args.config})", show_lines=True)
    for column in ("path", "type", "unit", "range", "default", "value", "doc"):
        table.add_column(column, overflow="fold")
    for row in rows:
        table.add_row(*(row[c] for c in ("path", "type", "unit", "range", "default", "value", "doc")))
    Console(width=max(console.width, 160)).print(table)
    return 0


def configs_main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="kvsim configs", description="List the configs of configs/.")
    parser.add_argument("name", nargs="?", help="show this config's whole description and system() arguments")
    args = parser.parse_args(argv)
    console = Console()
    try:
        list_configs(console, args.name)
    except ParamError as err:
        console.print(f"[bold red]{type(err).__name__}[/]: ", end="")
        console.print(str(err), markup=False, highlight=False)
        return 2
    return 0
