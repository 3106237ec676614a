//! Simulator calls (workloads/ABI.md), and the dispatch of a hart's `ecall` between them and the Linux calls of
//! the os crate.

use kvsim_base::abi::{errno, simcall};
use kvsim_isa::trap::Trap;
use kvsim_os::linux::neg;
use kvsim_os::process::Linux;

use crate::sim::Machine;

impl Machine {
    /// The Linux view of the machine: its process, harts and memory, for one call.
    pub fn os(&mut self) -> Linux<'_> {
        Linux { process: &mut self.process, harts: &mut self.harts, mem: &mut self.mem }
    }

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
            self.os().call(hid, nr, args)?
        };
        if let Some(v) = result {
            self.harts[hid].x[10] = v;
        }
        Ok(())
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
            simcall::SOCKET_OF => match usize::try_from(a[0]).ok().filter(|&h| h < self.harts.len()) {
                Some(h) => self.os().socket_of_hart(h) as u64,
                None => neg(errno::EINVAL),
            },
            simcall::ALLOC_LOCAL => {
                let socket = self.os().socket_of_hart(hid);
                self.os().alloc_on(a[0], a[1], socket)
            }
            simcall::ALLOC_ON => {
                let sockets = self.process.numa.sockets();
                let socket = u16::try_from(a[2]).ok().filter(|&k| k < sockets);
                let Some(socket) = socket else {
                    return Err(Trap::NoSocket { call: "ALLOC_ON", socket: a[2], sockets });
                };
                self.os().alloc_on(a[0], a[1], socket)
            }
            simcall::SOCKET_OF_ADDR => self.process.numa.socket_of(a[0]) as u64,
            simcall::STATS_DUMP => {
                self.stats_dumps += 1;
                if self.stat_dumps.len() < kvsim_base::output::MAX_STAT_DUMPS {
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
            simcall::NIC_QUEUE_SRAM | simcall::NIC_QUEUE_SRAM_BYTES => {
                match self.net.as_ref().and_then(|n| n.queue_sram(usize::try_from(a[0]).unwrap_or(usize::MAX))) {
                    Some((base, _)) if nr == simcall::NIC_QUEUE_SRAM => base,
                    Some((_, bytes)) => bytes,
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sim::tests::{machine_with, ENTRY};
    use crate::sim::EngineConfig;
    use kvsim_base::error::{FaultKind, SimError};
    use kvsim_isa::asm::*;
    use kvsim_isa::exec::NoHook;

    /// A machine of 4 harts, two on each of 2 sockets, running nothing yet.
    fn two_sockets() -> Machine {
        let mut cfg = EngineConfig::with_binary("/t");
        cfg.harts = 4;
        cfg.hart_socket = vec![0, 0, 1, 1];
        machine_with(&bytes(&[nop()]), &cfg)
    }

    fn call(m: &mut Machine, hid: usize, nr: u64, a: [u64; 3]) -> Result<u64, Trap> {
        m.simcall(hid, nr, [a[0], a[1], a[2], 0, 0, 0]).map(|r| r.unwrap())
    }

    #[test]
    fn socket_of_reports_each_harts_socket() {
        let mut m = two_sockets();
        let got: Vec<u64> = (0..4).map(|h| call(&mut m, 0, simcall::SOCKET_OF, [h, 0, 0]).unwrap()).collect();
        assert_eq!(got, [0, 0, 1, 1]);
        assert_eq!(call(&mut m, 0, simcall::SOCKET_OF, [4, 0, 0]).unwrap(), neg(errno::EINVAL));
    }

    const HUGE: u64 = 2 << 20;

    #[test]
    fn a_sockets_heap_carves_every_block_below_the_last_and_grows_by_contiguous_huge_pages() {
        let mut m = two_sockets();
        // The heap's first page: the first block at its top, the next just below it at the alignment asked for.
        let c = call(&mut m, 2, simcall::ALLOC_ON, [4096, 0, 0]).unwrap();
        let page = c + 4096 - HUGE;
        assert_eq!(page % HUGE, 0, "the heap's first block ends its first page");
        let d = call(&mut m, 1, simcall::ALLOC_LOCAL, [100, 8192, 0]).unwrap();
        assert_eq!(d, c - 4096, "100 bytes at 8 KB alignment: the next 8 KB boundary below c");
        // A 4 MiB block (a memcached shard's store) is carved right below d, spanning the rest of the first page and
        // two new pages mapped directly below it: not at a 2 MB boundary of its own.
        let store = call(&mut m, 1, simcall::ALLOC_LOCAL, [4 << 20, 4096, 0]).unwrap();
        assert_eq!(store, d - (4 << 20));
        assert_eq!(store % HUGE, HUGE - 8192);
        // The next shard's small state, then its store: each store starts where the heap's free space ends.
        let state = call(&mut m, 0, simcall::ALLOC_LOCAL, [100, 64, 0]).unwrap();
        assert_eq!(state, store - 128);
        let store2 = call(&mut m, 0, simcall::ALLOC_LOCAL, [4 << 20, 4096, 0]).unwrap();
        assert_eq!(store2, store - 4096 - (4 << 20));
        assert_eq!(store2 % HUGE, HUGE - 12288, "the two stores begin one 4 KB page apart modulo 2 MB");
        // Every page is recorded once for the timing model's 2 MB TLB entries: the first page, then each growth.
        let grown = [(page, page + HUGE), (page - 2 * HUGE, page), (page - 4 * HUGE, page - 2 * HUGE)];
        assert_eq!(m.process.huge, grown);
        assert_eq!(m.process.huge_pending, grown, "not yet told to a timing model");
        assert_eq!(m.process.huge_heap, vec![(page - 4 * HUGE, store2)]);
        let mapped: Vec<(u64, u64)> = m.mem.regions.mmaps.range(page - 4 * HUGE..).map(|(&s, &e)| (s, e)).collect();
        assert_eq!(mapped, [grown[2], grown[1], grown[0]], "mapped as one contiguous run of pages");
        assert_eq!(m.process.mmap_low, page - 4 * HUGE);
        // A block larger than the free space and a heap that cannot grow below (the space is mapped): a new run of
        // pages, the block at its top.
        let low = page - 4 * HUGE;
        assert_eq!(m.os().mmap_alloc(HUGE, HUGE), Some(low - HUGE));
        let big = call(&mut m, 0, simcall::ALLOC_LOCAL, [HUGE + 1, 64, 0]).unwrap();
        assert_eq!(big, (low - HUGE - HUGE - 1) & !63);
        assert_eq!(m.process.huge.last(), Some(&(low - 3 * HUGE, low - HUGE)));
        assert_eq!(m.process.huge_heap, vec![(low - 3 * HUGE, big)]);
    }

    #[test]
    fn each_socket_has_its_own_heap_placed_on_it() {
        let mut m = two_sockets();
        // Socket 1 (hart 3 is on it): two small blocks, one below the other in one 2 MB page.
        let a = call(&mut m, 3, simcall::ALLOC_LOCAL, [5000, 64, 0]).unwrap();
        let b = call(&mut m, 0, simcall::ALLOC_ON, [100, 8, 1]).unwrap();
        // 5000 bytes rounded to the cache line (the smallest alignment, even for an 8-byte request).
        let p1 = a + 5056 - HUGE;
        assert_eq!((p1 % HUGE, b), (0, a - 128));
        // Socket 0: a page of its own, below socket 1's.
        let c = call(&mut m, 2, simcall::ALLOC_ON, [4096, 0, 0]).unwrap();
        let p0 = p1 - HUGE;
        assert_eq!(c, p0 + HUGE - 4096);
        assert_eq!(m.process.huge_heap, vec![(p0, c), (p1, b)]);
        let on = |m: &Machine, addr: u64| m.process.numa.socket_of(addr);
        // Socket 1's heap page is on socket 1, all of it and not the page below it.
        assert_eq!((on(&m, p1), on(&m, b + 99), on(&m, a + 4999), on(&m, p1 - 1)), (1, 1, 1, 0));
        let sock = |m: &mut Machine, addr: u64| call(m, 0, simcall::SOCKET_OF_ADDR, [addr, 0, 0]).unwrap();
        assert_eq!((sock(&mut m, a), sock(&mut m, b), sock(&mut m, c)), (1, 1, 0));
        // Socket 1's heap cannot grow below its page (socket 0's page is there): a block that does not fit takes a
        // new run of pages, placed on socket 1, and the rest of the old page stays unused.
        let f = call(&mut m, 3, simcall::ALLOC_LOCAL, [HUGE - 4096, 0, 0]).unwrap();
        let p2 = p0 - HUGE;
        assert_eq!((f, on(&m, f), on(&m, p2 + HUGE - 1), on(&m, p0)), (p2 + 4096, 1, 1, 0));
        assert_eq!(m.process.huge, vec![(p1, p1 + HUGE), (p0, p1), (p2, p0)]);
        assert_eq!(m.process.huge_heap[1], (p2, f));
        // Socket 0's heap cannot grow below its page either (socket 1's new run is there): a run of its own below.
        let g = call(&mut m, 1, simcall::ALLOC_LOCAL, [HUGE, 0, 0]).unwrap();
        assert_eq!((g, on(&m, g), on(&m, g + HUGE - 1)), (p2 - HUGE, 0, 0));
        // A bad alignment or size allocates nothing and places nothing.
        let before = m.process.numa.ranges().to_vec();
        assert_eq!(call(&mut m, 2, simcall::ALLOC_ON, [4096, 3 << 12, 1]).unwrap(), 0);
        assert_eq!(call(&mut m, 2, simcall::ALLOC_LOCAL, [0, 0, 0]).unwrap(), 0);
        assert_eq!(call(&mut m, 2, simcall::ALLOC_LOCAL, [u64::MAX - 10, 0, 0]).unwrap(), 0);
        assert_eq!(m.process.numa.ranges(), &before[..]);
        // munmap gives the pages back to socket 0, so a later plain mmap there is not left on socket 1, and the heap
        // whose free space went starts a new run of pages for its next block.
        assert_eq!(m.os().munmap(p2, HUGE), 0);
        assert_eq!((on(&m, f), on(&m, a)), (0, 1));
        assert_eq!(m.process.huge_heap[1], (0, 0));
        let h = call(&mut m, 3, simcall::ALLOC_LOCAL, [64, 0, 0]).unwrap();
        assert_eq!(((h + 64) % HUGE, on(&m, h)), (0, 1));
    }

    #[test]
    fn every_harts_stack_is_on_its_socket() {
        let m = two_sockets();
        for (hid, &(bottom, top)) in m.mem.regions.stacks.iter().enumerate() {
            let want = [0, 0, 1, 1][hid];
            assert_eq!(
                (m.process.numa.socket_of(bottom), m.process.numa.socket_of(top - 1)),
                (want, want),
                "hart {hid}"
            );
        }
        let stats = m.process.numa_stats();
        assert_eq!(stats[0], ("system.numa.socket0.bytes_placed".into(), 2 * m.process.stack_size, stats[0].2));
        assert_eq!(stats[2].1, 2 * m.process.stack_size);
    }

    #[test]
    fn one_socket_places_nothing() {
        let mut m = machine_with(&bytes(&[nop()]), &EngineConfig::with_binary("/t"));
        let a = call(&mut m, 0, simcall::ALLOC_LOCAL, [4096, 0, 0]).unwrap();
        assert!(a != 0 && m.process.numa.ranges().is_empty());
        assert_eq!(call(&mut m, 0, simcall::SOCKET_OF, [0, 0, 0]).unwrap(), 0);
    }

    #[test]
    fn alloc_on_a_socket_that_does_not_exist_stops_the_run_naming_it() {
        // a0 = 4096, a1 = 0, a2 = 2, a7 = ALLOC_ON, ecall: on a 2-socket machine.
        let nr = simcall::ALLOC_ON as u32;
        let code = [lui(10, 1), li(11, 0), li(12, 2), lui(17, nr >> 12), addi(17, 17, (nr & 0xfff) as i32), ecall()];
        let mut cfg = EngineConfig::with_binary("/t");
        cfg.harts = 2;
        cfg.hart_socket = vec![0, 1];
        let mut m = machine_with(&bytes(&code), &cfg);
        let low = m.process.mmap_low;
        match m.run(&mut NoHook, None).unwrap_err() {
            SimError::Guest { kind, hart, pc, reason, .. } => {
                assert_eq!((kind, hart, pc), (FaultKind::BadSimcall, 0, ENTRY + 20));
                assert_eq!(
                    reason,
                    "simulator call ALLOC_ON asked for NUMA socket 2, which does not exist: the system has sockets 0..1"
                );
            }
            e => panic!("{e:?}"),
        }
        assert_eq!(m.process.mmap_low, low, "nothing was allocated");
    }
}
