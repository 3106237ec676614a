//! The memory system as composed components, in the style of ZSim's memory objects: a request with a coherence
//! type, a requesting agent and a time goes in; a response with the granted state and the completion time comes
//! out.
//!
//! * [`array::CacheArray`]: one set-associative array (tags, per-line MOESI state, fill times, MSHRs, way masks);
//!   it owns a [`replacement::ReplacementPolicy`]. A cache is an array plus its policy; its coherence behaviour
//!   is the hierarchy's controller logic, not a subclass.
//! * [`sharers::SharerSet`]: an exact set of core ids for any core count.
//! * [`directory::Directory`]: the home directory (owner and exact sharers of every privately cached line) and the
//!   cluster level above it.
//! * [`hierarchy::MemSystem`]: the socket's private caches, the sliced LLC, the directory and the network; ONE
//!   walk serves timed core accesses, cache warming (no time) and I/O agents' DMA.
//! * [`remote`]: remote lines, a socket's LLC copies of lines homed on other sockets (several sockets only).
//! * `l1_hit.rs`: a core's timed L1 hit done in place, as the walk's hit path does it (`MemPort::access` tries it
//!   first, inline in the caller; anything else walks).
//! * `evict.rs`: the LLC's and the private levels' evictions and write-backs (the walk's, beside `hierarchy.rs`).
//! * `leave_socket.rs`: the partitioned schedule's probe of whether an access may step outside its core's socket.
//! * `rehome.rs`: a range that changes home socket while cached leaves the caches first (several sockets only).
//! * [`prefetch::Prefetchers`]: a cache's hardware prefetchers; they reach the hierarchy only through
//!   [`prefetch_port::PrefetchPort`], which the hierarchy implements (`prefetch_fill.rs`).
//! * [`check::CoherenceCheck`]: a debug mode that checks single-writer/multiple-reader and data versions after
//!   every access (tests).

pub mod array;
pub mod check;
mod check_hooks;
pub mod directory;
pub mod dma;
mod dma_lines;
mod evict;
pub mod hierarchy;
pub mod io_stats;
mod l1_hit;
mod leave_socket;
mod mem_port;
pub mod prefetch;
mod prefetch_fill;
pub mod prefetch_port;
mod rehome;
pub mod remote;
pub mod replacement;
pub mod report;
pub mod sharers;
pub mod socket_messages;
mod socket_send;
mod uncached;
mod warm;

pub use array::{CacheArray, CacheStats};
pub use directory::{DirEntry, Directory, DirectoryStats};
pub use hierarchy::{MemSystem, PrivateCaches, SocketHomes};
pub use io_stats::IoStats;
pub use replacement::Replacement;
pub use sharers::SharerSet;

/// MOESI state of a line in a private cache (the LLC keeps only a dirty bit: `M` dirty, `S` clean).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
#[repr(u8)]
pub enum LineState {
    Invalid = 0,
    Shared = 1,
    Exclusive = 2,
    Owned = 3,
    Modified = 4,
}

impl LineState {
    /// May a store complete on this copy without asking the directory?
    #[inline]
    pub fn writable(self) -> bool {
        matches!(self, LineState::Exclusive | LineState::Modified)
    }
    /// Does this copy hold data newer than the LLC's (so evicting it is a write-back)?
    #[inline]
    pub fn dirty(self) -> bool {
        matches!(self, LineState::Modified | LineState::Owned)
    }
    /// Is this copy the line's owner (it answers forwarded requests)?
    #[inline]
    pub fn owner(self) -> bool {
        matches!(self, LineState::Modified | LineState::Owned | LineState::Exclusive)
    }
}

/// The coherence type of a request to the directory.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CohType {
    /// Read permission (a load, fetch or prefetch miss; a DMA read).
    GetS,
    /// Write permission with data (a store or atomic miss; a DMA write).
    GetX,
    /// Write permission for a line the requester already holds readable (no data moves).
    Upgrade,
    /// A clean line left the requester's private caches (keeps the sharer set exact).
    PutS,
    /// A dirty line left the requester's private caches: its data goes home.
    PutX,
}

/// Who asks: a core (index into the private caches) or an I/O agent (index into the placement's I/O endpoints).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Agent {
    Core(u16),
    Io(u16),
}

/// Whether a walk keeps time (a timed access) or only updates contents (cache warming: no time, no MSHRs, no
/// network bookings, no memory timing).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    Timed,
    Warm,
}

/// What started the walk now running (so the LLC can count its misses by cause).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Origin {
    /// A core's load, store, atomic or instruction fetch (or its page walk).
    #[default]
    Demand,
    /// A core's software prefetch instruction.
    SwPrefetch,
    /// A private cache's hardware prefetcher.
    HwPrefetch,
    /// An I/O agent's DMA (its LLC misses are counted in `dma.rs`).
    Dma,
}

/// What a walk answers: when the access completes and the state the requester's copy was granted.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MemResp {
    pub done: crate::Tick,
    pub state: LineState,
}

/// A core's access as its walk reads it (`MemSystem::core_access`).
pub(crate) struct CoreAccess {
    pub timed: bool,
    pub line: u64,
    pub t: crate::Tick,
    pub core: usize,
    pub ifetch: bool,
    pub write: bool,
    pub origin: Origin,
}
