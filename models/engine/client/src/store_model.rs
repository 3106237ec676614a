//! The client's compact model of the store: what it needs to check every response exactly, at under a byte per
//! item, so the paper's Tiny data set (192 Mi items) takes about 100 MB of host memory.
//!
//! * Per item the highest version acknowledged (0: never stored; `Versions`): one bit for "at least version 1", which
//!   the bulk load gives every item, and a map for the items a later PUT took further (at most one per measured
//!   PUT). A value is derived from the key and its version (`client::value_of`), so values are never kept.
//! * Only the few items with a PUT in flight keep their highest version sent (a map, bounded by the window).
//! * The eviction bound of a GET miss needs the partition's log bound right after the item's last acknowledged PUT
//!   (its mark). A measured-phase PUT's mark is kept in a map (bounded by the measured PUTs). A bulk-load PUT's mark
//!   is not stored: the load sends items 0..n in order, so the bound is recomputed on a miss from a snapshot of the
//!   per-partition bounds taken every `LOAD_BLOCK` items plus the items of the same partition since then.
//! * Distinct keys per (partition, bucket), saturating at 255 (only "16 or more" matters): one byte per bucket when
//!   the buckets are not many more than the items, else a map.

use std::collections::{HashMap, HashSet};

/// Items per snapshot of the load's per-partition bounds (a miss recomputes at most this many key hashes).
pub const LOAD_BLOCK: u64 = 4096;
/// `Req::mark` of a GET whose item was last acknowledged by its bulk-load PUT: resolved on a miss.
pub const LOAD_MARK: u64 = u64::MAX;

#[derive(Debug, Clone)]
pub enum BucketCounts {
    Dense(Vec<u8>),
    Sparse(HashMap<u64, u8>),
}

/// Each item's highest acknowledged version: a bit (at least 1) and a map of those above 1.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Versions {
    items: u64,
    stored: Vec<u64>,
    above_one: HashMap<u64, u32>,
}

impl Versions {
    /// `items` items, none stored.
    pub fn new(items: u64) -> Versions {
        Versions { items, stored: vec![0; items.div_ceil(64) as usize], above_one: HashMap::new() }
    }

    pub fn len(&self) -> u64 {
        self.items
    }

    pub fn is_empty(&self) -> bool {
        self.items == 0
    }

    #[inline]
    pub fn get(&self, item: u64) -> u32 {
        let bit = (self.stored[(item / 64) as usize] >> (item % 64)) as u32 & 1;
        match self.above_one.is_empty() {
            true => bit,
            false => self.above_one.get(&item).copied().unwrap_or(bit),
        }
    }

    pub fn set(&mut self, item: u64, version: u32) {
        let (word, bit) = ((item / 64) as usize, 1u64 << (item % 64));
        match version {
            0 => self.stored[word] &= !bit,
            _ => self.stored[word] |= bit,
        }
        // (The map is empty through the bulk load: no key is hashed for its acknowledgements.)
        if version > 1 {
            self.above_one.insert(item, version);
        } else if !self.above_one.is_empty() {
            self.above_one.remove(&item);
        }
    }

    /// The versions as a checkpoint stores them (`client_versions.bin`: a u32, little-endian, per item), in blocks
    /// of up to 65,536 items, so the array is never built whole.
    pub fn le_blocks(&self) -> impl Iterator<Item = Vec<u8>> + '_ {
        (0..self.items.div_ceil(1 << 16)).map(move |b| {
            let end = ((b + 1) << 16).min(self.items);
            ((b << 16)..end).flat_map(|i| self.get(i).to_le_bytes()).collect()
        })
    }

    /// Host bytes: the bits and the map (at 24 bytes an entry).
    pub fn host_bytes(&self) -> u64 {
        8 * self.stored.len() as u64 + 24 * self.above_one.len() as u64
    }
}

impl FromIterator<u32> for Versions {
    fn from_iter<I: IntoIterator<Item = u32>>(iter: I) -> Versions {
        let all: Vec<u32> = iter.into_iter().collect(); // (small sets: FS checkpoints, tests)
        let mut v = Versions::new(all.len() as u64);
        for (i, &x) in all.iter().enumerate() {
            v.set(i as u64, x);
        }
        v
    }
}

#[derive(Debug, Clone)]
pub struct StoreModel {
    pub acked: Versions,
    pub in_flight: HashMap<u64, u32>,
    pub put_marks: HashMap<u64, u64>,
    /// Items a GET found missing since their mark was taken: their next acknowledged PUT appends them anew.
    pub gone: HashSet<u64>,
    /// `cores` bounds per block of `LOAD_BLOCK` items, taken before the block's first PUT.
    pub load_marks: Vec<u64>,
    pub buckets_per_partition: u64,
    pub bucket_keys: BucketCounts,
}

impl StoreModel {
    pub fn new(items: u64, cores: usize, buckets: u64) -> StoreModel {
        let slots = cores as u64 * buckets;
        let bucket_keys = if slots <= (4 * items).max(1 << 24) {
            BucketCounts::Dense(vec![0; slots as usize])
        } else {
            BucketCounts::Sparse(HashMap::new())
        };
        StoreModel {
            acked: Versions::new(items),
            in_flight: HashMap::new(),
            put_marks: HashMap::new(),
            gone: HashSet::new(),
            load_marks: Vec::new(),
            buckets_per_partition: buckets,
            bucket_keys,
        }
    }

    pub fn acked(&self, item: u64) -> u32 {
        self.acked.get(item)
    }

    /// The highest version sent.
    pub fn sent(&self, item: u64) -> u32 {
        self.in_flight.get(&item).copied().unwrap_or(self.acked.get(item))
    }

    /// Take the item's next version for a PUT being sent.
    pub fn next_version(&mut self, item: u64) -> u32 {
        let v = self.sent(item) + 1;
        self.in_flight.insert(item, v);
        v
    }

    /// A PUT of `ver` was acknowledged; `mark` is its bound. The item's age counts from the PUT that appended it:
    /// its first acknowledged PUT, or the first since a GET found it gone. A later PUT whose value fits is written
    /// in place by the server (as MICA does), so the item keeps its place in the log and its earlier mark.
    pub fn ack(&mut self, item: u64, ver: u32, mark: u64, load: bool) {
        let was = self.acked.get(item);
        if ver <= was {
            return;
        }
        let appended = was == 0 || self.gone.remove(&item);
        self.acked.set(item, ver);
        if self.in_flight.get(&item) == Some(&ver) {
            self.in_flight.remove(&item);
        }
        if load {
            self.put_marks.remove(&item); // the load's mark is recomputed on a miss (LOAD_MARK)
        } else if appended {
            self.put_marks.insert(item, mark);
        }
    }

    /// A GET found `item` missing (an eviction explained it): its next acknowledged PUT appends it anew.
    pub fn seen_gone(&mut self, item: u64) {
        self.gone.insert(item);
    }

    /// The mark a GET sent now carries: that of the last acknowledged PUT (LOAD_MARK: the load's, resolved later).
    pub fn ack_mark(&self, item: u64) -> u64 {
        match self.put_marks.get(&item) {
            Some(&m) => m,
            None if self.acked.get(item) > 0 => LOAD_MARK,
            None => 0,
        }
    }

    /// Before the bulk load's PUT of `item`: snapshot the partitions' bounds at each block start.
    pub fn before_load_put(&mut self, item: u64, part_log: &[u64]) {
        if item.is_multiple_of(LOAD_BLOCK) {
            self.load_marks.extend_from_slice(part_log);
        }
    }

    /// The bound right after the bulk load's PUT of `item` in partition `p`, each load PUT adding `put_bytes`;
    /// `partition` gives an item's partition.
    pub fn load_mark(
        &self,
        item: u64,
        p: usize,
        cores: usize,
        put_bytes: u64,
        partition: impl Fn(u64) -> usize,
    ) -> u64 {
        let block = item / LOAD_BLOCK;
        let base = self.load_marks.get(block as usize * cores + p).copied().unwrap_or(0);
        let same = (block * LOAD_BLOCK..=item).filter(|&j| partition(j) == p).count() as u64;
        base + same * put_bytes
    }

    /// A new distinct key was put into (partition, bucket).
    pub fn add_bucket_key(&mut self, p: usize, bucket: u64) {
        let slot = p as u64 * self.buckets_per_partition + bucket;
        match &mut self.bucket_keys {
            BucketCounts::Dense(v) => v[slot as usize] = v[slot as usize].saturating_add(1),
            BucketCounts::Sparse(m) => {
                let c = m.entry(slot).or_insert(0);
                *c = c.saturating_add(1);
            }
        }
    }

    pub fn bucket_keys(&self, p: usize, bucket: u64) -> u8 {
        let slot = p as u64 * self.buckets_per_partition + bucket;
        match &self.bucket_keys {
            BucketCounts::Dense(v) => v[slot as usize],
            BucketCounts::Sparse(m) => m.get(&slot).copied().unwrap_or(0),
        }
    }

    /// Host bytes the model takes (approximately, maps counted at 24 bytes an entry).
    pub fn host_bytes(&self) -> u64 {
        let dense = match &self.bucket_keys {
            BucketCounts::Dense(v) => v.len() as u64,
            BucketCounts::Sparse(m) => 24 * m.len() as u64,
        };
        self.acked.host_bytes()
            + 8 * self.load_marks.len() as u64
            + 24 * (self.in_flight.len() + self.put_marks.len() + self.gone.len()) as u64
            + dense
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn versions_in_flight_and_acknowledged() {
        let mut m = StoreModel::new(8, 1, 16);
        assert_eq!((m.sent(3), m.acked(3), m.ack_mark(3)), (0, 0, 0));
        assert_eq!(m.next_version(3), 1);
        assert_eq!(m.next_version(3), 2);
        assert_eq!((m.sent(3), m.acked(3)), (2, 0));
        m.ack(3, 2, 77, false);
        assert_eq!((m.sent(3), m.acked(3), m.ack_mark(3)), (2, 2, 77));
        m.ack(3, 1, 5, false); // an older acknowledgement arriving late changes nothing
        assert_eq!((m.acked(3), m.ack_mark(3)), (2, 77));
        assert!(m.in_flight.is_empty());
        m.next_version(4);
        m.ack(4, 1, 9, true);
        assert_eq!(m.ack_mark(4), LOAD_MARK);
    }

    #[test]
    fn load_marks_are_recomputed_exactly() {
        // Two partitions, item parity is the partition; every PUT adds 10 to its partition's bound.
        let (n, put) = (3 * LOAD_BLOCK + 5, 10u64);
        let mut m = StoreModel::new(n, 2, 4);
        let mut part_log = vec![0u64; 2];
        let mut exact = Vec::new();
        for i in 0..n {
            m.before_load_put(i, &part_log);
            part_log[(i % 2) as usize] += put;
            exact.push(part_log[(i % 2) as usize]);
        }
        for i in [0, 1, 2, LOAD_BLOCK - 1, LOAD_BLOCK, 2 * LOAD_BLOCK + 7, n - 1] {
            assert_eq!(m.load_mark(i, (i % 2) as usize, 2, put, |j| (j % 2) as usize), exact[i as usize], "item {i}");
        }
    }

    #[test]
    fn bucket_counts_saturate_dense_or_sparse() {
        for mut m in [StoreModel::new(4, 2, 8), StoreModel::new(4, 2, 1 << 30)] {
            for _ in 0..300 {
                m.add_bucket_key(1, 5);
            }
            assert_eq!((m.bucket_keys(1, 5), m.bucket_keys(0, 5)), (255, 0));
        }
    }

    #[test]
    fn the_tiny_data_set_model_fits_in_a_hundred_and_thirty_megabytes() {
        // The paper's Tiny set: 192 Mi items over 60 partitions, about 4 items a bucket (2^20 buckets each).
        // Pages of the zeroed arrays are only reserved here (calloc), so this costs no host memory.
        let (items, cores) = (192u64 << 20, 60usize);
        let mut m = StoreModel::new(items, cores, 1 << 20);
        let part_log = vec![0u64; cores];
        for i in (0..items).step_by(LOAD_BLOCK as usize) {
            m.before_load_put(i, &part_log);
        }
        assert!(matches!(m.bucket_keys, BucketCounts::Dense(_)));
        let bytes = m.host_bytes();
        assert!(bytes < 1 << 27, "{bytes}");
        // Versions 1/8, bucket counts 60 x 2^20 / 192 Mi = 0.31, load snapshots 60 x 8 / 4096 = 0.12 (was 4.43).
        assert!((bytes as f64 / items as f64) < 0.6, "{}", bytes as f64 / items as f64);
    }

    #[test]
    fn under_a_byte_per_item() {
        // 1/8 byte an item for the versions, 1/16 for the bucket counts, 1/64 for the load's snapshots.
        let mut m = StoreModel::new(1 << 20, 4, 1 << 16);
        let part_log = vec![0u64; 4];
        for i in (0..1 << 20).step_by(LOAD_BLOCK as usize) {
            m.before_load_put(i, &part_log);
        }
        assert!(m.host_bytes() <= (1 << 17) + (1 << 18) + 8 * 4 * 256, "{}", m.host_bytes());
    }

    #[test]
    fn versions_keep_a_bit_and_the_few_above_one() {
        let mut v = Versions::new(200);
        for (item, ver) in [(0, 1), (63, 1), (64, 7), (199, 1), (64, 9), (5, 2), (5, 0)] {
            v.set(item, ver);
        }
        let want: Vec<u32> = (0..200)
            .map(|i| [(0, 1), (63, 1), (64, 9), (199, 1)].iter().find(|p| p.0 == i).map_or(0, |p| p.1))
            .collect();
        assert_eq!((0..200).map(|i| v.get(i)).collect::<Vec<_>>(), want);
        assert_eq!(v.host_bytes(), 8 * 4 + 24, "four words of bits, one version above 1");
        // The checkpoint's form (u32 little-endian an item) and back.
        let bytes: Vec<u8> = v.le_blocks().flatten().collect();
        assert_eq!(bytes, want.iter().flat_map(|x| x.to_le_bytes()).collect::<Vec<u8>>());
        let back: Versions = bytes.chunks_exact(4).map(|b| u32::from_le_bytes(b.try_into().unwrap())).collect();
        assert_eq!(back, v);
        assert_eq!(Versions::new(70_000).le_blocks().map(|b| b.len()).collect::<Vec<_>>(), vec![4 << 16, 4 * 4464]);
    }
}
