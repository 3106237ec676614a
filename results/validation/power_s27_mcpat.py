#!/usr/bin/env python3
"""Issue 23, session 27: the Xeon's 24-core CPU power decomposed against McPAT 1.3, component by component.

    .venv/bin/python results/validation/power_s27_mcpat.py RUN_DIR OUTDIR [MCPAT]

RUN_DIR is a point `sim-scripts/validate_xeon.py --save DIR` kept (DIR/24: stats.json, config.json). The run is
priced (power.price_run), each socket exported as McPAT's XML and run through McPAT (drivers/cli/mcpat_run: OUTDIR/
mcpat/socket{k}.xml, .out, _tree.csv), and for every McPAT component (the core's units IFU, RNU, LSU, MMU, EXU, its
private L2 and the rest of the core; L3; NoC; MCs; PCIe) the table gives kvsim's and McPAT's runtime dynamic power
and leakage (both sockets, at the export's operating point: base clock, the node's supply, 360 K), then what the
CPUs' figure (power.unmodelled.parts, as validate_xeon's 'CPUs' row) becomes when that component is priced at
McPAT's figures instead (its structures' switched capacitance scaled by McPAT / kvsim runtime dynamic, their
leaking widths by McPAT / kvsim leakage; the die's parts beyond the structures, power.die, re-derived from them),
and that change's share of the gap to the measured 255 W, twice: closed loop (the junction solved from the
socket's power on the DTS thermal profile, and the turbo bin lowered when it has no steady junction, as the row
does) and open loop (the junction held at the model's 360 K, where the run's own solution lies: each component's
watts through the chain without the thermal loop's response). McPAT is MCPAT, else $KVSIM_MCPAT.
"""

from __future__ import annotations

import dataclasses
import json
import math
import pathlib
import sys

cd = pathlib.Path(__file__).resolve().parents[2]
sys.path.insert(0, str(cd))

import power  # noqa: E402
from drivers.cli import mcpat_run  # noqa: E402
from power import die, unmodelled  # noqa: E402
from power.blocks import Block  # noqa: E402
from power.model import Model, Struct  # noqa: E402

MEASURED_CPUS_W = 255.0     # validation.md: the two CPUs at 120.5 M req/s (as validate_xeon compares)

# McPAT's components -> the kvsim structures they price (path prefixes; power.mcpat_tree.UNITS for the core)
COMPONENTS = {
    "core: IFU": ("core.ifu.",),
    "core: RNU": ("core.rename",),
    "core: LSU": ("core.lsu.",),
    "core: MMU": ("core.mmu.",),
    "core: EXU": ("core.exu.", "core.scheduler."),
    "core: L2 (private)": ("core.l2",),
    "core: rest (kvsim pipeline + undifferentiated)": ("core.pipeline", "core.undiff"),
}
UNCORE = {"L3": "Total L3s", "NoC": "Total NoCs (Network/Bus)", "MCs": "Total MCs", "PCIe": "Total PCIes",
          "directories": "Total Second Level Directory"}
UNCORE_COMPONENT = {"L3": "l3", "NoC": "noc", "MCs": "mc", "PCIe": "pcie", "directories": "l2dir"}
MCPAT_UNIT = {"core: IFU": "Instruction Fetch Unit", "core: RNU": "Renaming Unit", "core: LSU": "Load Store Unit",
              "core: MMU": "Memory Management Unit", "core: EXU": "Execution Unit", "core: L2 (private)": "L2"}


def cpus_W(sockets) -> tuple[float, str]:
    """The CPUs' figure as validate_xeon's row adds it up, and a note: a socket with no steady junction within its
    thermal profile (unmodelled.ThermalRunaway) is counted at its demand at the profile's maximum (unmodelled.demand,
    as power_report.py --run prints it; the part itself would be held at its package limit)."""
    total, runaway = 0.0, []
    for k, r in enumerate(sockets):
        try:
            parts = unmodelled.parts(r)
        except unmodelled.ThermalRunaway:
            parts = unmodelled.demand(r)
            runaway.append(k)
        total += sum(p.watts for p in parts if p.in_total)
    return total, (f"runaway (sockets {runaway}: demand at the profile's maximum)" if runaway else "")


def _leak(df, side: str, line: str) -> float:
    row = df[df.line == line]
    if row.empty:
        return float("nan")
    gate = float(row[f"{side}_gate_leakage_W"].iloc[0])
    # McPAT prints no gate leakage line for some units (its MMU and execution unit): taken as 0 there
    return float(row[f"{side}_subthreshold_leakage_W"].iloc[0]) + (gate if math.isfinite(gate) else 0.0)


def _dyn(df, side: str, line: str) -> float:
    row = df[df.line == line]
    return float("nan") if row.empty else float(row[f"{side}_runtime_dynamic_W"].iloc[0])


def figures(tree, cores: int) -> dict[str, dict[str, float]]:
    """{component: {kvsim_dyn, kvsim_leak, mcpat_dyn, mcpat_leak}} for one socket, chip totals in W. McPAT prints a
    core unit's leakage per core and its runtime dynamic power over all cores (power.mcpat_tree)."""
    out = {}
    units_k = {"dyn": 0.0, "leak": 0.0}
    units_m = {"dyn": 0.0, "leak": 0.0}
    for name, unit in MCPAT_UNIT.items():
        f = {"kvsim_dyn": _dyn(tree, "kvsim", unit), "kvsim_leak": cores * _leak(tree, "kvsim", unit),
             "mcpat_dyn": _dyn(tree, "mcpat", unit), "mcpat_leak": cores * _leak(tree, "mcpat", unit)}
        out[name] = f
        units_k["dyn"] += f["kvsim_dyn"]
        units_k["leak"] += f["kvsim_leak"]
        units_m["dyn"] += f["mcpat_dyn"]
        units_m["leak"] += f["mcpat_leak"]
    # the rest of the core: kvsim's pipeline and undifferentiated core; McPAT's core total less its units (its
    # undifferentiated core and pipeline, which it prints inside the total only)
    out["core: rest (kvsim pipeline + undifferentiated)"] = {
        "kvsim_dyn": _dyn(tree, "kvsim", "Core") - units_k["dyn"],
        "kvsim_leak": cores * _leak(tree, "kvsim", "Core") - units_k["leak"],
        "mcpat_dyn": _dyn(tree, "mcpat", "Core") - units_m["dyn"],
        "mcpat_leak": cores * _leak(tree, "mcpat", "Core") - units_m["leak"]}
    for name, line in UNCORE.items():
        out[name] = {"kvsim_dyn": _dyn(tree, "kvsim", line), "kvsim_leak": _leak(tree, "kvsim", line),
                     "mcpat_dyn": _dyn(tree, "mcpat", line), "mcpat_leak": _leak(tree, "mcpat", line)}
    return out


def _matches(s: Struct, name: str) -> bool:
    if name in COMPONENTS:
        return s.domain == "core" and s.path.startswith(COMPONENTS[name])
    return s.component == UNCORE_COMPONENT[name] and s.cls != "other"


def _scaled(s: Struct, a_dyn: float, a_leak: float) -> Struct:
    b = s.block
    block = Block(b.area_mm2, b.c_read * a_dyn, b.c_write * a_dyn, b.c_search * a_dyn, b.leak_um * a_leak,
                  b.gate_um * a_leak)
    return dataclasses.replace(s, block=block, peak_c=s.peak_c * a_dyn, runtime_c=[c * a_dyn for c in s.runtime_c],
                               clock_c=s.clock_c * a_dyn, fixed_runtime_J=s.fixed_runtime_J * a_dyn,
                               idle_fixed_W=s.idle_fixed_W * a_dyn, fixed_leak_W=s.fixed_leak_W * a_leak,
                               fixed_peak_W=s.fixed_peak_W * a_dyn)


def repriced(result, ratios: dict[str, tuple[float, float]]):
    """The socket re-evaluated with each named component's structures scaled by (dynamic, leakage) ratios, the
    die's parts beyond the structures (power.die: the tiles' missing area at the structures' densities) re-derived
    from the scaled structures as power.model.build derives them."""
    m = result.model
    structs = []
    for s in m.structs:
        if s.cls == "other":
            continue
        for name, (a_dyn, a_leak) in ratios.items():
            if _matches(s, name):
                s = _scaled(s, a_dyn, a_leak)
                break
        structs.append(s)
    p = m.platform
    if p.die is not None:
        slices = max((c.count for c in p.caches), default=p.cores)
        for d in die.parts(p.die, structs, p.cores, slices):
            structs.append(Struct(path=d.path, group="die", cls="other", count=1.0, domain=d.domain,
                                  block=Block(d.area_mm2, 0.0, 0.0, 0.0, d.leak_um, d.gate_um), peak_c=d.peak_c,
                                  clock_MHz=d.clock_MHz, runtime_c=list(d.runtime_c), clock_c=d.clock_c,
                                  raw_area_mm2=d.area_mm2))
    model = Model(p, m.activity, m.tech, structs)
    return model.evaluate(core_vdd=result.core_vdd, core_MHz=result.core_MHz, uncore_vdd=result.uncore_vdd,
                          temperature_K=result.temperature_K)


def main() -> None:
    run, outdir = pathlib.Path(sys.argv[1]), pathlib.Path(sys.argv[2])
    mcpat = mcpat_run.mcpat_path(sys.argv[3] if len(sys.argv) > 3 else None)
    stats = json.loads((run / "stats.json").read_text())
    config = json.loads((run / "config.json").read_text())
    priced = power.price_run(stats, config)
    sockets = getattr(priced, "sockets", None) or [priced]
    outdir.mkdir(parents=True, exist_ok=True)
    import pandas as pd
    have = all((outdir / "mcpat" / f"socket{k}.out").is_file() for k in range(len(sockets)))
    if not have:
        mcpat_run.run(priced, outdir, mcpat)
    from power import mcpat_tree
    per_socket = []
    for k, r in enumerate(sockets):
        text = (outdir / "mcpat" / f"socket{k}.out").read_text()
        tree = mcpat_tree.compare(r, text)
        tree.to_csv(outdir / "mcpat" / f"socket{k}_tree.csv", index=False)
        per_socket.append(figures(tree, r.model.platform.cores))
    names = list(per_socket[0])
    total = {n: {key: sum(s[n][key] for s in per_socket) for key in per_socket[0][n]} for n in names}
    base, base_note = cpus_W(sockets)
    assert not base_note, base_note
    # open loop: the junction held where the run's own solution put it (the thermal profile taken out: the model's
    # 360 K), so each component's share is its watts through the chain, not the thermal loop's response to them
    profile = unmodelled.THERMAL_PROFILE
    held = {k: v for k, v in profile.items() if k != "xeon-e5-2697v2"}
    gap = MEASURED_CPUS_W - base
    rows = []
    all_ratios = {}
    for n in names:
        f = total[n]
        a_dyn = f["mcpat_dyn"] / f["kvsim_dyn"] if f["kvsim_dyn"] > 0 else 1.0
        a_leak = f["mcpat_leak"] / f["kvsim_leak"] if f["kvsim_leak"] > 0 else 1.0
        if n.startswith("core: rest") or not (math.isfinite(a_dyn) and math.isfinite(a_leak)):
            a_dyn = a_leak = 1.0   # no McPAT line to scale to: the rest is compared in total, not repriced
        all_ratios[n] = (a_dyn, a_leak)
        w, note = cpus_W([repriced(r, {n: (a_dyn, a_leak)}) for r in sockets])
        unmodelled.THERMAL_PROFILE = held
        open_w = cpus_W([repriced(r, {n: (a_dyn, a_leak)}) for r in sockets])[0] - cpus_W(sockets)[0]
        unmodelled.THERMAL_PROFILE = profile
        rows.append(dict(component=n, note=note, open_loop_delta_W=open_w, open_loop_share=open_w / gap, kvsim_dyn_W=f["kvsim_dyn"], mcpat_dyn_W=f["mcpat_dyn"],
                         kvsim_leak_W=f["kvsim_leak"], mcpat_leak_W=f["mcpat_leak"],
                         kvsim_W=f["kvsim_dyn"] + f["kvsim_leak"], mcpat_W=f["mcpat_dyn"] + f["mcpat_leak"],
                         cpus_W_at_mcpat=w, delta_cpus_W=w - base, share_of_gap=(w - base) / gap))
    every, every_note = cpus_W([repriced(r, all_ratios) for r in sockets])
    unmodelled.THERMAL_PROFILE = held
    every_open = cpus_W([repriced(r, all_ratios) for r in sockets])[0] - cpus_W(sockets)[0]
    unmodelled.THERMAL_PROFILE = profile
    df = pd.DataFrame(rows)
    df.to_csv(outdir / "components.csv", index=False)
    pd.set_option("display.width", 250)
    pd.set_option("display.max_columns", 20)
    print(f"run {run}; CPUs (model + parts it leaves out) {base:.1f} W against {MEASURED_CPUS_W:g} W: gap "
          f"{gap:.1f} W")
    print(df.to_string(index=False, float_format=lambda x: f"{x:.3f}"))
    print(f"every component at McPAT's figures at once: CPUs {every:.1f} W ({every - base:+.1f} W, "
          f"{(every - base) / gap:.0%} of the gap) {every_note}; open loop {every_open:+.1f} W "
          f"({every_open / gap:.0%} of the gap)")
    for k, r in enumerate(sockets):
        print(f"socket {k}: " + "; ".join(f"{p.name[:60]} {p.watts:.2f}" for p in unmodelled.parts(r)
                                          if p.in_total or k == 0))


if __name__ == "__main__":
    main()
