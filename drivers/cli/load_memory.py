#!/usr/bin/env python3
"""Where the host memory of a loaded data set goes (issue 28: the paper's 192 Mi Tiny items on this host).

Loads `--items` Tiny items into the 60-core target socket (configs/brps_target_socket.py, its log and index sized
from the items, as every full-condition study does) the way a shared checkpoint is made (drivers/sweep
`loader_system`: functional, one measured request after the checkpoint), each size in a process of its own, and
reports its peak RSS, CPU time, guest pages and checkpoint, with the host memory by owner computed from the
engine's data structures (below). With `--restore`, also the CPU time and peak RSS of a run that restores the
checkpoint and answers `--restore-requests` requests. `--unpacked-memory` sets System.unpacked_memory (bytes; 0:
every guest page kept whole; by default as a study's shared load keeps it).

    sim-scripts/load_memory.py --items 1048576 4194304 --checkpoints DIR [--unpacked-memory B] [--restore]

Owners (bytes): guest pages whole (4,104-byte records: isa memory.rs `Page`, packed side by side in 64 MiB slabs,
isa page_slabs.rs; a heap block of 4,112 each before session 21),
packed (the rest of resident_pages, at what packing measured: not reported by the engine, so the remainder of
the RSS), the page map (hashbrown: 17 bytes a bucket, buckets the next power of two above 8/7 of the pages), the
client's store model (store_model.rs: a version per item, a byte per bucket, 8 bytes per partition per 4,096
items; the versions at 1/8 byte an item, as issue 28's compact versions keep them: the checkpoint's file has 4),
and the rest of the process (engine, Python, decoded code, buffers) as the remainder of the peak RSS.
`--stop-below` (GiB, default 4) stops a load when the host's available memory falls below it.
"""

from __future__ import annotations

import argparse
import json
import pathlib
import resource
import shutil
import subprocess
import sys
import time

PAGE_HOST_BYTES = 4104
MAP_BUCKET_BYTES = 17
LOAD_BLOCK = 4096


class LowMemory(RuntimeError):
    pass


def _available() -> int:
    for line in pathlib.Path("/proc/meminfo").read_text().splitlines():
        if line.startswith("MemAvailable:"):
            return int(line.split()[1]) * 1024
    return 0


def _rss() -> int:
    for line in pathlib.Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) * 1024
    return 0


def _system(items: int, cores: int, unpacked: int, requests: int):
    from configs import brps_target_socket

    system = brps_target_socket.system(cores=cores, items=items, requests=requests)
    system.mode, system.detailed_start, system.warm_caches, system.warm_start_insts = "functional", "start", False, 0
    system.max_insts, system.max_time = 0, 0
    if unpacked > 0:
        system.unpacked_memory = unpacked
    elif unpacked < 0:
        # As a study's shared load keeps it (drivers/sweep/checkpoints.packed_as_loaded): a data set whose KVS store
        # exceeds LOAD_UNPACKED packs past it. Session 27 loaded the 192 Mi set with the old default (every page
        # whole, 22.5 GiB) and it stopped at 17.8 GiB RSS on this 24 GiB host.
        from drivers.sweep.checkpoints import packed_as_loaded

        packed_as_loaded(system)
    # The config's 16 GiB bounds the guest's pages; the 192 Mi set touches about 22.5 GiB of them. The studies' rule
    # (32 GiB there), so that a checkpoint made here restores into a study's point of the same data set.
    from drivers.studies.common import fit_mem_limit

    return fit_mem_limit(system)


def one(items: int, cores: int, checkpoint: str, unpacked: int, stop_below: float, restore: bool,
        requests: int, samples_file: str = "") -> dict:
    """In its own process: load (or restore) and report; each progress sample (instructions, CPU seconds, RSS) is
    also appended to `samples_file` as it is taken, so a run stopped early leaves its trajectory."""
    from models.sim import simulate

    system = _system(items, cores, unpacked, requests if restore else 1)
    if restore:
        system.restore_from = checkpoint
    else:
        system.checkpoint_to = checkpoint
    samples: list[tuple[int, float, int]] = []

    def progress(insts: int, ticks: int, phase: str) -> None:
        samples.append((insts, round(time.process_time(), 1), _rss()))
        if samples_file:
            with open(samples_file, "a") as f:
                f.write(json.dumps({"items": items, "unpacked_memory": system.unpacked_memory, "insts": insts,
                                    "cpu_s": samples[-1][1], "rss": samples[-1][2], "available": _available()}) + "\n")
        if _available() < stop_below * 2**30:
            raise LowMemory(f"stopped at {insts:,} instructions: the host's available memory fell below "
                            f"{stop_below} GiB (RSS {_rss() / 2**30:.2f} GiB)")

    cpu = time.process_time()
    result = simulate(system, progress=progress, progress_every=50_000_000)
    cpu = time.process_time() - cpu
    s = result.stats
    rec = {"items": items, "cores": cores, "unpacked_memory": system.unpacked_memory, "restore": restore,
           "cpu_s": round(cpu, 1),
           "peak_rss": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024, "insts": result.insts,
           "resident_pages": int(s["system.mem.resident_pages"]), "pages_touched": int(s["system.mem.pages_touched"]),
           "argv": system.workload.argv, "rss_samples": samples[::max(1, len(samples) // 20)]}
    if not restore:
        rec["checkpoint_files"] = {f.name: f.stat().st_size for f in sorted(pathlib.Path(checkpoint).iterdir())}
    return rec


def owners(rec: dict) -> dict[str, int]:
    """Host bytes by owner (module doc), from a load's record."""
    files = rec["checkpoint_files"]
    pages, items, cores = rec["resident_pages"], rec["items"], rec["cores"]
    whole = pages if rec["unpacked_memory"] == 0 else min(pages, rec["unpacked_memory"] // 4096)
    slots = 1 << max(3, (pages * 8 // 7).bit_length())
    # Its bucket counts are what the checkpoint saves of them (client_buckets.bin).
    client = items // 8 + files.get("client_buckets.bin", 0) + 8 * cores * (items // LOAD_BLOCK + 1)
    parts = {"guest pages (whole)": whole * PAGE_HOST_BYTES, "page map": slots * MAP_BUCKET_BYTES,
             "client store model": client}
    parts["rest (engine, Python, packed pages, buffers)"] = rec["peak_rss"] - sum(parts.values())
    return parts


def packed_sizes(checkpoint: str, records_per_read: int = 16384) -> dict[str, int]:
    """What packing (isa packed.rs `pack`) makes of a checkpoint's pages, computed from its page file: pages and
    bytes whole and packed, split at 1 KiB packed (the KVS index's pages and zero pages below, log and the rest
    above)."""
    import numpy as np

    record = 4104
    out = {"pages": 0, "whole_bytes": 0, "packed_bytes": 0, "small_pages": 0, "small_packed_bytes": 0}
    with open(pathlib.Path(checkpoint) / "pages.bin", "rb") as f:
        while chunk := f.read(record * records_per_read):
            pages = np.frombuffer(chunk, dtype=np.uint8).reshape(-1, record)[:, :4096]
            words = pages.view(np.uint64)
            size = 64 + np.count_nonzero(words, axis=1) + np.count_nonzero(pages, axis=1)
            small = size < 1024
            out["pages"] += len(pages)
            out["whole_bytes"] += 4096 * len(pages)
            out["packed_bytes"] += int(size.sum())
            out["small_pages"] += int(small.sum())
            out["small_packed_bytes"] += int(size[small].sum())
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--items", type=int, nargs="+", default=[], help="data-set sizes to load")
    parser.add_argument("--cores", type=int, default=60, help="cores (partitions) of the target socket")
    parser.add_argument("--checkpoints", default="", help="folder for the checkpoints (each size its own)")
    parser.add_argument("--unpacked-memory", type=int, default=-1,
                        help="System.unpacked_memory (bytes; 0: every guest page kept whole; default: as a study's "
                             "shared load keeps it, 2 GiB whole for a KVS store larger than that)")
    parser.add_argument("--restore", action="store_true", help="also restore each checkpoint and measure that run")
    parser.add_argument("--restore-requests", type=int, default=60_000, help="requests of the restored run")
    parser.add_argument("--keep", action="store_true", help="keep the checkpoints (default: removed after)")
    parser.add_argument("--stop-below", type=float, default=4.0, help="GiB of host memory to leave available")
    parser.add_argument("--out", default=None, help="append each record as a JSON line to this file")
    parser.add_argument("--samples", default="", help="append every progress sample as a JSON line to this file")
    parser.add_argument("--one", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--restore-one", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--analyze", default=None, help="only report what packing makes of this checkpoint's pages")
    opts = parser.parse_args(argv)
    if opts.analyze:
        print(json.dumps(packed_sizes(opts.analyze)))
        return 0
    if opts.one or opts.restore_one:
        rec = one(opts.items[0], opts.cores, opts.checkpoints, opts.unpacked_memory, opts.stop_below,
                  opts.restore_one, opts.restore_requests, opts.samples)
        print("RECORD " + json.dumps(rec), flush=True)
        return 0
    root = pathlib.Path(opts.checkpoints)
    root.mkdir(parents=True, exist_ok=True)
    for items in opts.items:
        ck = root / f"load-{items}-u{opts.unpacked_memory if opts.unpacked_memory >= 0 else 'loaded'}"
        if ck.exists():
            shutil.rmtree(ck)
        runs = [("--one", "load")] + ([("--restore-one", "restore")] if opts.restore else [])
        for flag, what in runs:
            cmd = [sys.executable, "-m", "drivers.cli.load_memory", flag, "--items", str(items), "--cores",
                   str(opts.cores), "--checkpoints", str(ck), "--unpacked-memory", str(opts.unpacked_memory),
                   "--stop-below", str(opts.stop_below), "--restore-requests", str(opts.restore_requests),
                   "--samples", opts.samples]
            out = subprocess.run(cmd, capture_output=True, text=True)
            lines = [ln for ln in out.stdout.splitlines() if ln.startswith("RECORD ")]
            if out.returncode != 0 or not lines:
                print(f"{items} items, {what}: failed\n{out.stderr[-2000:]}", file=sys.stderr)
                return 1
            rec = json.loads(lines[-1][len("RECORD "):])
            if what == "load":
                rec["owners"] = owners(rec)
            print(json.dumps({k: v for k, v in rec.items() if k != "rss_samples"}), flush=True)
            if opts.out:
                with open(opts.out, "a") as f:
                    f.write(json.dumps(rec) + "\n")
        if not opts.keep:
            shutil.rmtree(ck, ignore_errors=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
