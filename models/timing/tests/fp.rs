//! The core's FP units: dependent chains take the configured latency per instruction, independent ones issue at
//! the units' rate, the divider is not pipelined, and an FMA waits for its third source.

use kvsim_timing::inst::{InstClass, InstInfo};
use kvsim_timing::synth::*;

/// f_n in the timing model's register numbering.
const fn f(n: u8) -> u8 {
    32 + n
}

/// Cycles per instruction over `n` repetitions of `body` (after a warm-up pass brings the code into the L1I).
fn cycles_per_inst(params: &kvsim_params::Core, body: &[InstInfo], n: usize) -> f64 {
    let mut m = CoreRig::new(params, &hierarchy_params(), &dram_params());
    run(&mut m, body.iter().copied().cycle().take(body.len() * 64));
    let (c0, i0) = (m.core.cycles(), m.core.stats.insts);
    run(&mut m, body.iter().copied().cycle().take(body.len() * n));
    (m.core.cycles() - c0) as f64 / (m.core.stats.insts - i0) as f64
}

fn fp(pc: u64, class: InstClass, dst: u8, src1: u8, src2: u8) -> InstInfo {
    op(pc, class, dst, src1, src2)
}

#[test]
fn dependent_fp_chains_take_the_configured_latencies() {
    let p = core_params();
    for (class, latency) in [
        (InstClass::FpAdd, p.fp_add_latency),
        (InstClass::FpMul, p.fp_mul_latency),
        (InstClass::FpFma, p.fp_fma_latency),
        (InstClass::FpCvt, p.fp_cvt_latency),
        (InstClass::FpDiv, p.fp_div_latency),
        (InstClass::FpSqrt, p.fp_sqrt_latency),
    ] {
        // f1 = op(f1, f2): each waits for the previous result.
        let chain = [fp(0x1000, class, f(1), f(1), f(2))];
        let cpi = cycles_per_inst(&p, &chain, 2000);
        assert!((cpi - latency as f64).abs() < 0.01, "{class:?}: {cpi} cycles per dependent op, want {latency}");
    }
    // Changing a latency changes the chain's rate one for one.
    let mut slow = p.clone();
    slow.fp_add_latency = 7;
    let cpi = cycles_per_inst(&slow, &[fp(0x1000, InstClass::FpAdd, f(1), f(1), f(2))], 2000);
    assert!((cpi - 7.0).abs() < 0.01, "{cpi}");
}

#[test]
fn independent_fp_ops_issue_at_the_units_rate_and_the_divider_is_not_pipelined() {
    let p = core_params();
    // Independent adds (different destinations, sources never written): fp_units per cycle.
    let adds: Vec<InstInfo> =
        (0..8).map(|k| fp(0x1000 + 4 * k, InstClass::FpMul, f(10 + k as u8), f(1), f(2))).collect();
    let cpi = cycles_per_inst(&p, &adds, 500);
    let want = 1.0 / p.fp_units as f64;
    assert!((cpi - want).abs() < 0.02, "independent multiplies: {cpi} cycles each, want {want}");
    // Independent divides: one per fp_div_latency per divider.
    let divs: Vec<InstInfo> =
        (0..4).map(|k| fp(0x1000 + 4 * k, InstClass::FpDiv, f(10 + k as u8), f(1), f(2))).collect();
    let cpi = cycles_per_inst(&p, &divs, 200);
    let want = p.fp_div_latency as f64 / p.fp_div_units as f64;
    assert!((cpi - want).abs() < 0.05, "independent divides: {cpi} cycles each, want {want}");
}

#[test]
fn fma_waits_for_its_addend() {
    let p = core_params();
    // f3 = f1 * f2 + f3: only the addend (src3) carries the dependence.
    let mut fma = fp(0x1000, InstClass::FpFma, f(3), f(1), f(2));
    fma.src3 = f(3);
    let cpi = cycles_per_inst(&p, &[fma], 2000);
    assert!((cpi - p.fp_fma_latency as f64).abs() < 0.01, "{cpi}");
    fma.src3 = f(4);
    let cpi = cycles_per_inst(&p, &[fma], 2000);
    assert!(cpi < 1.0, "no dependence left: {cpi}");
}
