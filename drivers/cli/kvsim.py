"""The `kvsim` command (pyproject.toml [project.scripts]): one entry point for every workflow step.

    kvsim run [CONFIG] [--set PATH=VALUE] [--arg NAME=VALUE] [--mcpat PATH]   # one simulation
    kvsim sweep FILE                   # a design-space sweep (a Python file defining SWEEP)
    kvsim figures [--study NAME]       # the paper's studies: sweeps, figures, reports (make figures)
    kvsim validate                     # the Xeon E5-2697 v2 beside its published measurements
    kvsim power                        # area and power of the two platforms (no simulation)
    kvsim params [PATH]                # parameters: documentation, type, unit, range, default, value
    kvsim configs [NAME]               # the configs and their system() arguments
    kvsim bench                        # simulation speed (make bench)

`kvsim COMMAND --help` describes each command's options.
"""

from __future__ import annotations

import importlib
import sys

# command -> (module of drivers.cli, its entry function, one-line help)
COMMANDS = {
    "run": ("run", "main", "run one simulation and print its summary"),
    "sweep": ("sweep", "main", "run a design-space sweep (resumable) and write its table"),
    "figures": ("figures", "main", "run the paper's studies and draw their figures"),
    "validate": ("validate_xeon", "main", "the Xeon E5-2697 v2 runs beside the published measurements"),
    "power": ("power_report", "main", "area, peak power and operating points of the platforms"),
    "params": ("params", "main", "list parameters with documentation, type, unit, range, default and value"),
    "configs": ("params", "configs_main", "list the configs and the arguments of their system()"),
    "bench": ("bench", "run_all", "simulation speed against qemu-riscv64 (make bench)"),
}


def usage() -> str:
    width = max(map(len, COMMANDS))
    return "usage: kvsim COMMAND [ARGS]\n\ncommands:\n" + "\n".join(
        f"  {name:<{width}}  {text}" for name, (_, _, text) in COMMANDS.items()) + \
        "\n\n`kvsim COMMAND --help` for a command's options."


def main(argv: list[str] | None = None) -> int:
    if sys.argv and sys.argv[0].endswith("__main__.py"):
        sys.argv[0] = "kvsim"          # `python -m drivers.cli`: the commands' help and messages say kvsim
    argv = list(sys.argv[1:] if argv is None else argv)
    if not argv or argv[0] in ("-h", "--help", "help"):
        print(usage())
        return 0 if argv else 2
    if argv[0] == "--version":
        from models.provenance import kvsim_version

        print(f"kvsim {kvsim_version() or '(not installed)'}")
        return 0
    name, rest = argv[0], argv[1:]
    if name not in COMMANDS:
        from .names import unknown

        print(f"kvsim: {unknown('command', name, list(COMMANDS))}\n\n{usage()}", file=sys.stderr)
        return 2
    module, function, _ = COMMANDS[name]
    entry = getattr(importlib.import_module(f"drivers.cli.{module}"), function)
    return entry(rest) or 0


if __name__ == "__main__":
    raise SystemExit(main())
