//! The ghost client (McSimA+ style): a YCSB-style generator and checker of KVS requests inside the engine.
//!
//! * Items 0..n. Item i's key is `key_len` bytes: the 8 little-endian bytes of i, then byte j (j >= 8) =
//!   `(j * 0x9d) as u8 ^ key[j % 8]`. Its value for version v is `value_len` bytes of splitmix64 output seeded by
//!   `i * 0x9e3779b97f4a7c15 ^ v * 0xc2b2ae3d27d4eb4f ^ 0x76616c7565`, so any returned value is checked without
//!   storing it. Version 1 is the bulk load; every later PUT of the item takes the next version.
//! * Popularity: uniform over the items, or Zipf(θ) by rejection-inversion (rank r is item r - 1).
//! * Steering (workloads/ABI.md): EREW sends every request to core = partition = (keyhash >> 48) mod cores; CREW
//!   sends PUTs there and GETs round-robin over the cores. A frame carries up to `requests_per_packet` requests
//!   for one core (fewer when the frame or its response would exceed 1514 bytes); at most `window` frames per
//!   queue are outstanding.
//! * Phases: wait until every core's queue is enabled with RX buffers posted; bulk load (every item, version 1,
//!   frames packed full); fuzz (optional: random and mutated frames, then quiet); then, with nothing in flight, the
//!   moment for a checkpoint (`ClientEvent::Loaded`); warm-up (in a run restored from a checkpoint, or one that
//!   loads with `warmup_after_load`: `warmup_requests` requests of the measured mix, not counted); measure (`requests` requests; the machine resets
//!   its stats at the start); done when every measured request is answered.
//! * The model of the store is compact (store_model.rs): about 4 bytes an item.
//! * Checks: every response must answer a frame that was sent, on the queue it went to, with the same batch count,
//!   and per request the same op and keyhash; a GET hit must return one of the values the key could hold (between
//!   the version acknowledged when the GET was sent and the latest version sent); a GET miss is accepted only where
//!   eviction explains it: the key had no acknowledged PUT when the GET was sent, or its partition's log may have
//!   taken a log size of bytes since the PUT acknowledged last when the GET was sent (counting that item; an upper
//!   bound: twice each item's size for every PUT and every GET sent to the owner core, which may re-append it for
//!   LRU, plus twice every fuzz frame), or 16 or more distinct keys were ever put into its bucket. Anything else fails the run (`SimError::Client`).
//!
//! With `Client.protocol = memcached` the same client speaks the memcached binary protocol to the memcached-class
//! server (`memcached`: frames, GET/SET/DELETE and their checks), over UDP or, with `Client.transport = tcp`, over
//! TCP connections opened before the load (`tcp`: handshake, segments, sequence numbers, the stream's messages).
//!
//! This file holds the configuration, the state and the phase machine (`step`); `wire` generates, frames, sends and
//! checks; `memcached` frames and checks the memcached protocol; `tcp` carries it over TCP; `stats` reports.

use std::collections::{HashMap, HashSet};

use crate::key_hash::{bucket_of, keyhash, partition_of};
use crate::store_model::{BucketCounts, StoreModel, Versions, LOAD_MARK};
use crate::zipf::{unit, Zipf};
use kvsim_base::random::splitmix64;

pub mod key_hash;
mod memcached;
pub mod memcached_binary;
#[cfg(test)]
mod memcached_tests;
mod port;
mod ready;
mod stats;
pub mod store_model;
mod tcp;
#[cfg(test)]
mod tcp_tests;
#[cfg(test)]
mod tests;
mod wire;
pub mod zipf;

pub use memcached::McdServer;
pub use port::NicPort;

pub use stats::{ClientStats, TcpStats};
pub use tcp::TcpConfig;
pub use wire::ipv4_checksum;

pub const OP_GET: u8 = 1;
pub const OP_PUT: u8 = 2;
pub const OP_DELETE: u8 = 3;
pub const RES_OK: u8 = 1;
pub const RES_NOT_FOUND: u8 = 2;
pub const PAYLOAD_OFF: usize = 48;
pub const DESC: usize = 24;
const MAX_FRAME: usize = 1514;
const MAX_BATCH: usize = 32;
/// Opaque values with this bit belong to fuzz frames.
const FUZZ_OPAQUE: u32 = 0x8000_0000;
/// Instructions per core without a fuzz response, with every RX ring handed back and nothing waiting in the NIC,
/// that end the fuzz phase (a burst of 32 fuzz frames takes far fewer).
const FUZZ_QUIET_INSTS_PER_CORE: u64 = 300_000;
const CLIENT_UDP_PORT: u16 = 0x9000;

pub fn pad8(n: usize) -> usize {
    (n + 7) & !7
}

/// Item `item`'s key.
pub fn key_of(item: u64, len: usize) -> Vec<u8> {
    let base = item.to_le_bytes();
    (0..len).map(|j| if j < 8 { base[j] } else { (j as u8).wrapping_mul(0x9d) ^ base[j % 8] }).collect()
}

/// The value of `item` at `version`.
pub fn value_of(item: u64, version: u32, len: usize) -> Vec<u8> {
    let mut s = item.wrapping_mul(0x9e37_79b9_7f4a_7c15)
        ^ (version as u64).wrapping_mul(0xc2b2_ae3d_27d4_eb4f)
        ^ 0x0076_616c_7565;
    let mut out = Vec::with_capacity(pad8(len));
    while out.len() < len {
        out.extend_from_slice(&splitmix64(&mut s).to_le_bytes());
    }
    out.truncate(len);
    out
}

/// The client's resolved configuration.
#[derive(Debug, Clone)]
pub struct ClientConfig {
    pub items: u64,
    pub key_len: usize,
    pub val_len: usize,
    pub zipf_theta: Option<f64>,
    pub get_ratio: f64,
    pub requests_per_packet: usize,
    pub requests: u64,
    pub crew: bool,
    pub seed: u64,
    /// Repeated seeds of one data set (issue 28): nonzero restarts the random stream of the warm-up and measured
    /// phase from (seed, measure_seed) at the end of the load, in a run that loads and in one restored alike.
    pub measure_seed: u64,
    pub window: u64,
    /// Open-loop offered load per port (frames/s; 0 = closed loop) and the ports.
    pub offered_fps: f64,
    pub ports: usize,
    pub bulk_load: bool,
    pub fuzz_frames: u64,
    pub warmup_requests: u64,
    /// A run that loads also warms up (`warmup_requests`) before measuring.
    pub warmup_after_load: bool,
    pub stall_rounds: u64,
    /// Cores = partitions (one per hart).
    pub cores: usize,
    /// The server's log bytes and buckets per partition (from its arguments).
    pub log_size: u64,
    pub buckets: u64,
    pub base_port: u16,
    /// Core c's queue and the port of each queue.
    pub core_queue: Vec<usize>,
    pub queue_port: Vec<usize>,
    /// Some: the client speaks the memcached binary protocol to this server (None: MICA's format).
    pub mcd: Option<McdServer>,
    /// Fraction of measured requests that are DELETEs (memcached only).
    pub delete_ratio: f64,
    /// Some: memcached over TCP connections (None: over UDP).
    pub tcp: Option<TcpConfig>,
    /// Open loop: put every measured frame on the wire at the start of the measured phase, each at its own time,
    /// instead of those due by each step. For a wire that delivers frames at their times to a machine that steps
    /// the client only while it runs (FS mode: a guest asleep in wfi wakes for the next arrival, not for a client
    /// that has not sent it yet).
    pub schedule_ahead: bool,
}

impl ClientConfig {
    /// From the parameters and the server's argv (mode=, log_mib=/log_kib=, buckets=; ABI.md's defaults).
    pub fn resolve(
        p: &kvsim_params::Client,
        argv: &[String],
        cores: usize,
        base_port: u16,
        core_queue: Vec<usize>,
        queue_port: Vec<usize>,
    ) -> Result<ClientConfig, String> {
        use kvsim_params::{ClientDataset, ClientMode, ClientPopularity, ClientProtocol, ClientTransport};
        let (dk, dv) = match p.dataset {
            ClientDataset::Tiny => (8, 8),
            ClientDataset::Small => (16, 64),
            ClientDataset::Large => (128, 1024),
            ClientDataset::Xlarge => (250, 1152),
        };
        let key_len = if p.key_size > 0 { p.key_size as usize } else { dk };
        let val_len = if p.value_size > 0 { p.value_size as usize } else { dv };
        if p.protocol == ClientProtocol::Memcached {
            let udp = p.transport == ClientTransport::Udp;
            let server = memcached::resolve_server(argv, base_port, key_len, val_len, udp)?;
            if p.mode == ClientMode::Crew || p.fuzz_frames > 0 {
                return Err("Client: with protocol 'memcached' the mode is erew and there are no fuzz frames".into());
            }
            let tcp = match p.transport {
                ClientTransport::Udp => None,
                ClientTransport::Tcp => Some(resolve_tcp(p, argv)?),
            };
            // The rest as for MICA, whose frame check does not apply (resolve_server made memcached's): its values
            // given as the key's length, which passes it, and the real length set after.
            let mut cfg = ClientConfig::resolve(
                &kvsim_params::Client {
                    protocol: ClientProtocol::Mica,
                    delete_ratio: 0.0,
                    transport: ClientTransport::Udp,
                    key_size: key_len as u64,
                    value_size: key_len as u64,
                    ..p.clone()
                },
                &[],
                cores,
                base_port,
                core_queue,
                queue_port,
            )?;
            // The MICA-only bookkeeping (log bound, buckets) is unused: one bucket keeps its array small.
            (cfg.log_size, cfg.buckets, cfg.mcd, cfg.delete_ratio) = (0, 1, Some(server), p.delete_ratio);
            cfg.val_len = val_len;
            cfg.tcp = tcp;
            return Ok(cfg);
        } else if p.transport == ClientTransport::Tcp {
            return Err(
                "Client.transport = 'tcp' needs Client.protocol = 'memcached' (allowed with 'mica': 'udp')".into()
            );
        } else if p.delete_ratio > 0.0 {
            return Err(format!("Client.delete_ratio = {}: DELETEs need protocol 'memcached'", p.delete_ratio));
        }
        if !(8..=255).contains(&key_len) || PAYLOAD_OFF + DESC + pad8(key_len) + pad8(val_len) > MAX_FRAME {
            return Err(format!("Client: key of {key_len} and value of {val_len} bytes do not fit a frame"));
        }
        let (mut mode, mut log_size, mut buckets) = ("erew".to_string(), 64u64 << 20, 65536u64);
        // log_window_kib: the part of its log a partition keeps; an item further behind the tail is gone.
        let mut window = None;
        // buckets_used: the buckets a partition's index uses when fewer than the power of two allocated.
        let mut used = None;
        for a in argv {
            let num = |v: &str| v.parse::<u64>().map_err(|_| format!("Client: cannot read the server argument {a:?}"));
            if let Some(v) = a.strip_prefix("mode=") {
                mode = v.to_string();
            } else if let Some(v) = a.strip_prefix("log_mib=") {
                log_size = num(v)? << 20;
            } else if let Some(v) = a.strip_prefix("log_kib=") {
                log_size = num(v)? << 10;
            } else if let Some(v) = a.strip_prefix("log_window_kib=") {
                window = Some(num(v)? << 10);
            } else if let Some(v) = a.strip_prefix("buckets=") {
                buckets = num(v)?;
            } else if let Some(v) = a.strip_prefix("buckets_used=") {
                used = Some(num(v)?);
            }
        }
        let log_size = window.unwrap_or(log_size);
        // `mode` is the server's own argument (free text in its argv), so it is matched as text.
        let crew = match (p.mode, mode.as_str()) {
            (ClientMode::Auto | ClientMode::Erew, "erew") => false,
            (ClientMode::Auto | ClientMode::Crew, "crew") => true,
            (c, s) => return Err(format!("Client.mode is {:?} but the server runs mode={s}", c.as_str())),
        };
        if !buckets.is_power_of_two() {
            return Err(format!("Client: the server's buckets={buckets} is not a power of two"));
        }
        // As kvs_config_check: more than half of the buckets and at most all (all: the power of two's mask).
        let buckets = match used {
            Some(u) if u <= buckets / 2 || u > buckets => {
                return Err(format!(
                    "Client: the server's buckets_used={u} is not more than half of buckets={buckets} and at most all"
                ))
            }
            Some(u) => u,
            None => buckets,
        };
        Ok(ClientConfig {
            items: p.items,
            key_len,
            val_len,
            zipf_theta: (p.popularity == ClientPopularity::Zipf).then_some(p.zipf_theta),
            get_ratio: p.get_ratio,
            requests_per_packet: (p.requests_per_packet as usize).clamp(1, MAX_BATCH),
            requests: p.requests,
            crew,
            seed: p.seed,
            measure_seed: p.measure_seed,
            window: p.window.max(1),
            offered_fps: p.offered_mpps * 1e6,
            ports: queue_port.iter().max().map_or(1, |&m| m + 1),
            bulk_load: p.bulk_load,
            fuzz_frames: p.fuzz_frames,
            warmup_requests: p.warmup_requests,
            warmup_after_load: p.warmup_after_load,
            stall_rounds: p.stall_rounds.max(1),
            cores,
            log_size,
            buckets,
            base_port,
            core_queue,
            queue_port,
            mcd: None,
            delete_ratio: 0.0,
            tcp: None,
            schedule_ahead: false,
        })
    }
}

/// The TCP transport's configuration, checked against the memcached server's `tcp_conns=` (its connection slots
/// per instance; 16 when absent).
fn resolve_tcp(p: &kvsim_params::Client, argv: &[String]) -> Result<TcpConfig, String> {
    let mut slots = 16u64;
    for a in argv {
        if let Some(v) = a.strip_prefix("tcp_conns=") {
            slots = v.parse().map_err(|_| format!("Client: cannot read the server argument {a:?}"))?;
        }
    }
    if p.tcp_connections > slots {
        return Err(format!(
            "Client.tcp_connections = {} but the memcached server takes {slots} connections per instance \
             (tcp_conns={slots}): at most {slots}, or raise the server's tcp_conns=",
            p.tcp_connections
        ));
    }
    if p.offered_mpps > 0.0 {
        return Err(format!(
            "Client.transport = 'tcp' with Client.offered_mpps = {}: TCP runs closed loop (allowed: 0)",
            p.offered_mpps
        ));
    }
    let segments = if p.tcp_segments > 0 { p.tcp_segments } else { p.window.max(1) };
    Ok(TcpConfig { connections: p.tcp_connections as usize, mss: p.tcp_mss as usize, segments })
}

#[derive(Debug, Clone, Copy)]
struct Req {
    item: u64,
    op: u8,
    /// PUT: the version it writes. GET: the version acknowledged when it was sent.
    ver: u32,
    keyhash: u64,
    /// PUT: its partition's append bound right after it was sent. GET: that of the PUT acknowledged last when the
    /// GET was sent (the miss bound counts from there).
    mark: u64,
}

#[derive(Debug, Clone, Default)]
struct Pkt {
    reqs: Vec<Req>,
    /// Frame bytes and worst-case response bytes so far.
    frame_len: usize,
    resp_len: usize,
    load: bool,
    /// When the client put it on the wire (ps; detailed timing).
    sent_ps: u64,
}

impl Pkt {
    /// An empty packet whose headers take `hdr` bytes.
    fn new(load: bool, hdr: usize) -> Pkt {
        Pkt { reqs: Vec::new(), frame_len: hdr, resp_len: hdr, load, sent_ps: 0 }
    }
}

/// The server gets this many times `stall_rounds` to make its queues ready before the client gives up.
pub const WAIT_READY_FACTOR: u64 = 10;

#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub enum Phase {
    WaitReady,
    /// TCP: the connections' handshakes, before the load.
    Connect,
    Load,
    Fuzz,
    FuzzDrain,
    /// Requests like the measured ones that warm the server's caches and are not counted (a checkpoint is taken
    /// right before: a restored run warms its own caches with its own measured phase's requests).
    Warmup,
    Measure,
    Done,
}

/// What the machine should do after a client step.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ClientEvent {
    Nothing,
    /// The bulk load (and fuzzing) is over, nothing is in flight: the moment for a checkpoint.
    Loaded,
    /// The measured phase starts: reset the stats.
    MeasureStart,
    /// Every measured request has been answered.
    Done,
}

#[cfg_attr(test, derive(Clone))]
pub struct Client {
    pub cfg: ClientConfig,
    pub phase: Phase,
    rng: u64,
    zipf: Option<Zipf>,
    /// Per item: versions acknowledged and sent, marks, distinct keys per bucket (compact: store_model.rs).
    store: StoreModel,
    /// Per partition: bytes the log may have taken (upper bound).
    part_log: Vec<u64>,
    builders: Vec<Pkt>,
    ready: ready::ReadyQueues<Pkt>,
    outstanding: HashMap<u32, (usize, Pkt)>,
    out_per_core: Vec<u64>,
    next_opaque: u32,
    rr: usize,
    /// Requests generated in the current phase (load: items; measure: requests).
    generated: u64,
    /// Instruction count at the last sign of fuzz traffic in flight.
    busy_at: u64,
    idle_rounds: u64,
    /// Client steps spent waiting for the server to enable its queues (bounded: see `WAIT_READY_FACTOR`).
    wait_ready_steps: u64,
    insts_at_load: u64,
    pub stats: ClientStats,
    pub per_partition: Vec<u64>,
    pub per_core: Vec<u64>,
    /// Detailed timing: the time the next frame goes out (None: not yet timed), whether the measured phase runs
    /// open loop, round-trip latencies of measured requests (ps), first send and last receive times.
    send_at: Option<u64>,
    open_loop: bool,
    next_send: Option<f64>,
    latencies: Vec<u64>,
    first_send: Option<u64>,
    last_recv: u64,
    /// Restored from a checkpoint: the warm-up phase runs (a run that loads warms its caches during the load).
    restored: bool,
    /// Memcached: the versions that are DELETEs, and per partition whether its instance may evict.
    tombstones: HashSet<(u64, u32)>,
    evictable: Vec<bool>,
    /// TCP: the connections (instance c's are c * connections ..), the next one per instance, counters, the first
    /// failure of a send (a dropped segment), and client steps spent in the handshakes.
    tcp: Vec<tcp::TcpConn>,
    tcp_next: Vec<usize>,
    /// TCP: data segments unacknowledged per instance (at most `window`).
    tcp_segs_out: Vec<u64>,
    pub tcp_stats: TcpStats,
    tcp_failure: Option<String>,
    connect_steps: u64,
}

type CResult<T> = Result<T, String>;
/// What `Client::save` hands a checkpoint: the client's state, the per-item versions and (dense) per-bucket counts.
pub type SavedClient<'a> = (ClientState, &'a Versions, Option<&'a [u8]>);

/// The client's state in a checkpoint, apart from its per-item and per-bucket arrays (chunks of their own). Taken
/// only between phases, with nothing in flight, so frames under construction and outstanding need no saving.
#[derive(Debug, serde::Serialize, serde::Deserialize)]
pub struct ClientState {
    phase: Phase,
    rng: u64,
    part_log: Vec<u64>,
    next_opaque: u32,
    rr: usize,
    generated: u64,
    busy_at: u64,
    idle_rounds: u64,
    insts_at_load: u64,
    stats: ClientStats,
    per_partition: Vec<u64>,
    per_core: Vec<u64>,
    /// The store model's maps, sorted (so a checkpoint is a function of the state).
    in_flight: Vec<(u64, u32)>,
    put_marks: Vec<(u64, u64)>,
    /// Items a GET found gone since their mark (absent from checkpoints of format 1's first builds: none).
    #[serde(default)]
    gone: Vec<u64>,
    load_marks: Vec<u64>,
    sparse_buckets: Option<Vec<(u64, u8)>>,
    /// Over TCP: every connection, quiet (absent from UDP checkpoints and those of earlier builds: none).
    #[serde(default)]
    tcp: Vec<tcp::SavedTcpConn>,
    #[serde(default)]
    tcp_next: Vec<usize>,
    #[serde(default)]
    tcp_stats: TcpStats,
}

impl Client {
    pub fn new(cfg: ClientConfig) -> Client {
        let cores = cfg.cores;
        let evictable = match &cfg.mcd {
            Some(s) => memcached::evictable(cfg.items, cfg.key_len, cores, s.capacity),
            None => Vec::new(),
        };
        let hdr = match (&cfg.mcd, &cfg.tcp) {
            (Some(_), Some(_)) => tcp::TCP_HDRS,
            (Some(_), None) => memcached::MCD_FRAME_HDR,
            _ => PAYLOAD_OFF,
        };
        let mut c = Client {
            rng: cfg.seed ^ 0x636c_6965_6e74,
            zipf: cfg.zipf_theta.map(|t| Zipf::new(cfg.items, t)),
            store: StoreModel::new(cfg.items, cores, cfg.buckets),
            part_log: vec![0; cores],
            builders: vec![Pkt::new(true, hdr); cores],
            ready: ready::ReadyQueues::new(cores),
            outstanding: HashMap::new(),
            out_per_core: vec![0; cores],
            next_opaque: 1,
            rr: 0,
            generated: 0,
            busy_at: 0,
            idle_rounds: 0,
            wait_ready_steps: 0,
            insts_at_load: 0,
            stats: ClientStats::default(),
            per_partition: vec![0; cores],
            per_core: vec![0; cores],
            send_at: None,
            open_loop: false,
            next_send: None,
            latencies: Vec::new(),
            first_send: None,
            last_recv: 0,
            restored: false,
            tombstones: HashSet::new(),
            evictable,
            tcp: Vec::new(),
            tcp_next: Vec::new(),
            tcp_segs_out: Vec::new(),
            tcp_stats: TcpStats::default(),
            tcp_failure: None,
            connect_steps: 0,
            phase: Phase::WaitReady,
            cfg,
        };
        c.tcp_init();
        c
    }

    /// At the end of the load: the measured phase's own random stream when `measure_seed` asks for one.
    fn start_measure_stream(&mut self) {
        if self.cfg.measure_seed != 0 {
            let mut mix = self.cfg.seed ^ self.cfg.measure_seed.wrapping_mul(0x9e37_79b9_7f4a_7c15);
            self.rng = splitmix64(&mut mix) ^ 0x006d_6561_7375_7265;
        }
    }

    fn rand(&mut self) -> u64 {
        splitmix64(&mut self.rng)
    }

    fn item_size(&self, put: bool) -> u64 {
        (DESC + pad8(self.cfg.key_len) + if put { pad8(self.cfg.val_len) } else { 0 }) as u64
    }

    fn partition(&self, kh: u64) -> usize {
        partition_of(kh, self.cfg.cores as u64) as usize
    }

    /// Bytes of a frame's headers before its first request.
    fn header_len(&self) -> usize {
        match (&self.cfg.mcd, &self.cfg.tcp) {
            // A frame of requests over TCP is one segment's worth at the largest MSS.
            (Some(_), Some(_)) => tcp::TCP_HDRS,
            (Some(_), None) => memcached::MCD_FRAME_HDR,
            _ => PAYLOAD_OFF,
        }
    }

    /// The id of a frame the client sent (None: too short to carry one).
    fn frame_opaque(&self, frame: &[u8]) -> Option<u32> {
        match self.cfg.mcd {
            Some(_) => memcached::frame_opaque(frame),
            None => (frame.len() >= 48).then(|| u32::from_le_bytes(frame[44..48].try_into().unwrap())),
        }
    }

    /// The state a checkpoint keeps, with the per-item versions and (dense) per-bucket counts by reference. Refused
    /// while frames are in flight or being built.
    pub fn save(&self) -> CResult<SavedClient<'_>> {
        if !self.outstanding.is_empty() || self.builders.iter().any(|b| !b.reqs.is_empty()) || self.ready.any() {
            return Err("the client has frames in flight".into());
        }
        if !self.tombstones.is_empty() {
            return Err("the memcached client has sent DELETEs, which checkpoints do not keep".into());
        }
        let tcp = self.tcp.iter().enumerate().map(|(k, c)| c.save(k)).collect::<CResult<Vec<_>>>()?;
        let sorted = |m: &HashMap<u64, u32>| {
            let mut v: Vec<(u64, u32)> = m.iter().map(|(&k, &x)| (k, x)).collect();
            v.sort_unstable();
            v
        };
        let mut put_marks: Vec<(u64, u64)> = self.store.put_marks.iter().map(|(&k, &x)| (k, x)).collect();
        put_marks.sort_unstable();
        let (sparse, dense) = match &self.store.bucket_keys {
            BucketCounts::Dense(v) => (None, Some(&v[..])),
            BucketCounts::Sparse(m) => {
                let mut v: Vec<(u64, u8)> = m.iter().map(|(&k, &x)| (k, x)).collect();
                v.sort_unstable();
                (Some(v), None)
            }
        };
        let state = ClientState {
            phase: self.phase,
            rng: self.rng,
            part_log: self.part_log.clone(),
            next_opaque: self.next_opaque,
            rr: self.rr,
            generated: self.generated,
            busy_at: self.busy_at,
            idle_rounds: self.idle_rounds,
            insts_at_load: self.insts_at_load,
            stats: self.stats.clone(),
            per_partition: self.per_partition.clone(),
            per_core: self.per_core.clone(),
            in_flight: sorted(&self.store.in_flight),
            put_marks,
            gone: {
                let mut g: Vec<u64> = self.store.gone.iter().copied().collect();
                g.sort_unstable();
                g
            },
            load_marks: self.store.load_marks.clone(),
            sparse_buckets: sparse,
            tcp,
            tcp_next: self.tcp_next.clone(),
            tcp_stats: self.tcp_stats.clone(),
        };
        Ok((state, &self.store.acked, dense))
    }

    /// Take a checkpoint's state (this client was built from the restored run's configuration, which may change
    /// the measured phase only). `acked` and `dense` are the arrays `save` gave.
    pub fn restore(&mut self, st: ClientState, acked: Versions, dense: Option<Vec<u8>>) -> CResult<()> {
        let cores = self.cfg.cores;
        if acked.len() != self.cfg.items || st.part_log.len() != cores || st.per_core.len() != cores {
            return Err(format!("the client's state is for another data set or core count ({} items)", acked.len()));
        }
        if st.tcp.len() != self.tcp.len() || st.tcp_next.len() != self.tcp_next.len() {
            return Err(format!(
                "the checkpoint's client has {} TCP connections, this run's {} (Client.transport and \
                 Client.tcp_connections must match)",
                st.tcp.len(),
                self.tcp.len()
            ));
        }
        self.store.acked = acked;
        self.store.in_flight = st.in_flight.into_iter().collect();
        self.store.put_marks = st.put_marks.into_iter().collect();
        self.store.gone = st.gone.into_iter().collect();
        self.store.load_marks = st.load_marks;
        match (&mut self.store.bucket_keys, dense, st.sparse_buckets) {
            (BucketCounts::Dense(v), Some(d), None) if d.len() == v.len() => *v = d,
            (BucketCounts::Sparse(m), None, Some(s)) => *m = s.into_iter().collect(),
            _ => return Err("the client's bucket counts are for another bucket count".into()),
        }
        for (c, saved) in self.tcp.iter_mut().zip(st.tcp) {
            c.restore(saved);
        }
        (self.tcp_next, self.tcp_stats) = (st.tcp_next, st.tcp_stats);
        (self.phase, self.rng, self.part_log, self.next_opaque, self.rr) =
            (st.phase, st.rng, st.part_log, st.next_opaque, st.rr);
        (self.generated, self.busy_at, self.idle_rounds, self.insts_at_load) =
            (st.generated, st.busy_at, st.idle_rounds, st.insts_at_load);
        (self.stats, self.per_partition, self.per_core) = (st.stats, st.per_partition, st.per_core);
        self.restored = true;
        self.start_measure_stream();
        Ok(())
    }

    /// Set the measured phase's offered load (frames/s a port) and request count where that phase starts, before
    /// its first request: nothing before it reads either, so runs that differ only in them can share everything
    /// up to there (a capacity search's probes share one warm-up, issue 24). Open loop only, as configured.
    pub fn set_measure(&mut self, offered_fps: f64, requests: u64) -> CResult<()> {
        if self.phase != Phase::Measure || self.generated != 0 || self.next_send.is_some() {
            return Err("the measured phase's load can change only where that phase starts".into());
        }
        if !(offered_fps > 0.0 && offered_fps.is_finite() && self.cfg.offered_fps > 0.0) || requests == 0 {
            return Err(format!(
                "the measured phase's load: {offered_fps} frames/s a port and {requests} requests, in a run \
                 offering {} (an open-loop rate and at least one request, in an open-loop run)",
                self.cfg.offered_fps
            ));
        }
        (self.cfg.offered_fps, self.cfg.requests) = (offered_fps, requests);
        Ok(())
    }

    /// Host bytes of the client's model of the store.
    pub fn model_bytes(&self) -> u64 {
        self.store.host_bytes()
    }

    // ------------------------------------------------------------------ one step

    /// Take the frames the NIC sent, then generate and send what the phase calls for. `total_insts` is the
    /// machine's instruction count (for the load phase's instruction count).
    pub fn step(
        &mut self,
        nics: &mut dyn NicPort,
        responses: Vec<(usize, Vec<u8>, u64)>,
        dropped: Vec<Vec<u8>>,
        total_insts: u64,
        now: Option<u64>,
    ) -> CResult<ClientEvent> {
        self.send_at = now;
        let fuzzing = matches!(self.phase, Phase::Fuzz | Phase::FuzzDrain);
        let got_any = !responses.is_empty() || !dropped.is_empty();
        if self.cfg.tcp.is_some() {
            return self.step_tcp(nics, responses, dropped, total_insts);
        }
        for (q, frame, at) in responses {
            if fuzzing {
                self.check_fuzz_response(&frame);
            } else {
                self.check_response(q, &frame, at)?;
            }
        }
        self.after_responses(nics, got_any, dropped, total_insts)
    }

    /// TCP: every segment checked (those completing frames of responses check the responses), windows reopened;
    /// the handshakes before the load; the phases as over UDP; then a bare ACK where data is unacknowledged.
    fn step_tcp(
        &mut self,
        nics: &mut dyn NicPort,
        responses: Vec<(usize, Vec<u8>, u64)>,
        dropped: Vec<Vec<u8>>,
        total_insts: u64,
    ) -> CResult<ClientEvent> {
        let got_any = !responses.is_empty();
        if let Some(frame) = dropped.first() {
            let port = tcp::parse_segment(frame).map_or(0, |s| s.dport);
            return Err(format!(
                "the NIC dropped {} TCP segment(s) (the first to server port {port:#x}): the TCP transport does not \
                 retransmit, so Client.transport = 'tcp' needs a NIC that never drops",
                dropped.len()
            ));
        }
        let mut touched = Vec::new();
        for (q, frame, at) in responses {
            let k = self.tcp_receive(nics, q, &frame, at)?;
            touched.push(self.tcp[k].core);
        }
        touched.sort_unstable();
        touched.dedup();
        for core in touched {
            self.tcp_push_core(nics, core);
        }
        if self.phase == Phase::Connect {
            self.connect_steps += 1;
            if self.tcp_all_established() {
                self.insts_at_load = total_insts;
                self.phase = Phase::Load;
                self.generated = 0;
            } else if self.connect_steps >= self.cfg.stall_rounds.saturating_mul(self.cfg.cores.max(1) as u64) {
                return Err(format!(
                    "the server did not complete the TCP handshake of {} of {} connections within \
                     Client.stall_rounds = {} scheduling rounds",
                    self.tcp.iter().filter(|c| c.state != tcp::TcpState::Established).count(),
                    self.tcp.len(),
                    self.cfg.stall_rounds
                ));
            }
        }
        let event = self.after_responses(nics, got_any, Vec::new(), total_insts)?;
        if self.phase == Phase::Connect && self.connect_steps == 0 {
            self.tcp_open(nics);
        }
        self.tcp_flush_acks(nics);
        if let Some(e) = self.tcp_failure.take() {
            return Err(e);
        }
        Ok(event)
    }

    /// The phase machine after a step's responses are taken.
    fn after_responses(
        &mut self,
        nics: &mut dyn NicPort,
        got_any: bool,
        dropped: Vec<Vec<u8>>,
        total_insts: u64,
    ) -> CResult<ClientEvent> {
        let fuzzing = matches!(self.phase, Phase::Fuzz | Phase::FuzzDrain);
        // Frames the timed NIC dropped (FIFO overflow): lost, never answered.
        for frame in dropped {
            let Some(opaque) = self.frame_opaque(&frame) else {
                continue;
            };
            if let Some((core, pkt)) = self.outstanding.remove(&opaque) {
                self.out_per_core[core] -= 1;
                if !pkt.load {
                    self.stats.lost_packets += 1;
                    self.stats.lost_requests += pkt.reqs.len() as u64;
                }
            } else if fuzzing && opaque & FUZZ_OPAQUE != 0 {
                self.stats.fuzz_nic_dropped += 1;
            }
        }
        let mut event = ClientEvent::Nothing;
        if self.phase == Phase::WaitReady && self.cfg.core_queue.iter().all(|&q| nics.rx_posted(q)) {
            self.insts_at_load = total_insts;
            // Over TCP the connections open first (their SYNs leave at the end of this step).
            self.phase = if self.cfg.tcp.is_some() { Phase::Connect } else { Phase::Load };
            self.generated = 0;
        } else if self.phase == Phase::WaitReady {
            // A server that never enables its queues would otherwise run forever. Its start-up may be long (it
            // builds its tables), so it gets WAIT_READY_FACTOR times the response stall limit.
            self.wait_ready_steps += 1;
            let limit =
                self.cfg.stall_rounds.saturating_mul(WAIT_READY_FACTOR).saturating_mul(self.cfg.cores.max(1) as u64);
            if self.wait_ready_steps >= limit {
                let waiting: Vec<String> =
                    self.cfg.core_queue.iter().filter(|&&q| !(nics.rx_posted(q))).map(|q| q.to_string()).collect();
                return Err(format!(
                    "the server never made its NIC queues ready: after {} scheduling rounds ({total_insts} \
                     instructions) queue(s) {} are not enabled with RX buffers posted (limit: {WAIT_READY_FACTOR} x \
                     Client.stall_rounds)",
                    self.wait_ready_steps / self.cfg.cores.max(1) as u64,
                    waiting.join(", ")
                ));
            }
        }
        if self.phase == Phase::Load {
            if !self.cfg.bulk_load {
                self.generated = self.cfg.items;
            }
            let mut blocked = self.send_ready(nics);
            while !blocked && self.generated < self.cfg.items {
                self.store.before_load_put(self.generated, &self.part_log);
                let (core, req) = self.put_req(self.generated);
                self.add(core, req, true);
                self.stats.load_requests += 1;
                self.generated += 1;
                blocked = if self.generated == self.cfg.items {
                    self.flush_builders();
                    self.send_ready(nics)
                } else {
                    self.send_core(nics, core)
                };
            }
            if self.generated == self.cfg.items && !blocked && self.outstanding.is_empty() {
                self.stats.load_insts = total_insts - self.insts_at_load;
                self.phase = if self.cfg.fuzz_frames > 0 { Phase::Fuzz } else { Phase::Warmup };
                self.generated = 0;
                self.start_measure_stream();
                if self.phase == Phase::Warmup {
                    return Ok(ClientEvent::Loaded);
                }
            }
        }
        if self.phase == Phase::Fuzz {
            // Paced so the RX FIFO does not overflow: fuzz frames test the server, not the FIFO.
            let burst = self.cfg.window.min(self.cfg.fuzz_frames - self.stats.fuzz_sent);
            for _ in 0..burst {
                if nics.fifo_frames() >= 16 {
                    break;
                }
                let (core, f) = self.fuzz_frame();
                let len = f.len() as u64;
                for p in self.part_log.iter_mut() {
                    *p += 2 * len;
                }
                self.stats.fuzz_sent += 1;
                let port = self.cfg.queue_port[self.cfg.core_queue[core]];
                if nics.receive(port, f).is_none() {
                    self.stats.fuzz_nic_dropped += 1;
                }
            }
            if self.stats.fuzz_sent == self.cfg.fuzz_frames {
                self.phase = Phase::FuzzDrain;
                self.busy_at = total_insts;
            }
        } else if self.phase == Phase::FuzzDrain {
            let handed_back = self.cfg.core_queue.iter().all(|&q| nics.queue_drained(q));
            if got_any || nics.fifo_frames() > 0 || !handed_back {
                self.busy_at = total_insts;
            } else {
                if total_insts - self.busy_at >= FUZZ_QUIET_INSTS_PER_CORE * self.cfg.cores as u64 {
                    self.phase = Phase::Warmup;
                    self.generated = 0;
                    return Ok(ClientEvent::Loaded);
                }
            }
        } else if let (Phase::Measure, Some(now), true) = (self.phase, self.send_at, self.cfg.offered_fps > 0.0) {
            // Open loop: frames leave at the offered rate (all ports together), whatever is outstanding.
            self.open_loop = true;
            let per_req = 1e12 / (self.cfg.offered_fps * self.cfg.ports as f64 * self.cfg.requests_per_packet as f64);
            let mut next = *self.next_send.get_or_insert(now as f64);
            while self.generated < self.cfg.requests && (next <= now as f64 || self.cfg.schedule_ahead) {
                self.send_at = Some(next as u64);
                let (core, req) = self.generate_measured();
                self.add(core, req, false);
                self.generated += 1;
                if self.generated == self.cfg.requests {
                    self.flush_builders();
                }
                self.send_ready(nics);
                next += per_req;
            }
            self.next_send = Some(next);
            self.send_at = Some(now);
            if self.generated == self.cfg.requests && self.outstanding.is_empty() {
                self.phase = Phase::Done;
                event = ClientEvent::Done;
            }
        } else if self.phase == Phase::Warmup {
            let warmup = if self.restored || self.cfg.warmup_after_load { self.cfg.warmup_requests } else { 0 };
            if self.closed_loop(nics, warmup) {
                self.phase = Phase::Measure;
                self.generated = 0;
                return Ok(ClientEvent::MeasureStart);
            }
        } else if self.phase == Phase::Measure && self.closed_loop(nics, self.cfg.requests) {
            self.phase = Phase::Done;
            event = ClientEvent::Done;
        }
        if !self.outstanding.is_empty() && !got_any {
            self.idle_rounds += 1;
            // The client is stepped after every hart's turn: a round of all harts is `cores` steps, so the limit
            // means the same for any core count.
            if self.idle_rounds >= self.cfg.stall_rounds.saturating_mul(self.cfg.cores.max(1) as u64) {
                let mut per_core: Vec<String> = Vec::new();
                for c in 0..self.cfg.cores {
                    if self.out_per_core[c] > 0 {
                        per_core.push(format!("core {c}: {}", self.out_per_core[c]));
                    }
                }
                return Err(format!(
                    "no response for {} scheduling rounds with {} frames outstanding ({}); {} frames wait in the NIC",
                    self.idle_rounds / self.cfg.cores.max(1) as u64,
                    self.outstanding.len(),
                    per_core.join(", "),
                    nics.frames_in_flight()
                ));
            }
        } else if got_any {
            self.idle_rounds = 0;
        }
        Ok(event)
    }

    /// Open loop, for a server whose own network stack drops datagrams where no NIC reports it (FS mode's kernel: a
    /// full receive ring or socket buffer): the caller knows the server can answer nothing more (its machine is
    /// idle with nothing on the wire toward it). Once every measured frame is sent, those still unanswered are
    /// lost and the run is done; before that, or closed loop, nothing changes.
    pub fn give_up_when_server_idle(&mut self) -> ClientEvent {
        if !self.open_loop_all_sent() {
            return ClientEvent::Nothing;
        }
        self.give_up_outstanding();
        self.phase = Phase::Done;
        ClientEvent::Done
    }

    /// Open loop in the measured phase with every measured frame sent (what remains is waiting for answers).
    pub fn open_loop_all_sent(&self) -> bool {
        self.open_loop && self.phase == Phase::Measure && self.generated >= self.cfg.requests
    }

    /// Every measured frame still outstanding is lost (counted as the NIC's drops are; its requests are never
    /// answered).
    fn give_up_outstanding(&mut self) {
        for (_, (core, pkt)) in std::mem::take(&mut self.outstanding) {
            self.out_per_core[core] -= 1;
            self.stats.lost_packets += 1;
            self.stats.lost_requests += pkt.reqs.len() as u64;
        }
    }

    /// Closed loop: generate up to `target` requests of the measured phase's mix while windows allow. True once
    /// all are generated and answered.
    fn closed_loop(&mut self, nics: &mut dyn NicPort, target: u64) -> bool {
        let mut blocked = self.send_ready(nics);
        while !blocked && self.generated < target {
            let (core, req) = self.generate_measured();
            self.add(core, req, false);
            self.generated += 1;
            blocked = if self.generated == target {
                self.flush_builders();
                self.send_ready(nics)
            } else {
                self.send_core(nics, core)
            };
        }
        self.generated == target && !blocked && self.outstanding.is_empty()
    }
}
