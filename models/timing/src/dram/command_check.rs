//! A unit-test checker of the DRAM commands `Dram` places (review s26 D3): random traffic, called out of its arrival
//! order through the public `MemPort` interface, and every command checked against the bank rules (row state,
//! tRCD, tRP, tRAS, tRTP, tWR, refresh), the rank's ACT spacing (tRRD_S/L, tFAW), tCCD_L and the data bus (bursts
//! apart, tWTR_S/L and read-to-write between every pair, review s26 D1). The log is compiled only into the unit
//! tests (`#[cfg(test)]`), never into the model's hot path.

use super::bank_timeline::{Gap, GapKind};
use super::{DramAddr, Ticks};
use crate::Tick;

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Kind {
    Pre,
    Act,
    Read,
    Write,
}

/// One command: (tick, kind, channel-wide bank index, rank, bank group, row).
type Cmd = (Tick, Kind, usize, usize, usize, u64);

#[derive(Debug, Clone, Default)]
pub(super) struct CommandLog {
    cmds: Vec<Cmd>,
    /// (rank, start, end) of every refresh.
    pub(super) refreshes: Vec<(usize, Tick, Tick)>,
    /// Own PREs by (bank, ACT of the episode they close): index in `cmds`. A later row hit in an episode put before a
    /// refresh on a precharged bank extends it up to tRP before the refresh (review s27 #1), so its PRE moves.
    own_pres: std::collections::HashMap<(usize, Tick), usize>,
    /// Own PREs (indices in `cmds`) a conflict PRE closing the same episode later replaced: a new episode put between
    /// a row with its own PRE and a refresh is placed as a conflict, whose PRE closes that row instead.
    pub(super) replaced: Vec<usize>,
}

impl CommandLog {
    /// A request placed in `gap`: its conflict PRE, ACT, column command and, if it added one, its own PRE. For a row
    /// hit, `hit_act` is its episode's ACT and `pre_min` the earliest PRE after its column command: an own PRE already
    /// logged for that episode moves to it if later.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn record(
        &mut self,
        a: &DramAddr,
        bi: usize,
        gap: &Gap,
        act: Option<Tick>,
        hit_act: Option<Tick>,
        prev_act: Option<Tick>,
        cas: Tick,
        pre_min: Tick,
        write: bool,
        own_pre: bool,
    ) {
        if let Some(&i) = hit_act.and_then(|h| self.own_pres.get(&(bi, h))) {
            self.cmds[i].0 = self.cmds[i].0.max(pre_min);
        }
        if let (GapKind::Conflict { .. }, Some(i)) = (gap.kind, prev_act.and_then(|p| self.own_pres.remove(&(bi, p)))) {
            self.replaced.push(i);
        }
        let c = |t, k| (t, k, bi, a.rank, a.bankgroup, a.row);
        if let GapKind::Conflict { pre } = gap.kind {
            self.cmds.push(c(pre, Kind::Pre));
        }
        if let Some(act) = act {
            self.cmds.push(c(act, Kind::Act));
        }
        self.cmds.push(c(cas, if write { Kind::Write } else { Kind::Read }));
        if own_pre {
            if let Some(act) = act {
                self.own_pres.insert((bi, act), self.cmds.len());
            }
            self.cmds.push(c(pre_min, Kind::Pre));
        }
    }

    /// Every rule broken, as text (empty when none), and how many refreshes found their bank closed by a PRE with
    /// no ACT after it (an own PRE before a refresh: the case the tRP check below guards).
    fn violations(&self, tt: &Ticks) -> (Vec<String>, u64) {
        let mut bad = Vec::new();
        let mut pre_then_refresh = 0;
        let mut cmds: Vec<Cmd> =
            self.cmds.iter().enumerate().filter(|(i, _)| !self.replaced.contains(i)).map(|(_, &c)| c).collect();
        cmds.sort();
        let banks = cmds.iter().map(|c| c.2).max().map_or(0, |b| b + 1);
        for bank in 0..banks {
            let rank = cmds.iter().find(|c| c.2 == bank).map_or(0, |c| c.3);
            // The bank's commands and its rank's refreshes, in time order (a refresh as (start, end)).
            let mut events: Vec<(Tick, Option<Cmd>, Tick)> =
                cmds.iter().filter(|c| c.2 == bank).map(|&c| (c.0, Some(c), 0)).collect();
            events.extend(self.refreshes.iter().filter(|r| r.0 == rank).map(|&(_, s, e)| (s, None, e)));
            events.sort_by_key(|e| (e.0, e.1.is_some()));
            // The last PRE: None while the bank has been precharged from the start or from a refresh.
            let (mut open, mut act, mut pre, mut rd, mut wr) =
                (None::<u64>, 0, None::<Tick>, None::<Tick>, None::<Tick>);
            // The earliest tick the open row may be closed.
            let close_min = |act: Tick, rd: Option<Tick>, wr: Option<Tick>| {
                (act + tt.ras).max(rd.map_or(0, |r| r + tt.rtp)).max(wr.map_or(0, |w| w + tt.cwl + tt.burst + tt.wr))
            };
            let mut busy_until = 0; // the last refresh's end
            for &(t, cmd, end) in &events {
                let Some((_, kind, _, _, _, row)) = cmd else {
                    if open.is_some() && t < close_min(act, rd, wr) + tt.rp {
                        bad.push(format!("bank {bank}: refresh at {t} before the open row may be precharged"));
                    } else if let (None, Some(p)) = (open, pre) {
                        // Review s27 #1: a row closed by its own PRE keeps tRP before the refresh too.
                        pre_then_refresh += 1;
                        if t < p + tt.rp {
                            bad.push(format!("bank {bank}: refresh at {t} breaks tRP after PRE at {p}"));
                        }
                    }
                    (open, pre) = (None, None);
                    busy_until = end;
                    continue;
                };
                if t < busy_until {
                    bad.push(format!("bank {bank}: {kind:?} at {t} inside a refresh ending {busy_until}"));
                }
                match kind {
                    Kind::Pre => {
                        if open.is_none() {
                            bad.push(format!("bank {bank}: PRE at {t} with no row open"));
                        } else if t < close_min(act, rd, wr) {
                            bad.push(format!("bank {bank}: PRE at {t} breaks tRAS/tRTP/tWR ({act} {rd:?} {wr:?})"));
                        }
                        (open, pre) = (None, Some(t));
                    }
                    Kind::Act => {
                        if open.is_some() {
                            bad.push(format!("bank {bank}: ACT at {t} with a row open"));
                        } else if pre.is_some_and(|p| t < p + tt.rp) {
                            bad.push(format!("bank {bank}: ACT at {t} breaks tRP after PRE at {pre:?}"));
                        }
                        (open, act, rd, wr) = (Some(row), t, None, None);
                    }
                    Kind::Read | Kind::Write => {
                        if open != Some(row) {
                            bad.push(format!("bank {bank}: {kind:?} of row {row} at {t}, open row {open:?}"));
                        } else if t < act + tt.rcd {
                            bad.push(format!("bank {bank}: {kind:?} at {t} breaks tRCD after ACT at {act}"));
                        }
                        if kind == Kind::Read {
                            rd = rd.max(Some(t));
                        } else {
                            wr = wr.max(Some(t));
                        }
                    }
                }
            }
        }
        // Per rank: tRRD_S/L between neighbouring ACTs and tFAW over every five.
        let ranks = cmds.iter().map(|c| c.3).max().map_or(0, |r| r + 1);
        for rank in 0..ranks {
            let acts: Vec<&Cmd> = cmds.iter().filter(|c| c.3 == rank && c.1 == Kind::Act).collect();
            for (i, b) in acts.iter().enumerate() {
                for a in acts[i.saturating_sub(8)..i].iter() {
                    let need = if a.4 == b.4 { tt.rrd_l } else { tt.rrd_s };
                    if b.0 < a.0 + need {
                        bad.push(format!("rank {rank}: ACTs at {} and {} break tRRD", a.0, b.0));
                    }
                }
                if i >= 4 && b.0 < acts[i - 4].0 + tt.faw {
                    bad.push(format!("rank {rank}: five ACTs from {} to {} break tFAW", acts[i - 4].0, b.0));
                }
            }
            // Per bank group: tCCD_L between column commands.
            let groups = cmds.iter().map(|c| c.4).max().map_or(0, |g| g + 1);
            for bg in 0..groups {
                let cas: Vec<Tick> = cmds
                    .iter()
                    .filter(|c| c.3 == rank && c.4 == bg && matches!(c.1, Kind::Read | Kind::Write))
                    .map(|c| c.0)
                    .collect();
                for w in cas.windows(2) {
                    if w[1] < w[0] + tt.ccd_l {
                        bad.push(format!(
                            "rank {rank} group {bg}: column commands at {} and {} break tCCD_L",
                            w[0], w[1]
                        ));
                    }
                }
            }
        }
        // The data bus, every pair of column commands close enough to matter (not only neighbours: a turnaround
        // binds a write and a read with other bursts between them, JEDEC JESD79-4 tWTR_S/L and read-to-write):
        // - bursts do not overlap (tCCD_S is one BL8 burst);
        // - write then read: the read command tWTR after the end of the write's data, tWTR_L when both are in one
        //   bank group of one rank, else tWTR_S (the model applies tWTR_S across ranks, stricter than JEDEC's
        //   rank-to-rank turnaround);
        // - read then write: the write command RL + BL/2 + 2 nCK - WL after the read's (`rd_to_wr`).
        let mut cols: Vec<(Tick, Tick, bool, usize, usize)> = cmds
            .iter()
            .filter(|c| matches!(c.1, Kind::Read | Kind::Write))
            .map(|c| {
                let write = c.1 == Kind::Write;
                (c.0 + if write { tt.cwl } else { tt.cl }, c.0, write, c.3, c.4)
            })
            .collect();
        cols.sort();
        for (i, &(data_b, cmd_b, wb, rank_b, bg_b)) in cols.iter().enumerate() {
            for &(data_a, cmd_a, wa, rank_a, bg_a) in cols[..i].iter().rev() {
                if data_a + tt.bus_gap_max <= data_b {
                    break; // sorted by data tick: every earlier burst is further away still
                }
                if data_b < data_a + tt.burst {
                    bad.push(format!("bus: bursts at {data_a} and {data_b} overlap"));
                }
                match (wa, wb) {
                    (true, false) => {
                        let wtr = if (rank_a, bg_a) == (rank_b, bg_b) { tt.wtr_l } else { tt.wtr_s };
                        if cmd_b < data_a + tt.burst + wtr {
                            bad.push(format!(
                                "bus: read at {cmd_b} breaks tWTR ({wtr}) after the write data ending {}",
                                data_a + tt.burst
                            ));
                        }
                    }
                    (false, true) if cmd_b < cmd_a + tt.rd_to_wr => {
                        bad.push(format!("bus: write at {cmd_b} breaks read-to-write after the read at {cmd_a}"));
                    }
                    _ => {}
                }
            }
        }
        (bad, pre_then_refresh)
    }
}

#[cfg(test)]
mod tests {
    use super::super::{Dram, DRAM_PRESET_DDR3_1600, DRAM_PRESET_DDR4_2400};
    use crate::synth::dram_params_with;
    use crate::{AccessKind, MemPort, MemReq};

    /// Random traffic whose call order differs from its arrival order: 1 request in 4 dated ahead (up to 60 ns,
    /// 300 ns, 2 us or 5 us), some dated back up to 300 ns; 20% writes; 6 rows over 4 banks in 2 bank groups;
    /// requests 0-63, 0-7 or 0-3 ns apart. With `idle` (review s27 #1), 1 request in 64 comes after a pause of up to
    /// 20 us and the dated-back ones go back up to 10 us: banks stay precharged across refreshes, and a request that
    /// arrived before one, called after a later one triggered it, takes the precharged gap before it. Returns the
    /// violations, the commands logged, own PREs, and refreshes right after a PRE with no row open.
    fn run(preset: &kvsim_params::DramPreset, seed: u64, spacing: u64, idle: bool) -> (Vec<String>, u64, u64, u64) {
        let mut p = dram_params_with(preset);
        p.ctrl_latency = 0;
        let mut d = Dram::new(&p);
        let mut x = seed | 1;
        let mut now = 0u64;
        let mut next = || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x
        };
        for _ in 0..40_000 {
            let r = next();
            now += r % spacing * 1_000;
            if idle && (r >> 50) % 64 == 0 {
                now += (r >> 12) % 20_000_000;
            }
            let back = if idle { 10_000_000 } else { 300_000 };
            let at = match (r >> 8) % 16 {
                0 => now + (r >> 12) % 60_000,
                1 => now + (r >> 12) % 300_000,
                2 => now + (r >> 12) % 2_000_000,
                3 => now + (r >> 12) % 5_000_000,
                4 | 5 => now.saturating_sub((r >> 12) % back),
                _ => now,
            };
            let s = next();
            // Bank group = line % 4, column the next 7 bits, bank the next 2, row above (the default map).
            let (bg, bank, row, col) = (s % 2, (s >> 8) % 2, (s >> 16) % 6, (s >> 24) % 128);
            let line = bg + 4 * (col + 128 * (bank + 4 * row));
            let kind = if (s >> 40) % 5 == 0 { AccessKind::Write } else { AccessKind::Read };
            d.access(&MemReq::new(line * 64, kind, 0, at));
        }
        d.flush(now);
        let c = &d.channels[0];
        let (bad, pre_then_refresh) = c.log.violations(&d.t);
        (bad, c.log.cmds.len() as u64, c.stats.own_precharges, pre_then_refresh)
    }

    /// Review s26 D4: the column search alternates tCCD_L and the data bus until they agree; it used to stop after 64
    /// rounds and return a column command the last fit had not checked. A pathological pair of timelines (built
    /// directly: `Timeline::insert` keeps 48 commands, with which the search needs at most 50 rounds, so the cap
    /// could not bind in the model) where every round advances one 12 nCK period: bursts of bank group 1 at 12k nCK
    /// leave a 4 nCK data window each, and a column command of bank group 0 5 nCK into each window's column
    /// ticks pushes the request past it (tCCD_L 6 nCK), into the next burst.
    #[test]
    fn the_column_search_runs_until_the_bus_and_tccd_l_agree() {
        use super::super::{column_slot, Ticks, Timeline, DDR4_2400};
        let tt = Ticks::new(&DDR4_2400);
        let nck = DDR4_2400.t_ck;
        let (cl, base, periods) = (DDR4_2400.cl, 1000, 100u64);
        assert_eq!((tt.burst, tt.ccd_l), (4 * nck, 6 * nck), "the pattern is drawn for DDR4's BL8 and tCCD_L");
        let bus = Timeline { items: (0..periods).map(|k| ((base + 12 * k) * nck, 1u8)).collect(), floor: None };
        let cas_bg =
            Timeline { items: (0..periods).map(|k| ((base + 12 * k + 4 + 5 - cl) * nck, 0u8)).collect(), floor: None };
        let (cas, rounds) = column_slot::<true>(&cas_bg, &bus, &tt, 0, false, (base + 4 - cl) * nck);
        // After the last period: the last column command + tCCD_L, its data clear of the last burst.
        assert_eq!(cas, (base + 12 * (periods - 1) + 4 + 5 - cl) * nck + tt.ccd_l);
        assert!(rounds > 64 && rounds <= bus.items.len() + 2, "{rounds} rounds");
        // The answer keeps both timelines.
        assert_eq!(cas_bg.fit::<true>(cas, 0, tt.ccd_l, |_, _| tt.ccd_l), cas);
        let data = cas + tt.cl;
        assert_eq!(bus.fit::<true>(data, 0, tt.bus_gap_max, |x, y| super::super::bus_gap(&tt, x, y)), data);
    }

    #[test]
    fn random_out_of_order_traffic_keeps_every_bank_rank_and_bank_group_rule() {
        // Own PREs exist only where a request went before a precharged bank's later ACT or a refresh: out of order.
        let (mut own_pres, mut before_refresh) = (0, 0);
        for (preset, name) in [(&DRAM_PRESET_DDR4_2400, "DDR4-2400"), (&DRAM_PRESET_DDR3_1600, "DDR3-1600")] {
            for seed in [1, 7, 12345] {
                for (spacing, idle) in [(64, false), (8, false), (4, false), (64, true), (8, true)] {
                    let (bad, n, own, pre_ref) = run(preset, seed, spacing, idle);
                    own_pres += own;
                    before_refresh += pre_ref;
                    assert!(n > 40_000, "{name}: only {n} commands");
                    assert!(
                        bad.is_empty(),
                        "{name} seed {seed} spacing {spacing} idle {idle}: {} violations: {:?}",
                        bad.len(),
                        &bad[..bad.len().min(5)]
                    );
                }
            }
        }
        assert!(own_pres > 0, "no request went before a precharged bank's later ACT");
        // Review s27 #1: the traffic reaches the own PRE before a refresh, whose tRP the checker now checks.
        assert!(before_refresh > 0, "no row closed by its own PRE before a refresh");
    }
}
