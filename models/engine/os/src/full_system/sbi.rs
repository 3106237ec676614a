//! The SBI firmware, implemented in the simulator (SBI spec 1.0): an `ecall` from S mode lands here instead of
//! in an M-mode firmware. Base, TIME, IPI, RFENCE, HSM and SRST, plus the legacy set_timer and console_putchar.
//! The effects are those OpenSBI has on qemu's virt board: set_timer programs the hart's CLINT mtimecmp and the
//! firmware raises STIP when it is reached; an IPI raises SSIP; a remote fence flushes translations.

use super::{HartRun, Machine};
use kvsim_isa::privileged::{irq, status, PRV_S};

pub mod eid {
    pub const LEGACY_SET_TIMER: u64 = 0x00;
    pub const LEGACY_PUTCHAR: u64 = 0x01;
    pub const BASE: u64 = 0x10;
    pub const TIME: u64 = 0x5449_4d45;
    pub const IPI: u64 = 0x73_5049;
    pub const RFENCE: u64 = 0x5246_4e43;
    pub const HSM: u64 = 0x48_534d;
    pub const SRST: u64 = 0x5352_5354;
}

/// SBI error codes.
pub mod err {
    pub const SUCCESS: i64 = 0;
    pub const NOT_SUPPORTED: i64 = -2;
    pub const INVALID_PARAM: i64 = -3;
    pub const ALREADY_AVAILABLE: i64 = -6;
}

/// This implementation's identity: SBI spec 1.0; an implementation ID outside those the SBI spec assigns (it is
/// not OpenSBI and does not claim to be), version 1.
pub const SPEC_VERSION: u64 = 1 << 24;
pub const IMPL_ID: u64 = 0x4b56;
pub const IMPL_VERSION: u64 = 1;

const SUPPORTED: [u64; 6] = [eid::BASE, eid::TIME, eid::IPI, eid::RFENCE, eid::HSM, eid::SRST];

/// The HSM states of a hart (hart_get_status's values).
pub mod hsm {
    pub const STARTED: u64 = 0;
    pub const STOPPED: u64 = 1;
}

impl Machine {
    /// Perform the SBI call hart `h` made (its PC is past the ecall). Returns (error, value) for a0 and a1, or None
    /// for a legacy call (only a0).
    pub(super) fn sbi_call(&mut self, h: usize) {
        let x = &self.harts[h].x;
        let (a0, a1, a2, fid, ext) = (x[10], x[11], x[12], x[16], x[17]);
        self.sbi_calls += 1;
        let (error, value) = match ext {
            eid::LEGACY_SET_TIMER => {
                self.set_timer(h, a0);
                self.harts[h].x[10] = 0;
                return;
            }
            eid::LEGACY_PUTCHAR => {
                self.platform().uart.output.push(a0 as u8);
                self.harts[h].x[10] = 0;
                return;
            }
            eid::BASE => match fid {
                0 => (err::SUCCESS, SPEC_VERSION),
                1 => (err::SUCCESS, IMPL_ID),
                2 => (err::SUCCESS, IMPL_VERSION),
                3 => (err::SUCCESS, SUPPORTED.contains(&a0) as u64),
                4..=6 => (err::SUCCESS, 0),
                _ => (err::NOT_SUPPORTED, 0),
            },
            eid::TIME if fid == 0 => {
                self.set_timer(h, a0);
                (err::SUCCESS, 0)
            }
            eid::IPI if fid == 0 => match self.hart_mask(a0, a1) {
                Some(targets) => {
                    let now = self.harts[h].time_ps();
                    for t in targets {
                        self.prv[t].set_irq_line(irq::SSI, true);
                        self.wake(t, now);
                    }
                    (err::SUCCESS, 0)
                }
                None => (err::INVALID_PARAM, 0),
            },
            eid::RFENCE if fid <= 6 => match self.hart_mask(a0, a1) {
                Some(targets) => {
                    // One shared set of translation caches: a fence anywhere flushes it for every hart. The harts
                    // named flush their cores' TLBs (in detailed mode) before they run again.
                    self.mem.flush_translations();
                    for t in targets {
                        self.tlb_flush_pending[t] = true;
                    }
                    if fid == 0 {
                        self.mem.flush_code();
                    }
                    (err::SUCCESS, 0)
                }
                None => (err::INVALID_PARAM, 0),
            },
            eid::HSM => self.hsm_call(h, fid, a0, a1, a2),
            eid::SRST if fid == 0 => match a0 {
                0 => {
                    self.end = Some(super::End::PowerOff { code: if a1 == 0 { 0 } else { 1 } });
                    (err::SUCCESS, 0)
                }
                1 | 2 => {
                    self.end = Some(super::End::Reset);
                    (err::SUCCESS, 0)
                }
                _ => (err::INVALID_PARAM, 0),
            },
            _ => (err::NOT_SUPPORTED, 0),
        };
        self.harts[h].x[10] = error as u64;
        self.harts[h].x[11] = value;
    }

    /// sbi_set_timer: the next timer event of hart `h` at `stime` (timebase ticks); STIP clears until then.
    fn set_timer(&mut self, h: usize, stime: u64) {
        self.platform().clint.mtimecmp[h] = stime;
        self.prv[h].set_irq_line(irq::STI, false);
        self.firmware_timer[h] = true;
    }

    /// The harts named by an SBI hart mask (`base` = -1: all), or None if one does not exist.
    fn hart_mask(&self, mask: u64, base: u64) -> Option<Vec<usize>> {
        let n = self.harts.len();
        if base == u64::MAX {
            return Some((0..n).collect());
        }
        let mut v = Vec::new();
        for bit in 0..64 {
            if mask >> bit & 1 != 0 {
                let hart = base.checked_add(bit)? as usize;
                if hart >= n {
                    return None;
                }
                v.push(hart);
            }
        }
        Some(v)
    }

    fn hsm_call(&mut self, h: usize, fid: u64, a0: u64, a1: u64, a2: u64) -> (i64, u64) {
        let n = self.harts.len();
        match fid {
            // hart_start(hartid, start_addr, opaque): the hart enters S mode at start_addr with a0 = hartid,
            // a1 = opaque, translation and interrupts off, at the caller's time.
            0 => {
                let t = a0 as usize;
                if t >= n {
                    return (err::INVALID_PARAM, 0);
                }
                if self.run_state[t] != HartRun::Stopped {
                    return (err::ALREADY_AVAILABLE, 0);
                }
                let now = self.harts[h].time_ps();
                let target = &mut self.harts[t];
                if target.time_ps() < now {
                    target.idle_ps += now - target.time_ps();
                }
                target.pc = a1;
                target.x[10] = a0;
                target.x[11] = a2;
                let p = &mut self.prv[t];
                p.prv = PRV_S;
                p.satp = 0;
                p.mstatus &= !(status::SIE | status::MPRV);
                self.run_state[t] = HartRun::Running;
                (err::SUCCESS, 0)
            }
            // hart_stop: the calling hart stops (does not return on success).
            1 => {
                self.run_state[h] = HartRun::Stopped;
                (err::SUCCESS, 0)
            }
            2 => match self.run_state.get(a0 as usize) {
                Some(HartRun::Stopped) => (err::SUCCESS, hsm::STOPPED),
                Some(_) => (err::SUCCESS, hsm::STARTED),
                None => (err::INVALID_PARAM, 0),
            },
            // hart_suspend: the default retentive suspend is a wfi; non-retentive suspend is not offered.
            3 if a0 == 0 => {
                self.run_state[h] = HartRun::Asleep;
                (err::SUCCESS, 0)
            }
            _ => (err::NOT_SUPPORTED, 0),
        }
    }
}
