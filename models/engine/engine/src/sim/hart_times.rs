//! The harts' simulated times as the timed scheduler and the network step read them after every turn: the hart
//! furthest behind (the next turn's), the least time of the live harts (how far the NICs and the client go) and
//! each hart's time (its NIC queue's doorbell time). Scanning every hart for them twice a turn was a measurable
//! share of a many-core run (a turn of the 60-core target socket is a few dozen instructions on average), so they
//! are kept up to date turn by turn: a turn changes its own hart's time alone, and whatever may change another
//! hart (a system call: futexes, exits, clones; a new phase) makes the whole set stale, to be read afresh from
//! the harts at the next use. The answers are exactly those of a scan.

use kvsim_isa::hart::Hart;

/// The key of a slot that takes no part (a hart that may not run, or has exited).
const NONE: u64 = u64::MAX;

/// The least key over a fixed number of slots and the slot holding it, the lowest slot among equals (a
/// tournament tree): a slot's key changes in O(log n), the least is read at once.
#[derive(Default)]
struct MinTree {
    leaves: usize,
    /// node[1] is the root; node[leaves + i] is slot i; (key, slot).
    node: Vec<(u64, u32)>,
}

impl MinTree {
    /// Every slot's key from `keys`, the tree built bottom-up.
    fn rebuild(&mut self, keys: impl ExactSizeIterator<Item = u64>) {
        self.leaves = keys.len().next_power_of_two();
        self.node.clear();
        self.node.resize(2 * self.leaves, (NONE, u32::MAX));
        for (i, k) in keys.enumerate() {
            self.node[self.leaves + i] = (k, i as u32);
        }
        for k in (1..self.leaves).rev() {
            self.node[k] = self.node[2 * k].min(self.node[2 * k + 1]);
        }
    }

    fn set(&mut self, slot: usize, key: u64) {
        let mut k = self.leaves + slot;
        self.node[k] = (key, slot as u32);
        while k > 1 {
            k /= 2;
            self.node[k] = self.node[2 * k].min(self.node[2 * k + 1]);
        }
    }

    /// (least key, its slot), or None when no slot takes part.
    fn least(&self) -> Option<(u64, usize)> {
        let &(key, slot) = self.node.get(1)?;
        (key != NONE).then_some((key, slot as usize))
    }
}

/// The harts' times, kept between turns (see the module doc).
#[derive(Default)]
pub(crate) struct HartTimes {
    /// Each hart's `time_ps()`.
    time: Vec<u64>,
    /// Harts that may take a turn (runnable, below System.max_time), by time.
    turn: MinTree,
    /// Harts that have not exited, by time.
    live: MinTree,
    /// The harts may have changed since the set was read: read them afresh at the next use.
    stale: bool,
}

/// May hart `h` take a turn (runnable, and below System.max_time when one is set)?
fn may_run(h: &Hart, max_time: u64) -> bool {
    h.runnable() && !(max_time > 0 && h.time_ps() >= max_time)
}

impl HartTimes {
    pub(crate) fn new() -> Self {
        HartTimes { stale: true, ..Default::default() }
    }

    /// Something other than a turn's own hart may have changed: read every hart at the next use.
    pub(crate) fn invalidate(&mut self) {
        self.stale = true;
    }

    fn refresh(&mut self, harts: &[Hart], max_time: u64) {
        if !self.stale && self.time.len() == harts.len() {
            return;
        }
        self.time.clear();
        self.time.extend(harts.iter().map(|h| h.time_ps()));
        let key = |h: &Hart, ok: bool| if ok { h.time_ps() } else { NONE };
        self.turn.rebuild(harts.iter().map(|h| key(h, may_run(h, max_time))));
        self.live.rebuild(harts.iter().map(|h| key(h, !h.exited())));
        self.stale = false;
    }

    /// Hart `hid` took a turn that changed nothing but its own time.
    pub(crate) fn turn_taken(&mut self, harts: &[Hart], hid: usize, max_time: u64) {
        if self.stale || self.time.len() != harts.len() {
            self.stale = true;
            return;
        }
        let h = &harts[hid];
        let t = h.time_ps();
        self.time[hid] = t;
        self.turn.set(hid, if may_run(h, max_time) { t } else { NONE });
        self.live.set(hid, if h.exited() { NONE } else { t });
    }

    /// The hart that may take a turn with the least time (the lowest id among equals).
    pub(crate) fn furthest_behind(&mut self, harts: &[Hart], max_time: u64) -> Option<usize> {
        self.refresh(harts, max_time);
        self.turn.least().map(|(_, h)| h)
    }

    /// The least time of the harts that have not exited (None when every one has), and every hart's time.
    pub(crate) fn live(&mut self, harts: &[Hart], max_time: u64) -> (Option<u64>, &[u64]) {
        self.refresh(harts, max_time);
        (self.live.least().map(|(t, _)| t), &self.time)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The tree's least against a scan, over random keys changed one at a time (ties, NONE and sizes that are
    /// not powers of two included).
    #[test]
    fn the_least_slot_is_the_scans_lowest_among_equals() {
        let mut seed = 12345u64;
        let mut next = move || {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed
        };
        for n in [1usize, 2, 3, 5, 8, 60, 61] {
            let mut keys: Vec<u64> = (0..n).map(|_| next() % 8).collect();
            let mut tree = MinTree::default();
            tree.rebuild(keys.iter().copied());
            for _ in 0..500 {
                let i = (next() % n as u64) as usize;
                keys[i] = if next() % 5 == 0 { NONE } else { next() % 8 };
                tree.set(i, keys[i]);
                let scan = keys.iter().enumerate().filter(|(_, &k)| k != NONE).fold(
                    None,
                    |best: Option<(u64, usize)>, (i, &k)| match best {
                        Some((b, _)) if b <= k => best,
                        _ => Some((k, i)),
                    },
                );
                assert_eq!(tree.least(), scan, "{n} slots: {keys:?}");
            }
        }
    }
}
