"""`make bench`'s engine/qemu ratios (drivers/cli/bench.py): besides wall time, the ratio from CPU time, which a
loaded machine disturbs less; both sides of it are measured, not assumed."""

from drivers.cli import bench


def test_qemu_runs_report_their_cpu_time(workloads_built):
    wall, out, code, cpu = bench.run_qemu(["1"])
    assert code == 0 and b"checksum" in out
    assert 0 < cpu <= wall * 2, "the child's user + system time, measured"


def test_the_cpu_ratio_uses_the_fastest_qemu_run():
    runs = [(9.0, b"", 0, 0.30), (9.0, b"", 0, 0.20), (9.0, b"", 0, 0.25)]
    assert bench.cpu_ratio_text(0.8, runs).startswith("by CPU time 0.250 ")


def test_the_engine_run_is_timed_by_cpu(engine):
    from models.system import System, Workload

    result, cpu = bench.simulate_timed(System(workload=Workload(binary=str(bench.BENCH), argv=["1"])))
    assert result.exit_code == 0 and 0 < cpu < 60
