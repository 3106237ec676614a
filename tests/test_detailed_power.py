"""A detailed run's statistics feed the power model: `power.activity.from_stats` finds the counters it needs under
the names the timing models give them, and the model prices the run."""

from __future__ import annotations

import copy

import power
from models.sim import simulate
from power.from_config import platform_from_config

from conftest import BUILD, make_system

# What the timing models do not model (yet): TLBs, directories, the NoC and the NIC, and the client's requests.
UNMODELLED = ("tlb.", "client.", "system.nic")


def test_a_detailed_run_is_priced_by_the_power_model(engine):
    system = make_system(BUILD / "micro" / "robloop", ["8M", "3000"], harts=1, mode="detailed",
                         detailed_start="roi", mem_limit="512MiB")
    result = simulate(system)
    assert result.exit_code == 0
    stats = result.stats
    config = system.to_dict()
    platform = platform_from_config(config)
    assert platform.cores == 1 and platform.nic.count == 0 and platform.mc.count == config["memory"]["channels"]
    activity = power.from_stats(stats, platform)
    unexpected = [m for m in activity.missing if not any(u in m for u in UNMODELLED)]
    assert unexpected == [], unexpected
    core = activity.cores[0]
    assert core.committed_insts == stats["system.socket0.core0.committed_insts"] > 0
    assert core.cycles == stats["system.socket0.core0.cycles"] > 0
    assert core.l1d_reads == stats["system.socket0.core0.l1d.reads"] > 0
    assert activity.caches["llc"].read_misses == stats["system.socket0.llc.read_misses"] > 0
    assert activity.dram.reads == stats["system.socket0.mem.channel0.reads"] > 0
    assert activity.dram.activates > 0
    assert activity.seconds == stats["sim_seconds"] > 0
    priced = power.build(platform, activity).evaluate()
    out = priced.stats()
    assert out["power.socket.runtime_dynamic_W"] > 0
    assert out["power.socket.leakage_W"] > 0
    # A memory-bound loop keeps the core mostly idle: its runtime dynamic power is well below its peak.
    assert 0 < out["power.cores.runtime_dynamic_W"] < out["power.cores.peak_dynamic_W"]
    # Twice the DRAM traffic in the same time costs more DRAM dynamic power.
    busier = dict(stats)
    for k in ("reads", "activates", "precharges"):
        busier[f"system.socket0.mem.channel0.{k}"] *= 2
    busier_out = power.build(platform, power.from_stats(busier, platform)).evaluate().stats()
    dram_keys = [k for k in out if k.endswith(".runtime_dynamic_W") and ("dram" in k or "mc" in k)]
    assert dram_keys, sorted(out)
    assert sum(busier_out[k] for k in dram_keys) > sum(out[k] for k in dram_keys)
    # The same run priced by price_run (from its config.json) gives the same figures; a bigger LLC in the
    # configuration is priced bigger: more area and more leakage, the same counters.
    assert power.price_run(stats, config).stats()["power.die.area_mm2"] == out["power.die.area_mm2"]
    bigger = copy.deepcopy(config)
    bigger["caches"]["llc"]["size"] *= 2
    big = power.price_run(stats, bigger).stats()
    assert big["power.caches.area_mm2"] > 1.5 * out["power.caches.area_mm2"]
    assert big["power.caches.leakage_W"] > 1.5 * out["power.caches.leakage_W"]
    assert big["power.cores.area_mm2"] == out["power.cores.area_mm2"]
