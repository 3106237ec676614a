//! The memory system's statistics: each private cache, the LLC (total and per slice), the directory's
//! transactions and DDIO's counters, and their reset.

use super::array::{write_llc_stats, write_stats, CacheStats};
use super::hierarchy::MemSystem;
use super::io_stats::IoStats;
use super::prefetch::write_prefetch_stats;
use crate::{MemPort, StatSink, Tick};
use kvsim_params::paths;

impl<M: MemPort> MemSystem<M> {
    /// Statistics of core `core`'s private caches (`prefix` e.g. "system.core3."), with MPKI over `insts`.
    pub fn core_stats(&self, core: usize, prefix: &str, insts: Option<u64>, out: &mut StatSink) {
        self.core_stats_over(core, prefix, insts, None, out)
    }

    /// As `core_stats`, with the measured interval in ticks (for occupancies).
    pub fn core_stats_over(
        &self,
        core: usize,
        prefix: &str,
        insts: Option<u64>,
        ticks: Option<Tick>,
        out: &mut StatSink,
    ) {
        let p = &self.cores[core];
        let (l1i, l1d, l2p) = (
            prefix.to_owned() + &paths::private_cache("l1i"),
            prefix.to_owned() + &paths::private_cache("l1d"),
            prefix.to_owned() + &paths::private_cache("l2"),
        );
        // A private cache's counters, and its misses of the page walker's reads (which the LLC does not tell apart).
        let private = |s: &CacheStats, at: &str, out: &mut StatSink| {
            write_stats(s, at, insts, ticks, out);
            out.add(at, "page_walk_misses", s.page_walk_misses as f64, "misses of the page walker's PTE reads");
        };
        private(&p.l1i.stats, &l1i, out);
        private(&p.l1d.stats, &l1d, out);
        if let Some(l2) = &p.l2 {
            private(&l2.stats, &l2p, out);
        }
        if p.l1d_pf.is_some() {
            let at = l1d + &paths::prefetcher();
            write_prefetch_stats(&p.l1d.pf, &at, out);
        }
        if let (Some(l2), Some(_)) = (&p.l2, &p.l2_pf) {
            let at = l2p + &paths::prefetcher();
            write_prefetch_stats(&l2.pf, &at, out);
        }
    }

    /// Statistics of the LLC: totals under `prefix`llc. and each slice under `prefix`llc.sliceN.
    pub fn llc_stats(&self, prefix: &str, insts: Option<u64>, out: &mut StatSink) {
        self.llc_stats_over(prefix, insts, None, out)
    }

    /// As `llc_stats`, with the measured interval in ticks (for occupancies); also the directory's and DDIO's
    /// counters.
    pub fn llc_stats_over(&self, prefix: &str, insts: Option<u64>, ticks: Option<Tick>, out: &mut StatSink) {
        let mut total = CacheStats::default();
        for s in &self.llc {
            total.add(&s.stats);
        }
        let llc = prefix.to_owned() + &paths::llc();
        write_llc_stats(&total, &llc, insts, ticks, out);
        self.coherence_stats(&(prefix.to_owned() + &paths::directory()), &(prefix.to_owned() + &paths::ddio()), out);
        if self.llc.len() > 1 {
            for (i, s) in self.llc.iter().enumerate() {
                write_llc_stats(&s.stats, &(llc.clone() + &paths::llc_slice(i)), insts, ticks, out);
            }
        }
    }

    /// A memory system of several sockets: socket `socket`'s LLC, totals under `prefix`llc. and its slices
    /// (numbered within the socket) under `prefix`llc.sliceN.
    pub fn llc_socket_stats(
        &self,
        socket: usize,
        prefix: &str,
        insts: Option<u64>,
        ticks: Option<Tick>,
        out: &mut StatSink,
    ) {
        let per = self.homes.as_ref().map_or(self.llc.len(), |h| h.slices_per_socket as usize);
        let slices = &self.llc[socket * per..(socket + 1) * per];
        let mut total = CacheStats::default();
        for s in slices {
            total.add(&s.stats);
        }
        let llc = prefix.to_owned() + &paths::llc();
        write_llc_stats(&total, &llc, insts, ticks, out);
        if slices.len() > 1 {
            for (i, s) in slices.iter().enumerate() {
                write_llc_stats(&s.stats, &(llc.clone() + &paths::llc_slice(i)), insts, ticks, out);
            }
        }
    }

    /// The directory's transactions under `directory` (a socket's `paths::directory` or the system's
    /// `paths::system_directory`) and DDIO's counters under `ddio`.
    pub fn coherence_stats(&self, directory: &str, ddio: &str, out: &mut StatSink) {
        let d = &self.dir.stats;
        let p = directory;
        out.add(p, "gets", d.gets as f64, "read requests (GETS) the directory served");
        out.add(p, "getx", d.getx as f64, "write requests with data (GETX) the directory served");
        out.add(p, "upgrades", d.upgrades as f64, "write-permission requests for a held copy (no data)");
        out.add(p, "puts", d.puts as f64, "clean lines that left a core (PUTS)");
        out.add(p, "putx", d.putx as f64, "dirty lines that left a core, their data written home (PUTX)");
        out.add(p, "forwards", d.forwards as f64, "requests the owning core answered (3-hop)");
        out.add(p, "cluster_resolved", d.cluster_resolved as f64, "requests resolved inside the cluster");
        out.add(p, "invalidations", d.invalidations as f64, "invalidations sent for writes (each acknowledged)");
        out.add(p, "back_invalidations", d.back_invalidations as f64, "invalidations for LLC evictions (inclusion)");
        out.add(p, "io_snoops", d.io_snoops as f64, "DMA requests that found the line in a core's caches");
        out.add(
            p,
            "socket_invalidations",
            d.socket_invalidations as f64,
            "invalidations of other sockets' LLC copies of a line before a write (remote lines)",
        );
        let io = &self.io;
        let d = ddio;
        out.add(d, "enabled", self.ddio as u64 as f64, "DDIO on (I/O writes allocate in the LLC) or off (to memory)");
        out.add(d, "write_hits", io.write_hits as f64, "DMA line writes that updated a line already in the LLC");
        out.add(d, "write_allocs", io.write_allocs as f64, "DMA line writes that allocated a line in the DDIO ways");
        out.add(d, "writes_to_memory", io.writes_to_memory as f64, "DMA line writes sent to memory (DDIO off)");
        out.add(d, "dma_read_hits", io.read_hits as f64, "DMA line reads served by the LLC");
        out.add(d, "dma_read_misses", io.read_misses as f64, "DMA line reads served by memory");
        out.add(d, "dma_read_forwards", io.read_forwards as f64, "DMA line reads a core's dirty copy answered");
        out.add(
            d,
            "core_read_hits",
            io.core_read_hits as f64,
            "first core accesses to a DMA-written line that found it in the LLC",
        );
        out.add(
            d,
            "core_read_misses",
            io.core_read_misses as f64,
            "first core accesses to a DMA-written line that missed the LLC (went to memory)",
        );
        out.add(
            d,
            "leaky_evictions",
            io.leaky_evictions as f64,
            "DMA-written lines the LLC evicted before any core read them (leaky DMA)",
        );
        let causes = [
            (
                "writebacks_dma_data",
                io.writebacks_dma_data,
                "LLC write-backs to memory of a DMA write's data (no core rewrote the line)",
            ),
            (
                "writebacks_core_data_in_dma_lines",
                io.writebacks_core_data_in_dma_lines,
                "LLC write-backs to memory of a core's data in a line an I/O agent has written (packet buffers, rings)",
            ),
            (
                "writebacks_core_lines",
                io.writebacks_core_lines,
                "LLC write-backs to memory of lines no I/O agent wrote",
            ),
            (
                "writebacks_displaced_by_dma",
                io.writebacks_displaced_by_dma,
                "LLC write-backs to memory (of the three kinds) whose line a DDIO write allocation displaced",
            ),
            (
                "dma_lines_displaced_by_dma",
                io.dma_lines_displaced_by_dma,
                "DMA-written lines the LLC evicted for a DDIO write allocation",
            ),
            (
                "dma_lines_displaced_by_cores",
                io.dma_lines_displaced_by_cores,
                "DMA-written lines the LLC evicted for a core's fill (demand or prefetch)",
            ),
        ];
        for (name, n, what) in causes {
            out.add(d, name, n as f64, what);
        }
        out.add(
            d,
            "mmio_accesses",
            io.mmio_accesses as f64,
            "core loads and stores to device registers (uncached: doorbells and register reads)",
        );
    }

    /// Start every cache's statistics afresh (contents are kept).
    pub fn reset_stats(&mut self) {
        for p in &mut self.cores {
            p.l1i.stats = CacheStats::default();
            p.l1d.stats = CacheStats::default();
            p.l1d.pf = Default::default();
            if let Some(l2) = &mut p.l2 {
                l2.stats = CacheStats::default();
                l2.pf = Default::default();
            }
        }
        for s in &mut self.llc {
            s.stats = CacheStats::default();
        }
        self.io = IoStats::default();
        self.dir.stats = Default::default();
        self.net.reset_stats();
        if let Some(o) = self.outboxes.as_deref_mut() {
            o.reset();
        }
    }
}
