"""Checkpoints of the KVS after its bulk load (System.checkpoint_to) and restores from them (System.restore_from):
a restored run gives bit-identical statistics to one that loads from scratch; a restore may change timing and
the client's measured phase, and refuses anything else naming the parameter; damaged, foreign or missing
checkpoints are refused with a clear error. (The disk-full case and the private mapping are tested in
models/engine/src/checkpoint.rs.)"""

from __future__ import annotations

import json
import shutil
import subprocess

import pytest

from configs import kvs_functional
from models.errors import ConfigError
from models.params import ParamError
from models.sim import simulate

from conftest import WORKLOADS, same_stats

ITEMS = 4096


@pytest.fixture(scope="module")
def kvs_server(engine):
    proc = subprocess.run(["make", "-s", "-C", str(WORKLOADS), "kvs"], capture_output=True, text=True)
    if proc.returncode != 0 or not kvs_functional.KVS_SERVER.is_file():
        pytest.fail(f"building the KVS server failed:\n{proc.stdout}\n{proc.stderr}", pytrace=False)
    return kvs_functional.KVS_SERVER


def system(harts=2, server_args=("log_mib=8", "buckets=4096"), **client):
    client.setdefault("items", ITEMS)
    client.setdefault("requests", 2000)
    client.setdefault("warmup_requests", 0)  # (restored runs) the warm-up has its own test
    return kvs_functional.system(harts=harts, server_args=server_args, **client)


@pytest.fixture(scope="module")
def checkpointed(kvs_server, tmp_path_factory):
    """A run that loads from scratch and checkpoints, its checkpoint, and its statistics."""
    ckpt = tmp_path_factory.mktemp("ckpt") / "loaded"
    s = system()
    s.checkpoint_to = str(ckpt)
    return ckpt, simulate(s)


def restored(ckpt, **changes):
    s = system(**{k: v for k, v in changes.items() if "." not in k})
    for name, value in changes.items():
        if "." in name:
            obj, attr = name.split(".")
            setattr(getattr(s, obj), attr, value)
    s.restore_from = str(ckpt)
    return simulate(s)


def test_a_restored_run_is_bit_identical_to_one_that_loads(checkpointed):
    ckpt, writer = checkpointed
    scratch = simulate(system())
    stats = dict(writer.stats)
    size = stats.pop("system.checkpoint.bytes")
    assert stats == scratch.stats  # taking a checkpoint changes nothing
    on_disk = sum(f.stat().st_size for f in ckpt.iterdir() if f.name != "checksums.sha256")  # the engine's files
    assert size == on_disk and on_disk > 0
    inserted = []
    back = simulate_restored_with_progress(ckpt, inserted)
    assert back.stats == scratch.stats and back.stdout == scratch.stdout
    manifest = json.loads((ckpt / "manifest.json").read_text())
    # The restored run starts where the checkpoint was taken: it never re-runs the bulk load.
    assert manifest["insts"] > 0 and inserted and min(inserted) >= manifest["insts"]
    assert scratch.stats["client.hits"] > 0


def simulate_restored_with_progress(ckpt, seen):
    s = system()
    s.restore_from = str(ckpt)
    return simulate(s, progress=lambda insts, ticks, phase: seen.append(insts), progress_every=1000)


def test_detailed_timing_from_a_checkpoint_is_bit_identical(kvs_server, checkpointed):
    ckpt, _ = checkpointed
    def detailed(restore):
        s = system(requests=300)
        s.mode, s.detailed_start = "detailed", "roi"
        s.restore_from = str(ckpt) if restore else ""
        return simulate(s)
    back, scratch = detailed(True), detailed(False)
    assert same_stats(back.stats, scratch.stats) and back.stats["system.timing.start_ticks"] > 0


def test_the_measured_phase_and_timing_may_change(checkpointed):
    ckpt, writer = checkpointed
    r = restored(ckpt, requests=1000, get_ratio=0.5, popularity="zipf")
    assert r.stats["client.requests"] == 1000 and r.stats["client.puts"] > 300
    assert r.stats["client.hits"] == r.stats["client.gets"]  # every loaded item is found, checked exactly
    llc_mpki = []
    for llc_size in ("32KiB", "8MiB"):
        s = system(requests=300)
        s.mode, s.detailed_start, s.restore_from = "detailed", "roi", str(ckpt)
        s.caches.llc.size = llc_size
        llc_mpki.append(simulate(s).stats)
    assert llc_mpki[0]["client.requests"] == llc_mpki[1]["client.requests"] == 300
    assert llc_mpki[0] != llc_mpki[1]  # the timing change is taken


@pytest.mark.parametrize("change, name", [
    (dict(harts=4), "System.harts"),
    (dict(items=ITEMS // 2), "System.client.items"),
    (dict(dataset="small"), "System.client.dataset"),
    (dict(server_args=("log_mib=8", "buckets=8192")), "System.workload.argv"),
    (dict(seed=9), "System.client.seed"),
])
def test_changes_that_would_make_the_state_wrong_are_refused(checkpointed, change, name):
    ckpt, _ = checkpointed
    with pytest.raises(ConfigError, match=f"{name} is .* in the checkpoint"):
        restored(ckpt, **change)


def damaged(ckpt, tmp_path, damage):
    copy = tmp_path / "copy"
    shutil.copytree(ckpt, copy)
    damage(copy)
    return copy


def flip(path, offset):
    data = bytearray(path.read_bytes())
    data[offset] ^= 0x40
    path.write_bytes(bytes(data))


@pytest.mark.parametrize("damage, message", [
    (lambda d: flip(d / "pages.bin", 5000), "pages.bin is corrupt: block 0 fails its checksum"),
    (lambda d: flip(d / "state.json", 40), "state.json is corrupt"),
    (lambda d: flip(d / "client_versions.bin", 7), "client_versions.bin is corrupt"),
    (lambda d: (d / "pages.bin").write_bytes((d / "pages.bin").read_bytes()[:-4096]), "truncated"),
    (lambda d: [(d / "manifest.json").write_text(      # another engine's checkpoint: no seal of this one's
        (d / "manifest.json").read_text().replace('"format_version": 1', '"format_version": 99')),
        (d / "checksums.sha256").unlink()],
     "format version 99, this engine reads version 1"),
    (lambda d: (d / "manifest.json").unlink(), "not a checkpoint"),
])
def test_damaged_checkpoints_are_refused(checkpointed, tmp_path, damage, message):
    ckpt, _ = checkpointed
    with pytest.raises(ConfigError, match=message):
        restored(damaged(ckpt, tmp_path, damage))


def test_another_binary_is_refused(kvs_server, tmp_path):
    binary = tmp_path / "kvs_server"
    shutil.copy(kvs_server, binary)
    s = system()
    s.workload.binary, s.checkpoint_to = str(binary), str(tmp_path / "ck")
    simulate(s)
    binary.write_bytes(binary.read_bytes() + b"\0rebuilt")  # same path, other contents
    s.checkpoint_to, s.restore_from = "", str(tmp_path / "ck")
    with pytest.raises(ConfigError, match="another binary"):
        simulate(s)


def test_missing_or_foreign_paths_are_refused(checkpointed, tmp_path):
    ckpt, _ = checkpointed
    with pytest.raises(ConfigError, match="restore_from = .*nowhere: no such directory"):
        restored(tmp_path / "nowhere")
    with pytest.raises(ConfigError, match="not a checkpoint"):
        restored(tmp_path)
    s = system()
    s.checkpoint_to = str(ckpt)
    with pytest.raises(ConfigError, match="already exists"):
        simulate(s)
    s.restore_from = str(ckpt)
    with pytest.raises(ParamError, match="System.checkpoint_to"):
        simulate(s)


def test_warmup_after_a_restore_warms_the_caches_and_is_not_counted(checkpointed):
    ckpt, _ = checkpointed
    runs = {}
    for warmup in (0, 3000):
        s = system(requests=300, warmup_requests=warmup)
        s.mode, s.detailed_start, s.warm_caches, s.restore_from = "detailed", "roi", True, str(ckpt)
        runs[warmup] = simulate(s).stats
    cold, warm = runs[0], runs[3000]
    assert cold["client.requests"] == warm["client.requests"] == 300
    assert warm["system.socket0.llc.mpki"] < 0.5 * cold["system.socket0.llc.mpki"]
    assert warm["client.throughput_mrps"] > cold["client.throughput_mrps"]
    # A run that loads does not warm up: its caches were warmed during the load.
    s = system(requests=300, warmup_requests=3000)
    assert simulate(s).stats == simulate(system(requests=300)).stats


def test_a_run_that_loads_warms_up_after_the_load_when_asked(kvs_server):
    plain = simulate(system(requests=300, warmup_requests=3000)).stats
    warmed = simulate(system(requests=300, warmup_requests=3000, warmup_after_load=True)).stats
    assert warmed["client.requests"] == plain["client.requests"] == 300
    assert warmed["client.load.requests"] == plain["client.load.requests"] == ITEMS
    # Every warm-up request was sent and answered (its response checked) between the load and the measured phase.
    assert warmed["client.responses_checked"] - plain["client.responses_checked"] == 3000


GUEST = r"""
#include "kvsim.h"
#include "kvsim_libc.h"

/* Fills a table, checkpoints, then keeps working on it: a restored run must print the same. Hart 1 works
   alongside so the checkpoint catches a second hart mid-run. */
static unsigned long table[1 << 16];

int main(void) {
    long h = kvsim_hart_id();
    unsigned long x = 88172645463325252ul + (unsigned long)h, sum = 0;
    for (int i = h; i < (1 << 16); i += 2) {
        x ^= x << 13; x ^= x >> 7; x ^= x << 17;
        table[i] = x;
    }
    if (h == 0)
        (void)kvsim_call2(0x4b56000eL, 0, 0); /* CHECKPOINT */
    for (int round = 0; round < 4; round++)
        for (int i = h; i < (1 << 16); i += 2)
            sum += table[i] = table[i] * 2862933555777941757ul + (unsigned long)round;
    printf("hart %ld sum %lx\n", h, sum);
    hart_exit(0);
    return 0;
}
"""


def test_the_guest_checkpoint_call(engine, tmp_path):
    from models.system import System, Workload

    from conftest import cross_compile
    src = tmp_path / "ckpt_guest.c"
    src.write_text(GUEST)
    binary = cross_compile([src], tmp_path / "ckpt_guest", runtime=True)
    def guest(**kw):
        return System(harts=2, quantum=100, workload=Workload(binary=str(binary)), **kw)
    scratch = simulate(guest())
    writer = simulate(guest(checkpoint_to=str(tmp_path / "ck")))
    assert writer.stats.pop("system.checkpoint.bytes") > (1 << 19)  # the 512 KiB table is in it
    back = simulate(guest(restore_from=str(tmp_path / "ck")))
    assert b"hart 0 sum" in scratch.stdout and b"hart 1 sum" in scratch.stdout
    assert back.stdout == writer.stdout == scratch.stdout
    assert back.stats == writer.stats == scratch.stats
    manifest = json.loads((tmp_path / "ck" / "manifest.json").read_text())
    assert 0 < manifest["insts"] < scratch.stats["system.insts"]
    # After N instructions (here before the guest's call).
    simulate(guest(checkpoint_to=str(tmp_path / "at"), checkpoint_at_insts=20_000))
    manifest = json.loads((tmp_path / "at" / "manifest.json").read_text())
    assert 20_000 <= manifest["insts"] < 20_000 + 2 * 100  # the end of the turn that reached it (quantum 100)
    back = simulate(guest(restore_from=str(tmp_path / "at")))
    assert back.stdout == scratch.stdout and back.stats == scratch.stats


# The sweep runner shares one checkpoint between the points of a data set (drivers/sweep/, share_checkpoint).

def shared_sweep(name, points, **base):
    from drivers.sweep import Base, List, Sweep

    kwargs = dict(harts=2, server_args=("log_mib=8", "buckets=4096"), items=ITEMS, requests=300, warmup_requests=0)
    kwargs.update(base)
    return Sweep(name, Base("configs.kvs_functional:system", **kwargs), List(points), share_checkpoint=True)


DETAILED = {"mode": "detailed", "detailed_start": "roi"}


def test_a_sweep_loads_its_data_set_once_and_every_point_equals_a_run_that_loads(kvs_server, tmp_path):
    from drivers import sweep as sw

    points = [{**DETAILED, "caches.llc.size": "32KiB", "core.rob_entries": 16},
              {**DETAILED, "caches.llc.size": "8MiB", "core.rob_entries": 64},
              {**DETAILED, "caches.llc.size": "32KiB", "core.rob_entries": 128}]
    s = shared_sweep("shared", points)
    report = sw.run(s, store=tmp_path, jobs=2, progress=False)
    assert (report.points, report.ran, report.failed, report.loads) == (3, 3, 0, 1)
    (data_set,) = {p.data_set for p in s.resolve()}
    ckpt = tmp_path / "checkpoints" / data_set
    assert (ckpt / "manifest.json").is_file()
    on_disk = sum(f.stat().st_size for f in (tmp_path / "checkpoints").rglob("*") if f.is_file())
    assert report.checkpoint_bytes == on_disk > 0
    records = sw.stored_points(tmp_path)
    stats = []
    for p in s.resolve():
        record = records[p.key]
        assert record["status"] == "ok" and record["data_set"] == data_set
        assert "restore_from" not in record["config"] or record["config"]["restore_from"] == ""
        scratch = simulate(p.system())           # the point's configuration, loading its own data set
        assert json.dumps(record["stats"], sort_keys=True) == json.dumps(scratch.stats, sort_keys=True), p.params
        stats.append(json.dumps(record["stats"], sort_keys=True))
    assert len(set(stats)) == 3                   # each point's timing change is taken
    # Extended by a point of the same data set and one of another: only the new data set is loaded.
    more = shared_sweep("shared", points + [{**DETAILED, "core.rob_entries": 32},
                                            {**DETAILED, "client.items": ITEMS // 2}])
    again = sw.run(more, store=tmp_path, jobs=2, progress=False)
    assert (again.skipped, again.ran, again.failed, again.loads) == (3, 2, 0, 1)
    assert len({p.data_set for p in more.resolve()}) == 2
    assert sorted(f.name for f in (tmp_path / "checkpoints").iterdir() if f.is_dir()) == \
        sorted({p.data_set for p in more.resolve()})


def test_sweeps_with_a_shared_checkpoint_folder_load_a_data_set_once_between_them(kvs_server, tmp_path):
    import dataclasses

    from drivers import sweep as sw

    shared = tmp_path / "shared-checkpoints"
    first = dataclasses.replace(shared_sweep("first", [{**DETAILED, "core.rob_entries": 16}]),
                                checkpoints=str(shared))
    second = dataclasses.replace(shared_sweep("second", [{**DETAILED, "core.rob_entries": 64}]),
                                 checkpoints=str(shared))
    a = sw.run(first, store=tmp_path / "first", jobs=1, progress=False)
    b = sw.run(second, store=tmp_path / "second", jobs=1, progress=False)
    assert (a.loads, b.loads, a.failed, b.failed) == (1, 0, 0, 0)      # the second sweep restores the first's load
    (data_set,) = {p.data_set for p in second.resolve()}
    assert (shared / "checkpoints" / data_set / "manifest.json").is_file()
    assert not (tmp_path / "second" / "checkpoints").exists()
    record = next(iter(sw.stored_points(tmp_path / "second").values()))
    assert record["data_set"] == data_set and record["cpu_seconds"] > 0
    (point,) = second.resolve()
    assert json.dumps(record["stats"], sort_keys=True) == json.dumps(simulate(point.system()).stats, sort_keys=True)


def test_a_data_set_that_fails_to_load_fails_its_points_with_the_reason(kvs_server, tmp_path):
    from drivers import sweep as sw

    # The data set fits 512 KiB of guest memory (a data set that does not is refused before any run, System.validate)
    # but the server's program, stacks and NIC rings with it do not (about 1.4 MB): the loading run faults, and both
    # points fail with its error.
    small = {"mem_limit": "512KiB", "stack_size": "64KiB"}
    s = shared_sweep("broken", [{**small, "core.rob_entries": 16}, {**small, "core.rob_entries": 32}],
                     items=1 << 10, server_args=("log_mib=1", "buckets=1024"))
    assert len({p.data_set for p in s.resolve()}) == 1
    report = sw.run(s, store=tmp_path, jobs=1, progress=False)
    assert (report.points, report.failed, report.loads) == (2, 2, 0)
    for record in sw.stored_points(tmp_path).values():
        assert record["error"].startswith("loading the shared data set failed:"), record["error"]
        assert "mem_limit" in record["error"], record["error"]
    assert not any((tmp_path / "checkpoints").glob("*/manifest.json"))


def test_the_host_memory_check_counts_the_compact_client_model():
    """The Tiny set's client model is about 0.56 bytes an item (store_model.rs): the up-front host memory check must
    not refuse a paper-scale run for a client it does not have (at the old 48 bytes an item it asked 9.4 GiB, at
    4.43 bytes 0.87 GiB)."""
    from models.sim import host_memory_estimate

    s = kvs_functional.system(harts=60, items=192 << 20)
    client = host_memory_estimate(s)["client"]
    assert (192 << 20) * 0.56 <= client < 1 << 28


@pytest.mark.parametrize("program, args, harts, quantum", [
    ("pthreads", [], 4, 1000),     # clone, futex waits and joins, thread exits
    ("pthreads", [], 4, 7),        # turns of 7 instructions: checkpoints fall inside LR/SC sequences too
    ("malloc100", [], 1, 1000),    # mmap, munmap and brk of glibc's allocator
    ("protect", [], 1, 1000),      # mprotect'ed pages keep their permissions
])
def test_a_linux_process_restored_mid_run_is_bit_identical(engine, tmp_path, program, args, harts, quantum):
    """Static glibc programs (threads, mmap, mprotect): checkpoints taken at several instruction counts restore
    into runs whose output and statistics equal the uninterrupted run's."""
    from conftest import BUILD, make_system

    def run(**kw):
        return simulate(make_system(BUILD / "glibc" / program, args, harts=harts, quantum=quantum, max_insts=10**9,
                                    mem_limit="512MiB", **kw))

    scratch = run()
    assert scratch.stop_reason == "exit"
    total = scratch.stats["system.insts"]
    for i, at in enumerate((total // 5, total // 2, total * 9 // 10)):
        ckpt = tmp_path / f"at{i}"
        writer = run(checkpoint_to=str(ckpt), checkpoint_at_insts=int(at))
        assert writer.stats.pop("system.checkpoint.bytes") > 0
        back = run(restore_from=str(ckpt))
        assert (back.stdout, back.stderr, back.exit_code) == (scratch.stdout, scratch.stderr, scratch.exit_code)
        assert back.stats == scratch.stats == writer.stats, f"restored at {at} of {total} instructions"


LRSC_GUEST = r"""
#include "kvsim.h"
#include "kvsim_libc.h"

/* Two harts add to one counter with LR/SC loops and count their failed SCs: with turns of one instruction nearly
   every moment has a reservation live, and a restore that lost one would fail an SC the uninterrupted run did
   not. */
static volatile unsigned long counter;

int main(void) {
    long h = kvsim_hart_id(), failures = 0;
    for (int i = 0; i < 3000; i++) {
        unsigned long old, failed;
        do {
            __asm__ volatile("lr.d %0, (%2)\n\taddi %0, %0, 1\n\tsc.d %1, %0, (%2)"
                             : "=&r"(old), "=&r"(failed) : "r"(&counter) : "memory");
            failures += failed != 0;
        } while (failed);
    }
    printf("hart %ld: %ld failed SCs\n", h, failures);
    hart_exit(0);
    return 0;
}
"""


def test_lr_sc_reservations_survive_a_restore(engine, tmp_path):
    from models.system import System, Workload

    from conftest import cross_compile
    src = tmp_path / "lrsc.c"
    src.write_text(LRSC_GUEST)
    binary = cross_compile([src], tmp_path / "lrsc", runtime=True)

    def run(**kw):
        return simulate(System(harts=2, quantum=1, workload=Workload(binary=str(binary)), **kw))

    scratch = run()
    assert b"failed SCs" in scratch.stdout
    total = int(scratch.stats["system.insts"])
    for i, at in enumerate(range(total // 7, total, total // 7)):
        run(checkpoint_to=str(tmp_path / f"at{i}"), checkpoint_at_insts=at)
        back = run(restore_from=str(tmp_path / f"at{i}"))
        assert back.stdout == scratch.stdout and back.stats == scratch.stats, f"restored at {at} of {total}"


def test_mprotected_pages_keep_their_permissions_after_a_restore(engine, tmp_path):
    """A heap page made read-only just before the checkpoint still faults on the write after the restore."""
    from models.errors import SimError

    from conftest import BUILD, make_system

    def run(**kw):
        return simulate(make_system(BUILD / "glibc" / "protect", ["readonly"], quantum=1, **kw))

    with pytest.raises(SimError) as fault:
        run()
    total = fault.value.result.insts
    ckpt = tmp_path / "ck"
    with pytest.raises(SimError):
        run(checkpoint_to=str(ckpt), checkpoint_at_insts=total - 3)   # after mprotect, before the write
    with pytest.raises(SimError) as again:
        run(restore_from=str(ckpt))
    assert str(again.value) == str(fault.value)
    assert again.value.result.insts == total and bytes(again.value.result.stdout) == b"trying readonly\n"


@pytest.mark.slow
def test_a_dask_sweep_shares_the_checkpoint_as_the_local_pool_does(kvs_server, tmp_path):
    from distributed import Client, LocalCluster

    from drivers import sweep as sw

    s = shared_sweep("dask", [{**DETAILED, "core.rob_entries": 16}, {**DETAILED, "core.rob_entries": 64}])
    local = sw.run(s, store=tmp_path / "local", jobs=1, progress=False)
    with LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None) as cluster, \
            Client(cluster) as client:
        remote = sw.run(s, store=tmp_path / "dask", scheduler=client, progress=False)
    assert (local.loads, local.failed, remote.loads, remote.failed) == (1, 0, 1, 0)
    a, b = sw.stored_points(tmp_path / "local"), sw.stored_points(tmp_path / "dask")
    assert a.keys() == b.keys() and all(b[k]["data_set"] and b[k]["stats"] == a[k]["stats"] for k in a)


def test_packed_guest_pages_change_no_statistic_and_no_checkpoint_byte(checkpointed, tmp_path):
    """System.unpacked_memory keeps only 64 guest pages whole (of about 700 the load touches); the others are packed
    and unpacked as they are touched. The run, its checkpoint's files and a packed restore are bit-identical."""
    ckpt, writer = checkpointed
    s = system()
    s.unpacked_memory = 64 * 4096
    s.checkpoint_to = str(tmp_path / "packed")
    packed = simulate(s)
    # Every statistic but the checkpoint's size, which counts its manifest: that records the configuration.
    mine, theirs = dict(packed.stats), dict(writer.stats)
    manifests = [(d / "manifest.json").stat().st_size for d in (tmp_path / "packed", ckpt)]
    assert mine.pop("system.checkpoint.bytes") - theirs.pop("system.checkpoint.bytes") == manifests[0] - manifests[1]
    assert mine == theirs and packed.stdout == writer.stdout
    assert packed.stats["system.mem.resident_pages"] > 4 * 64
    for name in ("pages.bin", "client_versions.bin", "state.json"):
        assert (tmp_path / "packed" / name).read_bytes() == (ckpt / name).read_bytes(), name
    back = system()
    back.restore_from, back.unpacked_memory = str(ckpt), 64 * 4096
    assert simulate(back).stats == restored(ckpt).stats


def test_packed_guest_pages_are_refused_in_fs_mode():
    from configs import linux_fs

    s = linux_fs.system()
    s.unpacked_memory = 1 << 20
    with pytest.raises(ParamError, match="unpacked_memory"):
        s.validate()
