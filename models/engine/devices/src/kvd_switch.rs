//! KeyVault's key-value distributor (KVD) switch in detailed timing (`Nic.switch`, models/kvd.py): between the
//! network and a NIC port sit the switch's uplink, shared by the cluster's stacks, and its forwarding latency.
//!
//! One stack is simulated; the switch spreads requests over `stacks` stacks by key, so this stack gets
//! `1/stacks` of the uplink's bandwidth each way. A frame to the stack is serialized on its share of the uplink
//! (`(bytes + 24) * 8 / (uplink_gbps / stacks)`, padded to 60 bytes as on any Ethernet wire), stored, and forwarded
//! `latency` after its last byte arrived onto the stack's own link (the NIC's port, serialized there by the NIC's
//! model). A reply that has left the NIC's port is forwarded `latency` later onto its share of the uplink, and the
//! client has it when its last byte has left the uplink. Each direction of each port is a FIFO in call order.

use kvsim_base::frame::{MIN_FRAME, WIRE_OVERHEAD};

/// Per direction: frames, bytes on the wire (with the 24 bytes per frame), busy time (ps).
#[derive(Debug, Clone, Copy, Default)]
pub struct Direction {
    pub frames: u64,
    pub wire_bytes: u64,
    pub busy_ps: u64,
}

/// The switch in front of one NIC's ports.
#[derive(Debug, Clone)]
pub struct KvdSwitch {
    /// ps per byte on this stack's share of the uplink.
    pub share_ps_per_byte: f64,
    /// Forwarding latency (ps).
    pub latency: u64,
    /// Per NIC port: when the share of the uplink is free, toward the stack and toward the network.
    down_free: Vec<u64>,
    up_free: Vec<u64>,
    pub down: Direction,
    pub up: Direction,
    share_gbps: f64,
}

impl KvdSwitch {
    /// The switch of `p` in front of `ports` NIC ports, or None when `p.enabled` is off.
    pub fn new(p: &kvsim_params::KvdSwitch, ports: usize) -> Option<KvdSwitch> {
        if !p.enabled {
            return None;
        }
        let share_gbps = p.uplink_gbps / p.stacks.max(1) as f64;
        Some(KvdSwitch {
            share_ps_per_byte: 8.0 * 1e12 / (share_gbps * 1e9),
            latency: p.latency,
            down_free: vec![0; ports],
            up_free: vec![0; ports],
            down: Direction::default(),
            up: Direction::default(),
            share_gbps,
        })
    }

    /// Serialization time of a frame of `len` bytes (without FCS) on this stack's share of the uplink.
    pub fn share_ps(&self, len: usize) -> u64 {
        ((len.max(MIN_FRAME) as u64 + WIRE_OVERHEAD) as f64 * self.share_ps_per_byte).round() as u64
    }

    /// A frame of `len` bytes for NIC port `port`, sent at `t`: (when it starts on the uplink, when the switch
    /// forwards it onto the stack's link).
    pub fn to_stack(&mut self, port: usize, len: usize, t: u64) -> (u64, u64) {
        let ps = self.share_ps(len);
        let start = t.max(self.down_free[port]);
        self.down_free[port] = start + ps;
        self.down.frames += 1;
        self.down.wire_bytes += len.max(MIN_FRAME) as u64 + WIRE_OVERHEAD;
        self.down.busy_ps += ps;
        (start, start + ps + self.latency)
    }

    /// A frame of `len` bytes whose last byte left NIC port `port` at `t`: when its last byte leaves the uplink.
    pub fn to_network(&mut self, port: usize, len: usize, t: u64) -> u64 {
        let ps = self.share_ps(len);
        let start = (t + self.latency).max(self.up_free[port]);
        self.up_free[port] = start + ps;
        self.up.frames += 1;
        self.up.wire_bytes += len.max(MIN_FRAME) as u64 + WIRE_OVERHEAD;
        self.up.busy_ps += ps;
        start + ps
    }

    pub fn reset_stats(&mut self) {
        self.down = Direction::default();
        self.up = Direction::default();
    }

    /// Statistics under the NIC's prefix `name` (`kvsim_params::paths::nic`) and `paths::kvd_switch`.
    pub fn stats(&self, name: &str, out: &mut Vec<(String, f64, &'static str)>) {
        let switch = name.to_owned() + &kvsim_params::paths::kvd_switch();
        out.push((
            format!("{switch}share_gbps"),
            self.share_gbps,
            "this stack's share of the KVD switch's uplink, Gbit/s each way (uplink_gbps / stacks)",
        ));
        // down: toward the stack; up: toward the network.
        for (dir, d) in [("down", &self.down), ("up", &self.up)] {
            out.push((format!("{switch}{dir}_frames"), d.frames as f64, "frames the switch forwarded"));
            out.push((
                format!("{switch}{dir}_wire_bytes"),
                d.wire_bytes as f64,
                "bytes on this stack's share of the uplink (frame + 24 bytes per frame)",
            ));
            out.push((
                format!("{switch}{dir}_busy_ps"),
                d.busy_ps as f64,
                "time this stack's share of the uplink was busy (ps)",
            ));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn params(stacks: u64, latency: u64) -> kvsim_params::KvdSwitch {
        kvsim_params::KvdSwitch { enabled: true, stacks, latency, ..Default::default() }
    }

    #[test]
    fn a_switch_that_is_off_is_not_built() {
        assert!(KvdSwitch::new(&kvsim_params::KvdSwitch::default(), 1).is_none());
    }

    #[test]
    fn a_frame_crosses_its_share_of_the_uplink_then_the_forwarding_latency_at_exact_ticks() {
        // 12 stacks on 10 GbE: 10/12 Gbit/s each, 9600 ps per byte. A 100-byte frame is 124 bytes on the wire.
        let mut sw = KvdSwitch::new(&params(12, 200_000), 1).unwrap();
        assert_eq!(sw.share_ps_per_byte, 9600.0);
        assert_eq!(sw.share_ps(100), 124 * 9600);
        assert_eq!(sw.share_ps(10), 84 * 9600, "padded to 60 bytes");
        let (start, out) = sw.to_stack(0, 100, 1_000);
        assert_eq!((start, out), (1_000, 1_000 + 124 * 9600 + 200_000));
        // A second frame at the same time waits for the first on the uplink.
        let (start2, out2) = sw.to_stack(0, 100, 1_000);
        assert_eq!((start2, out2), (1_000 + 124 * 9600, 1_000 + 2 * 124 * 9600 + 200_000));
        // Toward the network: the forwarding latency, then the share of the uplink.
        assert_eq!(sw.to_network(0, 100, 5_000_000), 5_000_000 + 200_000 + 124 * 9600);
        // The reverse direction is its own wire: a reply at once after does not wait for the requests.
        assert_eq!(sw.to_network(0, 100, 0), 5_000_000 + 200_000 + 2 * 124 * 9600, "FIFO behind the first reply");
        assert_eq!((sw.down.frames, sw.up.frames, sw.down.busy_ps), (2, 2, 2 * 124 * 9600));
    }

    #[test]
    fn one_stack_alone_gets_the_whole_uplink() {
        let sw = KvdSwitch::new(&params(1, 0), 1).unwrap();
        assert_eq!(sw.share_ps_per_byte, 800.0, "10 Gbit/s: 800 ps per byte");
    }
}
