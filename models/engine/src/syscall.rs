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
/// More Linux riscv64 (asm-generic) call numbers: what static glibc uses at start-up and for ordinary programs.
mod linux {
    pub const IOCTL: u64 = 29;
    pub const OPENAT: u64 = 56;
    pub const CLOSE: u64 = 57;
    pub const READ: u64 = 63;
    pub const NEWFSTATAT: u64 = 79;
    pub const FSTAT: u64 = 80;
    pub const FUTEX: u64 = 98;
    pub const NANOSLEEP: u64 = 101;
    pub const CLOCK_NANOSLEEP: u64 = 115;
    pub const SCHED_GETAFFINITY: u64 = 123;
    pub const SCHED_YIELD: u64 = 124;
    pub const RT_SIGACTION: u64 = 134;
    pub const RT_SIGPROCMASK: u64 = 135;
    pub const GETPID: u64 = 172;
    pub const GETPPID: u64 = 173;
    pub const GETUID: u64 = 174;
    pub const GETEUID: u64 = 175;
    pub const GETGID: u64 = 176;
    pub const GETEGID: u64 = 177;
    pub const GETTID: u64 = 178;
    pub const CLONE: u64 = 220;
    pub const SYSINFO: u64 = 179;
    pub const CLONE3: u64 = 435;
    pub const MADVISE: u64 = 233;
    pub const ENOTTY: i64 = 25;
    /// newfstatat's flag: operate on the descriptor itself (empty path).
    pub const AT_EMPTY_PATH: u64 = 0x1000;
    /// st_mode of a pipe: what the guest's standard streams are (as under a test harness).
    pub const S_IFIFO: u32 = 0o010000 | 0o600;
}

pub use linux::{CLONE, FUTEX};

/// Names of Linux calls, for the error that stops a run at one the engine does not implement.
pub fn syscall_name(nr: u64) -> Option<&'static str> {
    Some(match nr {
        17 => "getcwd",
        23 => "dup",
        24 => "dup3",
        25 => "fcntl",
        29 => "ioctl",
        35 => "unlinkat",
        48 => "faccessat",
        56 => "openat",
        57 => "close",
        59 => "pipe2",
        61 => "getdents64",
        62 => "lseek",
        63 => "read",
        64 => "write",
        65 => "readv",
        66 => "writev",
        67 => "pread64",
        68 => "pwrite64",
        78 => "readlinkat",
        79 => "newfstatat",
        80 => "fstat",
        98 => "futex",
        101 => "nanosleep",
        113 => "clock_gettime",
        129 => "kill",
        130 => "tkill",
        131 => "tgkill",
        134 => "rt_sigaction",
        135 => "rt_sigprocmask",
        160 => "uname",
        179 => "sysinfo",
        198 => "socket",
        214 => "brk",
        215 => "munmap",
        220 => "clone",
        221 => "execve",
        222 => "mmap",
        226 => "mprotect",
        233 => "madvise",
        260 => "wait4",
        261 => "prlimit64",
        278 => "getrandom",
        435 => "clone3",
        _ => return None,
    })
}

/// The guest's process id (its main thread's tid); thread ids are `PID + hart`.
pub const PID: u64 = 1000;

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
                self.exit_thread(hid, a[0]);
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
            sys::SET_TID_ADDRESS => {
                self.threads.clear_child_tid[hid] = a[0];
                PID + hid as u64
            }
            sys::SET_ROBUST_LIST | linux::MADVISE | linux::SCHED_YIELD => 0,
            sys::MPROTECT => self.mprotect(a[0], a[1], a[2]),
            linux::GETPID | linux::GETPPID => PID - (nr == linux::GETPPID) as u64,
            linux::GETTID => PID + hid as u64,
            linux::GETUID | linux::GETEUID | linux::GETGID | linux::GETEGID => 0,
            linux::IOCTL => neg(linux::ENOTTY),
            linux::OPENAT => neg(errno::ENOENT),
            linux::CLOSE => {
                if a[0] <= 2 {
                    0
                } else {
                    neg(errno::EBADF)
                }
            }
            // Standard input is empty.
            linux::READ => {
                if a[0] == 0 {
                    0
                } else {
                    neg(errno::EBADF)
                }
            }
            linux::FSTAT | linux::NEWFSTATAT => {
                let (fd, buf) = if nr == linux::FSTAT { (a[0], a[1]) } else { (a[0], a[2]) };
                if nr == linux::NEWFSTATAT && a[3] & linux::AT_EMPTY_PATH == 0 {
                    neg(errno::ENOENT)
                } else if fd > 2 {
                    neg(errno::EBADF)
                } else {
                    // struct stat (asm-generic, 128 bytes): st_mode at 16, st_nlink at 20, st_blksize at 56.
                    let mut st = [0u8; 128];
                    st[16..20].copy_from_slice(&linux::S_IFIFO.to_le_bytes());
                    st[20..24].copy_from_slice(&1u32.to_le_bytes());
                    st[56..60].copy_from_slice(&4096u32.to_le_bytes());
                    match self.mem.write_bytes(hid, buf, &st) {
                        Ok(()) => 0,
                        Err(t) => return Self::efault(t),
                    }
                }
            }
            // No signals are ever delivered: handlers and masks are accepted and the old ones read as empty.
            linux::RT_SIGACTION | linux::RT_SIGPROCMASK => {
                let (old, size) = if nr == linux::RT_SIGACTION { (a[2], 16 + a[3]) } else { (a[2], a[3]) };
                if old != 0 {
                    if let Err(t) = self.mem.write_bytes(hid, old, &vec![0u8; size.min(256) as usize]) {
                        return Self::efault(t);
                    }
                }
                0
            }
            linux::NANOSLEEP | linux::CLOCK_NANOSLEEP => 0,
            linux::SCHED_GETAFFINITY => {
                // Every hart of the system is available.
                let bytes = (self.harts.len() as u64).div_ceil(64) * 8;
                if a[1] < bytes {
                    neg(errno::EINVAL)
                } else {
                    let mut mask = vec![0u8; bytes as usize];
                    for i in 0..self.harts.len() {
                        mask[i / 8] |= 1 << (i % 8);
                    }
                    match self.mem.write_bytes(hid, a[2], &mask) {
                        Ok(()) => bytes,
                        Err(t) => return Self::efault(t),
                    }
                }
            }
            linux::SYSINFO => {
                // struct sysinfo (64-bit, 112 bytes): uptime, loads, then totalram at 32, freeram at 40, procs at
                // 80, mem_unit at 104. RAM is System.mem_limit.
                let (total, used) = self.mem.usage();
                let mut si = [0u8; 112];
                si[0..8].copy_from_slice(&(self.sim_ticks() / 1_000_000_000_000).to_le_bytes());
                si[32..40].copy_from_slice(&total.to_le_bytes());
                si[40..48].copy_from_slice(&total.saturating_sub(used).to_le_bytes());
                si[80..82].copy_from_slice(&(self.harts.iter().filter(|h| !h.exited()).count() as u16).to_le_bytes());
                si[104..108].copy_from_slice(&1u32.to_le_bytes());
                match self.mem.write_bytes(hid, a[0], &si) {
                    Ok(()) => 0,
                    Err(t) => return Self::efault(t),
                }
            }
            linux::CLONE => return self.clone_thread(hid, a),
            // glibc tries clone3 first and falls back to clone on ENOSYS, as with a kernel before 5.3.
            linux::CLONE3 => neg(errno::ENOSYS),
            linux::FUTEX => return self.futex(hid, a),
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
            sys::MMAP => {
                let addr = self.mmap(a[0], a[1], a[3]);
                if (addr as i64) > 0 && a[2] & 7 != crate::mem::PROT_DEFAULT as u64 {
                    self.mem.set_prot(addr, addr + page_up(a[1]), (a[2] & 7) as u8);
                }
                addr
            }
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

    /// mprotect: new permissions for mapped pages (ENOMEM if any page of the range is not mapped).
    fn mprotect(&mut self, addr: u64, len: u64, prot: u64) -> u64 {
        if addr & (PAGE_SIZE - 1) != 0 || prot & !7 != 0 {
            return neg(errno::EINVAL);
        }
        let Some(end) = addr.checked_add(len).map(page_up).filter(|&e| e >= addr) else {
            return neg(errno::ENOMEM);
        };
        if (addr >> abi::PAGE_SHIFT..end >> abi::PAGE_SHIFT).any(|vpn| !self.mem.regions.page_valid(vpn)) {
            return neg(errno::ENOMEM);
        }
        self.mem.set_prot(addr, end, prot as u8);
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
            self.mem.set_prot(s.max(start), e.min(end), crate::mem::PROT_DEFAULT);
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
