//! What the memory system remembers of the lines I/O agents wrote (the DDIO counters' state), apart from the walk
//! in `dma.rs` (which is part of `MemSystem`, so the hierarchy could not import it without a module cycle).

use super::directory::LineMap;

/// What the memory system remembers of the lines I/O agents wrote, for the DDIO counters (`IoStats`).
#[derive(Debug, Clone, Default)]
pub(super) struct DmaLines {
    /// Lines an I/O agent wrote that no core has read since (to tell whether the core's read hits, and to count
    /// the ones the LLC evicts first: leaky DMA).
    fresh: LineMap<()>,
    /// Every line an I/O agent has written into the LLC: true while the LLC's data is the agent's (no core wrote
    /// it since).
    written: LineMap<bool>,
}

impl DmaLines {
    /// An I/O agent wrote `line`.
    #[inline]
    pub(super) fn io_wrote(&mut self, line: u64) {
        self.fresh.insert(line, ());
    }

    /// DDIO put an I/O agent's data for `line` in the LLC.
    #[inline]
    pub(super) fn in_llc(&mut self, line: u64) {
        self.written.insert(line, true);
    }

    /// A core read `line`, or the LLC dropped it: whether it was still fresh from an I/O write (it is not now).
    #[inline]
    pub(super) fn take_fresh(&mut self, line: u64) -> bool {
        !self.fresh.is_empty() && self.fresh.remove(&line).is_some()
    }

    /// A core's dirty data for `line` reached the LLC: if an I/O agent wrote the line, its data is a core's now.
    #[inline]
    pub(super) fn core_wrote(&mut self, line: u64) {
        if !self.written.is_empty() {
            if let Some(io_data) = self.written.get_mut(&line) {
                *io_data = false;
            }
        }
    }

    /// None: no I/O agent ever wrote `line` into the LLC; else whether the LLC's data is still the agent's.
    #[inline]
    pub(super) fn written(&self, line: u64) -> Option<bool> {
        self.written.get(&line).copied()
    }
}
