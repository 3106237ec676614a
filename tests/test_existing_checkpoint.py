"""A sweep that restores a checkpoint made elsewhere (Sweep.restore_from, `figures --checkpoint`; issue 28: the
paper's 192 Mi items loaded once by `load_memory.py` and restored by a study's point): its points equal runs that
load, it loads nothing, and a checkpoint of another data set or binary is refused before any run, naming what
differs. The guest binary is compared by content, so a checkpoint restores from another checkout's copy of it. And
the studies' guest memory limit, which is in a checkpoint's identity, at the paper's data set."""

from __future__ import annotations

import dataclasses
import json
import shutil

import pytest
from test_checkpoint import (
    DETAILED,
    ITEMS,
    kvs_server,  # noqa: F401 (the fixture)
    shared_sweep,
    system,
)

from configs import kvs_functional
from models import _engine
from models.params import ParamError
from models.sim import simulate


@pytest.fixture(scope="module")
def elsewhere(kvs_server, tmp_path_factory):  # noqa: F811
    """A checkpoint taken by a plain run (not a sweep) whose binary is a copy at another path, as another checkout
    has it."""
    root = tmp_path_factory.mktemp("elsewhere")
    binary = root / "checkout" / "kvs-server"
    binary.parent.mkdir()
    shutil.copy(kvs_server, binary)
    s = system(requests=1)
    s.workload.binary, s.checkpoint_to = str(binary), str(root / "ck")
    simulate(s)
    return root / "ck"


def restoring(name, points, folder, **base):
    return dataclasses.replace(shared_sweep(name, points, **base), restore_from=str(folder))


def test_a_sweep_restores_a_checkpoint_made_elsewhere_and_loads_nothing(elsewhere, tmp_path):
    from drivers import sweep as sw

    s = restoring("elsewhere", [{**DETAILED, "core.rob_entries": 16}, {**DETAILED, "caches.llc.size": "32KiB"}],
                  elsewhere)
    report = sw.run(s, store=tmp_path, jobs=1, progress=False)
    assert (report.points, report.ran, report.failed, report.loads) == (2, 2, 0, 0)
    assert not (tmp_path / "checkpoints").exists()
    records = sw.stored_points(tmp_path)
    for p in s.resolve():
        record = records[p.key]
        assert record["status"] == "ok", record.get("error")
        # The point runs this checkout's binary (another path than the checkpoint's, the same bytes).
        assert record["config"]["workload"]["binary"] != json.loads((elsewhere / "manifest.json").read_text())["binary"]
        scratch = simulate(p.system())
        assert json.dumps(record["stats"], sort_keys=True) == json.dumps(scratch.stats, sort_keys=True), p.params


def test_the_binary_is_compared_by_content_not_by_path(elsewhere):
    s = system()
    assert s.workload.binary != json.loads((elsewhere / "manifest.json").read_text())["binary"]
    s.restore_from = str(elsewhere)
    back = simulate(s)
    assert back.stats == simulate(system()).stats
    a, b = system().to_dict(), system().to_dict()
    b["workload"]["binary"] = "/another/checkout/kvs-server"
    assert _engine.checkpoint_identity(json.dumps(a)) == _engine.checkpoint_identity(json.dumps(b))


@pytest.mark.parametrize("point, message", [
    ({"client.items": ITEMS // 2}, r"it holds another data set: client\.items is 2048 here but 4096 in the checkpoint"),
    ({"workload.argv[buckets]": 8192}, r"workload\.argv is \[.*\"buckets=8192\".*\] here but \[.*\"buckets=4096\""),
    ({"harts": 4}, r"harts is 4 here but 2 in the checkpoint"),
])
def test_a_checkpoint_of_another_data_set_is_refused_before_any_run(elsewhere, tmp_path, point, message):
    from drivers import sweep as sw

    s = restoring("other", [{**DETAILED, "core.rob_entries": 16}, {**DETAILED, **point}], elsewhere)
    with pytest.raises(ParamError, match=rf"checkpoint {elsewhere} for point .*: {message}"):
        sw.run(s, store=tmp_path, jobs=1, progress=False)
    assert not list((tmp_path / "points").glob("*.json"))       # not even the matching point ran


def test_a_checkpoint_of_another_binary_or_none_is_refused(elsewhere, tmp_path):
    from drivers import sweep as sw

    other = tmp_path / "kvs-server"
    other.write_bytes(kvs_functional.KVS_SERVER.read_bytes() + b"\0rebuilt")
    s = restoring("rebuilt", [{**DETAILED, "workload.binary": str(other)}], elsewhere)
    with pytest.raises(ParamError, match=r"taken running another binary \(.*checkout/kvs-server, \d+ bytes, CRC-32 "
                                         r"0x[0-9a-f]{8}\); this point's .*kvs-server has \d+ bytes"):
        sw.run(s, store=tmp_path / "a", jobs=1, progress=False)
    with pytest.raises(ParamError, match=r"not a checkpoint \(.*nowhere/manifest.json"):
        sw.run(restoring("none", [DETAILED], tmp_path / "nowhere"), store=tmp_path / "b", jobs=1, progress=False)
    unshared = dataclasses.replace(restoring("unshared", [DETAILED], elsewhere), share_checkpoint=False)
    with pytest.raises(ParamError, match="no point of it restores a checkpoint"):
        sw.run(unshared, store=tmp_path / "c", jobs=1, progress=False)


def test_the_paper_data_set_gets_the_guest_memory_it_touches_and_load_memory_makes_its_checkpoint():
    """At 192 Mi items the 60-core socket's store touches about 22.5 GiB, over the config's 16 GiB: the studies'
    points were refused (System.validate); they now get 32 GiB, and `load_memory.py`'s load has the same identity
    as the one-socket study point (scaling, end-to-end), so its checkpoint restores there. Smaller data sets keep
    the config's limit (their stored points keep their keys)."""
    from drivers.cli import load_memory
    from drivers.studies import common, scaling

    c = common.Conditions()
    (one_socket,) = [sw for sw in scaling.sweeps(conditions=c) if sw.name == f"e2e-1s-{c.tag()}"]
    point = one_socket.base.build()
    point.validate()
    assert point.mem_limit == 32 << 30
    loaded = load_memory._system(common.PAPER_ITEMS, common.FULL_CORES, 2 << 30, 1)
    assert _engine.checkpoint_identity(json.dumps(loaded.to_dict())) == \
        _engine.checkpoint_identity(json.dumps(point.to_dict()))
    small = dataclasses.replace(c, items=16 << 20)
    (one_socket,) = [sw for sw in scaling.sweeps(conditions=small) if sw.name == f"e2e-1s-{small.tag()}"]
    assert one_socket.base.build().mem_limit == 16 << 30
    assert common.target(60, items=16 << 20).mem_limit == 16 << 30


def test_the_partition_load_study_sizes_its_guest_memory_by_the_studies_rule():
    """partition_load had its own limit (the estimate and a quarter, rounded to a GiB); it now takes the studies'
    one rule, so its paper-scale point is a power of two at or above the estimate and a quarter (192 Mi items over
    24 partitions touch about 34 GB: 64 GiB), and a point of the same data set in another study has the same
    limit (the limit is in a checkpoint's identity)."""
    from drivers.studies import common, partition_load
    from models.client import kvs_server_memory

    point = partition_load.system(24, items=common.PAPER_ITEMS)
    need = kvs_server_memory(point.server_argv(), point.client, point.harts) * common.MEM_LIMIT_HEADROOM
    assert point.mem_limit >= need
    assert point.mem_limit & (point.mem_limit - 1) == 0, "a power of two, as common.fit_mem_limit rounds"
    assert point.mem_limit == 64 << 30


def test_figures_refuses_a_checkpoint_of_another_data_set_and_a_missing_binary(elsewhere, tmp_path, capsys):
    """`figures --checkpoint` (the 2-hart test checkpoint against the 60-core study point): exit 2 with the reason
    before any point runs; `--binary` names a file that must exist, and becomes every point's workload.binary."""
    from drivers.cli import figures
    from drivers.studies import common, scaling

    args = ["--study", "scaling", "--items", "65536", "--sweep", "e2e-1s-60c-64Ki-key", "--jobs", "1",
            "--no-progress", "--store", str(tmp_path / "sweeps"), "--outdir", str(tmp_path / "figures")]
    assert figures.main(args + ["--checkpoint", str(elsewhere)]) == 2
    err = " ".join(capsys.readouterr().err.split())
    assert "it holds another data set" in err and "harts is 60 here but 2 in the checkpoint" in err, err
    assert not list((tmp_path / "sweeps").rglob("points/*.json"))
    assert figures.main(args + ["--binary", str(tmp_path / "none")]) == 2
    assert "--binary" in capsys.readouterr().err
    c = dataclasses.replace(common.Conditions(), items=65536)
    (sw,) = [s for s in scaling.sweeps(conditions=c) if s.name == "e2e-1s-60c-64Ki-key"]
    copy = tmp_path / "kvs-server"
    shutil.copy(kvs_functional.KVS_SERVER, copy)
    (point,) = figures.with_binary(sw, str(copy)).resolve()
    assert point.system().workload.binary == str(copy)
    renamed = tmp_path / "kvs-server-copy"           # the configs know the KVS server by its file name
    shutil.copy(kvs_functional.KVS_SERVER, renamed)
    with pytest.raises(ParamError, match="name the file 'kvs-server'"):
        figures.with_binary(sw, str(renamed))


def test_load_memory_packs_a_paper_scale_load_as_a_study_does_unless_told():
    """Session 27: `load_memory.py --items 201326592` kept every guest page whole by default (22.5 GiB) and its
    low-memory guard stopped it at 17.8 GiB RSS; by default it now packs as a study's shared load does
    (LOAD_UNPACKED past a larger KVS store), 0 still keeps every page whole, and a small data set stays whole."""
    from drivers.cli import load_memory
    from drivers.studies import common
    from drivers.sweep.checkpoints import LOAD_UNPACKED

    assert load_memory._system(common.PAPER_ITEMS, common.FULL_CORES, -1, 1).unpacked_memory == LOAD_UNPACKED
    assert load_memory._system(common.PAPER_ITEMS, common.FULL_CORES, 0, 1).unpacked_memory == 0
    assert load_memory._system(common.PAPER_ITEMS, common.FULL_CORES, 1 << 30, 1).unpacked_memory == 1 << 30
    assert load_memory._system(1 << 16, 4, -1, 1).unpacked_memory == 0
