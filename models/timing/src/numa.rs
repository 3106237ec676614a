//! The NUMA address map: which socket's memory holds each guest address. The guest runs with virtual = physical
//! addresses, so the map is kept per address range: ranges placed explicitly (a NUMA allocation, a hart's stack)
//! on a socket, and everything else on `default_socket`. The engine keeps the authoritative map (it is part of a
//! checkpoint); the memory system asks it on every access that leaves a socket's caches, to find the line's home.

use serde::{Deserialize, Serialize};

/// Guest address ranges [start, end) and the socket whose memory holds each.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct NumaMap {
    sockets: u16,
    /// Placed ranges (start, end, socket), sorted by start, disjoint, never empty.
    ranges: Vec<(u64, u64, u16)>,
    /// The socket of every address no range covers (the loader's image, the heap, plain mmaps).
    default_socket: u16,
}

impl NumaMap {
    /// A map of `sockets` sockets (at least one) with nothing placed: every address on socket 0.
    pub fn new(sockets: u16) -> Self {
        NumaMap { sockets: sockets.max(1), ranges: Vec::new(), default_socket: 0 }
    }

    pub fn sockets(&self) -> u16 {
        self.sockets
    }

    pub fn ranges(&self) -> &[(u64, u64, u16)] {
        &self.ranges
    }

    fn check_socket(&self, socket: u16) -> Result<(), String> {
        if socket >= self.sockets {
            return Err(format!("NUMA socket {socket} does not exist: the system has sockets 0..{}", self.sockets - 1));
        }
        Ok(())
    }

    /// Addresses no range covers go to `socket`.
    pub fn set_default_socket(&mut self, socket: u16) -> Result<(), String> {
        self.check_socket(socket)?;
        self.default_socket = socket;
        Ok(())
    }

    /// Put [start, start + len) on `socket`, replacing whatever covered any part of it. An error names a socket
    /// that does not exist; an empty range places nothing.
    pub fn place(&mut self, start: u64, len: u64, socket: u16) -> Result<(), String> {
        self.check_socket(socket)?;
        let end = start.saturating_add(len);
        if end <= start {
            return Ok(());
        }
        let mut next = Vec::with_capacity(self.ranges.len() + 2);
        for &(s, e, k) in &self.ranges {
            if e <= start || s >= end {
                next.push((s, e, k));
                continue;
            }
            // Keep the parts of an overlapped range outside the new one.
            if s < start {
                next.push((s, start, k));
            }
            if e > end {
                next.push((end, e, k));
            }
        }
        next.push((start, end, socket));
        next.sort_unstable_by_key(|r| r.0);
        // Join neighbours on the same socket so lookups stay short.
        let mut joined: Vec<(u64, u64, u16)> = Vec::with_capacity(next.len());
        for r in next {
            match joined.last_mut() {
                Some(last) if last.1 == r.0 && last.2 == r.2 => last.1 = r.1,
                _ => joined.push(r),
            }
        }
        self.ranges = joined;
        Ok(())
    }

    /// The socket whose memory holds `addr`.
    #[inline]
    pub fn socket_of(&self, addr: u64) -> u16 {
        let i = self.ranges.partition_point(|r| r.0 <= addr);
        match i.checked_sub(1).map(|j| self.ranges[j]) {
            Some((_, end, socket)) if addr < end => socket,
            _ => self.default_socket,
        }
    }

    /// The address ranges [start, end) whose socket `next` gives otherwise than this map, sorted and disjoint; None
    /// when the two default sockets differ (then every unplaced address changes). Between two consecutive edges of
    /// either map's ranges each map gives one socket, so comparing the maps at every edge finds every change.
    pub fn changed_ranges(&self, next: &NumaMap) -> Option<Vec<(u64, u64)>> {
        if self.default_socket != next.default_socket {
            return None;
        }
        let mut edges: Vec<u64> = self.ranges.iter().chain(&next.ranges).flat_map(|&(s, e, _)| [s, e]).collect();
        edges.sort_unstable();
        edges.dedup();
        let mut out: Vec<(u64, u64)> = Vec::new();
        for w in edges.windows(2) {
            let (a, b) = (w[0], w[1]);
            if self.socket_of(a) == next.socket_of(a) {
                continue;
            }
            match out.last_mut() {
                Some(last) if last.1 == a => last.1 = b,
                _ => out.push((a, b)),
            }
        }
        Some(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_changed_ranges_are_where_two_maps_differ() {
        let mut old = NumaMap::new(3);
        old.place(0x1000, 0x3000, 1).unwrap(); // [0x1000, 0x4000) on 1
        old.place(0x8000, 0x1000, 2).unwrap();
        let mut next = old.clone();
        next.place(0x3000, 0x2000, 2).unwrap(); // [0x3000, 0x4000) 1 -> 2, [0x4000, 0x5000) 0 -> 2
        next.place(0x8000, 0x800, 2).unwrap(); // no change
        next.place(0x9000, 0x1000, 0).unwrap(); // on the default socket already
        assert_eq!(old.changed_ranges(&next), Some(vec![(0x3000, 0x5000)]));
        assert_eq!(old.changed_ranges(&old), Some(vec![]));
        next.set_default_socket(1).unwrap();
        assert_eq!(old.changed_ranges(&next), None);
    }

    #[test]
    fn unplaced_addresses_are_on_the_default_socket() {
        let mut m = NumaMap::new(2);
        assert_eq!(m.socket_of(0x1000), 0);
        m.set_default_socket(1).unwrap();
        assert_eq!(m.socket_of(0x1000), 1);
        assert!(m.set_default_socket(2).unwrap_err().contains("socket 2 does not exist"));
    }

    #[test]
    fn a_placed_range_covers_exactly_its_bytes() {
        let mut m = NumaMap::new(4);
        m.place(0x10_000, 0x2000, 3).unwrap();
        assert_eq!(
            (m.socket_of(0xffff), m.socket_of(0x10_000), m.socket_of(0x11_fff), m.socket_of(0x12_000)),
            (0, 3, 3, 0)
        );
    }

    #[test]
    fn placing_over_a_range_splits_it_and_neighbours_on_one_socket_join() {
        let mut m = NumaMap::new(4);
        m.place(0x0, 0x4000, 1).unwrap();
        m.place(0x1000, 0x1000, 2).unwrap();
        assert_eq!(m.ranges(), &[(0x0, 0x1000, 1), (0x1000, 0x2000, 2), (0x2000, 0x4000, 1)]);
        m.place(0x1000, 0x1000, 1).unwrap();
        assert_eq!(m.ranges(), &[(0x0, 0x4000, 1)]);
        m.place(0x4000, 0x1000, 1).unwrap();
        assert_eq!(m.ranges(), &[(0x0, 0x5000, 1)]);
    }

    #[test]
    fn a_socket_that_does_not_exist_is_refused_and_nothing_changes() {
        let mut m = NumaMap::new(2);
        let err = m.place(0x1000, 0x1000, 2).unwrap_err();
        assert!(err.contains("NUMA socket 2 does not exist") && err.contains("0..1"), "{err}");
        assert!(m.ranges().is_empty());
    }
}
