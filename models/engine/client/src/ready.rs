//! The client's full packets waiting for their core's window, a queue per core, with a bit per core that says
//! whether its queue holds any: the client steps after every hart's turn, and a step of a 60-core server finds most
//! queues empty, so `send_ready` visits only the cores whose bit is set (a scan of every queue was a third of a bulk
//! load's host instructions, results/speed/README.md, session 21).

use std::collections::VecDeque;

#[derive(Clone)]
pub(crate) struct ReadyQueues<P> {
    queues: Vec<VecDeque<P>>,
    /// Bit c % 64 of word c / 64: core c's queue is not empty.
    nonempty: Vec<u64>,
}

impl<P> ReadyQueues<P> {
    pub fn new(cores: usize) -> Self {
        ReadyQueues { queues: (0..cores).map(|_| VecDeque::new()).collect(), nonempty: vec![0; cores.div_ceil(64)] }
    }

    pub fn push_back(&mut self, core: usize, p: P) {
        self.queues[core].push_back(p);
        self.nonempty[core / 64] |= 1 << (core % 64);
    }

    pub fn pop_front(&mut self, core: usize) -> Option<P> {
        let q = &mut self.queues[core];
        let p = q.pop_front();
        if q.is_empty() {
            self.nonempty[core / 64] &= !(1 << (core % 64));
        }
        p
    }

    pub fn is_empty(&self, core: usize) -> bool {
        self.queues[core].is_empty()
    }

    pub fn any(&self) -> bool {
        self.nonempty.iter().any(|&w| w != 0)
    }

    /// The first core at or after `from` whose queue is not empty (read now: a caller may change queues between
    /// calls, and gets what a scan of every core in order would see).
    pub fn next_nonempty(&self, from: usize) -> Option<usize> {
        let mut w = from / 64;
        let mut bits = *self.nonempty.get(w)? & (u64::MAX << (from % 64));
        loop {
            if bits != 0 {
                return Some(w * 64 + bits.trailing_zeros() as usize);
            }
            w += 1;
            bits = *self.nonempty.get(w)?;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_bits_follow_the_queues_and_the_scan_sees_cores_in_order() {
        let mut r = ReadyQueues::new(130);
        assert!(!r.any());
        assert_eq!(r.next_nonempty(0), None);
        for c in [3, 64, 129, 3] {
            r.push_back(c, c);
        }
        assert!(r.any());
        let mut seen = Vec::new();
        let mut c = 0;
        while let Some(k) = r.next_nonempty(c) {
            seen.push(k);
            c = k + 1;
        }
        assert_eq!(seen, [3, 64, 129]);
        assert_eq!(r.next_nonempty(65), Some(129));
        assert_eq!(r.next_nonempty(130), None);
        assert_eq!(r.pop_front(3), Some(3));
        assert_eq!(r.next_nonempty(0), Some(3), "one packet left on core 3");
        assert_eq!(r.pop_front(3), Some(3));
        assert!(r.is_empty(3));
        assert_eq!(r.next_nonempty(0), Some(64));
        assert_eq!(r.pop_front(64), Some(64));
        assert_eq!(r.pop_front(129), Some(129));
        assert_eq!(r.pop_front(129), None);
        assert!(!r.any());
    }

    #[test]
    fn the_visits_are_those_of_a_scan_of_every_queue() {
        // Random pushes and pops on 150 cores; after each, the cores `next_nonempty` visits in turn are those a scan
        // of every core's queue (what `send_ready` did before) finds not empty, in the same order.
        let mut r = ReadyQueues::new(150);
        let mut s = 7u64;
        for step in 0..20_000 {
            let x = kvsim_base::random::splitmix64(&mut s);
            let c = (x % 150) as usize;
            if (x >> 32).is_multiple_of(3) {
                r.push_back(c, step);
            } else {
                r.pop_front(c);
            }
            let scan: Vec<usize> = (0..150).filter(|&k| !r.queues[k].is_empty()).collect();
            let mut visits = Vec::new();
            let mut next = 0;
            while let Some(k) = r.next_nonempty(next) {
                visits.push(k);
                next = k + 1;
            }
            assert_eq!(visits, scan, "step {step}");
            assert_eq!(r.any(), !scan.is_empty());
        }
    }
}
