"""Parameter classes of the timing models (models/core.py, models/cache.py, models/dram.py): defaults, validation
messages that name the parameter and its range, cross-parameter checks, and the Rust mirror staying current."""

import json
import subprocess
import sys

import pytest

from models.cache import Cache, CacheHierarchy
from models.core import Core
from models.dram import MemoryController
from models.params import ParamError, SimObject


@pytest.mark.parametrize("cls", [Core, Cache, CacheHierarchy, MemoryController])
def test_defaults_validate_and_serialise(cls):
    obj = cls()
    obj.validate()
    json.dumps(obj.to_dict())


def test_every_timing_parameter_is_documented_and_ranged():
    for cls in (Core, Cache, CacheHierarchy, MemoryController):
        for name, param in cls._params.items():
            assert param.doc.strip(), f"{cls.__name__}.{name} has no doc"
            if param.kind in ("count", "int", "size", "freq", "time", "float"):
                assert param.min is not None and param.max is not None, f"{cls.__name__}.{name} has no range"


def test_core_defaults_are_the_target_core():
    d = Core().to_dict()
    assert (d["model"], d["issue_width"], d["rob_entries"], d["clock"]) == ("ooo", 3, 64, 2_500_000_000)


@pytest.mark.parametrize("cls, name, value, message", [
    (Core, "rob_entries", 0, r"Core\.rob_entries = 0: must be in \[1, 1024\]"),
    (Core, "issue_width", 17, r"Core\.issue_width = 17: must be in \[1, 16\]"),
    (Core, "clock", "20GHz", r"Core\.clock = '20GHz': must be in \[100000000, 10000000000\] Hz"),
    (Core, "model", "vliw", r"Core\.model = 'vliw': must be one of 'ooo', 'inorder'"),
    (Core, "bpred", "tage", r"Core\.bpred = 'tage': must be one of 'gshare', 'bimodal', 'perfect'"),
    (Cache, "assoc", 65, r"Cache\.assoc = 65: must be in \[1, 64\]"),
    (Cache, "size", "8GiB", r"Cache\.size = '8GiB': must be in \[256, 4294967296\] bytes"),
    (Cache, "replacement", "fifo", r"Cache\.replacement = 'fifo': must be one of 'lru', 'plru', 'random'"),
    (Cache, "mshrs", 0, r"Cache\.mshrs = 0: must be in \[1, 1024\]"),
    (CacheHierarchy, "llc_slices", 0, r"CacheHierarchy\.llc_slices = 0: must be in \[1, 1024\]"),
    (MemoryController, "preset", "DDR5-4800", r"MemoryController\.preset = 'DDR5-4800': must be one of"),
    (MemoryController, "t_cl", 0, r"MemoryController\.t_cl = 0: must be in \[1, 2000\]"),
    (MemoryController, "t_refi", "1ms", r"MemoryController\.t_refi = '1ms': must be in \[100000, 100000000\] ps"),
    (MemoryController, "ctrl_latency", "2us", r"MemoryController\.ctrl_latency = '2us'"),
])
def test_bad_values_name_the_parameter_and_range(cls, name, value, message):
    with pytest.raises(ParamError, match=message):
        cls(**{name: value})


def test_cross_parameter_checks():
    with pytest.raises(ParamError, match=r"Core\.bpred_entries = 1000: must be a power of two"):
        Core(bpred_entries=1000).validate()
    with pytest.raises(ParamError, match=r"Cache\.line_size = 48"):
        Cache(line_size=48).validate()
    with pytest.raises(ParamError, match=r"plru.*power-of-two assoc"):
        Cache(replacement="plru", assoc=12, size="48KiB").validate()
    with pytest.raises(ParamError, match="every level must use one line_size"):
        CacheHierarchy(llc=Cache(size="2MiB", assoc=16, line_size=128)).validate()
    with pytest.raises(ParamError, match=r"address_map = 'row:bank:column'"):
        MemoryController(address_map="row:bank:column").validate()
    with pytest.raises(ParamError, match=r"MemoryController\.ranks = 3: must be a power of two"):
        MemoryController(ranks=3).validate()
    with pytest.raises(ParamError, match="write_low_watermark < write_high_watermark"):
        MemoryController(write_low_watermark=50).validate()


def test_hierarchy_levels_get_their_own_defaults():
    h = CacheHierarchy()
    assert (h.l1d.size, h.l1d.hit_latency, h.l1d.mshrs) == (32 << 10, 4, 10)
    assert (h.llc.size, h.llc.assoc, h.llc.inclusive) == (45 << 20, 20, True)
    assert h.l2_enabled is False
    other = CacheHierarchy()
    other.l1d.size = "64KiB"
    assert CacheHierarchy().l1d.size == 32 << 10, "each instance owns its children"


def test_dram_timings_default_to_the_preset_and_resolve_in_the_config():
    m = MemoryController()
    assert all(getattr(m, k) is None for k in ("t_cl", "t_rcd", "t_rp", "t_rfc", "t_refi", "bank_groups"))
    d = m.to_dict()
    assert d["preset"] == "DDR4-2400"
    # config.json (and the engine) see every timing resolved, none left to the preset.
    assert (d["t_cl"], d["t_rcd"], d["t_rp"], d["t_ck"], d["t_rfc"], d["t_refi"], d["bank_groups"]) == \
        (17, 17, 17, 833, 350_000, 7_800_000, 4)
    assert all(v is not None for v in d.values())
    m = MemoryController(preset="DDR3-1600", t_cl=13, t_rfc="350ns")
    assert (m.t_cl, m.t_rfc) == (13, 350_000)
    d = m.to_dict()
    assert (d["t_cl"], d["t_rfc"], d["t_rcd"], d["t_ck"], d["bank_groups"], d["banks_per_group"]) == \
        (13, 350_000, 11, 1250, 1, 8)
    # Switching the preset after construction re-resolves what was not overridden.
    m.preset = "DDR4-2400"
    assert (m.to_dict()["t_cl"], m.to_dict()["t_rcd"]) == (13, 17)


def test_dram_presets_are_one_table_mirrored_into_rust():
    from models.codegen import TARGET_DIR
    from models.dram import PRESETS
    generated = (TARGET_DIR / "dram.rs").read_text()
    for name, values in PRESETS.items():
        const = "DRAM_PRESET_" + name.replace("-", "_").upper()
        block = generated.split(f"pub const {const}: DramPreset = DramPreset {{")[1].split("};")[0]
        for key, value in values.items():
            assert f"    {key}: {value}," in block, (name, key)
    assert MemoryController(preset="DDR4-2400").peak_channel_bandwidth() == pytest.approx(19.2e9, rel=1e-3)


def test_simobject_names_are_unique_rust_structs():
    names = [c.__name__ for c in SimObject.registry.values() if c.__module__.startswith("models.")]
    assert len(names) == len(set(names))
    assert {"Core", "Cache", "CacheHierarchy", "MemoryController"} <= set(names)


def test_codegen_is_current():
    check = subprocess.run([sys.executable, "-m", "models.codegen", "--check"], capture_output=True, text=True)
    assert check.returncode == 0, check.stderr
