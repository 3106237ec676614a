"""kvsim models: the Python side of every simulation model (parameters) and the entry point to the Rust engine."""

from .params import Param, ParamError, SimObject
from .system import System, Workload

__all__ = ["Param", "ParamError", "SimObject", "System", "Workload"]
