//! The directory: for every line held in some core's private caches, its owner (the one core holding it in M, O
//! or E) and its exact sharers (cores holding it in S). Two levels: a request first reaches its cluster's
//! directory (kept at the cluster's LLC slice), which resolves it when the cluster alone can (a sibling owns the
//! line, or the cluster holds it exclusively); otherwise it goes on to the line's home (the LLC slice its address
//! interleaves to), whose entry is authoritative. Both levels read the same exact entry here: the cluster level's
//! view (which cores of the cluster hold the line) is derived from it rather than kept twice, so the two can never
//! disagree; what the two levels change is the path, and so the latency, of each transaction.
//!
//! Only lines that some private cache holds have an entry (a sparse directory, never aliasing and never
//! overflowing); with an inclusive LLC those are a subset of the LLC's lines.

use super::SharerSet;
use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};

/// An entry: the owner (if any) and the sharers other than the owner.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct DirEntry {
    pub owner: Option<u16>,
    pub sharers: SharerSet,
}

impl DirEntry {
    pub fn is_empty(&self) -> bool {
        self.owner.is_none() && self.sharers.is_empty()
    }
    /// Every core holding the line (owner first).
    pub fn holders(&self) -> Vec<u16> {
        let mut v: Vec<u16> = self.owner.into_iter().collect();
        v.extend(self.sharers.to_vec());
        v
    }
    pub fn holds(&self, core: u16) -> bool {
        self.owner == Some(core) || self.sharers.contains(core)
    }
}

/// Counters of the directory's transactions.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct DirectoryStats {
    pub gets: u64,
    pub getx: u64,
    pub upgrades: u64,
    pub puts: u64,
    pub putx: u64,
    /// Requests the owner answered (3-hop: requester, home, owner, requester).
    pub forwards: u64,
    /// Requests resolved by the cluster level without going home.
    pub cluster_resolved: u64,
    /// Invalidations sent (each acknowledged).
    pub invalidations: u64,
    /// Invalidations caused by the LLC evicting a line (inclusive back-invalidation).
    pub back_invalidations: u64,
    /// I/O agents' requests (DMA reads and writes) that found private copies.
    pub io_snoops: u64,
    /// Invalidations of copies in other sockets' LLCs (remote lines), each acknowledged, before a write.
    pub socket_invalidations: u64,
}

/// A multiplicative hash for line numbers (the keys are already well spread; SipHash would cost more).
#[derive(Default)]
pub struct LineHasher(u64);

impl Hasher for LineHasher {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = (self.0.rotate_left(8) ^ b as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15);
        }
    }
    fn write_u64(&mut self, x: u64) {
        self.0 = (x ^ (x >> 29)).wrapping_mul(0x9E37_79B9_7F4A_7C15);
    }
}

pub type LineMap<V> = HashMap<u64, V, BuildHasherDefault<LineHasher>>;

/// The directory of one socket.
#[derive(Debug, Clone, Default)]
pub struct Directory {
    entries: LineMap<DirEntry>,
    /// Lines homed here that other sockets' LLCs hold copies of (remote lines): a bit per socket. Exact: a socket
    /// whose LLC drops its copy tells the home.
    remote: LineMap<u64>,
    /// Ticks of a home directory lookup (at the uncore clock) and of a cluster-level lookup.
    pub home_ticks: u64,
    pub cluster_ticks: u64,
    pub stats: DirectoryStats,
}

impl Directory {
    pub fn new(home_ticks: u64, cluster_ticks: u64) -> Self {
        Directory {
            entries: LineMap::default(),
            remote: LineMap::default(),
            home_ticks,
            cluster_ticks,
            stats: DirectoryStats::default(),
        }
    }

    pub fn get(&self, line: u64) -> Option<&DirEntry> {
        self.entries.get(&line)
    }

    pub fn entry(&mut self, line: u64) -> &mut DirEntry {
        self.entries.entry(line).or_default()
    }

    /// `core` no longer holds `line`; the entry goes when nobody does.
    pub fn remove_holder(&mut self, line: u64, core: u16) {
        if let Some(e) = self.entries.get_mut(&line) {
            if e.owner == Some(core) {
                e.owner = None;
            }
            e.sharers.remove(core);
            if e.is_empty() {
                self.entries.remove(&line);
            }
        }
    }

    /// Nobody holds `line` any more; returns who did.
    pub fn take(&mut self, line: u64) -> Option<DirEntry> {
        self.entries.remove(&line)
    }

    /// The sockets (a bit each) whose LLCs hold a copy of `line`, homed on another socket.
    #[inline]
    pub fn remote_sockets(&self, line: u64) -> u64 {
        if self.remote.is_empty() {
            return 0;
        }
        self.remote.get(&line).copied().unwrap_or(0)
    }

    /// Socket `socket`'s LLC took a copy of `line`.
    pub fn add_remote(&mut self, line: u64, socket: usize) {
        *self.remote.entry(line).or_insert(0) |= 1 << socket;
    }

    /// Socket `socket`'s LLC no longer holds `line`.
    pub fn remove_remote(&mut self, line: u64, socket: usize) {
        if let Some(m) = self.remote.get_mut(&line) {
            *m &= !(1u64 << socket);
            if *m == 0 {
                self.remote.remove(&line);
            }
        }
    }

    /// Lines some other socket's LLC holds a copy of (for checks).
    pub fn remote_lines(&self) -> impl Iterator<Item = (&u64, &u64)> {
        self.remote.iter()
    }

    /// Lines with an entry (for checks).
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    pub fn lines(&self) -> impl Iterator<Item = (&u64, &DirEntry)> {
        self.entries.iter()
    }
}
