//! FS mode's network: the ghost client on a wire to the machine's virtio-net device. The client is the same as SE
//! mode's (memcached over UDP or TCP; open loop over UDP, where a datagram the guest drops counts as lost once the
//! guest is idle with nothing left to take in, `guest_idle`); here its one "port" is the wire and its one "queue" the device's receive queue,
//! since the kernel's stack, not the NIC, takes each datagram to the socket of its server instance.
//!
//! The wire runs at `FullSystem.link_rate` each way: a frame occupies it for its bytes (at least the 60 of a
//! minimum frame) plus the 24 of PHY overhead and arrives with its last bit, after the frames ahead of it. The
//! client's host answers ARP for the client's address, as any host on the link would; every other frame the guest
//! sends to the client must be a well-formed response, which the client checks.

use std::collections::VecDeque;

use kvsim_base::frame::{MIN_FRAME, WIRE_OVERHEAD};
use kvsim_client::{Client, ClientConfig, ClientEvent, ClientState, NicPort};
use kvsim_os::full_system::Machine;

/// The client's addresses on the wire (client/wire.rs puts them in every frame it sends).
pub const CLIENT_MAC: [u8; 6] = [0x02, 0, 0, 0, 0, 0x01];
pub const CLIENT_IP: [u8; 4] = [10, 0, 0, 1];

pub struct FsNet {
    pub client: Client,
    /// Bits per second of the wire, each way.
    bits_per_s: f64,
    /// When each direction of the wire is next free (ps).
    to_guest_free: u64,
    to_client_free: u64,
    /// ARP requests the client's host answered, and frames from the guest that were neither ARP nor IPv4 to the
    /// client (counted, not given to the client).
    pub arp_replies: u64,
    pub other_frames: u64,
    /// When the device was first seen up (driver ready, receive buffers posted).
    pub up_at: Option<u64>,
    /// How long after that the link carries frames (ps).
    link_up_delay: u64,
    /// When the measured phase started (ps) and the instructions then.
    pub measure_start: Option<(u64, u64)>,
}

/// A checkpoint's client side: the state, the client's per-item versions and (dense) per-bucket counts.
pub type SavedNet<'a> = (FsNetState, &'a kvsim_client::store_model::Versions, Option<&'a [u8]>);

/// What a checkpoint keeps of the client and its wire (the client's per-item and per-bucket arrays apart).
#[derive(Debug, serde::Serialize, serde::Deserialize)]
pub struct FsNetState {
    client: ClientState,
    to_guest_free: u64,
    to_client_free: u64,
    arp_replies: u64,
    other_frames: u64,
    up_at: Option<u64>,
    measure_start: Option<(u64, u64)>,
}

/// The client's view of the wire: the guest's frames arrive at the device when their last bit does.
struct Wire<'a> {
    net_in: &'a mut VecDeque<(u64, Vec<u8>)>,
    free: &'a mut u64,
    bits_per_s: f64,
    posted: bool,
    backlog: usize,
}

/// Time (ps) a frame of `len` bytes occupies a wire of `bits_per_s`.
fn wire_ps(len: usize, bits_per_s: f64) -> u64 {
    let bits = (len.max(MIN_FRAME) as u64 + WIRE_OVERHEAD) * 8;
    (bits as f64 * 1e12 / bits_per_s).round() as u64
}

impl Wire<'_> {
    /// Put `frame` on the wire at `t`: (when it starts, when it arrives).
    fn send(&mut self, frame: Vec<u8>, t: u64) -> u64 {
        let start = t.max(*self.free);
        let end = start + wire_ps(frame.len(), self.bits_per_s);
        *self.free = end;
        self.net_in.push_back((end, frame));
        start
    }
}

impl NicPort for Wire<'_> {
    fn wire_send(&mut self, _port: usize, frame: Vec<u8>, t: u64) -> u64 {
        self.send(frame, t)
    }

    fn receive(&mut self, _port: usize, frame: Vec<u8>) -> Option<usize> {
        let t = *self.free;
        self.send(frame, t);
        Some(0)
    }

    fn rx_posted(&self, _q: usize) -> bool {
        self.posted
    }

    fn queue_drained(&self, _q: usize) -> bool {
        self.backlog == 0 && self.net_in.is_empty()
    }

    fn fifo_frames(&self) -> usize {
        self.backlog
    }

    fn frames_in_flight(&self) -> usize {
        self.backlog + self.net_in.len()
    }
}

/// The ARP reply of the client's host to `frame`, if it is an ARP request for the client's address.
pub fn arp_reply(frame: &[u8]) -> Option<Vec<u8>> {
    let is_request = frame.len() >= 42
        && frame[12..14] == [0x08, 0x06]
        && frame[14..22] == [0, 1, 0x08, 0, 6, 4, 0, 1]
        && frame[38..42] == CLIENT_IP;
    if !is_request {
        return None;
    }
    let (sender_mac, sender_ip) = (&frame[22..28], &frame[28..32]);
    let mut r = Vec::with_capacity(42);
    r.extend_from_slice(sender_mac);
    r.extend_from_slice(&CLIENT_MAC);
    r.extend_from_slice(&[0x08, 0x06, 0, 1, 0x08, 0, 6, 4, 0, 2]);
    r.extend_from_slice(&CLIENT_MAC);
    r.extend_from_slice(&CLIENT_IP);
    r.extend_from_slice(sender_mac);
    r.extend_from_slice(sender_ip);
    Some(r)
}

/// Is `frame` an IPv4 packet to the client?
fn to_client(frame: &[u8]) -> bool {
    frame.len() >= 34 && frame[12..14] == [0x08, 0x00] && frame[30..34] == CLIENT_IP
}

impl FsNet {
    /// The client of `system`, talking to the server whose arguments are `server_argv` (the command line's words
    /// after `-- mcd`) on `harts` instances.
    pub fn new(system: &kvsim_params::System, server_argv: &[String]) -> Result<FsNet, String> {
        let harts = system.harts as usize;
        let mut port = 11211u16;
        for a in server_argv {
            if let Some(v) = a.strip_prefix("port=") {
                port = v.parse().map_err(|_| format!("the server argument {a:?} is not a UDP port"))?;
            }
        }
        // One receive queue for every instance: the kernel steers each datagram to its socket.
        let mut cfg = ClientConfig::resolve(&system.client, server_argv, harts, port, vec![0; harts], vec![0])?;
        if cfg.offered_fps > 0.0 {
            // The client steps only while the guest runs: frames sent when each falls due would reach a guest
            // asleep in wfi only at its next timer tick, in bursts.
            cfg.schedule_ahead = true;
        }
        Ok(FsNet {
            client: Client::new(cfg),
            bits_per_s: system.full_system.link_rate * 1e9,
            to_guest_free: 0,
            to_client_free: 0,
            arp_replies: 0,
            other_frames: 0,
            up_at: None,
            link_up_delay: system.full_system.link_up_delay,
            measure_start: None,
        })
    }

    /// Take what the guest sent, answer ARP, give the client its responses (at their arrival) and let it send;
    /// nothing reaches the client before the guest's device is up.
    pub fn exchange(&mut self, m: &mut Machine) -> Result<ClientEvent, String> {
        let (posted, backlog) = match m.platform().net.as_ref() {
            Some(net) => (net.rx_posted(), net.backlog.len()),
            None => return Err("the ghost client needs the machine's network device".into()),
        };
        let mut responses = Vec::new();
        let mut last = None;
        for (t, frame) in std::mem::take(&mut m.net_out) {
            let start = t.max(self.to_client_free);
            let at = start + wire_ps(frame.len(), self.bits_per_s);
            self.to_client_free = at;
            last = Some(at);
            if let Some(reply) = arp_reply(&frame) {
                self.arp_replies += 1;
                let mut wire = self.wire(m, posted, backlog);
                wire.send(reply, at);
            } else if to_client(&frame) {
                responses.push((0, frame, at));
            } else {
                self.other_frames += 1;
            }
        }
        if !posted {
            return Ok(ClientEvent::Nothing);
        }
        let now = m.time_ps();
        // The driver posts its receive buffers before the kernel has finished bringing the interface up (before
        // its address is routable): the link comes up a little later, as a real one does after its driver
        // enables it.
        if now < *self.up_at.get_or_insert(now) + self.link_up_delay {
            return Ok(ClientEvent::Nothing);
        }
        let now = last.unwrap_or(now);
        let total = m.total_insts();
        let (bits_per_s, mut free) = (self.bits_per_s, self.to_guest_free);
        let mut wire = Wire { net_in: &mut m.net_in, free: &mut free, bits_per_s, posted, backlog };
        let mut event = self.client.step(&mut wire, responses, Vec::new(), total, Some(now))?;
        self.to_guest_free = free;
        if event == ClientEvent::Nothing && self.client.open_loop_all_sent() && guest_idle(m) {
            // Open loop, everything sent: the kernel drops a datagram that finds the device's ring or its socket's
            // buffer full, and no device reports it; a guest with nothing to run and nothing left to take in
            // will answer no more of them.
            event = self.client.give_up_when_server_idle();
        }
        if event == ClientEvent::MeasureStart {
            self.client.reset_stats();
            self.measure_start = Some((now, total));
        }
        Ok(event)
    }

    /// The state a checkpoint keeps, with the client's per-item versions and (dense) per-bucket counts; refused
    /// while the client has frames in flight (it is taken when the bulk load is over).
    pub fn save(&self) -> Result<SavedNet<'_>, String> {
        let (client, acked, dense) = self.client.save()?;
        let st = FsNetState {
            client,
            to_guest_free: self.to_guest_free,
            to_client_free: self.to_client_free,
            arp_replies: self.arp_replies,
            other_frames: self.other_frames,
            up_at: self.up_at,
            measure_start: self.measure_start,
        };
        Ok((st, acked, dense))
    }

    /// Take a checkpoint's state (this client was built from the restored run's configuration).
    pub fn restore(
        &mut self,
        st: FsNetState,
        acked: kvsim_client::store_model::Versions,
        dense: Option<Vec<u8>>,
    ) -> Result<(), String> {
        self.client.restore(st.client, acked, dense)?;
        (self.to_guest_free, self.to_client_free, self.arp_replies, self.other_frames) =
            (st.to_guest_free, st.to_client_free, st.arp_replies, st.other_frames);
        (self.up_at, self.measure_start) = (st.up_at, st.measure_start);
        Ok(())
    }

    fn wire<'a>(&'a mut self, m: &'a mut Machine, posted: bool, backlog: usize) -> Wire<'a> {
        Wire { net_in: &mut m.net_in, free: &mut self.to_guest_free, bits_per_s: self.bits_per_s, posted, backlog }
    }
}

/// The guest can answer nothing more until something arrives: it is idle (`Machine::idle`: every hart asleep in
/// wfi, the kernel's idle loop with no runnable thread and no pending softirq, and no interrupt raised), no frame is
/// on the wire toward it and the device holds none waiting for receive buffers. (Its timer ticks still wake it,
/// but a UDP datagram's answer needs the datagram, which is in no queue.)
fn guest_idle(m: &mut Machine) -> bool {
    let quiet_device = m.platform().net.as_ref().is_some_and(|n| n.backlog.is_empty());
    quiet_device && m.net_in.is_empty() && m.net_out.is_empty() && m.idle()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_frame_takes_its_bytes_and_the_phy_overhead_at_the_link_rate_and_short_ones_are_padded() {
        // 100 bytes + 24 at 10 Gb/s: 992 bits, 99.2 ns.
        assert_eq!(wire_ps(100, 10e9), 99_200);
        assert_eq!(wire_ps(42, 10e9), wire_ps(60, 10e9), "an ARP reply is padded to the minimum frame");
        let (mut q, mut free) = (VecDeque::new(), 0u64);
        let mut w = Wire { net_in: &mut q, free: &mut free, bits_per_s: 10e9, posted: true, backlog: 0 };
        assert_eq!(w.send(vec![0; 100], 1_000), 1_000);
        assert_eq!(w.send(vec![0; 100], 1_000), 100_200, "the second waits for the first");
        assert_eq!(q.iter().map(|f| f.0).collect::<Vec<_>>(), [100_200, 199_400]);
    }

    #[test]
    fn the_clients_host_answers_arp_for_its_address_only() {
        let mut req = vec![0xff; 6];
        req.extend_from_slice(&[2, 0, 0, 0, 0, 2, 0x08, 0x06, 0, 1, 0x08, 0, 6, 4, 0, 1]);
        req.extend_from_slice(&[2, 0, 0, 0, 0, 2, 10, 0, 0, 2]);
        req.extend_from_slice(&[0; 6]);
        req.extend_from_slice(&CLIENT_IP);
        let r = arp_reply(&req).expect("a request for 10.0.0.1 is answered");
        assert_eq!(&r[0..6], &[2, 0, 0, 0, 0, 2], "to the asker");
        assert_eq!(&r[20..22], &[0, 2], "an ARP reply");
        assert_eq!(&r[22..32], &[2, 0, 0, 0, 0, 1, 10, 0, 0, 1], "the client's MAC has the client's IP");
        assert_eq!(&r[32..42], &[2, 0, 0, 0, 0, 2, 10, 0, 0, 2]);
        let mut other = req.clone();
        other[41] = 7;
        assert_eq!(arp_reply(&other), None, "10.0.0.7 is nobody's here");
    }
}
