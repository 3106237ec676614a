//! The links between sockets (parameters: `models/link.py`): QPI-like point-to-point links, each split into two
//! directions that do not share bandwidth.
//!
//! A message crosses a direction of a link as flits: `header_flits` of header (the per-transaction overhead), then
//! its payload (the message's bytes beyond the on-chip header, [`CONTROL_BYTES`]) packed `flit_payload_bits` to a
//! flit. Each flit holds the direction for `flit` ticks (its width over the lanes' transfer rate), so a message
//! occupies it for `flits x flit` from when it starts; messages that reach it at once go one after the other (on a
//! slot calendar, as the mesh's links: messages arrive slightly out of time order). The last flit reaches the far
//! port `latency` after it left: a message that starts at `t` on an idle link arrives at `t + flits x flit +
//! latency`. With several parallel links a message takes the one on which it would arrive first (the lowest
//! index among equals).

use kvsim_params::SocketLink;

use crate::network::CONTROL_BYTES;
use crate::noc::calendar::LinkCalendar;
use crate::{StatSink, Tick};

/// The timing of one direction of a link, in ticks, from its parameters.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LinkTiming {
    /// Ticks one flit holds the direction (rounded to whole ps).
    pub flit: Tick,
    pub flit_payload_bits: u32,
    pub header_flits: u32,
    /// One way, from the start of a message's last flit at one port to its arrival at the other.
    pub latency: Tick,
}

impl LinkTiming {
    /// From the declared parameters; an error names a parameter whose value makes no link.
    pub fn from_params(p: &SocketLink) -> Result<Self, String> {
        let bits_per_second = p.lanes as f64 * p.bits_per_transfer as f64 * p.rate * 1e9;
        if bits_per_second.is_nan() || bits_per_second <= 0.0 || p.flit_bits == 0 || p.flit_payload_bits == 0 {
            return Err(format!(
                "SocketLink: lanes = {}, bits_per_transfer = {}, rate = {} GT/s and flit_bits = {} move no data",
                p.lanes, p.bits_per_transfer, p.rate, p.flit_bits
            ));
        }
        if p.flit_payload_bits > p.flit_bits {
            return Err(format!(
                "SocketLink.flit_payload_bits = {} exceeds SocketLink.flit_bits = {}",
                p.flit_payload_bits, p.flit_bits
            ));
        }
        let flit = (p.flit_bits as f64 / bits_per_second * crate::PS_PER_S as f64).round() as Tick;
        Ok(LinkTiming {
            flit: flit.max(1),
            flit_payload_bits: p.flit_payload_bits as u32,
            header_flits: p.header_flits.max(1) as u32,
            latency: p.latency,
        })
    }

    /// Flits of a message of `bytes` (as the memory system sizes them: [`CONTROL_BYTES`] of header, then payload).
    #[inline]
    pub fn flits(&self, bytes: u32) -> u64 {
        let payload_bits = bytes.saturating_sub(CONTROL_BYTES) as u64 * 8;
        self.header_flits as u64 + payload_bits.div_ceil(self.flit_payload_bits as u64)
    }

    /// Ticks a message of `bytes` holds a direction of the link.
    #[inline]
    pub fn hold(&self, bytes: u32) -> Tick {
        self.flits(bytes) * self.flit
    }

    /// The unloaded time from a message's start at one port to its arrival at the other.
    #[inline]
    pub fn unloaded(&self, bytes: u32) -> Tick {
        self.hold(bytes) + self.latency
    }

    /// Peak payload bytes per second of one direction of one link.
    pub fn payload_bandwidth(&self) -> f64 {
        self.flit_payload_bits as f64 / 8.0 / (self.flit as f64 * 1e-12)
    }
}

/// One direction between two sockets: its parallel links' calendars and what crossed them.
#[derive(Debug, Clone)]
pub struct LinkDirection {
    timing: LinkTiming,
    lanes: Vec<LinkCalendar>,
    pub messages: u64,
    pub flits: u64,
    /// Bytes of the messages (their on-chip size: header and payload).
    pub bytes: u64,
    /// Payload bytes (beyond the on-chip header), what a bandwidth figure counts.
    pub payload_bytes: u64,
    /// Ticks the links were held, summed over the parallel links.
    pub busy: Tick,
}

impl LinkDirection {
    /// `links` parallel links of `timing`.
    pub fn new(timing: LinkTiming, links: usize) -> Self {
        // A slot of 16 flits: fine enough that gaps are found, coarse enough to stay small (as the mesh's links).
        let slot = 16 * timing.flit;
        LinkDirection {
            timing,
            lanes: (0..links.max(1)).map(|_| LinkCalendar::new(slot)).collect(),
            messages: 0,
            flits: 0,
            bytes: 0,
            payload_bytes: 0,
            busy: 0,
        }
    }

    pub fn timing(&self) -> &LinkTiming {
        &self.timing
    }

    pub fn links(&self) -> usize {
        self.lanes.len()
    }

    /// A message of `bytes` reaches this direction's port at `t`: returns when its last flit reaches the far port.
    pub fn send(&mut self, bytes: u32, t: Tick) -> Tick {
        let hold = self.timing.hold(bytes);
        let lane = if self.lanes.len() == 1 {
            0
        } else {
            (0..self.lanes.len()).min_by_key(|&i| (self.lanes[i].peek(t, hold), i)).unwrap_or(0)
        };
        let end = self.lanes[lane].reserve(t, hold);
        self.messages += 1;
        self.flits += self.timing.flits(bytes);
        self.bytes += bytes as u64;
        self.payload_bytes += bytes.saturating_sub(CONTROL_BYTES) as u64;
        self.busy += hold;
        end + self.timing.latency
    }

    /// Statistics under `prefix` (e.g. "system.link0_1."), utilisation over `ticks` of measured time.
    pub fn stats(&self, prefix: &str, ticks: Tick, out: &mut StatSink) {
        out.add(prefix, "messages", self.messages as f64, "messages that crossed in this direction");
        out.add(prefix, "flits", self.flits as f64, "flits sent (headers and payload)");
        out.add(prefix, "bytes", self.bytes as f64, "bytes of the messages (header and payload, as on chip)");
        out.add(prefix, "payload_bytes", self.payload_bytes as f64, "payload bytes (data lines) carried");
        let secs = ticks as f64 * 1e-12;
        out.add(prefix, "payload_bw", crate::ratio(self.payload_bytes as f64, secs), "payload bytes per second");
        let capacity = ticks as f64 * self.lanes.len() as f64;
        out.add(
            prefix,
            "utilization",
            crate::ratio(self.busy as f64, capacity),
            "fraction of the time the links were busy",
        );
    }

    pub fn reset_stats(&mut self) {
        self.messages = 0;
        self.flits = 0;
        self.bytes = 0;
        self.payload_bytes = 0;
        self.busy = 0;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::network::DATA_BYTES;

    fn qpi() -> LinkTiming {
        LinkTiming::from_params(&SocketLink::default()).unwrap()
    }

    #[test]
    fn qpi_defaults_give_half_a_nanosecond_flits_and_sixteen_gigabytes_per_second() {
        let t = qpi();
        // 80 bits over 20 lanes at 8 GT/s: 4 transfers of 125 ps.
        assert_eq!(t.flit, 500);
        assert_eq!((t.flits(CONTROL_BYTES), t.flits(DATA_BYTES)), (1, 9));
        assert!((t.payload_bandwidth() - 16e9).abs() < 1.0, "{}", t.payload_bandwidth());
        assert_eq!(t.unloaded(DATA_BYTES), 9 * 500 + 20_000);
    }

    #[test]
    fn messages_at_once_serialise_and_a_second_link_takes_the_overflow() {
        let t = qpi();
        let mut one = LinkDirection::new(t, 1);
        assert_eq!(one.send(DATA_BYTES, 1000), 1000 + 4500 + 20_000);
        assert_eq!(one.send(DATA_BYTES, 1000), 1000 + 9000 + 20_000);
        assert_eq!(one.send(CONTROL_BYTES, 1000), 1000 + 9500 + 20_000);
        let mut two = LinkDirection::new(t, 2);
        assert_eq!(two.send(DATA_BYTES, 1000), 1000 + 4500 + 20_000);
        assert_eq!(two.send(DATA_BYTES, 1000), 1000 + 4500 + 20_000);
        assert_eq!(two.send(DATA_BYTES, 1000), 1000 + 9000 + 20_000);
        assert_eq!((two.messages, two.flits, two.payload_bytes), (3, 27, 192));
    }

    #[test]
    fn a_payload_wider_than_the_flit_is_refused() {
        let p = SocketLink { flit_payload_bits: 96, ..SocketLink::default() };
        assert!(LinkTiming::from_params(&p).unwrap_err().contains("flit_payload_bits = 96"));
    }
}
