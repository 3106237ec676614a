//! 3D-stacked DRAM (Gutierrez et al., ASPLOS 2014): independent ports of closed-page banks.
//!
//! Every access opens a page, moves one line and closes the page, so there are no row hits to model: an access to
//! an idle port completes `access_latency` after it arrives. The latency is to the requested (critical) word: the
//! source's 10 ns is shorter than the 10.24 ns a 64-byte line needs on a 6.25 GB/s port, so the line's transfer
//! does not add to an idle access; it paces back-to-back lines. Two resources make it queue:
//! * its bank, busy for the whole closed-page access (activate to precharge), so one bank serves one line per
//!   `access_latency`; consecutive lines of a port go to consecutive banks;
//! * its port's data bus, which moves one line per `line_size / port_bandwidth`; this sets a stream's rate.
//!
//! Banks and buses are booked in time, not in call order ([`BusyCalendar`]): requests reach a port slightly out of
//! time order (a queue's DMA is stamped one PCIe latency ahead of its core), and a request waits only where it
//! would overlap an access already booked, never for the next-free tick of one later in time. The bus is booked by when a line's data is ready, so a line whose bank is free goes ahead
//! of one still waiting for its bank. Requests in time order queue exactly as on next-free ticks while the lines
//! of a port are ready in that order too; when a busy bank holds one back, the lines behind it no longer wait
//! (next-free ticks kept them in call order), so nothing completes later than before.
//! Writes are timed like reads (a closed-page write also opens and closes its page) and return when their data
//! is written.

use super::calendar::BusyCalendar;
use super::{report_stats, PortMap, StatDocs};
use crate::{AccessKind, MemPort, MemReq, StatSink, Tick};
use kvsim_params::StackedDram as Params;

#[derive(Debug, Clone, Default)]
struct Port {
    /// Each bank's closed-page accesses, activate to precharge.
    banks: Vec<BusyCalendar>,
    /// The data bus, booked in completion times: a line completing at `done` holds `[done, done + transfer)`
    /// (its transfer shifted by one transfer, so a line starting before tick 0 is still representable).
    bus: BusyCalendar,
    reads: u64,
    writes: u64,
    /// Sum over requests of (completion - arrival - access_latency): time lost to busy banks and the bus.
    queue_delay: Tick,
}

/// How this stack describes its statistics (the names and arithmetic are shared in `report_stats`).
const STAT_DOCS: StatDocs = StatDocs {
    unit: kvsim_params::paths::stack_port,
    unit_reads: "line reads served by this port",
    unit_writes: "line writes served by this port",
    reads: "line reads served",
    writes: "line writes served",
    bytes: "bytes moved over all ports",
    bandwidth: "bytes moved per second of simulated time, in GB/s (memory power)",
    queue_delay: "mean wait beyond the access latency for a busy bank or data bus, ps",
};

/// A 3D DRAM stack: `ports` independent ports, each with `banks_per_port` closed-page banks and one data bus.
#[derive(Debug, Clone)]
pub struct StackedDram {
    latency: Tick,
    transfer: Tick,
    line: u64,
    map: PortMap,
    ports: Vec<Port>,
    /// When the statistics were last reset (bandwidth counts from here).
    since: Tick,
}

impl StackedDram {
    pub fn new(p: &Params) -> Self {
        let line = p.line_size;
        StackedDram {
            latency: p.access_latency,
            transfer: Self::transfer_ticks(line, p.port_bandwidth),
            line,
            map: PortMap::new(p.port_map == kvsim_params::StackedDramPortMap::Address, line),
            ports: (0..p.ports)
                .map(|_| Port { banks: vec![BusyCalendar::default(); p.banks_per_port as usize], ..Port::default() })
                .collect(),
            since: 0,
        }
    }

    /// Start the statistics afresh at `now` (the region of interest); banks and buses keep their state.
    pub fn reset_stats(&mut self, now: Tick) {
        for p in &mut self.ports {
            (p.reads, p.writes, p.queue_delay) = (0, 0, 0);
        }
        self.since = now;
    }

    /// Ticks one line holds a port's bus at `gbps` GB/s (1e9 bytes/s), rounded up to a whole ps: 64 B at 6.25
    /// GB/s is 10,240 ps. The same rounding as `StackedDram.line_transfer_ps` in models/stacked.py.
    pub fn transfer_ticks(line: u64, gbps: f64) -> Tick {
        (line as f64 * 1e3 / gbps).ceil() as Tick
    }

    /// Ticks a line holds its port's data bus.
    pub fn line_transfer(&self) -> Tick {
        self.transfer
    }
}

impl MemPort for StackedDram {
    fn reset_port_stats(&mut self, now: Tick) {
        self.reset_stats(now)
    }

    fn routes_by_owner(&self) -> bool {
        self.map.by_owner()
    }

    fn access(&mut self, req: &MemReq) -> Tick {
        let (port_index, block) = self.map.route(req, self.ports.len() as u64, self.line);
        let port = &mut self.ports[port_index];
        let bank = (block % port.banks.len() as u64) as usize;
        let start = port.banks[bank].book(req.time, self.latency);
        // The requested word arrives `latency` after the access starts, unless the bus is moving other lines
        // then: the line ends at the earliest time after that its transfer fits between theirs. Back-to-back lines
        // are thus paced by the bandwidth.
        let done = port.bus.book(start + self.latency, self.transfer);
        port.queue_delay += done - req.time - self.latency;
        if req.kind == AccessKind::Write {
            port.writes += 1;
        } else {
            port.reads += 1;
        }
        done
    }

    fn stats(&self, prefix: &str, now: Tick, out: &mut StatSink) {
        let ports = self.ports.iter().map(|p| (p.reads, p.writes, p.queue_delay));
        report_stats(ports, self.line, &STAT_DOCS, prefix, now.saturating_sub(self.since), out);
    }
}
