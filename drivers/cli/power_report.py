#!/usr/bin/env python3
"""Estimated die area, TDP-class peak power and the power at each operating point, for one socket of the
billion-RPS target and one socket of the Xeon E5-2697 v2 (power model; no simulation needed).

    sim-scripts/power_report.py
    sim-scripts/power_report.py --platform brps-target --xml target.xml   # also write McPAT XML
    sim-scripts/power_report.py --run RUN_DIR     # a Xeon run, one socket or two (stats.json, config.json) priced,
                                                  # with what McPAT-class models leave out, beside the measured Xeon

Peak power is McPAT's TDP-class figure: every structure at its peak access rate, plus leakage, at the die
temperature of the platform table. Off-die parts (DRAM devices, NIC chips) are listed separately.
"""

from __future__ import annotations

import argparse
import json
import pathlib
import sys

from rich.console import Console
from rich.table import Table

import power
from power import dvfs, mcpat_xml, platforms


def report(console: Console, key: str, xml: str | None = None) -> None:
    p = platforms.PLATFORMS[key]()
    model = power.build(p)
    points = dvfs.operating_points(model, platforms.OPERATING_POINTS[p.name])
    nominal = dvfs.evaluate_point(model, points["normal"])
    die = nominal.die
    console.rule(f"[bold]{p.name}[/]: {p.cores} cores, {p.node_nm:g} nm {p.device}, {p.temperature_K:g} K")
    console.print(f"die area                      {die.area_mm2:8.1f} mm^2")
    console.print(f"peak power (TDP class)        {die.peak_power_W:8.1f} W at normal "
                  f"({points['normal'].MHz:.0f} MHz, {points['normal'].vdd:.3f} V): "
                  f"peak dynamic {die.peak_dynamic_W:.1f} W + leakage {die.leakage_W:.1f} W")
    if p.tdp_W:
        console.print(f"TDP check at normal           {dvfs.tdp_check(nominal, p.tdp_W, 'peak')}"
                      + ("  (budget assumed)" if key == "brps-target" else "  (Intel TDP)"))
    t = Table(title="by component class at normal", show_lines=False)
    for c in ("class", "area mm^2", "peak dyn W", "sub leak W", "gate leak W", "peak W"):
        t.add_column(c, justify="right")
    for cls, row in nominal.by_class().iterrows():
        t.add_row(cls + ("" if cls in ("cores", "caches", "noc", "mc", "io") else " (off die)"),
                  f"{row.area_mm2:.1f}", f"{row.peak_dynamic_W:.1f}", f"{row.subthreshold_leakage_W:.2f}",
                  f"{row.gate_leakage_W:.2f}", f"{row.peak_power_W:.1f}")
    console.print(t)
    t = Table(title="operating points (all cores; uncore at nominal supply)")
    for c in ("point", "MHz", "Vdd V", "area mm^2", "peak dyn W", "leakage W", "peak W", "cores W"):
        t.add_column(c, justify="right")
    for name, pt in points.items():
        r = dvfs.evaluate_point(model, pt)
        cores = r.by_class().loc["cores"]
        t.add_row(name, f"{pt.MHz:.0f}", f"{pt.vdd:.3f}", f"{r.area_mm2:.1f}", f"{r.peak_dynamic_W:.1f}",
                  f"{r.leakage_W:.1f}", f"{r.peak_power_W:.1f}", f"{cores.peak_power_W:.1f}")
    console.print(t)
    lo, hi = dvfs.clock_range_MHz(model.tech)
    curve = dvfs.vf_curve(model.tech)
    console.print(f"V-f table at {p.node_nm:g} nm {p.device}: clocks {lo:.0f} to {hi:.0f} MHz at {curve.vmin:.3f} to "
                  f"{curve.vmax:.3f} V (a per-core point outside it is refused; per-core DVFS from a run's load: "
                  "sim-scripts/dvfs_study.py)")
    if key == "brps-target":
        # the paper's skewed-load DVFS: lightly loaded cores low, hottest cores turbo
        n = p.cores
        mix = ["turbo"] * 6 + ["normal"] * 24 + ["low"] * (n - 30)
        r = dvfs.evaluate_assignment(model, mix, points)
        console.print(f"mixed per-core assignment (6 turbo, 24 normal, {n - 30} low): peak "
                      f"{r.peak_power_W:.1f} W; " + str(dvfs.tdp_check(r, p.tdp_W, "peak")))
    if xml:
        mcpat_xml.write(xml, p)
        console.print(f"McPAT XML written to {xml}")


# validation.md (measured at the wall on the dual-socket E5-2697 v2 under MICA): CPUs 255 W for two sockets at
# 120.5 M requests/s, four NICs 62 W. Only here, for the comparison; nothing in power/ is fitted to them.
MEASURED_CPU_W_PER_SOCKET = 255.0 / 2
MEASURED_MRPS_PER_SOCKET = 120.5 / 2
MEASURED_NICS_W_PER_SOCKET = 62.0 / 2


def run_report(console: Console, run_dir: str) -> None:
    """A run priced with what McPAT-class models leave out, part by part and socket by socket (a multi-socket run:
    every socket from its own counters, the parts summed), beside the measured CPUs' share for its sockets."""
    from power import unmodelled

    d = pathlib.Path(run_dir)
    stats = json.loads((d / "stats.json").read_text())
    config = json.loads((d / "config.json").read_text())
    r = power.price_run(stats, config)
    sockets = r.sockets if hasattr(r, "sockets") else [r]
    n = len(sockets)
    measured = MEASURED_CPU_W_PER_SOCKET * n
    mrps = float(stats.get("client.throughput_mrps", 0.0))
    per_socket, runaway = [], []
    for k, s in enumerate(sockets):
        try:
            per_socket.append(unmodelled.parts(s))
        except unmodelled.ThermalRunaway as e:        # no steady junction: the socket's demand, not a draw
            runaway.append(f"socket {k}: {e}")
            per_socket.append(unmodelled.demand(s))
    if runaway and len(runaway) != n:
        raise SystemExit(f"{run_dir}: some sockets have a steady junction and some not: " + "; ".join(runaway))
    names = [p.name for p in per_socket[0]]
    for k, parts in enumerate(per_socket[1:], 1):
        if len(parts) != len(names):
            raise SystemExit(f"{run_dir}: socket {k} has {len(parts)} parts, socket 0 {len(names)}")
    p0 = sockets[0].model.platform
    t = Table(title=f"{p0.name}: {n} socket(s), {sum(s.model.platform.cores for s in sockets)} cores at {mrps:.1f} M "
                    f"requests/s (measured: {measured:.1f} W for {n} socket(s) at {MEASURED_MRPS_PER_SOCKET * n:.2f} "
                    f"M requests/s)")
    t.add_column("part (socket 0's wording)", justify="left")
    for k in range(n):
        t.add_column(f"socket {k} W", justify="right")
    for c in ("sum W", "running total W", "source"):
        t.add_column(c, justify="right" if c != "source" else "left")
    total = 0.0
    for i, name in enumerate(names):
        w = [parts[i].watts for parts in per_socket]
        part = per_socket[0][i]
        if part.in_total:
            total += sum(w)
        t.add_row(name, *(f"{x:.1f}" for x in w), f"{sum(w):.1f}", f"{total:.1f}" if part.in_total else "-",
                  part.source)
    console.print(t)
    if runaway:
        console.print("NO STEADY JUNCTION: the table is the sockets' demand at the all-core turbo bin with the die at "
                      "the thermal profile's maximum, more than the cooling removes. " + "; ".join(runaway))
    console.print(f"CPUs, model + the parts above: {total:.1f} W against the measured {measured:.1f} W "
                  f"({100 * (total / measured - 1):+.1f}%); throughput {mrps:.1f} against "
                  f"{MEASURED_MRPS_PER_SOCKET * n:.2f} M requests/s")
    if not runaway:
        heads = [unmodelled.thermal_headroom(s) for s in sockets]
        if all(h is not None for h in heads):
            console.print("thermal headroom: " + "; ".join(
                f"socket {k} {h[0]:.2f} W before the loop to its fold ({h[1]:.1f} W there)"
                for k, h in enumerate(heads)) + f"; the sockets at their folds: {sum(h[1] for h in heads):.1f} W "
                "(past it the turbo bin has no steady junction and drops: the model's bound at this bin)")
    # the parts beside the total overlap (McPAT's shortfall covers some of the tiles' area) or are sensitivities:
    # each is shown alone with the total, through the regulators, never summed
    for i, name in enumerate(names):
        if not per_socket[0][i].in_total:
            w = sum(parts[i].watts for parts in per_socket) / unmodelled.VR_EFFICIENCY
            console.print(f"with only '{name.split(' (beside')[0]}' beside: {total + w:.1f} W "
                          f"({100 * ((total + w) / measured - 1):+.1f}%)")
    _limits_and_sensitivity(console, sockets, measured, total, runaway)
    t = Table(title="NICs")
    for c in ("part", "W", "source"):
        t.add_column(c, justify="right" if c == "W" else "left")
    nic = 0.0
    for k, s in enumerate(sockets):
        for part in unmodelled.nic_parts(s):
            t.add_row(f"socket {k}: {part.name}", f"{part.watts:.1f}", part.source)
        nic += unmodelled.nic_cards_W(s)
    console.print(t)
    nics_measured = MEASURED_NICS_W_PER_SOCKET * n
    console.print(f"NIC cards as built: {nic:.1f} W against the measured {nics_measured:.1f} W for {n} socket(s) "
                  f"({100 * (nic / nics_measured - 1):+.0f}%; the traffic-driven chips are beside, not added)")


# The operating supplies of the report's sensitivity (V): the published data give no per-part voltage (power.unmodelled)
SENSITIVITY_VDD = (0.9, 0.95, 1.0, 1.05)


def _limits_and_sensitivity(console: Console, sockets, measured: float, total: float, runaway: list[str]) -> None:
    """What the part's package limit implies for the comparison, and the total's sensitivity to the supply (a
    report, not the model)."""
    from power import unmodelled
    from power.dvfs import vf_curve

    n = len(sockets)
    limit = unmodelled.package_limit_W(sockets[0].model.platform)
    if limit is not None:
        wall = limit / unmodelled.VR_EFFICIENCY
        console.print(
            f"package limit: the thermal profile removes {limit:.1f} W a socket at its maximum temperature (the TDP; "
            f"PL1 defaults to it): {n * limit:.1f} W for {n} socket(s) at the package, {n * wall:.1f} W through the "
            f"regulators. The measurement, {measured:.1f} W, is {100 * measured / (n * limit):.0f}% of the package "
            f"limit: a socket under turbo at its limit draws the limit whatever more it would demand, so the "
            f"measurement bounds the model's demand from below only if the CPUs' figure is the package's "
            f"(without regulator losses); if it includes them, the packages drew {measured * unmodelled.VR_EFFICIENCY:.1f} W, "
            f"below the limit. " + ("The model's demand exceeds the limit: a part would be held at it."
                                    if runaway or total > n * wall else
                                    "The model's demand is below the limit: the part would run its top bin."))
    tech = sockets[0].model.tech
    turbo = unmodelled.ALL_CORE_TURBO_MHZ.get(sockets[0].model.platform.part or sockets[0].model.platform.name)
    vs = ([float(vf_curve(tech).voltage(turbo))] if turbo else []) + list(SENSITIVITY_VDD)
    t = Table(title="sensitivity (a report, not the model): the CPUs' total at other operating supplies")
    held = None if limit is None else n * limit / unmodelled.VR_EFFICIENCY
    for c in ("supply V", "CPUs W", "against the measurement", "held at the package limit W", "die leakage W (socket 0)",
              "how"):
        t.add_column(c, justify="left" if c == "how" else "right")
    for v in vs:
        rows, how = [], "steady junction"
        for s in sockets:
            try:
                rows.append(unmodelled.parts(s, vdd=v))
            except unmodelled.ThermalRunaway:
                rows.append(unmodelled.demand(s, vdd=v))
                how = "no steady junction: demand at the profile's maximum (the part would be held at its limit)"
        w = sum(p.watts for r in rows for p in r if p.in_total)
        leak = float(sockets[0].model.evaluate(core_vdd=v, core_MHz=turbo or None, uncore_vdd=v).die.leakage_W)
        label = f"{v:.3f}" + (" (the node's V-f law at the turbo bin)" if v == vs[0] and turbo else "")
        # a socket with no steady junction is held at what the profile removes (through the regulators)
        drawn = "-" if held is None else f"{min(w, held):.1f} ({100 * (min(w, held) / measured - 1):+.1f}%)"
        t.add_row(label, f"{w:.1f}", f"{100 * (w / measured - 1):+.1f}%", drawn, f"{leak:.1f}", how)
    console.print(t)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--platform", choices=sorted(platforms.PLATFORMS), action="append",
                    help="platform(s) to report (default: both)")
    ap.add_argument("--xml", help="write the platform as McPAT XML to this file (one platform only)")
    ap.add_argument("--run", metavar="RUN_DIR", help="price a run (stats.json, config.json; one socket or several) with what "
                                                    "McPAT-class models leave out, beside the measured Xeon")
    args = ap.parse_args(argv)
    if args.run:
        run_report(Console(width=160), args.run)
        return 0
    keys = args.platform or ["brps-target", "xeon-e5-2697v2"]
    if args.xml and len(keys) != 1:
        ap.error("--xml needs exactly one --platform")
    console = Console(width=120)
    for k in keys:
        report(console, k, args.xml)
    return 0


if __name__ == "__main__":
    sys.exit(main())
