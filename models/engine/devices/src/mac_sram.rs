//! The integrated MAC's buffer SRAM (`Nic.sram_size`, `Nic.sram_latency`): on-die memory at a device address
//! range where the guest driver places its descriptor rings and packet buffers, so that neither the cores nor the
//! MAC reach the stack's memory (Iridium's flash) for them.
//!
//! * Addresses (workloads/ABI.md, "The MAC's buffer SRAM"): NIC k's SRAM is `[MAC_SRAM_BASE + k * MAC_SRAM_STRIDE,
//!   + sram_size)`, split evenly over its queues in page-aligned slices; the simulator calls `NIC_QUEUE_SRAM` and
//!   `NIC_QUEUE_SRAM_BYTES` give a queue's slice (0 when its NIC has none).
//! * Functionally it is ordinary guest memory, mapped when the machine is built.
//! * In timing it sits in front of the socket's memory ([`MacSram`]): a line of the SRAM that misses in the caches
//!   is served after `sram_latency`, every other line goes on to the memory. Lines of the SRAM are cached and kept
//!   coherent with the MAC's DMA by the memory system like any others.

use kvsim_timing::socket_memory::{SocketMemories, SocketPort};
use kvsim_timing::{AccessKind, MemPort, MemReq, StatSink, Tick};

use kvsim_base::abi::PAGE_SIZE;

/// Where NIC 0's buffer SRAM starts: above the device registers (`abi::DEVICE_END`), below the stacks.
pub const MAC_SRAM_BASE: u64 = 0x31_0000_0000;
/// Address space each NIC's SRAM may take (Nic.sram_size is at most this).
pub const MAC_SRAM_STRIDE: u64 = 1 << 30;

/// NIC `nic`'s SRAM window [start, end) for `size` bytes (empty when `size` is 0).
pub fn window(nic: usize, size: u64) -> (u64, u64) {
    let start = MAC_SRAM_BASE + nic as u64 * MAC_SRAM_STRIDE;
    (start, start + size.min(MAC_SRAM_STRIDE))
}

/// Queue `local` of NIC `nic`'s `queues`: its slice of the SRAM (base, bytes), page aligned; (0, 0) without SRAM
/// or when a slice would be smaller than a page.
pub fn queue_slice(nic: usize, local: usize, queues: usize, size: u64) -> (u64, u64) {
    let bytes = (size.min(MAC_SRAM_STRIDE) / queues.max(1) as u64) & !(PAGE_SIZE - 1);
    if bytes == 0 {
        return (0, 0);
    }
    (window(nic, size).0 + local as u64 * bytes, bytes)
}

/// Put the buffer SRAMs of `nics` (the system's NICs, in engine order) in front of the memory. Nothing changes
/// when no NIC has one. The windows are never NUMA-placed, so their lines belong to socket 0's memory: all of them
/// go in front of it (integrated MACs are single-socket stacks' anyway).
pub fn attach(memory: &mut SocketMemories, nics: &[kvsim_params::Nic]) {
    let windows: Vec<(u64, u64, Tick)> = nics
        .iter()
        .enumerate()
        .filter(|(_, n)| n.sram_size > 0)
        .map(|(k, n)| {
            let (s, e) = window(k, n.sram_size);
            (s, e, n.sram_latency)
        })
        .collect();
    if !windows.is_empty() {
        memory.wrap_port(0, |m| SocketPort::other(MacSram::new(m, windows)));
    }
}

/// The SRAM windows [start, end) of a socket's MACs, each with its latency, in front of its memory.
pub struct MacSram {
    memory: SocketPort,
    windows: Vec<(u64, u64, Tick)>,
    reads: u64,
    writes: u64,
}

impl MacSram {
    pub fn new(memory: SocketPort, windows: Vec<(u64, u64, Tick)>) -> MacSram {
        MacSram { memory, windows, reads: 0, writes: 0 }
    }

    /// The latency of the SRAM holding `addr`, if one does.
    #[inline]
    fn latency_of(&self, addr: u64) -> Option<Tick> {
        self.windows.iter().find(|&&(s, e, _)| addr >= s && addr < e).map(|w| w.2)
    }
}

impl MemPort for MacSram {
    fn access(&mut self, req: &MemReq) -> Tick {
        let Some(latency) = self.latency_of(req.addr) else { return self.memory.access(req) };
        if req.kind == AccessKind::Write {
            self.writes += 1;
        } else {
            self.reads += 1;
        }
        req.time + latency
    }
    fn stats(&self, prefix: &str, now: Tick, out: &mut StatSink) {
        self.memory.stats(prefix, now, out);
        let sram = prefix.to_owned() + &kvsim_params::paths::mac_sram();
        out.add(&sram, "reads", self.reads as f64, "line reads the MAC's buffer SRAM served");
        out.add(&sram, "writes", self.writes as f64, "line writes the MAC's buffer SRAM took");
    }
    fn channel_of(&self, addr: u64) -> (usize, usize) {
        self.memory.channel_of(addr)
    }
    fn home_socket(&self, addr: u64) -> u16 {
        self.memory.home_socket(addr)
    }
    fn flush_posted(&mut self, now: Tick) {
        self.memory.flush_posted(now);
    }
    fn reset_port_stats(&mut self, now: Tick) {
        (self.reads, self.writes) = (0, 0);
        self.memory.reset_port_stats(now);
    }
    fn routes_by_owner(&self) -> bool {
        self.memory.routes_by_owner()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use kvsim_timing::FixedLatency;

    #[test]
    fn queues_get_page_aligned_slices_of_their_nics_window() {
        assert_eq!(window(1, 2 << 20), (MAC_SRAM_BASE + MAC_SRAM_STRIDE, MAC_SRAM_BASE + MAC_SRAM_STRIDE + (2 << 20)));
        // 2 MiB over 32 queues: 64 KiB each; over 3: 699,050 bytes rounded down to 170 pages.
        assert_eq!(queue_slice(0, 5, 32, 2 << 20), (MAC_SRAM_BASE + 5 * 65536, 65536));
        assert_eq!(queue_slice(0, 2, 3, 2 << 20), (MAC_SRAM_BASE + 2 * 170 * 4096, 170 * 4096));
        assert_eq!(queue_slice(0, 0, 4, 0), (0, 0), "no SRAM");
        assert_eq!(queue_slice(0, 0, 4, 8192), (0, 0), "less than a page each");
    }

    #[test]
    fn sram_lines_take_its_latency_and_the_rest_go_to_memory() {
        let memory = SocketPort::other(FixedLatency::new(20_000_000)); // flash-like: 20 us
        let (s, e) = window(0, 1 << 20);
        let mut m = MacSram::new(memory, vec![(s, e, 2_000)]);
        let at = |addr, kind| MemReq::new(addr, kind, 0, 1_000);
        assert_eq!(m.access(&at(s, AccessKind::Read)), 3_000);
        assert_eq!(m.access(&at(e - 64, AccessKind::Write)), 3_000);
        assert_eq!(m.access(&at(e, AccessKind::Read)), 20_001_000, "the first line past the window");
        assert_eq!(m.access(&at(0x1000, AccessKind::Write)), 20_001_000);
        let mut out = StatSink::new();
        m.stats("system.socket0.mem.", 0, &mut out);
        let get = |k: &str| out.entries.iter().find(|x| x.0 == k).map(|x| x.1);
        assert_eq!(get("system.socket0.mem.mac_sram.reads"), Some(1.0));
        assert_eq!(get("system.socket0.mem.mac_sram.writes"), Some(1.0));
        assert_eq!((get("system.socket0.mem.reads"), get("system.socket0.mem.writes")), (Some(1.0), Some(1.0)));
        m.reset_port_stats(0);
        assert_eq!((m.reads, m.writes), (0, 0));
    }
}
