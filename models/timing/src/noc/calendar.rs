//! The bandwidth of one directed link: a calendar of time slots, each holding up to a slot's worth of transfer.
//!
//! Messages reach a link slightly out of time order (each core runs ahead of the others by up to a scheduling
//! quantum), so a link is not one "free at" time, which would make an early message wait behind a later one. A
//! transfer fills the slots from its start time on and ends where its last flit fits; a later-stamped message that
//! was booked first takes its place, and an earlier one fills what is left around it.

use crate::Tick;

/// Slots remembered (a power of two; bounds the memory of a link: 1024 slots of 16 cycles are 6.5 us at 2.5 GHz,
/// far more than cores drift apart). A transfer stamped before the oldest slot remembered crosses the link as if it
/// were free then: that time's bookings are forgotten. It must not be moved to the oldest slot instead: agents that
/// run far ahead of the cores (a NIC whose DMA waits for PCIe read tags under overload is dated microseconds ahead)
/// push the window on, and every core message behind it would then wait microseconds on a lightly used link.
const WINDOW: u64 = 1024;

#[derive(Debug, Clone)]
pub struct LinkCalendar {
    /// Length of one slot (ticks).
    slot: Tick,
    /// The latest slot booked.
    newest: u64,
    /// Ring of slots by index mod WINDOW: which slot an entry holds, and the ticks taken in it from its start (a
    /// slot fills front to back), side by side so a booking touches one host cache line. Allocated on first use,
    /// so idle links cost nothing.
    ring: Vec<(u64, Tick)>,
}

impl LinkCalendar {
    pub fn new(slot: Tick) -> Self {
        LinkCalendar { slot: slot.max(1), newest: 0, ring: Vec::new() }
    }

    /// When a transfer of `dur` ticks from `t` on would end, booking nothing (to choose among parallel links).
    pub fn peek(&self, t: Tick, dur: Tick) -> Tick {
        let slot = self.slot;
        let (mut i, mut off) = (t / slot, t % slot);
        if self.ring.is_empty() {
            return t + dur;
        }
        if i + WINDOW <= self.newest {
            return t + dur;
        }
        let mut rem = dur;
        loop {
            let k = (i & (WINDOW - 1)) as usize;
            let (tag, used) = self.ring[k];
            let used = if tag == i { used } else { 0 };
            let from = off.max(used).min(slot);
            let take = rem.min(slot - from);
            rem -= take;
            if rem == 0 {
                return i * slot + from + take;
            }
            i += 1;
            off = 0;
        }
    }

    /// Take `dur` ticks of the link from `t` on; returns when the transfer ends.
    pub fn reserve(&mut self, t: Tick, dur: Tick) -> Tick {
        if self.ring.is_empty() {
            self.ring = vec![(0, 0); WINDOW as usize];
        }
        let slot = self.slot;
        let (mut i, mut off) = (t / slot, t % slot);
        if i + WINDOW <= self.newest {
            return t + dur;
        }
        let mut rem = dur;
        loop {
            let entry = &mut self.ring[(i & (WINDOW - 1)) as usize];
            if entry.0 != i {
                // The entry held a slot older than the window: it starts empty for this one.
                *entry = (i, 0);
            }
            let from = off.max(entry.1).min(slot);
            let take = rem.min(slot - from);
            if take > 0 {
                entry.1 = from + take;
            }
            self.newest = self.newest.max(i);
            rem -= take;
            if rem == 0 {
                return i * slot + from + take;
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
        // An earlier transfer booked after a later one does not wait for it.
        assert_eq!(c.reserve(4000, 100), 4100);
    }

    #[test]
    fn a_transfer_older_than_the_window_crosses_when_stamped_and_books_nothing() {
        let mut c = LinkCalendar::new(10);
        assert_eq!(c.reserve(10 * (WINDOW + 5), 3), 10 * (WINDOW + 5) + 3);
        // Slot 2 has been forgotten: the transfer crosses at its own time, not at the oldest slot kept (6)...
        assert_eq!(c.peek(20, 3), 23);
        assert_eq!(c.reserve(20, 3), 23);
        assert_eq!(c.reserve(20, 3), 23);
        // ...and takes nothing from the slots kept: slot 6 is still free.
        assert_eq!(c.reserve(60, 10), 70);
        // A slot whose ring entry last held an older slot starts empty.
        assert_eq!(c.reserve(10 * (2 * WINDOW), 4), 10 * 2 * WINDOW + 4);
        assert_eq!(c.reserve(10 * WINDOW * 3 + 1, 4), 10 * WINDOW * 3 + 5);
    }
}
