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
    /// Dynamic insertion (DIP: Qureshi, Jaleel, Patt, Steely and Emer, "Adaptive Insertion Policies for High
    /// Performance Caching", ISCA 2007): LRU eviction, but a missing line is inserted either at the MRU position
    /// (LRU insertion) or, by the bimodal insertion policy (BIP), at the LRU position except every 32nd time; a
    /// few leader sets always use one policy or the other, and the others follow whichever leaders miss less.
    /// Ivy Bridge's L3 replaces adaptively this way ("resembling" DIP and RRIP: Henry Wong, "Intel Ivy Bridge Cache
    /// Replacement Policy", 2013), where Sandy Bridge's was pseudo-LRU.
    Dip,
}

impl Replacement {
    /// The policy `Cache.replacement` chooses (codegen mirrors the Python choices as an enum).
    pub fn from_param(choice: kvsim_params::CacheReplacement) -> Self {
        match choice {
            kvsim_params::CacheReplacement::Lru => Replacement::Lru,
            kvsim_params::CacheReplacement::Plru => Replacement::Plru,
            kvsim_params::CacheReplacement::Random => Replacement::Random,
            kvsim_params::CacheReplacement::Dip => Replacement::Dip,
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
    /// DIP: the set dueling's selector, the bimodal throttle's count, the stamps below every MRU stamp that
    /// insert at the LRU position, and the slot `victim` chose (its next `touch` is the insertion, not a hit).
    dip: DipState,
}

/// DIP's parameters, Qureshi et al.'s (ISCA 2007) for a 1 MB 16-way L2 (assumed for Ivy Bridge's L3: its own are
/// not published): a 10-bit saturating selector; BIP's throttle 1/32 (one insertion in 32 at MRU, deterministic
/// here: every 32nd); 32 sets dedicated to each policy per 1,024 sets by "complement-select" (a set whose index
/// bits [4:0] equal bits [9:5] always uses LRU insertion, one whose complemented bits [4:0] equal bits [9:5]
/// always uses BIP), repeated in every further 1,024 sets.
pub const DIP_SELECTOR_MAX: u32 = (1 << 10) - 1;
pub const DIP_BIP_THROTTLE: u32 = 32;
/// Assumed: the selector starts just under its midpoint, so the followers start with LRU insertion.
const DIP_SELECTOR_START: u32 = DIP_SELECTOR_MAX / 2;
/// The first MRU stamp: LRU-position insertions count down from it, MRU ones up (0 stays "empty").
const DIP_STAMP_BASE: u64 = 1 << 48;

/// Which policy a DIP set follows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DipSet {
    LruLeader,
    BipLeader,
    Follower,
}

/// The leader sets of complement-select (above): `set`'s bits [4:0] against bits [9:5].
pub fn dip_set(set: usize) -> DipSet {
    let (offset, constituency) = (set & 31, (set >> 5) & 31);
    if offset == constituency {
        DipSet::LruLeader
    } else if (!offset & 31) == constituency {
        DipSet::BipLeader
    } else {
        DipSet::Follower
    }
}

#[derive(Debug, Clone)]
struct DipState {
    selector: u32,
    bip_inserts: u32,
    low: u64,
    pending: usize,
}

impl ReplacementPolicy {
    pub fn new(policy: Replacement, sets: usize, assoc: usize, seed: u64) -> Self {
        assert!(policy != Replacement::Plru || assoc.is_power_of_two(), "tree PLRU needs power-of-two ways");
        ReplacementPolicy {
            policy,
            assoc,
            stamp: if matches!(policy, Replacement::Lru | Replacement::Dip) {
                vec![0; sets * assoc]
            } else {
                Vec::new()
            },
            counter: if policy == Replacement::Dip { DIP_STAMP_BASE } else { 0 },
            plru: if policy == Replacement::Plru { vec![0; sets] } else { Vec::new() },
            rng: seed | 1,
            dip: DipState { selector: DIP_SELECTOR_START, bip_inserts: 0, low: DIP_STAMP_BASE, pending: usize::MAX },
        }
    }

    /// DIP: whether `set` inserts by BIP now (its leaders' policy, or the selector's choice for a follower: BIP once
    /// the LRU leaders have missed more, the selector's top bit set).
    pub fn dip_uses_bip(&self, set: usize) -> bool {
        match dip_set(set) {
            DipSet::LruLeader => false,
            DipSet::BipLeader => true,
            DipSet::Follower => self.dip.selector > DIP_SELECTOR_MAX / 2,
        }
    }

    /// DIP's selector (for tests and reports).
    pub fn dip_selector(&self) -> u32 {
        self.dip.selector
    }

    /// DIP: the slot `victim` chose is being filled: at MRU, or by BIP at the LRU position (below every valid
    /// stamp of the set) except every `DIP_BIP_THROTTLE`th insertion.
    fn dip_insert(&mut self, slot: usize) {
        let at_lru = self.dip_uses_bip(slot / self.assoc) && {
            self.dip.bip_inserts = (self.dip.bip_inserts + 1) % DIP_BIP_THROTTLE;
            self.dip.bip_inserts != 0
        };
        if at_lru {
            self.dip.low -= 1;
            self.stamp[slot] = self.dip.low;
        } else {
            self.counter += 1;
            self.stamp[slot] = self.counter;
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
            Replacement::Dip => {
                if slot == self.dip.pending {
                    self.dip.pending = usize::MAX;
                    self.dip_insert(slot);
                } else {
                    self.counter += 1;
                    self.stamp[slot] = self.counter;
                }
            }
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
        if matches!(self.policy, Replacement::Lru | Replacement::Dip) {
            self.stamp[slot] = 0;
        }
    }

    /// The way to replace in `set`, among the ways set in `allowed`; `empty(w)` says whether way w is invalid.
    /// Contract (DIP): the caller fills the chosen slot and `touch`es it before it asks for another victim; that
    /// `touch` is taken as the insertion (LRU or BIP position). `CacheArray::insert_state` is the only caller.
    pub fn victim(&mut self, set: usize, allowed: u64, empty: impl Fn(usize) -> bool) -> usize {
        let base = set * self.assoc;
        // An invalid allowed way first. (LRU finds it in its own scan: an invalid way's stamp is 0.)
        if !matches!(self.policy, Replacement::Lru | Replacement::Dip) {
            for w in 0..self.assoc {
                if allowed >> w & 1 == 1 && empty(w) {
                    return w;
                }
            }
        }
        match self.policy {
            Replacement::Dip => {
                debug_assert_eq!(self.dip.pending, usize::MAX, "DIP: the previous victim was never touched (filled)");
                // A miss in a leader set is a vote against its policy (the array asks for a victim only to fill).
                match dip_set(set) {
                    DipSet::LruLeader => self.dip.selector = (self.dip.selector + 1).min(DIP_SELECTOR_MAX),
                    DipSet::BipLeader => self.dip.selector = self.dip.selector.saturating_sub(1),
                    DipSet::Follower => {}
                }
                let w = self.lru_victim(base, allowed);
                self.dip.pending = base + w;
                w
            }
            Replacement::Lru => self.lru_victim(base, allowed),
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

    /// The allowed way with the oldest stamp (an empty way's is 0); the first such way on a tie.
    #[inline]
    fn lru_victim(&self, base: usize, allowed: u64) -> usize {
        let (mut best, mut best_stamp) = (usize::MAX, u64::MAX);
        for w in 0..self.assoc {
            if allowed >> w & 1 == 1 && self.stamp[base + w] < best_stamp {
                best_stamp = self.stamp[base + w];
                best = w;
            }
        }
        best
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// One cache's tags over a policy: a hit touches, a miss asks for a victim and fills it (as `CacheArray` does).
    struct Sets {
        policy: ReplacementPolicy,
        tags: Vec<u64>,
        assoc: usize,
    }

    impl Sets {
        fn new(policy: Replacement, sets: usize, assoc: usize) -> Self {
            Sets { policy: ReplacementPolicy::new(policy, sets, assoc, 1), tags: vec![u64::MAX; sets * assoc], assoc }
        }

        /// Access `tag` in `set`; true on a hit.
        fn access(&mut self, set: usize, tag: u64) -> bool {
            let base = set * self.assoc;
            if let Some(w) = (0..self.assoc).find(|&w| self.tags[base + w] == tag) {
                self.policy.touch(base + w);
                return true;
            }
            let tags = &self.tags;
            let w = self.policy.victim(set, u64::MAX >> (64 - self.assoc), |w| tags[base + w] == u64::MAX);
            self.tags[base + w] = tag;
            self.policy.touch(base + w);
            false
        }

        /// Hits of `rounds` passes over tags 0..n in `set`.
        fn cycle(&mut self, set: usize, n: u64, rounds: usize) -> usize {
            (0..rounds).flat_map(|_| 0..n).filter(|&t| self.access(set, t)).count()
        }
    }

    #[test]
    fn complement_select_dedicates_32_sets_to_each_policy_in_1024() {
        let count = |kind| (0..1024).filter(|&s| dip_set(s) == kind).count();
        assert_eq!((count(DipSet::LruLeader), count(DipSet::BipLeader)), (32, 32));
        assert_eq!(
            (dip_set(0), dip_set(31), dip_set(33), dip_set(62)),
            (DipSet::LruLeader, DipSet::BipLeader, DipSet::LruLeader, DipSet::BipLeader)
        );
        assert_eq!(dip_set(1), DipSet::Follower);
    }

    #[test]
    fn a_cycle_one_line_over_the_ways_thrashes_lru_and_lru_inserting_sets_but_bip_keeps_most_of_it() {
        // 4 ways, 5 lines in turn, 64 passes (320 accesses).
        let mut lru = Sets::new(Replacement::Lru, 1024, 4);
        assert_eq!(lru.cycle(0, 5, 64), 0);
        let mut dip = Sets::new(Replacement::Dip, 1024, 4);
        assert_eq!(dip.cycle(0, 5, 64), 0, "an LRU leader set inserts at MRU: LRU's misses");
        // A BIP leader inserts at the LRU position: three of the first four lines stay, the fifth line's fills
        // replace each other, and one fill in 32 goes to MRU (and displaces one of the kept lines once).
        let hits = dip.cycle(31, 5, 64);
        assert!((180..=252).contains(&hits), "BIP kept {hits} of 320");
    }

    #[test]
    fn followers_insert_as_the_leaders_that_miss_less() {
        let mut dip = Sets::new(Replacement::Dip, 1024, 4);
        assert!(!dip.policy.dip_uses_bip(1), "followers start with LRU insertion");
        // A thrashing cycle in the LRU leaders: each miss votes for BIP until the selector's top bit is set.
        for leader in [0, 33, 66, 99] {
            dip.cycle(leader, 5, 40);
        }
        assert_eq!(dip.policy.dip_selector(), DIP_SELECTOR_MAX);
        assert!(dip.policy.dip_uses_bip(1) && !dip.policy.dip_uses_bip(0) && dip.policy.dip_uses_bip(31));
        // The follower now keeps a thrashing cycle as the BIP leader does.
        let mut lru = Sets::new(Replacement::Lru, 1024, 4);
        assert!(dip.cycle(1, 5, 64) > 150 && lru.cycle(1, 5, 64) == 0);
        // Misses in the BIP leaders vote back: new lines that a BIP set never keeps (a stream) bring it down.
        for t in 0..2000u64 {
            dip.access(31, 1000 + t);
        }
        assert_eq!(dip.policy.dip_selector(), 0);
        assert!(!dip.policy.dip_uses_bip(1));
    }

    #[test]
    fn bip_puts_every_32nd_insertion_at_mru() {
        // In a full BIP leader set a line inserted at the LRU position is the next fill's victim; the 32nd fill (of
        // the set's 4 first ones and the 128 here) goes to MRU and outlives the next fill.
        let mut dip = Sets::new(Replacement::Dip, 1024, 4);
        for t in 0..4u64 {
            dip.access(31, t);
        }
        let kept: Vec<u64> = (100..228u64)
            .filter(|&t| {
                dip.access(31, t);
                dip.tags[31 * 4..32 * 4].contains(&(t - 1))
            })
            .map(|t| t - 1)
            .collect();
        assert_eq!(kept, vec![127, 159, 191, 223]);
    }
}
