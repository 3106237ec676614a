"""Issue 26, session 12: an L1's miss, fill, prefetch and write-back buffers priced as their own structures, counted
as McPAT 1.3 counts them, and the L1s' energy laws on the array's organisation (line, cycle time) instead of the
core's x86 term.

McPAT itself, on its export of the Xeon (22 nm, 32 KB 8-way 64-byte L1 with two ports and ten-entry buffers, duty
cycle 0.25): 0.725 nJ a read, 0.732 nJ a write, 0 more for a read miss, 1.46 nJ a write miss (the buffers); the
buffers are 63% of the L1's peak and under 1% of its runtime. Before, the buffers had no energy of their own (their
cost was a share of the array's, through a runtime-to-peak law bounded at 1 with an x86 term), which put the
exported Xeon's L1 runtime at 4.9 W against McPAT's 14.5 W.
"""

from __future__ import annotations

import dataclasses
import math
import warnings

import numpy as np
import pytest

import power
import power.calibration as cal
from power import cache_buffers, fit, platforms
from power.mcpat_xml import read

from power_helpers import synthetic_stats


def _priced(platform, **core_counts):
    """The platform's model and evaluation with core 0's counters replaced by ``core_counts``."""
    stats = synthetic_stats(platform)
    for k, v in core_counts.items():
        stats[f"system.socket0.core0.{k}"] = v
    m = power.build(platform, power.from_stats(stats, platform))
    return m, m.evaluate()


def _struct(m, path):
    return next(s for s in m.structs if s.path == path)


def _row(r, path):
    s = r.structures
    return s[s.component == path].iloc[0]


def _xeon(write_back=True):
    p = platforms.xeon_e5_2697v2_socket()
    if not write_back:
        p = dataclasses.replace(p, core=dataclasses.replace(p.core, dcache=dataclasses.replace(p.core.dcache,
                                                                                                 write_back=False)))
    return p


def _buffers(m, cache):
    p = m.platform
    ports = cache.rw_ports + cache.rd_ports + cache.wr_ports + (max(1, p.core.mem_ports) - 1
                                                                if cache is p.core.dcache else 0)
    return cache_buffers.build(power.model.technology(p.node_nm, p.device, p.temperature_K, p.long_channel), cache,
                               p.core.paddr_bits, ports)


def test_data_cache_buffers_runtime_is_their_write_misses_times_one_search_and_write_each():
    """A write-back L1's buffers: per write miss one search and one write of each of the four buffers, times their
    own laws; read misses and hits do not reach them."""
    p = _xeon()
    m, _ = _priced(p, **{"l1d.write_misses": 12345.0, "l1d.read_misses": 777.0})
    s = _struct(m, "core.lsu.dcache_buffers")
    bufs = _buffers(m, p.core.dcache)
    assert bufs.writeback.c_write > 0, "a write-back cache has a write-back buffer"
    k = cal.factor("l1buf", "dyn", s.x) * cal.factor("l1buf", "rt", s.x)
    assert s.runtime_c[0] == pytest.approx(12345.0 * bufs.per_event * k, rel=1e-12)
    # more read misses: the buffers' runtime does not move; more write misses: it moves by exactly their count
    m2, _ = _priced(p, **{"l1d.write_misses": 12345.0, "l1d.read_misses": 99999.0})
    assert _struct(m2, "core.lsu.dcache_buffers").runtime_c[0] == pytest.approx(s.runtime_c[0], rel=1e-12)
    m3, _ = _priced(p, **{"l1d.write_misses": 2 * 12345.0, "l1d.read_misses": 777.0})
    assert _struct(m3, "core.lsu.dcache_buffers").runtime_c[0] == pytest.approx(2 * s.runtime_c[0], rel=1e-12)


def test_buffer_runtime_power_moves_by_the_events_energy_over_the_interval():
    p = _xeon()
    m, r0 = _priced(p, **{"l1d.write_misses": 0.0})
    _, r1 = _priced(p, **{"l1d.write_misses": 1e5})
    s = _struct(m, "core.lsu.dcache_buffers")
    assert s.runtime_c[0] == 0.0
    bufs = _buffers(m, p.core.dcache)
    k = cal.factor("l1buf", "dyn", s.x) * cal.factor("l1buf", "rt", s.x)
    vdd = float(np.atleast_1d(r1.core_vdd)[0])
    want = 1e5 * bufs.per_event * k * vdd ** 2 / m.activity.seconds
    got = _row(r1, "core.lsu.dcache_buffers").runtime_dynamic_W - _row(r0, "core.lsu.dcache_buffers").runtime_dynamic_W
    assert got == pytest.approx(want, rel=1e-9)


def test_write_through_buffers_follow_read_misses_and_have_no_write_back_buffer():
    p = _xeon(write_back=False)
    m, _ = _priced(p, **{"l1d.write_misses": 5000.0, "l1d.read_misses": 4321.0})
    bufs = _buffers(m, p.core.dcache)
    assert bufs.writeback.c_write == 0.0 and bufs.writeback.area_mm2 == 0.0
    s = _struct(m, "core.lsu.dcache_buffers")
    k = cal.factor("l1buf", "dyn", s.x) * cal.factor("l1buf", "rt", s.x)
    assert s.runtime_c[0] == pytest.approx(4321.0 * bufs.per_event * k, rel=1e-12)


def test_instruction_cache_buffers_follow_its_misses():
    p = _xeon()
    m, _ = _priced(p, **{"l1i.misses": 2468.0})
    s = _struct(m, "core.ifu.icache_buffers")
    bufs = _buffers(m, p.core.icache)
    assert bufs.writeback.c_write == 0.0 or p.core.icache.write_back
    k = cal.factor("l1buf", "dyn", s.x) * cal.factor("l1buf", "rt", s.x)
    assert s.runtime_c[0] == pytest.approx(2468.0 * bufs.per_event * k, rel=1e-12)


def test_buffer_peak_is_mcpats_rate_with_the_write_back_buffer_off_the_duty_cycle():
    """McPAT's peak: the miss, fill and prefetch buffers searched and written once per search port per cycle times the
    duty cycle; the write-back buffer once per port per cycle (McPAT 1.3 leaves its duty cycle off)."""
    p = _xeon()
    m, _ = _priced(p)
    s = _struct(m, "core.lsu.dcache_buffers")
    bufs = _buffers(m, p.core.dcache)
    mp, duty = p.core.mem_ports, p.core.duty["LSU"]
    ev = cache_buffers.event_c
    want = mp * (duty * (ev(bufs.miss) + ev(bufs.fill) + ev(bufs.prefetch)) + ev(bufs.writeback))
    assert s.peak_c == pytest.approx(want * cal.factor("l1buf", "dyn", s.x), rel=1e-12)
    # their area and leakage are the cache's: the buffers' own structure holds only their energy
    assert s.block.area_mm2 == 0.0 and s.block.leak_um == 0.0


def test_the_l1_energy_law_follows_the_arrays_cycle_time_not_the_cores_x86_decode():
    """McPAT's penryn_n22 L1 costs 0.070 nJ a read at its four-cycle throughput and 0.285 nJ at one cycle, nothing
    else changed; the x86 decode does not change an L1's energy per access."""
    for metric in ("dyn", "rt"):
        assert "x86" not in cal.feature_names("l1", metric)
        assert "cycle" in cal.feature_names("l1", metric)
    d = fit.SWEEP
    if not (d / "penryn_n22.xml").is_file():
        pytest.skip(f"McPAT sweep absent ({d}): the McPAT reference points are not on this machine")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        p, a = read(d / "penryn_n22.xml")
    per_read = {}
    for thr in (4.0, 1.0):
        q = dataclasses.replace(p, core=dataclasses.replace(p.core, dcache=dataclasses.replace(
            p.core.dcache, throughput_cycles=thr)))
        a0 = dataclasses.replace(a, cores=[dataclasses.replace(c, l1d_reads=0.0) for c in a.cores])
        a1 = dataclasses.replace(a, cores=[dataclasses.replace(c, l1d_reads=1e6) for c in a.cores])
        rt = [_row(power.build(q, x).evaluate(), "core.lsu.dcache").runtime_dynamic_W for x in (a0, a1)]
        per_read[thr] = (rt[1] - rt[0]) * a.seconds / 1e6
    assert per_read[1.0] > 1.5 * per_read[4.0], per_read
    assert math.isfinite(per_read[1.0])
