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
    /// The LLC's write-backs to memory by whose data they carry (they sum to the LLC's dirty evictions): a DMA
    /// write's that no core rewrote; a core's in a line an I/O agent has written (packet buffers, descriptor
    /// rings); a core's in a line no I/O agent wrote. And how many of them a DDIO write allocation displaced.
    pub writebacks_dma_data: u64,
    pub writebacks_core_data_in_dma_lines: u64,
    pub writebacks_core_lines: u64,
    pub writebacks_displaced_by_dma: u64,
    /// DMA-written lines the LLC evicted (clean or dirty) to make room for a DDIO allocation, or for a core's
    /// fill (demand or prefetch).
    pub dma_lines_displaced_by_dma: u64,
    pub dma_lines_displaced_by_cores: u64,
    pub mmio_accesses: u64,
}
