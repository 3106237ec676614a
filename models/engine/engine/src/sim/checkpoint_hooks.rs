//! When the running machine writes its checkpoint: at the end of the turn in which the guest asked for one, the
//! client's store finished loading, or System.checkpoint_at_insts was reached. The format is checkpoint.rs's.

use super::{config, Machine};
use kvsim_base::error::SimResult;

impl Machine {
    /// At the end of hart `hid`'s turn, with `total` instructions done: write the checkpoint the guest asked for
    /// (CHECKPOINT) or System.checkpoint_at_insts calls for.
    pub(super) fn checkpoint_after_turn(&mut self, hid: usize, total: u64) -> SimResult<()> {
        let at_insts = self.checkpoint_at > 0 && total >= self.checkpoint_at;
        if std::mem::take(&mut self.checkpoint_pending) || at_insts {
            self.write_checkpoint(hid)?;
        }
        Ok(())
    }

    /// At the end of hart `hid`'s turn: write the checkpoint System.checkpoint_to asks for, if not yet written.
    pub(super) fn write_checkpoint(&mut self, hid: usize) -> SimResult<()> {
        if self.checkpoint_to.is_empty() {
            return Ok(());
        }
        // A restored run resumes with the next hart, as this one does (a turn is never split).
        self.next_turn = (hid + 1) % self.harts.len();
        let dir = std::mem::take(&mut self.checkpoint_to);
        let written = crate::checkpoint::write(self, &self.checkpoint_config, &self.binary, dir.as_ref(), None);
        self.next_turn = 0;
        let w = written.map_err(config)?;
        self.checkpoint_written = Some((w.dir.display().to_string(), w.bytes));
        Ok(())
    }
}
