//! The I/O agents' counters, apart from their walk (dma.rs) so that the hierarchy that holds them and the walk
//! that fills them import one way.

/// What I/O (DMA) traffic did in the LLC.
#[derive(Debug, Clone, Copy, Default)]
pub struct IoStats {
    pub write_hits: u64,
    pub write_allocs: u64,
    pub writes_to_memory: u64,
    pub read_hits: u64,
    pub read_misses: u64,
    /// DMA reads of a line a core held dirty: the owner supplied the data.
    pub read_forwards: u64,
    pub core_read_hits: u64,
    pub core_read_misses: u64,
    pub leaky_evictions: u64,
    pub mmio_accesses: u64,
}
