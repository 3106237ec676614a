"""Typed, documented, validated simulation parameters (in the spirit of gem5's SimObject params).

Every model declares its parameters once, here on the Python side, as class attributes::

    class Cache(SimObject):
        size = Param.Size("32KiB", "capacity", min="1KiB", max="1GiB")
        assoc = Param.Int(8, "ways per set", min=1, max=64)

An instance validates every assignment and names the parameter and the allowed range when a value is wrong.
`to_dict()` gives the resolved configuration (sizes in bytes, frequencies in Hz, times in picoseconds), which is
what the engine receives as JSON and what a run writes to config.json. The Rust mirror of each class is generated
from these declarations by `models.codegen`, so a parameter is never written down twice.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Callable, ClassVar

__all__ = ["Param", "ParamError", "SimObject", "parse_size", "parse_freq", "parse_time"]


class ParamError(ValueError):
    """A parameter value is malformed or out of its allowed range."""


# Capacities use binary multiples whatever the spelling: "32KB" is 32768 bytes, as architects mean it for caches.
_SIZE_UNITS = {"": 1, "B": 1, "K": 1 << 10, "M": 1 << 20, "G": 1 << 30, "T": 1 << 40}
_FREQ_UNITS = {"HZ": 1, "KHZ": 10**3, "MHZ": 10**6, "GHZ": 10**9}
_TIME_UNITS_PS = {"PS": 1, "NS": 10**3, "US": 10**6, "MS": 10**9, "S": 10**12}
_NUMBER_UNIT = re.compile(r"^\s*([0-9]*\.?[0-9]+(?:[eE][-+]?[0-9]+)?)\s*([A-Za-z/]*)\s*$")


def _split(text: str) -> tuple[float, str]:
    m = _NUMBER_UNIT.match(text)
    if not m:
        raise ValueError(f"cannot read {text!r} as a number with a unit")
    return float(m.group(1)), m.group(2)


def parse_size(value: int | str) -> int:
    """'32KiB', '30MB', '4GiB', '64B' or a plain integer -> bytes."""
    if isinstance(value, bool):
        raise ValueError("a size cannot be a bool")
    if isinstance(value, int):
        return value
    number, unit = _split(str(value))
    key = unit.upper().replace("IB", "").rstrip("B") if unit.upper() not in ("B", "") else ""
    if key not in _SIZE_UNITS:
        raise ValueError(f"unknown size unit {unit!r} (use B, KiB, MiB, GiB, TiB)")
    result = number * _SIZE_UNITS[key]
    if result != int(result):
        raise ValueError(f"{value!r} is not a whole number of bytes")
    return int(result)


def parse_freq(value: int | float | str) -> int:
    """'2.5GHz', '800MHz' or a number in Hz -> Hz."""
    if isinstance(value, bool):
        raise ValueError("a frequency cannot be a bool")
    if isinstance(value, (int, float)):
        return int(round(value))
    number, unit = _split(str(value))
    if unit.upper() not in _FREQ_UNITS:
        raise ValueError(f"unknown frequency unit {unit!r} (use Hz, kHz, MHz, GHz)")
    return int(round(number * _FREQ_UNITS[unit.upper()]))


def parse_time(value: int | str) -> int:
    """'10ns', '1.5us', '0s' or an integer number of picoseconds -> picoseconds."""
    if isinstance(value, bool):
        raise ValueError("a time cannot be a bool")
    if isinstance(value, int):
        return value
    number, unit = _split(str(value))
    if unit.upper() not in _TIME_UNITS_PS:
        raise ValueError(f"unknown time unit {unit!r} (use ps, ns, us, ms, s)")
    return int(round(number * _TIME_UNITS_PS[unit.upper()]))


def _parse_int(value: Any) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, float, str)):
        raise ValueError(f"{value!r} is not an integer")
    if isinstance(value, str):
        value = float(value) if any(c in value for c in ".eE") else int(value, 0)
    if isinstance(value, float):
        if value != int(value):
            raise ValueError(f"{value!r} is not a whole number")
        value = int(value)
    return value


def _parse_float(value: Any) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float, str)):
        raise ValueError(f"{value!r} is not a number")
    return float(value)


def _parse_bool(value: Any) -> bool:
    if isinstance(value, bool):
        return value
    raise ValueError(f"{value!r} is not True or False")


def _parse_str(value: Any) -> str:
    if not isinstance(value, str):
        raise ValueError(f"{value!r} is not a string")
    return value


def _parse_coords(value: Any) -> list[list[int]]:
    """A list of (x, y) router coordinates: [[0, 0], [5, 4]] (tuples are accepted)."""
    if isinstance(value, (str, bytes)) or not hasattr(value, "__iter__"):
        raise ValueError(f"{value!r} is not a list of (x, y) pairs")
    out = []
    for pair in value:
        if isinstance(pair, (str, bytes)) or not hasattr(pair, "__len__") or len(pair) != 2:
            raise ValueError(f"{pair!r} is not an (x, y) pair")
        x, y = (_parse_int(v) for v in pair)
        if x < 0 or y < 0:
            raise ValueError(f"{pair!r} has a negative coordinate")
        out.append([x, y])
    return out


def _parse_strlist(value: Any) -> list[str]:
    if isinstance(value, str) or not all(isinstance(v, str) for v in value):
        raise ValueError(f"{value!r} is not a list of strings")
    return list(value)


@dataclass(frozen=True)
class _Kind:
    """How one kind of parameter is read, shown and mirrored in Rust."""

    name: str
    parse: Callable[[Any], Any]
    rust: str
    unit: str = ""


_KINDS = {
    "int": _Kind("int", _parse_int, "i64"),
    "count": _Kind("count", _parse_int, "u64"),
    "size": _Kind("size", parse_size, "u64", "bytes"),
    "freq": _Kind("freq", parse_freq, "u64", "Hz"),
    "time": _Kind("time", parse_time, "u64", "ps"),
    "float": _Kind("float", _parse_float, "f64"),
    "bool": _Kind("bool", _parse_bool, "bool"),
    "str": _Kind("str", _parse_str, "String"),
    "strlist": _Kind("strlist", _parse_strlist, "Vec<String>"),
    "enum": _Kind("enum", _parse_str, "String"),
    "coords": _Kind("coords", _parse_coords, "Vec<[u64; 2]>"),
}


class Param:
    """One declared parameter. Build with the kind constructors: Param.Int, Param.Size, Param.Freq, ..."""

    def __init__(self, kind: str, default: Any, doc: str, *, min: Any = None, max: Any = None,
                 choices: tuple[str, ...] | None = None, child: type | None = None, many: bool = False):
        if not doc:
            raise TypeError("every parameter needs a one-line doc")
        self.kind = kind
        self.doc = doc
        self.choices = tuple(choices) if choices else None
        self.child = child
        self.many = many
        self.name = "?"          # set by SimObject when the class is built
        self.owner = "?"
        if kind == "child":
            self.default = default
            self.min = self.max = None
            return
        parse = _KINDS[kind].parse
        self.min = None if min is None else parse(min)
        self.max = None if max is None else parse(max)
        self.default = default if default is None else self._check("<default>", default)

    def __get__(self, instance: Any, owner: type) -> Any:
        # On the class, the declaration; on an instance, its resolved value.
        return self if instance is None else instance._values[self.name]

    # Kind constructors ------------------------------------------------------------------------------------------
    @classmethod
    def Int(cls, default, doc, *, min=None, max=None):
        """A signed integer (Rust i64)."""
        return cls("int", default, doc, min=min, max=max)

    @classmethod
    def Count(cls, default, doc, *, min=0, max=None):
        """A non-negative integer: entries, ways, cores, cycles (Rust u64)."""
        return cls("count", default, doc, min=min, max=max)

    @classmethod
    def Size(cls, default, doc, *, min=None, max=None):
        """A capacity: '32KiB', '45MB', 64 (bytes)."""
        return cls("size", default, doc, min=min, max=max)

    @classmethod
    def Freq(cls, default, doc, *, min=None, max=None):
        """A clock frequency: '2.5GHz'."""
        return cls("freq", default, doc, min=min, max=max)

    @classmethod
    def Time(cls, default, doc, *, min=None, max=None):
        """A duration: '10ns', kept in picoseconds (the engine's tick)."""
        return cls("time", default, doc, min=min, max=max)

    @classmethod
    def Float(cls, default, doc, *, min=None, max=None):
        return cls("float", default, doc, min=min, max=max)

    @classmethod
    def Bool(cls, default, doc):
        return cls("bool", default, doc)

    @classmethod
    def Str(cls, default, doc):
        return cls("str", default, doc)

    @classmethod
    def StrList(cls, default, doc):
        return cls("strlist", list(default), doc)

    @classmethod
    def Coords(cls, default, doc):
        """A list of (x, y) positions on a grid (router coordinates of a mesh), each whole and non-negative."""
        return cls("coords", [list(p) for p in default], doc)

    @classmethod
    def Enum(cls, default, doc, choices):
        return cls("enum", default, doc, choices=choices)

    @classmethod
    def Child(cls, child_class, doc):
        """A nested SimObject, built with its defaults unless the user gives one."""
        return cls("child", None, doc, child=child_class)

    @classmethod
    def Children(cls, child_class, doc):
        """A list of nested SimObjects of one class (cores, channels, ports)."""
        return cls("child", None, doc, child=child_class, many=True)

    # Validation ---------------------------------------------------------------------------------------------------
    def _range_text(self) -> str:
        if self.choices:
            return "one of " + ", ".join(repr(c) for c in self.choices)
        if self.kind in ("bool", "str", "strlist", "coords"):
            return "(see its doc)"
        lo = "-inf" if self.min is None else self.min
        hi = "inf" if self.max is None else self.max
        unit = _KINDS[self.kind].unit
        return f"in [{lo}, {hi}]" + (f" {unit}" if unit else "")

    def _check(self, where: str, value: Any) -> Any:
        try:
            parsed = _KINDS[self.kind].parse(value)
        except ValueError as err:
            raise ParamError(f"{where}.{self.name} = {value!r}: {err}; must be {self._kind_text()} "
                             f"{self._range_text()}") from None
        if self.choices and parsed not in self.choices:
            raise ParamError(f"{where}.{self.name} = {value!r}: must be {self._range_text()}")
        if (self.min is not None and parsed < self.min) or (self.max is not None and parsed > self.max):
            raise ParamError(f"{where}.{self.name} = {value!r}: must be {self._range_text()}")
        return parsed

    def _kind_text(self) -> str:
        return {"int": "an integer", "count": "a whole number", "size": "a size", "freq": "a frequency",
                "time": "a time", "float": "a number", "bool": "True or False", "str": "a string",
                "strlist": "a list of strings", "enum": "a string",
                "coords": "a list of (x, y) pairs"}[self.kind]

    def resolve(self, where: str, value: Any) -> Any:
        if self.kind != "child":
            return None if value is None and self.default is None else self._check(where, value)
        if self.many:
            items = list(value)
            for i, item in enumerate(items):
                if not isinstance(item, self.child):
                    raise ParamError(f"{where}.{self.name}[{i}] must be a {self.child.__name__}")
            return items
        if not isinstance(value, self.child):
            raise ParamError(f"{where}.{self.name} must be a {self.child.__name__}, not {type(value).__name__}")
        return value

    def fresh_default(self) -> Any:
        if self.kind == "child":
            return [] if self.many else self.child()
        if isinstance(self.default, list):
            return [list(v) if isinstance(v, list) else v for v in self.default]
        return self.default

    @property
    def rust_type(self) -> str:
        if self.kind == "child":
            return f"Vec<{self.child.__name__}>" if self.many else self.child.__name__
        base = _KINDS[self.kind].rust
        if self.kind == "int" and self.min is not None and self.min >= 0:
            base = "u64"
        return f"Option<{base}>" if self.default is None else base


class SimObject:
    """Base of every model's parameter class. Subclasses declare Params as class attributes."""

    _params: ClassVar[dict[str, Param]] = {}
    registry: ClassVar[dict[str, type["SimObject"]]] = {}

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        params: dict[str, Param] = {}
        for base in reversed(cls.__mro__[1:]):
            params.update(getattr(base, "_params", {}))
        for name, value in list(vars(cls).items()):
            if isinstance(value, Param):
                value.name, value.owner = name, cls.__name__
                params[name] = value
        cls._params = params
        if cls.__name__ in SimObject.registry and SimObject.registry[cls.__name__].__module__ != cls.__module__:
            raise TypeError(f"two SimObject classes are named {cls.__name__}: names must be unique (Rust mirror)")
        SimObject.registry[cls.__name__] = cls

    def __init__(self, **values: Any):
        object.__setattr__(self, "_values", {})
        unknown = set(values) - set(self._params)
        if unknown:
            raise ParamError(f"{type(self).__name__} has no parameter {', '.join(sorted(unknown))}; "
                             f"its parameters are: {', '.join(self._params)}")
        for name, param in self._params.items():
            setattr(self, name, values[name] if name in values else param.fresh_default())

    def __setattr__(self, name: str, value: Any) -> None:
        param = self._params.get(name)
        if param is None:
            raise ParamError(f"{type(self).__name__} has no parameter {name!r}; "
                             f"its parameters are: {', '.join(self._params)}")
        self._values[name] = param.resolve(type(self).__name__, value)

    def __repr__(self) -> str:
        inner = ", ".join(f"{k}={v!r}" for k, v in self._values.items())
        return f"{type(self).__name__}({inner})"

    def validate(self) -> None:
        """Checks that involve more than one parameter. Subclasses extend it; raise ParamError."""
        for name, param in self._params.items():
            if param.kind == "child":
                for child in (self._values[name] if param.many else [self._values[name]]):
                    child.validate()

    def to_dict(self) -> dict[str, Any]:
        """The resolved configuration: plain JSON-ready values in canonical units."""
        out: dict[str, Any] = {}
        for name, param in self._params.items():
            value = self._values[name]
            if param.kind == "child":
                value = [v.to_dict() for v in value] if param.many else value.to_dict()
            out[name] = value
        return out

    @classmethod
    def describe(cls) -> list[tuple[str, str, Any, str]]:
        """(name, kind, default, doc) for every parameter: for help screens and docs."""
        return [(n, p.kind, p.default, p.doc) for n, p in cls._params.items()]
