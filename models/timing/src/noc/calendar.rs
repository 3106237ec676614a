//! The bandwidth of one directed link: a calendar of time slots, each holding up to a slot's worth of transfer.
//!
//! Messages reach a link slightly out of time order (each core runs ahead of the others by up to a scheduling
//! quantum), so a link is not one "free at" time, which would make an early message wait behind a later one. A
//! transfer fills the slots from its start time on and ends where its last flit fits; a later-stamped message that
//! was booked first takes its place, and an earlier one fills what is left around it.

use std::collections::VecDeque;

use crate::Tick;

/// Slots remembered; a transfer stamped before the oldest starts at the oldest (bounds the memory of a link).
const SLOTS_KEPT: usize = 4096;

#[derive(Debug, Clone)]
pub struct LinkCalendar {
    /// Length of one slot (ticks).
    slot: Tick,
    /// Index of the oldest slot kept.
    base: u64,
    /// Ticks taken in each slot from the slot's start (a slot fills front to back).
    used: VecDeque<Tick>,
}

impl LinkCalendar {
    pub fn new(slot: Tick) -> Self {
        LinkCalendar { slot: slot.max(1), base: 0, used: VecDeque::new() }
    }

    /// Take `dur` ticks of the link from `t` on; returns when the transfer ends.
    pub fn reserve(&mut self, t: Tick, dur: Tick) -> Tick {
        let slot = self.slot;
        let mut i = (t / slot).max(self.base);
        let mut off = if i == t / slot { t % slot } else { 0 };
        let mut rem = dur;
        loop {
            let k = (i - self.base) as usize;
            while self.used.len() <= k {
                self.used.push_back(0);
            }
            let used = &mut self.used[k];
            let from = off.max(*used).min(slot);
            let take = rem.min(slot - from);
            if take > 0 || rem == 0 {
                *used = from + take;
            }
            rem -= take;
            if rem == 0 {
                let end = i * slot + from + take;
                while self.used.len() > SLOTS_KEPT {
                    self.used.pop_front();
                    self.base += 1;
                }
                return end;
            }
            i += 1;
            off = 0;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn transfers_at_once_serialise_and_a_free_link_starts_at_once() {
        let mut c = LinkCalendar::new(1000);
        assert_eq!(c.reserve(100, 300), 400);
        assert_eq!(c.reserve(100, 300), 700);
        // Across a slot boundary: 300 left in slot 0, the rest in slot 1.
        assert_eq!(c.reserve(100, 500), 1200);
        assert_eq!(c.reserve(5000, 10), 5010);
    }
}
