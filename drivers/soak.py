"""A random-configuration soak: draw valid configurations from the parameters' declared ranges, run each briefly in
a child process under a watchdog, and check that nothing panics or hangs, that the coherence and client checks
hold and that the same configuration and seed give the same statistics.

A configuration starts from the KVS server's detailed or functional config (`kvs_default`, `kvs_functional`) and
changes each parameter of the core, caches, network, memory, NIC and client, and the run's mode, with probability
CHANGE, to a value drawn from the parameter's declared range or choices (models/params.py: Param.min, max,
choices), log-uniformly across wide ranges. What a brief run cannot afford (BUDGET: items, requests, cache sizes,
harts) caps a range; what the soak must not change (LEFT_ALONE) says why. A draw that the parameter classes refuse
(ParamError) is drawn again: the soak runs valid configurations only. One run in CHECKPOINT_SHARE loads, writes a
checkpoint and restores it (twice, for determinism).

    python -m drivers.soak --minutes 30 --seed 1 --out results/soak      (make soak SOAK_MINUTES=30)
    python -m drivers.soak --replay results/soak/failures/0007.json      (one failure again, in this process)

Every configuration run is a line of <out>/soak.jsonl; every failure also <out>/failures/NNNN.json (its spec, to
replay). Outcomes: ok, slow (still making progress when the watchdog's patience ran out: the budget did not bound
it; not a failure), panic (EngineBug), client (ClientCheckFailed), guest (a guest fault), refused (the engine
refused what the parameter classes accepted: a limit not named before the run), hang (no instruction for the
watchdog's period), crash (the child died), nondeterministic, incomplete, error (anything else).
"""

from __future__ import annotations

import argparse
import ctypes
import hashlib
import json
import math
import os
import pathlib
import random
import signal
import subprocess
import sys
import tempfile
import time
import warnings
from typing import Any

from models.params import Param, ParamError, SimObject
from models.system import System

ROOT = pathlib.Path(__file__).resolve().parents[1]
BASES = ("kvs_default", "kvs_functional")
SUBTREES = ("core", "caches", "noc", "memory", "nic", "client")
SYSTEM_FIELDS = ("mode", "detailed_start", "warm_caches", "quantum", "seed")
CHANGE = 0.12                 # chance that a parameter leaves its config's value
CHECKPOINT_SHARE = 0.15       # runs that checkpoint and restore
WATCHDOG_SECONDS = 120        # a child whose instruction count does not move for this long is a hang
SLOW_FACTOR = 4               # one that moves but has not finished after this many watchdog periods is slow
PR_SET_PDEATHSIG = 1           # prctl option (linux/prctl.h): a signal for the child when its parent dies
# The most a drawn value may be, so a run takes seconds (the declared maximum when it is lower).
BUDGET = {"harts": 4, "client.items": 4096, "client.requests": 400, "client.warmup_requests": 400,
          "client.fuzz_frames": 200, "client.window": 64, "quantum": 20_000, "detailed_start_insts": 3_000_000,
          "size": 4 << 20, "caches.llc_slices": 8, "noc.mesh_x": 4, "noc.mesh_y": 4, "memory.channels": 4,
          "nic.ports": 4, "nic.queues": 8, "nic.rx_fifo_frames": 4096,
          # Assumed: 10 us, above any PCIe path through switches. The lost-response watchdog counts scheduling
          # rounds, not simulated time, so a healthy run whose every doorbell and DMA read crosses tens of
          # microseconds outlasts it (seed 1's draw 89: 91.6 us with 2 read tags completes only with
          # client.stall_rounds raised to 2,000,000).
          "nic.pcie_latency": 10_000_000}
# Counts the parameter classes accept only as powers of two (0 stays 0 where it means "off"): a draw is rounded down
# to one, so these leaves do not make most draws invalid.
POWER_OF_TWO = {"bpred_entries", "btb_entries", "fetch_block_bytes", "uop_cache_sets", "uop_cache_window_bytes",
                "bank_groups"}
# Parameters the soak leaves at the config's value, and why.
LEFT_ALONE = {
    "client.enabled": "the soak runs the KVS server against the client",
    "nic.enabled": "the client talks through the NIC",
    "nic.socket": "one socket",
    "client.protocol": "the soak's server is the MICA-style KVS (memcached is another binary)",
    "client.transport": "TCP is the memcached server's",
    "client.offered_mpps": "open loop drops frames by design (loss), and at a low rate a run takes long",
    "client.delete_ratio": "DELETEs are memcached's",
    "caches.directory.check": "the soak turns the coherence checks on in every detailed run",
    "memory.kind": "the 3D stacks are the dense servers' (their own configs)",
    "nic.interface": "the zero-copy NIC is KeyVault's, with its own server",
    "nic.attach": "the on-die MAC's buffer SRAM needs its driver's layout (configs/mercury.py)",
}


# Parameters never drawn but set from what was drawn, and why.
DERIVED = {
    "client.stall_rounds": "a small value fails a healthy run by design (the lost-response watchdog); raised only "
                           "with a shortened quantum (_watchdog_spans_the_quantum)",
}


def _params(obj: SimObject, prefix: str):
    """(path, param, owner) of every leaf parameter under `obj`, children first-level objects only."""
    for name, param in obj._params.items():
        path = f"{prefix}{name}"
        if param.kind == "child":
            if not param.many:
                yield from _params(getattr(obj, name), f"{path}.")
        elif param.kind not in ("str", "strlist", "coords"):
            yield path, param


def draw_value(param: Param, path: str, current: Any, rng: random.Random) -> Any:
    """A value from the parameter's declared choices or range, capped by BUDGET."""
    if param.kind == "bool":
        return rng.random() < 0.5
    if param.choices:
        return rng.choice(param.choices)
    cap = BUDGET.get(path, BUDGET.get(path.split(".")[-1], BUDGET["size"] if param.kind == "size" else None))
    lo = param.min if param.min is not None else 0
    hi = param.max
    if hi is None:       # no declared maximum: up to four times the config's value
        hi = max(lo + 1, 4 * (current or 1))
    if cap is not None:
        hi = min(hi, max(lo, cap))
    if param.kind == "float":
        return rng.uniform(lo, hi)
    if lo >= 1 and hi / lo > 16:
        value = math.exp(rng.uniform(math.log(lo), math.log(hi + 1)))
    else:
        value = rng.uniform(lo, hi + 1)
    value = int(min(hi, max(lo, value)))
    if path.rsplit(".", 1)[-1] in POWER_OF_TWO and value > 0:
        value = 1 << (value.bit_length() - 1)
    if param.kind == "size" and value >= 64:
        value = 1 << (value.bit_length() - 1)       # capacities as architects give them
    return value


def _prefetch_bound_within_mshrs(system, changes: list[list[Any]]) -> None:
    """A prefetcher's issue bound may not exceed its cache's MSHRs (Cache.validate): where a draw changed either,
    the bound is capped at the MSHRs, so the bound's range does not make a tenth of the draws invalid."""
    drawn = {path: value for path, value in changes}
    for path in [p for p in drawn if p.endswith(".prefetch.max_misses_in_flight")]:
        cache = path[: -len(".prefetch.max_misses_in_flight")]
        mshrs = drawn.get(f"{cache}.mshrs", _walk(system, f"{cache}.mshrs")[0].mshrs)
        if drawn[path] > mshrs:
            changes[:] = [c for c in changes if c[0] != path] + [[path, mshrs]]


def _uop_cache_has_a_legacy_path(system, changes: list[list[Any]], rng: random.Random) -> None:
    """A uop cache needs the legacy decoders' block size for its misses (Core.validate): where a draw turned the uop
    cache on and the block size is 0, the block size is drawn too (16 or 32 bytes), so the two decode paths are
    exercised together instead of refused."""
    drawn = {path: value for path, value in changes}
    for path in [p for p in drawn if p.endswith(".uop_cache_sets") and drawn[p]]:
        core = path[: -len(".uop_cache_sets")]
        if not drawn.get(f"{core}.fetch_block_bytes", _walk(system, path)[0].fetch_block_bytes):
            changes[:] = [c for c in changes if c[0] != f"{core}.fetch_block_bytes"] + \
                [[f"{core}.fetch_block_bytes", rng.choice([16, 32])]]


def _watchdog_spans_the_quantum(system, changes: list[list[Any]]) -> None:
    """The client's lost-response watchdog counts scheduling rounds (client.stall_rounds), and a round lasts one
    quantum of every hart: where a draw shortened the quantum, the watchdog gets as many more rounds, so it spans
    the instructions it spans at the config's quantum (seed 1's draw 101: quantum 3 fired it during the server's
    start-up; the run completes with the rounds scaled). Counting rounds is the model's limit, left as it is."""
    drawn = {path: value for path, value in changes}
    if "quantum" in drawn and drawn["quantum"] < system.quantum:
        rounds = -(-system.client.stall_rounds * system.quantum // drawn["quantum"])
        changes.append(["client.stall_rounds", rounds])


def _tlb_ways_divide_entries(system, changes: list[list[Any]]) -> None:
    """A TLB's ways must divide its entries (Tlb.validate): where a draw changed either, the ways become their
    greatest common divisor, so the many TLB arrays do not make almost every draw invalid."""
    drawn = {path: value for path, value in changes}
    for path in [p for p in drawn if p.endswith((".entries", ".assoc")) and ".mmu." in p]:
        tlb = path.rsplit(".", 1)[0]
        obj, _ = _walk(system, path)
        entries = drawn.get(f"{tlb}.entries", obj.entries)
        ways = drawn.get(f"{tlb}.assoc", obj.assoc)
        if entries and entries % ways:
            changes[:] = [c for c in changes if c[0] != f"{tlb}.assoc"] + [[f"{tlb}.assoc", math.gcd(entries, ways)]]
            drawn[f"{tlb}.assoc"] = math.gcd(entries, ways)


def draw_spec(rng: random.Random) -> dict[str, Any]:
    """One configuration to try: its base config and keywords, and the parameters it changes."""
    import configs

    base = rng.choice(BASES)
    harts_param = System._params["harts"]
    kwargs = {"harts": int(draw_value(harts_param, "harts", 4, rng)),
              "items": int(draw_value(System._params["client"].child._params["items"], "client.items", 4096, rng)),
              "requests": int(draw_value(System._params["client"].child._params["requests"], "client.requests",
                                         400, rng)),
              # a restored run warms up over this many requests (the config's 400,000 would take minutes)
              "warmup_requests": int(draw_value(System._params["client"].child._params["warmup_requests"],
                                                "client.warmup_requests", 400, rng))}
    system = configs.load(base).system(**kwargs)
    changes = []
    leaves = [(f, System._params[f]) for f in SYSTEM_FIELDS]
    for subtree in SUBTREES:
        leaves += list(_params(getattr(system, subtree), f"{subtree}."))
    for path, param in leaves:
        if path in LEFT_ALONE or path in DERIVED or path in ("client.items", "client.requests", "client.warmup_requests") \
                or rng.random() >= CHANGE:
            continue
        obj, leaf = _walk(system, path)
        changes.append([path, draw_value(param, path, getattr(obj, leaf), rng)])
    _tlb_ways_divide_entries(system, changes)
    _prefetch_bound_within_mshrs(system, changes)
    _uop_cache_has_a_legacy_path(system, changes, rng)
    _watchdog_spans_the_quantum(system, changes)
    return {"base": base, "kwargs": kwargs, "set": changes,
            "checkpoint": rng.random() < CHECKPOINT_SHARE}


def _walk(system: SimObject, path: str) -> tuple[SimObject, str]:
    *parents, leaf = path.split(".")
    obj = system
    for part in parents:
        obj = getattr(obj, part)
    return obj, leaf


def build(spec: dict[str, Any]) -> System:
    """The System a spec describes, validated (ParamError when the parameter classes refuse it)."""
    import configs

    system = configs.load(spec["base"]).system(**spec["kwargs"])
    for path, value in spec["set"]:
        obj, leaf = _walk(system, path)
        setattr(obj, leaf, value)
    if system.mode == "detailed":
        system.caches.directory.check = True         # the coherence invariants after every access
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")              # a server that evicts is a valid (if odd) configuration
        system.validate()
    from models.sim import check_host_memory

    check_host_memory(system)
    return system


def draw_valid(rng: random.Random, tries: int = 200) -> tuple[dict[str, Any], int]:
    """A spec the parameter classes accept, and how many draws they refused first."""
    for refused in range(tries):
        spec = draw_spec(rng)
        try:
            build(spec)
            return spec, refused
        except (ParamError, ValueError):
            continue
    raise RuntimeError(f"no valid configuration in {tries} draws")


# -- One configuration, in the child ------------------------------------------------------------------------------

def _stats_digest(stats: dict[str, float]) -> str:
    return hashlib.sha256(json.dumps(stats, sort_keys=True).encode()).hexdigest()[:16]


def _classify(err: BaseException) -> str:
    from models import errors

    for kind, outcome in ((errors.EngineBug, "panic"), (errors.ClientCheckFailed, "client"),
                          (errors.GuestFault, "guest"), (errors.ConfigError, "refused")):
        if isinstance(err, kind):
            return outcome
    return "error"


def run_spec(spec: dict[str, Any]) -> dict[str, Any]:
    """Run a spec twice (restored twice from one checkpoint when it checkpoints) and check both runs."""
    from models.sim import simulate as engine_run

    progress_file = os.environ.get("KVSIM_SOAK_PROGRESS")
    done = [0]

    def progress(insts: int, ticks: int, phase: str) -> None:     # for the parent's watchdog (never changes results)
        if progress_file:
            pathlib.Path(progress_file).write_text(f"{done[0] + insts}")

    def simulate(system):
        result = engine_run(system, progress=progress, progress_every=1_000_000)
        done[0] += result.insts
        return result

    started = time.monotonic()
    result: dict[str, Any] = {"outcome": "ok", "error": None}
    try:
        with tempfile.TemporaryDirectory(prefix="kvsim-soak-") as tmp, warnings.catch_warnings():
            warnings.simplefilter("ignore")
            runs = []
            if spec.get("checkpoint"):
                loader = build(spec)
                loader.checkpoint_to = str(pathlib.Path(tmp) / "ckpt")
                check_run(simulate(loader), loader)
            for _ in range(2):
                system = build(spec)
                if spec.get("checkpoint"):
                    system.restore_from = str(pathlib.Path(tmp) / "ckpt")
                run = simulate(system)
                check_run(run, system)
                runs.append(_stats_digest(run.stats))
            result["stats"] = runs[0]
            if runs[0] != runs[1]:
                result.update(outcome="nondeterministic", error=f"statistics {runs[0]} then {runs[1]}")
    except CheckFailed as err:
        result.update(outcome=err.outcome, error=str(err))
    except Exception as err:
        result.update(outcome=_classify(err), error=f"{type(err).__name__}: {err}")
    result["seconds"] = round(time.monotonic() - started, 2)
    return result


class CheckFailed(Exception):
    def __init__(self, outcome: str, message: str):
        super().__init__(message)
        self.outcome = outcome


def check_run(run, system: System) -> None:
    """A finished run is complete and its client answered and checked every measured request."""
    if not run.status.startswith("ok"):
        raise CheckFailed("incomplete", run.status)
    answered = run.stats.get("client.requests")
    if answered != system.client.requests:
        raise CheckFailed("client", f"client.requests = {answered}, not {system.client.requests}")


# -- The soak, in the parent --------------------------------------------------------------------------------------

def run_child(spec: dict[str, Any], timeout: float) -> dict[str, Any]:
    """Run a spec in a child process under the watchdog: a child whose instruction count (its progress reports)
    has not moved for `timeout` seconds is a hang; one still moving after SLOW_FACTOR x `timeout` is slow (its
    budget was too large, not a failure). Either is killed with what it started."""
    with tempfile.TemporaryDirectory(prefix="kvsim-soak-watch-") as watch:
        progress = pathlib.Path(watch) / "insts"
        env = {**os.environ, "KVSIM_SOAK_PROGRESS": str(progress)}
        with open(pathlib.Path(watch) / "out", "w+") as out, open(pathlib.Path(watch) / "err", "w+") as err:
            proc = subprocess.Popen([sys.executable, "-m", "drivers.soak", "--run", json.dumps(spec)], cwd=ROOT,
                                    stdout=out, stderr=err, text=True, start_new_session=True, env=env,
                                    preexec_fn=_die_with_parent)
            try:
                return _watch(proc, progress, timeout, out, err)
            finally:
                if proc.poll() is None:       # the soak is stopping (Ctrl-C, an error): its child goes with it
                    os.killpg(proc.pid, signal.SIGKILL)
                    proc.wait()


def _die_with_parent() -> None:
    """In the child, before it runs: the kernel kills it when the soak dies, even by SIGKILL (prctl
    PR_SET_PDEATHSIG), so no child outlives its soak (one from a killed soak once ran on for two hours)."""
    ctypes.CDLL(None, use_errno=True).prctl(PR_SET_PDEATHSIG, signal.SIGKILL)


def _watch(proc: subprocess.Popen, progress: pathlib.Path, timeout: float, out, err) -> dict[str, Any]:
    """Wait for the child, killing it as a hang or as slow (see run_child)."""
    started = last_move = time.monotonic()
    insts = ""
    while proc.poll() is None:
        time.sleep(min(0.05 + 0.1 * (time.monotonic() - started), 1.0))
        now = time.monotonic()
        seen = progress.read_text() if progress.exists() else ""
        if seen != insts:
            insts, last_move = seen, now
        outcome = "hang" if now - last_move > timeout else "slow" if now - started > SLOW_FACTOR * timeout \
            else None
        if outcome:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
            what = f"no instruction for {timeout:g} s" if outcome == "hang" else \
                f"still running after {now - started:.0f} s"
            return {"outcome": outcome, "error": f"{what} (watchdog; {insts or 0} instructions reached)",
                    "seconds": round(now - started, 1)}
    out.seek(0)
    err.seek(0)
    return _child_result(proc.returncode, out.read(), err.read())


def _child_result(returncode: int, out: str, err: str) -> dict[str, Any]:
    lines = [line for line in out.splitlines() if line.startswith("{")]
    if returncode != 0 or not lines:
        return {"outcome": "crash", "error": f"exit status {returncode}: {err.strip()[-2000:]}"}
    return json.loads(lines[-1])


def soak(seed: int, minutes: float, out: pathlib.Path | None = None, count: int | None = None,
         timeout: float = WATCHDOG_SECONDS, log=print) -> list[dict[str, Any]]:
    """Run configurations drawn from `seed` until `minutes` pass (or `count` ran); returns a record per run."""
    rng = random.Random(seed)
    deadline = time.monotonic() + minutes * 60
    records: list[dict[str, Any]] = []
    if out is not None:
        (out / "failures").mkdir(parents=True, exist_ok=True)
    while time.monotonic() < deadline and (count is None or len(records) < count):
        spec, refused = draw_valid(rng)
        record = {"n": len(records), "seed": seed, "refused_draws": refused, "spec": spec,
                  **run_child(spec, timeout)}
        records.append(record)
        line = f"[{record['n']}] {record['outcome']} ({record.get('seconds', 0):.1f} s) {spec['base']} " \
               f"{spec['kwargs']} {len(spec['set'])} changes{' +checkpoint' if spec['checkpoint'] else ''}"
        log(line if record["outcome"] == "ok" else f"{line}: {record['error']}")
        if out is not None:
            with open(out / "soak.jsonl", "a") as f:
                f.write(json.dumps(record) + "\n")
            if record["outcome"] not in ("ok", "slow"):     # slow: the budget did not bound it, not a failure
                (out / "failures" / f"{seed}-{record['n']:04d}.json").write_text(json.dumps(record, indent=1))
    return records


def minimize(spec: dict[str, Any], outcome: str, timeout: float, log=print) -> dict[str, Any]:
    """The spec with every change whose removal keeps the same outcome removed (one pass, then again while it
    shrinks): what a failure needs."""
    shrinking = True
    while shrinking:
        shrinking = False
        for i in reversed(range(len(spec["set"]))):
            trial = {**spec, "set": spec["set"][:i] + spec["set"][i + 1:]}
            try:
                build(trial)
            except (ParamError, ValueError):
                continue
            if run_child(trial, timeout)["outcome"] == outcome:
                log(f"without {spec['set'][i]}: still {outcome}")
                spec, shrinking = trial, True
        if spec.get("checkpoint"):
            trial = {**spec, "checkpoint": False}
            if run_child(trial, timeout)["outcome"] == outcome:
                spec, shrinking = trial, True
    return spec


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--minutes", type=float, default=30.0)
    parser.add_argument("--seed", type=int, default=1,
                        help="the soak's own generator of configurations (which parameters change and to what); "
                             "System.seed and client.seed are drawn like any other parameter (changed in a share "
                             "CHANGE of the configurations, else the config's)")
    parser.add_argument("--count", type=int, default=None, help="stop after this many configurations")
    parser.add_argument("--timeout", type=float, default=WATCHDOG_SECONDS, help="watchdog per configuration (s)")
    parser.add_argument("--out", default=None, help="folder for soak.jsonl and failures/")
    parser.add_argument("--run", help=argparse.SUPPRESS)            # the child: one spec as JSON
    parser.add_argument("--replay", help="run one stored failure's spec again, here")
    parser.add_argument("--minimize", help="shrink a stored failure's spec to the changes its outcome needs")
    args = parser.parse_args(argv)
    if args.run:
        print(json.dumps(run_spec(json.loads(args.run))), flush=True)
        return 0
    if args.minimize:
        record = json.loads(pathlib.Path(args.minimize).read_text())
        print(json.dumps(minimize(record["spec"], record["outcome"], args.timeout)))
        return 0
    if args.replay:
        record = run_spec(json.loads(pathlib.Path(args.replay).read_text())["spec"])
        print(json.dumps(record))
        return 0 if record["outcome"] == "ok" else 1
    records = soak(args.seed, args.minutes, pathlib.Path(args.out) if args.out else None, args.count, args.timeout)
    outcomes: dict[str, int] = {}
    for r in records:
        outcomes[r["outcome"]] = outcomes.get(r["outcome"], 0) + 1
    print(f"soak: {len(records)} configurations from seed {args.seed}: "
          + ", ".join(f"{k} {v}" for k, v in sorted(outcomes.items())))
    return 0 if set(outcomes) <= {"ok", "slow"} else 1


if __name__ == "__main__":
    sys.exit(main())
