"""The parameter framework: units, validation messages, resolution, and the Rust mirror staying current."""

import subprocess
import sys

import pytest

from models.params import Param, ParamError, SimObject, parse_freq, parse_size, parse_time
from models.system import System, Workload


@pytest.mark.parametrize("text, expected", [
    ("32KiB", 32 * 1024), ("32KB", 32 * 1024), ("45MB", 45 << 20), ("1.5MiB", 3 << 19), ("64B", 64),
    ("4GiB", 4 << 30), (4096, 4096), ("768kB", 768 * 1024),
])
def test_sizes_are_binary_multiples(text, expected):
    assert parse_size(text) == expected


@pytest.mark.parametrize("text, expected", [("2.5GHz", 2_500_000_000), ("800MHz", 800_000_000), (1e9, 10**9)])
def test_frequencies_in_hz(text, expected):
    assert parse_freq(text) == expected


@pytest.mark.parametrize("text, expected", [("10ns", 10_000), ("1.5us", 1_500_000), ("0s", 0), ("833ps", 833)])
def test_times_in_picoseconds(text, expected):
    assert parse_time(text) == expected


@pytest.mark.parametrize("bad", ["32 furlongs", "KiB", "1.5B", True])
def test_malformed_sizes_are_rejected(bad):
    with pytest.raises(ValueError):
        parse_size(bad)


class Widget(SimObject):
    """A test model."""

    ways = Param.Count(8, "ways per set", min=1, max=64)
    size = Param.Size("32KiB", "capacity", min="1KiB", max="1GiB")
    policy = Param.Enum("lru", "replacement", choices=("lru", "random"))
    clock = Param.Freq("2GHz", "clock")


class Gadget(SimObject):
    """A test parent."""

    widget = Param.Child(Widget, "its widget")
    widgets = Param.Children(Widget, "more widgets")


def test_defaults_resolve_to_canonical_units():
    assert Widget().to_dict() == {"ways": 8, "size": 32768, "policy": "lru", "clock": 2_000_000_000}


def test_out_of_range_value_names_parameter_and_range():
    with pytest.raises(ParamError, match=r"Widget\.ways = 0: must be in \[1, 64\]"):
        Widget(ways=0)
    w = Widget()
    with pytest.raises(ParamError, match=r"Widget\.size = '2GiB': must be in \[1024, 1073741824\] bytes"):
        w.size = "2GiB"
    assert w.size == 32768, "a rejected assignment must leave the old value"


def test_wrong_type_and_unknown_choice_are_rejected():
    with pytest.raises(ParamError, match=r"Widget\.ways = 'many'"):
        Widget(ways="many")
    with pytest.raises(ParamError, match=r"one of 'lru', 'random'"):
        Widget(policy="fifo")
    with pytest.raises(ParamError, match=r"Widget\.ways = 2\.5"):
        Widget(ways=2.5)


def test_unknown_parameter_lists_the_real_ones():
    with pytest.raises(ParamError, match=r"Widget has no parameter assoc; its parameters are: ways, size"):
        Widget(assoc=4)
    w = Widget()
    with pytest.raises(ParamError, match="no parameter 'sise'"):
        w.sise = 4


def test_children_nest_in_to_dict_and_are_typed():
    g = Gadget(widgets=[Widget(ways=2), Widget(ways=4)])
    assert g.to_dict()["widget"]["ways"] == 8
    assert [w["ways"] for w in g.to_dict()["widgets"]] == [2, 4]
    with pytest.raises(ParamError, match=r"Gadget\.widget must be a Widget"):
        g.widget = "not a widget"
    with pytest.raises(ParamError, match=r"Gadget\.widgets\[1\] must be a Widget"):
        g.widgets = [Widget(), 3]


def test_each_instance_gets_its_own_children():
    a, b = Gadget(), Gadget()
    a.widget.ways = 16
    assert b.widget.ways == 8


def test_system_cross_parameter_checks():
    s = System(harts=8, mem_limit="4MiB", stack_size="1MiB")
    s.workload.binary = "prog"
    with pytest.raises(ParamError, match="stack_size x harts"):
        s.validate()
    s.workload = Workload()
    with pytest.raises(ParamError, match="binary is empty"):
        System().validate()


def test_every_parameter_has_a_doc():
    for cls in SimObject.registry.values():
        for name, _kind, _default, doc in cls.describe():
            assert doc.strip(), f"{cls.__name__}.{name} has no doc"


def test_rust_mirror_is_current():
    """The Rust structs are generated from these declarations; a stale mirror would let the two sides drift."""
    check = subprocess.run([sys.executable, "-m", "models.codegen", "--check"], capture_output=True, text=True)
    assert check.returncode == 0, check.stderr
