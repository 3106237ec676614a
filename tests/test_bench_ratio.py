"""`make bench`'s engine/qemu ratios (drivers/cli/bench.py): a statistic of alternating pairs of runs (median with
min and max), by CPU time, which a loaded machine disturbs less, and by wall time; both sides of it are measured, not
assumed. The pairing and the statistic are checked with fake runs whose times are given."""

import pytest

from drivers.cli import bench


def test_qemu_runs_report_their_cpu_time(workloads_built):
    wall, out, code, cpu = bench.run_qemu(["1"])
    assert code == 0 and b"checksum" in out
    assert 0 < cpu <= wall * 2, "the child's user + system time, measured"


def fake_runs(name: str, cpus: list[float], log: list[str], output=(b"sum 7", 0)):
    """A runner that returns the given CPU times in turn (wall = 2 x CPU) and logs each call."""
    times = iter(cpus)

    def run() -> bench.Side:
        cpu = next(times)
        log.append(f"{name} {cpu}")
        return bench.Side(wall=2 * cpu, cpu=cpu, output=output)
    return run


def test_pairs_alternate_engine_and_qemu_and_each_ratio_compares_neighbours():
    log: list[str] = []
    done = bench.run_pairs(3, fake_runs("engine", [1.0, 2.0, 0.5], log), fake_runs("qemu", [0.25, 0.3, 0.2], log))
    assert log == ["engine 1.0", "qemu 0.25", "engine 2.0", "qemu 0.3", "engine 0.5", "qemu 0.2"]
    assert done.ratios("cpu") == pytest.approx([0.25, 0.15, 0.4])
    # the median of the per-pair ratios, not the ratio of the medians (0.25 / 1.0) nor of the best runs (0.2 / 0.5)
    assert done.summary("cpu") == pytest.approx((0.25, 0.15, 0.4))
    assert done.summary("wall") == pytest.approx((0.25, 0.15, 0.4))


def test_the_median_of_an_even_number_of_pairs_is_the_mean_of_the_middle_two():
    done = bench.run_pairs(4, fake_runs("engine", [1.0] * 4, []), fake_runs("qemu", [0.1, 0.4, 0.2, 0.3], []))
    assert done.summary("cpu") == pytest.approx((0.25, 0.1, 0.4))
    assert bench.ratio_text(done, "cpu") == "0.250, 87.5% interval for the median [0.100, 0.400] (min 0.100, max 0.400)"


def test_the_range_of_n_pairs_covers_the_median_with_the_sign_test_confidence():
    assert bench.median_interval_confidence(1) == 0.0
    assert bench.median_interval_confidence(5) == pytest.approx(0.9375)


def test_the_interval_for_the_median_is_the_narrowest_order_statistic_pair_with_90_percent_coverage():
    # 5 pairs: only [min, max] reaches 90% (93.75%); 11 pairs: the 3rd smallest and 3rd largest (1 - 2 x 67/2048).
    assert bench.median_interval([0.3, 0.1, 0.2, 0.5, 0.4]) == pytest.approx((0.1, 0.5, 0.9375))
    low, high, coverage = bench.median_interval([i / 10 for i in range(11, 0, -1)])
    assert (low, high) == pytest.approx((0.3, 0.9)) and coverage == pytest.approx(1 - 2 * 67 / 2048)
    # too few pairs for 90%: [min, max] with the coverage it has
    assert bench.median_interval([0.2, 0.1]) == pytest.approx((0.1, 0.2, 0.5))


def test_a_pair_whose_outputs_differ_stops_the_benchmark():
    log: list[str] = []
    with pytest.raises(bench.OutputsDiffer):
        bench.run_pairs(3, fake_runs("engine", [1.0, 1.0, 1.0], log),
                        fake_runs("qemu", [0.2, 0.2, 0.2], log, output=(b"sum 8", 0)))
    assert log == ["engine 1.0", "qemu 0.2"]
    with pytest.raises(ValueError, match="at least 1"):
        bench.run_pairs(0, fake_runs("engine", [], []), fake_runs("qemu", [], []))


def test_the_engine_run_is_timed_by_cpu(engine):
    from models.system import System, Workload

    result, cpu = bench.simulate_timed(System(workload=Workload(binary=str(bench.BENCH), argv=["1"])))
    assert result.exit_code == 0 and 0 < cpu < 60


def test_the_functional_benchmark_reports_the_median_of_real_pairs(workloads_built, engine, capsys):
    assert bench.main(["--rounds", "1", "--pairs", "2", "--no-detailed", "--fp-n", "20"]) == 0
    out = " ".join(capsys.readouterr().out.split())
    assert out.count("2 pairs of runs, engine and qemu alternated, all in this run") == 2
    assert out.count("median of 2 pairs: by CPU time") == 2 and "50.0% interval for the median" in out
    assert out.count("the pairs' ratios by CPU time: ") == 2
    assert bench.main(["--pairs", "0", "--no-detailed"]) == 2
