//! The client on the wire: generating requests, packing them into frames, sending them within each queue's
//! window, fuzz frames, and checking every response against the model of the store.

use super::*;

impl Client {
    /// Add a request for core `core` to its packet under construction; a full packet moves to the ready queue.
    pub(super) fn add(&mut self, core: usize, req: Req, load: bool) {
        let put = req.op == OP_PUT;
        let (req_bytes, resp_bytes) = match self.cfg.mcd {
            Some(_) => memcached::sizes(req.op, self.cfg.key_len, self.cfg.val_len),
            None => (
                DESC + pad8(self.cfg.key_len) + if put { pad8(self.cfg.val_len) } else { 0 },
                DESC + if put { 0 } else { pad8(self.cfg.val_len) },
            ),
        };
        let limit = if load { MAX_BATCH } else { self.cfg.requests_per_packet };
        let hdr = self.header_len();
        let b = &mut self.builders[core];
        if !b.reqs.is_empty() && (b.frame_len + req_bytes > MAX_FRAME || b.resp_len + resp_bytes > MAX_FRAME) {
            let full = std::mem::replace(b, Pkt::new(load, hdr));
            self.ready.push_back(core, full);
        }
        let b = &mut self.builders[core];
        b.load = load;
        b.reqs.push(req);
        b.frame_len += req_bytes;
        b.resp_len += resp_bytes;
        if b.reqs.len() >= limit {
            let full = std::mem::replace(b, Pkt::new(load, hdr));
            self.ready.push_back(core, full);
        }
    }

    pub(super) fn flush_builders(&mut self) {
        let hdr = self.header_len();
        for c in 0..self.cfg.cores {
            if !self.builders[c].reqs.is_empty() {
                let p = std::mem::replace(&mut self.builders[c], Pkt::new(false, hdr));
                self.ready.push_back(c, p);
            }
        }
    }

    /// A PUT of `item` at its next version (bookkeeping for the miss bound included).
    pub(super) fn put_req(&mut self, item: u64) -> (usize, Req) {
        let key = key_of(item, self.cfg.key_len);
        let kh = keyhash(&key);
        let p = self.partition(kh);
        let ver = self.store.next_version(item);
        if ver == 1 {
            self.store.add_bucket_key(p, bucket_of(kh, self.cfg.buckets));
        }
        self.part_log[p] += 2 * self.item_size(true);
        (p, Req { item, op: OP_PUT, ver, keyhash: kh, mark: self.part_log[p] })
    }

    pub(super) fn get_req(&mut self, item: u64) -> (usize, Req) {
        let kh = keyhash(&key_of(item, self.cfg.key_len));
        let (ver, mark) = (self.store.acked(item), self.store.ack_mark(item));
        (self.partition(kh), Req { item, op: OP_GET, ver, keyhash: kh, mark })
    }

    /// The bound right after the bulk load's PUT of `item` (partition `p`), recomputed (store_model.rs).
    pub(super) fn load_mark(&self, item: u64, p: usize) -> u64 {
        let key_len = self.cfg.key_len;
        let cores = self.cfg.cores;
        self.store.load_mark(item, p, cores, 2 * self.item_size(true), |j| {
            partition_of(keyhash(&key_of(j, key_len)), cores as u64) as usize
        })
    }

    pub(super) fn build_frame(&self, core: usize, opaque: u32, pkt: &Pkt) -> Vec<u8> {
        let mut f = Vec::with_capacity(pkt.frame_len);
        let mut payload = Vec::with_capacity(pkt.frame_len);
        for r in &pkt.reqs {
            let put = r.op == OP_PUT;
            let vlen = if put { self.cfg.val_len } else { 0 };
            payload.push(r.op);
            payload.push(0);
            payload.extend_from_slice(&[0, 0]);
            payload.extend_from_slice(&(((self.cfg.key_len as u32) << 24) | vlen as u32).to_le_bytes());
            payload.extend_from_slice(&r.keyhash.to_le_bytes());
            payload.extend_from_slice(&[0; 8]); // expire, reserved
            let mut key = key_of(r.item, self.cfg.key_len);
            key.resize(pad8(key.len()), 0);
            payload.extend_from_slice(&key);
            if put {
                let mut v = value_of(r.item, r.ver, vlen);
                v.resize(pad8(vlen), 0);
                payload.extend_from_slice(&v);
            }
        }
        push_headers(&mut f, self.cfg.base_port.wrapping_add(core as u16), pkt.reqs.len() as u8, opaque, payload.len());
        f.extend_from_slice(&payload);
        f
    }

    pub(super) fn send(&mut self, nics: &mut dyn NicPort, core: usize, pkt: Pkt) {
        let opaque = self.next_opaque;
        self.next_opaque += 1;
        if self.cfg.tcp.is_some() {
            return self.send_tcp(nics, core, opaque, pkt);
        }
        let frame = match self.cfg.mcd {
            Some(_) => self.build_mcd_frame(core, opaque, &pkt),
            None => self.build_frame(core, opaque, &pkt),
        };
        let q = self.cfg.core_queue[core];
        self.count_sent(core, &pkt);
        let mut pkt = pkt;
        match self.send_at {
            // Detailed timing: onto the port's wire at this time; frames the NIC drops come back (`step`).
            // The latency counts from the frame's start on the wire (a sender offered more than line rate queues
            // on its side first; that wait is not the server's).
            Some(t) => {
                if !pkt.load {
                    self.first_send.get_or_insert(t);
                }
                pkt.sent_ps = nics.wire_send(self.cfg.queue_port[q], frame, t);
            }
            // A frame the NIC drops is never answered: the stall check reports it.
            None => {
                nics.receive(self.cfg.queue_port[q], frame);
            }
        }
        self.out_per_core[core] += 1;
        self.outstanding.insert(opaque, (core, pkt));
    }

    /// Count a frame about to leave: a load frame, or a measured one with its requests per core and partition.
    fn count_sent(&mut self, core: usize, pkt: &Pkt) {
        if pkt.load {
            self.stats.load_packets += 1;
        } else {
            self.stats.packets += 1;
            for r in &pkt.reqs {
                self.per_core[core] += 1;
                let p = self.partition(r.keyhash);
                self.per_partition[p] += 1;
            }
        }
    }

    /// A frame of requests over TCP: counted as a frame, outstanding, its requests written to a connection of
    /// the instance (`tcp.rs` sends them within the server's window).
    pub(super) fn send_tcp<W: tcp::Wire + ?Sized>(&mut self, nics: &mut W, core: usize, opaque: u32, pkt: Pkt) {
        self.count_sent(core, &pkt);
        let payload = self.mcd_payload(opaque, &pkt);
        self.out_per_core[core] += 1;
        self.outstanding.insert(opaque, (core, pkt));
        self.tcp_write(nics, core, opaque, &payload[crate::memcached_binary::UDP_FRAME_HDR_LEN..]);
    }

    /// Send core `c`'s ready packets while its window allows. True if one is still blocked.
    pub(super) fn send_core(&mut self, nics: &mut dyn NicPort, c: usize) -> bool {
        let window = if self.open_loop { u64::MAX } else { self.cfg.window };
        while self.out_per_core[c] < window {
            match self.ready.pop_front(c) {
                Some(p) => self.send(nics, c, p),
                None => break,
            }
        }
        !self.ready.is_empty(c)
    }

    /// Send ready packets while windows allow. True if some ready packet is still blocked.
    pub(super) fn send_ready(&mut self, nics: &mut dyn NicPort) -> bool {
        // The cores in order, as a scan of every core would visit them: one with nothing ready sends nothing and
        // is not blocked (`send_core` would return false), so only those with packets ready are visited.
        let mut blocked = false;
        let mut next = 0;
        while let Some(c) = self.ready.next_nonempty(next) {
            blocked |= self.send_core(nics, c);
            next = c + 1;
        }
        blocked
    }

    pub(super) fn generate_measured(&mut self) -> (usize, Req) {
        let item = match &self.zipf {
            Some(z) => {
                let mut s = self.rng;
                let k = z.sample(|| unit(splitmix64(&mut s)));
                self.rng = s;
                k - 1
            }
            None => self.rand() % self.cfg.items,
        };
        let u = unit(self.rand());
        let get = u < self.cfg.get_ratio;
        if !get && self.cfg.mcd.is_some() && u >= 1.0 - self.cfg.delete_ratio {
            return self.delete_req(item);
        }
        if get {
            let (p, r) = self.get_req(item);
            let core = if self.cfg.crew {
                self.rr = (self.rr + 1) % self.cfg.cores;
                self.rr
            } else {
                p
            };
            if core == p {
                self.part_log[p] += 2 * self.item_size(true); // the owner may re-append it (LRU)
            }
            (core, r)
        } else {
            self.put_req(item)
        }
    }

    // ------------------------------------------------------------------ fuzz frames

    pub(super) fn fuzz_frame(&mut self) -> (usize, Vec<u8>) {
        let mut core = (self.rand() % self.cfg.cores as u64) as usize;
        let to_owner = !self.rand().is_multiple_of(4); // mostly to the first key's partition, so requests reach the store
        let n = 1 + (self.rand() % 4) as usize;
        let mut payload = Vec::new();
        for _ in 0..n {
            let r = self.rand();
            let op = match r % 8 {
                0..=2 => OP_GET,
                3..=5 => OP_PUT,
                6 => OP_DELETE,
                _ => (self.rand() % 256) as u8,
            };
            let klen = match self.rand() % 8 {
                0 => 0,
                1 => 255,
                _ => 1 + (self.rand() % 40) as usize,
            };
            let vlen = if op == OP_PUT || self.rand().is_multiple_of(8) {
                match self.rand() % 6 {
                    0 => 1000 + (self.rand() % 600) as usize, // may not fit: truncated or oversized
                    1 => 0,
                    _ => (self.rand() % 200) as usize,
                }
            } else {
                0
            };
            // Keys of fuzz frames start with 0xff 0xfe...: never a data set key (items are < 2^32).
            let mut key: Vec<u8> = (0..klen).map(|_| self.rand() as u8).collect();
            if klen >= 8 {
                key[6] = 0xfe;
                key[7] = 0xff;
            }
            let kh = if self.rand().is_multiple_of(8) { self.rand() } else { keyhash(&key) };
            if to_owner && payload.is_empty() {
                core = self.partition(kh);
            }
            payload.push(op);
            payload.push(0);
            payload.extend_from_slice(&[0, 0]);
            payload.extend_from_slice(&(((klen as u32) << 24) | vlen as u32).to_le_bytes());
            payload.extend_from_slice(&kh.to_le_bytes());
            payload.extend_from_slice(&[0; 8]);
            key.resize(pad8(klen), 0);
            payload.extend_from_slice(&key);
            payload.extend((0..pad8(vlen)).map(|_| self.rand() as u8));
        }
        let opaque = FUZZ_OPAQUE | (self.stats.fuzz_sent as u32 & 0x7fff_ffff);
        let mut f = Vec::new();
        push_headers(&mut f, self.cfg.base_port.wrapping_add(core as u16), n as u8, opaque, payload.len());
        f.extend_from_slice(&payload);
        f.truncate(MAX_FRAME);
        match self.rand() % 10 {
            0..=2 => {}
            3..=5 => {
                for _ in 0..1 + self.rand() % 4 {
                    let at = (self.rand() % f.len() as u64) as usize;
                    f[at] ^= 1 << (self.rand() % 8);
                }
            }
            6 | 7 => {
                let len = (self.rand() % f.len() as u64) as usize;
                f.truncate(len.max(1));
            }
            8 => f[42] = (self.rand() % 256) as u8,
            _ => {
                let extra = (self.rand() % 64) as usize;
                f.extend((0..extra).map(|_| self.rand() as u8));
                f.truncate(MAX_FRAME);
            }
        }
        (core, f)
    }

    pub(super) fn check_fuzz_response(&mut self, frame: &[u8]) {
        self.stats.fuzz_answered += 1;
        let Some(end) = ip_end(frame) else {
            self.stats.fuzz_malformed_responses += 1;
            return;
        };
        let count = frame[42] as usize;
        if count == 0 || count > MAX_BATCH || !ipv4_checksum_ok(frame) {
            self.stats.fuzz_malformed_responses += 1;
            return;
        }
        let mut off = PAYLOAD_OFF;
        for _ in 0..count {
            if off + DESC > end {
                self.stats.fuzz_malformed_responses += 1;
                return;
            }
            let d = &frame[off..off + DESC];
            let (op, res) = (d[0], d[1]);
            let vlen = (u32::from_le_bytes(d[4..8].try_into().unwrap()) & 0xff_ffff) as usize;
            let kh = u64::from_le_bytes(d[8..16].try_into().unwrap());
            if !(1..=8).contains(&res) || (vlen != 0 && !(op == OP_GET && res == RES_OK)) {
                self.stats.fuzz_malformed_responses += 1;
                return;
            }
            self.stats.fuzz_results[res as usize] += 1;
            if op == OP_PUT && res == RES_OK {
                // A stored fuzz item takes a bucket entry too.
                let p = self.partition(kh);
                self.store.add_bucket_key(p, bucket_of(kh, self.cfg.buckets));
            }
            off += DESC + if op == OP_GET && res == RES_OK { pad8(vlen) } else { 0 };
        }
        if off != end {
            self.stats.fuzz_malformed_responses += 1;
        }
    }

    // ------------------------------------------------------------------ checking responses

    /// The frame `opaque` a response on `queue` answers, taken off the outstanding ones, its latency recorded; it
    /// must have come back on the queue it was sent to.
    pub(super) fn settle(&mut self, queue: usize, opaque: u32, at: u64) -> CResult<(usize, Pkt)> {
        let (core, pkt) = self
            .outstanding
            .remove(&opaque)
            .ok_or_else(|| format!("a response on queue {queue} answers a request never sent (opaque {opaque:#x})"))?;
        self.out_per_core[core] -= 1;
        self.idle_rounds = 0;
        if !pkt.load && self.send_at.is_some() && at >= pkt.sent_ps {
            for _ in &pkt.reqs {
                self.latencies.push(at - pkt.sent_ps);
            }
            self.last_recv = self.last_recv.max(at);
        }
        let want_q = self.cfg.core_queue[core];
        if queue != want_q {
            return Err(format!(
                "the response to frame {opaque:#x} came from queue {queue}, not queue {want_q} it was sent to"
            ));
        }
        Ok((core, pkt))
    }

    pub(super) fn check_response(&mut self, queue: usize, frame: &[u8], at: u64) -> CResult<()> {
        if self.cfg.mcd.is_some() {
            return self.check_mcd_response(queue, frame, at);
        }
        let end =
            ip_end(frame).ok_or_else(|| format!("a response on queue {queue} is not a well-formed IPv4/UDP frame"))?;
        let opaque = u32::from_le_bytes(frame[44..48].try_into().unwrap());
        let (core, pkt) = self.settle(queue, opaque, at)?;
        let sport = u16::from_be_bytes([frame[34], frame[35]]);
        let dport = u16::from_be_bytes([frame[36], frame[37]]);
        if sport != self.cfg.base_port.wrapping_add(core as u16) || dport != CLIENT_UDP_PORT || !ipv4_checksum_ok(frame)
        {
            return Err(format!("the response to frame {opaque:#x} has wrong UDP ports ({sport:#x} -> {dport:#x}) or a bad IPv4 checksum"));
        }
        if frame[42] as usize != pkt.reqs.len() {
            return Err(format!(
                "the response to frame {opaque:#x} has {} requests, the frame had {}",
                frame[42],
                pkt.reqs.len()
            ));
        }
        let mut off = PAYLOAD_OFF;
        for (i, r) in pkt.reqs.iter().enumerate() {
            let what = |msg: String| format!("frame {opaque:#x} request {i} (item {}, op {}): {msg}", r.item, r.op);
            if off + DESC > end {
                return Err(what("the response is truncated".into()));
            }
            let d = &frame[off..off + DESC];
            let kv = u32::from_le_bytes(d[4..8].try_into().unwrap());
            let kh = u64::from_le_bytes(d[8..16].try_into().unwrap());
            let (op, res, klen, vlen) = (d[0], d[1], (kv >> 24) as usize, (kv & 0xff_ffff) as usize);
            if op != r.op || kh != r.keyhash || klen != self.cfg.key_len {
                return Err(what(format!("echo mismatch: op {op}, keyhash {kh:#x}, key length {klen}")));
            }
            off += DESC;
            self.stats.responses_checked += 1;
            if r.op == OP_PUT {
                if res != RES_OK || vlen != 0 {
                    return Err(what(format!("PUT answered with result {res}, value length {vlen}")));
                }
                self.store.ack(r.item, r.ver, r.mark, pkt.load);
                if !pkt.load {
                    self.stats.puts += 1;
                }
            } else {
                self.stats.gets += 1;
                match res {
                    RES_OK => {
                        if off + pad8(vlen) > end || vlen != self.cfg.val_len {
                            return Err(what(format!("GET hit with value length {vlen}")));
                        }
                        let got = &frame[off..off + vlen];
                        let lo = r.ver.max(1);
                        let hi = self.store.sent(r.item);
                        if !(lo..=hi).any(|v| value_of(r.item, v, vlen) == got) {
                            return Err(what(format!("wrong value: it is none of versions {lo}..={hi}")));
                        }
                        off += pad8(vlen);
                        self.stats.hits += 1;
                    }
                    RES_NOT_FOUND => {
                        let p = self.partition(r.keyhash);
                        // The server drops an item once the tail is a log size past its start: appends after it
                        // plus its own size.
                        let mark = if r.mark == LOAD_MARK { self.load_mark(r.item, p) } else { r.mark };
                        let since = self.part_log[p].saturating_sub(mark) + 2 * self.item_size(true);
                        let crowded = self.store.bucket_keys(p, bucket_of(r.keyhash, self.cfg.buckets));
                        if r.ver != 0 && since < self.cfg.log_size && crowded < 16 {
                            return Err(what(format!(
                                "GET miss that no eviction explains (version {} acknowledged; at most {since} log bytes since its PUT, log {} bytes)",
                                r.ver, self.cfg.log_size
                            )));
                        }
                        self.store.seen_gone(r.item);
                        self.stats.misses += 1;
                    }
                    _ => return Err(what(format!("GET answered with result {res}"))),
                }
            }
            if !pkt.load {
                self.stats.requests += 1;
            }
        }
        if off != end {
            return Err(format!("the response to frame {opaque:#x} has {} bytes after its last entry", end - off));
        }
        Ok(())
    }
}

/// Ethernet + IPv4 + UDP headers of a frame whose UDP payload is `udp_payload` bytes, the UDP checksum left 0
/// (a protocol that checksums fills it in once the payload follows). MICA and memcached frames share them.
pub(super) fn push_udp_headers(f: &mut Vec<u8>, dport: u16, ip_id: u16, udp_payload: usize) {
    f.extend_from_slice(&[0x02, 0, 0, 0, 0, 0x02, 0x02, 0, 0, 0, 0, 0x01]);
    f.extend_from_slice(&0x0800u16.to_be_bytes());
    let udp_len = 8 + udp_payload;
    let mut ip = [0u8; 20];
    ip[0] = 0x45;
    ip[2..4].copy_from_slice(&((20 + udp_len) as u16).to_be_bytes());
    ip[4..6].copy_from_slice(&ip_id.to_be_bytes());
    ip[8] = 64;
    ip[9] = 17;
    ip[12..16].copy_from_slice(&[10, 0, 0, 1]);
    ip[16..20].copy_from_slice(&[10, 0, 0, 2]);
    let c = ipv4_checksum(&ip);
    ip[10..12].copy_from_slice(&c.to_be_bytes());
    f.extend_from_slice(&ip);
    f.extend_from_slice(&CLIENT_UDP_PORT.to_be_bytes());
    f.extend_from_slice(&dport.to_be_bytes());
    f.extend_from_slice(&(udp_len as u16).to_be_bytes());
    f.extend_from_slice(&[0, 0]);
}

/// Ethernet + IPv4 + UDP headers and the batch header, for a payload of `payload` bytes.
pub(super) fn push_headers(f: &mut Vec<u8>, dport: u16, count: u8, opaque: u32, payload: usize) {
    push_udp_headers(f, dport, opaque as u16, 6 + payload);
    f.push(count);
    f.push(0);
    f.extend_from_slice(&opaque.to_le_bytes());
}

/// The IPv4 header checksum of a 20-byte header (its checksum field taken as 0).
pub fn ipv4_checksum(ip: &[u8]) -> u16 {
    let mut sum = 0u32;
    for i in (0..20).step_by(2) {
        if i != 10 {
            sum += u16::from_be_bytes([ip[i], ip[i + 1]]) as u32;
        }
    }
    while sum > 0xffff {
        sum = (sum & 0xffff) + (sum >> 16);
    }
    !(sum as u16)
}

pub(super) fn ipv4_checksum_ok(frame: &[u8]) -> bool {
    u16::from_be_bytes([frame[24], frame[25]]) == ipv4_checksum(&frame[14..34])
}

/// End of the UDP payload of a well-formed IPv4/UDP KVS frame (consistent lengths), else None.
pub(super) fn ip_end(frame: &[u8]) -> Option<usize> {
    if frame.len() < PAYLOAD_OFF || frame[12..14] != [0x08, 0x00] || frame[14] != 0x45 || frame[23] != 17 {
        return None;
    }
    let total = u16::from_be_bytes([frame[16], frame[17]]) as usize;
    let udp = u16::from_be_bytes([frame[38], frame[39]]) as usize;
    (total == udp + 20 && 14 + total <= frame.len() && 14 + total >= PAYLOAD_OFF).then_some(14 + total)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    pub(super) fn keys_and_values_are_deterministic_and_distinct() {
        assert_eq!(key_of(0x0102, 8), vec![2, 1, 0, 0, 0, 0, 0, 0]);
        let k = key_of(5, 16);
        assert_eq!(k[8], 0x9du8.wrapping_mul(8) ^ 5);
        assert_ne!(value_of(1, 1, 8), value_of(1, 2, 8));
        assert_ne!(value_of(1, 1, 8), value_of(2, 1, 8));
        assert_eq!(value_of(7, 3, 1152).len(), 1152);
        assert_eq!(&value_of(7, 3, 1152)[..8], &value_of(7, 3, 8)[..]);
    }

    #[test]
    pub(super) fn frames_have_valid_headers() {
        let mut f = Vec::new();
        push_headers(&mut f, 0x4003, 2, 77, 64);
        f.extend_from_slice(&[0; 64]);
        assert_eq!(f.len(), 48 + 64);
        assert_eq!(ip_end(&f), Some(f.len()));
        assert!(ipv4_checksum_ok(&f));
        assert_eq!(kvsim_base::frame::udp_dst_port(&f), Some(0x4003));
        f[20] ^= 1;
        assert!(!ipv4_checksum_ok(&f));
    }
}
