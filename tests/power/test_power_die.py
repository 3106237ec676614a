"""The product's die beyond the structures McPAT prices (power.die): fused-off tiles, the enabled tiles' area the
structures do not measure, and the system agent and I/O, whose leakage is priced from their transistors."""

import dataclasses
import warnings

import pytest

import power
from power import die, mcpat_xml, platforms, unmodelled
from power.config import DieConfig

XEON = "xeon-e5-2697v2"


def _xeon(cores=12):
    from configs import xeon_e5_2697v2_socket as xeon
    from power.from_config import platform_from_config
    return platform_from_config(xeon.system(cores=cores).to_dict())


def _rows(result):
    s = result.structures
    return s[s["class"] == "other"].set_index("component")


def test_the_xeon_config_takes_its_published_die_and_the_model_s_die_is_the_published_area():
    """The 12-core E5-2697 v2 is the 15-core 541 mm^2 die: the model's die is that area whatever the run's cores
    (a run on fewer cores leaves the others idle in their tiles), three tiles of it gated."""
    d = die.published(XEON)
    assert (d.area_mm2, d.tiles, d.transistors) == (541.0, 15, 4.31e9)
    assert d.tile_mm2 == pytest.approx((341.0 - 257.0) / 4)                 # the 6-core chop of the 10-core die
    for cores in (1, 4, 12):
        r = power.build(_xeon(cores)).evaluate()
        assert r.area_mm2 == pytest.approx(541.0, rel=1e-12), cores
        rows = _rows(r)
        assert rows.loc["die.gated_tiles", "area_mm2"] == pytest.approx(3 * d.tile_mm2)
        assert rows.loc[["die.gated_tiles", "die.idle_cores"], "leakage_W"].sum() == 0.0
        gated = rows.loc[["die.gated_tiles", "die.idle_cores", "die.agent_and_io"]]
        assert (gated.peak_dynamic_W == 0).all() and (gated.runtime_dynamic_W == 0).all()


def test_the_agent_leaks_as_its_transistors_at_the_model_s_tile_width_per_transistor():
    """The system agent and I/O's leakage is the die's transistors beyond its tiles at the leaking width per
    transistor of the model's own tile, less what the priced uncore already leaks: so it grows by exactly one
    tile's leaking width per tile's transistors added to the die, and a die whose transistors are all in its tiles
    (nothing left for the priced uncore) is an error."""
    p = _xeon()
    d = p.die
    m = power.build(p)
    structs = [x for x in m.structs if x.cls != "other"]
    tile_um = (sum(x.block.leak_um * x.count for x in structs if x.domain == "core")
               + sum(x.block.leak_um * x.count for x in structs
                     if x.domain != "core" and x.cls in ("caches", "noc")) / 12)
    uncore_um = sum(x.block.leak_um * x.count for x in structs if x.domain != "core" and x.cls in ("mc", "io"))
    agent = next(x for x in die.parts(d, structs, p.cores, 12) if x.path == "die.agent_and_io")
    beyond = d.transistors - d.tiles * d.tile_transistors
    assert agent.leak_um == pytest.approx(beyond / d.tile_transistors * tile_um - uncore_um, rel=1e-12)
    more = dataclasses.replace(d, transistors=d.transistors + d.tile_transistors)
    added = next(x for x in die.parts(more, structs, p.cores, 12) if x.path == "die.agent_and_io").leak_um
    assert added - agent.leak_um == pytest.approx(tile_um, rel=1e-12)
    none = dataclasses.replace(d, transistors=d.tiles * d.tile_transistors)
    with pytest.raises(ValueError, match="the uncore's leaking width less the priced uncore's is negative"):
        die.parts(none, structs, p.cores, 12)
    # in watts: a tile's leakage (each tile structure at its own long-channel share, the agent at the uncore's),
    # and a small share of the die's
    s = m.evaluate().structures
    tile_W = (s.loc[s["class"] == "cores", "subthreshold_leakage_W"].sum() / p.cores
              + s.loc[s["class"].isin(["caches", "noc"]), "subthreshold_leakage_W"].sum() / 12)
    added_W = _rows(power.build(dataclasses.replace(p, die=more)).evaluate()).loc["die.agent_and_io",
                                                                                   "subthreshold_leakage_W"] \
        - _rows(m.evaluate()).loc["die.agent_and_io", "subthreshold_leakage_W"]
    assert added_W == pytest.approx(tile_W, rel=0.10)
    assert 0 < _rows(m.evaluate()).loc["die.agent_and_io", "leakage_W"] < 0.2 * s.loc[s.on_die, "leakage_W"].sum()


def test_the_die_follows_supply_and_temperature_as_the_uncore_does():
    m = power.build(_xeon())
    lo, hi = m.evaluate(uncore_vdd=0.8, temperature_K=340), m.evaluate(uncore_vdd=1.0, temperature_K=370)
    a, b = _rows(lo).loc["die.agent_and_io"], _rows(hi).loc["die.agent_and_io"]
    mc_a = lo.structures.set_index("component").loc["mc.transaction_engine", "subthreshold_leakage_W"]
    mc_b = hi.structures.set_index("component").loc["mc.transaction_engine", "subthreshold_leakage_W"]
    assert b.subthreshold_leakage_W / a.subthreshold_leakage_W == pytest.approx(mc_b / mc_a, rel=1e-9)


def test_mcpat_never_sees_the_die():
    """McPAT does not price a product's die beyond its inputs: the export is the same with or without it, and the
    export read back prices the structures alone (like with like in every McPAT comparison)."""
    p = _xeon()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        xml = mcpat_xml.to_xml(p)
        assert xml == mcpat_xml.to_xml(dataclasses.replace(p, die=None))
    p2, _ = mcpat_xml.read(xml)
    assert p2.die is None
    assert "other" not in set(power.build(p2).evaluate().structures["class"])


def test_a_die_the_structures_do_not_fit_is_an_error():
    p = _xeon()
    small = dataclasses.replace(p, die=dataclasses.replace(p.die, area_mm2=300.0))
    with pytest.raises(ValueError, match="tiles of 21 mm.2 .* exceed the die"):
        power.build(small)
    tight = dataclasses.replace(p, die=dataclasses.replace(p.die, tile_mm2=5.0, area_mm2=100.0))
    with pytest.raises(ValueError, match="power.die: the enabled tiles' published area less the model's is negative"):
        power.build(tight)
    with pytest.raises(ValueError, match="die.tiles=0"):
        DieConfig(22.0, 541.0, 0, 4.31e9, 21.0, 2.6e8).validate()


def test_the_socket_s_parts_name_the_die_in_the_total():
    p = _xeon()
    r = power.build(p).evaluate()
    parts = unmodelled.parts(r)
    beyond = [q for q in parts if "die beyond McPAT's structures" in q.name]
    assert len(beyond) == 3 and all(q.in_total for q in beyond)         # the tiles' cores, slices; the agent
    assert sum(q.watts for q in beyond) == pytest.approx(_rows(r).runtime_power_W.sum())
    assert parts[0].watts + sum(q.watts for q in beyond) == pytest.approx(float(r.die.runtime_dynamic_W
                                                                                 + r.die.leakage_W))
    # McPAT's shortfall is sized on the structures McPAT prices, not on the die beyond them
    short = next(q for q in parts if "published shortfall" in q.name)
    assert short.watts == pytest.approx(parts[0].watts * (1 / (1 - unmodelled.MCPAT_PUBLISHED_SHORTFALL) - 1))
    assert not any("does not price" in q.name for q in parts)


def test_a_part_moved_to_another_node_has_no_published_die():
    p = _xeon()
    p.node_nm = 45.0
    with pytest.raises(ValueError, match="die: published at 22 nm, the platform is at 45 nm"):
        power.build(p)
    p.die = None
    assert power.build(p).evaluate().area_mm2 > 0


def test_a_part_without_a_published_die_prices_its_structures_only():
    p = platforms.brps_target_socket()
    assert p.die is None
    assert "other" not in set(power.build(p).evaluate().structures["class"])


def _struct(model, path):
    return next(s for s in model.structs if s.path == path)


def test_the_tiles_missing_area_is_priced_at_its_own_structures_densities():
    """The published tile is larger than the model's: each of the model's tile structures is short by the same
    ratio, so the run's cores lack (ratio - 1) of their area and the LLC slices and ring stops (ratio - 1) of theirs,
    priced at their own structures' leakage and switching per mm^2; the enabled cores the run leaves idle are area
    only. Before session 15 the whole difference was one area-only part (no power)."""
    d = die.published(XEON)
    for cores in (4, 12):
        m = power.build(_xeon(cores))
        structs = [s for s in m.structs if s.cls != "other"]
        core = [s for s in structs if s.domain == "core"]
        share = [s for s in structs if s.on_die and s.domain != "core" and s.cls in ("caches", "noc")]
        core_mm2 = sum(s.block.area_mm2 * s.count for s in core)
        share_mm2 = sum(s.block.area_mm2 * s.count for s in share)
        ratio = d.tile_mm2 / (core_mm2 + share_mm2 / 12)
        c, sl = _struct(m, "die.tiles_beyond_model.cores"), _struct(m, "die.tiles_beyond_model.slices")
        idle = _struct(m, "die.idle_cores")
        assert c.domain == "core" and sl.domain == "uncore" and idle.block.leak_um == 0.0 and idle.peak_c == 0.0
        assert c.block.area_mm2 == pytest.approx((ratio - 1) * core_mm2, rel=1e-12)
        assert sl.block.area_mm2 == pytest.approx((ratio - 1) * share_mm2, rel=1e-12)
        assert idle.block.area_mm2 == pytest.approx((12 - cores) * ratio * core_mm2, rel=1e-12)
        # the same leakage and peak switching per mm^2 as the structures they extend
        assert c.block.leak_um / c.block.area_mm2 == pytest.approx(
            sum(s.block.leak_um * s.count for s in core) / core_mm2, rel=1e-12)
        assert c.peak_c / c.block.area_mm2 == pytest.approx(sum(s.peak_c * s.count for s in core) / core_mm2,
                                                            rel=1e-12)
        assert sl.peak_c * sl.clock_MHz / sl.block.area_mm2 == pytest.approx(
            sum(s.peak_c * s.count * s.clock_MHz for s in share) / share_mm2, rel=1e-12)
        # on the cores' rail: the part's power follows the cores' supply, the slices' part the uncore's
        r0, r1 = m.evaluate(), m.evaluate(core_vdd=0.9)
        rows0, rows1 = r0.structures.set_index("component"), r1.structures.set_index("component")
        assert rows1.loc[c.path, "peak_dynamic_W"] > rows0.loc[c.path, "peak_dynamic_W"] > 0
        assert rows1.loc[sl.path, "peak_dynamic_W"] == rows0.loc[sl.path, "peak_dynamic_W"] > 0


def test_the_tiles_missing_area_takes_the_run_s_switching_per_mm2():
    """With a run's counts, the missing area's switched capacitance per mm^2, core by core, is its structures' own
    (a structure's counted capacitance covers all its instances)."""
    p = _xeon(12)
    m = power.build(p)
    structs = [s for s in m.structs if s.cls != "other"]
    core = [s for s in structs if s.domain == "core"]
    for k, s in enumerate(core):
        s.runtime_c = [1e-9 * (k + 1) * (1 + i) for i in range(p.cores)]
    pc = next(x for x in die.parts(p.die, structs, p.cores, 12) if x.path == "die.tiles_beyond_model.cores")
    core_mm2 = sum(s.block.area_mm2 * s.count for s in core)
    per_core = sum(1e-9 * (k + 1) for k in range(len(core))) / core_mm2 * pc.area_mm2
    assert pc.runtime_c == pytest.approx([per_core * (1 + i) for i in range(p.cores)], rel=1e-12)


def test_beside_the_total_the_agent_s_dynamic_power_and_the_leakage_slope_are_sized():
    """Two sensitivities beside the total (never added): the system agent's dynamic power at the tiles' runtime
    dynamic power per published transistor, and the leakage at the operating point with the 45-90 nm tables' supply
    exponent instead of 22 nm's."""
    from power.dvfs import vf_curve
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        _, a = mcpat_xml.read(mcpat_xml.to_xml(platforms.xeon_e5_2697v2_socket()))
    p = _xeon(12)
    r = power.build(p, a).evaluate()
    parts = unmodelled.parts(r)
    agent = next(q for q in parts if "system agent and I/O's dynamic power" in q.name)
    slope = next(q for q in parts if "leakage table's supply slope" in q.name)
    assert not agent.in_total and not slope.in_total and agent.assumed
    m = r.model
    v = vf_curve(m.tech).voltage(3000.0)
    op = m.evaluate(core_vdd=v, core_MHz=3000.0, uncore_vdd=v)
    s = op.structures
    tiles = s["class"].isin(("cores", "caches", "noc")) | s["component"].str.startswith("die.tiles_beyond_model")
    d = p.die
    want = float(s.loc[tiles, "runtime_dynamic_W"].sum()) / (12 * d.tile_transistors) * (
        d.transistors - d.tiles * d.tile_transistors)
    assert agent.watts == pytest.approx(want, rel=1e-9) and agent.watts > 0
    assert slope.watts == pytest.approx(float(op.die.leakage_W) * ((v / m.tech.vdd) ** 2 - 1), rel=1e-9)
