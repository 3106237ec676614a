//! Linux threads on harts: `clone(CLONE_VM | CLONE_THREAD | ...)`, thread `exit`, and futexes.
//!
//! A program is run as a Linux process when its ELF has a PT_TLS segment (static glibc always has one; the
//! freestanding kvsim runtime has none and keeps its model: every hart starts at the entry point). In a Linux
//! process only hart 0 starts; the other `System.harts - 1` harts sit idle until a `clone` starts a thread on the
//! lowest idle one, so a pthreads program runs one thread per simulated core and `System.harts` is the number of
//! cores (the most threads alive at once). A clone with no idle hart fails with EAGAIN, as Linux does at its
//! thread limit. A thread's `exit` makes its hart idle again (reusable); the run ends when no hart is running.
//!
//! Futex waits block the hart (it is skipped by the scheduler) until a `FUTEX_WAKE` on the same address; wakes go
//! to the lowest-numbered waiters, so runs are deterministic. When every thread waits, a wait with a timeout
//! returns ETIMEDOUT; if none has a timeout the run stops with a deadlock error instead of hanging.

use crate::numbers::{CLONE, FUTEX, PID};
use crate::process::Linux;
use kvsim_isa::hart::FutexWait;
use kvsim_isa::trap::Trap;

const CLONE_VM: u64 = 0x100;
const CLONE_THREAD: u64 = 0x10000;
const CLONE_SETTLS: u64 = 0x80000;
const CLONE_PARENT_SETTID: u64 = 0x100000;
const CLONE_CHILD_CLEARTID: u64 = 0x200000;
const CLONE_CHILD_SETTID: u64 = 0x0100_0000;

const FUTEX_WAIT: u64 = 0;
const FUTEX_WAKE: u64 = 1;
const FUTEX_WAIT_BITSET: u64 = 9;
const FUTEX_WAKE_BITSET: u64 = 10;
/// FUTEX_PRIVATE_FLAG and FUTEX_CLOCK_REALTIME: no difference inside one simulated process.
const FUTEX_OP_MASK: u64 = 0x7f;

const EAGAIN: i64 = 11;
const ETIMEDOUT: i64 = 110;

fn neg(e: i64) -> u64 {
    (-e) as u64
}

pub use crate::process::Threads;

impl Linux<'_> {
    /// clone: only threads (CLONE_VM | CLONE_THREAD); a fork stops the run as an unsupported call.
    pub fn clone_thread(&mut self, hid: usize, a: [u64; 6]) -> Result<Option<u64>, Trap> {
        let (flags, newsp, parent_tid, tls, child_tid) = (a[0], a[1], a[2], a[3], a[4]);
        if flags & (CLONE_VM | CLONE_THREAD) != CLONE_VM | CLONE_THREAD {
            return Err(Trap::Syscall(CLONE));
        }
        let Some(child) = (0..self.harts.len()).find(|&i| i != hid && self.harts[i].idle) else {
            return Ok(Some(neg(EAGAIN)));
        };
        let tid = PID + child as u64;
        let tid_bytes = (tid as u32).to_le_bytes();
        if flags & CLONE_PARENT_SETTID != 0 {
            if let Err(t) = self.mem.write_bytes(hid, parent_tid, &tid_bytes) {
                return Self::efault_or_stop(t);
            }
        }
        if flags & CLONE_CHILD_SETTID != 0 {
            if let Err(t) = self.mem.write_bytes(hid, child_tid, &tid_bytes) {
                return Self::efault_or_stop(t);
            }
        }
        self.process.threads.clear_child_tid[child] = if flags & CLONE_CHILD_CLEARTID != 0 { child_tid } else { 0 };
        let parent = &self.harts[hid];
        let (x, fcsr, pc) = (parent.x, parent.fcsr, parent.pc);
        let c = &mut self.harts[child];
        c.x = x;
        c.fcsr = fcsr;
        c.pc = pc; // past the ecall, like the parent
        c.x[10] = 0;
        if newsp != 0 {
            c.x[2] = newsp;
        }
        if flags & CLONE_SETTLS != 0 {
            c.x[4] = tls;
        }
        c.idle = false;
        c.ended = false;
        c.exit_code = None;
        c.futex = None;
        Ok(Some(tid))
    }

    /// exit (one thread): in a Linux process the hart becomes idle, its clear_child_tid word is zeroed and one
    /// waiter on it woken (how pthread_join learns of the exit); otherwise the hart stops, as before.
    pub fn exit_thread(&mut self, hid: usize, status: u64) {
        let h = &mut self.harts[hid];
        h.exit_code = Some((status & 0xff) as i64);
        if !self.process.threads.linux {
            h.ended = true;
            return;
        }
        h.idle = true;
        let addr = std::mem::take(&mut self.process.threads.clear_child_tid[hid]);
        if addr != 0 && self.mem.write_bytes(hid, addr, &[0; 4]).is_ok() {
            self.futex_wake(addr, 1);
        }
    }

    fn efault_or_stop(t: Trap) -> Result<Option<u64>, Trap> {
        match t {
            Trap::Limit { .. } => Err(t),
            _ => Ok(Some(neg(kvsim_base::abi::errno::EFAULT))),
        }
    }

    /// futex(uaddr, op, val, timeout, ...): WAIT and WAKE (and their BITSET forms, with any mask).
    pub fn futex(&mut self, hid: usize, a: [u64; 6]) -> Result<Option<u64>, Trap> {
        let (addr, op, val, timeout) = (a[0], a[1] & FUTEX_OP_MASK, a[2], a[3]);
        match op {
            FUTEX_WAIT | FUTEX_WAIT_BITSET => {
                let word = match self.mem.read_bytes(addr, 4) {
                    Ok(b) => u32::from_le_bytes(b.try_into().unwrap_or([0; 4])),
                    Err(t) => return Self::efault_or_stop(t),
                };
                if word != val as u32 {
                    return Ok(Some(neg(EAGAIN)));
                }
                // Blocked; a0 is written when it is woken (0) or times out.
                self.harts[hid].futex = Some(FutexWait { addr, has_timeout: timeout != 0 });
                Ok(None)
            }
            FUTEX_WAKE | FUTEX_WAKE_BITSET => Ok(Some(self.futex_wake(addr, val.min(u32::MAX as u64)))),
            _ => Err(Trap::Syscall(FUTEX)),
        }
    }

    /// Wake up to `n` harts waiting on `addr`, lowest id first; returns how many.
    pub fn futex_wake(&mut self, addr: u64, n: u64) -> u64 {
        let mut woken = 0;
        for h in self.harts.iter_mut() {
            if woken >= n {
                break;
            }
            if h.futex.is_some_and(|w| w.addr == addr) {
                h.futex = None;
                h.x[10] = 0;
                woken += 1;
            }
        }
        woken
    }

    /// No hart can run but some wait on futexes: time out the lowest waiter that has a timeout, or report the
    /// deadlock.
    pub fn resolve_all_waiting(&mut self) -> Result<(), String> {
        if let Some(h) = self.harts.iter_mut().find(|h| h.futex.is_some_and(|w| w.has_timeout)) {
            h.futex = None;
            h.x[10] = neg(ETIMEDOUT);
            return Ok(());
        }
        let waiting: Vec<String> = self
            .harts
            .iter()
            .filter_map(|h| h.futex.map(|w| format!("hart {} (pc {:#x}) on {:#x}", h.id, h.pc, w.addr)))
            .collect();
        Err(format!("deadlock: every live thread waits on a futex without a timeout: {}", waiting.join(", ")))
    }
}
