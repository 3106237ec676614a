"""The parts a McPAT-class model leaves out of a measured socket (power.unmodelled): each sized from its cause."""

import dataclasses
import math
import warnings

import pytest

import power
from power import links, mcpat_xml, platforms, unmodelled
from power.model import Model


@pytest.fixture(scope="module")
def xeon_result():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        p, a = mcpat_xml.read(mcpat_xml.to_xml(platforms.xeon_e5_2697v2_socket()))
    return power.build(p, a).evaluate()


def _part(parts, words):
    return next(p for p in parts if words in p.name)


def test_parts_start_from_the_model_and_each_adds_power(xeon_result):
    parts = unmodelled.parts(xeon_result)
    assert parts[0].watts == pytest.approx(float(xeon_result.die.runtime_dynamic_W + xeon_result.die.leakage_W))
    # the XML's counts are zero: no memory traffic, so no DDR I/O; polling cores add nothing the run does not
    # price; the junction may cool or heat the die; every other part adds power
    assert _part(parts, "DDR I/O").watts == 0.0
    assert _part(parts, "polling cores").watts == 0.0
    # the cores' supply is the node's V-f law at the turbo bin, which the turbo part already prices: zero
    assert _part(parts, "cores at").watts == 0.0
    signed = ("DDR I/O", "polling cores", "junction at", "cores at")
    assert all(p.watts > 0 for p in parts if not any(w in p.name for w in signed))
    assert _part(parts, "voltage-regulator").assumed and not _part(parts, "junction at").assumed


def test_clock_distribution_is_its_published_share_of_the_chip(xeon_result):
    parts = unmodelled.parts(xeon_result)
    k = parts.index(_part(parts, "clock distribution"))
    before = sum(p.watts for p in parts[:k])
    assert parts[k].watts / (before + parts[k].watts) == pytest.approx(unmodelled.CLOCK_SHARE)


def test_qpi_is_two_link_ends_of_qpi_1_1():
    per_link = 2 * links.QPI_LANES * links.QPI_RATE_GT * 1e9 * links.ENERGY_PER_BIT_J
    parts = unmodelled.parts(power.build(platforms.xeon_e5_2697v2_socket()).evaluate())
    assert _part(parts, "QPI").watts == pytest.approx(2 * per_link / 2)


def test_regulator_losses_are_the_power_before_them_at_the_assumed_efficiency(xeon_result):
    parts = unmodelled.parts(xeon_result)
    k = parts.index(_part(parts, "voltage-regulator"))
    before = sum(p.watts for p in parts[:k])
    assert parts[k].watts == pytest.approx(before * (1 / unmodelled.VR_EFFICIENCY - 1))


def test_uncore_at_the_core_supply_raises_only_the_uncore(xeon_result):
    parts = unmodelled.parts(xeon_result)
    uncore = _part(parts, "LLC, directories and ring")
    m = xeon_result.model
    at = dict(core_vdd=unmodelled.ASSUMED_CORE_VDD, core_MHz=3000.0)
    s_nom, s_up = m.evaluate(**at).structures, m.evaluate(**at, uncore_vdd=unmodelled.ASSUMED_CORE_VDD).structures
    core = s_nom["class"] == "cores"
    assert (s_up.loc[core, "leakage_W"] == s_nom.loc[core, "leakage_W"]).all()
    assert uncore.watts > 0 and uncore.assumed


def test_ddr_io_is_the_run_s_bits_at_the_dram_s_energy_per_bit():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        p, a = mcpat_xml.read(mcpat_xml.to_xml(platforms.xeon_e5_2697v2_socket()))
    a.dram.reads, a.dram.writes = 1.0e6, 2.0e5
    r = power.build(p, a).evaluate()
    bits = 1.2e6 * p.dram.devices_per_rank * p.dram.device.burst * p.dram.device.width_bits
    want = bits * p.dram.device.io_pj_per_bit * 1e-12 / a.seconds
    assert _part(unmodelled.parts(r), "DDR I/O").watts == pytest.approx(want)


def test_junction_solves_the_thermal_profile_with_the_socket_s_own_power(xeon_result):
    parts = unmodelled.parts(xeon_result)
    k = parts.index(_part(parts, "junction at"))
    t_la, psi, _ = unmodelled.THERMAL_PROFILE["xeon-e5-2697v2"]
    package_W = sum(p.watts for p in parts[:k + 1] if p.in_total)     # before the regulators: on the package
    Tj = float(parts[k].name.split("junction at ")[1].split(" K")[0])
    assert Tj == pytest.approx(t_la + 273.15 + psi * package_W, abs=0.06)
    m = xeon_result.model
    from power.dvfs import vf_curve
    v = vf_curve(m.tech).voltage(3000.0)
    at = dict(core_vdd=v, core_MHz=3000.0, uncore_vdd=v)
    want = float(m.evaluate(**at, temperature_K=Tj).die.leakage_W
                 - m.evaluate(**at, temperature_K=m.tech.temperature_K).die.leakage_W)
    assert parts[k].watts == pytest.approx(want, rel=0.02, abs=0.05)


def test_junction_fixed_point_and_runaway():
    # P(T) = a + b T: T = (Ta + psi a) / (1 - psi b), loop gain psi b
    a, b, Ta, psi = 20.0, 0.5, 330.0, 0.3
    j = unmodelled.solve_junction(lambda t: a + b * t, Ta, psi)
    assert j.T_K == pytest.approx((Ta + psi * a) / (1 - psi * b), abs=1e-6)
    assert j.gain == pytest.approx(psi * b, rel=1e-6)
    with pytest.raises(unmodelled.ThermalRunaway, match="thermal runaway"):
        unmodelled.solve_junction(lambda t: a + 4.0 * t, Ta, psi)


def _fold(c):
    """P(T) = c + exp((T - 300) / 10): the loop T = 300 + 0.1 P(T) folds (gain 1) at T = 300 + 10 ln 100, where
    P = c + 100; it has a steady junction for c <= c* = 100 ln 100 - 100 ~= 360.5 and none above."""
    return lambda t: c + math.exp((t - 300.0) / 10.0)


def test_a_junction_near_the_fold_is_the_fixed_point_not_where_the_iteration_slowed():
    """Iterating T <- Ta + psi P(T) until a step is below 0.01 K stops where the steps shrink, not where the
    map has a fixed point: near a fold (gain near 1) that is kelvins short of it (session 12: the Xeon's socket 0
    moved 360.4 -> 371.3 K for a 0.3 W change)."""
    c_star = 100 * math.log(100) - 100
    j = unmodelled.solve_junction(_fold(c_star - 0.01), 300.0, 0.1)
    assert 300.0 + 0.1 * _fold(c_star - 0.01)(j.T_K) - j.T_K == pytest.approx(0.0, abs=1e-6)
    assert 0.95 < j.gain < 1.0
    # just past the fold no junction exists: an error naming the runaway, not a figure
    with pytest.raises(unmodelled.ThermalRunaway, match="no steady junction"):
        unmodelled.solve_junction(_fold(c_star + 0.01), 300.0, 0.1)


def _with_extra_W(monkeypatch, watts):
    """The Xeon's power before the thermal loop raised by ``watts`` (through the one run-driven part the XML
    fixture has at zero, the DDR I/O)."""
    monkeypatch.setattr(unmodelled, "_ddr_io_W", lambda model: watts)


def _loop_inputs(parts):
    """(the package's power before the loop, the junction, its loop gain) from a socket's parts."""
    k = parts.index(_part(parts, "junction at"))
    name = parts[k].name
    return (sum(p.watts for p in parts[:k] if p.in_total), float(name.split("junction at ")[1].split(" K")[0]),
            float(name.split("loop gain ")[1].split(":")[0]))


def test_a_small_change_before_the_loop_moves_the_xeon_s_junction_by_a_bounded_amount(xeon_result, monkeypatch):
    """Over the whole range up to where the all-core turbo bin runs away, 0.25 W more before the loop moves the
    junction by psi x that / (1 - gain), the gain named in the part: never a jump. With the Ioff table log-linear
    between its 10 K steps the loop's slope jumped at 370 K (gain 1.13 just below, 0.82 just above) and the
    junction jumped onto a second branch a few kelvin up (session 12: 360.4 -> 371.3 K, +29 W of leakage)."""
    psi = unmodelled.THERMAL_PROFILE["xeon-e5-2697v2"][1]
    prev = None
    steps = 0
    for i in range(171):                                 # 0 to 42.5 W: the 3.0 GHz bin's whole range here
        _with_extra_W(monkeypatch, 0.25 * i)
        parts = unmodelled.parts(xeon_result)
        assert "3000 MHz" in _part(parts, "all-core turbo").name
        now = _loop_inputs(parts)
        if prev is not None:
            d_before, d_T = now[0] - prev[0], now[1] - prev[1]
            gain = max(now[2], prev[2]) + 0.005                # as printed: K to 0.1, gain to 0.01
            assert 0 <= d_T <= 1.05 * psi * d_before / (1 - gain) + 0.1, (i, d_T)
            steps += 1
        prev = now
    assert steps == 170 and prev[2] < 1.0


def test_a_socket_past_the_profile_s_maximum_lowers_its_turbo_bin_then_runs_away(xeon_result, monkeypatch):
    """Turbo Boost holds the package within its limits (the 1U profile's maximum, 98.1 C, is its TDP): a socket
    whose all-core turbo bin has no steady junction there takes a lower bin, and one with none even at the base
    clock is a thermal runaway. Before, any fixed point up to 450 K was priced: a junction above the part's
    maximum and a package above its TDP."""
    t_la, psi, t_max = unmodelled.THERMAL_PROFILE["xeon-e5-2697v2"]
    lowered = False
    for extra in (58.0, 63.0, 66.0):        # the 3.0, 2.9 and 2.8 GHz bins at the node's V-f law
        _with_extra_W(monkeypatch, extra)
        parts = unmodelled.parts(xeon_result)
        before, T, gain = _loop_inputs(parts)
        assert T <= t_max + 273.15 and gain < 1.0
        package_W = sum(p.watts for p in parts if p.in_total and "regulator" not in p.name)
        assert package_W <= (t_max - t_la) / psi + 1e-6             # within the TDP
        lowered |= any("have no steady junction" in p.name for p in parts)
    assert lowered
    _with_extra_W(monkeypatch, 70.0)
    with pytest.raises(unmodelled.ThermalRunaway, match="no turbo bin down to the base clock"):
        unmodelled.parts(xeon_result)


def test_beside_the_total_parts_are_sized_not_added(xeon_result):
    parts = unmodelled.parts(xeon_result)
    short = _part(parts, "published shortfall")
    assert not short.in_total
    assert short.watts == pytest.approx(parts[0].watts * (1 / (1 - unmodelled.MCPAT_PUBLISHED_SHORTFALL) - 1))
    # the die beyond the structures is in the model's die now (power.die), not beside it; the XML read back has none
    assert not any("does not price" in p.name or "die beyond" in p.name for p in parts)


def test_the_nic_cards_are_priced_as_built_beside_the_traffic_driven_chips(xeon_result):
    """A socket's two X520-QDA1 cards, part by part: two 82599s, a PCIe switch and a QSFP+ module a card, the chips
    through the cards' regulators; the model's traffic-driven NIC chips beside the total (a part of the controllers'
    typical figure). Before, the NIC total was the run's controllers at 4.5 W and nothing else."""
    nic = unmodelled.nic_parts(xeon_result)
    assert xeon_result.model.platform.nic.count == 4          # two cards a socket, two 82599s each
    model = nic[0]
    assert "traffic-driven" in model.name and not model.in_total and model.watts > 0
    card = unmodelled.NIC_CARDS["xeon-e5-2697v2"]
    assert (card.name, card.controllers, card.per_socket, card.qsfp_cages) == ("X520-QDA1", 2, 2, 1)
    ctrl, switch, vr, qsfp = (_part(nic, w) for w in ("82599 controllers", "PCIe switches", "regulators", "QSFP+"))
    assert ctrl.watts == pytest.approx(4 * unmodelled.NIC_CONTROLLER_TYPICAL_W["82599"]) and ctrl.assumed
    assert switch.watts == pytest.approx(2 * unmodelled.PCIE_SWITCH_TYPICAL_W["24-lane PCIe switch"])
    assert switch.watts == pytest.approx(2 * 1.9)              # PLX PEX 8624's published typical power
    assert vr.watts == pytest.approx((ctrl.watts + switch.watts) * (1 / unmodelled.VR_EFFICIENCY - 1))
    assert qsfp.watts == pytest.approx(2 * unmodelled.ASSUMED_QSFP_MODULE_W) and qsfp.assumed
    assert unmodelled.nic_cards_W(xeon_result) == pytest.approx(ctrl.watts + switch.watts + vr.watts + qsfp.watts)
    assert all(p.in_total for p in nic[1:])


def test_the_nic_cards_do_not_follow_the_runs_ports(xeon_result, monkeypatch):
    """The cards are in the server whatever ports a run uses: a socket with one NIC controller configured prices
    the same two cards; a platform with no card table has the model's chips as its NIC total."""
    import dataclasses

    one = dataclasses.replace(xeon_result.model.platform, nic=dataclasses.replace(xeon_result.model.platform.nic,
                                                                                  count=1))
    monkeypatch.setattr(xeon_result.model, "platform", one)
    assert unmodelled.nic_cards_W(xeon_result) == pytest.approx(2 * (
        (2 * 4.5 + 1.9) / unmodelled.VR_EFFICIENCY + unmodelled.ASSUMED_QSFP_MODULE_W))
    monkeypatch.setattr(xeon_result.model, "platform", dataclasses.replace(one, part="another-part"))
    only = unmodelled.nic_parts(xeon_result)
    assert len(only) == 1 and only[0].in_total
    assert unmodelled.nic_cards_W(xeon_result) == pytest.approx(only[0].watts)


def test_turbo_raises_the_cores_clock_and_supply(xeon_result):
    turbo = unmodelled.parts(xeon_result)[1]
    assert "3000 MHz" in turbo.name and not turbo.assumed


def test_every_socket_of_the_dual_xeon_takes_the_product_s_published_figures():
    """The second socket's platform is named with its index ("xeon-e5-2697v2 socket1"); looked up by that name it
    had no turbo bins, QPI links, thermal profile or published die, and the dual server's CPUs came to 214.0 W where its
    sockets priced alike give 220.8 W (4 Mi items, 130.6 M requests/s)."""
    import configs
    from power.from_config import platforms_from_config

    cfg = configs.load("xeon_e5_2697v2_dual").system(cores_per_socket=2).to_dict()
    names = []
    for p in platforms_from_config(cfg):
        assert p.part == "xeon-e5-2697v2"
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            parts = unmodelled.parts(power.build(p).evaluate())
        names.append([q.name.split(" ")[0] for q in parts])
        assert _part(parts, "all-core turbo").watts > 0
        assert _part(parts, "2 QPI").watts > 0
        assert _part(parts, "junction at")
        assert _part(parts, "the die beyond McPAT's structures").watts > 0
    assert names[0] == names[1]


def test_the_run_report_shows_a_runaway_socket_s_demand_and_names_the_runaway(xeon_result, monkeypatch, tmp_path):
    """A socket with no steady junction is reported as its demand at the profile's maximum, marked, with why,
    beside the package limit; before session 15 the report exited without a table."""
    import io

    from rich.console import Console

    from drivers.cli import power_report
    (tmp_path / "stats.json").write_text("{}")
    (tmp_path / "config.json").write_text("{}")
    monkeypatch.setattr(power, "price_run", lambda stats, config: xeon_result)
    _with_extra_W(monkeypatch, 70.0)
    out = io.StringIO()
    power_report.run_report(Console(file=out, width=400), str(tmp_path))
    text = out.getvalue()
    assert "NO STEADY JUNCTION" in text and "socket 0: xeon-e5-2697v2: no turbo bin down to the base clock" in text
    assert "junction held at the profile's maximum" in text and "package limit: the thermal profile removes 130.0 W" in text
    assert "sensitivity (a report, not the model)" in text and "1.000" in text and "the node's V-f law" in text
    assert "held at the package limit W" in text


def _turbo_level(result, turbo_counted):
    """The die's power at the all-core turbo bin (3.0 GHz at the node's V-f law), each core structure's counted
    events' power (runtime less clocking) taken ``turbo_counted`` times, everything else as evaluated there."""
    from power.dvfs import vf_curve
    m = result.model
    v = vf_curve(m.tech).voltage(3000.0)
    s = m.evaluate(core_vdd=v, core_MHz=3000.0).structures
    core = [x.domain == "core" for x in m.structs]
    dyn = [c + (r - c) * turbo_counted if k else r for k, r, c in zip(core, s.runtime_dynamic_W, s.clock_W)]
    return sum(d + leak for d, leak, on in zip(dyn, s.leakage_W, s.on_die) if on)


def test_turbo_prices_the_clocking_once_at_the_turbo_clock(xeon_result):
    """With no counted events (the XML's zero counts) the turbo part is the die evaluated at the turbo bin less the
    die at the base clock, exactly: its clocking is already at 3.0 GHz in the evaluation. Until session 27 it was
    scaled by the clock ratio again (3.0 / 2.7), counting the ratio twice (+0.13 W a socket here)."""
    parts = unmodelled.parts(xeon_result)
    assert sum(xeon_result.structures.clock_W) > 0
    expected = _turbo_level(xeon_result, 0.0) - unmodelled._die_W(xeon_result)
    assert _part(parts, "all-core turbo").watts == pytest.approx(expected, rel=1e-9)


def test_turbo_scales_counted_power_above_a_structure_s_peak_uncapped(xeon_result):
    """A core structure whose counted power is above its peak (McPAT's thermal-design access rate, not a maximum:
    power.model prices counts uncapped, as McPAT does) keeps it at turbo, scaled by the clock ratio. Until session
    27 the turbo part capped every core structure at its peak there, left from before the cap was taken out of the
    model's own pricing (f7aaf40); on the 24-core Xeon run it cut the CPUs' figure (issue 23)."""
    m = xeon_result.model
    k = next(i for i, x in enumerate(m.structs) if x.path == "core.ifu.icache")
    peak = float(xeon_result.structures.peak_dynamic_W.iloc[k])
    structs = list(m.structs)
    v = float(xeon_result.core_vdd[0])
    # counted events worth 3x the structure's peak over the interval, on every core
    joules_per_core = 3.0 * peak * m.activity.seconds / m.platform.cores
    structs[k] = dataclasses.replace(structs[k], runtime_c=[joules_per_core / v ** 2] * m.platform.cores)
    model = Model(m.platform, m.activity, m.tech, structs)
    r = model.evaluate(core_vdd=xeon_result.core_vdd, core_MHz=xeon_result.core_MHz)
    assert r.structures.runtime_dynamic_W.iloc[k] > 2.9 * peak
    expected = _turbo_level(r, 3000.0 / 2700.0) - unmodelled._die_W(r)
    assert _part(unmodelled.parts(r), "all-core turbo").watts == pytest.approx(expected, rel=1e-9)


def test_thermal_headroom_is_where_the_turbo_bin_loses_its_steady_junction(xeon_result):
    """The watts before the loop that the all-core turbo bin takes before it has no steady junction (session 27: the
    24-core Xeon row sat 1.88 W a socket below its fold): just below the headroom the 3.0 GHz bin holds, just above
    it the bin drops."""
    head, total = unmodelled.thermal_headroom(xeon_result, tol_W=0.01)
    assert head > 1.0
    below = unmodelled.parts(xeon_result, probe_W=head - 0.02)
    above = unmodelled.parts(xeon_result, probe_W=head + 0.02)
    assert "3000 MHz" in _part(below, "all-core turbo").name
    assert not any(p.name.startswith("all-core turbo 3000") for p in above)
    assert total == pytest.approx(sum(p.watts for p in unmodelled.parts(xeon_result, probe_W=head) if p.in_total))
    probe = _part(below, "probe")
    assert probe.watts == pytest.approx(head - 0.02) and probe.in_total


def test_no_thermal_headroom_without_a_thermal_profile(xeon_result, monkeypatch):
    monkeypatch.setattr(unmodelled, "THERMAL_PROFILE", {})
    assert unmodelled.thermal_headroom(xeon_result) is None
