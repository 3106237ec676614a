"""Where the LLC study's gap between the two guest drivers comes from (issue 28): a REDUCED experiment.

At full conditions (60 cores, 16 Mi items, 768 KB of LLC per core) MICA's DPDK buffer footprint, the server's
default driver, answers 1.107 +- 0.019 times what the compact driver does (results/figures/llc/llc.md). The two
drivers differ in four server arguments (drivers/studies/llc.py DRIVERS):

- tx_ring: 512 TX descriptors per queue (DPDK) against 128 (compact);
- tx_free: DPDK frees sent TX buffers one group of 32 at a time, once fewer than 32 descriptors are free; the
  compact driver frees all that is done at every burst (tx_free = its ring);
- buf_headroom / buf_meta: DPDK's buffers are a 64-byte mbuf header, 128 bytes of headroom and the 2,048-byte data
  room (a 2,240-byte stride); the compact driver's are the bare 2,048-byte data room.

This runs each driver and each one with ONE of those changed to the other driver's value, on a reduced share of the
socket (per-core resources in proportion, drivers/studies/common.py: 20 cores by default, one NIC of the three with
20 queues, its 100 Gb/s port and PCIe x8, as on the full socket; the LLC study's own reduced data set, 2^20 tiny
items; 768 KB of LLC per core), at the LLC study's measurement (capacity search to 2%, then the steady-state window
with its 95% interval). Every output says it is reduced. (On the 4-core share, one NIC of 4 queues at 20 Gb/s, the
two drivers are 1.030 +- 0.025 apart: too close to split.)

    python -m drivers.cli.driver_gap                         # run what is not stored yet, then write the report
    python -m drivers.cli.driver_gap --variant dpdk --variant compact
    python -m drivers.cli.driver_gap --draw-only             # the report from what is stored
"""

from __future__ import annotations

import argparse
import json
import math
import pathlib

import pandas as pd

from drivers import sweep as sweeps
from drivers.studies import common, llc
from models import stats_paths as paths

ROOT = pathlib.Path(__file__).resolve().parents[2]
CORES = 20      # one NIC's share of the 60-core socket (common.NICS_PER_CORE)
ITEMS = llc.REDUCED_ITEMS
LLC_PER_CORE_KB = 768
# Its own folder of shared loads: the LLC study's jobs use results/sweeps/checkpoints meanwhile (one sweep process
# per folder).
CHECKPOINTS = ROOT / "results" / "sweeps" / "driver-gap"

COMPACT = dict(a.split("=") for a in llc.DRIVERS["compact"][0])     # tx_ring, tx_free, buf_headroom, buf_meta
# The default driver's values of the same arguments, given explicitly (workloads/kvs/kvs_server.c kvs_config_default
# and platform_riscv.c plat_set_driver: DPDK's ixgbe tx_free_thresh, 32 free descriptors).
DPDK = {"tx_ring": "512", "tx_free": "32", "buf_headroom": "128", "buf_meta": "64"}

# name -> (server arguments, what differs from the driver it starts from). Freeing at every burst is tx_free = the
# ring, so where the ring changes under the compact driver's freeing, tx_free follows it.
VARIANTS: dict[str, tuple[dict[str, str], str]] = {
    "dpdk": (DPDK, "MICA's DPDK buffer footprint (the server's default)"),
    "compact": (COMPACT, "compact driver"),
    "compact+ring512": ({**COMPACT, "tx_ring": "512", "tx_free": "512"}, "compact, 512 TX descriptors"),
    "dpdk+ring128": ({**DPDK, "tx_ring": "128"}, "DPDK, 128 TX descriptors"),
    "compact+dpdk-free": ({**COMPACT, "tx_free": "32"}, "compact, DPDK's freeing (32 at a time, < 32 free)"),
    "dpdk+free-every-burst": ({**DPDK, "tx_free": "512"}, "DPDK, freeing at every burst"),
    "compact+dpdk-buffers": ({**COMPACT, "buf_headroom": "128", "buf_meta": "64"},
                             "compact, DPDK's buffer layout (2,240-byte stride)"),
    "dpdk+bare-buffers": ({**DPDK, "buf_headroom": "0", "buf_meta": "0"}, "DPDK, bare 2 KB buffers"),
}
# Not a difference between the drivers: a test of the mechanism the overload runs point to (the TX ring's size sets
# the queue's buffer pool, RX + TX + 32, so sent buffers the ring has not yet freed leave the RX ring unfilled). The
# compact driver frees a group of tx_rs = 32 descriptors once the NIC reports its last one sent; groups of 8 give
# buffers back sooner.
PROBES: dict[str, tuple[dict[str, str], str]] = {
    "compact+rs8": ({**COMPACT, "tx_rs": "8"}, "compact, TX buffers freed in groups of 8 (tx_rs=8)"),
}
ALL = {**VARIANTS, **PROBES}


def variant_sweep(name: str, cores: int = CORES) -> sweeps.Sweep:
    args = tuple(f"{k}={v}" for k, v in ALL[name][0].items())
    return sweeps.Sweep(f"driver-gap-{cores}c-1Mi-{name}", llc._base(cores, ITEMS, server_args=args),
                        sweeps.Grid({"caches.llc.size": [LLC_PER_CORE_KB * 1024 * cores]}),
                        evaluator=sweeps.CAPACITY_EVALUATOR,
                        options={"resolution": common.CAPACITY_RESOLUTION, "steady": True},
                        share_checkpoint=True, checkpoints=str(CHECKPOINTS))


def row_of(name: str, table: pd.DataFrame) -> dict:
    ok = table[table.status == "ok"] if "status" in table else table.iloc[0:0]
    if not len(ok):
        return {"variant": name, "driver": VARIANTS[name][1]}
    row = ok.iloc[0]
    f = common.figures_of(row)
    r = {k[5:]: v for k, v in row.items() if isinstance(k, str) and k.startswith("stat.")}
    return {"variant": name, "driver": VARIANTS[name][1],
            "throughput_mrps": f["throughput_mrps"], "throughput_ci_mrps": f["throughput_ci_mrps"],
            "ipc": f["ipc"], "insts_per_req_work": r.get("client.insts_per_request_work", math.nan),
            "insts_per_req_idle": r.get("client.insts_per_request_idle", math.nan),
            "l1d_mpki": f["l1d_mpki"],
            "l1d_coherence_inv_per_kreq": 1e3 * common.sum_of(r, paths.PRIVATE_CACHE, "coherence_invalidations",
                                                               socket=0, cache="l1d") / r["client.requests"]
            if r.get("client.requests") else math.nan,
            "load_latency_avg": common.mean_of(r, paths.CORE, "load_latency_avg", socket=0),
            "llc_demand_mpki": f["llc_demand_mpki"], "llc_dma_mpki": f["llc_dma_mpki"],
            "p95_steady_us": f["p95_steady_us"], "probes": f["probes"], "cpu_seconds": f["cpu_seconds"]}


def overload(names: list[str], cores: int, rate_mpps: float, out: pathlib.Path | None = None,
             warmup_per_core: int = llc.WARMUP_REQUESTS_PER_CORE, stats_dir: pathlib.Path | None = None,
             seed: int = 0, requests_per_core: int = 0) -> pd.DataFrame:
    """One run per variant at `rate_mpps` offered per port (above both capacities: every core saturated),
    restoring the variant's shared load (loaded first when it is not stored): where the offered frames go (answered,
    dropped by the NIC for want of an RX descriptor, or received by the server and never sent back) and what the
    cores spend per answered request. `warmup_per_core`: the requests each core's caches warm over after the
    restore (client.warmup_requests / cores; the LLC study's 25,000 by default); `stats_dir`: each run's whole
    statistics there as <variant>.json; `seed`: the measured phase's random stream (client.measure_seed);
    `requests_per_core` > 0: the measured requests per core (else the study's). The service rate is what the run
    sustained (offered less loss, end_to_end.sustained_mrps): the answered rate over a short window is biased low
    by the round trip in its span."""
    import time

    from drivers.studies.end_to_end import sustained_mrps
    from drivers.sweep.checkpoints import prepare_checkpoint
    from models.sim import simulate

    rows = []
    for name in names:
        point = variant_sweep(name, cores).resolve()[0]
        loaded = prepare_checkpoint(str(CHECKPOINTS), point)
        if loaded["status"] != "ok":
            raise SystemExit(f"{name}: loading its data set failed: {loaded['error']}")
        system = point.system()
        system.restore_from = loaded["folder"]
        system.client.offered_mpps = rate_mpps
        system.client.warmup_requests = warmup_per_core * cores
        system.client.measure_seed = seed
        if requests_per_core:
            system.client.requests = requests_per_core * cores
        started = time.process_time()
        r = dict(simulate(system).stats)
        if stats_dir is not None:
            stats_dir.mkdir(parents=True, exist_ok=True)
            (stats_dir / f"{name}.json").write_text(json.dumps(r, sort_keys=True))
        answered = r["client.requests"]
        rx = common.sum_of(r, paths.NIC_QUEUE, "rx_frames")
        tx = common.sum_of(r, paths.NIC_QUEUE, "tx_frames")
        cycles = common.sum_of(r, paths.CORE, "cycles", socket=0)
        busy = sum(v for k, v in r.items() if k.endswith(".busy_poll_insts"))
        rows.append({"variant": name, "seed": seed, "offered_mpps_per_port": rate_mpps, "warmup_requests_per_core": warmup_per_core,
                     "sustained_mrps": sustained_mrps(r), "loss": r["client.loss"],
                     "ns_per_request_per_core": 1e3 * cores / sustained_mrps(r),
                     "nic_rx_drops_per_kframe": 1e3 * common.sum_of(r, paths.NIC_QUEUE, "rx_drops") /
                     max(1.0, rx + common.sum_of(r, paths.NIC_QUEUE, "rx_drops")),
                     "server_unsent_per_kframe": 1e3 * (rx - tx) / rx if rx else math.nan,
                     "busy_insts_per_answered": busy / answered, "cycles_per_answered": cycles / answered,
                     "ipc": common.mean_of(r, paths.CORE, "ipc", socket=0),
                     "rx_batch": common.mean_of(r, paths.NIC_QUEUE, "rx_batch_mean"),
                     "load_cpu_seconds": loaded["cpu_seconds"], "cpu_seconds": time.process_time() - started})
        if out is not None:                  # each variant as it ends: a run stopped part way keeps what it measured
            pd.DataFrame(rows).to_csv(out, index=False)
    return pd.DataFrame(rows)


T_975 = {2: 12.706, 3: 4.303, 4: 3.182, 5: 2.776}     # Student's t, two-sided 95%, by the number of seeds


def overload_report(cores: int, folder: pathlib.Path) -> pathlib.Path:
    """driver_gap_<cores>c_overload.md from the overload runs' CSVs of every seed in `folder`: per variant the mean
    service time per request per core over the seeds with its t-interval, and each variant's sustained rate over
    the two drivers'."""
    runs = pd.concat([pd.read_csv(f) for f in sorted(folder.glob(f"driver_gap_{cores}c_overload_*seed*.csv"))],
                     ignore_index=True)
    rows = []
    for name, g in runs.groupby("variant", sort=False):
        n = len(g)
        mean = g.ns_per_request_per_core.mean()
        half = T_975[n] * g.ns_per_request_per_core.std(ddof=1) / math.sqrt(n) if n in T_975 else math.nan
        rows.append({"variant": name, "driver": ALL[name][1], "seeds": n,
                     "ns_per_request_per_core": mean, "half_width_95": half,
                     "sustained_mrps": g.sustained_mrps.mean(), "ipc": g.ipc.mean(),
                     "busy_insts_per_request": g.busy_insts_per_answered.mean(),
                     "server_unsent_per_kframe": g.server_unsent_per_kframe.mean()})
    df = pd.DataFrame(rows)
    by = df.set_index("variant").ns_per_request_per_core
    for ref in ("dpdk", "compact"):
        if ref in by.index:
            df[f"rate_vs_{ref}"] = by[ref] / df.ns_per_request_per_core     # rate ratio = inverse time ratio
    first = runs.iloc[0]
    out = folder / f"driver_gap_{cores}c_overload.md"
    out.write_text("\n".join([
        "# The LLC study's driver gap at overload, one argument at a time (REDUCED)", "",
        __doc__.split("\n\n")[1], "",
        f"Conditions: {first.get('conditions', f'REDUCED: a {cores}-core share of the 60-core socket')}; offered {first.offered_mpps_per_port:g} M frames/s per port (above every "
        f"variant's capacity, so every core is saturated), {int(first.get('warmup_requests_per_core', 0)):,} warm-up "
        "requests per core; seeds (client.measure_seed): " + ", ".join(str(s) for s in sorted(runs.seed.unique())) +
        ". Command: `python -m drivers.cli.driver_gap --cores 20 --overload 148.8 --warmup-per-core 2500 "
        "--requests-per-core 2000 --seed S` (and `--variant compact+rs8 --out .../driver_gap_20c_overload_probe_seedS.csv`), then `--overload-report`.", "",
        "ns_per_request_per_core: cores / sustained rate, the time a saturated core takes per request (mean over "
        "the seeds, +- the 95% t-interval); sustained_mrps: offered less loss (end_to_end.sustained_mrps); "
        "rate_vs_X: the variant's rate over X's; busy_insts_per_request: instructions in polls that found work per "
        "answered request; server_unsent_per_kframe: frames the server received and did not send back (TX drops) "
        "per thousand.", "",
        common.markdown_table(df), ""]))
    return out


def ratio(a: float, ha: float, b: float, hb: float) -> tuple[float, float]:
    """a / b and its 95% half-width from the two independent intervals (first order)."""
    q = a / b
    return q, q * math.hypot(ha / a, hb / b)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--variant", action="append", choices=list(ALL), help="run only these")
    parser.add_argument("--cores", type=int, default=CORES, help="the share of the socket (default: one NIC's)")
    parser.add_argument("--overload", type=float, metavar="MPPS",
                        help="instead: one run per variant (--variant) at MPPS offered per port, above capacity")
    parser.add_argument("--warmup-per-core", type=int, default=llc.WARMUP_REQUESTS_PER_CORE,
                        help="with --overload: warm-up requests per core after the restore (default the LLC study's)")
    parser.add_argument("--overload-report", action="store_true",
                        help="the report of the overload runs stored (every seed), then stop")
    parser.add_argument("--requests-per-core", type=int, default=0, help="with --overload: measured requests per core")
    parser.add_argument("--seed", type=int, default=0, help="with --overload: client.measure_seed, the "
                        "warm-up's and measured phase's keys and operations from their own stream (the restored load, "
                        "System.seed and client.seed stay the study's)")
    parser.add_argument("--stats-dir", help="with --overload: write each run's statistics there (<variant>.json)")
    parser.add_argument("--draw-only", action="store_true", help="run nothing: report what is stored")
    parser.add_argument("--out", help="report path (default results/figures-reduced/llc/driver_gap_<cores>c.md)")
    args = parser.parse_args(argv)
    cores = args.cores
    if args.overload_report:
        print(overload_report(cores, ROOT / "results" / "figures-reduced" / "llc"))
        return 0
    if args.overload:
        out = pathlib.Path(args.out or ROOT / "results" / "figures-reduced" / "llc" / f"driver_gap_{cores}c_overload_seed{args.seed}.csv")
        out.parent.mkdir(parents=True, exist_ok=True)
        df = overload(args.variant or list(VARIANTS), cores, args.overload, out, args.warmup_per_core,
                      pathlib.Path(args.stats_dir) if args.stats_dir else None, args.seed, args.requests_per_core)
        df.insert(0, "conditions", f"REDUCED: a {cores}-core share of the 60-core socket, {ITEMS:,} tiny items, "
                  f"{LLC_PER_CORE_KB} KB of LLC per core; one run at the offered load, caches warmed over "
                  f"{args.warmup_per_core:,} requests per core")
        df.to_csv(out, index=False)
        print(common.markdown_table(df.drop(columns=["conditions"])))
        return 0
    from analysis.sweeps import load_sweep

    rows = []
    names = [n for n in VARIANTS if not args.variant or n in args.variant] if args.draw_only else list(VARIANTS)
    for name in names:
        sw = variant_sweep(name, cores)
        keys = [p.key for p in sw.resolve()]
        if not args.draw_only and (not args.variant or name in args.variant):
            sweeps.run(sw, jobs=1, progress=False)
        store = sweeps.store_dir(sw.name)
        table = load_sweep(store, keys=keys) if (store / "sweep.json").exists() else pd.DataFrame()
        rows.append(row_of(name, table))
    df = pd.DataFrame(rows)
    base = df.set_index("variant")
    for ref in ("compact", "dpdk"):
        if ref in base.index and "throughput_mrps" in base and base.throughput_mrps.notna().get(ref, False):
            b, hb = base.loc[ref, "throughput_mrps"], base.loc[ref, "throughput_ci_mrps"]
            df[f"vs_{ref}"] = [f"{q:.3f} +- {h:.3f}" if t == t else "" for t, q, h in
                               ((t, *ratio(t, h_, b, hb)) for t, h_ in zip(df.get("throughput_mrps", []),
                                                                          df.get("throughput_ci_mrps", [])))]
    conditions = (f"REDUCED: a {cores}-core share of the 60-core socket (per-core resources in proportion), "
                  f"{ITEMS:,} tiny items, {LLC_PER_CORE_KB} KB of LLC per core; capacity search to "
                  f"{common.CAPACITY_RESOLUTION:.0%}, then the steady-state window (95% interval)")
    df.insert(0, "conditions", conditions)
    out = pathlib.Path(args.out or ROOT / "results" / "figures-reduced" / "llc" / f"driver_gap_{cores}c.md")
    out.parent.mkdir(parents=True, exist_ok=True)
    df.to_csv(out.with_suffix(".csv"), index=False)
    lines = ["# The LLC study's driver gap, one argument at a time (REDUCED)", "", __doc__.split("\n\n")[1], "",
             f"Conditions: {conditions}.", "",
             "Server arguments: " + "; ".join(f"{n}: {' '.join(f'{k}={v}' for k, v in a.items())}"
                                              for n, (a, _) in VARIANTS.items()), "",
             "vs_X: throughput over variant X's, with the 95% half-width from both intervals. insts_per_req_work / "
             "_idle: instructions per request in request processing and in idle polling (client.insts_per_request_"
             "work / _idle); l1d_coherence_inv_per_kreq: L1D lines invalidated by coherence (the NIC's DMA writes "
             "among them) per thousand requests; load_latency_avg: cycles per load, mean over the cores.", "",
             common.markdown_table(df.drop(columns=["conditions"])), ""]
    out.write_text("\n".join(lines))
    print(out)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
