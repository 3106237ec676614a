//! Branch prediction: a direction predictor (gshare, bimodal or perfect) of 2-bit counters, a direct-mapped BTB
//! for indirect jumps, and a return-address stack. Each call says whether the front end guessed right.

use kvsim_params::Core as CoreParams;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DirKind {
    Gshare,
    Bimodal,
    Perfect,
}

#[derive(Debug, Clone)]
pub struct BranchPredictor {
    kind: DirKind,
    /// The 2-bit counters, four to a byte (a 4096-entry table is 1 KB: 16 host cache lines to refetch after the
    /// other cores' turns, not 64).
    counters: Vec<u8>,
    mask: u64,
    history: u64,
    history_mask: u64,
    btb_tag: Vec<u64>,
    btb_target: Vec<u64>,
    btb_mask: u64,
    ras: Vec<u64>,
    ras_top: usize,
    ras_count: usize,
}

impl BranchPredictor {
    pub fn new(p: &CoreParams) -> Self {
        let kind = match p.bpred {
            kvsim_params::CoreBpred::Gshare => DirKind::Gshare,
            kvsim_params::CoreBpred::Bimodal => DirKind::Bimodal,
            kvsim_params::CoreBpred::Perfect => DirKind::Perfect,
        };
        let entries = p.bpred_entries.next_power_of_two().max(1);
        let btb = if p.btb_entries == 0 { 0 } else { p.btb_entries.next_power_of_two() };
        BranchPredictor {
            kind,
            counters: vec![0b0101_0101; entries.div_ceil(4) as usize], // every counter weakly not-taken (1)
            mask: entries - 1,
            history: 0,
            history_mask: if p.bpred_history_bits >= 64 { u64::MAX } else { (1u64 << p.bpred_history_bits) - 1 },
            btb_tag: vec![u64::MAX; btb as usize],
            btb_target: vec![0; btb as usize],
            btb_mask: btb.saturating_sub(1),
            ras: vec![0; p.ras_entries as usize],
            ras_top: 0,
            ras_count: 0,
        }
    }

    /// A conditional branch at `pc` went `taken`: predict, train, and say whether the prediction was right.
    #[inline]
    pub fn conditional(&mut self, pc: u64, taken: bool) -> bool {
        let idx = match self.kind {
            DirKind::Perfect => return true,
            DirKind::Bimodal => (pc >> 1) & self.mask,
            DirKind::Gshare => ((pc >> 1) ^ (self.history & self.history_mask)) & self.mask,
        } as usize;
        let (byte, shift) = (&mut self.counters[idx >> 2], (idx & 3) * 2);
        let c = (*byte >> shift) & 3;
        let predicted = c >= 2;
        let next = if taken { (c + 1).min(3) } else { c.saturating_sub(1) };
        *byte = (*byte & !(3 << shift)) | (next << shift);
        self.history = (self.history << 1) | taken as u64;
        predicted == taken
    }

    /// A call: remember where it returns.
    #[inline]
    pub fn push_return(&mut self, ret: u64) {
        let n = self.ras.len();
        if n == 0 {
            return;
        }
        self.ras_top = if self.ras_top + 1 == n { 0 } else { self.ras_top + 1 }; // (a wrap, not a division)
        self.ras[self.ras_top] = ret;
        self.ras_count = (self.ras_count + 1).min(n);
    }

    /// A return to `target`: was it the top of the return-address stack?
    #[inline]
    pub fn pop_return(&mut self, target: u64) -> bool {
        if self.kind == DirKind::Perfect {
            return true;
        }
        let n = self.ras.len();
        if self.ras_count == 0 || n == 0 {
            return false;
        }
        let predicted = self.ras[self.ras_top];
        self.ras_top = if self.ras_top == 0 { n - 1 } else { self.ras_top - 1 };
        self.ras_count -= 1;
        predicted == target
    }

    /// An indirect jump at `pc` to `target`: did the BTB hold that target? Trains it.
    #[inline]
    pub fn indirect(&mut self, pc: u64, target: u64) -> bool {
        if self.kind == DirKind::Perfect {
            return true;
        }
        if self.btb_tag.is_empty() {
            return false;
        }
        let i = ((pc >> 1) & self.btb_mask) as usize;
        let hit = self.btb_tag[i] == pc && self.btb_target[i] == target;
        self.btb_tag[i] = pc;
        self.btb_target[i] = target;
        hit
    }
}
