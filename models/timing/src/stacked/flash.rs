//! 3D NAND flash (Gutierrez et al., ASPLOS 2014, Iridium): independent controllers, each serving one page read or
//! program at a time. A read takes `read_latency`, a write (program) `write_latency`; a request that finds its
//! controller busy waits for it. A controller is booked in time ([`BusyCalendar`]), not in call order: a request
//! takes the earliest free interval from its arrival that fits its operation, so a DMA stamped ahead of the cores
//! delays a core's earlier read only if the two would overlap. Writes return when the program completes: a flash
//! write is not posted, since the stack has no write buffer in the source design.

use super::calendar::BusyCalendar;
use super::{report_stats, PortMap, StatDocs};
use crate::{AccessKind, MemPort, MemReq, StatSink, Tick};
use kvsim_params::NandFlash as Params;

#[derive(Debug, Clone, Default)]
struct Controller {
    busy: BusyCalendar,
    reads: u64,
    writes: u64,
    queue_delay: Tick,
}

/// How this stack describes its statistics (the names and arithmetic are shared in `report_stats`).
const STAT_DOCS: StatDocs = StatDocs {
    unit: kvsim_params::paths::flash_controller,
    unit_reads: "page reads served by this controller",
    unit_writes: "page programs served by this controller",
    reads: "reads served",
    writes: "writes (programs) served",
    bytes: "bytes requested over all controllers",
    bandwidth: "bytes per second of simulated time, in GB/s (memory power)",
    queue_delay: "mean wait for a busy controller, ps",
};

/// A 3D NAND stack: `controllers` independent queues.
#[derive(Debug, Clone)]
pub struct NandFlash {
    read: Tick,
    write: Tick,
    line: u64,
    map: PortMap,
    controllers: Vec<Controller>,
    /// When the statistics were last reset (bandwidth counts from here).
    since: Tick,
}

impl NandFlash {
    pub fn new(p: &Params) -> Self {
        NandFlash {
            read: p.read_latency,
            write: p.write_latency,
            line: p.line_size,
            map: PortMap::new(p.port_map == kvsim_params::NandFlashPortMap::Address, p.interleave),
            controllers: vec![Controller::default(); p.controllers as usize],
            since: 0,
        }
    }

    /// Start the statistics afresh at `now` (the region of interest); the controllers keep their queues.
    pub fn reset_stats(&mut self, now: Tick) {
        for c in &mut self.controllers {
            (c.reads, c.writes, c.queue_delay) = (0, 0, 0);
        }
        self.since = now;
    }
}

impl MemPort for NandFlash {
    fn reset_port_stats(&mut self, now: Tick) {
        self.reset_stats(now)
    }

    fn routes_by_owner(&self) -> bool {
        self.map.by_owner()
    }

    fn access(&mut self, req: &MemReq) -> Tick {
        let (index, _) = self.map.route(req, self.controllers.len() as u64, self.line);
        let c = &mut self.controllers[index];
        let service = if req.kind == AccessKind::Write {
            c.writes += 1;
            self.write
        } else {
            c.reads += 1;
            self.read
        };
        let start = c.busy.book(req.time, service);
        c.queue_delay += start - req.time;
        start + service
    }

    fn stats(&self, prefix: &str, now: Tick, out: &mut StatSink) {
        let controllers = self.controllers.iter().map(|c| (c.reads, c.writes, c.queue_delay));
        report_stats(controllers, self.line, &STAT_DOCS, prefix, now.saturating_sub(self.since), out);
    }
}
