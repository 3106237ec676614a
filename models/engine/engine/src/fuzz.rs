//! Property-based fuzzing (proptest): every instruction word decodes or is rejected cleanly, every decoded
//! sequence executes to a result or a guest fault (never a panic), and the FPU takes any operands.
//! `cargo test` runs a short batch (PROPTEST_CASES, default below); `make fuzz` a long one.

use proptest::prelude::*;

use crate::sim::tests::machine_with;
use crate::sim::EngineConfig;
use kvsim_isa::decode::{decode, Op};
use kvsim_isa::exec::NoHook;
use kvsim_isa::fpu;

/// Cases per property when PROPTEST_CASES is not set: a brief run that keeps `make test` fast.
const BRIEF_CASES: u32 = 2000;

fn config() -> ProptestConfig {
    let cases = std::env::var("PROPTEST_CASES").ok().and_then(|v| v.parse().ok()).unwrap_or(BRIEF_CASES);
    ProptestConfig { cases, failure_persistence: None, ..ProptestConfig::default() }
}

/// Instruction words: anything, and (more often) words near the real encodings (a valid opcode with random
/// fields), so the decoder's and executor's deeper paths are reached.
fn word() -> impl Strategy<Value = u32> {
    const OPCODES: [u32; 17] =
        [0x03, 0x07, 0x0f, 0x13, 0x17, 0x1b, 0x23, 0x27, 0x2f, 0x33, 0x37, 0x3b, 0x43, 0x53, 0x63, 0x67, 0x73];
    prop_oneof![
        any::<u32>(),
        (any::<u32>(), 0..OPCODES.len()).prop_map(|(w, i)| (w & !0x7f) | OPCODES[i]),
        any::<u16>().prop_map(|h| h as u32),
    ]
}

proptest! {
    #![proptest_config(config())]

    #[test]
    fn fuzz_decoder_never_panics_and_keeps_its_invariants(w in word()) {
        let d = decode(w);
        prop_assert!(d.len == 2 || d.len == 4);
        prop_assert_eq!(d.len == 4, w & 3 == 3);
        prop_assert!(d.rd < 64 && d.rs1 < 64 && d.rs2 < 64);
        if d.op == Op::Illegal {
            prop_assert!(!d.illegal_reason().is_empty());
        }
    }

    #[test]
    fn fuzz_executor_stops_cleanly(words in proptest::collection::vec(word(), 1..24), seed in any::<u64>()) {
        let code: Vec<u8> = words.iter().flat_map(|w| w.to_le_bytes()).collect();
        let mut cfg = EngineConfig::with_binary("/fuzz/prog");
        cfg.max_insts = 400;
        cfg.mem_limit = 64 << 20;
        let mut m = machine_with(&code, &cfg);
        // Registers point into the stack and around, so loads and stores sometimes hit mapped memory.
        let sp = m.harts[0].x[2];
        for r in 1..64 {
            let v = seed.rotate_left(r as u32 * 7) ^ (r as u64).wrapping_mul(0x9e37_79b9_7f4a_7c15);
            m.harts[0].x[r] = if r % 3 == 0 { sp.wrapping_sub(v & 0xff8) } else { v };
        }
        // Either a stop reason or a guest fault: a panic fails the property.
        let _ = m.run(&mut NoHook, None);
    }

    #[test]
    fn fuzz_fpu_takes_any_operands(k in 0..FP_OPS.len(), rm in 0u32..8, a in any::<u64>(), b in any::<u64>(),
                                   c in any::<u64>(), frm in 0u32..8) {
        let op = FP_OPS[k];
        let mut fcsr = frm << 5;
        match fpu::execute(op, rm << 12, a, b, c, &mut fcsr) {
            Ok(_) => prop_assert!(fcsr >> 5 == frm && fcsr < 256),
            // Only a reserved rounding mode (static 5/6 never come from the decoder; dynamic with frm 5..7) fails.
            Err(why) => {
                let effective = if rm == 7 { frm } else { rm };
                prop_assert!(effective > 4 && why.contains("frm"));
            }
        }
    }
}

/// Every computational F/D operation.
const FP_OPS: [Op; 58] = [
    Op::FmaddS,
    Op::FmsubS,
    Op::FnmsubS,
    Op::FnmaddS,
    Op::FaddS,
    Op::FsubS,
    Op::FmulS,
    Op::FdivS,
    Op::FsqrtS,
    Op::FsgnjS,
    Op::FsgnjnS,
    Op::FsgnjxS,
    Op::FminS,
    Op::FmaxS,
    Op::FcvtWS,
    Op::FcvtWuS,
    Op::FcvtLS,
    Op::FcvtLuS,
    Op::FmvXW,
    Op::FclassS,
    Op::FeqS,
    Op::FltS,
    Op::FleS,
    Op::FcvtSW,
    Op::FcvtSWu,
    Op::FcvtSL,
    Op::FcvtSLu,
    Op::FmvWX,
    Op::FcvtSD,
    Op::FmaddD,
    Op::FmsubD,
    Op::FnmsubD,
    Op::FnmaddD,
    Op::FaddD,
    Op::FsubD,
    Op::FmulD,
    Op::FdivD,
    Op::FsqrtD,
    Op::FsgnjD,
    Op::FsgnjnD,
    Op::FsgnjxD,
    Op::FminD,
    Op::FmaxD,
    Op::FcvtWD,
    Op::FcvtWuD,
    Op::FcvtLD,
    Op::FcvtLuD,
    Op::FmvXD,
    Op::FclassD,
    Op::FeqD,
    Op::FltD,
    Op::FleD,
    Op::FcvtDW,
    Op::FcvtDWu,
    Op::FcvtDL,
    Op::FcvtDLu,
    Op::FmvDX,
    Op::FcvtDS,
];

#[test]
fn the_fp_op_list_is_every_computational_op() {
    assert!(FP_OPS.iter().all(|op| op.is_fp_compute()));
    assert_eq!(FP_OPS.len(), (Op::FcvtDS as u8 - Op::FmaddS as u8 + 1) as usize);
}
