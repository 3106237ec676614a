//! The caches' former home, kept so existing paths (`kvsim_timing::cache::MemSystem`) still resolve: the memory
//! system is now composed of the components in [`crate::mem`].

pub use crate::mem::{CacheArray, CacheStats, IoStats, MemSystem, PrivateCaches, Replacement};
