"""Fault injection on every write path: kill -9 at random points of a checkpoint write, a run folder's writes and a
sweep's point store; a full disk (a small tmpfs) during each; truncated and bit-flipped checkpoints, stats files and
sweep points; a Dask worker killed in the middle of a point. In every case no finished result is lost, no damaged
result loads as good, and the message names the file.

`make test` runs a few rounds of each (KVSIM_FAULT_ROUNDS, 2 by default); `make faults` runs many more. The random
points come from a fixed seed (KVSIM_FAULT_SEED), so a failure can be replayed."""

from __future__ import annotations

import contextlib
import json
import os
import pathlib
import random
import shutil
import signal
import subprocess
import sys
import textwrap
import threading
import time

import pytest

from conftest import ROOT

ROUNDS = int(os.environ.get("KVSIM_FAULT_ROUNDS", "2"))
SEED = int(os.environ.get("KVSIM_FAULT_SEED", "27"))
PY = sys.executable


@pytest.fixture
def rng(request) -> random.Random:
    return random.Random(f"{SEED}-{request.node.name}")


@contextlib.contextmanager
def small_disk(where: pathlib.Path, size: str):
    """A tmpfs of `size` mounted at `where` (a full disk on demand); skips when mounting is not permitted."""
    where.mkdir(parents=True, exist_ok=True)
    proc = subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(where)], capture_output=True,
                          text=True)
    if proc.returncode != 0:
        pytest.skip(f"cannot mount a small tmpfs to fill (needs root or CAP_SYS_ADMIN): {proc.stderr.strip()}")
    try:
        yield where
    finally:
        subprocess.run(["umount", "-l", str(where)], check=False)


def fill(folder: pathlib.Path, leave: int = 0) -> None:
    """Fill the file system of `folder` until fewer than `leave` bytes are free."""
    with open(folder / "filler", "ab") as f:
        chunk = b"\0" * 65536
        try:
            while shutil.disk_usage(folder).free > leave + len(chunk):
                f.write(chunk)
                f.flush()
            while shutil.disk_usage(folder).free > leave:
                f.write(b"\0" * 512)
                f.flush()
        except OSError:
            pass


def flip_bit(path: pathlib.Path, rng: random.Random, digits_only: bool = False) -> int:
    """Flip one random bit of `path` (with digits_only, of a digit, turning it into another digit); returns where."""
    data = bytearray(path.read_bytes())
    if digits_only:
        where = rng.choice([i for i, b in enumerate(data) if chr(b) in "2345"])
        data[where] ^= 0x01                              # '2' <-> '3', '4' <-> '5': still valid JSON
    else:
        where = rng.randrange(len(data))
        data[where] ^= 1 << rng.randrange(8)
    path.write_bytes(bytes(data))
    return where


def truncate(path: pathlib.Path, rng: random.Random) -> None:
    data = path.read_bytes()
    path.write_bytes(data[:rng.randrange(len(data))])


def child(script: str, *, limit_bytes: int | None = None) -> subprocess.Popen:
    """A Python child process running `script` from the repository (its own session, so a kill takes it whole);
    with limit_bytes it dies (SIGXFSZ, no clean-up: as kill -9) when a file it writes would pass that size."""
    def limit():
        if limit_bytes is not None:
            import resource
            resource.setrlimit(resource.RLIMIT_FSIZE, (limit_bytes, limit_bytes))
    return subprocess.Popen([PY, "-c", textwrap.dedent(script)], cwd=ROOT, start_new_session=True,
                            preexec_fn=limit, stdout=subprocess.PIPE, stderr=subprocess.PIPE)


def kill(proc: subprocess.Popen) -> None:
    with contextlib.suppress(ProcessLookupError):
        os.killpg(proc.pid, signal.SIGKILL)
    proc.wait()


# -- Checkpoints ------------------------------------------------------------------------------------------------

CHECKPOINT_SYSTEM = """
import sys
sys.path.insert(0, {root!r})
import configs
def system():
    return configs.load("kvs_functional").system(harts=2, dataset="large", items=8192, requests=300,
                                                 warmup_requests=0)
"""


def checkpoint_system():
    namespace: dict = {}
    exec(CHECKPOINT_SYSTEM.format(root=str(ROOT)), namespace)
    return namespace["system"]()


@pytest.fixture(scope="module")
def good_checkpoint(engine, tmp_path_factory):
    """A checkpoint written without faults, and the statistics of a run restored from it."""
    from models.sim import simulate

    target = tmp_path_factory.mktemp("good") / "ckpt"
    s = checkpoint_system()
    s.checkpoint_to = str(target)
    simulate(s)
    return target, restore(target).stats


def restore(ckpt: pathlib.Path):
    from models.sim import simulate

    s = checkpoint_system()
    s.restore_from = str(ckpt)
    return simulate(s)


def test_kill_9_while_a_checkpoint_is_written(good_checkpoint, tmp_path, rng):
    """Killed at a random point of the write (once its temporary folder exists): the target is absent or whole,
    and the next write to it leaves no dead writer's temporary behind."""
    _, stats = good_checkpoint
    for round_ in range(ROUNDS):
        target = tmp_path / f"ckpt{round_}"
        proc = child(CHECKPOINT_SYSTEM.format(root=str(ROOT)) + f"""
from models.sim import simulate
s = system()
s.checkpoint_to = {str(target)!r}
simulate(s)
""")
        try:
            deadline = time.monotonic() + 120
            while not list(tmp_path.glob(f".{target.name}.partial-*")) and not target.exists():
                assert time.monotonic() < deadline and proc.poll() is None, proc.communicate()
                time.sleep(0.0005)
            time.sleep(rng.uniform(0, 0.05))
        finally:
            kill(proc)
        if target.exists():
            assert restore(target).stats == stats, "a checkpoint that exists is whole"
        else:
            from models.sim import simulate
            s = checkpoint_system()
            s.checkpoint_to = str(target)
            simulate(s)
            assert restore(target).stats == stats
        assert not list(tmp_path.glob(f".{target.name}.partial-*")), "a dead writer's temporary folder is left"


def test_a_full_disk_while_a_checkpoint_is_written(engine, tmp_path):
    from models.errors import ConfigError
    from models.sim import simulate

    with small_disk(tmp_path / "disk", "4m") as disk:
        s = checkpoint_system()
        s.checkpoint_to = str(disk / "ckpt")
        with pytest.raises(ConfigError, match=f"checkpoint {disk / 'ckpt'}: writing failed .No space left on device"):
            simulate(s)
        assert sorted(p.name for p in disk.iterdir()) == [], "nothing partial is left"


@pytest.mark.parametrize("damage", ["truncate", "flip"])
def test_a_damaged_checkpoint_is_refused_naming_the_file(good_checkpoint, tmp_path, rng, damage):
    from models.durable import DamagedFile
    from models.errors import ConfigError

    good, _ = good_checkpoint
    for round_ in range(ROUNDS):
        for name in sorted(p.name for p in good.iterdir() if p.name != "checksums.sha256"):
            copy = tmp_path / f"{name}-{round_}"
            shutil.copytree(good, copy)
            truncate(copy / name, rng) if damage == "truncate" else flip_bit(copy / name, rng)
            with pytest.raises((ConfigError, DamagedFile)) as caught:
                restore(copy)
            assert name in str(caught.value) or "not a checkpoint" in str(caught.value), caught.value
            shutil.rmtree(copy)


def test_a_changed_setting_in_a_checkpoints_manifest_is_found(good_checkpoint, tmp_path):
    """The manifest keeps the whole configuration; the engine compares only what the state depends on, so a bit
    flipped in a timing value ('sq_entries': 24 -> 25) used to load as good."""
    from models.durable import DamagedFile

    good, _ = good_checkpoint
    copy = tmp_path / "copy"
    shutil.copytree(good, copy)
    text = (copy / "manifest.json").read_text()
    assert '"sq_entries": 24' in text
    (copy / "manifest.json").write_text(text.replace('"sq_entries": 24', '"sq_entries": 25', 1))
    with pytest.raises(DamagedFile, match="manifest.json is damaged"):
        restore(copy)


# -- Run folders ------------------------------------------------------------------------------------------------

RUN_SCRIPT = """
import os, signal, sys
sys.path.insert(0, {root!r})
opened = [0]
def kill_at_open(event, args):
    # kill -9 as the K-th file of the run folder is opened for writing (an existing one is then emptied)
    if event == "open" and str(args[0]).startswith({out!r}) and (
            (args[1] or "r") != "r" or (args[2] or 0) & (os.O_WRONLY | os.O_RDWR)):
        opened[0] += 1
        if opened[0] == {kill_at}:
            os.kill(os.getpid(), signal.SIGKILL)
sys.addaudithook(kill_at_open)
import configs
from models.sim import simulate
s = configs.load("kvs_default").system(harts=2, items=2048, requests=300)
simulate(s, {out!r})
"""


@pytest.fixture(scope="module")
def good_run(engine, tmp_path_factory):
    out = tmp_path_factory.mktemp("run") / "good"
    proc = child(RUN_SCRIPT.format(root=str(ROOT), out=str(out), kill_at=0))
    assert proc.wait(timeout=300) == 0, proc.communicate()
    return out


def check_loads_whole_or_names(folder: pathlib.Path, good: dict) -> str:
    """load_run gives the good run's statistics, or refuses naming the folder or a file in it."""
    from analysis.results import load_run

    try:
        row = load_run(folder)
    except (FileNotFoundError, ValueError) as err:
        assert str(folder) in str(err), f"the message does not name the folder or file: {err}"
        return "refused"
    stats = {k[5:]: v for k, v in row.items() if k.startswith("stat.")}
    assert stats == good, "a run folder loaded with statistics other than the run's"
    return "loaded"


def test_kill_9_at_random_points_of_a_run_folders_writes(good_run, tmp_path, rng):
    """The child dies (kill -9) before it opens each of the run folder's files for writing in turn, when a file it
    writes reaches a random size (stats.json or any file cut mid-write), or at a random time; the folder then
    loads as the run or is refused naming itself."""
    good = json.loads((good_run / "stats.json").read_text())
    size = {p.name: p.stat().st_size for p in good_run.iterdir() if p.is_file()}
    assert size["config.json"] < size["stats.json"]     # config.json is written whole before the run starts
    outcomes = []
    # Before some (make faults: each) file the run opens for writing, mid-write of stats.json, of any file, at a time.
    opens = range(1, 14) if ROUNDS >= 5 else rng.sample(range(1, 14), 3)
    points = [("open", k) for k in opens] + [(how, r) for r in range(ROUNDS) for how in ("stats", "cut", "time")]
    for how, k in points:
        out = tmp_path / f"{how}{k}"
        script = RUN_SCRIPT.format(root=str(ROOT), out=str(out), kill_at=k if how == "open" else 0)
        limit = {"stats": rng.randrange(size["config.json"] + 1, size["stats.json"]),
                 "cut": rng.randrange(1, max(size.values()))}.get(how)
        proc = child(script, limit_bytes=limit)
        if how == "time":
            time.sleep(rng.uniform(0.3, 1.5))
            kill(proc)
        proc.wait(timeout=300)
        if out.exists():
            outcomes.append(check_loads_whole_or_names(out, good))
    assert "refused" in outcomes


def test_a_full_disk_during_a_runs_writes(engine, tmp_path):
    """The disk fills while the run goes on: writing the results fails with an OutputError naming the folder, the
    result is not lost (it rides on the error), and the folder never loads as a finished run."""
    import configs
    from analysis.results import load_run
    from models.errors import OutputError
    from models.sim import simulate
    with small_disk(tmp_path / "disk", "2m") as disk:
        out = disk / "run"
        filled = []

        def fill_once(insts, ticks, phase):
            if not filled:
                fill(disk, leave=4096)
                filled.append(True)

        s = configs.load("kvs_functional").system(harts=2, items=2048, requests=500)
        with pytest.raises(OutputError, match=f"cannot write the run's outputs to {out}: No space left") as caught:
            simulate(s, out, progress=fill_once, progress_every=100_000)
        assert caught.value.result.stats["client.requests"] == 500
        with pytest.raises((FileNotFoundError, ValueError), match=str(out)):
            load_run(out)


@pytest.mark.parametrize("name", ["stats.json", "config.json"])
def test_a_damaged_stats_file_is_refused_naming_it(good_run, tmp_path, rng, name):
    from analysis.results import load_run

    for round_ in range(ROUNDS):
        for damage in (truncate, lambda p, r: flip_bit(p, r, digits_only=True)):
            copy = tmp_path / f"copy{round_}"
            shutil.copytree(good_run, copy)
            damage(copy / name, rng)
            with pytest.raises(ValueError, match=str(copy / name)):
                load_run(copy)
            shutil.rmtree(copy)


# -- Sweep points -----------------------------------------------------------------------------------------------

SWEEP_SCRIPT = """
import sys
sys.path.insert(0, {root!r})
from drivers import sweep as sw
from drivers.sweep import Base, Grid, Sweep
s = Sweep("faults", Base("brps_target_socket", cores=2), Grid({{"core.rob_entries": {robs}}}),
          evaluator="drivers.synthetic:evaluate_point", options={{"sleep_ms": {sleep}}})
sw.run(s, store={store!r}, jobs=2, progress=False)
"""


ROBS = [1, 8, 16, 32, 64, 128]


def sweep_of(sleep: int, robs=ROBS):
    namespace: dict = {}
    exec(SWEEP_SCRIPT.split("sw.run")[0].format(root=str(ROOT), sleep=sleep, robs=robs), namespace)
    return namespace["s"]


def comparable(store):
    from analysis.sweeps import load_sweep

    return load_sweep(store).drop(columns=["host_seconds", "cpu_seconds"]).sort_values("key").reset_index(drop=True)


def read_sealed_or_none(path):
    from models.durable import read_sealed_json

    try:
        return read_sealed_json(path)
    except ValueError:                                   # DamagedFile: cut short
        return None


def test_kill_9_at_random_points_of_a_sweep(tmp_path, rng):
    import pandas as pd

    from drivers import sweep as sw
    from models.durable import read_sealed_json

    sw.run(sweep_of(100), store=tmp_path / "clean", jobs=2, progress=False)
    for round_ in range(ROUNDS):
        store = tmp_path / f"killed{round_}"
        proc = child(SWEEP_SCRIPT.format(root=str(ROOT), sleep=100, store=str(store), robs=ROBS))
        time.sleep(rng.uniform(0.8, 2.5))
        kill(proc)
        stored = list((store / "points").glob("*.json")) if store.exists() else []
        for path in stored:
            read_sealed_json(path)                       # every stored record is whole
        # A record whole under its temporary name (killed between fsync and rename) is put in place on resume.
        whole = [p for p in store.glob("points/.*.tmp-*") if read_sealed_or_none(p) is not None]
        report = sw.run(sweep_of(100), store=store, jobs=2, progress=False)
        assert report.skipped == len(stored) + len(whole) and report.points == 6
        assert not list(store.glob("points/.*")), "no temporary left behind"
        pd.testing.assert_frame_equal(comparable(store), comparable(tmp_path / "clean"))


def test_a_full_disk_while_a_sweep_stores_its_points(tmp_path):
    """The store's disk fills after some points: the sweep stops naming the file it could not write, the stored
    points are whole, and once there is room it resumes to the full table."""
    import pandas as pd

    from drivers import sweep as sw

    with small_disk(tmp_path / "disk", "256k") as disk:
        store = disk / "store"
        sw.run(sweep_of(0), store=tmp_path / "clean", jobs=1, progress=False)
        first = sweep_of(0)
        (store / "points").mkdir(parents=True)
        fill(disk, leave=24 * 1024)                      # room for the manifest and a point or two
        with pytest.raises(OSError, match=f"No space left on device: cannot write {store}"):
            sw.run(first, store=store, jobs=1, progress=False)
        stored = list((store / "points").glob("*.json"))
        assert len(stored) < 6 and not list((store / "points").glob(".*")), "no temporary left behind"
        (disk / "filler").unlink()
        report = sw.run(first, store=store, jobs=1, progress=False)
        assert report.skipped == len(stored) and report.ran == 6 - len(stored)
        pd.testing.assert_frame_equal(comparable(store), comparable(tmp_path / "clean"))


@pytest.mark.parametrize("damage", ["truncate", "flip"])
def test_a_damaged_sweep_point_is_named_and_runs_again(tmp_path, rng, damage):
    import pandas as pd

    from analysis.sweeps import load_sweep
    from drivers import sweep as sw
    from models.durable import DamagedFile

    sw.run(sweep_of(0), store=tmp_path, jobs=1, progress=False)
    clean = comparable(tmp_path)
    for _ in range(ROUNDS):
        path = rng.choice(sorted((tmp_path / "points").glob("*.json")))
        truncate(path, rng) if damage == "truncate" else flip_bit(path, rng, digits_only=True)
        with pytest.raises(DamagedFile, match=str(path)):
            load_sweep(tmp_path)
        with pytest.warns(UserWarning, match=f"{path} is damaged.*runs again"):
            report = sw.run(sweep_of(0), store=tmp_path, jobs=1, progress=False)
        assert report.ran == 1
        pd.testing.assert_frame_equal(comparable(tmp_path), clean)


def test_a_dask_worker_killed_in_the_middle_of_a_point(tmp_path):
    """SIGKILL to the Dask worker process while it runs a point: the scheduler gives the point to the restarted
    worker (or records it failed, naming the dead worker); every point ends stored and whole."""
    from distributed import Client, LocalCluster

    from drivers import sweep as sw
    from models.durable import read_sealed_json

    s = sweep_of(1000, robs=[1, 8, 16])
    with LocalCluster(n_workers=1, threads_per_worker=1, processes=True, dashboard_address=None) as cluster, \
            Client(cluster) as client:
        killed = []

        def kill_worker_mid_point():
            deadline = time.monotonic() + 60
            while time.monotonic() < deadline:
                if list((tmp_path / "progress").glob("*")):          # a point is running
                    pids = client.run(os.getpid)
                    for pid in pids.values():
                        os.kill(pid, signal.SIGKILL)
                        killed.append(pid)
                    return
                time.sleep(0.02)

        killer = threading.Thread(target=kill_worker_mid_point)
        killer.start()
        report = sw.run(s, store=tmp_path, scheduler=client, progress=False)
        killer.join()
    assert killed, "no point was seen running"
    records = [read_sealed_json(p) for p in (tmp_path / "points").glob("*.json")]
    assert report.points == len(records) == 3
    for record in records:
        assert record["status"] == "ok" or "worker" in record["error"], record
