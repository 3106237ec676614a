//! When the running machine writes its checkpoint: at the end of the turn in which the guest asked for one, the
//! client's store finished loading, or System.checkpoint_at_insts was reached. How it is written (the format) is
//! the engine's `checkpoint` module, which sits above the scheduler and lends it a `CheckpointWriter`.

use super::{config, Machine};
use kvsim_base::error::SimResult;

/// Writes a checkpoint of the whole machine (`checkpoint::machine` installs one for System.checkpoint_to).
pub trait CheckpointWriter: Send {
    /// Write `m`'s state; returns the directory written and its bytes on disk.
    fn write(&mut self, m: &Machine) -> Result<(String, u64), String>;
}

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
        let Some(mut writer) = self.checkpoint_writer.take() else { return Ok(()) };
        // A restored run resumes with the next hart, as this one does (a turn is never split).
        self.next_turn = (hid + 1) % self.harts.len();
        let written = writer.write(self);
        self.next_turn = 0;
        self.checkpoint_written = Some(written.map_err(config)?);
        Ok(())
    }
}
