"""The priced core's own datapath and address widths and FPU (Technology.datapath_bits, virtual_address_bits, fpu):
a part whose real cores are narrower than the simulated RV64 harts, or have no FPU (the TILEPro64's tiles), is
priced as it is, in the model and in its McPAT export, and a run that executed FP instructions on such a part is
refused when priced."""

from __future__ import annotations

import dataclasses
import re

import pytest

import power
from configs import tilepro64
from models.params import ParamError
from power import mcpat_xml
from power.activity import FP_CLASSES
from power.from_config import platform_from_config

from power_helpers import synthetic_stats


def _tile_config(**tech) -> dict:
    s = tilepro64.system(shards=4)
    for k, v in tech.items():
        setattr(s.technology, k, v)
    s.validate()
    return s.to_dict()


def _structures(config: dict):
    platform = platform_from_config(config)
    return platform, power.build(platform).evaluate().structures.set_index("component")


def test_the_tile_is_priced_32_bit_without_an_fpu():
    platform, tile = _structures(_tile_config())
    core = platform.core
    assert (core.machine_bits, core.vaddr_bits) == (32, 32)
    assert (core.fpus, core.fp_issue_width, core.arch_fp_regs, core.phys_fp_regs, core.fp_iq) == (0, 0, 0, 0, 0)
    _, wide = _structures(_tile_config(datapath_bits=64, virtual_address_bits=48, fpu=True))
    # No FPU at all, where the 64-bit tile with an FPU had one of several mm^2 at 90 nm.
    assert tile.loc["core.exu.fpus", "area_mm2"] == 0 and wide.loc["core.exu.fpus", "area_mm2"] > 1.0
    # The register files: 32 integer registers of 32 bits, against 32 of 64 and an FP file (fewer ports than the
    # integer file's 6 read and 3 write): about half the area.
    assert tile.loc["core.exu.regfile", "area_mm2"] < 0.55 * wide.loc["core.exu.regfile", "area_mm2"]
    # Address-holding arrays shrink with the address width (the TLBs hold virtual page numbers).
    assert tile.loc["core.mmu.itlb", "area_mm2"] < wide.loc["core.mmu.itlb", "area_mm2"]


def test_the_widths_change_only_what_they_describe():
    _, wide = _structures(_tile_config(datapath_bits=64, virtual_address_bits=48, fpu=True))
    _, narrow_fpu = _structures(_tile_config(datapath_bits=32, virtual_address_bits=48, fpu=True))
    # The same core with a 32-bit datapath: still its FPU, a narrower register file, the same caches.
    assert narrow_fpu.loc["core.exu.fpus", "area_mm2"] == wide.loc["core.exu.fpus", "area_mm2"]
    assert narrow_fpu.loc["core.exu.regfile", "area_mm2"] < wide.loc["core.exu.regfile", "area_mm2"]
    assert narrow_fpu.loc["core.lsu.dcache", "area_mm2"] == wide.loc["core.lsu.dcache", "area_mm2"]


def test_the_mcpat_export_describes_the_tile_as_it_is():
    platform = platform_from_config(_tile_config())
    xml = mcpat_xml.to_xml(platform)

    def value(name: str) -> str:
        found = re.findall(rf'name="{name}" value="([^"]*)"', xml)
        assert found, name
        return found[0]

    assert (value("machine_bits"), value("virtual_address_width")) == ("32", "32")
    assert float(value("FPU_per_core")) == 0 and int(value("fp_issue_width")) == 0
    assert int(value("archi_Regs_FRF_size")) == 0 and int(value("phy_Regs_FRF_size")) == 0
    # and kvsim prices the export as read back as it prices the configuration
    back, _ = mcpat_xml.read(xml)
    assert (back.core.machine_bits, back.core.vaddr_bits, back.core.fpus, back.core.fp_issue_width) == (32, 32, 0, 0)


def test_a_run_with_fp_instructions_is_refused_on_a_part_without_an_fpu():
    config = _tile_config()
    platform = platform_from_config(config)
    stats = synthetic_stats(platform)
    for c in FP_CLASSES:
        stats[f"system.socket0.core0.{c}"] = 0.0
    power.price_socket(stats, platform)                    # no FP instruction: priced
    stats["system.socket0.core0.fp_add_ops"] = 12.0
    with pytest.raises(ValueError, match=r"executed 12 FP operations but the priced part has no FPU "
                                         r"\(Technology\.fpu = False\)"):
        power.price_socket(stats, platform)
    # the same run priced with an FPU
    with_fpu = dataclasses.replace(platform, core=platform_from_config(_tile_config(fpu=True)).core)
    power.price_socket(stats, with_fpu)


@pytest.mark.parametrize("bits", [24, 48])
def test_a_datapath_width_that_is_not_a_power_of_two_is_refused(bits):
    s = tilepro64.system(shards=4)
    s.technology.datapath_bits = bits
    with pytest.raises(ParamError, match=rf"Technology.datapath_bits = {bits}: must be a power of two"):
        s.validate()
