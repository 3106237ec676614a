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
                      report: Callable[[str], None], journal: Any = None) -> dict[str, Any]:
    """The capacity search (drivers.capacity) on the point: the stats are the best probe's, plus capacity.*.
    `journal`: the point's (drivers/sweep/journal.py): its probes and windows are journaled and, on a re-run of a
    stopped point, replayed (capacity.replayed_units says how many)."""
    from .. import capacity
    from ..shared_warmup import SharedWarmup

    def make(rate: float) -> System:
        system = make_system()
        system.client.offered_mpps = rate
        return system

    def progress(p) -> None:
        report(f"probe at {p.offered_mpps:.3f} M frames/s per port: loss {100 * p.loss:.2f}%")

    # Probes that restore the sweep's checkpoint share one warm-up, and the steady-state windows fork from it too
    # (drivers/shared_warmup.py: every statistic a fresh run's); options['shared_warmup'] = False warms each run.
    # options['capacity_search']: 'saturated' (the default where windows judge the load, session 24): the probes stop
    # at the saturated one and the windows start from its prediction (capacity.search(refine=False)); 'refined' the
    # probes' search to the resolution first (capacity.refine_option).
    refine = capacity.refine_option(options)
    from ..window_capacity import check_options

    check_options(options)     # the windows' options (confirm_step, confirm_window), before any probe
    shared = SharedWarmup() if options.get("shared_warmup", True) else None
    try:
        res = capacity.capacity(make, resolution=options.get("resolution", capacity.DEFAULT_RESOLUTION),
                                max_loss=options.get("max_loss", capacity.DEFAULT_MAX_LOSS), progress=progress,
                                runner=shared, share_warmup=shared is not None, journal=journal, refine=refine)
        stats = dict(res.best.stats if res.best else {})
        stats.update({"capacity.mpps_per_port": res.offered_mpps, "capacity.upper_mpps_per_port":
                      res.upper_mpps if not res.line_limited else -1.0, "capacity.probes": float(len(res.probes))})
        out: dict[str, Any] = {"probes": res.table()}
        if options.get("steady") and (res.best or not res.refined):
            # The windows judge the search's answer and move the load until one confirms it (options['confirm'] =
            # False: the rule at the search's answer only); the point's statistics are then the window's.
            from ..window_capacity import at_capacity

            found = at_capacity(make, res, int(options.get("seeds", 1)), options, report, runner=shared,
                                journal=journal)
            stats = {**found.pop("stats"), "capacity.probes": float(len(res.probes))}
            found.pop("run_stats")
            out.update(found)
        stats["capacity.mrps"] = stats.get("client.throughput_mrps", 0.0)
        if journal is not None:
            stats["capacity.replayed_units"] = float(journal.replayed)
    finally:
        if shared is not None:
            shared.close()
    if options.get("power") and (res.best or not res.refined):    # a stopped search's capacity is a window's
        import power

        stats.update(power.price_run(stats, make(stats["capacity.mpps_per_port"]).to_dict()).stats())
    return {"stats": stats, **out}


def steady_window(make: Callable[[float], System], res: Any, options: dict[str, Any],
                  report: Callable[[str], None],
                  runner: Callable[..., Any] | None = None) -> tuple[dict[str, float], list[dict[str, float]]]:
    """At the capacity found, the steady-state rule (drivers/steady_state.py): windows from twice the probes'
    measured requests, doubling until the throughput's 95% interval is within options['steady_target'] (2%) and
    the busiest core is saturated (its queue's response rate over its rate in the lowest failed probe, where it
    was overloaded); with options['seeds'] = K > 1, the rule once per seed (client.measure_seed 0 .. K-1) and the
    seeds' mean and interval (steady_state.replicate). A line-limited server has no failed probe: saturation is not required there, and the record
    says so (steady.saturation_required = 0). The stats are the last window's, under steady.* (its p95 too).
    `runner`: as steady_state.simulated_window's (a SharedWarmup: the windows fork from the probes' warm-up).
    (drivers/window_capacity.at_capacity first moves the load to one the windows confirm.)"""
    from .. import window_capacity as wc

    return wc.rule_stats(wc.Windows(make, runner), res.offered_mpps, wc.probes_service_rate(res.probes, res.max_loss),
                         res.max_loss, int(options.get("seeds", 1)), options, report)[:2]


evaluate_capacity.restores = True   # every probe restores the shared checkpoint
evaluate_capacity.journals = True   # run_point gives it the point's journal


def capacity_key_options(options: dict[str, Any]) -> dict[str, Any]:
    """The options a capacity point's key names: with its search (drivers.capacity.search_named)."""
    from .. import capacity

    return capacity.search_named(options)


evaluate_capacity.key_options = capacity_key_options   # points.Sweep.resolve: the key names the search run


