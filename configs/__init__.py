"""Platform and run definitions. Each module here exposes `system(**overrides) -> models.System`, reads like the
spec table it models, and marks every value a paper does not give as an assumption."""

import importlib
import pathlib

ROOT = pathlib.Path(__file__).resolve().parent.parent
WORKLOAD_BUILD = ROOT / "workloads" / "build"


class UnknownConfig(ValueError):
    """No module of configs/ has that name."""


def load(name: str):
    """The config module `configs.<name>` (a name like 'functional_default'). An unknown name raises
    UnknownConfig listing the available ones."""
    if name not in available():
        raise UnknownConfig(f"no config named {name!r}; available: {', '.join(available())}")
    return importlib.import_module(f"configs.{name}")


def available() -> list[str]:
    return sorted(p.stem for p in pathlib.Path(__file__).parent.glob("*.py") if not p.stem.startswith("_"))
