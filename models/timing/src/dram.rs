//! DDR3/DDR4 DRAM: channels, ranks, bank groups, banks with open-page row buffers, JEDEC timings from named
//! presets, FR-FCFS scheduling within a queue window, posted writes drained by watermarks, and refresh.
//!
//! Timing is computed by reservation: each bank, rank and channel keeps the earliest tick at which its next
//! command of each kind may go, and a request's commands (PRE, ACT, RD/WR) are placed at the earliest ticks that
//! satisfy every constraint. Reads are placed as they arrive (their requester needs the completion time now);
//! posted writes wait in a write queue and drain FR-FCFS when it passes its high watermark. [`Dram::schedule_batch`]
//! runs the FR-FCFS scheduler over any set of queued requests (tests, and agents that can wait for a batch).
//! Rank- and channel-wide resources (ACT spacing, tFAW, tCCD_L, the data bus with its turnarounds) keep a short
//! timeline of recent commands, and a new command may take any gap that respects its neighbours: a request held up
//! by its busy bank does not hold up requests to other banks. Each bank keeps a short timeline of its row episodes
//! ([`bank_timeline`]): requests come in call order, which is not arrival order (cores run in quanta; a software
//! prefetch may be dated ahead), and a request that arrives before reservations already made on its bank takes an
//! earlier gap there when it fits without moving them, as a controller that sees requests by arrival would have
//! served it; when it does not fit it goes after them and is counted (`reversed_reads`).

mod bank_timeline;
#[cfg(test)]
mod command_check;
mod reversal;

use crate::{ratio, AccessKind, MemPort, MemReq, StatSink, Tick};
use bank_timeline::{BankTimeline, Gap, GapKind, MAX_GAPS};
use kvsim_params::{DramPreset, MemoryController, DRAM_PRESETS, DRAM_PRESET_DDR3_1600, DRAM_PRESET_DDR4_2400};
use reversal::Reversal;

/// JEDEC timings of one speed grade. Cycle counts are in nCK (DRAM clocks); `t_rfc`/`t_refi` in ps.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct DramTimings {
    pub t_ck: Tick,
    pub cl: u64,
    pub cwl: u64,
    pub rcd: u64,
    pub rp: u64,
    pub ras: u64,
    pub rrd_s: u64,
    pub rrd_l: u64,
    pub faw: u64,
    pub ccd_s: u64,
    pub ccd_l: u64,
    pub wr: u64,
    pub wtr_s: u64,
    pub wtr_l: u64,
    pub rtp: u64,
    pub burst_length: u64,
    pub t_rfc: Tick,
    pub t_refi: Tick,
    pub bank_groups: u64,
    pub banks_per_group: u64,
}

/// The generated presets and a resolved MemoryController name their timing fields alike: one copy for both.
macro_rules! timings_of {
    ($p:expr) => {{
        let p = $p;
        DramTimings {
            t_ck: p.t_ck,
            cl: p.t_cl,
            cwl: p.t_cwl,
            rcd: p.t_rcd,
            rp: p.t_rp,
            ras: p.t_ras,
            rrd_s: p.t_rrd_s,
            rrd_l: p.t_rrd_l,
            faw: p.t_faw,
            ccd_s: p.t_ccd_s,
            ccd_l: p.t_ccd_l,
            wr: p.t_wr,
            wtr_s: p.t_wtr_s,
            wtr_l: p.t_wtr_l,
            rtp: p.t_rtp,
            burst_length: p.burst_length,
            t_rfc: p.t_rfc,
            t_refi: p.t_refi,
            bank_groups: p.bank_groups,
            banks_per_group: p.banks_per_group,
        }
    }};
}

impl DramTimings {
    /// The timings of a generated preset (the table is `PRESETS` in models/dram.py, with its sources).
    pub const fn from_preset(p: &DramPreset) -> DramTimings {
        timings_of!(p)
    }
}

/// DDR4-2400R (17-17-17): models/dram.py's preset.
pub const DDR4_2400: DramTimings = DramTimings::from_preset(&DRAM_PRESET_DDR4_2400);
/// DDR3-1600K (11-11-11): models/dram.py's preset.
pub const DDR3_1600: DramTimings = DramTimings::from_preset(&DRAM_PRESET_DDR3_1600);

/// A named preset's timings.
pub fn preset(name: &str) -> Option<DramTimings> {
    DRAM_PRESETS.iter().find(|p| p.name == name).map(DramTimings::from_preset)
}

/// The timings of a configuration. The Python side resolved every field (preset value or override), so this
/// only copies them.
pub fn resolve_timings(p: &MemoryController) -> DramTimings {
    timings_of!(p)
}

/// Timings converted to ticks once, so the hot path only adds.
#[derive(Debug, Clone, Copy)]
struct Ticks {
    cl: Tick,
    cwl: Tick,
    rcd: Tick,
    rp: Tick,
    ras: Tick,
    rrd_s: Tick,
    rrd_l: Tick,
    faw: Tick,
    ccd_s: Tick,
    ccd_l: Tick,
    wr: Tick,
    wtr_s: Tick,
    wtr_l: Tick,
    rtp: Tick,
    burst: Tick,
    rd_to_wr: Tick,
    /// The largest spacing two data bursts may need (a write then a read in one bank group).
    bus_gap_max: Tick,
    rfc: Tick,
    refi: Tick,
}

impl Ticks {
    fn new(t: &DramTimings) -> Self {
        let c = |n: u64| n * t.t_ck;
        let burst = c(t.burst_length / 2);
        Ticks {
            cl: c(t.cl),
            cwl: c(t.cwl),
            rcd: c(t.rcd),
            rp: c(t.rp),
            ras: c(t.ras),
            rrd_s: c(t.rrd_s),
            rrd_l: c(t.rrd_l),
            faw: c(t.faw),
            ccd_s: c(t.ccd_s),
            ccd_l: c(t.ccd_l),
            wr: c(t.wr),
            wtr_s: c(t.wtr_s),
            wtr_l: c(t.wtr_l),
            rtp: c(t.rtp),
            burst,
            // JEDEC read-to-write command spacing: RL + BL/2 + 2 nCK - WL.
            rd_to_wr: (c(t.cl) + burst + c(2)).saturating_sub(c(t.cwl)),
            bus_gap_max: burst.max(c(t.ccd_s))
                + (c(t.wtr_l.max(t.wtr_s)) + c(t.cl)).max((c(t.cl) + burst + c(2)).saturating_sub(c(t.cwl)) + c(t.cwl)),
            rfc: t.t_rfc,
            refi: t.t_refi,
        }
    }
}

#[derive(Debug, Clone)]
struct Rank {
    /// Recent ACTs (tick, bank group), sorted by tick: for tRRD_S/L and tFAW.
    acts: Timeline,
    next_refresh: Tick,
    /// Per bank group: recent column commands, for tCCD_L.
    cas_bg: Vec<Timeline>,
}

/// Recent commands on one resource, sorted by tick, each with a tag (bank group, and for the data bus whether it
/// was a write). A new command may go into any gap that keeps the spacing rules with its neighbours on both sides,
/// so a request that must wait for its bank does not hold up requests to other banks (the reordering an FR-FCFS
/// controller does). Only the most recent `TIMELINE_LEN` commands are kept.
#[derive(Debug, Clone, Default)]
struct Timeline {
    items: Vec<(Tick, u8)>,
    /// The latest command dropped from `items`: nothing may go before it (with its spacing).
    floor: Option<(Tick, u8)>,
}

const TIMELINE_LEN: usize = 48;

impl Timeline {
    /// The earliest tick >= `t` at which a command tagged `tag` keeps `gap(earlier_tag, later_tag)` ticks from
    /// every neighbour (measured start to start). `max_gap` bounds every gap: items that end their spacing by
    /// `t` cannot matter, so the scan starts after them. `FLOOR` false ignores the history no longer kept (only the
    /// reversed reads' diagnosis asks that).
    #[inline]
    fn fit<const FLOOR: bool>(&self, mut t: Tick, tag: u8, max_gap: Tick, gap: impl Fn(u8, u8) -> Tick) -> Tick {
        if let (true, Some((x, _))) = (FLOOR, self.floor) {
            // Every dropped command is at or before the floor, but the spacing from one of them may exceed the
            // floor's own (the data bus: a write, then a read of another bank group, then a read of the write's
            // group needs tWTR_L from the write, 2 nCK more than the two steps' tWTR_S + burst). So keep the
            // largest spacing from the floor, which keeps every one (review s26 D1).
            t = t.max(x + max_gap);
        }
        // Items are sorted; one pass moves t past every conflict (a later item can only push t further).
        let first = self.items.partition_point(|&(x, _)| x + max_gap <= t);
        for &(x, xt) in &self.items[first..] {
            if x >= t + max_gap {
                break; // it and every later item are far enough after t
            }
            // Either it is earlier (keep its spacing after it), or later but too close: go after it.
            if x <= t || t + gap(tag, xt) > x {
                t = t.max(x + gap(xt, tag));
            }
        }
        t
    }

    #[inline]
    fn insert(&mut self, t: Tick, tag: u8) {
        let pos = self.items.partition_point(|&(x, _)| x <= t);
        self.items.insert(pos, (t, tag));
        if self.items.len() > TIMELINE_LEN {
            self.floor = Some(self.items.remove(0));
        }
    }

    /// tFAW: would an ACT at `t` make five ACTs within `faw`? If so, the first tick after `t` worth trying.
    #[inline]
    fn faw_violation<const FLOOR: bool>(&self, t: Tick, faw: Tick) -> Option<Tick> {
        let lo = t.saturating_sub(faw - 1);
        if let (true, Some((x, _))) = (FLOOR, self.floor) {
            if x >= lo {
                return Some(x + faw); // too close to history we no longer keep: be conservative
            }
        }
        let hi = t + faw - 1;
        let mut near: [Tick; 9] = [0; 9];
        let mut n = 0;
        let mut me = 0;
        let mut placed = false;
        // Items are sorted: start at the first one inside [lo, hi] and stop after the last.
        let start = self.items.partition_point(|&(x, _)| x < lo);
        for &(x, _) in &self.items[start..] {
            if x > hi {
                break;
            }
            if !placed && x > t {
                me = n;
                near[n] = t;
                n += 1;
                placed = true;
            }
            if n < 9 {
                near[n] = x;
                n += 1;
            }
        }
        if !placed && n < 9 {
            me = n;
            near[n] = t;
            n += 1;
        }
        // Every five consecutive ACTs that include this one must span at least tFAW.
        for j in me.saturating_sub(4)..=me {
            if j + 4 < n && near[j + 4] - near[j] < faw {
                return Some(if j == me { near[j + 1] + 1 } else { near[j] + faw });
            }
        }
        None
    }
}

/// The data bus spacing from a burst tagged `x` to a later one tagged `y` (tags: bank group | 0x80 for a write),
/// first data tick to first data tick.
#[inline]
fn bus_gap(tt: &Ticks, x: u8, y: u8) -> Tick {
    let (xw, yw) = (x & 0x80 != 0, y & 0x80 != 0);
    tt.burst.max(tt.ccd_s)
        + match (xw, yw) {
            // End of write data, tWTR, then the read's CL before its data.
            (true, false) => (if x & 0x7f == y & 0x7f { tt.wtr_l } else { tt.wtr_s }) + tt.cl,
            // Read to write: RL + BL/2 + 2 - WL between commands = 2 nCK of bus turnaround.
            (false, true) => tt.rd_to_wr + tt.cwl - tt.cl - tt.burst,
            _ => 0,
        }
}

/// The earliest column command >= `cas` of bank group `bg` that keeps tCCD_L in its group (`cas_bg`) and finds a
/// data bus slot keeping the turnarounds with the neighbouring bursts (`bus`; tCCD_S is implied: a BL8 burst lasts
/// tCCD_S). Returns it and the rounds taken.
///
/// It alternates the two fits until the bus slot matches the column command. It always ends (review s26 D4): a
/// round that does not end moved the bus fit past a burst (or the floor) that keeps the slot from then on, since
/// every tick only grows, so there are at most `bus.items.len() + 2` rounds (50 for 48 kept bursts). The former
/// cap of 64 rounds, which would have returned a column command the bus fit had not checked, could therefore never
/// bind; the loop now has no cap, only that bound asserted.
#[inline]
fn column_slot<const FLOOR: bool>(
    cas_bg: &Timeline,
    bus: &Timeline,
    tt: &Ticks,
    bg: u8,
    write: bool,
    mut cas: Tick,
) -> (Tick, usize) {
    let lat = if write { tt.cwl } else { tt.cl };
    let tag = bg | if write { 0x80 } else { 0 };
    let mut rounds = 0;
    loop {
        rounds += 1;
        debug_assert!(rounds <= bus.items.len() + 2, "the column search passed its bound");
        cas = cas_bg.fit::<FLOOR>(cas, 0, tt.ccd_l, |_, _| tt.ccd_l);
        let data = bus.fit::<FLOOR>(cas + lat, tag, tt.bus_gap_max, |x, y| bus_gap(tt, x, y));
        if data == cas + lat {
            return (cas, rounds);
        }
        cas = data - lat;
    }
}

/// Where a line lives.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DramAddr {
    pub channel: usize,
    pub rank: usize,
    pub bankgroup: usize,
    pub bank: usize,
    pub row: u64,
    pub column: u64,
}

/// How a request found its row buffer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RowOutcome {
    Hit,
    /// The bank was precharged (closed).
    Miss,
    /// Another row was open: precharge first.
    Conflict,
}

#[derive(Debug, Clone, Copy)]
struct Queued {
    id: usize,
    line: u64,
    at: DramAddr,
    /// When the controller may serve it, the order its bank serves requests by: a read's arrival; a posted
    /// write's is the drain that sends it (review s26 D3: its posting time would put it before reads that arrived
    /// before the drain, which a controller serves first).
    arrival: Tick,
    /// When it reached the controller (for the queueing statistics).
    posted: Tick,
    write: bool,
}

#[derive(Debug, Clone, Default)]
struct ChannelStats {
    reads: u64,
    writes: u64,
    row_hits: u64,
    row_misses: u64,
    row_conflicts: u64,
    read_latency_sum: Tick,
    read_queue_sum: Tick,
    write_queue_sum: Tick,
    bus_busy: Tick,
    refreshes: u64,
    write_drains: u64,
    forwarded_reads: u64,
    refresh_precharges: u64,
    /// PREs a request put before a precharged bank's later ACT closed its own row with.
    own_precharges: u64,
    /// Reads placed after a request of a later arrival on their bank (no earlier gap took them).
    reversed_reads: u64,
    /// Of them, by cause ([`Reversal`]): no earlier gap on the bank; history no longer kept; the channel busy.
    reversed_short: u64,
    reversed_history: u64,
    reversed_other: u64,
}

#[derive(Debug, Clone)]
struct Channel {
    banks: Vec<BankTimeline>,
    ranks: Vec<Rank>,
    /// Data bursts: (first data tick, bank group | 0x80 if a write).
    bus: Timeline,
    write_queue: Vec<Queued>,
    stats: ChannelStats,
    /// Every command placed and every refresh, for the unit tests' checker only (`command_check`).
    #[cfg(test)]
    log: command_check::CommandLog,
}

/// One memory controller with its channels.
#[derive(Debug, Clone)]
pub struct Dram {
    timings: DramTimings,
    t: Ticks,
    channels: Vec<Channel>,
    /// Address fields, least significant first, with their sizes (row: whatever is left).
    fields: Vec<(Field, u64)>,
    n_bg: usize,
    n_banks: usize,
    line_shift: u32,
    window: usize,
    wq_high: usize,
    wq_low: usize,
    wq_cap: usize,
    front: Tick,
    back: Tick,
    /// Tick of the last stats reset: bandwidths and utilisation are over the time since.
    stats_base: Tick,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Field {
    Row,
    Rank,
    Bank,
    BankGroup,
    Column,
    Channel,
}

/// Cache lines are 64 bytes: one BL8 burst on a 64-bit channel.
pub const DRAM_LINE: u64 = 64;

impl Dram {
    pub fn new(p: &MemoryController) -> Self {
        let timings = resolve_timings(p);
        let t = Ticks::new(&timings);
        let (n_ranks, n_bg, n_banks) =
            (p.ranks as usize, timings.bank_groups as usize, timings.banks_per_group as usize);
        let columns = (p.row_size / DRAM_LINE).max(1);
        let mut fields = Vec::new();
        for name in p.address_map.split(':').rev() {
            let f = match name {
                "row" => (Field::Row, 1 << 18),
                "rank" => (Field::Rank, p.ranks),
                "bank" => (Field::Bank, timings.banks_per_group),
                "bankgroup" => (Field::BankGroup, timings.bank_groups),
                "column" => (Field::Column, columns),
                "channel" => (Field::Channel, p.channels),
                other => panic!("unknown DRAM address field {other:?} in {:?}", p.address_map),
            };
            fields.push(f);
        }
        // The most significant field takes whatever is left, whatever it is.
        if let Some(last) = fields.last_mut() {
            last.1 = u64::MAX;
        }
        let rank = Rank { acts: Timeline::default(), next_refresh: t.refi, cas_bg: vec![Timeline::default(); n_bg] };
        let channel = Channel {
            banks: vec![BankTimeline::new(); n_ranks * n_bg * n_banks],
            ranks: vec![rank; n_ranks],
            bus: Timeline::default(),
            write_queue: Vec::with_capacity(p.write_queue as usize),
            stats: ChannelStats::default(),
            #[cfg(test)]
            log: Default::default(),
        };
        let front = p.ctrl_latency / 2;
        Dram {
            timings,
            t,
            channels: vec![channel; p.channels as usize],
            fields,
            n_bg,
            n_banks,
            line_shift: DRAM_LINE.trailing_zeros(),
            window: p.queue_window as usize,
            wq_high: p.write_high_watermark as usize,
            wq_low: p.write_low_watermark as usize,
            wq_cap: p.write_queue as usize,
            front,
            back: p.ctrl_latency - front,
            stats_base: 0,
        }
    }

    pub fn timings(&self) -> &DramTimings {
        &self.timings
    }

    /// Peak data bandwidth of one channel in bytes per second.
    pub fn peak_channel_bw(&self) -> f64 {
        DRAM_LINE as f64 / (self.t.burst as f64 * 1e-12)
    }

    /// Split a byte address into channel, rank, bank group, bank, row and column.
    ///
    /// The line address is read as a mixed-radix number whose digits are the fields of the address map, least
    /// significant first: each field is the remaining line number modulo its size, and the rest moves on. For the
    /// channel this is the line number modulo the channel count, which works for any count (6 channels, 3
    /// channels) and spreads consecutive lines exactly evenly; a XOR-folded map would need a power of two. The
    /// map is a bijection: the fields above the channel see the quotient, so no channel has holes. Its known
    /// weakness: a stride that shares a factor with the count (2 lines on 6 channels) reaches only
    /// count / gcd(stride, count) channels.
    pub fn decode(&self, addr: u64) -> DramAddr {
        let mut line = addr >> self.line_shift;
        let mut a = DramAddr { channel: 0, rank: 0, bankgroup: 0, bank: 0, row: 0, column: 0 };
        for &(f, n) in &self.fields {
            let v = if n == u64::MAX { line } else { line % n };
            line = if n == u64::MAX { 0 } else { line / n };
            match f {
                Field::Row => a.row = v,
                Field::Rank => a.rank = v as usize,
                Field::Bank => a.bank = v as usize,
                Field::BankGroup => a.bankgroup = v as usize,
                Field::Column => a.column = v,
                Field::Channel => a.channel = v as usize,
            }
        }
        a
    }

    #[inline]
    fn bank_index(&self, a: &DramAddr) -> usize {
        (a.rank * self.n_bg + a.bankgroup) * self.n_banks + a.bank
    }

    /// Perform every refresh of `rank` that is due by `t`: close all its banks and block them for tRFC.
    fn catch_up_refresh(&mut self, ch: usize, rank: usize, t: Tick) {
        let per_rank = self.n_bg * self.n_banks;
        let tt = self.t;
        let c = &mut self.channels[ch];
        while c.ranks[rank].next_refresh <= t {
            let due = c.ranks[rank].next_refresh;
            let banks = &mut c.banks[rank * per_rank..(rank + 1) * per_rank];
            // Precharge-all first if any bank is open; REF may go once every bank is precharged and idle.
            let mut start = due;
            let mut any_open = false;
            for b in banks.iter() {
                let (ready, open) = b.refresh_ready(tt.rp);
                start = start.max(ready);
                any_open |= open;
            }
            c.stats.refresh_precharges += any_open as u64;
            let end = start + tt.rfc;
            for b in banks.iter_mut() {
                b.refresh(due, start, end, tt.rp);
            }
            #[cfg(test)]
            c.log.refreshes.push((rank, start, end));
            c.ranks[rank].next_refresh = due + tt.refi;
            c.stats.refreshes += 1;
        }
    }

    /// Place one request's commands no earlier than `t`, in the earliest gap of its bank that takes it
    /// ([`bank_timeline`]); returns (first command tick, end of its data burst, how it found its row).
    fn issue(&mut self, q: &Queued, t: Tick) -> (Tick, Tick, RowOutcome) {
        let a = q.at;
        self.catch_up_refresh(a.channel, a.rank, t);
        let bi = self.bank_index(&a);
        let tt = self.t;
        let c = &mut self.channels[a.channel];
        // From the column command to the earliest PRE after it: tRTP after a read; a write's data, then tWR.
        let after_cas = if q.write { tt.cwl + tt.burst + tt.wr } else { tt.rtp };
        if c.banks[bi].only_after(q.arrival, t) {
            // In arrival order (the common case): after every reservation, which always takes it.
            let gap = c.banks[bi].last_gap(a.row, t, &tt);
            let (first, act, cas) = Self::place::<true>(c, &tt, &a, q.write, &gap);
            let pre_min = act.map_or(0, |x| x + tt.ras).max(cas + after_cas);
            let why = Self::reversed(c, &tt, q, bi, &gap, &[]);
            return Self::reserve(c, &tt, q, bi, &gap, first, act, cas, pre_min, why);
        }
        let mut gaps = [Gap { pos: 0, kind: GapKind::Hit { cas: 0 }, pre_limit: 0 }; MAX_GAPS];
        let n = c.banks[bi].gaps(a.row, q.arrival, t, after_cas, &tt, &mut gaps);
        for (i, gap) in gaps[..n].iter().enumerate() {
            let (first, act, cas) = Self::place::<true>(c, &tt, &a, q.write, gap);
            let pre_min = act.map_or(0, |x| x + tt.ras).max(cas + after_cas);
            if pre_min > gap.pre_limit {
                debug_assert!(i + 1 < n, "the last gap has no limit");
                continue;
            }
            let why = Self::reversed(c, &tt, q, bi, gap, &gaps[..i]);
            return Self::reserve(c, &tt, q, bi, gap, first, act, cas, pre_min, why);
        }
        unreachable!("the last gap always takes the request")
    }

    /// For a read placed in `gap` after a request that arrived later on its bank, why (`refused`: the earlier
    /// gaps its bank offered); None for a write or a read in arrival order.
    #[inline]
    fn reversed(c: &Channel, tt: &Ticks, q: &Queued, bi: usize, gap: &Gap, refused: &[Gap]) -> Option<Reversal> {
        let bank = &c.banks[bi];
        (!q.write && bank.placed_after_later_arrival(gap, q.arrival))
            .then(|| Self::reversal(c, tt, &q.at, bank, gap, q.arrival, refused))
    }

    /// Where `gap` puts a request's commands, given the rank's ACT spacing, tCCD_L and the data bus: (first command,
    /// ACT if any, column command). Nothing is reserved. `FLOOR` false ignores the commands the rank's and the
    /// bus's timelines no longer keep (the reversed reads' diagnosis only).
    fn place<const FLOOR: bool>(
        c: &Channel,
        tt: &Ticks,
        a: &DramAddr,
        write: bool,
        gap: &Gap,
    ) -> (Tick, Option<Tick>, Tick) {
        let bg = a.bankgroup as u8;
        let r = &c.ranks[a.rank];
        // tRRD_S/L from every neighbouring ACT of the rank, and tFAW.
        let fit_act = |mut act: Tick| loop {
            act = r.acts.fit::<FLOOR>(act, bg, tt.rrd_s.max(tt.rrd_l), |x, y| if x == y { tt.rrd_l } else { tt.rrd_s });
            match r.acts.faw_violation::<FLOOR>(act, tt.faw) {
                Some(next) => act = next,
                None => break act,
            }
        };
        let (first, act, cas_earliest) = match gap.kind {
            GapKind::Hit { cas } => (None, None, cas),
            GapKind::Miss { act } => {
                let act = fit_act(act);
                (Some(act), Some(act), act + tt.rcd)
            }
            GapKind::Conflict { pre } => {
                let act = fit_act(pre + tt.rp);
                (Some(pre), Some(act), act + tt.rcd)
            }
        };
        let (cas, _) = column_slot::<FLOOR>(&r.cas_bg[a.bankgroup], &c.bus, tt, bg, write, cas_earliest);
        (first.unwrap_or(cas), act, cas)
    }

    /// Reserve a request placed by `place` in `gap` (its episode closable from `pre_min`) and count it.
    #[allow(clippy::too_many_arguments)]
    fn reserve(
        c: &mut Channel,
        tt: &Ticks,
        q: &Queued,
        bi: usize,
        gap: &Gap,
        first: Tick,
        act: Option<Tick>,
        cas: Tick,
        pre_min: Tick,
        reversed: Option<Reversal>,
    ) -> (Tick, Tick, RowOutcome) {
        let a = q.at;
        let r = &mut c.ranks[a.rank];
        if let Some(act) = act {
            r.acts.insert(act, a.bankgroup as u8);
        }
        r.cas_bg[a.bankgroup].insert(cas, 0);
        let lat = if q.write { tt.cwl } else { tt.cl };
        c.bus.insert(cas + lat, a.bankgroup as u8 | if q.write { 0x80 } else { 0 });
        let data_end = cas + lat + tt.burst;
        c.stats.bus_busy += tt.burst;
        let bank = &mut c.banks[bi];
        if q.write {
            c.stats.writes += 1;
            c.stats.write_queue_sum += first.saturating_sub(q.posted);
        } else {
            c.stats.reads += 1;
            c.stats.read_queue_sum += first.saturating_sub(q.arrival);
            c.stats.read_latency_sum += data_end - q.arrival;
            if let Some(why) = reversed {
                c.stats.reversed_reads += 1;
                *match why {
                    Reversal::Short => &mut c.stats.reversed_short,
                    Reversal::History => &mut c.stats.reversed_history,
                    Reversal::Other => &mut c.stats.reversed_other,
                } += 1;
            }
        }
        #[cfg(test)]
        let hit_act = matches!(gap.kind, GapKind::Hit { .. }).then(|| bank.episode_act(gap.pos));
        #[cfg(test)]
        let prev_act = gap.pos.checked_sub(1).map(|p| bank.episode_act(p));
        let own_pre = bank.reserve(gap, a.row, act, pre_min, q.arrival);
        c.stats.own_precharges += own_pre as u64;
        #[cfg(test)]
        c.log.record(&a, bi, gap, act, hit_act, prev_act, cas, pre_min, q.write, own_pre);
        let outcome = match gap.kind {
            GapKind::Hit { .. } => RowOutcome::Hit,
            GapKind::Miss { .. } => RowOutcome::Miss,
            GapKind::Conflict { .. } => RowOutcome::Conflict,
        };
        match outcome {
            RowOutcome::Hit => c.stats.row_hits += 1,
            RowOutcome::Miss => c.stats.row_misses += 1,
            RowOutcome::Conflict => c.stats.row_conflicts += 1,
        }
        (first, data_end, outcome)
    }

    /// Would this request hit its bank's open row now?
    fn is_row_hit(&self, q: &Queued) -> bool {
        self.channels[q.at.channel].banks[self.bank_index(&q.at)].open_row() == Some(q.at.row)
    }

    /// FR-FCFS over `pending` (sorted by arrival, all of one channel): repeatedly, when the data bus is about to
    /// free, take the oldest row hit among the first `window` requests that have arrived, else the oldest.
    /// Returns (id, completion) in service order.
    /// The choice is made when the data bus is about to free (one CL before), but the chosen request's commands
    /// go at the earliest ticks its bank allows (not before `start`), so activates overlap other banks' transfers.
    fn fr_fcfs(&mut self, pending: Vec<Queued>, start: Tick) -> Vec<(usize, Tick, RowOutcome)> {
        let mut done = Vec::with_capacity(pending.len());
        let mut pending = std::collections::VecDeque::from(pending);
        let mut now = start;
        while !pending.is_empty() {
            let ch = pending[0].at.channel;
            let bus_free = self.channels[ch].bus.items.last().map_or(0, |&(x, _)| x + self.t.burst);
            let bus_ready = bus_free.saturating_sub(self.t.cl);
            now = now.max(pending[0].arrival).max(bus_ready);
            let mut pick = 0;
            for (i, q) in pending.iter().take(self.window).enumerate() {
                if q.arrival > now {
                    break;
                }
                if self.is_row_hit(q) {
                    pick = i;
                    break;
                }
            }
            let q = pending.remove(pick).expect("picked from the queue");
            let (_first, end, outcome) = self.issue(&q, start.max(q.arrival));
            done.push((q.id, end, outcome));
        }
        done
    }

    /// Schedule a batch of queued requests (byte address, is_write, arrival tick at the controller) with FR-FCFS,
    /// per channel. Returns each request's data completion tick (without the controller latency), in input order,
    /// and how it found its row.
    pub fn schedule_batch(&mut self, reqs: &[(u64, bool, Tick)]) -> Vec<(Tick, RowOutcome)> {
        let mut out = vec![(0, RowOutcome::Hit); reqs.len()];
        for ch in 0..self.channels.len() {
            let mut pending: Vec<Queued> = reqs
                .iter()
                .enumerate()
                .map(|(id, &(addr, write, arrival))| Queued {
                    id,
                    line: addr >> self.line_shift,
                    at: self.decode(addr),
                    arrival,
                    posted: arrival,
                    write,
                })
                .filter(|q| q.at.channel == ch)
                .collect();
            pending.sort_by_key(|q| (q.arrival, q.id));
            for (id, end, outcome) in self.fr_fcfs(pending, 0) {
                out[id] = (end, outcome);
            }
        }
        out
    }

    /// Drain the channel's write queue down to `keep` entries, FR-FCFS, starting at `now`.
    fn drain_writes(&mut self, ch: usize, now: Tick, keep: usize) {
        let wq = std::mem::take(&mut self.channels[ch].write_queue);
        let n = wq.len().saturating_sub(keep);
        if n == 0 {
            self.channels[ch].write_queue = wq;
            return;
        }
        let mut pending: Vec<Queued> = wq;
        let rest = pending.split_off(n);
        // The drained writes are served from the drain on: their banks order them as arriving then.
        for q in &mut pending {
            q.arrival = q.arrival.max(now);
        }
        self.channels[ch].stats.write_drains += 1;
        self.fr_fcfs(pending, now);
        let c = &mut self.channels[ch];
        c.write_queue = rest;
    }

    /// Write every posted write (end of a run).
    pub fn flush(&mut self, now: Tick) {
        for ch in 0..self.channels.len() {
            self.drain_writes(ch, now, 0);
        }
    }

    /// Start the statistics afresh at `now` (bank and bus state are kept).
    pub fn reset_stats(&mut self, now: Tick) {
        for c in &mut self.channels {
            c.stats = ChannelStats::default();
        }
        self.stats_base = now;
    }

    /// Reads served so far across channels (for tests).
    pub fn reads(&self) -> u64 {
        self.channels.iter().map(|c| c.stats.reads + c.stats.forwarded_reads).sum()
    }
}

impl MemPort for Dram {
    fn flush_posted(&mut self, now: Tick) {
        Dram::flush(self, now);
    }

    fn reset_port_stats(&mut self, now: Tick) {
        Dram::reset_stats(self, now);
    }

    fn channel_of(&self, addr: u64) -> (usize, usize) {
        (self.decode(addr).channel, self.channels.len())
    }

    fn access(&mut self, req: &MemReq) -> Tick {
        let arrival = req.time + self.front;
        let at = self.decode(req.addr);
        let line = req.addr >> self.line_shift;
        let q = Queued { id: 0, line, at, arrival, posted: arrival, write: req.kind == AccessKind::Write };
        if q.write {
            let c = &mut self.channels[at.channel];
            if !c.write_queue.iter().any(|w| w.line == line) {
                c.write_queue.push(q);
            }
            if c.write_queue.len() >= self.wq_high.min(self.wq_cap) {
                self.drain_writes(at.channel, arrival, self.wq_low);
            }
            return arrival;
        }
        let c = &mut self.channels[at.channel];
        if c.write_queue.iter().any(|w| w.line == line) {
            // Served from the write queue: the newest data is there.
            c.stats.forwarded_reads += 1;
            return arrival + self.t.burst + self.back;
        }
        let (_, end, _) = self.issue(&q, arrival);
        end + self.back
    }

    fn stats(&self, prefix: &str, now: Tick, out: &mut StatSink) {
        let now = now.saturating_sub(self.stats_base);
        let secs = now as f64 * 1e-12;
        let mut total_rd = 0.0;
        let mut total_wr = 0.0;
        for (i, c) in self.channels.iter().enumerate() {
            let s = &c.stats;
            let p = prefix.to_owned() + &kvsim_params::paths::channel(i);
            let rd_bytes = ((s.reads + s.forwarded_reads) * DRAM_LINE) as f64;
            let wr_bytes = (s.writes * DRAM_LINE) as f64;
            total_rd += rd_bytes;
            total_wr += wr_bytes;
            let accesses = (s.row_hits + s.row_misses + s.row_conflicts) as f64;
            out.add(&p, "reads", s.reads as f64, "line reads issued to DRAM");
            out.add(&p, "writes", s.writes as f64, "line writes issued to DRAM");
            out.add(&p, "read_bytes", rd_bytes, "bytes read (including reads served from the write queue)");
            out.add(&p, "write_bytes", wr_bytes, "bytes written");
            out.add(&p, "read_bw", ratio(rd_bytes, secs), "read bandwidth, bytes/s since the last stats reset");
            out.add(&p, "write_bw", ratio(wr_bytes, secs), "write bandwidth, bytes/s since the last stats reset");
            out.add(
                &p,
                "bus_utilization",
                ratio(s.bus_busy as f64, now as f64),
                "fraction of time the data bus is busy",
            );
            out.add(&p, "row_hits", s.row_hits as f64, "accesses to the open row");
            out.add(&p, "row_misses", s.row_misses as f64, "accesses to a precharged bank (ACT needed)");
            out.add(&p, "row_conflicts", s.row_conflicts as f64, "accesses to a bank with another row open (PRE+ACT)");
            out.add(&p, "row_hit_rate", ratio(s.row_hits as f64, accesses), "row hits / accesses");
            out.add(
                &p,
                "activates",
                (s.row_misses + s.row_conflicts) as f64,
                "ACT commands (row misses and conflicts)",
            );
            out.add(
                &p,
                "precharges",
                (s.row_conflicts + s.refresh_precharges + s.own_precharges) as f64,
                "PRE commands (row conflicts, precharge-all before refresh when a bank was open, and a row put \
                 before a precharged bank's later ACT or before a refresh on a precharged bank closing itself)",
            );
            out.add(
                &p,
                "read_latency_avg",
                ratio(s.read_latency_sum as f64, s.reads as f64),
                "ps from arrival at the controller to the end of the data burst, per read",
            );
            out.add(
                &p,
                "read_queue_latency_avg",
                ratio(s.read_queue_sum as f64, s.reads as f64),
                "ps a read waits before its first command",
            );
            out.add(
                &p,
                "write_queue_latency_avg",
                ratio(s.write_queue_sum as f64, s.writes as f64),
                "ps a posted write waits before its first command",
            );
            out.add(&p, "refreshes", s.refreshes as f64, "refresh commands (all ranks)");
            out.add(&p, "write_drains", s.write_drains as f64, "times the write queue drained past its watermark");
            out.add(&p, "forwarded_reads", s.forwarded_reads as f64, "reads served from the write queue");
            out.add(
                &p,
                "reversed_reads",
                s.reversed_reads as f64,
                "reads their bank serves after a request that arrived later: one in an earlier row episode or one no \
                 longer kept, a refresh that fell due after they arrived, or the one that opened their row (a lower \
                 bound: order within an episode is not tracked; in a batch, FR-FCFS's row-hit-first picks count too)",
            );
            out.add(
                &p,
                "reversed_short",
                s.reversed_short as f64,
                "reversed reads (diagnostic) whose bank offered no earlier gap: each too short for the read's \
                 commands, before its arrival, or before a request that arrived before it",
            );
            out.add(
                &p,
                "reversed_history",
                s.reversed_history as f64,
                "reversed reads (diagnostic) that follow only requests the bank no longer keeps, or whose earlier gap \
                 only commands the rank's or bus's timelines no longer keep refused",
            );
            out.add(
                &p,
                "reversed_other",
                s.reversed_other as f64,
                "reversed reads (diagnostic) whose earlier gaps the rank's ACT spacing, tCCD_L or the data bus refused \
                 with commands still kept",
            );
        }
        out.add(prefix, "read_bw", ratio(total_rd, secs), "read bandwidth of all channels, bytes/s");
        out.add(prefix, "write_bw", ratio(total_wr, secs), "write bandwidth of all channels, bytes/s");
    }
}
