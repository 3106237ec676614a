"""The sweep and its points: a base configuration, the parameter paths set on it, every point resolved and
validated before anything runs."""

from __future__ import annotations

import importlib
from dataclasses import dataclass, field
from typing import Any, Callable

from models import param_path
from models.params import ParamError, SimObject
from models.system import System

from .data_set import data_set_key, shares_data_set
from .space import Space
from .store import point_key

RUN_EVALUATOR = "drivers.sweep:evaluate_run"
CAPACITY_EVALUATOR = "drivers.sweep:evaluate_capacity"


@dataclass
class Base:
    """The base configuration: `configs.<config>.system(**kwargs)`, or `module:function(**kwargs)` when `config`
    names one. Plain data, so workers can rebuild it."""
    config: str
    kwargs: dict[str, Any] = field(default_factory=dict)

    def __init__(self, config: str, **kwargs: Any):
        self.config, self.kwargs = config, kwargs

    def build(self) -> System:
        if ":" in self.config:
            return _resolve_callable(self.config)(**self.kwargs)
        import configs

        return configs.load(self.config).system(**self.kwargs)


def set_path(system: SimObject, path: str, value: Any) -> None:
    """Set one parameter by its path (models/param_path.py: `caches.llc.size`, `sockets[1].cores`;
    `workload.argv[name]` replaces, or appends, the guest argument `name=value`). Errors are ParamErrors that name
    the path."""
    try:
        param_path.set_value(system, path, value)
    except ParamError as err:
        raise ParamError(f"parameter {path!r} = {value!r}: {err}") from None


@dataclass
class Sweep:
    """A named design space over a base configuration; `evaluator` ('module:function') measures one point (a
    simulated run by default; CAPACITY_EVALUATOR for the capacity search), with `options` passed to it."""
    name: str
    base: Base
    space: Space
    ties: dict[str, tuple[str, ...]] = field(default_factory=dict)
    evaluator: str = RUN_EVALUATOR
    options: dict[str, Any] = field(default_factory=dict)
    # Points sharing a data set load it once and restore it (module doc): the default (issue 28), since a large data
    # set's load is most of a point's host time. False makes every point (every probe) load its own.
    share_checkpoint: bool = True
    # Where the shared checkpoints live: in <checkpoints>/checkpoints/, '' = the sweep's own store. A folder shared
    # by several sweeps (the figures use the sweeps' root, results/sweeps) lets them restore one load of the same
    # data set (the key covers the binary, its arguments, the engine and everything a restore refuses to change).
    # One sweep process at a time per folder.
    checkpoints: str = ""
    # An existing checkpoint folder (a load made elsewhere: another store, another checkout, `load_memory.py`) that
    # every point sharing a data set restores instead of loading it; checked against each point's data set before
    # anything runs (checkpoints.check_existing), a mismatch being a ParamError that names what differs.
    restore_from: str = ""

    def resolve(self) -> list["Point"]:
        """Every point, resolved and validated (ParamError naming the parameter before anything runs). Points whose
        keys coincide are one point."""
        varied = {param_path.canonical(p) for p in self.space.paths()}
        for tied in self.ties:
            if param_path.canonical(tied) not in varied:
                raise ParamError(f"sweep {self.name!r}: tie on {tied!r}, which the sweep does not vary")
        evaluator = _resolve_callable(self.evaluator)
        # An evaluator whose options have defaults that changed (the capacity search's, session 24) says what the
        # key names (`key_options`), so a point stored under another default is not reused as this one.
        keyed = getattr(evaluator, "key_options", None)
        measure = {"evaluator": self.evaluator, "options": keyed(self.options) if keyed else self.options}
        # Only an evaluator that simulates the point's own configuration can restore it (not a synthetic one).
        share = self.share_checkpoint and getattr(evaluator, "restores", False)
        points: dict[str, Point] = {}
        for params in self.space.points():
            system = build_point(self.base, params, self.ties, sweep=self.name)
            config = system.to_dict()
            data_set = data_set_key(config) if share and shares_data_set(system) else ""
            # A restored point warms up differently from one that loads: the key says which it is.
            key = point_key(config, {**measure, "restored": True} if data_set else measure)
            points.setdefault(key, Point(key, len(points), params, self.base, self.ties, self.evaluator,
                                         self.options, data_set))
        return list(points.values())


@dataclass
class Point:
    key: str
    index: int
    params: dict[str, Any]
    base: Base
    ties: dict[str, tuple[str, ...]]
    evaluator: str
    options: dict[str, Any]
    data_set: str = ""        # the shared data set's key ('' : the point loads its own)
    restore_from: str = ""    # set by the runner: the shared checkpoint the point restores

    def system(self) -> System:
        """The point's configuration, as its key describes it."""
        return build_point(self.base, self.params, self.ties)

    def run_system(self) -> System:
        """The configuration the point runs: its own, restored from the shared checkpoint when it has one."""
        system = self.system()
        system.restore_from = self.restore_from
        return system


def build_point(base: Base, params: dict[str, Any], ties: dict[str, tuple[str, ...]], sweep: str = "") -> System:
    try:
        system = base.build()
        followers = {param_path.canonical(leader): paths for leader, paths in ties.items()}
        for path, value in params.items():
            set_path(system, path, value)
            for follower in followers.get(param_path.canonical(path), ()):
                set_path(system, follower, value)
        system.validate()
    except ParamError as err:
        where = f"sweep {sweep!r}, point {params}" if sweep else f"point {params}"
        raise ParamError(f"{where}: {err}") from None
    return system



def _resolve_callable(name: str) -> Callable:
    module, _, attr = name.partition(":")
    return getattr(importlib.import_module(module), attr)


