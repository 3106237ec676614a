"""Shared helpers of the power tests."""

from __future__ import annotations

import pytest

from power import activity as act_mod
from power.compare import MCPAT_INPUTS


def require_shared():
    """The McPAT example inputs live beside the project (../shared); CI has them. Fail clearly without them."""
    if not MCPAT_INPUTS.is_dir():
        pytest.fail(f"McPAT example inputs missing: expected {MCPAT_INPUTS} (the shared data beside the project)")
    return MCPAT_INPUTS


def synthetic_stats(platform, *, seconds=1e-3, ipc=1.5, scale=1.0, requests=1e5) -> dict:
    """A plausible kvsim stats dict with every counter the power model reads."""
    cyc = seconds * platform.clock_MHz * 1e6
    insts = cyc * ipc * scale
    per_core = {
        "cycles": cyc, "committed_insts": insts, "int_ops": 0.5 * insts, "fp_ops": 0.0, "mul_ops": 0.02 * insts,
        "loads": 0.25 * insts, "stores": 0.1 * insts, "branches": 0.15 * insts, "branch_mispredicts": 0.005 * insts,
        "rob_reads": insts, "rob_writes": insts, "rename_reads": 2 * insts, "rename_writes": insts,
        "fp_rename_reads": 0.0, "fp_rename_writes": 0.0, "iq_reads": insts, "iq_writes": insts,
        "iq_wakeups": 2 * insts, "fp_iq_reads": 0.0, "fp_iq_writes": 0.0, "fp_iq_wakeups": 0.0,
        "int_rf_reads": 1.5 * insts, "int_rf_writes": 0.8 * insts, "fp_rf_reads": 0.0, "fp_rf_writes": 0.0,
        "btb_reads": 0.15 * insts, "btb_writes": 0.01 * insts, "itlb.accesses": 0.3 * insts,
        "itlb.misses": 1e-5 * insts, "dtlb.accesses": 0.35 * insts, "dtlb.misses": 1e-4 * insts,
        "l1i.reads": 0.3 * insts, "l1i.misses": 0.001 * insts, "l1d.reads": 0.25 * insts,
        "l1d.writes": 0.1 * insts, "l1d.read_misses": 0.004 * insts, "l1d.write_misses": 0.001 * insts,
        "l2.reads": 0.005 * insts, "l2.writes": 0.002 * insts, "l2.read_misses": 0.002 * insts,
        "l2.write_misses": 0.0005 * insts,
    }
    stats = {}
    for name in act_mod.stats_names(platform):
        stats[name] = 0.0
    stats["sim_seconds"] = seconds
    stats["client.requests"] = requests * scale
    s = "system.socket0"
    for i in range(platform.cores):
        for k, v in per_core.items():
            if f"{s}.core{i}.{k}" in stats:
                stats[f"{s}.core{i}.{k}"] = v
    for c in platform.caches:
        stats[f"{s}.{c.name}.reads"] = 1e5 * scale
        stats[f"{s}.{c.name}.writes"] = 3e4 * scale
        stats[f"{s}.{c.name}.read_misses"] = 2e4 * scale
        stats[f"{s}.{c.name}.write_misses"] = 5e3 * scale
    for d in platform.directories:
        stats[f"{s}.{d.name}.reads"] = 1e5 * scale
        stats[f"{s}.{d.name}.writes"] = 2e4 * scale
    for n in platform.nocs:
        stats[f"{s}.{n.name}.flits"] = 1e6 * scale
        stats[f"{s}.{n.name}.hops"] = 4e6 * scale
    for name in list(stats):
        if ".mem.channel" in name:
            stats[name] = {"reads": 2e5, "writes": 5e4, "activates": 1e5, "precharges": 1e5,
                           "refreshes": 0.0}[name.rsplit(".", 1)[1]] * scale
        if name.startswith("system.nic"):
            key = name.split(".", 2)[2]
            stats[name] = {"port0.rx_bytes": 1e8, "port0.tx_bytes": 1e8, "port0.rx_frames": 1e6,
                           "port0.tx_frames": 1e6, "pcie.tlps": 3e6, "pcie.up_bytes": 1.1e8,
                           "pcie.down_bytes": 1.1e8}[key] * scale
    return stats
