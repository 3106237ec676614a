"""The architect's workflow (issue 25): the `kvsim` command and its did-you-mean, `kvsim params`/`configs`, a config's
own arguments, provenance read back by load_runs, unfinished runs flagged, statistics as one measured interval
with the whole run apart, power in every detailed summary, warm-up sized to a restored run, the ETA."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import time

import pytest

from analysis import load_runs
from analysis.results import UnreadableRunWarning
from drivers.cli import kvsim, names
from drivers.cli import params as params_cli
from drivers.cli import run as run_cli
from models.params import ParamError
from models.sim import WHOLE_RUN_STATS, sized_warmup_requests, unit_of

from conftest import BUILD, ROOT, sigint_default

KVSIM = [sys.executable, "-m", "drivers.cli"]     # `kvsim`, run from ROOT: this checkout's code
SMALL = ["--set", "client.requests=3000", "--set", "client.items=4096"]


def kvsim_cmd(*args, timeout=300, env=None):
    return subprocess.run([*KVSIM, *args], capture_output=True, text=True, cwd=ROOT, timeout=timeout,
                          env={**__import__("os").environ, "COLUMNS": "200", **(env or {})})


# ------------------------------------------------------------------------------------------------ the command
def test_the_console_script_is_declared_and_importable():
    tomllib = pytest.importorskip("tomllib")     # Python 3.11+
    scripts = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["scripts"]
    module, _, function = scripts["kvsim"].partition(":")
    assert module == "drivers.cli.kvsim" and getattr(kvsim, function) is kvsim.main
    packages = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["maturin"]["python-packages"]
    assert module.split(".")[0] in packages, "the command must ship in the wheel"


def test_no_script_inserts_into_sys_path():
    for path in [*ROOT.joinpath("sim-scripts").glob("*.py"), *ROOT.joinpath("drivers", "cli").glob("*.py")]:
        text = path.read_text()
        assert "sys.path.insert" not in text, path
        assert "noqa: E402\n" not in text, path


def test_an_unknown_command_gets_did_you_mean():
    out = kvsim_cmd("rnu")
    assert out.returncode == 2 and "did you mean 'run'" in out.stderr


def test_help_lists_every_command():
    out = kvsim_cmd("--help")
    assert out.returncode == 0
    for name in kvsim.COMMANDS:
        assert name in out.stdout


def test_a_misspelled_parameter_path_suggests_the_right_one():
    out = kvsim_cmd("run", "kvs_default", "--set", "core.rob_entires=64")
    assert out.returncode == 2 and "Traceback" not in out.stdout + out.stderr
    # The console wraps a long message at a space (the Core's parameter list grew: 0a05fdc), so words are compared.
    assert "did you mean 'core.rob_entries'" in " ".join(out.stdout.split())
    # A right leaf in the wrong place is found too.
    with pytest.raises(ParamError, match="did you mean 'core.rob_entries'"):
        names.check_path(__import__("configs").load("kvs_default").system(), "rob_entries")


def test_a_misspelled_config_and_config_argument_are_named(tmp_path):
    out = kvsim_cmd("run", "kvs_defualt")
    assert out.returncode == 2 and "did you mean 'kvs_default'" in out.stdout
    out = kvsim_cmd("run", "mercury", "--arg", "core_knd=a15", "--outdir", str(tmp_path))
    assert out.returncode == 2 and "did you mean 'core_kind'" in out.stdout
    assert not (tmp_path / "config.json").exists(), "names are checked before anything runs"


def test_a_config_argument_reaches_the_system():
    import configs

    system, kwargs, _ = run_cli.build_system("mercury", ["core_kind=a15", "cores=2"], ["core.rob_entries=32"])
    assert kwargs == {"core_kind": "a15", "cores": 2}
    assert system.core.model == "ooo" and system.harts == 2 and system.core.rob_entries == 32
    assert configs.load("mercury").system().core.model == "inorder"


def test_params_lists_docs_types_units_ranges_defaults_and_values():
    out = kvsim_cmd("params", "caches.llc")
    assert out.returncode == 0, out.stdout + out.stderr
    for text in ("caches.llc.size", "caches.llc.assoc", "bytes", "in [1, 64]", "3145728", "ways per set"):
        assert text in out.stdout
    rows = {r["path"]: r for r in params_cli.param_rows(__import__("configs").load("kvs_default").system(),
                                                         "caches.llc")}
    assert rows["caches.llc.size"]["unit"] == "bytes" and rows["caches.llc.size"]["value"] == "3145728"
    assert rows["caches.llc.size"]["default"] == "32768", "the class default beside the config's value"
    assert all(p.startswith("caches.llc.") for p in rows)
    out = kvsim_cmd("params", "caches.lcc")
    assert out.returncode == 2 and "did you mean 'caches.llc'" in out.stdout


def test_configs_listing_keeps_docstrings_whole():
    """The summary is the first sentence of the first paragraph, never lines of a table joined together."""
    import types

    module = types.ModuleType("fake")
    module.__doc__ = "A platform of two parts.\n\n| part | size |\n| --- | --- |\n| LLC | 45 MB |\n"
    assert params_cli.summary_line(module) == "A platform of two parts."
    module.__doc__ = "| part | size |\n| --- | --- |\n"
    assert "|" not in params_cli.summary_line(module)
    out = kvsim_cmd("configs")
    assert out.returncode == 0
    for name in __import__("configs").available():
        assert f"{name}:" in out.stdout
    assert "--arg: core_kind='a7'" in out.stdout.replace("\n", " ") or "core_kind" in out.stdout


# ------------------------------------------------------------------------------ a run: provenance, power, stats
@pytest.fixture(scope="module")
def small_run(tmp_path_factory, engine):
    out = tmp_path_factory.mktemp("kvsim") / "run"
    proc = kvsim_cmd("run", "kvs_default", *SMALL, "--outdir", str(out))
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return out, proc.stdout


def test_provenance_is_written_and_read_back_by_load_runs(small_run):
    out, _ = small_run
    prov = json.loads((out / "provenance.json").read_text())
    assert prov["config"] == "kvs_default" and prov["status"] == "ok: client_done" and prov["finished"]
    assert "run kvs_default" in prov["command"] and "--outdir" in prov["argv"]
    assert len(prov["engine"]["sha256"]) == 64 and len(prov["guest_binary"]["sha256"]) == 64
    assert prov["guest_binary"]["path"].endswith("kvs-server") and prov["host"]["name"]
    assert prov["commit"] is None or len(prov["commit"]) == 40
    row = load_runs([out]).iloc[0]
    assert row["status"] == "ok" and row["stop_reason"] == "client_done"
    assert row["prov.config"] == "kvs_default" and row["prov.engine.sha256"] == prov["engine"]["sha256"]
    assert row["stat.client.requests"] == 3000


def test_every_detailed_summary_has_power_and_requests_per_watt(small_run):
    out, text = small_run
    stats = json.loads((out / "stats.json").read_text())
    assert "power (runtime)" in text and "requests/s per watt" in text
    # Requests answered per joule of the measured interval: requests over (runtime power x its seconds).
    assert stats["power.requests_per_s_per_W"] == pytest.approx(
        stats["client.requests"] / (stats["power.socket.runtime_power_W"] * stats["sim_seconds"]), rel=1e-6)


def _sections(stats_txt: str) -> tuple[dict[str, float], dict[str, float]]:
    """stats.txt's measured interval and whole-run sections as {name: value}."""
    interval, whole, current = {}, {}, None
    for line in stats_txt.splitlines():
        if line.startswith("---------- Begin Simulation"):
            current = interval
        elif line.startswith("---------- Begin Whole-Run"):
            current = whole
        elif line.startswith("---------- End"):
            current = None
        elif current is not None and line and not line.startswith("#"):
            name, value = line.split()[:2]
            current[name] = float(value)
    return interval, whole


def test_rates_computed_from_the_interval_dump_are_right(small_run):
    """Every figure of the first section covers one interval (since the stats reset at the measured phase), so
    rates computed from it equal the engine's own rate figures; the whole-run figures are in their own section."""
    out, _ = small_run
    text = (out / "stats.txt").read_text()
    interval, whole = _sections(text)
    config = json.loads((out / "config.json").read_text())
    assert "system.sim_ticks" in whole and "system.sim_ticks" not in interval
    assert "client.load.insts" in whole and not any(WHOLE_RUN_STATS.match(n) for n in interval)
    assert interval["sim_ticks"] == pytest.approx(interval["sim_seconds"] * 1e12, rel=1e-9)
    assert interval["sim_ticks"] < whole["system.sim_ticks"], "the interval is shorter than the run"
    assert interval["sim_insts"] == sum(v for k, v in interval.items() if k.startswith("system.hart")
                                        and k.endswith(".insts"))
    cores = [k.split(".")[2] for k in interval if k.startswith("system.socket0.core") and k.endswith(".ipc")]
    freq = config["core"]["clock"]
    for core in cores:
        p = f"system.socket0.{core}."
        assert interval[p + "committed_insts"] / interval[p + "cycles"] == pytest.approx(interval[p + "ipc"], rel=1e-6)
        # Each core's cycles span the interval (to its last commit), at its clock.
        assert interval[p + "cycles"] / freq == pytest.approx(interval["sim_seconds"], rel=0.02)
    llc_insts = sum(interval[f"system.socket0.{c}.committed_insts"] for c in cores)
    assert 1000 * interval["system.socket0.llc.misses"] / llc_insts == pytest.approx(
        interval["system.socket0.llc.mpki"], rel=1e-6)
    assert interval["client.requests"] / (interval["client.measured_ns"] * 1e-9) == pytest.approx(
        interval["client.throughput_mrps"] * 1e6, rel=1e-6)
    # Requests over the interval's own time: the measured window is the interval (within its edges).
    assert interval["client.requests"] / interval["sim_seconds"] == pytest.approx(
        interval["client.throughput_mrps"] * 1e6, rel=0.05)
    # Before: instructions over system.sim_ticks (the whole run) understated the rate by the load's share.
    assert interval["sim_insts"] / interval["sim_seconds"] > 1.5 * interval["sim_insts"] / (
        whole["system.sim_ticks"] * 1e-12)


def test_descriptions_carry_units(small_run):
    out, _ = small_run
    text = (out / "stats.txt").read_text()
    for name, unit in (("sim_seconds", "(s)"), ("sim_ticks", "(ps)"), ("client.throughput_mrps", "M requests/s"),
                       ("system.socket0.core0.ipc", "instructions/cycle"), ("system.hart0.insts", "(count)"),
                       ("client.latency.p95", "(ns)")):
        line = next(x for x in text.splitlines() if x.startswith(name + " "))
        assert unit in line.split("#", 1)[1], line
    assert unit_of("system.socket0.llc.miss_rate", 0.5) == "fraction"
    assert unit_of("system.nic0.queue0.rx_batch_mean", 9.0) is None


# --------------------------------------------------------------------------------- unfinished runs, load_runs
def test_an_interrupted_run_is_flagged_and_left_out(tmp_path, small_run, workloads_built):
    out = tmp_path / "spin"
    proc = subprocess.Popen([*KVSIM, "run", "functional_default", "--set",
                             f"workload.binary={BUILD / 'glibc' / 'spin'}", "--set", 'workload.argv=["100000000000"]',
                             "--progress-every", "0", "--outdir", str(out)], stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, cwd=ROOT, preexec_fn=sigint_default)
    try:
        deadline = time.monotonic() + 60
        while not (out / "provenance.json").exists() and time.monotonic() < deadline:
            time.sleep(0.05)
        time.sleep(1.0)
        proc.send_signal(signal.SIGINT)
        proc.communicate(timeout=30)
    finally:
        proc.kill()
    assert proc.returncode == 130
    assert json.loads((out / "provenance.json").read_text())["status"].startswith("interrupted")
    good, _ = small_run
    table = load_runs([good, out])
    assert list(table.run) == [good.name], "an interrupted run is not a result"
    table = load_runs([good, out], include_unfinished=True)
    assert list(table.status) == ["ok", "interrupted"]


def test_a_folder_without_statistics_warns_instead_of_aborting(tmp_path, small_run):
    good, _ = small_run
    broken = tmp_path / "broken"
    broken.mkdir()
    (broken / "config.json").write_text("{}")
    (broken / "status").write_text("running\n")
    with pytest.warns(UnreadableRunWarning, match="no stats.json"):
        table = load_runs([good, broken])
    assert list(table.run) == [good.name]
    with pytest.warns(UnreadableRunWarning):
        table = load_runs([good, broken], include_unfinished=True)
    assert list(table.status) == ["ok", "running"]


def test_load_runs_takes_a_folder_of_runs(tmp_path):
    for name, status in (("a", "ok: exit"), ("b", "failed: MemoryFault: x")):
        (tmp_path / name).mkdir()
        (tmp_path / name / "config.json").write_text('{"harts": 1}')
        (tmp_path / name / "stats.json").write_text('{"system.insts": 5}')
        (tmp_path / name / "status").write_text(status + "\n")
    assert list(load_runs(tmp_path).run) == ["a"]
    assert list(load_runs(tmp_path, include_unfinished=True).status) == ["ok", "failed"]


# ------------------------------------------------------------------------------------------ warm-up, progress
def test_a_restored_run_warms_up_sized_to_the_run():
    import configs

    system = configs.load("kvs_default").system()
    system.client.items = 4096
    assert sized_warmup_requests(system) == 4096
    system.client.items = 1 << 20
    assert sized_warmup_requests(system) == 400_000
    system, _, warmup_set = run_cli.build_system("kvs_default", [], ["client.warmup_requests=10"])
    assert warmup_set and system.client.warmup_requests == 10


def test_progress_line_shows_requests_answered_and_an_eta():
    line = run_cli.ProgressLine("x", max_insts=0, requests=1000)
    line(10, 0, "fast-forward", 0)
    assert "ETA" not in line.text.plain
    line(20, 0, "detailed", 100)
    line.started -= 10            # ten host seconds later, half the measured requests answered
    line(30, 5, "detailed", 550)
    assert "550 of 1,000 requests answered" in line.text.plain and "ETA" in line.text.plain
    line = run_cli.ProgressLine("y", max_insts=1000)
    line.started -= 4
    line(500, 0, "functional")
    assert "ETA 4s" in line.text.plain
    assert run_cli.eta_text(1, 4, 60) == ", ETA 3m00s"


def test_kvsim_run_sizes_a_restored_runs_warm_up_and_says_so(tmp_path, engine):
    ckpt = tmp_path / "ckpt"
    small = ["--set", "client.requests=500", "--set", "client.items=4096"]
    made = kvsim_cmd("run", "kvs_default", *small, "--set", f"checkpoint_to={ckpt}", "--outdir", str(tmp_path / "a"))
    assert made.returncode == 0, made.stdout + made.stderr
    restored = kvsim_cmd("run", "kvs_default", *small, "--set", f"restore_from={ckpt}", "--outdir",
                         str(tmp_path / "b"))
    assert restored.returncode == 0, restored.stdout + restored.stderr
    assert "warm-up after restore" in restored.stdout and "4,096 requests (sized to the run" in restored.stdout
    config = json.loads((tmp_path / "b" / "config.json").read_text())
    assert config["client"]["warmup_requests"] == 4096
    told = kvsim_cmd("run", "kvs_default", *small, "--set", f"restore_from={ckpt}", "--set",
                     "client.warmup_requests=1000", "--outdir", str(tmp_path / "c"))
    assert told.returncode == 0 and "1,000 requests" in told.stdout and "sized to the run" not in told.stdout
    assert json.loads((tmp_path / "c" / "config.json").read_text())["client"]["warmup_requests"] == 1000


def test_an_unknown_study_gets_did_you_mean():
    out = kvsim_cmd("figures", "--study", "lcc")
    assert out.returncode == 2 and "did you mean 'llc'" in out.stderr
    out = kvsim_cmd("sweep", "--study", "core_wieght")
    assert out.returncode == 2 and "did you mean 'core_weight'" in out.stderr


def test_a_multi_socket_summary_has_the_systems_power_and_requests_per_watt():
    stats = {"client.requests": 10.0, "client.hits": 9.0, "client.misses": 0.0, "client.insts_per_request": 5.0,
             "client.throughput_mrps": 1.0, "power.system.runtime_power_W": 100.0, "power.system.peak_power_W": 300.0,
             "power.energy_per_request_J": 1e-6, "power.requests_per_s_per_W": 1e6}
    rows = dict(run_cli.kvs_summary(stats))
    assert rows["power (runtime)"].startswith("100.00 W (peak 300.0 W)") and "whole system" in rows["power (runtime)"]
    assert rows["requests/s per watt"].startswith("1,000,000")


def test_an_open_loop_runs_eta_comes_from_its_simulated_window():
    import configs

    system = configs.load("brps_target_socket").system(cores=4, requests=12000, offered_mpps=10.0)
    ports = sum(n.ports for n in system.active_nics())
    assert run_cli.open_loop_window_ps(system) == round(12000 / (10e6 * ports) * 1e12)
    system.client.offered_mpps = 0.0
    assert run_cli.open_loop_window_ps(system) == 0, "closed loop: no window known in advance"
    line = run_cli.ProgressLine("x", max_insts=0, window_ps=1_000_000)
    line(10, 500_000, "warming")
    assert "ETA" not in line.text.plain
    line(20, 500_000, "detailed")
    line.started -= 3                 # three host seconds for a quarter of the window
    line(30, 750_000, "detailed")
    assert "ETA 9s" in line.text.plain


def test_the_engine_reports_requests_answered_to_a_four_argument_progress_callback():
    """The engine's progress reports carry the measured requests answered so far (what the progress line shows);
    a three-argument callback, the API before that, still works."""
    import configs
    from models.sim import simulate

    def small():
        system = configs.load("kvs_default").system()
        system.client.requests, system.client.items = 2000, 2048
        return system

    seen: list[tuple[str, int | None]] = []
    result = simulate(small(), progress=lambda i, t, phase, answered: seen.append((phase, answered)),
                      progress_every=20_000)
    answered = [a for phase, a in seen if phase == "detailed"]
    assert answered and all(a is not None for a in answered)
    assert answered == sorted(answered) and 0 < answered[-1] <= result.stats["client.requests"] == 2000
    three: list[int] = []
    simulate(small(), progress=lambda i, t, phase: three.append(i), progress_every=200_000)
    assert three == sorted(three) and three
