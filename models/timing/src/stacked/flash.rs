//! 3D NAND flash (Gutierrez et al., ASPLOS 2014, Iridium): independent controllers, each serving one page read or
//! program at a time in arrival (call) order. A read takes `read_latency`, a write (program) `write_latency`;
//! a request that finds its controller busy waits for it. Writes return when the program completes: a flash
//! write is not posted, since the stack has no write buffer in the source design.

use super::PortMap;
use crate::{AccessKind, MemPort, MemReq, StatSink, Tick};
use kvsim_params::NandFlash as Params;

#[derive(Debug, Clone, Default)]
struct Controller {
    free: Tick,
    reads: u64,
    writes: u64,
    queue_delay: Tick,
}

/// A 3D NAND stack: `controllers` independent queues.
#[derive(Debug, Clone)]
pub struct NandFlash {
    read: Tick,
    write: Tick,
    line: u64,
    map: PortMap,
    controllers: Vec<Controller>,
}

impl NandFlash {
    pub fn new(p: &Params) -> Self {
        NandFlash {
            read: p.read_latency,
            write: p.write_latency,
            line: p.line_size,
            map: PortMap::new(p.port_map == kvsim_params::NandFlashPortMap::Address, p.interleave),
            controllers: vec![Controller::default(); p.controllers as usize],
        }
    }
}

impl MemPort for NandFlash {
    fn access(&mut self, req: &MemReq) -> Tick {
        let (index, _) = self.map.route(req, self.controllers.len() as u64, self.line);
        let c = &mut self.controllers[index];
        let start = req.time.max(c.free);
        let service = if req.kind == AccessKind::Write {
            c.writes += 1;
            self.write
        } else {
            c.reads += 1;
            self.read
        };
        c.queue_delay += start - req.time;
        c.free = start + service;
        c.free
    }

    fn stats(&self, prefix: &str, now: Tick, out: &mut StatSink) {
        let (mut reads, mut writes, mut delay) = (0u64, 0u64, 0u64);
        for (i, c) in self.controllers.iter().enumerate() {
            let pre = format!("{prefix}controller{i}.");
            out.add(&pre, "reads", c.reads as f64, "page reads served by this controller");
            out.add(&pre, "writes", c.writes as f64, "page programs served by this controller");
            reads += c.reads;
            writes += c.writes;
            delay += c.queue_delay;
        }
        let bytes = (reads + writes) * self.line;
        out.add(prefix, "reads", reads as f64, "reads served");
        out.add(prefix, "writes", writes as f64, "writes (programs) served");
        out.add(prefix, "bytes", bytes as f64, "bytes requested over all controllers");
        let gbps = if now == 0 { 0.0 } else { bytes as f64 / (now as f64 * 1e-12) / 1e9 };
        out.add(prefix, "bandwidth_gbps", gbps, "bytes per second of simulated time, in GB/s (memory power)");
        out.add(
            prefix,
            "avg_queue_delay_ps",
            crate::ratio(delay as f64, (reads + writes) as f64),
            "mean wait for a busy controller, ps",
        );
    }
}
