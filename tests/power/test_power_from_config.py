"""The power model prices a run's own resolved configuration (config.json), power-only values included."""

import copy
import inspect

import pytest

import power
from configs import brps_target_socket, xeon_e5_2697v2_socket
from power.from_config import ConfigError, platform_from_config, platforms_from_config

from power_helpers import synthetic_stats


def _config(module, **kw) -> dict:
    return module.system(**kw).to_dict()


def test_each_config_is_priced_with_its_own_technology():
    xeon = platform_from_config(_config(xeon_e5_2697v2_socket, cores=4))
    target = platform_from_config(_config(brps_target_socket, cores=4))
    # what the Xeon config declares, not the target's
    assert xeon.name == "xeon-e5-2697v2" and target.name == "brps-target"
    assert xeon.core.x86 and not target.core.x86
    assert xeon.dram.device.name == "micron-ddr3-4gb-x8" and target.dram.device.name == "micron-ddr4-8gb-x8"
    assert xeon.dram.device.vdd == 1.5 and target.dram.device.vdd == 1.2
    assert xeon.core.rob == 168 and target.core.rob == 64
    assert xeon.core.l2 is not None and target.core.l2 is None
    assert xeon.caches[0].capacity_B * xeon.caches[0].count == 30 * 2**20
    assert xeon.nocs[0].kind == "ring" and target.nocs[0].kind == "mesh"
    assert xeon.clock_MHz == 2700.0 and target.clock_MHz == 2500.0
    assert xeon.cores == 4 and target.cores == 4


def test_a_xeon_run_cannot_be_priced_as_the_target():
    """There is no socket name to get wrong: price_run takes the run's config only, and a Xeon run's figures are
    those of its own configuration."""
    assert list(inspect.signature(power.price_run).parameters) == ["stats", "config"]
    cfg = _config(xeon_e5_2697v2_socket, cores=4)
    p = platform_from_config(cfg)
    stats = synthetic_stats(p)
    with pytest.raises(TypeError):
        power.price_run(stats, cfg, "brps_target")       # the old socket argument is gone
    r = power.price_run(stats, cfg)
    assert r.model.platform.name == "xeon-e5-2697v2" and r.model.platform.core.x86
    # the target's technology in the same run's config gives other figures (the values matter)
    swapped = copy.deepcopy(cfg)
    swapped["technology"] = _config(brps_target_socket, cores=4)["technology"]
    assert power.price_run(stats, swapped).area_mm2 != pytest.approx(r.area_mm2, rel=1e-3)


def test_llc_size_changes_area_and_leakage():
    cfg = _config(brps_target_socket, cores=8)
    p = platform_from_config(cfg)
    stats = synthetic_stats(p)
    base = power.price_run(stats, cfg).by_class()
    bigger = copy.deepcopy(cfg)
    bigger["caches"]["llc"]["size"] *= 2
    big = power.price_run(stats, bigger).by_class()
    assert big.loc["caches", "area_mm2"] > 1.5 * base.loc["caches", "area_mm2"]
    assert big.loc["caches", "leakage_W"] > 1.5 * base.loc["caches", "leakage_W"]
    assert big.loc["cores", "area_mm2"] == base.loc["cores", "area_mm2"]


def test_missing_sections_are_named():
    cfg = _config(brps_target_socket, cores=2)
    for key in ("technology", "caches", "memory"):
        broken = {k: v for k, v in cfg.items() if k != key}
        with pytest.raises(ConfigError, match=rf"System\.{key} is missing"):
            platform_from_config(broken)
    broken = copy.deepcopy(cfg)
    del broken["caches"]["llc"]
    with pytest.raises(ConfigError, match=r"System\.caches\.llc is missing"):
        platform_from_config(broken)


def test_future_shapes_sockets_and_nics_lists():
    cfg = _config(brps_target_socket, cores=2)
    # the target lists its NICs in `nics` (its `nic` is the unused, disabled one-NIC shorthand)
    assert not cfg["nic"]["enabled"] and len(cfg["nics"]) == 2
    nic = cfg["nics"][0]
    cfg2 = copy.deepcopy(cfg)
    cfg2["nics"] = [dict(nic, ports=1, pcie_lanes=8), dict(nic, ports=1, pcie_lanes=8),
                    dict(nic, ports=1, pcie_lanes=8), dict(nic, enabled=False, ports=4, pcie_lanes=16)]
    p = platform_from_config(cfg2)
    # a disabled entry is not priced
    assert p.nic.count == 3 and p.nic.ports == 1 and p.pcie.count == 3 and p.pcie.lanes == 8
    two = copy.deepcopy(cfg)
    two["sockets"] = [{"harts": 2}, {"harts": 4}]
    ps = platforms_from_config(two)
    assert [q.cores for q in ps] == [2, 4]
    with pytest.raises(ConfigError, match="2 sockets"):
        platform_from_config(two)


def test_the_bench_times_pricing_a_run():
    # How fast pricing is, is a figure `make bench` prints (drivers/cli/bench.py pricing_seconds), not a timed test:
    # on the shared 2-core host even CPU time moved past a fixed bound under load. Here: it prices what it is given.
    from drivers.cli.bench import pricing_seconds

    cfg = _config(brps_target_socket)
    stats = synthetic_stats(platform_from_config(cfg))
    seconds = pricing_seconds(stats, cfg, repeats=2)
    assert seconds > 0 and seconds == seconds
    del stats["sim_seconds"]
    with pytest.raises(Exception, match="sim_seconds"):
        pricing_seconds(stats, cfg, repeats=1)
