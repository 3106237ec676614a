//! Every request reaches a stack with a port per core as the core that owns it (`MemReq::owner`): a core's own
//! misses, the writeback of a dirty line from its private caches, the LLC's eviction of a line whose data is that
//! core's (kept in the LLC line's metadata), and a device queue's DMA (its owning core). Memories that map by
//! address (DDR) keep no owner in the LLC.

use kvsim_params::{Cache, CacheHierarchy, StackedDram as DramParams};
use kvsim_timing::dram::Dram;
use kvsim_timing::mem::MemSystem;
use kvsim_timing::stacked::dram3d::StackedDram;
use kvsim_timing::stacked::flash::NandFlash;
use kvsim_timing::synth::{cache_params, dram_params, hierarchy_params};
use kvsim_timing::{AccessKind, MemPort, MemReq, ReqClass, StatSink, NO_OWNER};

const NS: u64 = 1000;
/// 64 bytes at 6.25 GB/s.
const LINE_TRANSFER: u64 = 10_240;
const GHZ_2_5: u64 = 2_500_000_000;
/// Lines this far apart share an L1D set (32 KiB, 8 ways, 64 sets of 64-byte lines).
const L1_SET_STRIDE: u64 = 64 * 64;
/// Lines this far apart share a set of the test LLC (2 MiB, 16 ways, one slice: 2048 sets).
const LLC_SET_STRIDE: u64 = 2048 * 64;

/// platforms.md's stack: 16 ports of 8 banks, 6.25 GB/s, 10 ns, one port per core (two per port beyond 16).
fn stack_params() -> DramParams {
    DramParams {
        ports: 16,
        port_width: 128,
        port_capacity: 256 << 20,
        banks_per_port: 8,
        page_size: 1024,
        port_bandwidth: 6.25,
        access_latency: 10 * NS,
        line_size: 64,
        port_map: kvsim_params::StackedDramPortMap::Requester,
        max_cores_per_port: 2,
    }
}

/// `cores` cores at 2.5 GHz over `caches` and a stack with a port per core.
fn over_stack(caches: &CacheHierarchy, cores: usize) -> MemSystem<StackedDram> {
    MemSystem::new(caches, &vec![GHZ_2_5; cores], StackedDram::new(&stack_params()))
}

/// Mercury's caches: L1s and, for the LLC the engine's hierarchy always has, a non-inclusive stand-in of four
/// one-way lines (configs/mercury.py), so a private writeback nearly always goes straight on to memory.
fn mercury_caches() -> CacheHierarchy {
    CacheHierarchy { llc: Cache { inclusive: false, ..cache_params(256, 1, 1, 64) }, ..hierarchy_params() }
}

/// Reads and writes each port of the stack served, from its statistics.
fn port_counts(m: &MemSystem<StackedDram>) -> Vec<(u64, u64)> {
    let mut s = StatSink::new();
    m.mem.stats("mem.", 1, &mut s);
    (0..16)
        .map(|p| {
            let get = |what: &str| s.get(&format!("mem.port{p}.{what}")).unwrap() as u64;
            (get("reads"), get("writes"))
        })
        .collect()
}

fn rd(core: u16, addr: u64, t: u64) -> MemReq {
    MemReq::new(addr, AccessKind::Read, core, t)
}

fn wr(core: u16, addr: u64, t: u64) -> MemReq {
    MemReq::new(addr, AccessKind::Write, core, t)
}

/// A DMA by the NIC (I/O agent 0) for the queue `owner` owns.
fn dma(write: bool, addr: u64, owner: u16, t: u64) -> MemReq {
    let kind = if write { AccessKind::Write } else { AccessKind::Read };
    MemReq { class: ReqClass::Io, owner, ..MemReq::new(addr, kind, 0, t) }
}

/// Core `core` writes `addr`, then reads the 8 lines after it in the same L1D set: the dirty line leaves the L1
/// (LRU) and its data goes home. Each step 1 us after the last, so nothing queues.
fn write_then_evict_from_l1(m: &mut MemSystem<StackedDram>, core: u16, addr: u64, t0: u64) -> u64 {
    m.access(&wr(core, addr, t0));
    for k in 1..=8 {
        m.access(&rd(core, addr + k * L1_SET_STRIDE, t0 + k * 1_000_000));
    }
    t0 + 9 * 1_000_000
}

#[test]
fn the_stack_serves_a_request_on_its_owners_port_whoever_sends_it() {
    let mut d = StackedDram::new(&stack_params());
    // Sent by agent 0 for core 3: port 3's bus moves it, so core 3's next line follows it on the bus ...
    let for_3 = MemReq { owner: 3, ..MemReq::new(0, AccessKind::Write, 0, 0) };
    assert_eq!(d.access(&for_3), 10 * NS);
    assert_eq!(d.access(&rd(3, 64, 0)), 10 * NS + LINE_TRANSFER);
    // ... while port 0, the sender's, is idle.
    assert_eq!(d.access(&rd(0, 64, 0)), 10 * NS);
    // Core 19 shares port 3 (two cores per port beyond 16).
    assert_eq!(d.access(&rd(19, 128, 0)), 10 * NS + 2 * LINE_TRANSFER);
    // A request no core owns goes by its line address: line 5 on port 5, line 21 on port 5 too.
    let unowned = |addr| MemReq { owner: NO_OWNER, ..MemReq::new(addr, AccessKind::Read, 0, 0) };
    assert_eq!(d.access(&unowned(5 * 64)), 10 * NS);
    assert_eq!(d.access(&unowned(21 * 64)), 10 * NS + LINE_TRANSFER);
}

#[test]
fn a_writeback_from_core_k_goes_to_core_ks_port() {
    for (core, port) in [(3u16, 3usize), (12, 12), (17, 1)] {
        let mut m = over_stack(&mercury_caches(), 32);
        write_then_evict_from_l1(&mut m, core, 0x10_0000, 0);
        let counts = port_counts(&m);
        for (p, &(reads, writes)) in counts.iter().enumerate() {
            if p == port {
                // The written line's fetch and the 8 reads, then the one writeback.
                assert_eq!((reads, writes), (9, 1), "core {core}'s port {p}");
            } else {
                assert_eq!((reads, writes), (0, 0), "core {core}: port {p} saw traffic");
            }
        }
        assert_eq!(m.cores[core as usize].l1d.stats.writebacks, 1);
    }
}

#[test]
fn an_llc_eviction_writes_back_as_the_core_whose_dirty_data_the_line_holds() {
    // The test LLC is inclusive (2 MiB, 16 ways): core 5's dirty line goes into it (PUTX) and stays dirty there.
    let mut m = over_stack(&hierarchy_params(), 16);
    let a = 0x20_0000;
    let t = write_then_evict_from_l1(&mut m, 5, a, 0);
    assert_eq!(port_counts(&m)[5], (9, 0), "the writeback stopped in the LLC");
    // Core 9 reads 16 other lines of the LLC set: the 16th evicts the LRU line, core 5's dirty one.
    for k in 1..=15 {
        m.access(&rd(9, a + k * LLC_SET_STRIDE, t + k * 1_000_000));
    }
    assert_eq!(port_counts(&m)[5].1, 0, "the set is not yet full");
    m.access(&rd(9, a + 16 * LLC_SET_STRIDE, t + 16 * 1_000_000));
    let counts = port_counts(&m);
    assert_eq!(counts[5], (9, 1), "core 5's data went back to core 5's port");
    assert_eq!(counts[9], (16, 0), "the evicting core's port only served its reads");
    assert_eq!(counts.iter().map(|c| c.1).sum::<u64>(), 1);
}

#[test]
fn an_inclusive_back_invalidation_writes_back_as_the_core_that_held_the_line_dirty() {
    let mut m = over_stack(&hierarchy_params(), 16);
    let a = 0x30_0000;
    // Core 2 brings the line into the LLC; core 5 then writes it (its L1 holds it modified, the LLC's copy is
    // stale); core 9's conflict misses evict it from the LLC, which takes core 5's dirty copy back.
    m.access(&rd(2, a, 0));
    m.access(&wr(5, a, 1_000_000));
    for k in 1..=16 {
        m.access(&rd(9, a + k * LLC_SET_STRIDE, (k + 1) * 1_000_000));
    }
    let counts = port_counts(&m);
    assert_eq!(m.cores[5].l1d.stats.back_invalidations, 1);
    assert_eq!((counts[2], counts[5], counts[9]), ((1, 0), (0, 1), (16, 0)));
}

#[test]
fn a_queues_dma_reaches_memory_as_the_core_owning_the_queue() {
    // DDIO: the NIC's write for queue 7 allocates in the LLC as core 7's data; the line's eviction (core 9's
    // conflict misses) writes it to port 7.
    let mut m = over_stack(&hierarchy_params(), 16);
    let a = 0x40_0000;
    m.access(&dma(true, a, 7, 0));
    for k in 1..=16 {
        m.access(&rd(9, a + k * LLC_SET_STRIDE, k * 1_000_000));
    }
    let counts = port_counts(&m);
    assert_eq!((counts[0], counts[7], counts[9]), ((0, 0), (0, 1), (16, 0)));
    // Without DDIO the write goes to memory at once, on port 11 for queue 11; a read miss for queue 4 on port 4.
    let mut m = over_stack(&hierarchy_params(), 16);
    m.ddio = false;
    m.access(&dma(true, a, 11, 0));
    m.access(&dma(false, a + 64, 4, 0));
    let counts = port_counts(&m);
    assert_eq!((counts[0], counts[4], counts[11]), ((0, 0), (1, 0), (0, 1)));
}

#[test]
fn flash_serves_a_writeback_on_its_owners_controller() {
    let p = kvsim_params::NandFlash {
        controllers: 16,
        read_latency: 20_000 * NS,
        write_latency: 200_000 * NS,
        port_map: kvsim_params::NandFlashPortMap::Requester,
        ..kvsim_params::NandFlash::default()
    };
    let mut m = MemSystem::new(&mercury_caches(), &[GHZ_2_5; 16], NandFlash::new(&p));
    m.access(&wr(6, 0x10_0000, 0));
    for k in 1..=8 {
        m.access(&rd(6, 0x10_0000 + k * L1_SET_STRIDE, k * 1_000_000_000));
    }
    let mut s = StatSink::new();
    m.mem.stats("mem.", 1, &mut s);
    assert_eq!((s.get("mem.controller6.reads"), s.get("mem.controller6.writes")), (Some(9.0), Some(1.0)));
    assert_eq!(s.get("mem.writes"), Some(1.0));
}

#[test]
fn memories_that_map_by_address_keep_no_owner_in_the_llc() {
    let mut ddr = MemSystem::new(&hierarchy_params(), &[GHZ_2_5; 4], Dram::new(&dram_params()));
    ddr.access(&rd(3, 0x5000, 0));
    let slot = ddr.llc[0].find(0x5000 >> 6).unwrap();
    assert_eq!(ddr.llc[0].owner(slot), NO_OWNER);
    let mut by_address = stack_params();
    by_address.port_map = kvsim_params::StackedDramPortMap::Address;
    let mut interleaved = MemSystem::new(&hierarchy_params(), &[GHZ_2_5; 4], StackedDram::new(&by_address));
    interleaved.access(&rd(3, 0x5000, 0));
    assert_eq!(interleaved.llc[0].owner(slot), NO_OWNER);
    // A stack with a port per core keeps it.
    let mut m = over_stack(&hierarchy_params(), 4);
    m.access(&rd(3, 0x5000, 0));
    assert_eq!(m.llc[0].owner(slot), 3);
}
