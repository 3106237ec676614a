"""The 3D-stacked memory parameters (models/stacked.py): published defaults, validation, bad input."""

import pytest

from models.params import ParamError
from models.stacked import NandFlash, Stack, StackedDram


def test_dram_defaults_are_the_published_stack():
    d = StackedDram()
    d.validate()
    assert (d.ports, d.port_width, d.banks_per_port) == (16, 128, 8)
    assert d.capacity() == 4 << 30                     # 16 x 256 MB
    assert d.page_size == 1024                         # 8 kb
    assert d.access_latency == 10_000                  # 10 ns in ps
    assert d.line_transfer_ps() == 10_240              # 64 B at 6.25 GB/s (the Rust model's rounding)
    assert d.ports * d.port_bandwidth == 100.0


def test_dram_latency_range_is_named():
    StackedDram(access_latency="100ns").validate()
    with pytest.raises(ParamError, match=r"StackedDram.access_latency = '2us': must be in \[1000, 1000000\] ps"):
        StackedDram(access_latency="2us")


def test_more_cores_than_ports_allow_is_an_error():
    Stack(cores=16).validate()
    Stack(cores=32).validate()                         # two per port
    with pytest.raises(ParamError, match=r"33 cores need 3 per port.*StackedDram.ports = 16.*"
                                         r"max_cores_per_port = 2 allow at most 32 cores"):
        Stack(cores=33).validate()
    no_sharing = Stack(cores=17, dram=StackedDram(max_cores_per_port=1))
    with pytest.raises(ParamError, match="allow at most 16 cores"):
        no_sharing.validate()
    with pytest.raises(ParamError, match="40 cores need 3 per port, but NandFlash.controllers = 16"):
        Stack(cores=40, memory="flash").validate()


def test_flash_defaults_and_write_below_read_is_an_error():
    f = NandFlash()
    f.validate()
    assert (f.controllers, f.read_latency, f.write_latency) == (16, 20_000_000, 200_000_000)
    NandFlash(read_latency="10us").validate()
    with pytest.raises(ParamError, match=r"NandFlash.write_latency = 5000000 ps is below "
                                         r"NandFlash.read_latency = 20000000 ps"):
        NandFlash(write_latency="5us").validate()


def test_dram_geometry_is_checked():
    with pytest.raises(ParamError, match="StackedDram.page_size = 3000: must be a power of two"):
        StackedDram(page_size=3000).validate()
    with pytest.raises(ParamError, match="StackedDram.page_size = 64 is smaller than line_size = 128"):
        StackedDram(page_size=64, line_size=128).validate()


def test_stack_capacity_follows_its_memory():
    assert Stack().capacity() == 4 << 30
    assert Stack(memory="flash").capacity() == int(19.8 * 2**30)


def test_memory_kind_selects_the_backing_memory_or_is_refused_until_the_engine_builds_it():
    """MemoryController.kind chooses DDR, the 3D DRAM or the flash behind the caches (kvsim_timing::stacked::
    backing, exact tests in models/timing/tests/stacked.rs). A kind the engine does not build yet is refused by
    name rather than silently run on DDR."""
    from models.dram import ENGINE_BACKING_KINDS, MEMORY_KINDS, MemoryController

    assert MemoryController().kind == "ddr" and "ddr" in ENGINE_BACKING_KINDS
    for kind in MEMORY_KINDS:
        m = MemoryController(kind=kind, dram3d=StackedDram(access_latency="25ns"))
        if kind in ENGINE_BACKING_KINDS:
            m.validate()
        else:
            with pytest.raises(ParamError, match=f"MemoryController.kind = '{kind}': the engine does not yet"):
                m.validate()
    d = MemoryController(kind="dram3d", dram3d=StackedDram(access_latency="25ns")).to_dict()
    assert d["kind"] == "dram3d" and d["dram3d"]["access_latency"] == 25_000 and d["flash"]["read_latency"] > 0
    with pytest.raises(ParamError, match="MemoryController.kind"):
        MemoryController(kind="hbm")
