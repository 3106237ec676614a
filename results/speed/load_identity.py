#!/usr/bin/env python3
"""Is a bulk load's state the same on two engines? Loads `items` Tiny items into the target socket the way
sim-scripts/load_memory.py does (drivers/cli/load_memory.py `_system`: functional, checkpoint where the load ends),
then restores that checkpoint and runs `requests` requests (detailed, warm-up included). Prints one JSON line: the
sha256 of each checkpoint file (the manifest's paths blanked: the folder and the binary), of the load run's
statistics and of the restored run's, and the load's CPU seconds. Run it from the tree whose engine is to be
checked (its `models/` comes first on the path), and compare the lines.

    cd TREE && nice -n 10 python results/speed/load_identity.py --items 1048576 --unpacked-memory 52428800 \
        --requests 6000 --dir /tmp/ident
"""

from __future__ import annotations

import argparse
import hashlib
import json
import pathlib
import shutil
import sys
import time

sys.path.insert(0, str(pathlib.Path.cwd()))


def _digest(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()[:16]


def _stats_digest(stats: dict) -> str:
    return _digest(json.dumps({k: stats[k] for k in sorted(stats)}, sort_keys=True).encode())


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--items", type=int, required=True)
    parser.add_argument("--cores", type=int, default=60)
    parser.add_argument("--unpacked-memory", type=int, default=0)
    parser.add_argument("--requests", type=int, default=6000, help="requests of the restored run (0: none)")
    parser.add_argument("--dir", required=True, help="the checkpoint's folder (replaced)")
    opts = parser.parse_args()
    from drivers.cli.load_memory import _system
    from models.sim import simulate

    ck = pathlib.Path(opts.dir)
    shutil.rmtree(ck, ignore_errors=True)
    system = _system(opts.items, opts.cores, opts.unpacked_memory, 1)
    system.checkpoint_to = str(ck)
    cpu = time.process_time()
    load = simulate(system)
    cpu = time.process_time() - cpu
    files = {}
    for f in sorted(ck.iterdir()):
        data = f.read_bytes()
        if f.name == "manifest.json":
            manifest = json.loads(data)
            # The paths in it (the folder, the binary's place in the tree run from) are blanked.
            manifest["config"]["checkpoint_to"] = manifest["binary"] = manifest["config"]["workload"]["binary"] = ""
            data = json.dumps(manifest, sort_keys=True).encode()
        if f.name != "checksums.sha256":  # it covers the manifest, path included
            files[f.name] = _digest(data)
    # `checkpoint.bytes` counts the manifest, whose length follows the folder's name.
    load_stats = {k: v for k, v in load.stats.items() if k != "system.checkpoint.bytes"}
    rec = {"items": opts.items, "unpacked_memory": opts.unpacked_memory, "load_cpu_s": round(cpu, 2),
           "insts": load.insts, "files": files, "load_stats": _stats_digest(load_stats)}
    if opts.requests:
        from configs import brps_target_socket
        from drivers.studies.common import fit_mem_limit

        restored = fit_mem_limit(brps_target_socket.system(cores=opts.cores, items=opts.items,
                                                           requests=opts.requests))
        if opts.unpacked_memory:
            restored.unpacked_memory = opts.unpacked_memory
        restored.restore_from = str(ck)
        run = simulate(restored)
        rec["restored_stats"] = _stats_digest(run.stats)
        rec["restored_n"] = len(run.stats)
        rec["restored_throughput"] = run.stats.get("client.throughput_mrps")
    print(json.dumps(rec))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
