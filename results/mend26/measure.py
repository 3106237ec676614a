"""The partitioned schedule's order check on the reduced runs the order tests use (tests/conftest.py::kvs_on_sockets,
1,500 requests, 4,096 items: 2 x 2, 4 x 1, 2 x 4) and the dual and quad servers (bench_server.py's reduced runs, by
dual.sh / quad.sh): for each run in both partition orders, how many statistics the order moves, the instructions
parked (`parked_insts`) and those the park probe let through that crossed anyway (`unparked_crossings`, review
finding 6). Run from the checkout whose engine is measured (mend-s26):

    .venv/bin/python results/mend26/measure.py OUTDIR [2x2 4x1 2x4]      (KVS runs; statistics to OUTDIR/*.json)
    .venv/bin/python results/mend26/measure.py OUTDIR --compare A.json B.json   (two saved runs)"""
import gzip
import json
import pathlib
import sys
import time

sys.path.insert(0, "tests")


def load(path):
    opener = gzip.open if str(path).endswith(".gz") else open
    with opener(path, "rt") as f:
        d = json.load(f)
    return d.get("stats", d)


def summary(name, a, b=None):
    parked = sum(v for k, v in a.items() if k.endswith(".parked_insts"))
    missed = sum(v for k, v in a.items() if k.endswith(".unparked_crossings"))
    have = any(k.endswith(".unparked_crossings") for k in a)
    line = f"{name}: parked_insts {parked:.0f}, unparked_crossings {missed:.0f}" + ("" if have else " (not written)")
    if b is not None:
        common = [k for k in a if k in b]
        moved = [k for k in common if a[k] != b[k]]
        line += f"; the order moves {len(moved)} of {len(common)} statistics"
    return line


def main():
    out = pathlib.Path(sys.argv[1])
    out.mkdir(parents=True, exist_ok=True)
    if "--compare" in sys.argv:
        i = sys.argv.index("--compare")
        print(summary(f"{sys.argv[i + 1]} vs {sys.argv[i + 2]}", load(sys.argv[i + 1]), load(sys.argv[i + 2])))
        return
    from conftest import kvs_on_sockets
    from models.sim import simulate

    for shape in [a for a in sys.argv[2:] if "x" in a] or ["2x2", "4x1", "2x4"]:
        sockets, cores = map(int, shape.split("x"))
        runs = {}
        for order in ("socket", "reversed"):
            s = kvs_on_sockets(sockets, cores)
            s.schedule, s.partition_order = "partitioned", order
            t = time.process_time()
            r = simulate(s)
            runs[order] = r.stats
            (out / f"kvs{shape}_{order}.json").write_text(json.dumps({"stop": r.stop_reason, "stats": r.stats},
                                                                      sort_keys=True, indent=0))
            print(shape, order, r.stop_reason, f"{time.process_time() - t:.1f} s CPU",
                  f"{r.stats.get('client.throughput_mrps')} M req/s", flush=True)
        print(summary(f"kvs {shape}", runs["socket"], runs["reversed"]), flush=True)


if __name__ == "__main__":
    main()
