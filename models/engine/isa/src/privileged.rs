//! The privileged architecture of one hart for full-system mode (RISC-V privileged spec 1.12): the M, S and U
//! privilege levels, the machine and supervisor CSRs Linux and a firmware use, trap entry with delegation
//! (medeleg/mideleg), interrupt selection, and the mret/sret/wfi/sfence.vma/CSR instructions.
//!
//! The executor (`exec`) never sees this state: in SE mode none exists. An FS-mode machine keeps one `Privileged`
//! per hart; the executor stops on the instructions it does not execute itself (CSR accesses other than the
//! counters and fcsr, mret, sret, wfi, sfence.vma, ecall, faults), and the machine finishes them here. What
//! translation depends on (satp, the effective privilege of fetches and data, SUM, MXR) is handed to guest memory
//! as a [`crate::memory::XlateContext`] whenever it may have changed.

use crate::memory::XlateContext;
use crate::trap::{Access, Trap};

pub const PRV_U: u8 = 0;
pub const PRV_S: u8 = 1;
pub const PRV_M: u8 = 3;

/// CSR numbers.
pub mod csr {
    pub const SSTATUS: u16 = 0x100;
    pub const SIE: u16 = 0x104;
    pub const STVEC: u16 = 0x105;
    pub const SCOUNTEREN: u16 = 0x106;
    pub const SENVCFG: u16 = 0x10a;
    pub const SSCRATCH: u16 = 0x140;
    pub const SEPC: u16 = 0x141;
    pub const SCAUSE: u16 = 0x142;
    pub const STVAL: u16 = 0x143;
    pub const SIP: u16 = 0x144;
    pub const SATP: u16 = 0x180;
    pub const MSTATUS: u16 = 0x300;
    pub const MISA: u16 = 0x301;
    pub const MEDELEG: u16 = 0x302;
    pub const MIDELEG: u16 = 0x303;
    pub const MIE: u16 = 0x304;
    pub const MTVEC: u16 = 0x305;
    pub const MCOUNTEREN: u16 = 0x306;
    pub const MENVCFG: u16 = 0x30a;
    pub const MCOUNTINHIBIT: u16 = 0x320;
    pub const MSCRATCH: u16 = 0x340;
    pub const MEPC: u16 = 0x341;
    pub const MCAUSE: u16 = 0x342;
    pub const MTVAL: u16 = 0x343;
    pub const MIP: u16 = 0x344;
    pub const MVENDORID: u16 = 0xf11;
    pub const MARCHID: u16 = 0xf12;
    pub const MIMPID: u16 = 0xf13;
    pub const MHARTID: u16 = 0xf14;
    pub const MCONFIGPTR: u16 = 0xf15;
    pub const CYCLE: u16 = 0xc00;
    pub const TIME: u16 = 0xc01;
    pub const INSTRET: u16 = 0xc02;
    pub const MCYCLE: u16 = 0xb00;
    pub const MINSTRET: u16 = 0xb02;
}

/// mstatus fields.
pub mod status {
    pub const SIE: u64 = 1 << 1;
    pub const MIE: u64 = 1 << 3;
    pub const SPIE: u64 = 1 << 5;
    pub const MPIE: u64 = 1 << 7;
    pub const SPP: u64 = 1 << 8;
    pub const MPP_SHIFT: u32 = 11;
    pub const MPP: u64 = 3 << MPP_SHIFT;
    pub const FS: u64 = 3 << 13;
    pub const FS_DIRTY: u64 = 3 << 13;
    pub const MPRV: u64 = 1 << 17;
    pub const SUM: u64 = 1 << 18;
    pub const MXR: u64 = 1 << 19;
    pub const TVM: u64 = 1 << 20;
    pub const TW: u64 = 1 << 21;
    pub const TSR: u64 = 1 << 22;
    /// UXL = SXL = 2 (64-bit), read-only.
    pub const XL64: u64 = (2 << 32) | (2 << 34);
    pub const SD: u64 = 1 << 63;
    /// The bits sstatus shows of mstatus.
    pub const SSTATUS_MASK: u64 = SIE | SPIE | SPP | FS | SUM | MXR | XL64 | SD;
    /// The bits software may write in mstatus (the rest are read-only zeros, or UXL/SXL/SD).
    pub const MSTATUS_WRITABLE: u64 = SIE | MIE | SPIE | MPIE | SPP | MPP | FS | MPRV | SUM | MXR | TVM | TW | TSR;
}

/// Interrupt numbers (bits of mip/mie) and exception causes.
pub mod irq {
    pub const SSI: u32 = 1;
    pub const MSI: u32 = 3;
    pub const STI: u32 = 5;
    pub const MTI: u32 = 7;
    pub const SEI: u32 = 9;
    pub const MEI: u32 = 11;
    /// The interrupts S mode may be delegated (mideleg's writable bits).
    pub const S_MASK: u64 = (1 << SSI) | (1 << STI) | (1 << SEI);
    pub const M_MASK: u64 = (1 << MSI) | (1 << MTI) | (1 << MEI);
    /// Priority order of simultaneous interrupts (privileged spec 3.1.9).
    pub const PRIORITY: [u32; 6] = [MEI, MSI, MTI, SEI, SSI, STI];
}

pub mod cause {
    pub const FETCH_MISALIGNED: u64 = 0;
    pub const FETCH_ACCESS: u64 = 1;
    pub const ILLEGAL: u64 = 2;
    pub const BREAKPOINT: u64 = 3;
    pub const LOAD_MISALIGNED: u64 = 4;
    pub const LOAD_ACCESS: u64 = 5;
    pub const STORE_MISALIGNED: u64 = 6;
    pub const STORE_ACCESS: u64 = 7;
    pub const ECALL_U: u64 = 8;
    pub const ECALL_S: u64 = 9;
    pub const ECALL_M: u64 = 11;
    pub const FETCH_PAGE: u64 = 12;
    pub const LOAD_PAGE: u64 = 13;
    pub const STORE_PAGE: u64 = 15;
    pub const INTERRUPT: u64 = 1 << 63;
    /// medeleg's writable bits: every exception but an ecall from M mode.
    pub const DELEGABLE: u64 = 0xb3ff;
}

/// misa: RV64 with I, M, A, F, D, C, S and U.
pub const MISA_VALUE: u64 =
    (2 << 62) | (1 << 0) | (1 << 2) | (1 << 3) | (1 << 5) | (1 << 8) | (1 << 12) | (1 << 18) | (1 << 20);
/// satp modes this machine implements: Bare and Sv39 (WARL: a write naming another mode has no effect).
pub const SATP_MODE_SV39: u64 = 8;
const SATP_MODE_SHIFT: u32 = 60;
/// satp's ASID field is 16 bits wide (the functional model flushes its translation caches on every satp change,
/// which ASIDs permit).
const SATP_WRITABLE: u64 = (0xf << SATP_MODE_SHIFT) | (0xffff << 44) | ((1 << 44) - 1);

/// What a CSR access or a system instruction asks of the machine beyond the hart's own state.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Effect {
    /// Nothing more: continue at the next instruction.
    None,
    /// Translation may have changed (satp, or a field of mstatus/privilege that translation reads): hand the new
    /// context to guest memory.
    Context,
    /// sfence.vma: flush the translation caches (the functional model flushes all of them).
    Fence,
    /// wfi: sleep until an interrupt is pending.
    Wait,
}

/// A system instruction the executor stops on (decoded from its word here, not in the hot decoder).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SysInst {
    /// csrrw/csrrs/csrrc (`op` 1/2/3) and their immediate forms; `src` is rs1 or the immediate.
    Csr {
        csr: u16,
        op: u32,
        rd: u8,
        src_reg: Option<u8>,
        imm: u64,
    },
    Mret,
    Sret,
    Wfi,
    SfenceVma,
}

/// Decode the system instruction `raw` (opcode 0x73), or None when it is not one this module executes.
pub fn decode_sys(raw: u32) -> Option<SysInst> {
    if raw & 0x7f != 0x73 {
        return None;
    }
    let f3 = (raw >> 12) & 7;
    let rd = ((raw >> 7) & 0x1f) as u8;
    let rs1 = ((raw >> 15) & 0x1f) as u8;
    match f3 {
        1..=3 => Some(SysInst::Csr { csr: (raw >> 20) as u16, op: f3, rd, src_reg: Some(rs1), imm: 0 }),
        5..=7 => Some(SysInst::Csr { csr: (raw >> 20) as u16, op: f3 - 4, rd, src_reg: None, imm: rs1 as u64 }),
        0 if rd == 0 => match raw >> 20 {
            0x302 if rs1 == 0 => Some(SysInst::Mret),
            0x102 if rs1 == 0 => Some(SysInst::Sret),
            0x105 if rs1 == 0 => Some(SysInst::Wfi),
            _ if raw >> 25 == 0x09 => Some(SysInst::SfenceVma),
            _ => None,
        },
        _ => None,
    }
}

/// The privileged state of one hart.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Privileged {
    pub hart_id: u64,
    pub prv: u8,
    pub mstatus: u64,
    pub medeleg: u64,
    pub mideleg: u64,
    pub mie: u64,
    /// The software-written bits of mip (SSIP, STIP, SEIP from S mode or the firmware); the devices' lines
    /// (MTIP, MSIP, MEIP, SEIP from the PLIC) are ORed in by the machine through `set_irq_line`.
    pub mip: u64,
    pub mtvec: u64,
    pub mscratch: u64,
    pub mepc: u64,
    pub mcause: u64,
    pub mtval: u64,
    pub mcounteren: u64,
    pub menvcfg: u64,
    pub stvec: u64,
    pub sscratch: u64,
    pub sepc: u64,
    pub scause: u64,
    pub stval: u64,
    pub scounteren: u64,
    pub senvcfg: u64,
    pub satp: u64,
    /// PMP registers: written and read back, not enforced (the machine has one trusted firmware, the simulator).
    pub pmpcfg: [u64; 2],
    pub pmpaddr: [u64; 16],
    /// Traps taken (statistic): exceptions and interrupts, by the level they went to.
    pub traps_to_s: u64,
    pub traps_to_m: u64,
    pub interrupts: u64,
}

impl Privileged {
    /// A hart at reset: M mode, everything off, mstatus's XLEN fields 64-bit.
    pub fn new(hart_id: u64) -> Privileged {
        Privileged {
            hart_id,
            prv: PRV_M,
            mstatus: status::XL64,
            medeleg: 0,
            mideleg: 0,
            mie: 0,
            mip: 0,
            mtvec: 0,
            mscratch: 0,
            mepc: 0,
            mcause: 0,
            mtval: 0,
            mcounteren: 0,
            menvcfg: 0,
            stvec: 0,
            sscratch: 0,
            sepc: 0,
            scause: 0,
            stval: 0,
            scounteren: 0,
            senvcfg: 0,
            satp: 0,
            pmpcfg: [0; 2],
            pmpaddr: [0; 16],
            traps_to_s: 0,
            traps_to_m: 0,
            interrupts: 0,
        }
    }

    /// What translation depends on now.
    pub fn xlate_context(&self) -> XlateContext {
        let data_prv = if self.mstatus & status::MPRV != 0 && self.prv == PRV_M {
            ((self.mstatus & status::MPP) >> status::MPP_SHIFT) as u8
        } else {
            self.prv
        };
        XlateContext {
            satp: if self.satp >> SATP_MODE_SHIFT == SATP_MODE_SV39 { self.satp } else { 0 },
            fetch_prv: self.prv,
            data_prv,
            sum: self.mstatus & status::SUM != 0,
            mxr: self.mstatus & status::MXR != 0,
        }
    }

    fn sd_fixed(v: u64) -> u64 {
        // SD summarises FS (and XS, VS: always off here).
        if v & status::FS == status::FS {
            v | status::SD
        } else {
            v & !status::SD
        }
    }

    /// Read CSR `n` as the instruction at the current privilege would (`counters`: cycle, time, instret now).
    pub fn read_csr(&self, n: u16, counters: [u64; 3]) -> Result<u64, Trap> {
        use csr::*;
        if (n >> 8) & 3 > self.prv as u16 {
            return Err(Trap::Csr(n));
        }
        Ok(match n {
            SSTATUS => self.mstatus & status::SSTATUS_MASK,
            SIE => self.mie & self.mideleg,
            SIP => self.mip & self.mideleg,
            STVEC => self.stvec,
            SCOUNTEREN => self.scounteren,
            SENVCFG => self.senvcfg,
            SSCRATCH => self.sscratch,
            SEPC => self.sepc,
            SCAUSE => self.scause,
            STVAL => self.stval,
            SATP => {
                if self.prv == PRV_S && self.mstatus & status::TVM != 0 {
                    return Err(Trap::Csr(n));
                }
                self.satp
            }
            MSTATUS => self.mstatus,
            MISA => MISA_VALUE,
            MEDELEG => self.medeleg,
            MIDELEG => self.mideleg,
            MIE => self.mie,
            MIP => self.mip,
            MTVEC => self.mtvec,
            MCOUNTEREN => self.mcounteren,
            MENVCFG => self.menvcfg,
            MCOUNTINHIBIT => 0,
            MSCRATCH => self.mscratch,
            MEPC => self.mepc,
            MCAUSE => self.mcause,
            MTVAL => self.mtval,
            MVENDORID | MARCHID | MIMPID | MCONFIGPTR => 0u64,
            MHARTID => self.hart_id,
            0x3a0 | 0x3a2 => self.pmpcfg[((n - 0x3a0) / 2) as usize],
            0x3b0..=0x3bf => self.pmpaddr[(n - 0x3b0) as usize],
            CYCLE | TIME | INSTRET => {
                let bit = 1 << (n - CYCLE);
                let allowed = self.prv == PRV_M
                    || (self.mcounteren & bit != 0 && (self.prv == PRV_S || self.scounteren & bit != 0));
                if !allowed {
                    return Err(Trap::Csr(n));
                }
                counters[(n - CYCLE) as usize]
            }
            MCYCLE => counters[0],
            MINSTRET => counters[2],
            // The other hardware performance counters and their events exist and read zero (none is implemented).
            0xb03..=0xb1f | 0x323..=0x33f => 0,
            _ => return Err(Trap::Csr(n)),
        })
    }

    /// Write CSR `n` (already allowed by `read_csr`'s privilege rule, and not read-only).
    pub fn write_csr(&mut self, n: u16, v: u64) -> Result<Effect, Trap> {
        use csr::*;
        if (n >> 8) & 3 > self.prv as u16 || n >> 10 == 3 {
            return Err(Trap::Csr(n));
        }
        let mut effect = Effect::None;
        match n {
            SSTATUS => {
                let m = status::SSTATUS_MASK & status::MSTATUS_WRITABLE;
                self.mstatus = Self::sd_fixed((self.mstatus & !m) | (v & m));
                effect = Effect::Context;
            }
            SIE => self.mie = (self.mie & !self.mideleg) | (v & self.mideleg),
            // Of sip, S mode may write only SSIP (STIP and SEIP are the firmware's and the PLIC's).
            SIP => {
                let m = self.mideleg & (1 << irq::SSI);
                self.mip = (self.mip & !m) | (v & m);
            }
            STVEC => self.stvec = v & !2,
            SCOUNTEREN => self.scounteren = v & 7,
            SENVCFG => self.senvcfg = 0,
            SSCRATCH => self.sscratch = v,
            SEPC => self.sepc = v & !1,
            SCAUSE => self.scause = v,
            STVAL => self.stval = v,
            SATP => {
                if self.prv == PRV_S && self.mstatus & status::TVM != 0 {
                    return Err(Trap::Csr(n));
                }
                let mode = v >> SATP_MODE_SHIFT;
                if mode == 0 || mode == SATP_MODE_SV39 {
                    self.satp = v & SATP_WRITABLE;
                    effect = Effect::Context;
                }
            }
            MSTATUS => {
                let m = status::MSTATUS_WRITABLE;
                let mut new = (self.mstatus & !m) | (v & m);
                // MPP is WARL: the unimplemented level 2 reads as U.
                if (new & status::MPP) >> status::MPP_SHIFT == 2 {
                    new &= !status::MPP;
                }
                self.mstatus = Self::sd_fixed(new);
                effect = Effect::Context;
            }
            MISA | MCOUNTINHIBIT | MENVCFG => {}
            MEDELEG => self.medeleg = v & cause::DELEGABLE,
            MIDELEG => self.mideleg = v & irq::S_MASK,
            MIE => self.mie = v & (irq::S_MASK | irq::M_MASK),
            // M mode may write the S-level pending bits; MTIP, MSIP and MEIP are the devices' (read-only here).
            MIP => self.mip = (self.mip & !irq::S_MASK) | (v & irq::S_MASK),
            MTVEC => self.mtvec = v & !2,
            MCOUNTEREN => self.mcounteren = v & 7,
            MSCRATCH => self.mscratch = v,
            MEPC => self.mepc = v & !1,
            MCAUSE => self.mcause = v,
            MTVAL => self.mtval = v,
            0x3a0 | 0x3a2 => self.pmpcfg[((n - 0x3a0) / 2) as usize] = v,
            0x3b0..=0x3bf => self.pmpaddr[(n - 0x3b0) as usize] = v & ((1 << 54) - 1),
            MCYCLE | MINSTRET | 0xb03..=0xb1f | 0x323..=0x33f => {}
            _ => return Err(Trap::Csr(n)),
        }
        Ok(effect)
    }

    /// Set or clear a device's interrupt line (MTIP, MSIP, MEIP, SEIP, or STIP when the firmware injects it).
    pub fn set_irq_line(&mut self, bit: u32, level: bool) {
        if level {
            self.mip |= 1 << bit;
        } else {
            self.mip &= !(1 << bit);
        }
    }

    /// Is some interrupt pending and enabled in mie (what wakes wfi, whatever the global enables)?
    pub fn wakeup_pending(&self) -> bool {
        self.mip & self.mie != 0
    }

    /// The interrupt to take now, if any (privileged spec 3.1.6.1 and 3.1.9).
    pub fn pending_interrupt(&self) -> Option<u32> {
        let pending = self.mip & self.mie;
        if pending == 0 {
            return None;
        }
        let m_enabled = self.prv < PRV_M || self.mstatus & status::MIE != 0;
        let s_enabled = self.prv < PRV_S || (self.prv == PRV_S && self.mstatus & status::SIE != 0);
        let m_pending = if m_enabled { pending & !self.mideleg } else { 0 };
        let s_pending = if s_enabled { pending & self.mideleg } else { 0 };
        let take = if m_pending != 0 { m_pending } else { s_pending };
        irq::PRIORITY.iter().copied().find(|&i| take & (1 << i) != 0)
    }

    /// Take a trap at `pc`: `cause` (with `cause::INTERRUPT` for interrupts) and `tval`. Returns the handler's PC.
    pub fn take_trap(&mut self, pc: u64, cause: u64, tval: u64) -> u64 {
        let interrupt = cause & cause::INTERRUPT != 0;
        let code = cause & !cause::INTERRUPT;
        let deleg = if interrupt { self.mideleg } else { self.medeleg };
        if interrupt {
            self.interrupts += 1;
        }
        if self.prv <= PRV_S && (deleg >> code) & 1 != 0 {
            self.traps_to_s += 1;
            self.scause = cause;
            self.sepc = pc;
            self.stval = tval;
            let mut s = self.mstatus & !(status::SPP | status::SPIE | status::SIE);
            if self.prv == PRV_S {
                s |= status::SPP;
            }
            if self.mstatus & status::SIE != 0 {
                s |= status::SPIE;
            }
            self.mstatus = s;
            self.prv = PRV_S;
            vector(self.stvec, interrupt, code)
        } else {
            self.traps_to_m += 1;
            self.mcause = cause;
            self.mepc = pc;
            self.mtval = tval;
            let mut s = self.mstatus & !(status::MPP | status::MPIE | status::MIE);
            s |= (self.prv as u64) << status::MPP_SHIFT;
            if self.mstatus & status::MIE != 0 {
                s |= status::MPIE;
            }
            self.mstatus = s;
            self.prv = PRV_M;
            vector(self.mtvec, interrupt, code)
        }
    }

    /// mret: returns the new PC, or the illegal-instruction trap below M mode.
    pub fn mret(&mut self) -> Result<u64, Trap> {
        if self.prv != PRV_M {
            return Err(Trap::Illegal("mret below M mode"));
        }
        let mpp = ((self.mstatus & status::MPP) >> status::MPP_SHIFT) as u8;
        let mut s = self.mstatus & !(status::MIE | status::MPP);
        if self.mstatus & status::MPIE != 0 {
            s |= status::MIE;
        }
        s |= status::MPIE;
        if mpp != PRV_M {
            s &= !status::MPRV;
        }
        self.mstatus = s;
        self.prv = mpp;
        Ok(self.mepc)
    }

    /// sret: returns the new PC, or the illegal-instruction trap in U mode (or in S mode under TSR).
    pub fn sret(&mut self) -> Result<u64, Trap> {
        if self.prv < PRV_S || (self.prv == PRV_S && self.mstatus & status::TSR != 0) {
            return Err(Trap::Illegal("sret in U mode, or in S mode with mstatus.TSR set"));
        }
        let spp = if self.mstatus & status::SPP != 0 { PRV_S } else { PRV_U };
        let mut s = self.mstatus & !(status::SIE | status::SPP | status::MPRV);
        if self.mstatus & status::SPIE != 0 {
            s |= status::SIE;
        }
        s |= status::SPIE;
        self.mstatus = s;
        self.prv = spp;
        Ok(self.sepc)
    }

    /// May wfi / sfence.vma run at this privilege?
    pub fn check_wfi(&self) -> Result<(), Trap> {
        if self.prv == PRV_U || (self.prv == PRV_S && self.mstatus & status::TW != 0) {
            return Err(Trap::Illegal("wfi in U mode, or in S mode with mstatus.TW set"));
        }
        Ok(())
    }

    pub fn check_sfence(&self) -> Result<(), Trap> {
        if self.prv == PRV_U || (self.prv == PRV_S && self.mstatus & status::TVM != 0) {
            return Err(Trap::Illegal("sfence.vma in U mode, or in S mode with mstatus.TVM set"));
        }
        Ok(())
    }

    /// The floating-point unit was used (an F/D instruction or fcsr access may have written state): mark
    /// mstatus.FS dirty, which Linux reads to decide whether to save a task's FP registers. Set conservatively at
    /// every trap from a level with FS on, as the spec permits.
    pub fn mark_fp_dirty(&mut self) {
        if self.mstatus & status::FS != 0 {
            self.mstatus |= status::FS_DIRTY | status::SD;
        }
    }
}

fn vector(tvec: u64, interrupt: bool, code: u64) -> u64 {
    let base = tvec & !3;
    if interrupt && tvec & 1 != 0 {
        base + 4 * code
    } else {
        base
    }
}

/// The exception (cause, tval) a fault raised by the executor or memory becomes in FS mode, for the instruction
/// with word `word`. None for the faults that are the simulator's own errors (memory limit, simulator
/// calls), which stop the run.
pub fn exception_of(trap: &Trap, word: u32) -> Option<(u64, u64)> {
    use cause::*;
    let by_access = |access: Access, fetch, load, store| match access {
        Access::Fetch => fetch,
        Access::Load => load,
        Access::Store | Access::Atomic => store,
    };
    Some(match *trap {
        Trap::Misaligned { addr, access, .. } => {
            (by_access(access, FETCH_MISALIGNED, LOAD_MISALIGNED, STORE_MISALIGNED), addr)
        }
        Trap::Unmapped { addr, access } | Trap::Protection { addr, access } | Trap::Mmio { addr, access, .. } => {
            (by_access(access, FETCH_ACCESS, LOAD_ACCESS, STORE_ACCESS), addr)
        }
        Trap::PageFault { addr, access } => (by_access(access, FETCH_PAGE, LOAD_PAGE, STORE_PAGE), addr),
        Trap::Illegal(_) | Trap::Csr(_) => (ILLEGAL, word as u64),
        // The privileged architecture lets tval be the instruction's address or zero for ebreak; zero as
        // qemu-system-riscv64 (the reference) writes (tests/test_fs_random.py).
        Trap::Ebreak => (BREAKPOINT, 0),
        Trap::Limit { .. } | Trap::Syscall(_) | Trap::NoSocket { .. } => return None,
    })
}

#[cfg(test)]
#[path = "privileged_tests.rs"]
mod tests;
