"""sim-scripts/xeon_write_offset.py: which kind of missing memory writer the two published write points allow."""

from __future__ import annotations

import pytest

from drivers.cli import xeon_write_offset as wo
from drivers.cli.validate_xeon import PUBLISHED


def _gbs(cores: int) -> float:
    return PUBLISHED[cores]["mem_write_gbs"] * 1e9


def test_a_writer_sized_at_one_point_meets_that_point_exactly():
    w = {4: 5.0, 24: 23.0}
    for kind in wo.KINDS:
        amount = wo.size_from(kind, 4, w[4])
        assert wo.predict(kind, amount, 4, w[4]) == pytest.approx(_gbs(4))


def test_kinds_scale_with_requests_ports_cores_or_nothing():
    """A per-machine rate is the same at both points; a per-port one grows 6x (2 -> 12 ports); a per-request one with
    the throughput. With a model that writes nothing (w = 0), the 24-core prediction shows the scaling alone."""
    zero = {4: 0.0, 24: 0.0}
    machine = wo.predict("machine", wo.size_from("machine", 4, 0.0), 24, zero[24])
    port = wo.predict("port", wo.size_from("port", 4, 0.0), 24, zero[24])
    core = wo.predict("core", wo.size_from("core", 4, 0.0), 24, zero[24])
    request = wo.predict("request", wo.size_from("request", 4, 0.0), 24, zero[24])
    assert machine == pytest.approx(_gbs(4))
    assert port == pytest.approx(6 * _gbs(4)) and core == pytest.approx(6 * _gbs(4))
    assert request == pytest.approx(_gbs(4) * 120.5 / 23.33)


def test_both_points_at_once_recover_a_planted_writer():
    """The joint solution (a per-request cost a and a machine rate b) meets both published points exactly; and a
    model written as the published points less a planted a and b gets them back."""
    w = {4: 5.632, 24: 23.229}
    a, b = wo.joint(w)
    for cores in (4, 24):
        x = PUBLISHED[cores]["throughput_mrps"] * 1e6
        assert x * (w[cores] + a) + b == pytest.approx(_gbs(cores))
    planted_a, planted_b = 1.5, 0.07e9
    built = {c: (_gbs(c) - planted_b) / (PUBLISHED[c]["throughput_mrps"] * 1e6) - planted_a for c in (4, 24)}
    assert wo.joint(built) == pytest.approx((planted_a, planted_b))


def test_the_aged_model_allows_only_a_writer_that_does_not_follow_the_load():
    """The committed 192 Mi figures with the log's aging (results/validation/xeon_memory_writes_4c_s21.txt): a per-machine
    writer sized at 4 cores meets 24 cores within 10%; per request, port or core does not."""
    w = wo.model_bytes({4: 5.114, 24: 26.685}, {4: 0.518, 24: -3.456})
    errors = {k: wo.predict(k, wo.size_from(k, 4, w[4]), 24, w[24]) / _gbs(24) - 1 for k in wo.KINDS}
    assert abs(errors["machine"]) < 0.01 and abs(errors["socket"]) < 0.01
    assert errors["request"] > 0.10 and errors["port"] > 0.10 and errors["core"] > 0.10


@pytest.mark.parametrize("argv", [["4=5", "12=20"], ["4=5", "24"], ["4=5", "24=x"], ["4=5", "24=20", "--aging", "3=1"],
                                  ["4=5", "4=6"]])
def test_bad_points_are_refused_before_any_arithmetic(argv):
    with pytest.raises(SystemExit, match="model|aging|CORES=BYTES|published write points"):
        wo.main(argv)


def test_main_prints_every_kind(capsys):
    assert wo.main(["4=5.114", "24=26.685", "--aging", "4=0.518", "--aging", "24=-3.456"]) == 0
    out = capsys.readouterr().out
    assert out.count("ruled out") >= 3 and "fits" in out and "both points at once" in out
