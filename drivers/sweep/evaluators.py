"""Evaluators: (point's system factory, options, report) -> {"stats": {...}, ...extra JSON}. A sweep names its
evaluator as 'module:function' (points.RUN_EVALUATOR, points.CAPACITY_EVALUATOR)."""

from __future__ import annotations

from typing import Any, Callable

from models.system import System


def evaluate_run(make_system: Callable[[], System], options: dict[str, Any],
                 report: Callable[[str], None]) -> dict[str, Any]:
    """One simulation; with options['power'] true, priced by the power model from the run's own configuration
    (power.* stats)."""
    from models.sim import simulate

    system = make_system()

    def progress(insts: int, ticks: int, phase: str) -> None:
        report(f"{phase}: {insts:,} instructions, {ticks * 1e-9:.3f} ms simulated")

    result = simulate(system, progress=progress, progress_every=5_000_000)
    stats = dict(result.stats)
    if options.get("power"):
        import power

        stats.update(power.price_run(stats, system.to_dict()).stats())
    return {"stats": stats, "host": {"insts": result.insts, "sim_seconds": result.sim_seconds}}


evaluate_run.restores = True    # runs make_system()'s configuration as is: a shared checkpoint can be restored


def evaluate_capacity(make_system: Callable[[], System], options: dict[str, Any],
                      report: Callable[[str], None]) -> dict[str, Any]:
    """The capacity search (drivers.capacity) on the point: the stats are the best probe's, plus capacity.*."""
    from .. import capacity

    def make(rate: float) -> System:
        system = make_system()
        system.client.offered_mpps = rate
        return system

    def progress(p) -> None:
        report(f"probe at {p.offered_mpps:.3f} M frames/s per port: loss {100 * p.loss:.2f}%")

    res = capacity.capacity(make, resolution=options.get("resolution", capacity.DEFAULT_RESOLUTION),
                            max_loss=options.get("max_loss", capacity.DEFAULT_MAX_LOSS), progress=progress)
    stats = dict(res.best.stats if res.best else {})
    stats.update({"capacity.mpps_per_port": res.offered_mpps, "capacity.upper_mpps_per_port":
                  res.upper_mpps if not res.line_limited else -1.0, "capacity.probes": float(len(res.probes)),
                  "capacity.mrps": stats.get("client.throughput_mrps", 0.0)})
    if options.get("power") and res.best:
        import power

        stats.update(power.price_run(stats, make(res.offered_mpps).to_dict()).stats())
    return {"stats": stats, "probes": res.table()}


evaluate_capacity.restores = True   # every probe restores the shared checkpoint


