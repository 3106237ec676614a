"""A sweep's capacity point (drivers.sweep's evaluate_capacity with steady-state windows confirming the capacity, the
store's shared checkpoint) stopped by SIGTERM mid-way and resumed from its journal in the store, end to end through
drivers.sweep.run / run_point (issue 28), reduced: the target with CORES cores, ITEMS items, Zipf 0.99, 300
measured requests a core, SEEDS seeds. Two stores: one runs the point uninterrupted; in the other the sweep (its
driver, worker and shared warm-up processes: one process group) is stopped once the point's journal holds STOP
units and run again. Prints whether the two records agree (every field but the host times, the seal and
capacity.replayed_units), the units replayed, what the progress said, and the CPU seconds (this process's reaped
children; the stopped run's processes that outlived it are not counted: a lower bound).

Usage: sweep_resume.py CORES ITEMS SEEDS STOP OUTDIR"""
import json
import os
import pathlib
import resource
import signal
import subprocess
import sys
import time

cores, items, seeds, stop, outdir = (int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4]),
                                     pathlib.Path(sys.argv[5]))
outdir.mkdir(parents=True, exist_ok=True)
(outdir / "resume_sweep.py").write_text(f"""
from drivers.sweep import CAPACITY_EVALUATOR, Base, List, Sweep
SWEEP = Sweep("resume", Base("brps_target_socket", cores={cores}, items={items}, requests={300 * cores},
                             popularity="zipf"),
              List([{{}}]), evaluator=CAPACITY_EVALUATOR,
              options={{"steady": True, "seeds": {seeds}, "resolution": 0.02}})
""")
RUN = ("import sys; from drivers import sweep as sw; s = sw.load_sweep_module(sys.argv[1])[0]; "
       "sw.run(s, store=sys.argv[2], jobs=1, progress=False)")
HOW = ("host_seconds", "cpu_seconds", "sha256")


def children_cpu() -> float:
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


def run(store: pathlib.Path, stop_at: int | None = None) -> float:
    before = children_cpu()
    with open(outdir / f"{store.name}.log", "a") as log:
        proc = subprocess.Popen([sys.executable, "-c", RUN, str(outdir / "resume_sweep.py"), str(store)], stdout=log,
                                stderr=subprocess.STDOUT, start_new_session=True)
        seen = set()
        while proc.poll() is None:
            for f in (store / "progress").glob("*") if (store / "progress").is_dir() else []:
                try:
                    seen.add(f.read_text())
                except OSError:
                    pass
            journals = list((store / "journal").glob("*.jsonl")) if (store / "journal").is_dir() else []
            if stop_at is not None and journals and len(journals[0].read_bytes().splitlines()) >= stop_at:
                os.killpg(proc.pid, signal.SIGTERM)
                proc.wait()
                break
            time.sleep(0.1)
        log.write("".join(f"progress: {text}\n" for text in sorted(seen)))
    return children_cpu() - before


def record(store: pathlib.Path) -> dict:
    (path,) = (store / "points").glob("*.json")
    return json.loads(path.read_text())


cpu = {"uninterrupted": run(outdir / "plain")}
cpu["stopped"] = run(outdir / "resumed", stop_at=stop)
(journal,) = (outdir / "resumed" / "journal").glob("*.jsonl")
journaled = len(journal.read_bytes().splitlines())
cpu["resumed"] = run(outdir / "resumed")
a, b = record(outdir / "plain"), record(outdir / "resumed")
replayed = b["stats"].pop("capacity.replayed_units")
assert a["stats"].pop("capacity.replayed_units") == 0.0
same = json.dumps({k: v for k, v in a.items() if k not in HOW}, sort_keys=True) == \
    json.dumps({k: v for k, v in b.items() if k not in HOW}, sort_keys=True)
said = [line for line in (outdir / "resumed.log").read_text().splitlines() if "resumed:" in line]
print(json.dumps({"cores": cores, "items": items, "seeds": seeds, "status": b["status"], "error": b.get("error"),
                  "journaled_when_stopped": journaled, "replayed_units": replayed, "record_identical": same,
                  "stats": len(b["stats"]), "windows": b["stats"].get("capacity.windows"),
                  "probes": b["stats"].get("capacity.probes"), "journal_left": journal.exists(),
                  "progress_said": said[:2], "cpu_s": cpu, "cpu_saved_s": cpu["uninterrupted"] - cpu["resumed"]},
                 indent=1))
