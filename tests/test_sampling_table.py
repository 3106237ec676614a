"""Sampling's validation table (drivers/cli/sampling_table.py): its configurations are the studies' points on the
reduced target socket, each differing from the base in what its row says, and bad input is refused before any run."""

from __future__ import annotations

import pytest

from drivers.cli import sampling_table as table
from models.params import ParamError


def test_an_unknown_configuration_is_refused_before_any_run(monkeypatch):
    def no_run(*args, **kwargs):
        raise AssertionError("a run started before the input was checked")

    monkeypatch.setattr(table, "run", no_run)
    with pytest.raises(SystemExit, match="unknown configuration.*no-such-point.*known: base"):
        table.main(["--only", "base,no-such-point"])
    with pytest.raises(SystemExit, match="unknown configuration"):
        table.main(["--only", ","])
    with pytest.raises(SystemExit, match="--requests-per-core = 0 must be at least 1"):
        table.main(["--only", "base", "--requests-per-core", "0"])
    with pytest.raises(ParamError, match="period_insts_per_hart"):
        table.main(["--only", "base", "--period-insts-per-hart", "2500"])   # below warm-up + window


def test_each_row_is_the_base_point_moved_along_one_study_axis():
    base = table.system("base", sampled=False)
    assert not base.sampling.enabled and table.system("base", sampled=True).sampling.enabled
    assert base.harts == table.CORES and base.client.items == table.ITEMS
    assert (base.client.popularity, base.client.mode, base.client.requests_per_packet) == ("uniform", "erew", 1)

    def differs(name: str) -> dict:
        s, b = table.system(name, sampled=False).to_dict(), base.to_dict()
        return {k: v for k, v in _flat(s).items() if _flat(b).get(k) != v}

    assert differs("inorder") == {"core.rob_entries": 1, "core.issue_width": 1, "core.fetch_width": 1,
                                  "core.commit_width": 1, "core.int_alus": 1}
    assert differs("llc256") == {"caches.llc.size": 256 * 1024 * table.CORES}
    assert differs("batch32") == {"client.requests_per_packet": 32}
    assert "prefetch=0" in table.system("prefetch-off", sampled=False).workload.argv
    crew = table.system("zipf-crew", sampled=False)
    assert (crew.client.popularity, crew.client.mode) == ("zipf", "crew") and "mode=crew" in crew.workload.argv


def _flat(d: dict, prefix: str = "") -> dict:
    out = {}
    for k, v in d.items():
        if isinstance(v, dict):
            out.update(_flat(v, f"{prefix}{k}."))
        elif not isinstance(v, list):
            out[f"{prefix}{k}"] = v
    return out
