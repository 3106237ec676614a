//! Replacement policies, a component of a cache array: the array tells the policy which slot it touched or
//! emptied and asks it for a victim among the ways a requester class may use.

/// Which policy (the `Cache.replacement` parameter).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Replacement {
    Lru,
    /// Tree pseudo-LRU (power-of-two ways).
    Plru,
    /// Seeded xorshift: deterministic for a seed.
    Random,
}

impl Replacement {
    /// The policy `Cache.replacement` chooses (codegen mirrors the Python choices as an enum).
    pub fn from_param(choice: kvsim_params::CacheReplacement) -> Self {
        match choice {
            kvsim_params::CacheReplacement::Lru => Replacement::Lru,
            kvsim_params::CacheReplacement::Plru => Replacement::Plru,
            kvsim_params::CacheReplacement::Random => Replacement::Random,
        }
    }
}

/// A policy's state for every set of one array.
#[derive(Debug, Clone)]
pub struct ReplacementPolicy {
    policy: Replacement,
    assoc: usize,
    /// LRU: the recency stamp of each slot (0 = empty, below every valid line).
    stamp: Vec<u64>,
    counter: u64,
    /// Tree PLRU: one bit per internal node of each set's tree.
    plru: Vec<u64>,
    rng: u64,
}

impl ReplacementPolicy {
    pub fn new(policy: Replacement, sets: usize, assoc: usize, seed: u64) -> Self {
        assert!(policy != Replacement::Plru || assoc.is_power_of_two(), "tree PLRU needs power-of-two ways");
        ReplacementPolicy {
            policy,
            assoc,
            stamp: if policy == Replacement::Lru { vec![0; sets * assoc] } else { Vec::new() },
            counter: 0,
            plru: if policy == Replacement::Plru { vec![0; sets] } else { Vec::new() },
            rng: seed | 1,
        }
    }

    /// Mark a slot (set * assoc + way) most recently used.
    /// Inline in its caller for LRU (the default: a stamp), the tree's walk out of line: every L1 hit touches.
    #[inline(always)]
    pub fn touch(&mut self, slot: usize) {
        match self.policy {
            Replacement::Lru => {
                self.counter += 1;
                self.stamp[slot] = self.counter;
            }
            Replacement::Plru => self.touch_plru(slot),
            Replacement::Random => {}
        }
    }

    #[inline(never)]
    fn touch_plru(&mut self, slot: usize) {
        let (set, way) = (slot / self.assoc, slot % self.assoc);
        // Walk from the root; at each node point the bit away from the side holding `way`.
        let (mut node, mut lo, mut span) = (1usize, 0usize, self.assoc);
        let bits = &mut self.plru[set];
        while span > 1 {
            span /= 2;
            if way >= lo + span {
                *bits &= !(1u64 << node); // next victim search goes left
                lo += span;
                node = 2 * node + 1;
            } else {
                *bits |= 1u64 << node; // next victim search goes right
                node *= 2;
            }
        }
    }

    /// The slot was emptied (invalidated): LRU makes it the first choice.
    #[inline]
    pub fn forget(&mut self, slot: usize) {
        if self.policy == Replacement::Lru {
            self.stamp[slot] = 0;
        }
    }

    /// The way to replace in `set`, among the ways set in `allowed`; `empty(w)` says whether way w is invalid.
    pub fn victim(&mut self, set: usize, allowed: u64, empty: impl Fn(usize) -> bool) -> usize {
        let base = set * self.assoc;
        // An invalid allowed way first. (LRU finds it in its own scan: an invalid way's stamp is 0.)
        if self.policy != Replacement::Lru {
            for w in 0..self.assoc {
                if allowed >> w & 1 == 1 && empty(w) {
                    return w;
                }
            }
        }
        match self.policy {
            Replacement::Lru => {
                let (mut best, mut best_stamp) = (usize::MAX, u64::MAX);
                for w in 0..self.assoc {
                    if allowed >> w & 1 == 1 && self.stamp[base + w] < best_stamp {
                        best_stamp = self.stamp[base + w];
                        best = w;
                    }
                }
                best
            }
            Replacement::Plru => {
                let bits = self.plru[set];
                let (mut node, mut lo, mut span) = (1usize, 0usize, self.assoc);
                while span > 1 {
                    span /= 2;
                    let left_mask = ((1u64 << span) - 1) << lo;
                    let right_mask = ((1u64 << span) - 1) << (lo + span);
                    let mut go_right = bits >> node & 1 == 1;
                    if go_right && allowed & right_mask == 0 {
                        go_right = false;
                    } else if !go_right && allowed & left_mask == 0 {
                        go_right = true;
                    }
                    if go_right {
                        lo += span;
                        node = 2 * node + 1;
                    } else {
                        node *= 2;
                    }
                }
                lo
            }
            Replacement::Random => {
                self.rng ^= self.rng << 13;
                self.rng ^= self.rng >> 7;
                self.rng ^= self.rng << 17;
                let mut k = (self.rng % allowed.count_ones() as u64) as u32;
                let mut m = allowed;
                loop {
                    let w = m.trailing_zeros();
                    if k == 0 {
                        return w as usize;
                    }
                    k -= 1;
                    m &= m - 1;
                }
            }
        }
    }
}
