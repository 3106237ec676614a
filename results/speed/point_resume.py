"""A capacity point stopped mid-way and resumed from its journal (drivers/sweep/journal.py, issue 28), end to end on
a reduced real point: capacity_confirmed.py's (the target with CORES cores, ITEMS items, Zipf 0.99, the end-to-end
study's window, SEEDS seeds). Three runs: uninterrupted without a journal; with a journal, stopped by SIGTERM (to its
process group, as a session's end stops it) once the journal holds STOP units; and again with that journal. Prints
whether the resumed run's record equals the uninterrupted one's (every statistic, load, window and probe, as JSON;
but the CPU times, warm-ups and replayed units), the units replayed, and the CPU seconds of each run (this process's
reaped children: a run and its shared warm-up's processes; the stopped run's processes that outlived it are not
counted, so its figure is a lower bound).

Usage: point_resume.py CORES ITEMS SEEDS STOP OUTDIR"""
import json
import os
import pathlib
import resource
import shutil
import signal
import subprocess
import sys
import time

cores, items, seeds, stop, outdir = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4]), pathlib.Path(sys.argv[5])
outdir.mkdir(parents=True, exist_ok=True)
journal = outdir / "journal.jsonl"
journal.unlink(missing_ok=True)
script = pathlib.Path(__file__).with_name("capacity_confirmed.py")
# Fields that are not the point's result: how it was run.
HOW = ("cpu_search_s", "cpu_windows_s", "cpu_s", "warmups", "replayed_units")


def children_cpu() -> float:
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


def run(name: str, *extra: str, stop_at: int | None = None) -> float:
    """One run of capacity_confirmed.py (its output in OUTDIR/NAME.log, its record in NAME.json); `stop_at`: SIGTERM
    to its process group once the journal holds that many lines. Returns its CPU seconds."""
    before = children_cpu()
    with open(outdir / f"{name}.log", "w") as log:
        proc = subprocess.Popen([sys.executable, str(script), cores, items, "--zipf", "--windowed", "--seeds", seeds,
                                 "--json", str(outdir / f"{name}.json"), *extra], stdout=log, stderr=subprocess.STDOUT,
                                start_new_session=True)
        while proc.poll() is None:
            if stop_at is not None and journal.exists() and len(journal.read_bytes().splitlines()) >= stop_at:
                os.killpg(proc.pid, signal.SIGTERM)
                proc.wait()
                # The stopped run's temporary checkpoint (its `finally` did not run).
                for line in (outdir / f"{name}.log").read_text().splitlines():
                    if line.startswith("checkpoint folder "):
                        shutil.rmtree(line.split(" ", 2)[2], ignore_errors=True)
                break
            time.sleep(0.2)
    return children_cpu() - before


def result(name: str) -> dict:
    return {k: v for k, v in json.loads((outdir / f"{name}.json").read_text()).items() if k not in HOW}


cpu = {"uninterrupted": run("uninterrupted")}
cpu["stopped"] = run("stopped", "--journal", str(journal), stop_at=stop)
journaled = len(journal.read_bytes().splitlines())
cpu["resumed"] = run("resumed", "--journal", str(journal))
same = json.dumps(result("uninterrupted"), sort_keys=True) == json.dumps(result("resumed"), sort_keys=True)
resumed = json.loads((outdir / "resumed.json").read_text())
print(json.dumps({"cores": int(cores), "items": int(items), "seeds": int(seeds), "journaled_when_stopped": journaled,
                  "replayed_units": resumed["replayed_units"], "record_identical": same,
                  "stats": len(resumed["stats"]), "cpu_s": cpu,
                  "cpu_saved_s": cpu["uninterrupted"] - cpu["resumed"]}, indent=1))
