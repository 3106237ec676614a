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

    #[test]
    fn alloc_local_and_alloc_on_pack_small_blocks_in_each_sockets_huge_pages() {
        const HUGE: u64 = 2 << 20;
        let mut m = two_sockets();
        // Socket 1 (hart 3 is on it): two small blocks, packed one after the other in one 2 MB page.
        let a = call(&mut m, 3, simcall::ALLOC_LOCAL, [5000, 64, 0]).unwrap();
        let b = call(&mut m, 0, simcall::ALLOC_ON, [100, 8, 1]).unwrap();
        // Socket 0: the first block starts its own page; an alignment above a cache line is kept.
        let c = call(&mut m, 2, simcall::ALLOC_ON, [4096, 0, 0]).unwrap();
        let d = call(&mut m, 1, simcall::ALLOC_LOCAL, [100, 8192, 0]).unwrap();
        // A block of 2 MB or more: whole huge pages of its own, 2 MB-aligned.
        let e = call(&mut m, 1, simcall::ALLOC_LOCAL, [HUGE + 1, 64, 0]).unwrap();
        assert_eq!(a % HUGE, 0, "the heap's first page starts its first block");
        // 5000 bytes rounded up to the cache line (the smallest alignment, even for an 8-byte request).
        assert_eq!(b, a + 5056);
        assert_eq!(c % HUGE, 0);
        assert_eq!(d, c + 8192);
        assert_eq!(e % HUGE, 0);
        // Each heap page and the large block are recorded for the timing model's 2 MB TLB entries, once.
        assert_eq!(m.process.huge, vec![(a, a + HUGE), (c, c + HUGE), (e, e + 2 * HUGE)]);
        assert_eq!(m.process.huge_pending.len(), 3, "not yet told to a timing model");
        assert_eq!(m.process.huge_heap, vec![(d + 100, c + HUGE), (b + 100, a + HUGE)]);
        let on = |m: &Machine, addr: u64| m.process.numa.socket_of(addr);
        // Socket 1's heap page is on socket 1, all of it and not the page above it.
        assert_eq!((on(&m, a), on(&m, b + 99), on(&m, a + HUGE - 1), on(&m, a + HUGE)), (1, 1, 1, 0));
        assert_eq!((on(&m, c), on(&m, d), on(&m, e), on(&m, e + 2 * HUGE - 1)), (0, 0, 0, 0));
        let sock = |m: &mut Machine, addr: u64| call(m, 0, simcall::SOCKET_OF_ADDR, [addr, 0, 0]).unwrap();
        assert_eq!((sock(&mut m, a), sock(&mut m, b), sock(&mut m, c)), (1, 1, 0));
        // A block that does not fit in the rest of its heap's page takes a new page (the rest stays unused).
        let f = call(&mut m, 3, simcall::ALLOC_LOCAL, [HUGE - 4096, 0, 0]).unwrap();
        assert_eq!((f % HUGE, on(&m, f), m.process.huge.last()), (0, 1, Some(&(f, f + HUGE))));
        assert_eq!(m.process.huge_heap[1], (f + HUGE - 4096, f + HUGE));
        // A bad alignment or size allocates nothing and places nothing.
        let before = m.process.numa.ranges().to_vec();
        assert_eq!(call(&mut m, 2, simcall::ALLOC_ON, [4096, 3 << 12, 1]).unwrap(), 0);
        assert_eq!(call(&mut m, 2, simcall::ALLOC_LOCAL, [0, 0, 0]).unwrap(), 0);
        assert_eq!(m.process.numa.ranges(), &before[..]);
        // munmap gives the pages back to socket 0, so a later plain mmap there is not left on socket 1, and the heap
        // whose page went takes a new page for its next block.
        assert_eq!(m.os().munmap(f, HUGE), 0);
        assert_eq!((on(&m, f), on(&m, a)), (0, 1));
        assert_eq!(m.process.huge_heap[1], (0, 0));
        let g = call(&mut m, 3, simcall::ALLOC_LOCAL, [64, 0, 0]).unwrap();
        assert_eq!((g % HUGE, on(&m, g)), (0, 1));
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
