//! One DRAM bank's reservations as a short timeline of row episodes, so a request may be served by its arrival.
//!
//! Requests reach [`super::Dram`] in call order, not arrival order: a core may call with a request dated after one
//! another core calls with later (the cores run in quanta), and a software prefetch may be dated ahead of the
//! demand reads behind it. A bank that kept only its frontier (the earliest next ACT, PRE and CAS) would serve
//! them in call order: an earlier read called after a later-dated one would wait behind it, with the bank idle in
//! between. An FR-FCFS controller sees requests by arrival: when the earlier one arrives, the later one has not yet,
//! so the earlier one's commands go at once. This timeline gives the earlier request that gap when it can take it
//! without moving anything already reserved, which is what serving by arrival would have produced for it; when it
//! cannot (the gap is too short), it goes after them as before, and is counted (`reversed_reads`).
//!
//! The bank's time is a sequence of episodes, one per row activation: the PRE that closed the previous row (none
//! when the bank was precharged: at the start or after a refresh), the ACT, the column commands to that row, and
//! the earliest tick a PRE may close it again (tRAS after the ACT, tRTP after a read, tWR after a write's data).
//! A request fits in an earlier gap in two ways, each keeping the reservations on both sides and the row-buffer
//! state every later reservation assumed:
//! - a row hit: a column command to the row an episode holds open, no earlier than its ACT + tRCD, early enough
//!   that the PRE closing the episode keeps tRTP (a read) or tWR (a write) to it;
//! - a new episode (PRE if a row is open, ACT, column command) between two episodes: after the earlier one may be
//!   closed, and early enough that the later one's PRE keeps tRAS and tRTP/tWR to it. The later episode then
//!   closes this row instead of the one before, and still begins with a PRE (a conflict stays a conflict). Before
//!   the first episode, if the bank was precharged there, the new episode is closed by a PRE of its own tRP before
//!   the later ACT (the later request still finds the bank precharged).
//!
//! A refresh is an entry of the timeline too (review s26 D2): the bank precharged from tRP before its start to its
//! end, ordered as a request arriving when it fell due. A request that arrived before it, called after a later one
//! triggered it, may still take a gap before it (ending its row tRP before the refresh starts); a refresh no
//! longer wipes the bank's history.
//!
//! The rank's ACT spacing (tRRD, tFAW), tCCD_L and the data bus are checked by the channel's own timelines, which
//! already take gaps. Only `BANK_EPISODES` entries are kept; nothing may go before the oldest kept one.

use super::Ticks;
use crate::Tick;

/// Episodes a bank keeps (assumed: a prefetch dated ~2 us ahead spans about 6 episodes of a bank at the 60-core
/// socket's load; twice that, rounded up, keeps the search short).
pub(super) const BANK_EPISODES: usize = 16;

/// The `row` of a refresh entry (no row address reaches it: rows are line numbers shifted right).
const REFRESH: u64 = u64::MAX;

/// One activation of a row: from the PRE that closed the row before it (if any) to the PRE that closes it. Or a
/// refresh (`row` REFRESH): `open_pre` tRP before it starts (the latest the row before it may close), `act` its
/// start, `pre_min` its end (the bank precharged and free from then), every arrival its due tick.
#[derive(Debug, Clone, Copy)]
struct RowEpisode {
    row: u64,
    /// The PRE that closed the previous row; None when the bank was precharged before this ACT.
    open_pre: Option<Tick>,
    act: Tick,
    /// The earliest tick a PRE may close this row: tRAS after the ACT, tRTP after each read, tWR after each
    /// write's data.
    pre_min: Tick,
    /// Arrival of the request that opened the row (its ACT precedes every column command in the episode).
    opener_arrival: Tick,
    /// Latest arrival of any request in the episode.
    max_arrival: Tick,
    /// Earliest arrival of any request in the episode.
    min_arrival: Tick,
}

/// Where a request may go on its bank, with the earliest ticks its bank allows there.
#[derive(Debug, Clone, Copy)]
pub(super) struct Gap {
    /// The episode it joins (a row hit) or the index a new episode takes.
    pub(super) pos: usize,
    pub kind: GapKind,
    /// The latest tick its episode's `pre_min` may reach: the PRE (or, before a precharged bank's ACT, the ACT - tRP)
    /// of the episode after it; `Tick::MAX` when nothing follows.
    pub pre_limit: Tick,
}

#[derive(Debug, Clone, Copy)]
pub(super) enum GapKind {
    /// A column command to the open row, no earlier than `cas`.
    Hit { cas: Tick },
    /// The bank is precharged: ACT no earlier than `act`.
    Miss { act: Tick },
    /// Another row is open: PRE no earlier than `pre`, then ACT after tRP.
    Conflict { pre: Tick },
}

/// The most gaps one request is offered: one a kept episode, one before the first, the one after the last.
pub(super) const MAX_GAPS: usize = BANK_EPISODES + 2;

#[derive(Debug, Clone)]
pub(super) struct BankTimeline {
    /// Sorted by time; at most `BANK_EPISODES`.
    episodes: Vec<RowEpisode>,
    /// The bank is precharged from this tick until the first entry (0, or a dropped refresh's end); None when a
    /// dropped episode left a row open there.
    closed_since: Option<Tick>,
    /// Latest arrival among requests no longer kept (dropped entries; a refresh keeps the timeline).
    floor_arrival: Tick,
    /// Latest arrival of every request reserved so far (kept or not).
    max_arrival: Tick,
}

impl BankTimeline {
    pub fn new() -> Self {
        BankTimeline {
            episodes: Vec::with_capacity(BANK_EPISODES + 1),
            closed_since: Some(0),
            floor_arrival: 0,
            max_arrival: 0,
        }
    }

    /// The row open after every reservation (what FR-FCFS asks of a waiting request), or None.
    #[inline]
    pub fn open_row(&self) -> Option<u64> {
        self.episodes.last().map(|e| e.row).filter(|&r| r != REFRESH)
    }

    /// The earliest tick a refresh may start on this bank: every reservation done and, if a row is open, precharged
    /// (tRP after its earliest PRE). Returns (that tick, whether a row is open).
    pub fn refresh_ready(&self, rp: Tick) -> (Tick, bool) {
        match self.episodes.last() {
            Some(e) if e.row == REFRESH => (e.pre_min, false),
            Some(e) => (e.pre_min + rp, true),
            None => (self.closed_since.unwrap_or(0), false),
        }
    }

    /// A refresh that fell due at `due` runs from `start` to `end` (after every reservation: `refresh_ready`).
    pub fn refresh(&mut self, due: Tick, start: Tick, end: Tick, rp: Tick) {
        self.max_arrival = self.max_arrival.max(due);
        let r = RowEpisode {
            row: REFRESH,
            open_pre: Some(start.saturating_sub(rp)),
            act: start,
            pre_min: end,
            opener_arrival: due,
            max_arrival: due,
            min_arrival: due,
        };
        self.episodes.push(r);
        self.drop_oldest();
    }

    /// Keep at most `BANK_EPISODES` entries: drop the oldest, remembering what it leaves behind.
    fn drop_oldest(&mut self) {
        if self.episodes.len() > BANK_EPISODES {
            let dropped = self.episodes.remove(0);
            self.floor_arrival = self.floor_arrival.max(dropped.max_arrival);
            // After a refresh the bank is precharged until the next entry; after an episode its row is open.
            self.closed_since = (dropped.row == REFRESH).then_some(dropped.pre_min);
        }
    }

    /// Whether a request that arrived at `arrival`, placed no earlier than `t`, can only go after every reservation
    /// (the common case, in arrival order): then `last_gap` is its place and `gaps` need not be searched.
    #[inline]
    pub fn only_after(&self, arrival: Tick, t: Tick) -> bool {
        self.episodes.last().is_none_or(|last| t >= last.open_pre.unwrap_or(last.act) || arrival >= last.min_arrival)
    }

    /// The gap after every reservation: a row hit in the last episode, a conflict after it, or a miss on a
    /// precharged bank.
    #[inline]
    pub fn last_gap(&self, row: u64, t: Tick, tt: &Ticks) -> Gap {
        let n = self.episodes.len();
        match self.episodes.last() {
            None => {
                Gap { pos: 0, kind: GapKind::Miss { act: t.max(self.closed_since.unwrap_or(0)) }, pre_limit: Tick::MAX }
            }
            Some(last) if last.row == REFRESH => {
                Gap { pos: n, kind: GapKind::Miss { act: t.max(last.pre_min) }, pre_limit: Tick::MAX }
            }
            Some(last) if last.row == row => {
                Gap { pos: n - 1, kind: GapKind::Hit { cas: t.max(last.act + tt.rcd) }, pre_limit: Tick::MAX }
            }
            Some(last) => Gap { pos: n, kind: GapKind::Conflict { pre: t.max(last.pre_min) }, pre_limit: Tick::MAX },
        }
    }

    /// The gaps, earliest first, where a request for `row` that arrived at `arrival` may go no earlier than `t`;
    /// the last is always after every reservation (`pre_limit` MAX), so a request always finds a place. A gap is
    /// offered only before requests that arrived after it (served by arrival: it never passes an older request).
    /// `after_cas` is the spacing from its column command to a PRE (tRTP, or the write's data and tWR); gaps too
    /// short for it are left out.
    pub fn gaps(
        &self,
        row: u64,
        arrival: Tick,
        t: Tick,
        after_cas: Tick,
        tt: &Ticks,
        out: &mut [Gap; MAX_GAPS],
    ) -> usize {
        let eps = &self.episodes;
        let n = eps.len();
        let mut k = 0;
        if !self.only_after(arrival, t) {
            // The first episode from which on every request arrived after this one: no gap before it is offered.
            let mut from = n - 1;
            while from > 0 && eps[from - 1].min_arrival > arrival {
                from -= 1;
            }
            // The latest tick an episode put before `next` may close its row (and still keep tRP before it): the
            // PRE `next` begins with (a refresh's open_pre is tRP before it), or, before a precharged bank's ACT,
            // tRP before that ACT (the new episode then closes with a PRE of its own).
            let limit_before = |next: &RowEpisode| next.open_pre.unwrap_or(next.act.saturating_sub(tt.rp));
            // Before the first entry, where the bank was precharged: ACT, column command, then a PRE of its own (or
            // the refresh's).
            let first = &eps[0];
            if let (0, Some(since)) = (from, self.closed_since) {
                if first.row != row && (first.open_pre.is_none() || first.row == REFRESH) {
                    let act = t.max(since);
                    let limit = limit_before(first);
                    if act + tt.ras.max(tt.rcd + after_cas) <= limit {
                        out[k] = Gap { pos: 0, kind: GapKind::Miss { act }, pre_limit: limit };
                        k += 1;
                    }
                }
            }
            // A row hit in episode i passes the requests of the episodes after it; a new episode after i too.
            for i in from.saturating_sub(1)..n - 1 {
                let (e, next) = (&eps[i], &eps[i + 1]);
                // Every episode after the first begins with a PRE, unless a refresh is before it (an episode put
                // before a precharged one gives that one a PRE).
                let end = limit_before(next);
                if end <= t {
                    continue;
                }
                // A new episode is never put just before one of its own row (it joins that one as a hit instead).
                if e.row == REFRESH {
                    if next.row == row {
                        continue;
                    }
                    // The bank is precharged from the refresh's end to the next entry.
                    let act = t.max(e.pre_min);
                    if act + tt.ras.max(tt.rcd + after_cas) <= end {
                        out[k] = Gap { pos: i + 1, kind: GapKind::Miss { act }, pre_limit: end };
                        k += 1;
                    }
                } else if e.row == row {
                    let cas = t.max(e.act + tt.rcd);
                    if cas + after_cas <= end {
                        out[k] = Gap { pos: i, kind: GapKind::Hit { cas }, pre_limit: end };
                        k += 1;
                    }
                } else if next.row != row {
                    let pre = t.max(e.pre_min);
                    if pre + tt.rp + tt.ras.max(tt.rcd + after_cas) <= end {
                        out[k] = Gap { pos: i + 1, kind: GapKind::Conflict { pre }, pre_limit: end };
                        k += 1;
                    }
                }
            }
        }
        out[k] = self.last_gap(row, t, tt);
        k + 1
    }

    /// Whether a request that arrived at `arrival`, placed in `gap`, is served after a request that arrived later:
    /// one of an earlier episode (or of one no longer kept), or for a row hit the one that opened its row.
    pub fn placed_after_later_arrival(&self, gap: &Gap, arrival: Tick) -> bool {
        if arrival >= self.max_arrival {
            return false; // nothing reserved arrived later (the common case): no search
        }
        self.kept_before(gap).max(self.floor_arrival) > arrival
    }

    /// The latest arrival among the kept requests a request placed in `gap` is served after: those of the episodes
    /// before it and, for a row hit, the one that opened its row (0 when none).
    fn kept_before(&self, gap: &Gap) -> Tick {
        let before = self.episodes[..gap.pos].iter().map(|e| e.max_arrival).fold(0, Tick::max);
        match gap.kind {
            GapKind::Hit { .. } => before.max(self.episodes[gap.pos].opener_arrival),
            _ => before,
        }
    }

    /// Whether every later arrival a request placed in `gap` follows (`placed_after_later_arrival`) is in an entry
    /// no longer kept.
    pub fn follows_only_dropped(&self, gap: &Gap, arrival: Tick) -> bool {
        self.kept_before(gap) <= arrival && self.floor_arrival > arrival
    }

    /// The ACT of the episode at `pos` (for the command log).
    #[cfg(test)]
    pub(super) fn episode_act(&self, pos: usize) -> Tick {
        self.episodes[pos].act
    }

    /// Reserve a request in `gap`: its ACT at `act` (None for a hit), its column command at `cas`, its episode closable
    /// from `pre_min`. Returns whether a PRE of its own was added (before a precharged bank's later ACT).
    pub fn reserve(&mut self, gap: &Gap, row: u64, act: Option<Tick>, pre_min: Tick, arrival: Tick) -> bool {
        self.max_arrival = self.max_arrival.max(arrival);
        let Some(act) = act else {
            let e = &mut self.episodes[gap.pos];
            e.pre_min = e.pre_min.max(pre_min);
            e.max_arrival = e.max_arrival.max(arrival);
            e.min_arrival = e.min_arrival.min(arrival);
            return false;
        };
        let open_pre = match gap.kind {
            GapKind::Conflict { pre } => Some(pre),
            _ => None,
        };
        let e = RowEpisode {
            row,
            open_pre,
            act,
            pre_min,
            opener_arrival: arrival,
            max_arrival: arrival,
            min_arrival: arrival,
        };
        self.episodes.insert(gap.pos, e);
        let own_pre = match self.episodes.get_mut(gap.pos + 1) {
            Some(next) if next.open_pre.is_none() => {
                // Put before a precharged bank's ACT: this row is closed at its earliest, tRP before that ACT.
                next.open_pre = Some(pre_min);
                true
            }
            // Put on a precharged bank before a refresh: a PRE of its own closes it (tRP before the refresh, the
            // gap's limit). After an open row, the refresh's precharge-all closes it instead of that row.
            Some(next) => next.row == REFRESH && open_pre.is_none(),
            None => false,
        };
        self.drop_oldest();
        own_pre
    }
}
