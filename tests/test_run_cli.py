"""`kvsim run` (drivers/cli/run.py; sim-scripts/run.py wraps it), the command `make run` uses: it runs a config, writes the run folder and prints the summary;
bad input is reported by name with exit status 2, not a traceback."""

import json
import pathlib
import subprocess
import sys

import pytest

ROOT = pathlib.Path(__file__).resolve().parent.parent
RUN = [sys.executable, "-m", "drivers.cli.run"]   # from ROOT: this checkout's code


def run(*args, cwd=ROOT):
    return subprocess.run([*RUN, *args], capture_output=True, text=True, cwd=cwd, timeout=300)


def test_default_kvs_run_writes_outputs_and_summary(engine, tmp_path):
    out = run("kvs_default", "--set", "client.requests=3000", "--set", "client.items=4096", "--outdir", str(tmp_path))
    assert out.returncode == 0, out.stdout + out.stderr
    assert "client_done" in out.stdout and "requests checked" in out.stdout
    stats = json.loads((tmp_path / "stats.json").read_text())
    assert stats["client.requests"] == 3000 and stats["client.misses"] == 0
    config = json.loads((tmp_path / "config.json").read_text())
    assert config["client"]["requests"] == 3000 and config["mode"] == "detailed"
    assert config["memory"]["t_cl"] > 0, "DRAM timings must be resolved in config.json"
    assert "Begin Simulation Statistics" in (tmp_path / "stats.txt").read_text()


def test_bad_parameter_is_named_with_its_range(tmp_path):
    out = run("functional_default", "--set", "harts=0", "--outdir", str(tmp_path))
    assert out.returncode == 2
    assert "System.harts = 0" in out.stdout and "[1, 4096]" in out.stdout
    assert "Traceback" not in out.stdout + out.stderr


def test_every_config_builds_a_valid_system():
    listing = run("--list")
    assert listing.returncode == 0
    import configs
    for name in configs.available():
        assert name in listing.stdout
        configs.load(name).system().validate()


def test_power_option_prices_a_detailed_run(engine, tmp_path):
    out = run("kvs_default", "--set", "client.requests=2000", "--set", "client.items=4096", "--set", "harts=2",
              "--power", "--outdir", str(tmp_path))
    assert out.returncode == 0, out.stdout + out.stderr
    stats = json.loads((tmp_path / "stats.json").read_text())
    assert 0 < stats["power.socket.runtime_power_W"] < stats["power.socket.peak_power_W"]
    # Energy per request is the run's runtime power over its measured time, per answered request.
    expected = stats["power.socket.runtime_power_W"] * stats["sim_seconds"] / stats["client.requests"]
    assert stats["power.energy_per_request_J"] == pytest.approx(expected, rel=1e-9)
    assert "power (runtime)" in out.stdout


def test_power_option_refuses_a_functional_run(tmp_path):
    out = run("functional_default", "--power", "--outdir", str(tmp_path))
    assert out.returncode == 2 and "needs a detailed run" in out.stdout
    assert not (tmp_path / "stats.json").exists(), "the check must come before the run"


def test_summary_covers_every_socket():
    """The summary's IPC and MPKI rows take every socket's cores and LLC, not only socket 0's."""
    from drivers.cli import run as run_script

    stats = {"client.requests": 10.0, "client.hits": 10.0, "client.misses": 0.0, "client.insts_per_request": 500.0,
             "system.socket0.core0.ipc": 1.0, "system.socket0.core1.ipc": 2.0, "system.socket0.llc.mpki": 1.0,
             "system.socket1.core0.ipc": 3.0, "system.socket1.core1.ipc": 6.0, "system.socket1.llc.mpki": 3.0}
    rows = dict(run_script.kvs_summary(stats))
    assert rows["IPC (mean of cores)"] == "3.000"
    assert rows["LLC MPKI (mean of 2 sockets)"] == "2.00"
    del stats["system.socket1.llc.mpki"], stats["system.socket1.core0.ipc"], stats["system.socket1.core1.ipc"]
    rows = dict(run_script.kvs_summary(stats))
    assert rows["IPC (mean of cores)"] == "1.500" and rows["LLC MPKI"] == "1.00"
