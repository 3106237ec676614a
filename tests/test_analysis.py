"""analysis.results: run folders become tidy rows with configuration and statistics side by side."""

import json

import pytest

from analysis import load_run, load_runs


def _fake_run(path, harts, insts):
    path.mkdir()
    (path / "config.json").write_text(json.dumps({"harts": harts, "workload": {"binary": "b", "argv": ["1"]}}))
    (path / "stats.json").write_text(json.dumps({"system.hart0.insts": insts}))
    return path


def test_runs_become_rows_with_flattened_config_and_stats(tmp_path):
    runs = [_fake_run(tmp_path / f"r{h}", h, 100 * h) for h in (1, 2, 4)]
    table = load_runs(runs)
    assert list(table["cfg.harts"]) == [1, 2, 4]
    assert list(table["stat.system.hart0.insts"]) == [100, 200, 400]
    assert table.loc[0, "cfg.workload.binary"] == "b"
    assert table.loc[0, "cfg.workload.argv"] == '["1"]'


def test_unfinished_run_is_named(tmp_path):
    (tmp_path / "half").mkdir()
    (tmp_path / "half" / "config.json").write_text("{}")
    with pytest.raises(FileNotFoundError, match="stats.json missing"):
        load_run(tmp_path / "half")
