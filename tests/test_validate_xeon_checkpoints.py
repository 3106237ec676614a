"""validate_xeon.py --checkpoints: each point's data set is loaded once, with the point's own server arguments (MICA's
log and index), into a folder named by the data set's key; the measured run restores it, and a later invocation
restores without loading; bad input is refused before any run."""

from __future__ import annotations

import json
import pathlib

import pytest

from drivers.cli import validate_xeon as vx
from drivers.sweep import CHECKPOINTS
from models.params import ParamError


def _run(tmp_path: pathlib.Path, save: str, cores: str = "2", items: int = 4096) -> str:
    assert vx.main(["--cores", cores, "--items", str(items), "--requests-per-core", "200", "--no-target",
                    "--checkpoints", str(tmp_path / "ck"), "--save", str(tmp_path / save)]) == 0
    return save


def _stats(tmp_path: pathlib.Path, save: str, cores: int = 2) -> dict:
    return json.loads((tmp_path / save / str(cores) / "stats.json").read_text())


def test_a_point_loads_its_data_set_once_and_every_later_run_restores_it(engine, tmp_path, capsys):
    _run(tmp_path, "first")
    out = capsys.readouterr().out
    assert "data set loaded now" in out
    folders = [d for d in (tmp_path / "ck" / CHECKPOINTS).iterdir() if d.is_dir()]
    assert len(folders) == 1, "one data set, one checkpoint"
    manifest = json.loads((folders[0] / "manifest.json").read_text())
    # The checkpoint holds the point's own server: MICA's log window and index in use at 4,096 items.
    point = vx.point_system(2, 4096, 200, 1.0)
    assert manifest["config"]["workload"]["argv"] == point.workload.argv
    assert any(a.startswith("log_window_kib=") for a in point.workload.argv)
    assert any(a.startswith("buckets_used=") for a in point.workload.argv)
    written = (folders[0] / "manifest.json").stat().st_mtime_ns
    config = json.loads((tmp_path / "first" / "2" / "config.json").read_text())
    assert config["restore_from"] == str(folders[0]), "the measured run restored it"

    _run(tmp_path, "second")
    _run(tmp_path, "third")
    out = capsys.readouterr().out
    assert "data set loaded now" not in out and out.count("loaded by an earlier run, restored") == 2
    assert (folders[0] / "manifest.json").stat().st_mtime_ns == written, "not loaded again"
    assert [d for d in (tmp_path / "ck" / CHECKPOINTS).iterdir() if d.is_dir()] == folders
    first, second, third = (_stats(tmp_path, s) for s in ("first", "second", "third"))
    assert second == third, "two restores give identical statistics"
    assert second == first, "the run that loaded restores as a later one does"
    assert first["client.requests"] > 0 and first["client.throughput_mrps"] > 0
    # --from says the data set was restored.
    assert vx.main(["--from", str(tmp_path / "second")]) == 0
    assert f"data set restored from {folders[0]}" in capsys.readouterr().out


def test_the_dual_socket_point_loads_and_restores(engine, tmp_path, capsys):
    """Beyond 12 cores the point is the dual-socket server (two sockets, a checkpoint of both)."""
    _run(tmp_path, "dual", cores="14", items=2048)
    out = capsys.readouterr().out
    assert "data set loaded now" in out and "dual-socket server, 14 core(s)" in out
    stats = _stats(tmp_path, "dual", cores=14)
    assert stats["client.throughput_mrps"] > 0 and vx.sockets_in(stats) == 2
    config = json.loads((tmp_path / "dual" / "14" / "config.json").read_text())
    assert config["restore_from"] and len(config["sockets"]) == 2


def test_bad_checkpoint_input_is_refused_before_any_run(tmp_path, monkeypatch):
    a_file = tmp_path / "a_file"
    a_file.write_text("")
    with pytest.raises(SystemExit, match="exists and is not a folder"):
        vx.main(["--cores", "1", "--items", "4096", "--no-target", "--checkpoints", str(a_file)])
    (tmp_path / "ck").mkdir()
    (tmp_path / "ck" / CHECKPOINTS).write_text("")
    with pytest.raises(SystemExit, match="checkpoints exists and is not a folder"):
        vx.main(["--cores", "1", "--items", "4096", "--no-target", "--checkpoints", str(tmp_path / "ck")])
    with pytest.raises(SystemExit, match="--from and --checkpoints"):
        vx.main(["--from", str(tmp_path), "--checkpoints", str(tmp_path / "other")])
    # A bad size, or a bad core count after good ones, stops before the first point runs.
    with pytest.raises(Exception, match="System.unpacked_memory = 'lots'"):
        vx.main(["--cores", "1", "--items", "4096", "--no-target", "--unpacked-memory", "lots"])
    with pytest.raises(SystemExit, match="--cores 13"):
        vx.main(["--cores", "1,13", "--items", "4096", "--no-target"])
    # A disk that cannot hold the checkpoint: refused before the load (by the check of every point's load together,
    # and by the load's own), nothing written.
    import shutil

    from drivers.sweep import Base, load_once

    monkeypatch.setattr(shutil, "disk_usage", lambda path: type("U", (), {"free": 1 << 20})())
    with pytest.raises(ParamError, match=r"the data sets to load take about .* GB .*, the disk under it has 0\.0 GB"):
        vx.main(["--cores", "1", "--items", "1048576", "--no-target", "--checkpoints", str(tmp_path / "full")])
    base = Base("drivers.cli.validate_xeon:point_system", cores=1, items=1048576, requests_per_core=10,
                offered_mpps=1.0)
    with pytest.raises(ParamError, match=r"checkpoint takes about .* GB, the disk has 0\.0 GB free"):
        load_once(tmp_path / "full", base, "one core")
    assert not (tmp_path / "full" / CHECKPOINTS).exists()


def test_a_large_store_is_loaded_and_restored_packed_and_the_caveat_says_what_runs():
    """A KVS store larger than 2 GiB keeps 2 GiB of guest memory whole on its load (the sweeps' rule) and on the run
    that restores it, unless --unpacked-memory says otherwise; the guest memory limit is what the data set needs."""
    from drivers.sweep import packed_as_loaded
    from drivers.sweep.checkpoints import LOAD_UNPACKED

    big = vx.point_system(24, vx.PAPER_ITEMS, 10, 1.0)
    assert big.mem_limit == 16 << 30 and big.workload.argv[1:] == ["log_mib=512", "buckets=1048576"]
    assert packed_as_loaded(big).unpacked_memory == LOAD_UNPACKED == 2 << 30
    given = vx.point_system(24, vx.PAPER_ITEMS, 10, 1.0, unpacked_memory="3GiB")
    assert packed_as_loaded(given).unpacked_memory == 3 << 30
    assert packed_as_loaded(vx.point_system(4, 4096, 10, 1.0)).unpacked_memory == 0
    assert vx.items_note(vx.PAPER_ITEMS) == "201,326,592 items (the paper's Tiny data set)"
    assert "cannot hold" not in vx.items_note(16 << 20) and "REDUCED" in vx.items_note(16 << 20)


def test_a_parameter_override_is_a_labelled_sensitivity_and_a_bad_one_is_refused_before_any_run():
    system = vx.point_system(4, 1 << 20, 10, 1.0, overrides=("caches.l1d.prefetch.next_line=false",))
    assert system.caches.l1d.prefetch.next_line is False
    assert vx.point_system(4, 1 << 20, 10, 1.0).caches.l1d.prefetch.next_line is True
    with pytest.raises(Exception, match="Prefetcher has no parameter 'nxt'"):
        vx.main(["--cores", "4", "--no-target", "--set", "caches.l1d.prefetch.nxt=false"])


def test_a_system_level_override_the_dual_sockets_shadow_is_refused_and_the_sockets_own_are_applied():
    """On the dual-socket server each socket holds its own caches: caches.l1d... would change nothing, so it is
    refused naming each socket's path; sockets[i]... sets that socket's; a path the sockets do not hold applies."""
    with pytest.raises(ParamError, match=r"sockets each have their own 'caches'.*--set 'sockets\[1\]\.caches\.l1d\."
                                         r"prefetch\.next_line=false'"):
        vx.point_system(24, 1 << 20, 10, 1.0, overrides=("caches.l1d.prefetch.next_line=false",))
    both = vx.point_system(24, 1 << 20, 10, 1.0, overrides=tuple(
        f"sockets[{i}].caches.l1d.prefetch.next_line=false" for i in (0, 1)))
    assert [s.caches.l1d.prefetch.next_line for s in both.sockets] == [False, False]
    assert [s.caches.l1d.prefetch.next_line for s in vx.point_system(24, 1 << 20, 10, 1.0).sockets] == [True, True]
    assert vx.point_system(24, 1 << 20, 10, 1.0, overrides=("client.warmup_requests=5",)).client.warmup_requests == 5


def test_the_load_runs_in_a_worker_process_so_its_memory_is_not_kept_under_the_measured_run(engine, tmp_path,
                                                                                            monkeypatch):
    from drivers.sweep import Base, load_once
    from models import sim

    def in_this_process(*args, **kwargs):
        raise AssertionError("the load ran in the driver's own process")

    monkeypatch.setattr(sim, "simulate", in_this_process)
    base = Base("drivers.cli.validate_xeon:point_system", cores=2, items=4096, requests_per_core=10,
                offered_mpps=1.0)
    folder, record = load_once(tmp_path, base, "two cores")
    assert record["status"] == "ok" and record["loaded"] and (folder / "manifest.json").is_file()
    assert folder.parent == tmp_path / CHECKPOINTS and folder.name == record["data_set"]


def _as_loaded_by_another_build(tmp_path: pathlib.Path, key: str = "0" * 24) -> pathlib.Path:
    """The store's one checkpoint moved under another key, as a load by another engine build leaves it (the key
    covers the engine's content), its record naming that build."""
    from drivers.sweep import atomic_write_json

    root = tmp_path / "ck" / CHECKPOINTS
    [folder] = [d for d in root.iterdir() if d.is_dir()]
    record = json.loads((root / f"{folder.name}.json").read_text())
    record.pop("sha256", None)
    moved = root / key
    folder.rename(moved)
    (root / f"{folder.name}.json").unlink()
    atomic_write_json(root / f"{key}.json", {**record, "data_set": key, "engine": "older-build",
                                             "source": {"commit": "abcdef1234567890", "dirty": False}})
    return moved


def _point(items: int = 4096):
    from drivers.sweep import Base, Point, data_set_key

    base = Base("drivers.cli.validate_xeon:point_system", cores=2, items=items, requests_per_core=200,
                offered_mpps=1.0)
    return Point("two cores", 0, {}, base, {}, "", {}, data_set_key(base.build().to_dict()))


def test_a_data_set_loaded_by_another_engine_build_is_restored_with_a_note(engine, tmp_path, capsys):
    from drivers.sweep import engine_hash

    _run(tmp_path, "first")
    [record] = [json.loads(f.read_text()) for f in (tmp_path / "ck" / CHECKPOINTS).glob("*.json")]
    assert record["engine"] == engine_hash() and record["source"]["commit"], "the load record names its engine"
    moved = _as_loaded_by_another_build(tmp_path)
    capsys.readouterr()
    _run(tmp_path, "second")
    out = capsys.readouterr().out
    assert "data set loaded now" not in out and "loaded by an earlier run, restored" in out
    assert f"NOTE: restored the data set loaded under key {moved.name} by another engine build (engine older-build, " \
        "source commit abcdef123456;" in out
    assert [d for d in moved.parent.iterdir() if d.is_dir()] == [moved], "not loaded again"
    assert json.loads((tmp_path / "second" / "2" / "config.json").read_text())["restore_from"] == str(moved)
    load = json.loads((tmp_path / "second" / "2" / "load.json").read_text())
    assert load["reused"]["engine"] == "older-build" and load["reused"]["data_set"] == moved.name
    assert _stats(tmp_path, "second") == _stats(tmp_path, "first"), "the same data set, the same statistics"


def test_a_checkpoint_of_another_identity_or_binary_is_not_taken_for_the_data_set(engine, tmp_path):
    from drivers.sweep import loaded_elsewhere

    _run(tmp_path, "first")
    moved = _as_loaded_by_another_build(tmp_path)
    assert loaded_elsewhere(tmp_path / "ck", _point())["folder"] == str(moved)
    assert loaded_elsewhere(tmp_path / "ck", _point(items=8192)) is None, "another data set (items)"
    manifest = json.loads((moved / "manifest.json").read_text())
    (moved / "manifest.json").write_text(json.dumps({**manifest, "binary_crc32": manifest["binary_crc32"] ^ 1}))
    assert loaded_elsewhere(tmp_path / "ck", _point()) is None, "another guest binary"


def test_a_checkpoint_of_a_format_this_engine_cannot_read_is_a_clear_error(engine, tmp_path):
    from models.durable import write_checksums
    from models.errors import ConfigError

    _run(tmp_path, "first")
    moved = _as_loaded_by_another_build(tmp_path)
    manifest = json.loads((moved / "manifest.json").read_text())
    (moved / "manifest.json").write_text(json.dumps({**manifest, "format_version": 99}))
    write_checksums(moved, ["manifest.json"])       # a whole checkpoint of another format, not a damaged one
    with pytest.raises(ConfigError, match=r"System.restore_from = .*: format version 99, this engine reads version 1"):
        _run(tmp_path, "second")


def test_a_checkpoint_taken_before_a_parameter_was_declared_is_still_its_data_set(engine, tmp_path):
    """A timing parameter declared after the load (absent from the checkpoint's configuration, which the engine's
    strict reading refuses) takes the point's value; one a restore must match, absent, is another data set."""
    from drivers.sweep import loaded_elsewhere

    _run(tmp_path, "first")
    moved = _as_loaded_by_another_build(tmp_path)
    manifest = json.loads((moved / "manifest.json").read_text())
    older = json.loads(json.dumps(manifest))
    del older["config"]["core"]["scheduler_entries"], older["config"]["nics"][0]["pcie_read_tags"]
    (moved / "manifest.json").write_text(json.dumps(older))
    assert loaded_elsewhere(tmp_path / "ck", _point())["folder"] == str(moved)
    del older["config"]["nics"][0]["queues"]           # a field a restore must match
    (moved / "manifest.json").write_text(json.dumps(older))
    assert loaded_elsewhere(tmp_path / "ck", _point()) is None
