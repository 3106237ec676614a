"""sim-scripts/fs_capacity.py's search: a first probe that sustains is raised until it loses frames, so a core
faster than the assumed first probe (an A15 in SE mode) still gets its capacity, and a server that never loses
frames is an error rather than a capacity."""
from drivers import capacity as cap
from drivers import sim_script


def load_script():
    return sim_script.load("fs_capacity")


def server(capacity_mpps: float):
    """A fake server that answers up to its capacity and drops the rest."""
    offered = []

    def evaluate(rate: float) -> cap.Outcome:
        offered.append(rate)
        return cap.Outcome(loss=max(0.0, 1 - capacity_mpps / rate), answered_mpps=min(rate, capacity_mpps))
    return evaluate, offered


def test_a_capacity_above_the_first_probe_is_found_by_raising_it():
    fsc = load_script()
    evaluate, offered = server(3.0)          # above 0.5 and 2.0 Mpps per hart: two raises
    res = fsc.search_from_above(evaluate, 1, 0.05, None)
    assert offered[:2] == [0.5, 0.5 * fsc.RAISE_HIGH]
    assert res.best is not None and not res.line_limited
    assert 3.0 / 1.05 <= res.best.offered_mpps <= 3.0
    assert len(res.probes) == len(offered)       # the table's probe count includes the raised first probes


def test_a_capacity_below_the_first_probe_needs_no_raise():
    fsc = load_script()
    evaluate, offered = server(0.03)
    res = fsc.search_from_above(evaluate, 2, 0.05, None)
    assert offered[0] == 1.0 and max(offered) == 1.0
    assert 0.03 / 1.05 <= res.best.offered_mpps <= 0.03


def test_a_server_that_never_loses_frames_stays_line_limited():
    fsc = load_script()
    evaluate, offered = server(1e9)
    res = fsc.search_from_above(evaluate, 1, 0.05, None)
    assert res.line_limited
    assert len(offered) == fsc.MAX_RAISES + 1
    assert len(res.probes) == len(offered)       # the raised first probes are in the record too
