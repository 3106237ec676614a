//! System calls (the Linux subset of workloads/ABI.md) and simulator calls, performed after a hart's `ecall`.

use crate::process::Linux;
use kvsim_base::abi::{self, errno, sys, HUGE_PAGE, PAGE_SIZE};
use kvsim_base::random::splitmix64;
use kvsim_isa::memory::page_up;
use kvsim_isa::trap::Trap;

use crate::numbers::{calls, MAP_ANONYMOUS, MAP_FIXED, MAP_PRIVATE, MAP_SHARED, RLIMIT_STACK};
pub use crate::numbers::{neg, CLONE, FUTEX, PID};

/// Gap kept between the top of the brk heap and the lowest mapping.
const HEAP_MMAP_GAP: u64 = 1 << 20;

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
        if let Some(r) = self.file_call(hid, nr, a) {
            return Ok(Some(r));
        }
        let r = match nr {
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
            sys::SET_ROBUST_LIST | calls::SCHED_YIELD => 0,
            calls::MADVISE => self.madvise(a[0], a[1], a[2]),
            calls::MREMAP => return self.mremap(hid, a[0], a[1], a[2], a[3], a[4]).map(Some),
            // No network stack: glibc's name-service lookups then fall back to files.
            calls::SOCKET => neg(calls::EAFNOSUPPORT),
            sys::MPROTECT => self.mprotect(a[0], a[1], a[2]),
            calls::GETPID | calls::GETPPID => PID - (nr == calls::GETPPID) as u64,
            calls::GETTID => PID + hid as u64,
            calls::GETUID | calls::GETEUID | calls::GETGID | calls::GETEGID => 0,
            calls::IOCTL => neg(calls::ENOTTY),
            // No signals are ever delivered: handlers and masks are accepted and the old ones read as empty.
            calls::RT_SIGACTION | calls::RT_SIGPROCMASK => {
                let (old, size) = if nr == calls::RT_SIGACTION { (a[2], 16 + a[3]) } else { (a[2], a[3]) };
                if old != 0 {
                    if let Err(t) = self.mem.write_bytes(hid, old, &vec![0u8; size.min(256) as usize]) {
                        return Self::efault(t);
                    }
                }
                0
            }
            calls::NANOSLEEP | calls::CLOCK_NANOSLEEP => 0,
            calls::SCHED_GETAFFINITY => {
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
            calls::SYSINFO => {
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
            calls::CLONE => return self.clone_thread(hid, a),
            // glibc tries clone3 first and falls back to clone on ENOSYS, as with a kernel before 5.3.
            calls::CLONE3 => neg(errno::ENOSYS),
            calls::FUTEX => return self.futex(hid, a),
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
            sys::RSEQ => neg(errno::ENOSYS),
            sys::BRK => self.brk(a[0]),
            sys::MMAP => return self.mmap_call(hid, a).map(Some),
            sys::MUNMAP => self.munmap(a[0], a[1]),
            _ => return Err(Trap::Syscall(nr)),
        };
        Ok(Some(r))
    }

    /// mmap: anonymous memory, or a private copy of a file's bytes (a read-only shared mapping is the same).
    fn mmap_call(&mut self, hid: usize, a: [u64; 6]) -> Result<u64, Trap> {
        let (len, prot, flags) = (a[1], a[2], a[3]);
        let contents = if flags & MAP_ANONYMOUS == 0 {
            match self.file_mapping(a[4] as i64, a[5], len, prot, flags) {
                Ok(bytes) => Some(bytes),
                Err(e) => return Ok(neg(e)),
            }
        } else {
            None
        };
        let anon_flags = if contents.is_some() { (flags & !MAP_SHARED) | MAP_PRIVATE | MAP_ANONYMOUS } else { flags };
        let addr = self.mmap(a[0], len, anon_flags);
        if (addr as i64) < 0 {
            return Ok(addr);
        }
        if let Some(bytes) = contents {
            self.mem.write_bytes(hid, addr, &bytes)?;
        }
        if prot & 7 != kvsim_isa::memory::PROT_DEFAULT as u64 {
            self.mem.set_prot(addr, addr + page_up(len), (prot & 7) as u8);
        }
        Ok(addr)
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
    pub(crate) fn mmap_overlap(&self, start: u64, end: u64) -> Option<(u64, u64)> {
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
        if flags & crate::mem_calls::MAP_FIXED_NOREPLACE != 0 {
            let taken = addr.checked_add(len).is_none_or(|end| self.mmap_overlap(addr, end).is_some());
            if taken && addr & (PAGE_SIZE - 1) == 0 {
                return neg(crate::fs::errno::EEXIST);
            }
        }
        if flags & (MAP_FIXED | crate::mem_calls::MAP_FIXED_NOREPLACE) != 0 {
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
    pub(crate) fn unmap_range(&mut self, start: u64, end: u64) {
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
        // A heap whose free space was unmapped (even in part) starts a new run of pages for its next block.
        for heap in self.process.huge_heap.iter_mut().filter(|h| h.1 != 0 && h.0 < end && h.1 > start) {
            *heap = (0, 0);
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

    /// `bytes` of zeroed memory aligned to `align` (a power of two; at least ALLOC_MIN_ALIGN, a cache line) in
    /// `socket`'s memory. 0 for a zero or overflowing size, a bad alignment, or no room.
    ///
    /// This is the runtime's hugepage memory (DPDK's and MICA's log, index, rings and packet buffers, the cores'
    /// small state, a memcached shard's store), served as DPDK's rte_malloc serves it from its per-socket heap: the
    /// heap is a run of contiguous 2 MB pages, and each block, large or small, is carved from the top of the heap's
    /// free space, just below the block before it (as rte_malloc splits a block off the end of a free element). When
    /// a block does not fit, the heap grows by the whole pages it lacks, mapped directly below its lowest page so the
    /// block spans the old free space and the new pages; where that address space is taken, the heap starts a new
    /// run of pages (the old free space stays unused). So blocks do not start at one offset modulo 2 MB (in the same
    /// cache sets, slices and banks) unless their sizes and alignments put them there. Every page is recorded
    /// (`Process::huge`) so the timing model maps it with 2 MB pages. A block carries no header line: rte_malloc
    /// puts a 64-byte element header before each block, which would move each later block down by one line more.
    pub fn alloc_on(&mut self, bytes: u64, align: u64, socket: u16) -> u64 {
        let align = align.max(abi::ALLOC_MIN_ALIGN);
        if !align.is_power_of_two() || bytes == 0 || page_up(bytes) == 0 {
            return 0;
        }
        let heap = socket as usize;
        if self.process.huge_heap.len() <= heap {
            self.process.huge_heap.resize(heap + 1, (0, 0));
        }
        let (low, top) = self.process.huge_heap[heap];
        let start = top.checked_sub(bytes).map(|s| s & !(align - 1));
        if let (true, Some(start)) = (top != 0, start) {
            if start >= low {
                self.process.huge_heap[heap].1 = start;
                return start;
            }
            // Grow by the pages below the heap that the block needs, if that address space is free. Only a heap
            // whose lowest byte starts a page grows (one restored from an older checkpoint may not).
            let grow = (low - start).next_multiple_of(HUGE_PAGE);
            if low % HUGE_PAGE == 0 && low.checked_sub(grow).is_some_and(|base| self.mmap_claim(base, grow)) {
                self.huge_pages_placed(low - grow, grow, socket);
                self.process.huge_heap[heap] = (low - grow, start);
                return start;
            }
        }
        // A new run of pages, carved like an anonymous mmap, holding the block at its top.
        let Some(len) = bytes.checked_next_multiple_of(HUGE_PAGE) else { return 0 };
        let Some(base) = self.mmap_alloc(len, align.max(HUGE_PAGE)) else { return 0 };
        self.huge_pages_placed(base, len, socket);
        let start = (base + len - bytes) & !(align - 1);
        self.process.huge_heap[heap] = (base, start);
        start
    }

    /// Map [start, start + len) (page multiples) if no mapping overlaps it and it lies above the brk heap's gap.
    fn mmap_claim(&mut self, start: u64, len: u64) -> bool {
        let floor = page_up(self.mem.regions.brk).saturating_add(HEAP_MMAP_GAP);
        if start < floor || self.mmap_overlap(start, start + len).is_some() {
            return false;
        }
        self.mem.regions.mmaps.insert(start, start + len);
        self.process.mmap_low = self.process.mmap_low.min(start);
        true
    }

    /// Record new 2 MB pages [start, start + len) as hugepage memory on `socket`.
    fn huge_pages_placed(&mut self, start: u64, len: u64, socket: u16) {
        if self.process.numa.sockets() > 1 {
            self.numa_place(start, len, socket);
        }
        self.process.huge.push((start, start + len));
        self.process.huge_pending.push((start, start + len));
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fs::FsConfig;
    use crate::test_support::Fixture;
    use kvsim_base::syscall_table::{Status, TABLE};

    /// workloads/SYSCALLS.md's table and the dispatcher agree: every refused call stops the run, every other one
    /// returns, and a number outside the table stops it too.
    #[test]
    fn syscall_table_matches_the_dispatcher() {
        let outside = [(500, Status::Refused)];
        for (nr, status) in TABLE.iter().map(|e| (e.nr, e.status)).chain(outside) {
            let mut m = Fixture::new(&FsConfig::default());
            // clone as glibc's pthread_create calls it (a fork-like clone stops the run).
            let args = if nr == CLONE { [0x3d_0f00, 0, 0, 0, 0, 0] } else { [0; 6] };
            let refused = matches!(m.linux().call(0, nr, args), Err(Trap::Syscall(n)) if n == nr);
            assert_eq!(refused, status == Status::Refused, "call {nr}");
        }
    }
}
