//! What the client reports: its counters (kept in checkpoints) and the `client.*` statistics.

use super::*;

#[derive(Debug, Clone, Default, serde::Serialize, serde::Deserialize)]
pub struct ClientStats {
    pub requests: u64,
    pub gets: u64,
    pub puts: u64,
    pub hits: u64,
    pub misses: u64,
    pub packets: u64,
    pub responses_checked: u64,
    pub load_requests: u64,
    pub load_packets: u64,
    pub load_insts: u64,
    pub fuzz_sent: u64,
    pub fuzz_nic_dropped: u64,
    pub fuzz_answered: u64,
    pub fuzz_malformed_responses: u64,
    pub fuzz_results: [u64; 16],
    /// Measured frames (and their requests) the NIC dropped (detailed timing).
    pub lost_packets: u64,
    pub lost_requests: u64,
    /// Measured DELETEs answered (memcached).
    #[serde(default)]
    pub deletes: u64,
}

/// The TCP transport's counters (the whole run: handshakes, load and measured phase).
#[derive(Debug, Clone, Default)]
pub struct TcpStats {
    pub handshakes: u64,
    pub segments_sent: u64,
    pub segments_received: u64,
    pub bare_acks: u64,
}

impl Client {
    /// Start of the measured phase: forget request counts so far.
    pub fn reset_stats(&mut self) {
        let s = &mut self.stats;
        (s.requests, s.gets, s.puts, s.hits, s.misses, s.packets) = (0, 0, 0, 0, 0, 0);
        (s.lost_packets, s.lost_requests, s.deletes) = (0, 0, 0);
        self.latencies.clear();
        self.first_send = None;
        self.last_recv = 0;
        self.per_core.iter_mut().for_each(|x| *x = 0);
        self.per_partition.iter_mut().for_each(|x| *x = 0);
    }

    /// (name, value, description) statistics under `client`.
    pub fn stats(&self) -> Vec<(String, f64, &'static str)> {
        let s = &self.stats;
        let mut out: Vec<(String, f64, &'static str)> = vec![
            ("client.items".into(), self.cfg.items as f64, "items in the data set"),
            ("client.key_size".into(), self.cfg.key_len as f64, "key bytes"),
            ("client.value_size".into(), self.cfg.val_len as f64, "value bytes"),
            ("client.requests".into(), s.requests as f64, "measured requests answered"),
            ("client.gets".into(), s.gets as f64, "measured GETs answered"),
            ("client.puts".into(), s.puts as f64, "measured PUTs answered"),
            ("client.hits".into(), s.hits as f64, "measured GETs that returned the right value"),
            ("client.misses".into(), s.misses as f64, "measured GETs answered NOT_FOUND where eviction explains it"),
            ("client.packets".into(), s.packets as f64, "measured request frames sent"),
            (
                "client.responses_checked".into(),
                s.responses_checked as f64,
                "request responses checked (load and measured)",
            ),
            ("client.load.requests".into(), s.load_requests as f64, "bulk-load PUTs"),
            ("client.load.packets".into(), s.load_packets as f64, "bulk-load frames"),
            ("client.load.insts".into(), s.load_insts as f64, "instructions (all harts) during the bulk load"),
        ];
        if self.cfg.mcd.is_some() {
            out.push(("client.deletes".into(), s.deletes as f64, "measured DELETEs answered (memcached)"));
        }
        if self.cfg.tcp.is_some() {
            let t = &self.tcp_stats;
            out.push(("client.tcp.connections".into(), self.tcp.len() as f64, "TCP connections (all instances)"));
            out.push(("client.tcp.handshakes".into(), t.handshakes as f64, "TCP handshakes completed"));
            out.push((
                "client.tcp.segments_sent".into(),
                t.segments_sent as f64,
                "TCP segments the client sent (whole run: SYNs, data, ACKs)",
            ));
            out.push((
                "client.tcp.segments_received".into(),
                t.segments_received as f64,
                "TCP segments from the server, each checked (whole run)",
            ));
            out.push(("client.tcp.bare_acks".into(), t.bare_acks as f64, "ACKs the client sent without data"));
        }
        out.push((
            "client.lost_packets".into(),
            s.lost_packets as f64,
            "measured frames the NIC dropped (detailed timing: RX FIFO overflow)",
        ));
        out.push((
            "client.lost_requests".into(),
            s.lost_requests as f64,
            "measured requests in frames the NIC dropped",
        ));
        let sent = s.packets as f64;
        out.push((
            "client.loss".into(),
            if sent > 0.0 { s.lost_packets as f64 / sent } else { 0.0 },
            "fraction of measured frames lost (dropped by the NIC)",
        ));
        if self.send_at.is_some() || !self.latencies.is_empty() {
            out.push((
                "client.offered_mpps".into(),
                self.cfg.offered_fps * self.cfg.ports as f64 * 1e-6,
                "open-loop offered load, all ports (M frames/s; 0 = closed loop)",
            ));
            let span = self.first_send.map_or(0, |f| self.last_recv.saturating_sub(f));
            out.push((
                "client.measured_ns".into(),
                span as f64 * 1e-3,
                "time from the first measured send to the last response (ns)",
            ));
            let mrps = if span > 0 { s.requests as f64 / (span as f64 * 1e-12) * 1e-6 } else { 0.0 };
            out.push((
                "client.throughput_mrps".into(),
                mrps,
                "measured requests answered per second over that time (millions)",
            ));
            let mut lat = self.latencies.clone();
            lat.sort_unstable();
            let mean = if lat.is_empty() { 0.0 } else { lat.iter().sum::<u64>() as f64 / lat.len() as f64 };
            let pct = |p: f64| -> f64 {
                if lat.is_empty() {
                    return 0.0;
                }
                let i = ((p * lat.len() as f64).ceil() as usize).clamp(1, lat.len()) - 1;
                lat[i] as f64
            };
            out.push((
                "client.latency.samples".into(),
                lat.len() as f64,
                "round-trip latencies recorded (measured requests answered in detailed timing)",
            ));
            out.push((
                "client.latency.mean".into(),
                mean * 1e-3,
                "mean round-trip latency: client send to client receive (ns)",
            ));
            for (name, p, desc) in [
                ("p50", 0.5, "median round-trip latency (ns)"),
                ("p95", 0.95, "95th percentile round-trip latency (ns)"),
                ("p99", 0.99, "99th percentile round-trip latency (ns)"),
                ("p999", 0.999, "99.9th percentile round-trip latency (ns)"),
            ] {
                out.push((format!("client.latency.{name}"), pct(p) * 1e-3, desc));
            }
        }
        let per_put = if s.load_requests > 0 { s.load_insts as f64 / s.load_requests as f64 } else { 0.0 };
        out.push(("client.load.insts_per_put".into(), per_put, "bulk-load instructions per PUT (frames packed full)"));
        if self.cfg.fuzz_frames > 0 {
            out.push(("client.fuzz.sent".into(), s.fuzz_sent as f64, "fuzz frames sent"));
            out.push((
                "client.fuzz.nic_dropped".into(),
                s.fuzz_nic_dropped as f64,
                "fuzz frames the NIC dropped (no steering match, FIFO full)",
            ));
            out.push(("client.fuzz.answered".into(), s.fuzz_answered as f64, "fuzz frames the server answered"));
            let server_dropped = s.fuzz_sent.saturating_sub(s.fuzz_nic_dropped + s.fuzz_answered);
            out.push(("client.fuzz.server_dropped".into(), server_dropped as f64, "fuzz frames that reached a queue but got no response (dropped by the server or too long for the buffer)"));
            out.push((
                "client.fuzz.malformed_responses".into(),
                s.fuzz_malformed_responses as f64,
                "responses to fuzz frames that are not well formed",
            ));
            for (r, &n) in s.fuzz_results.iter().enumerate().filter(|(_, &n)| n > 0) {
                let _ = n;
                out.push((
                    format!("client.fuzz.result{r}"),
                    s.fuzz_results[r] as f64,
                    "fuzz request entries answered with this result code",
                ));
            }
        }
        for (c, &n) in self.per_core.iter().enumerate() {
            out.push((format!("client.core{c}.requests"), n as f64, "measured requests sent to this core's queue"));
        }
        for (p, &n) in self.per_partition.iter().enumerate() {
            out.push((
                format!("client.partition{p}.requests"),
                n as f64,
                "measured requests for keys of this partition",
            ));
        }
        out
    }
}
