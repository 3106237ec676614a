//! Hash maps keyed by page number, shared by guest memory and the decoded-block cache.

use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};

/// A multiplicative hasher for page numbers (keys are already well spread; SipHash would be wasted work).
#[derive(Default)]
pub struct PageHasher(u64);
impl Hasher for PageHasher {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = (self.0.rotate_left(8) ^ b as u64).wrapping_mul(0x9e37_79b9_7f4a_7c15);
        }
    }
    fn write_u64(&mut self, n: u64) {
        self.0 = (n ^ (n >> 29)).wrapping_mul(0x9e37_79b9_7f4a_7c15);
    }
}
pub type PageMap<V> = HashMap<u64, V, BuildHasherDefault<PageHasher>>;
