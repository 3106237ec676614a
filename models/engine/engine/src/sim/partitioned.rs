//! The partitioned schedule (System.schedule = 'partitioned'), the order of turns a run on several host threads
//! would follow. Each socket is a partition. Simulated time is cut into windows as long as the smallest latency
//! between sockets (System.socket_link.latency): nothing one socket does can reach another sooner than that. In
//! each window the partitions take turns in socket order; each runs its own harts, the one furthest behind first
//! (the lowest id among equals), until every one of them has reached the window's end, exited, or stopped waiting.
//! A hart's turn is still `quantum` instructions, so it may end past the window's end, as in the global schedule;
//! windows no hart starts in are skipped. The NICs and the client step once at each window's end (the global
//! schedule steps them after every turn), so what they deliver or take during a window does not depend on which
//! partition ran first. System.partition_order = 'reversed' runs each window's partitions from the last socket to
//! the first: a run on several host threads has no order among them, so its statistics must not depend on it.
//!
//! An instruction whose timing may step outside its socket (a remote miss) is parked until the window's end
//! (`kvsim_timing::parked`): the hook reports the hart's time as `PARKED_PS`, which ends its turn (the executor's
//! deadline) and keeps it out of the window's other turns; at the window's end the hook times it, and the hart's
//! time is read again (`resume_times`).
//!
//! A system call (`ecall`) ends its hart's turn and is performed at the window's end, after the parked instructions
//! are timed, in hart order (`perform_waiting_ecalls`): what it does to the machine and reads of it then depends on
//! no partition's order.
//!
//! What this does not do yet (issue 24 item 5, HOST_THREADS.md): the sockets' partitions still share one memory
//! system (directory, LLC slices, links) and one guest memory, and they cannot run at once.

use super::{AfterEcall, Machine, Turn};
use kvsim_base::error::{SimError, SimResult};
use kvsim_base::output::StopReason;
use kvsim_isa::exec::{ExecHook, Tracer};

/// The time a timing hook reports for a hart whose instruction is parked until the window's end (a remote miss,
/// `kvsim_timing::parked`): past every window's end, so the turn ends after the parked instruction (the executor's
/// deadline) and the hart takes no other turn in the window.
pub(crate) use kvsim_isa::exec::PARKED_PS;

/// Each partition's harts in id order: partition k holds socket k's harts (a hart past the listed sockets, which the
/// configuration refuses first, stays on socket 0).
pub(super) fn partitions(hart_socket: &[u16], harts: usize) -> Vec<Vec<usize>> {
    let count = hart_socket.iter().copied().max().map_or(1, |s| s as usize + 1);
    let mut out = vec![Vec::new(); count];
    for hart in 0..harts {
        out[hart_socket.get(hart).copied().unwrap_or(0) as usize].push(hart);
    }
    out
}

impl Machine {
    /// Run under the partitioned schedule until every hart has exited or a limit is reached (timed runs only).
    /// A pause keeps the window and the partition whose turn it is, so resuming continues the same order.
    pub(super) fn run_partitioned<H: ExecHook>(
        &mut self,
        hook: &mut H,
        mut tracer: Option<&mut Tracer>,
        mut total: u64,
        window: u64,
    ) -> SimResult<StopReason> {
        loop {
            let end = match self.window_end {
                Some(end) => end,
                None => match self.least_eligible_time() {
                    Some(t) => {
                        self.window_partition = 0;
                        (t / window).saturating_add(1).saturating_mul(window)
                    }
                    None if !self.harts.iter().any(|h| h.runnable())
                        && self.harts.iter().any(|h| h.futex.is_some()) =>
                    {
                        self.resolve_waiting()?;
                        continue;
                    }
                    None => return Ok(StopReason::MaxTime),
                },
            };
            self.window_end = Some(end);
            let count = self.partitions.len();
            while self.window_partition < count {
                let p = if self.partition_reversed { count - 1 - self.window_partition } else { self.window_partition };
                while let Some(hid) = self.furthest_behind_in(p, end) {
                    if total >= self.pause_at {
                        return Ok(StopReason::Pause);
                    }
                    match self.take_turn(hid, hook, tracer.as_deref_mut(), &mut total, true)? {
                        // Only a time limit leaves a timed turn without budget, and such harts are not picked.
                        Turn::NoBudget => break,
                        Turn::Ran => {}
                        Turn::Stop(stop) => {
                            // A pause resumes inside the window, so what was posted in it waits for its end.
                            if stop != StopReason::Pause {
                                self.window_end = None;
                                hook.window_end();
                                self.resume_times(hook);
                                // The run ends here: what its harts called is still done (the stop stays the
                                // one the turn gave).
                                self.perform_waiting_ecalls(hook, total)?;
                            }
                            return Ok(stop);
                        }
                    }
                }
                self.window_partition += 1;
            }
            self.window_end = None;
            // The window's boundary: what the partitions posted each other in it takes effect (before the NICs'
            // DMA walks the memory system).
            hook.window_end();
            self.resume_times(hook);
            // Then the system calls of the window, in hart order, with every hart's time the window gave it.
            let after = self.perform_waiting_ecalls(hook, total)?;
            if after == Some(StopReason::Exit) {
                return Ok(StopReason::Exit);
            }
            // The NICs and the client advance to the least time of the live harts, once, whichever partition ran
            // last (`take_turn` leaves them alone here). Each live hart is at or past `end` now, except one whose
            // system call waited: it stays at its call's time T < `end` (the wait takes no time), so the NICs step
            // only to T and the next window has the same `end` and runs that hart on to it (one more window end,
            // `window_end` hook and NIC step per such call). What they deliver is seen from the next window on. (The hart named is 0: this schedule resumes from its windows,
            // never from a hart's turn, so nothing reads it.)
            if self.net.is_some() {
                if let Some(stop) = self.net_step(hook, total, 0)? {
                    return Ok(stop);
                }
            }
            if after == Some(StopReason::Pause) {
                return Ok(StopReason::Pause);
            }
        }
    }

    /// The window's end, after its parked instructions are timed (`resume_times`): the system calls its harts
    /// stopped at (`take_turn` leaves them waiting), in hart order. A call's effects on the machine (statistics
    /// dumps and resets, NUMA placements, memory maps, futexes, output) and what it reads (the harts' times and
    /// counters, the allocators) would otherwise depend on which partitions had run their turns of the window when
    /// it was made, and a call whose `ecall` is parked would read its hart's time as `PARKED_PS`. Here every
    /// partition has run its turns and no instruction is parked: a dump shows each hart's time at the window's end
    /// and every other hart's instructions of the window, parked or not, count before a reset made in it. The
    /// calling hart's own time does not move for the wait (an SE-mode call takes no simulated time) and it takes no
    /// other turn in the window: its instructions from its call's time T to the window's end run in the next
    /// window, after the reset, while the reset's time base is the latest hart time (at or past the window's end).
    /// So a reset (or dump) made in a window lands at the window's end: each hart's region of interest is skewed by
    /// up to one window, and the caller's work in (T, end] counts in statistics whose time base excludes it.
    /// Some(Exit) when the calls ended the run, Some(Pause) when one asked for a pause.
    fn perform_waiting_ecalls<H: ExecHook>(&mut self, hook: &mut H, total: u64) -> SimResult<Option<StopReason>> {
        let (mut pause, mut last) = (false, None);
        for hid in 0..self.harts.len() {
            if !std::mem::take(&mut self.ecall_waiting[hid]) {
                continue;
            }
            debug_assert_ne!(self.harts[hid].timed_ps, Some(PARKED_PS), "hart {hid} is still parked");
            pause |= matches!(self.perform_ecall(hid, hook)?, AfterEcall::Pause);
            last = Some(hid);
        }
        // A checkpoint the calls asked for (CHECKPOINT), or that a turn of the window left for them to make.
        if let Some(hid) = last {
            self.checkpoint_after_turn(hid, total)?;
        }
        if self.process.group_exit.is_some() || self.harts.iter().all(|h| h.exited()) {
            return Ok(Some(StopReason::Exit));
        }
        Ok(pause.then_some(StopReason::Pause))
    }

    /// After a window's end: the harts whose instructions were parked in it (`PARKED_PS`) have their times again.
    fn resume_times<H: ExecHook>(&mut self, hook: &H) {
        let mut moved = false;
        for (h, hart) in self.harts.iter_mut().enumerate() {
            if hart.timed_ps == Some(PARKED_PS) {
                hart.timed_ps = hook.time_ps(h);
                moved = true;
            }
        }
        if moved {
            self.hart_times.invalidate();
        }
    }

    /// Whether hart `h` may take a turn now (runnable, below System.max_time).
    fn eligible(&self, h: usize) -> bool {
        let hart = &self.harts[h];
        hart.runnable() && !(self.max_time > 0 && hart.time_ps() >= self.max_time)
    }

    /// The least simulated time of a hart that may take a turn.
    fn least_eligible_time(&self) -> Option<u64> {
        (0..self.harts.len()).filter(|&h| self.eligible(h)).map(|h| self.harts[h].time_ps()).min()
    }

    /// Partition `p`'s eligible hart furthest behind among those before `end` (the lowest id among equals); a hart
    /// whose system call waits for the window's end takes no other turn in it.
    fn furthest_behind_in(&self, p: usize, end: u64) -> Option<usize> {
        let mut best: Option<(u64, usize)> = None;
        for &h in &self.partitions[p] {
            let t = self.harts[h].time_ps();
            if t < end && self.eligible(h) && !self.ecall_waiting[h] && best.is_none_or(|(bt, _)| t < bt) {
                best = Some((t, h));
            }
        }
        best.map(|(_, h)| h)
    }

    /// Every hart waits on a futex: wake what can be woken, or report the deadlock (as the global schedule does).
    pub(super) fn resolve_waiting(&mut self) -> SimResult<()> {
        self.hart_times.invalidate();
        let resolved = self.os().resolve_all_waiting();
        resolved.map_err(|msg| {
            let h = self.harts.iter().find(|h| h.futex.is_some()).map_or(0, |h| h.id);
            SimError::Guest {
                kind: kvsim_base::error::FaultKind::Deadlock,
                hart: h,
                pc: self.harts[h].pc.wrapping_sub(4),
                insn: 0x73,
                reason: msg,
            }
        })
    }
}

#[cfg(test)]
#[path = "partitioned_tests.rs"]
mod tests;
