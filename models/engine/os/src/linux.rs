//! System calls (the Linux subset of workloads/ABI.md) and simulator calls, performed after a hart's `ecall`.

use crate::process::Linux;
use kvsim_base::abi::{self, errno, sys, PAGE_SIZE};
use kvsim_base::random::splitmix64;
use kvsim_isa::memory::page_up;
use kvsim_isa::trap::Trap;

const MAP_SHARED: u64 = 0x01;
const MAP_PRIVATE: u64 = 0x02;
const MAP_FIXED: u64 = 0x10;
const MAP_ANONYMOUS: u64 = 0x20;
const RLIMIT_STACK: u64 = 3;
/// More Linux riscv64 (asm-generic) call numbers: what static glibc uses at start-up and for ordinary programs.
/// (Named `linux::X` at their uses, as the kernel's own tables name them; the file kept the module's name.)
#[allow(clippy::module_inception)]
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

/// The guest's process id (its main thread's tid); thread ids are `PID + hart`.
pub const PID: u64 = 1000;

/// Gap kept between the top of the brk heap and the lowest mapping.
const HEAP_MMAP_GAP: u64 = 1 << 20;

/// A Linux call's error result: -errno in a0.
pub fn neg(e: i64) -> u64 {
    (-e) as u64
}

impl Linux<'_> {
    /// Memory faults inside a call's buffers become -EFAULT; exceeding mem_limit still stops the run.
    fn efault(t: Trap) -> Result<Option<u64>, Trap> {
        match t {
            Trap::Limit { .. } => Err(t),
            _ => Ok(Some(neg(errno::EFAULT))),
        }
    }

    /// Perform Linux call `nr` for hart `hid` with arguments `a` (a0..a5): the value for a0, or None to leave it.
    /// Err only for calls that stop the run (unsupported numbers, exceeding mem_limit while copying).
    pub fn call(&mut self, hid: usize, nr: u64, a: [u64; 6]) -> Result<Option<u64>, Trap> {
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
                self.process.group_exit = Some((a[0] & 0xff) as i64);
                self.harts[hid].exit_code = Some((a[0] & 0xff) as i64);
                for h in self.harts.iter_mut() {
                    h.ended = true;
                }
                return Ok(None);
            }
            sys::SET_TID_ADDRESS => {
                self.process.threads.clear_child_tid[hid] = a[0];
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
                si[0..8].copy_from_slice(&(kvsim_isa::hart::sim_ticks(self.harts) / 1_000_000_000_000).to_le_bytes());
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
                    let lim = if a[1] == RLIMIT_STACK { self.process.stack_size } else { u64::MAX };
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
                    buf.extend_from_slice(&splitmix64(&mut self.process.rng).to_le_bytes());
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
                if (addr as i64) > 0 && a[2] & 7 != kvsim_isa::memory::PROT_DEFAULT as u64 {
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
            1 => self.process.stdout.extend_from_slice(bytes),
            2 => self.process.stderr.extend_from_slice(bytes),
            _ => return neg(errno::EBADF),
        }
        bytes.len() as u64
    }

    fn brk(&mut self, new: u64) -> u64 {
        let r = &self.mem.regions;
        let old = r.brk;
        if new < r.heap_start || page_up(new) == 0 || page_up(new).saturating_add(HEAP_MMAP_GAP) > self.process.mmap_low
        {
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
        let mut top = self.process.mmap_low;
        loop {
            let start = top.checked_sub(len)? & !(align - 1);
            if start < floor {
                return None;
            }
            match self.mmap_overlap(start, start + len) {
                Some((s, _)) => top = s,
                None => {
                    self.mem.regions.mmaps.insert(start, start + len);
                    self.process.mmap_low = self.process.mmap_low.min(start);
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
            self.process.mmap_low = self.process.mmap_low.min(addr);
            return addr;
        }
        match self.mmap_alloc(len, PAGE_SIZE) {
            Some(a) => a,
            None => neg(errno::ENOMEM),
        }
    }

    pub fn munmap(&mut self, addr: u64, len: u64) -> u64 {
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
            self.mem.set_prot(s.max(start), e.min(end), kvsim_isa::memory::PROT_DEFAULT);
            self.numa_forget(s.max(start), e.min(end));
        }
    }

    /// The socket of hart `hid` (System.sockets numbers the harts socket by socket).
    pub fn socket_of_hart(&self, hid: usize) -> u16 {
        self.process.hart_socket.get(hid).copied().unwrap_or(0)
    }

    /// Put every hart's stack in its own socket's memory, as a first-touch kernel would for a thread pinned there.
    /// On one socket nothing is placed: every address is on socket 0 already.
    pub fn place_stacks(&mut self) {
        if self.process.numa.sockets() < 2 {
            return;
        }
        for hid in 0..self.mem.regions.stacks.len() {
            let (bottom, top) = self.mem.regions.stacks[hid];
            // Sockets come from hart_socket, and the map was built with as many sockets as it names.
            self.numa_place(bottom, top - bottom, self.socket_of_hart(hid));
        }
    }

    /// `bytes` of zeroed memory aligned to `align` (a power of two; at least a page) in `socket`'s memory, carved
    /// like an anonymous mmap. 0 for a zero or overflowing size, a bad alignment, or no room.
    pub fn alloc_on(&mut self, bytes: u64, align: u64, socket: u16) -> u64 {
        let align = align.max(PAGE_SIZE);
        if !align.is_power_of_two() || bytes == 0 || page_up(bytes) == 0 {
            return 0;
        }
        let len = page_up(bytes);
        let Some(start) = self.mmap_alloc(len, align) else { return 0 };
        if self.process.numa.sockets() > 1 {
            self.numa_place(start, len, socket);
        }
        start
    }

    /// Every placement the system calls make goes through here: the one place that tells the map (and, through it,
    /// whoever follows the map's changes). The callers name only sockets that exist (checked or from hart_socket).
    pub fn numa_place(&mut self, start: u64, len: u64, socket: u16) {
        // Through `place_numa`, so a running timing hook hears of the placement too.
        let placed = self.process.place_numa(start, len, socket);
        debug_assert!(placed.is_ok(), "{placed:?}");
    }

    /// Unmapped memory goes back to the default placement (socket 0), so a later plain mmap of the same addresses
    /// is not left on the socket of an earlier NUMA allocation.
    pub fn numa_forget(&mut self, start: u64, end: u64) {
        if self.process.numa.ranges().iter().any(|&(s, e, k)| s < end && e > start && k != 0) {
            self.numa_place(start, end - start, 0);
        }
    }
}
