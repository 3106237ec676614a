//! Exact-tick tests of the DDR model: row hit / miss / conflict, refresh, FR-FCFS, tFAW, bandwidth.

use kvsim_timing::dram::{Dram, RowOutcome, DDR3_1600, DDR4_2400};
use kvsim_timing::synth::dram_params;
use kvsim_timing::{AccessKind, MemPort, MemReq, StatSink};

const TCK: u64 = 833;
const BURST: u64 = 4 * TCK;

fn ddr4() -> Dram {
    let mut p = dram_params();
    p.ctrl_latency = 0;
    Dram::new(&p)
}

fn rd(addr: u64, t: u64) -> MemReq {
    MemReq::new(addr, AccessKind::Read, 0, t)
}

/// Default map row:rank:bank:column:bankgroup:channel over 64 B lines: bank group = line % 4, column = next 7
/// bits, bank = next 2, row above (a row of one bank spans 128 lines x 4 bank groups x 4 banks = 128 KiB).
const ROW_STRIDE: u64 = 128 * 4 * 4 * 64;

#[test]
fn address_map_splits_fields_as_configured() {
    let d = ddr4();
    let a = d.decode(3 * 64 + 5 * 4 * 64 + 2 * 512 * 64 + 7 * ROW_STRIDE);
    assert_eq!((a.bankgroup, a.column, a.bank, a.row), (3, 5, 2, 7));
    let mut p = dram_params();
    p.address_map = "row:rank:bank:bankgroup:column:channel".into();
    let a = Dram::new(&p).decode(5 * 64 + 3 * 128 * 64);
    assert_eq!((a.column, a.bankgroup), (5, 3));
}

#[test]
fn row_hit_miss_and_conflict_latencies() {
    let mut d = ddr4();
    let t = DDR4_2400;
    let miss_at = 1000;
    // Closed bank: ACT, tRCD, RD, CL, burst.
    assert_eq!(d.access(&rd(0, miss_at)), miss_at + (t.rcd + t.cl) * TCK + BURST);
    // Same row, another column: RD, CL, burst.
    let hit_at = 1_000_000;
    assert_eq!(d.access(&rd(4 * 64, hit_at)), hit_at + t.cl * TCK + BURST);
    // Same bank, another row: PRE, tRP, ACT, tRCD, RD, CL, burst.
    let conflict_at = 2_000_000;
    assert_eq!(d.access(&rd(ROW_STRIDE, conflict_at)), conflict_at + (t.rp + t.rcd + t.cl) * TCK + BURST);
    let mut s = StatSink::new();
    d.stats("dram.", conflict_at, &mut s);
    assert_eq!(s.get("dram.channel0.row_hits"), Some(1.0));
    assert_eq!(s.get("dram.channel0.row_misses"), Some(1.0));
    assert_eq!(s.get("dram.channel0.row_conflicts"), Some(1.0));
}

#[test]
fn controller_latency_adds_to_every_access() {
    let mut d = Dram::new(&dram_params()); // 15 ns
    let t = DDR4_2400;
    assert_eq!(d.access(&rd(0, 0)), 15_000 + (t.rcd + t.cl) * TCK + BURST);
}

#[test]
fn refresh_blocks_the_rank_for_trfc() {
    let mut d = ddr4();
    let t = DDR4_2400;
    let at = t.t_refi + 1;
    // The refresh due at tREFI runs first; the access's ACT waits for its end.
    assert_eq!(d.access(&rd(0, at)), t.t_refi + t.t_rfc + (t.rcd + t.cl) * TCK + BURST);
    // It closed the open rows: after a refresh a former row hit is a miss again.
    let mut d = ddr4();
    d.access(&rd(0, 0));
    let after = 2 * t.t_refi + 1;
    assert_eq!(d.access(&rd(4 * 64, after)), 2 * t.t_refi + t.t_rfc + (t.rcd + t.cl) * TCK + BURST);
}

#[test]
fn fr_fcfs_serves_a_younger_row_hit_before_an_older_row_miss() {
    let run = |window: u64| {
        let mut p = dram_params();
        p.ctrl_latency = 0;
        p.queue_window = window;
        let mut d = Dram::new(&p);
        d.access(&rd(0, 0)); // opens row 0 of bank 0 (bank group 0)
                             // Older: row 1 of the same bank (a conflict). Younger: row 0 again (a hit).
        d.schedule_batch(&[(ROW_STRIDE, false, 1000), (4 * 64, false, 2000)])
    };
    let out = run(32);
    assert_eq!(out[1].1, RowOutcome::Hit);
    assert!(out[1].0 < out[0].0, "the row hit goes first: {out:?}");
    assert_eq!(out[0].1, RowOutcome::Conflict);
    // The hit's data follows as soon as the bank group allows another column command (tCCD_L after the first).
    let first_cas = DDR4_2400.rcd * TCK;
    assert_eq!(out[1].0, first_cas + DDR4_2400.ccd_l * TCK + DDR4_2400.cl * TCK + BURST);
    // With a window of one the scheduler is FCFS: the older conflict goes first and the hit becomes a conflict.
    let fcfs = run(1);
    assert!(fcfs[0].0 < fcfs[1].0, "{fcfs:?}");
    assert_eq!(fcfs[1].1, RowOutcome::Conflict);
}

#[test]
fn four_activate_window_and_rrd_space_activates() {
    let mut d = ddr4();
    let t = DDR4_2400;
    // Five reads to five different banks of one rank (bank groups 0-3, then bank 1 of group 0), all at 0.
    let addrs = [0, 64, 128, 192, 512 * 64];
    let out = d.schedule_batch(&addrs.iter().map(|&a| (a, false, 0)).collect::<Vec<_>>());
    assert!(out.iter().all(|o| o.1 == RowOutcome::Miss));
    // ACTs at 0, tRRD_S, 2 tRRD_S, 3 tRRD_S; the fifth waits for tFAW after the first.
    assert_eq!(out[1].0, t.rrd_s * TCK + (t.rcd + t.cl) * TCK + BURST);
    assert_eq!(out[4].0, t.faw * TCK + (t.rcd + t.cl) * TCK + BURST);
}

#[test]
fn streaming_reads_approach_peak_bandwidth() {
    let n = 20_000u64;
    let reqs: Vec<(u64, bool, u64)> = (0..n).map(|i| (i * 64, false, 0)).collect();
    let mut d = ddr4();
    let end = d.schedule_batch(&reqs).iter().map(|o| o.0).max().unwrap();
    let bw = (n * 64) as f64 / (end as f64 * 1e-12);
    let eff = bw / d.peak_channel_bw();
    println!(
        "DDR4-2400 sequential reads: {:.2} GB/s of {:.2} GB/s peak = {:.1}%",
        bw / 1e9,
        d.peak_channel_bw() / 1e9,
        eff * 100.0
    );
    assert!(eff > 0.90 && eff <= 1.0, "efficiency {eff}");
    // Mapping consecutive lines to one bank group instead pays tCCD_L (6 nCK) per burst of 4 nCK: about 2/3.
    let mut p = dram_params();
    p.ctrl_latency = 0;
    p.address_map = "row:rank:bank:bankgroup:column:channel".into();
    let mut d = Dram::new(&p);
    let end = d.schedule_batch(&reqs).iter().map(|o| o.0).max().unwrap();
    let eff_l = (n * 64) as f64 / (end as f64 * 1e-12) / d.peak_channel_bw();
    println!("  same-bank-group mapping: {:.1}%", eff_l * 100.0);
    assert!((eff_l - 4.0 / 6.0).abs() < 0.05, "tCCD_L-bound efficiency {eff_l}");
}

#[test]
fn posted_writes_drain_at_the_watermark_and_forward_to_reads() {
    let mut d = ddr4();
    for i in 0..47u64 {
        assert_eq!(d.access(&MemReq::new(i * 64, AccessKind::Write, 0, 100)), 100, "writes are posted");
    }
    let mut s = StatSink::new();
    d.stats("d.", 1_000_000, &mut s);
    assert_eq!(s.get("d.channel0.writes"), Some(0.0));
    // A read of a line waiting in the write queue is served from it.
    assert_eq!(d.access(&rd(5 * 64, 200)), 200 + BURST);
    d.access(&MemReq::new(47 * 64, AccessKind::Write, 0, 300)); // 48 = high watermark: drain to 16
    let mut s = StatSink::new();
    d.stats("d.", 1_000_000, &mut s);
    assert_eq!(s.get("d.channel0.writes"), Some(32.0));
    assert_eq!(s.get("d.channel0.write_drains"), Some(1.0));
    d.flush(2_000_000);
    let mut s = StatSink::new();
    d.stats("d.", 3_000_000, &mut s);
    assert_eq!(s.get("d.channel0.writes"), Some(48.0));
}

#[test]
fn ddr3_preset_has_no_bank_groups() {
    let mut p = kvsim_timing::synth::dram_params_with(&kvsim_params::DRAM_PRESET_DDR3_1600);
    p.ctrl_latency = 0;
    let mut d = Dram::new(&p);
    assert_eq!(*d.timings(), DDR3_1600);
    let t = DDR3_1600;
    assert_eq!(d.access(&rd(0, 0)), (t.rcd + t.cl + 4) * t.t_ck);
    // Overrides replace single timings.
    p.t_cl = 13;
    let mut d = Dram::new(&p);
    assert_eq!(d.access(&rd(0, 0)), (t.rcd + 13 + 4) * t.t_ck);
}

#[test]
fn channels_interleave_lines_and_add_bandwidth() {
    let mut p = dram_params();
    p.ctrl_latency = 0;
    p.channels = 2;
    let mut d = Dram::new(&p);
    assert_eq!((d.decode(0).channel, d.decode(64).channel, d.decode(128).channel), (0, 1, 0));
    let n = 20_000u64;
    let reqs: Vec<(u64, bool, u64)> = (0..n).map(|i| (i * 64, false, 0)).collect();
    let end = d.schedule_batch(&reqs).iter().map(|o| o.0).max().unwrap();
    let eff = (n * 64) as f64 / (end as f64 * 1e-12) / (2.0 * d.peak_channel_bw());
    assert!(eff > 0.9, "two channels stream at {eff} of their combined peak");
    let mut s = StatSink::new();
    d.stats("dram.", end, &mut s);
    assert_eq!(s.get("dram.channel0.reads"), Some((n / 2) as f64));
    assert_eq!(s.get("dram.channel1.reads"), Some((n / 2) as f64));
}

#[test]
fn write_to_read_turnaround_keeps_twtr() {
    let t = DDR4_2400;
    let mut d = ddr4();
    // A write to bank group 0 and a read to bank group 1, both row misses, queued together: the write is older.
    let out = d.schedule_batch(&[(0, true, 0), (64, false, 0)]);
    let write_data = t.rcd * TCK + t.cwl * TCK;
    assert_eq!(out[0].0, write_data + BURST);
    // The read's data waits for the end of the write burst, tWTR_S, then its CL.
    assert_eq!(out[1].0, write_data + BURST + t.wtr_s * TCK + t.cl * TCK + BURST);
    // Same bank group: tWTR_L.
    let mut d = ddr4();
    let out = d.schedule_batch(&[(0, true, 0), (512 * 64, false, 0)]); // bank 1 of bank group 0
    assert_eq!(out[1].0, write_data + BURST + t.wtr_l * TCK + t.cl * TCK + BURST);
}

/// Reads `lines` consecutive lines at once on `channels` channels; returns the efficiency against their summed
/// peak and the per-channel read counts.
fn stream_on(channels: u64, lines: u64) -> (f64, Vec<f64>) {
    let mut p = dram_params();
    p.ctrl_latency = 0;
    p.channels = channels;
    let mut d = Dram::new(&p);
    let reqs: Vec<(u64, bool, u64)> = (0..lines).map(|i| (i * 64, false, 0)).collect();
    let end = d.schedule_batch(&reqs).iter().map(|o| o.0).max().unwrap();
    let eff = (lines * 64) as f64 / (end as f64 * 1e-12) / (channels as f64 * d.peak_channel_bw());
    let mut s = StatSink::new();
    d.stats("dram.", end, &mut s);
    let reads = (0..channels).map(|c| s.get(&format!("dram.channel{c}.reads")).unwrap()).collect();
    (eff, reads)
}

#[test]
fn six_and_three_channels_interleave_lines_modulo_the_count() {
    let mut p = dram_params();
    p.channels = 6;
    let d = Dram::new(&p);
    let chans: Vec<usize> = (0..8).map(|i| d.decode(i * 64).channel).collect();
    assert_eq!(chans, [0, 1, 2, 3, 4, 5, 0, 1]);
    // The fields above the channel see the line number divided by 6: line 6 is bank group 1 of channel 0.
    assert_eq!(d.decode(6 * 64).bankgroup, 1);
    assert_eq!(d.decode(7 * 64).bankgroup, 1);
    p.channels = 3;
    let d = Dram::new(&p);
    assert_eq!((d.decode(2 * 64).channel, d.decode(3 * 64).channel), (2, 0));
}

#[test]
fn six_channels_each_receive_a_sixth_of_a_uniform_stream() {
    let mut p = dram_params();
    p.channels = 6;
    let d = Dram::new(&p);
    // Uniform random lines over 1 GiB (a fixed-seed xorshift, so the test is deterministic).
    let mut x = 0x9E37_79B9_7F4A_7C15u64;
    let n = 600_000u64;
    let mut counts = [0u64; 6];
    for _ in 0..n {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        counts[d.decode((x % (1 << 24)) * 64).channel] += 1;
    }
    for (c, &k) in counts.iter().enumerate() {
        let share = k as f64 / n as f64;
        assert!((share - 1.0 / 6.0).abs() < 0.01 / 6.0, "channel {c} got {share} of the stream: {counts:?}");
    }
}

#[test]
fn six_channels_stream_as_efficiently_as_eight() {
    let lines = 48_000;
    let (eff8, reads8) = stream_on(8, lines);
    let (eff6, reads6) = stream_on(6, lines);
    let (eff3, reads3) = stream_on(3, lines);
    println!("stream efficiency: 8 ch {:.4}, 6 ch {:.4}, 3 ch {:.4}", eff8, eff6, eff3);
    assert!(reads8.iter().all(|&r| r == (lines / 8) as f64), "{reads8:?}");
    assert!(reads6.iter().all(|&r| r == (lines / 6) as f64), "{reads6:?}");
    assert!(reads3.iter().all(|&r| r == (lines / 3) as f64), "{reads3:?}");
    // 6 (and 3) x the channel bandwidth at the efficiency 8 channels reach.
    assert!(eff8 > 0.9, "8 channels stream at {eff8}");
    assert!((eff6 - eff8).abs() < 0.01, "6 channels {eff6} vs 8 channels {eff8}");
    assert!((eff3 - eff8).abs() < 0.01, "3 channels {eff3} vs 8 channels {eff8}");
}

// ---- Serving a bank by arrival: requests come in call order, and an earlier arrival may take an earlier gap.

/// Row `row` of bank 0, bank group 0 (column `col`).
fn bank0(row: u64, col: u64) -> u64 {
    row * ROW_STRIDE + col * 4 * 64
}

fn stat(d: &Dram, name: &str) -> f64 {
    let mut s = StatSink::new();
    d.stats("dram.", 10_000_000, &mut s);
    s.get(&format!("dram.channel0.{name}")).unwrap()
}

#[test]
fn an_earlier_read_takes_the_gap_before_a_later_dated_read_to_another_row_of_its_bank() {
    let t = DDR4_2400;
    let mut d = Dram::new(&dram_params()); // 15 ns of controller latency, half each way
    let ctrl = 15_000;
    d.access(&rd(bank0(0, 0), 0)); // opens row 0
                                   // Dated 1 us ahead (a prefetch): PRE row 0, ACT row 1, RD.
    let late_at = 1_000_000;
    let late = d.access(&rd(bank0(1, 0), late_at));
    assert_eq!(late, late_at + ctrl + (t.rp + t.rcd + t.cl) * TCK + BURST);
    // Called after it but arrived at 200 ns, to a third row: PRE, ACT, RD in the gap, as if it came first.
    let early_at = 200_000;
    assert_eq!(d.access(&rd(bank0(2, 0), early_at)), early_at + ctrl + (t.rp + t.rcd + t.cl) * TCK + BURST);
    assert_eq!(stat(&d, "row_conflicts"), 2.0);
    assert_eq!(stat(&d, "reversed_reads"), 0.0);
    // The later reservation is unchanged: row 1 is open from its ACT on, so a row hit dated with it follows its
    // column command by tCCD_L.
    assert_eq!(d.access(&rd(bank0(1, 1), late_at)), late + t.ccd_l * TCK);
    assert_eq!(stat(&d, "row_hits"), 1.0);
}

#[test]
fn an_earlier_read_goes_after_a_later_reservation_when_the_gap_is_too_short() {
    let t = DDR4_2400;
    let mut d = ddr4();
    d.access(&rd(bank0(0, 0), 0)); // opens row 0 (ACT at 0)
    let late_at = 230_000;
    let late = d.access(&rd(bank0(1, 0), late_at)); // PRE at 230 ns
    assert_eq!(late, late_at + (t.rp + t.rcd + t.cl) * TCK + BURST);
    // At 200 ns a read to row 2 needs PRE, tRP, ACT and tRAS before row 1's PRE may follow: 200 + 14.2 + 32.5 ns
    // passes 230 ns, so it goes after row 1's episode: PRE at row 1's ACT + tRAS, then tRP, tRCD, CL, burst.
    let late_act = late_at + t.rp * TCK;
    assert_eq!(d.access(&rd(bank0(2, 0), 200_000)), late_act + (t.ras + t.rp + t.rcd + t.cl) * TCK + BURST);
    assert_eq!(stat(&d, "reversed_reads"), 1.0);
}

#[test]
fn an_earlier_row_hit_slips_between_the_open_row_and_a_later_conflict() {
    let t = DDR4_2400;
    let mut d = ddr4();
    d.access(&rd(bank0(0, 0), 0)); // opens row 0
    let late_at = 1_000_000;
    let late = d.access(&rd(bank0(1, 0), late_at)); // closes row 0 at 1 us, opens row 1
                                                    // Row 0 is still open at 200 ns: a row hit, RD, CL, burst.
    let hit_at = 200_000;
    assert_eq!(d.access(&rd(bank0(0, 1), hit_at)), hit_at + t.cl * TCK + BURST);
    assert_eq!(stat(&d, "row_hits"), 1.0);
    assert_eq!(stat(&d, "row_conflicts"), 1.0);
    // Row 1's reservation did not move: a hit to it dated with it follows its column command by tCCD_L.
    assert_eq!(d.access(&rd(bank0(1, 1), late_at)), late + t.ccd_l * TCK);
    // A read of row 0 too close to the PRE (its tRTP would pass it) goes after, and finds row 1 open: a conflict,
    // its PRE tRAS after row 1's ACT.
    let mut d = ddr4();
    d.access(&rd(bank0(0, 0), 0));
    d.access(&rd(bank0(1, 0), late_at));
    let late_act = late_at + t.rp * TCK;
    assert_eq!(d.access(&rd(bank0(0, 1), late_at - 1)), late_act + (t.ras + t.rp + t.rcd + t.cl) * TCK + BURST);
    assert_eq!(stat(&d, "reversed_reads"), 1.0);
}

#[test]
fn a_later_arrival_never_passes_an_earlier_one_on_its_bank() {
    let t = DDR4_2400;
    let mut d = ddr4();
    // Row 0 is open from 0. Row 1 arrives at 1 us; row 2 arrives after it, at 1.001 us, but is called later: it
    // goes after row 1, in arrival order, even though the bank is idle long before 1 us (the in-order path).
    d.access(&rd(bank0(0, 0), 0));
    let first = d.access(&rd(bank0(1, 0), 1_000_000));
    let act1 = 1_000_000 + t.rp * TCK;
    assert_eq!(first, act1 + (t.rcd + t.cl) * TCK + BURST);
    assert_eq!(d.access(&rd(bank0(2, 0), 1_001_000)), act1 + (t.ras + t.rp + t.rcd + t.cl) * TCK + BURST);
    assert_eq!(stat(&d, "reversed_reads"), 0.0);

    // The gap search's arrival rule: a request must not take a gap before an episode holding a request that
    // arrived before it. Row 0 is open from 0; row 1's read arrives at 1 us (PRE at 1 us); a second read of row 1
    // that arrived at 300 ns joins row 1's episode (a row hit after the first's column command, by tCCD_L:
    // reversed, since row 1's opener arrived later). Row 3 arrives at 3 us. Then row 4 arrives at 500 ns: the gap
    // between rows 0 and 1 is long enough for it, but the row-1 read that arrived at 300 ns, before it, is served
    // in row 1's episode, so row 4 must go after that episode.
    let mut d = ddr4();
    d.access(&rd(bank0(0, 0), 0));
    d.access(&rd(bank0(1, 0), 1_000_000));
    let act1 = 1_000_000 + t.rp * TCK;
    assert_eq!(d.access(&rd(bank0(1, 1), 300_000)), act1 + (t.rcd + t.ccd_l + t.cl) * TCK + BURST);
    assert_eq!(stat(&d, "reversed_reads"), 1.0);
    d.access(&rd(bank0(3, 0), 3_000_000));
    // Row 4's PRE closes row 1 at its earliest (its ACT + tRAS, which is after the hit's tRTP), before row 3's
    // PRE at 3 us. Taking the gap before row 1 instead would give 500 ns + (tRP + tRCD + CL) + burst.
    assert!(t.ras > t.rcd + t.ccd_l + t.rtp);
    let act4 = act1 + (t.ras + t.rp) * TCK;
    assert_eq!(d.access(&rd(bank0(4, 0), 500_000)), act4 + (t.rcd + t.cl) * TCK + BURST);
    assert_eq!(stat(&d, "reversed_reads"), 2.0); // after row 1's opener, which arrived at 1 us
    assert_eq!(stat(&d, "row_conflicts"), 3.0);
}

fn wr(addr: u64, t: u64) -> MemReq {
    MemReq::new(addr, AccessKind::Write, 0, t)
}

#[test]
fn a_first_act_in_the_gap_before_a_precharged_banks_act_keeps_trp_before_it() {
    let t = DDR4_2400;
    // The bank is precharged until row 1's ACT at 1 us. A read of row 2 before it needs ACT, tRAS, then a PRE of
    // its own tRP before row 1's ACT: it fits when it arrives (tRAS + tRP) before 1 us, and not a tick later.
    let late_at = 1_000_000;
    let fits_at = late_at - (t.ras + t.rp) * TCK;
    let mut d = ddr4();
    d.access(&rd(bank0(1, 0), late_at));
    assert_eq!(d.access(&rd(bank0(2, 0), fits_at)), fits_at + (t.rcd + t.cl) * TCK + BURST);
    // Its own PRE is the bank's one PRE; both ACTs found the bank precharged.
    assert_eq!((stat(&d, "precharges"), stat(&d, "row_misses"), stat(&d, "reversed_reads")), (1.0, 2.0, 0.0));
    // One tick later its PRE would fall inside tRP before row 1's ACT: it goes after row 1 (PRE at row 1's ACT +
    // tRAS), a conflict.
    let mut d = ddr4();
    d.access(&rd(bank0(1, 0), late_at));
    let after = late_at + (t.ras + t.rp + t.rcd + t.cl) * TCK + BURST;
    assert_eq!(d.access(&rd(bank0(2, 0), fits_at + 1)), after);
    assert_eq!((stat(&d, "row_misses"), stat(&d, "row_conflicts"), stat(&d, "reversed_reads")), (1.0, 1.0, 1.0));
}

#[test]
fn a_write_in_an_earlier_gap_keeps_twr_before_the_next_pre() {
    let t = DDR4_2400;
    // Row 0 open from 0; row 1's read arrives at 1 us and closes it then. A posted write to row 0 that arrived
    // earlier is a row hit before that PRE only if its data (CWL + burst) and tWR end by 1 us (tRTP, a read's
    // margin, is shorter).
    let late_at = 1_000_000;
    let fits_at = late_at - (t.cwl + t.wr) * TCK - BURST;
    let run = |write_at: u64| {
        let mut d = ddr4();
        d.access(&rd(bank0(0, 0), 0));
        d.access(&rd(bank0(1, 0), late_at));
        d.access(&wr(bank0(0, 1), write_at));
        d.flush(0);
        let q = stat(&d, "write_queue_latency_avg");
        (stat(&d, "row_hits"), stat(&d, "row_conflicts"), q)
    };
    // At the margin: a row hit, its column command at its arrival.
    assert_eq!(run(fits_at), (1.0, 1.0, 0.0));
    // A tick later: it goes after row 1, a conflict, its PRE at row 1's ACT + tRAS.
    let pre = late_at + (t.rp + t.ras) * TCK;
    assert_eq!(run(fits_at + 1), (0.0, 2.0, (pre - fits_at - 1) as f64));
}

#[test]
fn a_read_that_arrived_before_a_refresh_fell_due_is_served_before_it_when_it_fits() {
    // Review s26 D2. A read dated after tREFI (a prefetch dated ahead) triggers the refresh due at tREFI: the
    // bank is blocked from tREFI to tREFI + tRFC. A read of the same bank that arrived earlier, called after,
    // fits before the refresh when its row can close tRP before it starts: ACT at its arrival, tRAS, its own PRE,
    // tRP. Before the fix the refresh wiped the bank's timeline and every such read waited for its end.
    let t = DDR4_2400;
    let refi = t.t_refi;
    let fits_at = refi - (t.ras + t.rp) * TCK;
    let run = |early_at: u64| {
        let mut d = ddr4();
        let late = d.access(&rd(bank0(1, 0), refi + 1));
        assert_eq!(late, refi + t.t_rfc + (t.rcd + t.cl) * TCK + BURST); // after the refresh, a miss
        let early = d.access(&rd(bank0(2, 0), early_at));
        (early, stat(&d, "precharges"), stat(&d, "reversed_reads"))
    };
    assert_eq!(run(fits_at), (fits_at + (t.rcd + t.cl) * TCK + BURST, 1.0, 0.0));
    // A tick later its PRE would fall inside tRP before the refresh: it goes after the refresh and the later read's
    // episode (a conflict: PRE at that ACT + tRAS), and counts as reversed, for lack of an earlier gap.
    let after_act = refi + t.t_rfc;
    let (early, _, reversed) = run(fits_at + 1);
    assert_eq!((early, reversed), (after_act + (t.ras + t.rp + t.rcd + t.cl) * TCK + BURST, 1.0));
    let mut d = ddr4();
    d.access(&rd(bank0(1, 0), refi + 1));
    d.access(&rd(bank0(2, 0), fits_at + 1));
    assert_eq!(stat(&d, "reversed_short"), 1.0);
    assert_eq!(stat(&d, "reversed_history") + stat(&d, "reversed_other"), 0.0);
}

#[test]
fn a_row_hit_that_arrived_before_a_refresh_keeps_its_open_row_until_trp_before_it() {
    // Review s26 D2: the open row stays open up to the refresh's precharge-all, and a read of it that arrived before
    // the refresh fell due is a row hit there (its tRTP ends by tRP before the refresh starts).
    let t = DDR4_2400;
    let refi = t.t_refi;
    let mut d = ddr4();
    d.access(&rd(bank0(0, 0), 0)); // row 0 open from 0
    d.access(&rd(bank0(1, 0), refi + 1)); // triggers the refresh at tREFI
    let hit_at = refi - (t.rp + t.rtp) * TCK;
    assert_eq!(d.access(&rd(bank0(0, 1), hit_at)), hit_at + t.cl * TCK + BURST);
    assert_eq!((stat(&d, "row_hits"), stat(&d, "reversed_reads")), (1.0, 0.0));
    // Review s27 #6: a tick later its tRTP would end inside tRP before the refresh, so it is no row hit there: it
    // goes after the refresh and the later read's episode (a conflict: PRE at that ACT + tRAS), reversed. Without
    // this case the test passed with the tRP before the refresh left out.
    let mut d = ddr4();
    d.access(&rd(bank0(0, 0), 0));
    d.access(&rd(bank0(1, 0), refi + 1));
    let after_act = refi + t.t_rfc;
    assert_eq!(d.access(&rd(bank0(0, 1), hit_at + 1)), after_act + (t.ras + t.rp + t.rcd + t.cl) * TCK + BURST);
    assert_eq!((stat(&d, "row_hits"), stat(&d, "reversed_reads")), (0.0, 1.0));
}

#[test]
fn a_drained_write_does_not_block_a_read_that_arrived_before_the_drain() {
    // Review s26 D3. A write to bank 0 posted at 0 waits in the write queue; a second write dated 10 us (another
    // bank) fills it and drains both from 10 us. A read of bank 0 that arrived at 5 us, called after, finds the
    // bank idle then: the write is ordered by the drain, not by its posting, so the read goes first (before the fix
    // it went after the write, past 10 us).
    let t = DDR4_2400;
    let mut p = dram_params();
    p.ctrl_latency = 0;
    (p.write_queue, p.write_high_watermark, p.write_low_watermark) = (2, 2, 0);
    let mut d = Dram::new(&p);
    d.access(&wr(bank0(1, 0), 0));
    d.access(&wr(bank0(0, 0) + 64, 10_000_000)); // bank group 1: another bank
    assert_eq!(stat(&d, "write_drains"), 1.0);
    let read_at = 5_000_000;
    assert_eq!(d.access(&rd(bank0(2, 0), read_at)), read_at + (t.rcd + t.cl) * TCK + BURST);
    assert_eq!(stat(&d, "reversed_reads"), 0.0);
    // The write's queueing time still counts from its posting: its ACT at 10 us; the other's ACT waits tRRD_S after
    // it (FR-FCFS takes the first posted when neither is a row hit).
    assert_eq!(stat(&d, "write_queue_latency_avg"), (10_000_000 + t.rrd_s * TCK) as f64 / 2.0);
}

/// A line of bank group `bg`, bank `bank`, row `row` (the default map).
fn line_at(bg: u64, bank: u64, row: u64) -> u64 {
    (bg + 4 * 128 * (bank + 4 * row)) * 64
}

#[test]
fn a_reversed_read_is_counted_by_why_its_earlier_gap_was_refused() {
    // Bank 0 of group 0 holds a later-arriving read (row 1, ACT at `late_at`); a read of row 2 that arrived at
    // 500 ns, called last, has the precharged gap before it on its bank. `others` reads to the other 15 banks,
    // arriving at `busy_at`, fill the rank's ACT timeline (tRRD, tFAW) from there. The early read's ACT cannot go
    // inside that dense stretch, which passes `late_at`, so it goes after the late read: reversed either way.
    let run = |others: u64, busy_at: u64, late_at: u64| {
        let mut d = ddr4();
        d.access(&rd(line_at(0, 0, 1), late_at));
        for k in 0..others {
            let bank = 1 + k % 15;
            d.access(&rd(line_at(bank % 4, bank / 4, 10 + k / 15), busy_at));
        }
        d.access(&rd(line_at(0, 0, 2), 500_000));
        ["reversed_reads", "reversed_short", "reversed_history", "reversed_other"].map(|s| stat(&d, s))
    };
    // 30 ACTs from 450 ns: the rank's timeline keeps every one, and they refuse the gap (the channel busy).
    assert_eq!(run(30, 450_000, 600_000), [1.0, 0.0, 0.0, 1.0]);
    // 60 ACTs from 1 us: the timeline drops the first 13; its floor (the last dropped, at ~1.05 us) pushes the ACT
    // past the late read's, though nothing kept stands at 500 ns: history no longer kept.
    assert_eq!(run(60, 1_000_000, 1_100_000), [1.0, 0.0, 1.0, 0.0]);
    // Without the busy stretch the gap takes it: not reversed.
    assert_eq!(run(0, 1_000_000, 1_100_000), [0.0; 4]);
}
