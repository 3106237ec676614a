"""Every driver and CLI that takes a seed says which seed it sets. A run's randomness comes from two seeds:
System.seed (where a sampled run's windows fall, getrandom's stream) and the client's client.seed (its keys and
operations; client.measure_seed restarts them after the load). `bench_server --seed` once set System.seed alone,
so its runs at seeds 2 and 3 were bit-identical (threads-s23): a flag whose help names neither left that unseen."""

from __future__ import annotations

import ast
import pathlib

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[1]
# What a seed option's help must name: a simulation seed it sets, or that the generator is the driver's own.
NAMED = ("System.seed", "client.seed", "client.measure_seed", "own generator")


def _seed_options() -> list[tuple[str, str, str]]:
    """(file, option, help) of every add_argument whose option names a seed, in drivers/ and sim-scripts/."""
    found = []
    for path in sorted([*ROOT.glob("drivers/**/*.py"), *ROOT.glob("sim-scripts/*.py")]):
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if not (isinstance(node, ast.Call) and getattr(node.func, "attr", None) == "add_argument"):
                continue
            options = [a.value for a in node.args if isinstance(a, ast.Constant) and isinstance(a.value, str)]
            if any("seed" in o for o in options):
                help_ = next((k.value for k in node.keywords if k.arg == "help"), None)
                text = help_.value if isinstance(help_, ast.Constant) else ast.unparse(help_) if help_ else ""
                found.append((str(path.relative_to(ROOT)), options[0], text))
    return found


def test_every_seed_option_says_which_seed_it_sets():
    """98a3949: drivers/soak.py's and mica_log_replay's --seed had no help at all."""
    options = _seed_options()
    assert {f for f, _, _ in options} >= {"drivers/cli/bench_server.py", "drivers/cli/sampling_table.py",
                                          "drivers/cli/driver_gap.py", "drivers/cli/steady_window.py",
                                          "drivers/soak.py", "drivers/cli/mica_log_replay.py"}
    silent = [(f, o) for f, o, text in options if not any(n in text for n in NAMED)]
    assert not silent, f"seed options whose help names no seed they set: {silent}"


def test_the_system_seed_alone_leaves_the_clients_keys_and_the_client_seed_moves_them(engine):
    """Why every seed option must name its seed: on the KVS server System.seed alone does not move the client's
    keys and operations (the split bench_server had); client.seed does."""
    from drivers.studies import common
    from models.sim import simulate

    def gets(seed: int, client_seed: int) -> float:
        s = common.target(2, items=1 << 12, requests_per_core=1)
        s.client.requests = 1000
        s.client.get_ratio = 0.5
        s.seed, s.client.seed = seed, client_seed
        return simulate(s).stats["client.gets"]

    assert gets(2, 1) == gets(3, 1)
    assert gets(1, 2) != gets(1, 3)


def test_the_driver_gaps_seed_moves_the_measured_phases_stream_and_nothing_else(monkeypatch):
    """`driver_gap --overload --seed S` runs each variant with client.measure_seed = S (its own key stream: tested
    in test_study_seeds_and_p95.py), the restored load and every other parameter the same, as its help says."""
    import drivers.sweep.checkpoints as checkpoints
    import models.sim as sim
    from drivers.cli import driver_gap

    class Stop(Exception):
        pass

    systems = []

    def first_run(system):
        systems.append(system.to_dict())
        raise Stop

    monkeypatch.setattr(checkpoints, "prepare_checkpoint", lambda store, point: {"status": "ok", "folder": "/x"})
    monkeypatch.setattr(sim, "simulate", first_run)
    for seed in (3, 4):
        with pytest.raises(Stop):
            driver_gap.overload([next(iter(driver_gap.ALL))], 4, 100.0, seed=seed)
    (a, b) = systems
    assert a["client"].pop("measure_seed") == 3 and b["client"].pop("measure_seed") == 4
    assert a == b
