"""Design spaces: each gives a list of points, a point being {parameter path: value}."""

from __future__ import annotations

import itertools
import random
from dataclasses import dataclass
from typing import Any

from models.params import ParamError


class Space:
    def paths(self) -> list[str]:
        raise NotImplementedError

    def points(self) -> list[dict[str, Any]]:
        raise NotImplementedError


def _check_axes(kind: str, axes: dict[str, Any]) -> None:
    if not axes:
        raise ParamError(f"{kind}: no parameter to vary (an empty sweep)")
    for path, values in axes.items():
        if isinstance(values, (list, tuple)) and len(values) == 0:
            raise ParamError(f"{kind}: parameter {path!r} has no values (an empty grid)")


@dataclass
class Grid(Space):
    """Every combination of the axes' values (the first axis varies slowest)."""
    axes: dict[str, list[Any]]

    def __post_init__(self):
        _check_axes("Grid", self.axes)

    def paths(self):
        return list(self.axes)

    def points(self):
        return [dict(zip(self.axes, combo)) for combo in itertools.product(*self.axes.values())]


@dataclass
class List(Space):
    """Explicit points, each a {path: value} dict."""
    items: list[dict[str, Any]]

    def __post_init__(self):
        if not self.items:
            raise ParamError("List: no points (an empty sweep)")

    def paths(self):
        return list(dict.fromkeys(p for item in self.items for p in item))

    def points(self):
        return [dict(item) for item in self.items]


@dataclass
class Zip(Space):
    """The axes walked together: point i takes the i-th value of every axis (all axes the same length)."""
    axes: dict[str, list[Any]]

    def __post_init__(self):
        _check_axes("Zip", self.axes)
        lengths = {path: len(v) for path, v in self.axes.items()}
        if len(set(lengths.values())) != 1:
            raise ParamError(f"Zip: the axes must have the same length, not {lengths}")

    def paths(self):
        return list(self.axes)

    def points(self):
        return [dict(zip(self.axes, combo)) for combo in zip(*self.axes.values())]


def _sample(path: str, spec: Any, u: float) -> Any:
    """A value for `path` from a uniform u in [0, 1): `spec` is a list of choices or a (low, high) range; integer
    ranges give integers (both ends included), float ranges floats."""
    if isinstance(spec, list):
        return spec[min(int(u * len(spec)), len(spec) - 1)]
    if not (isinstance(spec, tuple) and len(spec) == 2):
        raise ParamError(f"parameter {path!r}: give a list of choices or a (low, high) range, not {spec!r}")
    low, high = spec
    if high < low:
        raise ParamError(f"parameter {path!r}: range ({low}, {high}) is empty")
    if isinstance(low, int) and isinstance(high, int):
        return low + min(int(u * (high - low + 1)), high - low)
    return low + u * (high - low)


@dataclass
class _Sampled(Space):
    """n points sampled (seeded) from each axis' choices or (low, high) range; subclasses say how."""
    axes: dict[str, Any]
    n: int
    seed: int = 1

    def __post_init__(self):
        _check_axes(type(self).__name__, self.axes)
        if self.n < 1:
            raise ParamError(f"{type(self).__name__}: n = {self.n}: must be at least 1")

    def paths(self):
        return list(self.axes)


@dataclass
class Random(_Sampled):
    """n points drawn independently and uniformly (seeded) from each axis' choices or (low, high) range."""

    def points(self):
        rng = random.Random(self.seed)
        return [{path: _sample(path, spec, rng.random()) for path, spec in self.axes.items()} for _ in range(self.n)]


@dataclass
class LatinHypercube(_Sampled):
    """n points whose projections on every axis fall one in each of n equal strata (scipy's LHS, seeded)."""

    def points(self):
        from scipy.stats import qmc

        unit = qmc.LatinHypercube(d=len(self.axes), seed=self.seed).random(self.n)
        return [{path: _sample(path, spec, float(u)) for (path, spec), u in zip(self.axes.items(), row)}
                for row in unit]


@dataclass
class Product(Space):
    """Every combination of the spaces' points (e.g. a Zip of core shapes times a Grid of datasets)."""
    spaces: list[Space]

    def __init__(self, *spaces: Space):
        if not spaces:
            raise ParamError("Product: no spaces (an empty sweep)")
        self.spaces = list(spaces)

    def paths(self):
        return list(dict.fromkeys(p for s in self.spaces for p in s.paths()))

    def points(self):
        return [dict(itertools.chain.from_iterable(p.items() for p in combo))
                for combo in itertools.product(*(s.points() for s in self.spaces))]

