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
    /// Measured frames (and their requests) the NIC dropped (detailed timing), or that FS mode's open loop gave up
    /// on once the guest fell idle (`Client::give_up_when_server_idle`).
    pub lost_packets: u64,
    pub lost_requests: u64,
    /// Measured DELETEs answered (memcached).
    #[serde(default)]
    pub deletes: u64,
}

/// The TCP transport's counters (the whole run: handshakes, load and measured phase).
#[derive(Debug, Clone, Default, serde::Serialize, serde::Deserialize)]
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
            "measured frames lost: the NIC dropped them (detailed timing: RX FIFO overflow), or in FS mode's open loop they went unanswered (the guest kernel dropped them)",
        ));
        out.push((format!("{client}lost_requests"), s.lost_requests as f64, "measured requests in the lost frames"));
        let sent = s.packets as f64;
        out.push((
            format!("{client}loss"),
            if sent > 0.0 { s.lost_packets as f64 / sent } else { 0.0 },
            "fraction of measured frames lost (client.lost_packets)",
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
            // The p95's interval (issue 28): the p95s of batches of the responses in the order they came back,
            // whose spread gives a batch-means interval (the caller takes t x sd / sqrt(batches)).
            let batch = batch_quantiles(&self.latencies, P95_BATCHES, 0.95);
            let n = batch.len() as f64;
            let mean = if batch.is_empty() { f64::NAN } else { batch.iter().sum::<f64>() / n };
            let sd = if batch.len() < 2 {
                f64::NAN
            } else {
                (batch.iter().map(|x| (x - mean) * (x - mean)).sum::<f64>() / (n - 1.0)).sqrt()
            };
            out.push((
                format!("{latency}p95_batches"),
                n,
                "batches of responses with a p95 each (0: fewer than 20 responses a batch)",
            ));
            out.push((format!("{latency}p95_batch_mean"), mean * 1e-3, "mean of the batches' p95s (ns)"));
            out.push((format!("{latency}p95_batch_sd"), sd * 1e-3, "standard deviation of the batches' p95s (ns)"));
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

/// Batches of the p95's interval: the same 30 as the throughput's batch means (drivers/steady_state.py BATCHES).
pub const P95_BATCHES: usize = 30;
/// Fewest responses a batch for its own p95 (assumed: the 19th of 20 is a p95; with fewer a batch's p95 is its
/// maximum, and the batches' spread no longer measures the p95's).
pub const MIN_PER_BATCH: usize = 20;

/// The `p` quantile of each of `batches` batches of `samples` (in the order they were recorded): the samples are
/// cut into `batches` + 2 stretches of equal counts and the first (start-up: queues filling from empty) and the
/// last (drain) are left out, as the throughput's batch means do. Empty when a batch would have fewer than
/// MIN_PER_BATCH samples.
pub fn batch_quantiles(samples: &[u64], batches: usize, p: f64) -> Vec<f64> {
    let n = samples.len();
    let stretches = batches + 2;
    if batches == 0 || n / stretches < MIN_PER_BATCH {
        return Vec::new();
    }
    let edge = |k: usize| k * n / stretches;
    (1..=batches)
        .map(|k| {
            let mut b = samples[edge(k)..edge(k + 1)].to_vec();
            b.sort_unstable();
            let i = ((p * b.len() as f64).ceil() as usize).clamp(1, b.len()) - 1;
            b[i] as f64
        })
        .collect()
}

#[cfg(test)]
mod batch_tests {
    use super::*;

    #[test]
    fn batches_leave_out_the_first_and_last_stretch_and_take_each_ones_quantile() {
        // 32 stretches of 100: stretch k holds the values k*1000 + 0..100, so batch k's p95 is k*1000 + 94.
        let samples: Vec<u64> = (0..32u64).flat_map(|k| (0..100).map(move |i| k * 1000 + i)).collect();
        let q = batch_quantiles(&samples, 30, 0.95);
        assert_eq!(q.len(), 30);
        for (j, v) in q.iter().enumerate() {
            assert_eq!(*v, ((j as u64 + 1) * 1000 + 94) as f64, "batch {j}");
        }
    }

    #[test]
    fn too_few_samples_a_batch_give_no_batches() {
        let samples: Vec<u64> = (0..(32 * MIN_PER_BATCH as u64 - 1)).collect();
        assert!(batch_quantiles(&samples, 30, 0.95).is_empty());
        let samples: Vec<u64> = (0..(32 * MIN_PER_BATCH as u64)).collect();
        assert_eq!(batch_quantiles(&samples, 30, 0.95).len(), 30);
    }
}
