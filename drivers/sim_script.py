"""Load a script of sim-scripts/ as a module, from its file: scripts are not a package, and a script that uses another
script's functions (or a test of a script) must not insert into sys.path (tests/test_workflow.py)."""
from __future__ import annotations

import importlib.util
import pathlib
import sys
from types import ModuleType

SIM_SCRIPTS = pathlib.Path(__file__).resolve().parent.parent / "sim-scripts"


def load(name: str) -> ModuleType:
    """sim-scripts/<name>.py as a module (its `if __name__ == "__main__"` block does not run)."""
    path = SIM_SCRIPTS / f"{name}.py"
    if not path.is_file():
        raise FileNotFoundError(f"no script {path}")
    spec = importlib.util.spec_from_file_location(f"sim_scripts.{name}", path)
    module = importlib.util.module_from_spec(spec)
    # Registered while it runs, as an import would: dataclasses (and pickling) look the module up by its name.
    sys.modules[spec.name] = module
    try:
        spec.loader.exec_module(module)
    except BaseException:
        del sys.modules[spec.name]
        raise
    return module
