//! The network side of the scheduler: after every hart's turn the NIC and the ghost client advance, and what they
//! report (the store loaded, the measured phase starting, the client finished) steers the run.

use super::Machine;
use crate::net::{NetEvent, StepError, TimedStep};
use kvsim_base::error::{SimError, SimResult};
use kvsim_base::output::StopReason;
use kvsim_devices::bus::DeviceBus;
use kvsim_devices::dma::DmaPort;
use kvsim_isa::exec::ExecHook;

impl Machine {
    /// Step the NIC and the client after hart `hid`'s turn: a finished client stops the run; its measured phase
    /// is the region of interest (ROI begin resets the stats and, when the scheduler waits for it, pauses the run
    /// so detailed timing can start).
    pub(super) fn net_step<H: ExecHook>(
        &mut self,
        hook: &mut H,
        total: u64,
        hid: usize,
    ) -> SimResult<Option<StopReason>> {
        let Some(net) = self.net.as_mut() else { return Ok(None) };
        // In detailed timing the NIC and the client run in simulated time: up to the least time of the live harts;
        // each queue's doorbells are taken at its hart's time.
        let timed = H::ACTIVE && hook.time_ps(0).is_some() && net.timed();
        let step = if timed {
            // The harts' times as of this turn (kept turn by turn: sim/hart_times.rs).
            let (live, times) = self.hart_times.live(&self.harts, self.max_time);
            let now = live.unwrap_or_else(|| times.iter().copied().max().unwrap_or(0));
            #[cfg(test)]
            self.net_step_times.push(now);
            // Each queue at its hart's time (the first hart that owns it), else `now`. One pass over the harts,
            // backwards so the first owner is written last: a search per queue was O(queues x harts) per turn, the
            // largest cost of a 240-core run.
            // (The buffer is the net's, reused: a vector allocated per turn was a measurable share of a turn.) Only
            // when the step will read them: most steps find no NIC register written since the last and skip the
            // passes that do (`Net::needs_queue_times`); the buffer then keeps its length and earlier times.
            let mut queue_time = std::mem::take(&mut net.queue_time_buf);
            let needed = DeviceBus::of(&self.mem).is_none_or(|bus| net.needs_queue_times(bus));
            if needed || queue_time.len() != net.queue_port.len() {
                queue_time.clear();
                queue_time.resize(net.queue_port.len(), now);
                for (h, q) in net.hart_queue.iter().enumerate().rev() {
                    if let (Some(t), Some(&ht)) = (q.and_then(|q| queue_time.get_mut(q)), times.get(h)) {
                        *t = ht.max(now);
                    }
                }
            }
            let mut io = HookPort { hook: &mut *hook };
            let step = net.step(&mut self.mem, total, Some(TimedStep { now, queue_time: &queue_time, io: &mut io }));
            net.queue_time_buf = queue_time;
            step
        } else {
            net.step(&mut self.mem, total, None)
        };
        match step {
            Ok(NetEvent::Nothing) => Ok(None),
            Ok(NetEvent::Loaded) => {
                self.write_checkpoint(hid)?;
                Ok(None)
            }
            Ok(NetEvent::MeasureStart) => {
                if self.roi_begin.is_none() {
                    self.roi_begin = Some(total);
                }
                self.reset_stats();
                if H::ACTIVE {
                    hook.reset_stats();
                }
                if self.pause_on_roi {
                    self.next_turn = (hid + 1) % self.harts.len();
                    return Ok(Some(StopReason::Pause));
                }
                Ok(None)
            }
            Ok(NetEvent::ClientDone) => {
                self.roi_end = Some(total);
                Ok(Some(StopReason::ClientDone))
            }
            Err(StepError::Client(msg)) => Err(SimError::Client(msg)),
            Err(StepError::Dma(f)) => {
                let hart = net.hart_queue.iter().position(|&q| q == Some(f.queue)).unwrap_or(0);
                Err(SimError::Guest {
                    kind: f.trap.kind(),
                    hart,
                    pc: self.harts[hart].pc,
                    insn: 0,
                    reason: format!("NIC queue {} DMA {}: {}", f.queue, f.what, f.trap.reason()),
                })
            }
        }
    }
}

/// The timing hook's coherent I/O path as a DMA port: every access enters the memory system as its agent.
pub struct HookPort<'h, H: ExecHook> {
    pub hook: &'h mut H,
}

impl<H: ExecHook> DmaPort for HookPort<'_, H> {
    fn agent(&self) -> usize {
        0
    }

    fn access_as(&mut self, agent: usize, owner: Option<usize>, addr: u64, write: bool, t: u64) -> u64 {
        self.hook.io_access(agent, owner, addr, write, t)
    }
}
