//! A resource booked in time, not in call order: a calendar of its busy intervals.
//!
//! Requests reach a stack slightly out of time order: the NIC's DMA is stamped one PCIe latency ahead of the
//! cores, and harts run a scheduling quantum apart. A resource that kept only its next-free tick would make a core
//! request queue behind a DMA that has not happened yet. Instead, a request takes the earliest free interval at or
//! after the time it is ready that is long enough; requests that come in time order get exactly what a next-free
//! tick gives them (every gap in the calendar then lies before their arrival).
//!
//! The calendar forgets the past, so its size stays bounded: an interval that ended more than [`HORIZON`] before
//! the latest request seen is dropped, as is the oldest interval when more than [`MAX_INTERVALS`] are held.
//! Forgotten time counts as busy: a request earlier than the end of the last interval dropped starts at that end
//! (the call-order behaviour, only for a request that lags the newest by more than the horizon). Touching intervals
//! are merged, so a stream that keeps the resource busy is one interval.

use crate::Tick;
use std::collections::VecDeque;

/// How far before the newest request the calendar stays exact, ps. Assumed: 20 us covers the PCIe latency a DMA
/// runs ahead (400 ns) plus the spread of hart times (a scheduling turn of 200 instructions, even at one
/// 100 ns miss each), and several of the slowest flash operations (200 us programs are kept while they are
/// busy: only intervals that have ended are dropped).
pub const HORIZON: Tick = 20_000_000;

/// The most intervals one calendar holds; beyond it the oldest is forgotten. A bound on memory and lookup time
/// only: 20 us of 10 ns bank accesses with gaps between them is 2,000 intervals.
pub const MAX_INTERVALS: usize = 4096;

/// The busy intervals of one resource (a bank, a data bus, a flash controller).
#[derive(Debug, Clone, Default)]
pub struct BusyCalendar {
    /// Busy intervals `[start, end)`, sorted, disjoint and not touching (touching ones are merged).
    busy: VecDeque<(Tick, Tick)>,
    /// Time before this counts as busy: the end of the last interval forgotten.
    floor: Tick,
    /// The latest ready time any booking has asked for (the calendar forgets what ended a horizon before it).
    newest: Tick,
}

impl BusyCalendar {
    /// Books `len` ticks of the resource at the earliest start at or after `ready` where they fit, and returns
    /// that start.
    pub fn book(&mut self, ready: Tick, len: Tick) -> Tick {
        let mut start = ready.max(self.floor);
        // The first interval that ends after `start`; every later one does too.
        let mut i = self.busy.partition_point(|&(_, end)| end <= start);
        while let Some(&(s, e)) = self.busy.get(i) {
            if s >= start + len {
                break;
            }
            start = start.max(e);
            i += 1;
        }
        self.insert(i, start, start + len);
        self.forget(ready);
        start
    }

    /// Intervals held (for tests of the bound).
    pub fn len(&self) -> usize {
        self.busy.len()
    }

    /// Whether no interval is held.
    pub fn is_empty(&self) -> bool {
        self.busy.is_empty()
    }

    /// Puts `[start, end)` at position `i` (between the intervals before and after it), merging touching ones.
    fn insert(&mut self, i: usize, start: Tick, end: Tick) {
        if start == end {
            return;
        }
        let joins_prev = i > 0 && self.busy[i - 1].1 == start;
        let joins_next = self.busy.get(i).is_some_and(|&(s, _)| s == end);
        match (joins_prev, joins_next) {
            (true, true) => {
                self.busy[i - 1].1 = self.busy[i].1;
                self.busy.remove(i);
            }
            (true, false) => self.busy[i - 1].1 = end,
            (false, true) => self.busy[i].0 = start,
            (false, false) => self.busy.insert(i, (start, end)),
        }
    }

    /// Drops the intervals that ended a horizon before the newest request, and the oldest beyond the bound.
    fn forget(&mut self, ready: Tick) {
        self.newest = self.newest.max(ready);
        let cutoff = self.newest.saturating_sub(HORIZON);
        while let Some(&(_, end)) = self.busy.front() {
            if end >= cutoff && self.busy.len() <= MAX_INTERVALS {
                break;
            }
            self.floor = self.floor.max(end);
            self.busy.pop_front();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn in_order_bookings_queue_as_a_next_free_tick() {
        let mut c = BusyCalendar::default();
        assert_eq!(c.book(0, 10), 0);
        assert_eq!(c.book(0, 10), 10);
        assert_eq!(c.book(5, 10), 20);
        assert_eq!(c.book(100, 10), 100);
        // Touching intervals are one: [0, 30) and [100, 110).
        assert_eq!(c.len(), 2);
    }

    #[test]
    fn an_earlier_request_fills_a_gap_before_a_later_one() {
        let mut c = BusyCalendar::default();
        assert_eq!(c.book(400, 10), 400);
        assert_eq!(c.book(0, 10), 0);
        // Fits exactly between [0, 10) and [400, 410): joins all three into one.
        assert_eq!(c.book(10, 390), 10);
        assert_eq!(c.len(), 1);
        // A gap too short is skipped.
        let mut c = BusyCalendar::default();
        c.book(20, 10);
        assert_eq!(c.book(5, 20), 30);
        assert_eq!(c.book(0, 10), 0);
    }

    #[test]
    fn time_a_horizon_before_the_newest_request_counts_as_busy() {
        let mut c = BusyCalendar::default();
        c.book(0, 10);
        c.book(HORIZON + 100, 10);
        // [0, 10) ended more than a horizon before the newest request: forgotten, and so is the time before it.
        assert_eq!(c.len(), 1);
        assert_eq!(c.book(0, 5), 10);
        // Within the horizon the calendar is exact.
        assert_eq!(c.book(200, 5), 200);
    }

    #[test]
    fn the_calendar_holds_at_most_its_bound() {
        let mut c = BusyCalendar::default();
        for k in 0..(MAX_INTERVALS as u64 + 10) {
            c.book(2 * k, 1);
        }
        assert_eq!(c.len(), MAX_INTERVALS);
        // The 10 oldest were forgotten, up to the end of the 10th ([18, 19)).
        assert_eq!(c.book(0, 1), 19);
    }
}
