//! The machine's tests: the Linux initial stack, end-to-end programs, guest faults, limits, and
//! random programs and system call arguments that must never panic. The helpers are shared with other modules' tests.

use super::*;
use kvsim_base::error::FaultKind;
use kvsim_isa::asm::*;
use kvsim_isa::elf;
use kvsim_isa::exec::NoHook;

/// Where `tiny_elf` puts the first instruction.
pub const ENTRY: u64 = 0x10078;

pub fn machine_with(code: &[u8], cfg: &EngineConfig) -> Machine {
    let image = elf::parse(&elf::tiny_elf(0x10000, code)).unwrap();
    Machine::new(cfg, &image).unwrap()
}

/// Run straight-line 32-bit code for exactly its length, with some registers preset.
pub fn run_words(words: &[u32], init: &[(usize, u64)]) -> Machine {
    run_words_n(words, init, words.len() as u64)
}

/// Run 32-bit code for `n` instructions, with some registers preset.
pub fn run_words_n(words: &[u32], init: &[(usize, u64)], n: u64) -> Machine {
    let mut cfg = EngineConfig::with_binary("/test/prog");
    cfg.max_insts = n;
    let mut m = machine_with(&bytes(words), &cfg);
    for &(r, v) in init {
        m.harts[0].x[r] = v;
    }
    assert_eq!(m.run(&mut NoHook, None).unwrap(), StopReason::MaxInsts);
    m
}

#[test]
fn initial_stack_follows_linux_abi() {
    let mut cfg = EngineConfig::with_binary("/bin/prog");
    cfg.argv = vec!["-x".into(), "7".into()];
    cfg.env = vec!["A=1".into()];
    cfg.harts = 2;
    let mut m = machine_with(&bytes(&[nop()]), &cfg);
    for hid in 0..2 {
        let sp = m.harts[hid].x[2];
        assert_eq!(sp % 16, 0);
        let top = abi::stack_top(hid as u64, 1 << 20);
        assert!(sp < top && sp > top - 4096);
        let word = |m: &mut Machine, a: u64| m.mem.load::<8>(a).unwrap();
        let cstr = |m: &mut Machine, a: u64| {
            let mut s = String::new();
            for k in a.. {
                match m.mem.load::<1>(k).unwrap() {
                    0 => break,
                    c => s.push(c as u8 as char),
                }
            }
            s
        };
        assert_eq!(word(&mut m, sp), 3);
        let argv: Vec<String> = (0..3)
            .map(|i| {
                let a = word(&mut m, sp + 8 + 8 * i);
                cstr(&mut m, a)
            })
            .collect();
        assert_eq!(argv, ["prog", "-x", "7"], "argv[0] is the file name, not the host path");
        assert_eq!(word(&mut m, sp + 32), 0);
        let env0 = word(&mut m, sp + 40);
        assert_eq!(cstr(&mut m, env0), "A=1");
        assert_eq!(word(&mut m, sp + 48), 0);
        let mut aux = std::collections::HashMap::new();
        let mut a = sp + 56;
        loop {
            let (k, v) = (word(&mut m, a), word(&mut m, a + 8));
            if k == 0 {
                break;
            }
            aux.insert(k, v);
            a += 16;
        }
        assert_eq!(aux[&auxv::AT_PAGESZ], 4096);
        assert_eq!(aux[&auxv::AT_ENTRY], ENTRY);
        assert_eq!(aux[&auxv::AT_PHDR], 0x10040);
        assert_eq!(aux[&auxv::AT_PHNUM], 1);
        assert!(aux.contains_key(&auxv::AT_RANDOM));
        assert_eq!(m.harts[hid].pc, ENTRY);
        assert!(m.harts[hid].x.iter().enumerate().all(|(i, &v)| i == 2 || v == 0));
    }
}

#[test]
fn oversized_argv_is_a_config_error() {
    let mut cfg = EngineConfig::with_binary("/t");
    cfg.stack_size = 8192;
    cfg.argv = vec!["x".repeat(5000)];
    let image = elf::parse(&elf::tiny_elf(0x10000, &bytes(&[nop()]))).unwrap();
    assert!(matches!(Machine::new(&cfg, &image), Err(SimError::Config(m)) if m.contains("do not fit")));
}

#[test]
fn hello_world_end_to_end() {
    // auipc a1, 0; addi a1, a1, 40; li a0, 1; li a2, 6; li a7, 64; ecall; li a0, 7; c.li a7, 29 ... exit(7)
    let mut words = vec![0x0000_0597, addi(11, 11, 40), li(10, 1), li(12, 6), li(17, 64), ecall(), li(10, 7)];
    let mut code = bytes(&words);
    code.extend_from_slice(&0x48f5u16.to_le_bytes()); // c.li a7, 29
    code.extend_from_slice(&0x08c1u16.to_le_bytes()); // c.addi a7, 16  -> 45
    words = vec![addi(17, 17, 48), ecall()]; // 93 = exit
    code.extend(bytes(&words));
    assert_eq!(code.len(), 40);
    code.extend_from_slice(b"hello\n");
    let cfg = EngineConfig::with_binary("/test/prog");
    let mut m = machine_with(&code, &cfg);
    assert_eq!(m.run(&mut NoHook, None).unwrap(), StopReason::Exit);
    let out = m.output(StopReason::Exit);
    assert_eq!(out.stdout, b"hello\n");
    assert_eq!(out.exit_code, Some(7));
    assert_eq!(out.harts[0].insts, 11);
    assert_eq!(out.sim_ticks, 11 * 400);
    let stat = |n: &str| out.stats.iter().find(|s| s.name == n).unwrap().value;
    assert_eq!(stat("system.hart0.insts"), 11.0);
    assert_eq!(stat("system.hart0.syscalls"), 2.0);
    assert_eq!(stat("system.hart0.loads"), 0.0);
}

#[test]
fn unknown_calls_stop_the_run() {
    // An unknown simulator call, a number outside workloads/SYSCALLS.md's table and a refused call. (This test once
    // used 291, which became supported as statx: a number from the table's refused rows or outside it stays stopped.)
    for (nr, expect) in [
        (0x4b5600f0u32, "unsupported simulator call 0x4b5600f0"),
        (500, "unsupported system call 500"),
        (221, "unsupported system call 221 (execve)"),
    ] {
        let code = vec![lui(17, nr >> 12), addi(17, 17, (nr & 0xfff) as i32), ecall()];
        let mut m = machine_with(&bytes(&code), &EngineConfig::with_binary("/t"));
        match m.run(&mut NoHook, None).unwrap_err() {
            SimError::Guest { kind, hart, pc, reason, .. } => {
                assert_eq!(kind, FaultKind::UnsupportedSyscall, "{reason}");
                assert_eq!(hart, 0);
                assert_eq!(pc, ENTRY + 8);
                assert_eq!(reason, expect);
            }
            e => panic!("{e:?}"),
        }
    }
}

fn fault_of(words: &[u32], cfg: &EngineConfig) -> (FaultKind, u64, u32, String) {
    let mut m = machine_with(&bytes(words), cfg);
    match m.run(&mut NoHook, None).unwrap_err() {
        SimError::Guest { kind, pc, insn, reason, .. } => (kind, pc, insn, reason),
        e => panic!("{e:?}"),
    }
}

#[test]
fn guest_faults_are_reported() {
    let cfg = EngineConfig::with_binary("/t");
    // load from an unmapped address
    let (k, pc, insn, why) = fault_of(&[lui(5, 0x50), i(0, 5, 3, 6, 0x03)], &cfg);
    assert_eq!((k, pc, insn), (FaultKind::Memory, ENTRY + 4, i(0, 5, 3, 6, 0x03)));
    assert_eq!(why, "load from unmapped address 0x50000");
    // misaligned store
    let (k, _, _, why) = fault_of(&[addi(5, 2, -3), s(0, 0, 5, 3)], &cfg);
    assert_eq!(k, FaultKind::Memory);
    assert!(why.starts_with("store of 8 bytes at 0x3ffffeff") && why.ends_with("is misaligned"), "{why}");
    // ... which 'allow' performs
    let mut allow = cfg.clone();
    allow.misaligned = kvsim_params::SystemMisaligned::Allow;
    allow.max_insts = 2;
    let mut m = machine_with(&bytes(&[addi(5, 2, -3), s(0, 2, 5, 3)]), &allow);
    assert_eq!(m.run(&mut NoHook, None).unwrap(), StopReason::MaxInsts);
    // the stack guard is unmapped
    let (k, _, _, why) = fault_of(&[lui(5, 0x100), r(0x20, 5, 2, 0, 5, 0x33), s(-8, 0, 5, 3)], &cfg);
    assert_eq!(k, FaultKind::Memory);
    assert!(why.starts_with("store to unmapped address 0x3fffee"), "{why}");
    // illegal and floating-point instructions, ebreak, unsupported CSRs
    let (k, pc, insn, why) = fault_of(&[nop(), 0xffff_ffff], &cfg);
    assert_eq!((k, pc, insn), (FaultKind::IllegalInstruction, ENTRY + 4, 0xffff_ffff));
    assert_eq!(why, "illegal instruction: not an RV64GC instruction");
    assert!(fault_of(&[0x02c5d553], &cfg).3.contains("rounding mode")); // fadd.d with the reserved rm 5
    assert!(fault_of(&[0x00100073], &cfg).3.contains("ebreak"));
    assert!(fault_of(&[0x300026f3], &cfg).3.contains("CSR 0x300"));
    // jumping into unmapped memory faults on the fetch
    let (k, pc, insn, why) = fault_of(&[lui(5, 0x900), i(0, 5, 0, 0, 0x67)], &cfg);
    assert_eq!((k, pc, insn), (FaultKind::Memory, 0x900000, 0));
    assert_eq!(why, "instruction fetch from unmapped address 0x900000");
}

#[test]
fn memory_limit_is_a_guest_fault() {
    let mut cfg = EngineConfig::with_binary("/t");
    cfg.mem_limit = 3 * 4096; // ELF page + stack page + one more
    let words =
        [lui(5, 0x1), r(0x20, 5, 2, 0, 5, 0x33), s(0, 0, 5, 3), lui(6, 0x2), r(0x20, 6, 2, 0, 6, 0x33), s(0, 0, 6, 3)];
    let (k, pc, insn, why) = fault_of(&words, &cfg);
    assert_eq!((k, pc, insn), (FaultKind::MemoryLimit, ENTRY + 20, s(0, 0, 6, 3)));
    assert!(why.contains("would exceed mem_limit of 12288 bytes"), "{why}");
}

/// Both harts: a0 = HART_ID; a1 = shared word; hart 0 does LR, waits, SC and exits with SC's result;
/// hart 1 stores to a1 + `offset` (quantum 1: right after hart 0's LR) and exits.
fn lr_sc_program(offset: i32) -> Vec<u32> {
    vec![
        lui(17, 0x4b560),  // 0  a7 = HART_ID
        ecall(),           // 4
        lui(11, 0x11),     // 8  a1 = 0x11000 (inside the ELF segment's bss)
        bne(10, 0, 28),    // 12 hart 1 -> 40
        lr_w(5, 11),       // 16
        nop(),             // 20
        nop(),             // 24
        sc_w(10, 6, 11),   // 28 a0 = 0 on success
        li(17, 93),        // 32
        ecall(),           // 36
        sw(0, 11, offset), // 40
        li(10, 0),         // 44
        li(17, 93),        // 48
        ecall(),           // 52
    ]
}

fn lr_sc_result(harts: u64, offset: i32) -> Option<i64> {
    let mut cfg = EngineConfig::with_binary("/t");
    cfg.harts = harts;
    cfg.quantum = 1;
    let mut m = machine_with(&bytes(&lr_sc_program(offset)), &cfg);
    assert_eq!(m.run(&mut NoHook, None).unwrap(), StopReason::Exit);
    m.harts[0].exit_code
}

#[test]
fn sc_fails_after_another_harts_store() {
    assert_eq!(lr_sc_result(1, 0), Some(0), "alone, the SC succeeds");
    assert_eq!(lr_sc_result(2, 0), Some(1), "hart 1's store to the reserved word breaks the reservation");
    assert_eq!(lr_sc_result(2, 4), Some(1), "same 8-byte granule");
    assert_eq!(lr_sc_result(2, 8), Some(0), "a store to another granule does not");
}

#[test]
fn limits_stop_the_run() {
    // An endless loop: j .
    let code = bytes(&[0x0000_006f]);
    let mut cfg = EngineConfig::with_binary("/t");
    cfg.harts = 3;
    cfg.quantum = 7;
    cfg.max_insts = 100;
    let mut m = machine_with(&code, &cfg);
    assert_eq!(m.run(&mut NoHook, None).unwrap(), StopReason::MaxInsts);
    assert_eq!(m.total_insts(), 100);
    let insts: Vec<u64> = m.harts.iter().map(|h| h.cnt.insts).collect();
    assert_eq!(insts, [35, 35, 30]);
    let mut cfg = EngineConfig::with_binary("/t");
    cfg.max_time = 1_000_000; // 1 us at 2.5 GHz = 2500 instructions
    cfg.harts = 2;
    let mut m = machine_with(&code, &cfg);
    assert_eq!(m.run(&mut NoHook, None).unwrap(), StopReason::MaxTime);
    assert!(m.harts.iter().all(|h| h.cnt.insts == 2500));
    assert_eq!(m.output(StopReason::MaxTime).sim_ticks, 1_000_000);
}

#[test]
fn random_programs_never_panic() {
    let mut seed = 12345u64;
    let mut faults = 0;
    for round in 0..300 {
        let words: Vec<u32> = (0..64).map(|_| kvsim_base::random::splitmix64(&mut seed) as u32).collect();
        let mut cfg = EngineConfig::with_binary("/t");
        cfg.max_insts = 2000;
        cfg.harts = 1 + round % 2;
        cfg.quantum = 3;
        use kvsim_params::SystemMisaligned::{Allow, Fault};
        cfg.misaligned = if round % 3 == 0 { Allow } else { Fault };
        let mut m = machine_with(&bytes(&words), &cfg);
        for hart in &mut m.harts {
            for r in 1..32 {
                let v = kvsim_base::random::splitmix64(&mut seed);
                // Some registers point into mapped memory so loads and stores get exercised.
                hart.x[r] = if r % 3 == 0 {
                    0x10000 + (v & 0x1fff)
                } else if r == 2 {
                    hart.x[2]
                } else {
                    v
                };
            }
        }
        match m.run(&mut NoHook, None) {
            Ok(_) => {}
            Err(SimError::Guest { reason, .. }) => {
                assert!(!reason.is_empty());
                faults += 1;
            }
            Err(e) => panic!("{e:?}"),
        }
    }
    assert!(faults > 100);
}

#[test]
fn every_16_bit_word_decodes_without_panicking() {
    for w in 0..=0xffffu32 {
        let d = kvsim_isa::decode::decode(w);
        if w & 3 != 3 {
            assert_eq!(d.len, 2);
        }
    }
}

#[test]
fn random_syscall_arguments_never_panic() {
    let nrs = [
        64u64,
        66,
        93,
        94,
        96,
        99,
        113,
        160,
        214,
        215,
        222,
        226,
        261,
        278,
        78,
        293,
        0x4b56_0000,
        0x4b56_0001,
        0x4b56_0002,
        0x4b56_0003,
        0x4b56_0004,
        0x4b56_0005,
        0x4b56_0006,
        0x4b56_0007,
    ];
    let mut seed = 777u64;
    let mut rnd = move || kvsim_base::random::splitmix64(&mut seed);
    for round in 0..3000 {
        let mut cfg = EngineConfig::with_binary("/t");
        cfg.max_insts = 8;
        cfg.mem_limit = 1 << 22;
        let mut m = machine_with(&bytes(&[ecall()]), &cfg);
        let h = &mut m.harts[0];
        h.x[17] = nrs[round % nrs.len()];
        for r in 10..16 {
            let v = rnd();
            h.x[r] = match v % 4 {
                0 => v >> (v % 64),
                1 => 0x10000 + (v & 0x1fff),
                2 => v & 0xff,
                _ => h.x[2].wrapping_sub(v & 0xfff),
            };
        }
        match m.run(&mut NoHook, None) {
            Ok(_) | Err(SimError::Guest { .. }) => {}
            Err(e) => panic!("{e:?}"),
        }
    }
}

#[test]
fn simulator_calls() {
    let words = [
        lui(17, 0x4b560),
        addi(17, 17, 1), // NUM_HARTS
        ecall(),
        addi(9, 10, 0),
        addi(17, 17, 1), // ROI_BEGIN at 6 instructions
        ecall(),
        nop(),
        nop(),
        nop(),
        addi(17, 17, 1), // ROI_END at 11
        ecall(),
        addi(17, 17, 3), // STATS_DUMP
        ecall(),
        addi(17, 17, -1), // ALLOC_LOCAL(100, 64 KiB)
        li(10, 100),
        lui(11, 0x10),
        ecall(),
        addi(18, 10, 0),
        sw(9, 18, 96), // the memory is usable
        li(17, 93),
        ecall(),
    ];
    let mut m = machine_with(&bytes(&words), &EngineConfig::with_binary("/t"));
    assert_eq!(m.run(&mut NoHook, None).unwrap(), StopReason::Exit);
    let h = &m.harts[0];
    assert_eq!(h.x[9], 1);
    assert!(h.x[18] != 0 && h.x[18].is_multiple_of(0x10000) && h.x[18] < MMAP_TOP, "{:#x}", h.x[18]);
    let out = m.output(StopReason::Exit);
    let stat = |n: &str| out.stats.iter().find(|s| s.name == n).unwrap().value;
    assert_eq!(stat("system.roi.begin_insts"), 6.0);
    assert_eq!(stat("system.roi.end_insts"), 11.0);
    assert_eq!(stat("system.roi.insts"), 5.0);
    assert_eq!(stat("system.hart0.insts"), 21.0 - 6.0, "ROI_BEGIN resets the stats");
    assert_eq!(stat("system.hart0.simcalls"), 3.0);
    assert_eq!(out.harts[0].insts, 21);
    assert_eq!(out.stat_dumps.len(), 1);
    let (ticks, snap) = &out.stat_dumps[0];
    assert_eq!(*ticks, 13 * 400);
    assert_eq!(snap.iter().find(|s| s.name == "system.hart0.insts").unwrap().value, 7.0);
    let names: Vec<&str> = out.stats.iter().map(|s| s.name.as_str()).collect();
    let mut sorted = names.clone();
    sorted.dedup();
    assert_eq!(names.len(), sorted.len());
}
