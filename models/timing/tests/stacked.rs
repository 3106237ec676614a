//! Exact-tick tests of the 3D-stacked memories: closed-page latency, bank and bus pacing, per-port and per-stack
//! bandwidth, flash read/program latencies and per-controller queueing.

use kvsim_params::{NandFlash as FlashParams, StackedDram as DramParams};
use kvsim_timing::stacked::dram3d::StackedDram;
use kvsim_timing::stacked::flash::NandFlash;
use kvsim_timing::{AccessKind, MemPort, MemReq, StatSink};

const NS: u64 = 1000;
const US: u64 = 1_000_000;
/// 64 bytes at 6.25 GB/s.
const LINE_TRANSFER: u64 = 10_240;

/// The figures of platforms.md section 3 (the defaults of models/stacked.py's StackedDram).
fn dram_params(latency_ns: u64) -> DramParams {
    DramParams {
        ports: 16,
        port_width: 128,
        port_capacity: 256 << 20,
        banks_per_port: 8,
        page_size: 1024,
        port_bandwidth: 6.25,
        access_latency: latency_ns * NS,
        line_size: 64,
        port_map: kvsim_params::StackedDramPortMap::Requester,
        max_cores_per_port: 2,
    }
}

fn flash_params(read_us: u64) -> FlashParams {
    FlashParams {
        controllers: 16,
        capacity: 21_260_088_115,
        read_latency: read_us * US,
        write_latency: 200 * US,
        interleave: 4096,
        line_size: 64,
        port_map: kvsim_params::NandFlashPortMap::Requester,
        max_cores_per_port: 2,
    }
}

fn req(core: u16, addr: u64, kind: AccessKind, t: u64) -> MemReq {
    MemReq::new(addr, kind, core, t)
}

#[test]
fn line_transfer_is_64_bytes_at_the_port_bandwidth() {
    let d = StackedDram::new(&dram_params(10));
    assert_eq!(d.line_transfer(), LINE_TRANSFER);
    assert_eq!(StackedDram::transfer_ticks(64, 12.5), 5_120);
}

#[test]
fn closed_page_access_costs_the_configured_latency() {
    for latency_ns in [10, 25, 100] {
        let mut d = StackedDram::new(&dram_params(latency_ns));
        let t = 1_000_000;
        assert_eq!(d.access(&req(0, 0x40, AccessKind::Read, t)), t + latency_ns * NS);
        // The same page again, long after: closed page, so no row hit, the same latency.
        let t2 = 5 * t;
        assert_eq!(d.access(&req(0, 0x40, AccessKind::Read, t2)), t2 + latency_ns * NS);
        let t3 = 9 * t;
        assert_eq!(d.access(&req(0, 0x80, AccessKind::Write, t3)), t3 + latency_ns * NS);
    }
}

#[test]
fn a_busy_bank_delays_the_next_access_to_it() {
    let mut d = StackedDram::new(&dram_params(10));
    // Lines 0 and 8 of core 0's port are both in bank 0 (8 banks, consecutive lines in consecutive banks).
    assert_eq!(d.access(&req(0, 0, AccessKind::Read, 0)), 10 * NS);
    // Starts when bank 0 closes (10 ns) and its data follows the first line's on the bus.
    assert_eq!(d.access(&req(0, 8 * 64, AccessKind::Read, 0)), (10 * NS + 10 * NS).max(10 * NS + LINE_TRANSFER));
}

#[test]
fn one_port_streams_at_6_25_gb_per_s() {
    let mut d = StackedDram::new(&dram_params(10));
    let n = 1000u64;
    let mut last = 0;
    for k in 0..n {
        last = d.access(&req(0, k * 64, AccessKind::Read, 0));
        // Every line after the first leaves one bus transfer after the previous one.
        assert_eq!(last, 10 * NS + k * LINE_TRANSFER);
    }
    let bytes = ((n - 1) * 64) as f64;
    let gbps = bytes / ((last - 10 * NS) as f64 * 1e-12) / 1e9;
    assert!((gbps - 6.25).abs() < 1e-9, "{gbps}");
}

#[test]
fn sixteen_ports_stream_at_100_gb_per_s() {
    let mut d = StackedDram::new(&dram_params(10));
    let n = 500u64;
    let mut last = 0;
    for k in 0..n {
        for core in 0..16u16 {
            let done = d.access(&req(core, ((core as u64) << 28) | (k * 64), AccessKind::Read, 0));
            assert_eq!(done, 10 * NS + k * LINE_TRANSFER, "core {core} line {k}");
            last = last.max(done);
        }
    }
    let gbps = (16 * (n - 1) * 64) as f64 / ((last - 10 * NS) as f64 * 1e-12) / 1e9;
    assert!((gbps - 100.0).abs() < 1e-9, "{gbps}");
    let mut s = StatSink::new();
    d.stats("mem.", last, &mut s);
    assert_eq!(s.get("mem.reads"), Some((16 * n) as f64));
    assert_eq!(s.get("mem.port15.reads"), Some(n as f64));
    let expected = (16 * n * 64) as f64 / (last as f64 * 1e-12) / 1e9;
    assert_eq!(s.get("mem.bandwidth_gbps"), Some(expected));
}

#[test]
fn at_100_ns_a_port_is_bank_bound() {
    // 8 banks, each busy 100 ns per closed-page access: 8 lines per 100 ns (5.12 GB/s) < the bus's 6.25 GB/s.
    let mut d = StackedDram::new(&dram_params(100));
    for k in 0..64u64 {
        let done = d.access(&req(0, k * 64, AccessKind::Read, 0));
        assert_eq!(done, (k / 8 + 1) * 100 * NS + (k % 8) * LINE_TRANSFER, "line {k}");
    }
}

#[test]
fn cores_beyond_the_port_count_share_ports() {
    let mut d = StackedDram::new(&dram_params(10));
    // Cores 0 and 16 share port 0; core 1 has port 1 to itself.
    assert_eq!(d.access(&req(0, 0, AccessKind::Read, 0)), 10 * NS);
    assert_eq!(d.access(&req(1, 64, AccessKind::Read, 0)), 10 * NS);
    assert_eq!(d.access(&req(16, 64, AccessKind::Read, 0)), 10 * NS + LINE_TRANSFER);
}

#[test]
fn address_map_spreads_lines_over_ports() {
    let mut p = dram_params(10);
    p.port_map = kvsim_params::StackedDramPortMap::Address;
    let mut d = StackedDram::new(&p);
    // 16 consecutive lines from one core land on 16 ports and all complete after one latency.
    for k in 0..16u64 {
        assert_eq!(d.access(&req(0, k * 64, AccessKind::Read, 0)), 10 * NS);
    }
    // The 17th is on port 0 again, a different bank: paced by port 0's bus.
    assert_eq!(d.access(&req(0, 16 * 64, AccessKind::Read, 0)), 10 * NS + LINE_TRANSFER);
}

#[test]
fn flash_reads_and_writes_take_their_latencies() {
    for read_us in [10, 20] {
        let mut f = NandFlash::new(&flash_params(read_us));
        assert_eq!(f.access(&req(0, 0, AccessKind::Read, 5 * US)), 5 * US + read_us * US);
        assert_eq!(f.access(&req(1, 0, AccessKind::Write, 5 * US)), 5 * US + 200 * US);
        assert_eq!(f.access(&req(2, 0, AccessKind::IFetch, 0)), read_us * US);
    }
}

#[test]
fn flash_queues_per_controller() {
    let mut f = NandFlash::new(&flash_params(20));
    // On controller 0: read, program, read, all at t = 0, served one after another.
    assert_eq!(f.access(&req(0, 0, AccessKind::Read, 0)), 20 * US);
    assert_eq!(f.access(&req(0, 64, AccessKind::Write, 0)), 220 * US);
    assert_eq!(f.access(&req(0, 128, AccessKind::Read, 0)), 240 * US);
    // The other 15 controllers are independent and idle.
    for core in 1..16u16 {
        assert_eq!(f.access(&req(core, 0, AccessKind::Read, 0)), 20 * US, "controller {core}");
    }
    // Core 17 shares controller 1, busy until 20 us.
    assert_eq!(f.access(&req(17, 0, AccessKind::Read, 0)), 40 * US);
    // A request that arrives after its controller freed does not wait.
    assert_eq!(f.access(&req(0, 0, AccessKind::Read, 300 * US)), 320 * US);
    let mut s = StatSink::new();
    f.stats("flash.", 320 * US, &mut s);
    assert_eq!(s.get("flash.reads"), Some(19.0));
    assert_eq!(s.get("flash.writes"), Some(1.0));
    assert_eq!(s.get("flash.controller0.reads"), Some(3.0));
    // Waits: 20 us + 220 us (controller 0) + 20 us (core 17), over 20 requests.
    assert_eq!(s.get("flash.avg_queue_delay_ps"), Some((260 * US) as f64 / 20.0));
}

#[test]
fn flash_address_map_interleaves_pages_over_controllers() {
    let mut p = flash_params(10);
    p.port_map = kvsim_params::NandFlashPortMap::Address;
    let mut f = NandFlash::new(&p);
    // Two lines of one 4 KB page share a controller; the next page is on the next controller.
    assert_eq!(f.access(&req(0, 0, AccessKind::Read, 0)), 10 * US);
    assert_eq!(f.access(&req(0, 64, AccessKind::Read, 0)), 20 * US);
    assert_eq!(f.access(&req(0, 4096, AccessKind::Read, 0)), 10 * US);
    assert_eq!(f.access(&req(0, 16 * 4096, AccessKind::Read, 0)), 30 * US);
}
