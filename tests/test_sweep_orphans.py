"""What a sweep killed mid-write leaves in its store, and what the next run does with it (drivers/sweep/store.py's
recover_orphans, models/durable.py's temporary names): the orphans are made the way a kill makes them, by the real
writer in a process killed with SIGKILL just before its rename, so no test depends on when a signal lands."""

import json
import os
import signal
import socket
import subprocess
import sys

import pandas as pd
import pytest

from analysis.sweeps import load_sweep
from drivers import sweep as sw
from drivers.sweep import Base, Grid, Sweep
from drivers.sweep.store import recover_orphans
from models.durable import orphaned_temporaries, writer_alive

ROOT = sw.ROOT

# A process that writes `record` to `path` with the store's writer and is killed (SIGKILL, by itself) between the
# temporary's fsync and its rename: what kill -9 of a sweep leaves at the worst moment.
KILLED_WRITER = """
import json, os, signal, sys
from drivers.sweep.store import atomic_write_json
os.replace = lambda *_: os.kill(os.getpid(), signal.SIGKILL)
atomic_write_json(sys.argv[1], json.loads(sys.argv[2]))
"""


def killed_while_writing(path, record) -> "os.PathLike":
    """Write `record` to `path` in a process killed before its rename; returns the temporary it left."""
    before = set(path.parent.iterdir())
    done = subprocess.run([sys.executable, "-c", KILLED_WRITER, str(path), json.dumps(record)], cwd=ROOT)
    assert done.returncode == -signal.SIGKILL          # reaped: its pid is gone
    (left,) = set(path.parent.iterdir()) - before
    return left


def small_sweep() -> Sweep:
    return Sweep("orphans", Base("brps_target_socket", cores=2),
                 Grid({"core.rob_entries": [1, 16, 64], "client.seed": [1, 2]}),
                 evaluator="drivers.synthetic:evaluate_point", options={"sleep_ms": 0})


def comparable(table: pd.DataFrame) -> pd.DataFrame:
    return table.drop(columns=["host_seconds", "cpu_seconds"]).sort_values("key").reset_index(drop=True)


def test_a_resumed_sweep_keeps_a_killed_writers_whole_record_and_removes_its_cut_short_one(tmp_path):
    store, clean = tmp_path / "store", tmp_path / "clean"
    sw.run(small_sweep(), store=clean, jobs=1, progress=False)
    records = sorted((clean / "points").glob("*.json"))
    assert len(records) == 6
    # The killed run: four points stored; the fifth's record was whole on disk (fsync'd) when the kill came,
    # before its rename; the sixth's was cut short mid-write.
    (store / "points").mkdir(parents=True)
    for path in records[:4]:
        (store / "points" / path.name).write_bytes(path.read_bytes())
    whole = killed_while_writing(store / "points" / records[4].name, json.loads(records[4].read_bytes()))
    cut = killed_while_writing(store / "points" / records[5].name, json.loads(records[5].read_bytes()))
    cut.write_bytes(cut.read_bytes()[: cut.stat().st_size // 2])
    assert whole.name.startswith(f".{records[4].name}.tmp-{socket.gethostname()}-")

    with pytest.warns(UserWarning, match="left 1 whole record.*put in place, and 1 partial"):
        resumed = sw.run(small_sweep(), store=store, jobs=1, progress=False)
    # The whole record is the work done: put in place, not rerun; the cut one's point runs again.
    assert (resumed.skipped, resumed.ran) == (5, 1)
    assert sorted(p.name for p in (store / "points").iterdir()) == [p.name for p in records], \
        "no stray temporary file"
    assert (store / "points" / records[4].name).read_bytes() == records[4].read_bytes()
    pd.testing.assert_frame_equal(comparable(load_sweep(store)), comparable(load_sweep(clean)))
    assert not [p for p in store.rglob("*") if ".tmp-" in p.name]


def test_a_dead_writers_temporary_beside_a_stored_record_and_in_the_journals_is_removed(tmp_path):
    target = tmp_path / "points" / "abc.json"
    target.parent.mkdir()
    target.write_text("{}")
    stale = killed_while_writing(target, {"key": "abc", "status": "ok"})   # the record was stored since
    (tmp_path / "journal").mkdir()
    journal = killed_while_writing(tmp_path / "journal" / "abc.jsonl", {"key": "abc"})
    description = killed_while_writing(tmp_path / "sweep.json", {"name": "x"})
    assert recover_orphans(tmp_path) == {"finished": [], "removed": [description, stale, journal]}
    assert target.read_text() == "{}" and sorted(p.name for p in tmp_path.rglob("*")) == [
        "abc.json", "journal", "points"]


def test_a_stored_points_leftover_progress_line_is_removed_and_a_running_ones_kept(tmp_path):
    (tmp_path / "points").mkdir()
    (tmp_path / "progress").mkdir()
    (tmp_path / "points" / "done.json").write_text("{}")
    for key in ("done", "running"):
        (tmp_path / "progress" / key).write_text("probe 3 of 7")
    assert recover_orphans(tmp_path) == {"finished": [], "removed": [tmp_path / "progress" / "done"]}
    assert [p.name for p in (tmp_path / "progress").iterdir()] == ["running"]


def test_a_live_writers_and_another_hosts_temporaries_are_left_alone(tmp_path):
    host = socket.gethostname()
    live = tmp_path / f".a.json.tmp-{host}-{os.getpid()}-x1"
    elsewhere = tmp_path / f".b.json.tmp-{host}x-999999999-x1"          # another host: its pid means nothing here
    unnamed = tmp_path / ".c.json.tmp-k3j4l5m6"                          # the old names: cannot be proved dead
    dead = tmp_path / f".d.json.tmp-{host}-999999999-x1"
    for path in (live, elsewhere, unnamed, dead):
        path.write_text("{")
    assert orphaned_temporaries(tmp_path) == [(dead, tmp_path / "d.json")]


def test_a_killed_writer_not_yet_reaped_counts_as_gone():
    # A zombie (killed, its exit not collected: in a container whose first process reaps nothing it stays one)
    # writes nothing more; signal 0 still finds it.
    child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)"])
    try:
        assert writer_alive(child.pid)
        os.kill(child.pid, signal.SIGKILL)
        os.waitid(os.P_PID, child.pid, os.WEXITED | os.WNOWAIT)          # exited, left unreaped
        os.kill(child.pid, 0)                                              # still there for the kernel
        assert not writer_alive(child.pid)
    finally:
        child.kill()
        child.wait()


def test_a_killed_writers_temporary_that_holds_json_but_no_record_is_removed_not_a_crash(tmp_path):
    """A dead writer's point temporary holding JSON that is not an object (a number, null) is not a record: it is
    removed like a cut-short one, and the run goes on (a membership test of the seal's name on it raised
    TypeError)."""
    points = tmp_path / "points"
    points.mkdir()
    left = [killed_while_writing(points / f"{key}.json", value) for key, value in (("a" * 24, None), ("b" * 24, 5))]
    done = recover_orphans(tmp_path)
    assert done["finished"] == [] and sorted(done["removed"]) == sorted(left)
    assert list(points.iterdir()) == []


# A process that writes `sys.argv[2]` to `sys.argv[1]` with the store's writer and stops between the temporary's fsync
# and its rename, alive, saying so on its standard output: a live writer, as another PID namespace's would be.
STOPPED_WRITER = """
import json, os, sys, time
from drivers.sweep.store import atomic_write_json
def stop(*_):
    print("written", flush=True)
    time.sleep(600)
os.replace = stop
atomic_write_json(sys.argv[1], json.loads(sys.argv[2]))
"""


def test_a_live_writer_whose_pid_means_nothing_here_is_seen_by_its_lock(tmp_path):
    """Another PID namespace's writer (a container's, on a store shared through a volume) names its temporary with
    its own pid, which here is no process or another one. Its lock says it lives: its temporary is left alone, and
    once it dies (the kernel drops the lock) it is an orphan. Session 25's pid check alone took the live writer's
    temporary for an orphan (mend-s26)."""
    target = tmp_path / "points" / "abc.json"
    target.parent.mkdir()
    writer = subprocess.Popen([sys.executable, "-c", STOPPED_WRITER, str(target), json.dumps({"key": "abc"})],
                              cwd=ROOT, stdout=subprocess.PIPE, text=True)
    try:
        assert writer.stdout.readline() == "written\n"
        (tmp,) = target.parent.iterdir()
        # Its name as another namespace's writer gives it: a pid no process has here.
        seen = tmp.with_name(tmp.name.replace(f"-{writer.pid}-", "-999999999-"))
        tmp.rename(seen)
        assert orphaned_temporaries(target.parent) == []
        assert recover_orphans(tmp_path) == {"finished": [], "removed": []}
        assert seen.exists()
    finally:
        writer.kill()
        writer.wait()
    assert orphaned_temporaries(target.parent) == [(seen, target)]


def test_an_unlocked_temporary_quiet_for_long_is_an_orphan_whatever_its_pid_names(tmp_path):
    """A dead writer's pid may be a live process here (another namespace's numbering, or a reused pid): a temporary
    whose lock is free and that nothing has written for ORPHAN_AFTER_S is an orphan all the same. Session 25 kept it
    forever while the pid was taken (mend-s26)."""
    from models.durable import ORPHAN_AFTER_S

    host = socket.gethostname()
    old = tmp_path / f".a.json.tmp-{host}-{os.getpid()}-x1"        # a pid that runs here: this test's
    fresh = tmp_path / f".b.json.tmp-{host}-{os.getpid()}-x2"
    for path in (old, fresh):
        path.write_text("{")
    quiet_since = old.stat().st_mtime - ORPHAN_AFTER_S - 1
    os.utime(old, (quiet_since, quiet_since))
    # The fresh one may be a writer between creating its file and locking it: its live pid keeps it.
    assert orphaned_temporaries(tmp_path) == [(old, tmp_path / "a.json")]


def test_a_pid_started_after_the_temporary_was_written_is_not_its_writer():
    """A pid reused (after a reboot, or a wrap) names a process that started after its temporary was last written:
    not its writer (mend-s26)."""
    import time

    me = os.getpid()
    assert writer_alive(me) and writer_alive(me, wrote_at=time.time())
    # Written ten days ago: this test's process (started since) did not write it.
    assert not writer_alive(me, wrote_at=time.time() - 10 * 86400)
