//! System calls (the Linux subset of workloads/ABI.md) and simulator calls, performed after a hart's `ecall`.

use crate::abi::{self, errno, simcall, sys, PAGE_SIZE};
use crate::mem::page_up;
use crate::sim::Machine;
use crate::trap::Trap;

const MAP_SHARED: u64 = 0x01;
const MAP_PRIVATE: u64 = 0x02;
const MAP_FIXED: u64 = 0x10;
const MAP_ANONYMOUS: u64 = 0x20;
const RLIMIT_STACK: u64 = 3;
/// Gap kept between the top of the brk heap and the lowest mapping.
const HEAP_MMAP_GAP: u64 = 1 << 20;

fn neg(e: i64) -> u64 {
    (-e) as u64
}

/// splitmix64: the deterministic generator behind getrandom.
pub fn splitmix64(state: &mut u64) -> u64 {
    *state = state.wrapping_add(0x9e37_79b9_7f4a_7c15);
    let mut z = *state;
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

impl Machine {
    /// Perform the call hart `hid` asked for with `ecall` (number in a7, arguments a0..a5, result to a0).
    /// Err only for calls that stop the run (unsupported numbers, exceeding mem_limit while copying).
    pub fn syscall(&mut self, hid: usize) -> Result<(), Trap> {
        let h = &self.harts[hid];
        let nr = h.x[17];
        let args = [h.x[10], h.x[11], h.x[12], h.x[13], h.x[14], h.x[15]];
        let result = if (simcall::FIRST..=simcall::LAST).contains(&nr) {
            self.harts[hid].cnt.simcalls += 1;
            self.simcall(hid, nr, args)?
        } else {
            self.harts[hid].cnt.syscalls += 1;
            self.linux_call(hid, nr, args)?
        };
        if let Some(v) = result {
            self.harts[hid].x[10] = v;
        }
        Ok(())
    }

    /// Memory faults inside a call's buffers become -EFAULT; exceeding mem_limit still stops the run.
    fn efault(t: Trap) -> Result<Option<u64>, Trap> {
        match t {
            Trap::Limit { .. } => Err(t),
            _ => Ok(Some(neg(errno::EFAULT))),
        }
    }

    fn linux_call(&mut self, hid: usize, nr: u64, a: [u64; 6]) -> Result<Option<u64>, Trap> {
        let r = match nr {
            sys::WRITE => {
                let bytes = match self.mem.read_bytes(a[1], a[2]) {
                    Ok(b) => b,
                    Err(t) => return Self::efault(t),
                };
                self.write_fd(a[0], &bytes)
            }
            sys::WRITEV => {
                if a[2] > 1024 {
                    return Ok(Some(neg(errno::EINVAL)));
                }
                let mut all = Vec::new();
                for i in 0..a[2] {
                    let iov = a[1].wrapping_add(16 * i);
                    let base = self.mem.read_bytes(iov, 8).map(|b| u64::from_le_bytes(b.try_into().unwrap_or([0; 8])));
                    let len = self
                        .mem
                        .read_bytes(iov.wrapping_add(8), 8)
                        .map(|b| u64::from_le_bytes(b.try_into().unwrap_or([0; 8])));
                    let (base, len) = match (base, len) {
                        (Ok(b), Ok(l)) => (b, l),
                        (Err(t), _) | (_, Err(t)) => return Self::efault(t),
                    };
                    match self.mem.read_bytes(base, len) {
                        Ok(b) => all.extend_from_slice(&b),
                        Err(t) => return Self::efault(t),
                    }
                }
                self.write_fd(a[0], &all)
            }
            sys::EXIT => {
                let h = &mut self.harts[hid];
                h.exit_code = Some((a[0] & 0xff) as i64);
                h.ended = true;
                return Ok(None);
            }
            sys::EXIT_GROUP => {
                self.group_exit = Some((a[0] & 0xff) as i64);
                self.harts[hid].exit_code = Some((a[0] & 0xff) as i64);
                for h in &mut self.harts {
                    h.ended = true;
                }
                return Ok(None);
            }
            sys::SET_TID_ADDRESS => hid as u64 + 1,
            sys::SET_ROBUST_LIST | sys::MPROTECT => 0,
            sys::CLOCK_GETTIME => {
                let ps = self.harts[hid].time_ps();
                let ns = ps / 1000;
                let mut buf = [0u8; 16];
                buf[..8].copy_from_slice(&(ns / 1_000_000_000).to_le_bytes());
                buf[8..].copy_from_slice(&(ns % 1_000_000_000).to_le_bytes());
                match self.mem.write_bytes(hid, a[1], &buf) {
                    Ok(()) => 0,
                    Err(t) => return Self::efault(t),
                }
            }
            sys::UNAME => {
                let mut buf = [0u8; 6 * 65];
                for (i, s) in ["Linux", "kvsim", "6.1.0-kvsim", "#1 SMP kvsim", "riscv64", "(none)"].iter().enumerate()
                {
                    buf[i * 65..i * 65 + s.len()].copy_from_slice(s.as_bytes());
                }
                match self.mem.write_bytes(hid, a[0], &buf) {
                    Ok(()) => 0,
                    Err(t) => return Self::efault(t),
                }
            }
            sys::PRLIMIT64 => {
                if a[3] != 0 {
                    let lim = if a[1] == RLIMIT_STACK { self.stack_size } else { u64::MAX };
                    let mut buf = [0u8; 16];
                    buf[..8].copy_from_slice(&lim.to_le_bytes());
                    buf[8..].copy_from_slice(&lim.to_le_bytes());
                    if let Err(t) = self.mem.write_bytes(hid, a[3], &buf) {
                        return Self::efault(t);
                    }
                }
                0
            }
            sys::GETRANDOM => {
                let len = a[1].min(1 << 20);
                let mut buf = Vec::with_capacity(len as usize);
                while (buf.len() as u64) < len {
                    buf.extend_from_slice(&splitmix64(&mut self.rng).to_le_bytes());
                }
                buf.truncate(len as usize);
                match self.mem.write_bytes(hid, a[0], &buf) {
                    Ok(()) => len,
                    Err(t) => return Self::efault(t),
                }
            }
            sys::READLINKAT => neg(errno::ENOENT),
            sys::RSEQ => neg(errno::ENOSYS),
            sys::BRK => self.brk(a[0]),
            sys::MMAP => self.mmap(a[0], a[1], a[3]),
            sys::MUNMAP => self.munmap(a[0], a[1]),
            _ => return Err(Trap::Syscall(nr)),
        };
        Ok(Some(r))
    }

    fn write_fd(&mut self, fd: u64, bytes: &[u8]) -> u64 {
        match fd {
            1 => self.stdout.extend_from_slice(bytes),
            2 => self.stderr.extend_from_slice(bytes),
            _ => return neg(errno::EBADF),
        }
        bytes.len() as u64
    }

    fn brk(&mut self, new: u64) -> u64 {
        let r = &self.mem.regions;
        let old = r.brk;
        if new < r.heap_start || page_up(new) == 0 || page_up(new).saturating_add(HEAP_MMAP_GAP) > self.mmap_low {
            return old;
        }
        if page_up(new) < page_up(old) {
            self.mem.free_range(page_up(new), page_up(old));
        }
        self.mem.regions.brk = new;
        new
    }

    /// Does [start, end) overlap an existing mapping?
    fn mmap_overlap(&self, start: u64, end: u64) -> Option<(u64, u64)> {
        self.mem.regions.mmaps.range(..end).next_back().map(|(&s, &e)| (s, e)).filter(|&(_, e)| e > start)
    }

    /// Carve `len` bytes (page multiple), aligned to `align` (power of two ≥ a page), below every mapping.
    pub fn mmap_alloc(&mut self, len: u64, align: u64) -> Option<u64> {
        let floor = page_up(self.mem.regions.brk).saturating_add(HEAP_MMAP_GAP);
        let mut top = self.mmap_low;
        loop {
            let start = top.checked_sub(len)? & !(align - 1);
            if start < floor {
                return None;
            }
            match self.mmap_overlap(start, start + len) {
                Some((s, _)) => top = s,
                None => {
                    self.mem.regions.mmaps.insert(start, start + len);
                    self.mmap_low = self.mmap_low.min(start);
                    return Some(start);
                }
            }
        }
    }

    fn mmap(&mut self, addr: u64, len: u64, flags: u64) -> u64 {
        if len == 0 || flags & MAP_SHARED != 0 || flags & MAP_ANONYMOUS == 0 || flags & MAP_PRIVATE == 0 {
            return neg(errno::EINVAL);
        }
        let len = page_up(len);
        if len == 0 || len > abi::MMAP_TOP {
            return neg(errno::ENOMEM);
        }
        if flags & MAP_FIXED != 0 {
            let floor = page_up(self.mem.regions.brk).saturating_add(HEAP_MMAP_GAP);
            if addr & (PAGE_SIZE - 1) != 0 || addr < floor || addr.checked_add(len).is_none_or(|e| e > abi::MMAP_TOP) {
                return neg(errno::EINVAL);
            }
            self.unmap_range(addr, addr + len);
            self.mem.regions.mmaps.insert(addr, addr + len);
            self.mmap_low = self.mmap_low.min(addr);
            return addr;
        }
        match self.mmap_alloc(len, PAGE_SIZE) {
            Some(a) => a,
            None => neg(errno::ENOMEM),
        }
    }

    fn munmap(&mut self, addr: u64, len: u64) -> u64 {
        if addr & (PAGE_SIZE - 1) != 0 || len == 0 {
            return neg(errno::EINVAL);
        }
        let Some(end) = addr.checked_add(len).map(page_up).filter(|&e| e != 0) else {
            return neg(errno::EINVAL);
        };
        self.unmap_range(addr, end);
        0
    }

    /// Remove [start, end) from the anonymous mappings and free its pages.
    fn unmap_range(&mut self, start: u64, end: u64) {
        let hit: Vec<(u64, u64)> =
            self.mem.regions.mmaps.range(..end).filter(|&(_, &e)| e > start).map(|(&s, &e)| (s, e)).collect();
        for (s, e) in hit {
            self.mem.regions.mmaps.remove(&s);
            if s < start {
                self.mem.regions.mmaps.insert(s, start);
            }
            if e > end {
                self.mem.regions.mmaps.insert(end, e);
            }
            self.mem.free_range(s.max(start), e.min(end));
        }
    }

    fn simcall(&mut self, hid: usize, nr: u64, a: [u64; 6]) -> Result<Option<u64>, Trap> {
        let r = match nr {
            simcall::HART_ID => hid as u64,
            simcall::NUM_HARTS => self.harts.len() as u64,
            simcall::ROI_BEGIN => {
                if self.roi_begin.is_none() {
                    self.roi_begin = Some(self.total_insts());
                    self.reset_stats();
                }
                0
            }
            simcall::ROI_END => {
                self.roi_end = Some(self.total_insts());
                0
            }
            simcall::SOCKET_OF => {
                if a[0] < self.harts.len() as u64 {
                    0
                } else {
                    neg(errno::EINVAL)
                }
            }
            simcall::ALLOC_LOCAL => {
                let align = a[1].max(PAGE_SIZE);
                if !align.is_power_of_two() || a[0] == 0 || page_up(a[0]) == 0 {
                    0
                } else {
                    self.mmap_alloc(page_up(a[0]), align).unwrap_or(0)
                }
            }
            simcall::STATS_DUMP => {
                self.stats_dumps += 1;
                if self.stat_dumps.len() < crate::output::MAX_STAT_DUMPS {
                    let ticks = self.sim_ticks();
                    let snapshot = self.stats(ticks);
                    self.stat_dumps.push((ticks, snapshot));
                }
                0
            }
            simcall::STATS_RESET => {
                self.reset_stats();
                0
            }
            simcall::NIC_NUM_QUEUES => self.net.as_ref().map_or(0, |n| n.queue_port.len() as u64),
            simcall::NIC_QUEUE_OF => {
                match self.net.as_ref().and_then(|n| n.hart_queue.get(a[0] as usize).copied().flatten()) {
                    Some(q) if a[0] < self.harts.len() as u64 => q as u64,
                    _ => neg(errno::ENODEV),
                }
            }
            simcall::NIC_QUEUE_REGS | simcall::NIC_QUEUE_PORT | simcall::NIC_QUEUE_NIC => {
                let q = usize::try_from(a[0]).unwrap_or(usize::MAX);
                match self.net.as_ref().filter(|n| q < n.queue_port.len()) {
                    Some(n) if nr == simcall::NIC_QUEUE_REGS => n.queue_regs(q).unwrap_or(0),
                    Some(n) if nr == simcall::NIC_QUEUE_PORT => n.queue_port[q],
                    Some(n) => n.queue_at[q].0 as u64,
                    None => neg(errno::ENODEV),
                }
            }
            simcall::NIC_COUNT => self.net.as_ref().map_or(0, |n| n.nics.len() as u64),
            // Taken at the end of this hart's turn (sim.rs), which the call ends.
            simcall::CHECKPOINT => {
                self.checkpoint_pending = true;
                0
            }
            _ => return Err(Trap::Syscall(nr)),
        };
        Ok(Some(r))
    }
}
