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
        use kvsim_params::paths;
        let (client, load, latency) = (paths::client(), paths::client_load(), paths::client_latency());
        let (tcp, fuzz) = (paths::client_tcp(), paths::client_fuzz());
        let s = &self.stats;
        let mut out: Vec<(String, f64, &'static str)> = vec![
            (format!("{client}items"), self.cfg.items as f64, "items in the data set"),
            (format!("{client}key_size"), self.cfg.key_len as f64, "key bytes"),
            (format!("{client}value_size"), self.cfg.val_len as f64, "value bytes"),
            (format!("{client}requests"), s.requests as f64, "measured requests answered"),
            (format!("{client}gets"), s.gets as f64, "measured GETs answered"),
            (format!("{client}puts"), s.puts as f64, "measured PUTs answered"),
            (format!("{client}hits"), s.hits as f64, "measured GETs that returned the right value"),
            (format!("{client}misses"), s.misses as f64, "measured GETs answered NOT_FOUND where eviction explains it"),
            (format!("{client}packets"), s.packets as f64, "measured request frames sent"),
            (
                format!("{client}responses_checked"),
                s.responses_checked as f64,
                "request responses checked (load and measured)",
            ),
            (format!("{load}requests"), s.load_requests as f64, "bulk-load PUTs"),
            (format!("{load}packets"), s.load_packets as f64, "bulk-load frames"),
            (format!("{load}insts"), s.load_insts as f64, "instructions (all harts) during the bulk load"),
        ];
        if self.cfg.mcd.is_some() {
            out.push((format!("{client}deletes"), s.deletes as f64, "measured DELETEs answered (memcached)"));
        }
        if self.cfg.tcp.is_some() {
            let t = &self.tcp_stats;
            out.push((format!("{tcp}connections"), self.tcp.len() as f64, "TCP connections (all instances)"));
            out.push((format!("{tcp}handshakes"), t.handshakes as f64, "TCP handshakes completed"));
            out.push((
                format!("{tcp}segments_sent"),
                t.segments_sent as f64,
                "TCP segments the client sent (whole run: SYNs, data, ACKs)",
            ));
            out.push((
                format!("{tcp}segments_received"),
                t.segments_received as f64,
                "TCP segments from the server, each checked (whole run)",
            ));
            out.push((format!("{tcp}bare_acks"), t.bare_acks as f64, "ACKs the client sent without data"));
        }
        out.push((
            format!("{client}lost_packets"),
            s.lost_packets as f64,
            "measured frames the NIC dropped (detailed timing: RX FIFO overflow)",
        ));
        out.push((
            format!("{client}lost_requests"),
            s.lost_requests as f64,
            "measured requests in frames the NIC dropped",
        ));
        let sent = s.packets as f64;
        out.push((
            format!("{client}loss"),
            if sent > 0.0 { s.lost_packets as f64 / sent } else { 0.0 },
            "fraction of measured frames lost (dropped by the NIC)",
        ));
        if self.send_at.is_some() || !self.latencies.is_empty() {
            out.push((
                format!("{client}offered_mpps"),
                self.cfg.offered_fps * self.cfg.ports as f64 * 1e-6,
                "open-loop offered load, all ports (M frames/s; 0 = closed loop)",
            ));
            let span = self.first_send.map_or(0, |f| self.last_recv.saturating_sub(f));
            out.push((
                format!("{client}measured_ns"),
                span as f64 * 1e-3,
                "time from the first measured send to the last response (ns)",
            ));
            let mrps = if span > 0 { s.requests as f64 / (span as f64 * 1e-12) * 1e-6 } else { 0.0 };
            out.push((
                format!("{client}throughput_mrps"),
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
                format!("{latency}samples"),
                lat.len() as f64,
                "round-trip latencies recorded (measured requests answered in detailed timing)",
            ));
            out.push((
                format!("{latency}mean"),
                mean * 1e-3,
                "mean round-trip latency: client send to client receive (ns)",
            ));
            for (name, p, desc) in [
                ("p50", 0.5, "median round-trip latency (ns)"),
                ("p95", 0.95, "95th percentile round-trip latency (ns)"),
                ("p99", 0.99, "99th percentile round-trip latency (ns)"),
                ("p999", 0.999, "99.9th percentile round-trip latency (ns)"),
            ] {
                out.push((format!("{latency}{name}"), pct(p) * 1e-3, desc));
            }
        }
        let per_put = if s.load_requests > 0 { s.load_insts as f64 / s.load_requests as f64 } else { 0.0 };
        out.push((format!("{load}insts_per_put"), per_put, "bulk-load instructions per PUT (frames packed full)"));
        if self.cfg.fuzz_frames > 0 {
            out.push((format!("{fuzz}sent"), s.fuzz_sent as f64, "fuzz frames sent"));
            out.push((
                format!("{fuzz}nic_dropped"),
                s.fuzz_nic_dropped as f64,
                "fuzz frames the NIC dropped (no steering match, FIFO full)",
            ));
            out.push((format!("{fuzz}answered"), s.fuzz_answered as f64, "fuzz frames the server answered"));
            let server_dropped = s.fuzz_sent.saturating_sub(s.fuzz_nic_dropped + s.fuzz_answered);
            out.push((format!("{fuzz}server_dropped"), server_dropped as f64, "fuzz frames that reached a queue but got no response (dropped by the server or too long for the buffer)"));
            out.push((
                format!("{fuzz}malformed_responses"),
                s.fuzz_malformed_responses as f64,
                "responses to fuzz frames that are not well formed",
            ));
            for (r, &n) in s.fuzz_results.iter().enumerate().filter(|(_, &n)| n > 0) {
                let _ = n;
                out.push((
                    format!("{fuzz}result{r}"),
                    s.fuzz_results[r] as f64,
                    "fuzz request entries answered with this result code",
                ));
            }
        }
        for (c, &n) in self.per_core.iter().enumerate() {
            out.push((paths::client_core(c) + "requests", n as f64, "measured requests sent to this core's queue"));
        }
        for (p, &n) in self.per_partition.iter().enumerate() {
            out.push((
                paths::client_partition(p) + "requests",
                n as f64,
                "measured requests for keys of this partition",
            ));
        }
        out
    }
}
