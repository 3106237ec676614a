//! Checkpoints of the whole functional state, and their copy-on-write restore.
//!
//! A checkpoint is a directory: `manifest.json` (format and version, the resolved configuration, the binary's size
//! and CRC-32, every chunk's size and a CRC-32 per 64 MiB block), `state.json` (harts, the machine's scheduler and
//! system-call state, memory regions, LR reservations, page permissions, the threads' clear-child-tid words, the
//! NICs' registers and counters, the client's state), `pages.bin` (every
//! resident guest page, `mem::PAGE_RECORD` bytes each, in page-number order), `client_versions.bin` (the client's
//! acknowledged version of every item, u32 little-endian) and, when dense, `client_buckets.bin` (distinct keys per
//! bucket). It is written under a temporary name beside the target and renamed when complete; a failed write
//! removes it. Timing state (caches, cores, DRAM) is not saved: warming rebuilds it.
//!
//! The machine writes one when the client's measured phase starts (the end of its bulk load), with nothing in
//! flight: no frame in the NICs' FIFOs, none outstanding at the client. A restore builds the machine from the new
//! configuration as usual, checks the checkpoint against it, then maps `pages.bin` privately (MAP_PRIVATE: a store
//! copies one host page; runs restored from the same checkpoint share the rest) and overwrites the state.

use std::fs::{self, File};
use std::io::{BufWriter, Read, Write};
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use serde_json::Value;

use kvsim_base::abi::PAGE_SIZE as GUEST_PAGE;
use kvsim_client::store_model::Versions;
use kvsim_client::ClientState;
use kvsim_isa::hart::Hart;
use kvsim_isa::memory::PAGE_RECORD;

const PAGE_SIZE: usize = GUEST_PAGE as usize;
use crate::sim::{CheckpointWriter, EngineConfig, Machine};
use kvsim_base::error::{SimError, SimResult};
use kvsim_devices::bus::DeviceBus;
use kvsim_devices::nic::{NicRegs, PortStats};
use kvsim_isa::elf::Image;

pub const FORMAT: &str = "kvsim-checkpoint";
pub const FORMAT_VERSION: u32 = 1;
pub(crate) use crate::page_check::CHECKSUM_BLOCK;

/// Parameters a restore must agree on (anything else is timing or the client's measured phase). A prefix ending
/// in '.' covers every field under it, except the fields of `BY_CONTENT`.
const MUST_MATCH: &[&str] = &[
    "workload.",
    "harts",
    // Which socket each hart is on (its stack and its NUMA allocations were placed by it).
    "sockets.cores",
    "mem_limit",
    "stack_size",
    "misaligned",
    "seed",
    "quantum",
    "nics.queues",
    "nics.ports",
    "nics.enabled",
    "nic.queues",
    "nic.ports",
    "nic.enabled",
];

/// Fields under a `MUST_MATCH` prefix that a restore compares by content rather than by value: the guest binary is
/// the file at `workload.binary`, checked against the manifest's size and CRC-32 (`restore`), so a checkpoint
/// restores from any path that holds the same program (another checkout's copy of it), and a rebuilt binary at
/// the same path is still refused.
const BY_CONTENT: &[&str] = &["workload.binary"];

/// The client's data set and what it loaded, which a restore must agree on too (SE and FS checkpoints alike).
pub(crate) const CLIENT_MUST_MATCH: &[&str] = &[
    "client.enabled",
    "client.items",
    "client.dataset",
    "client.key_size",
    "client.value_size",
    "client.mode",
    "client.seed",
    "client.bulk_load",
    "client.fuzz_frames",
];

#[derive(Debug, Serialize, Deserialize)]
pub(crate) struct Chunk {
    pub(crate) name: String,
    pub(crate) bytes: u64,
    pub(crate) crc32: Vec<u32>,
}

#[derive(Debug, Serialize, Deserialize)]
struct Manifest {
    format: String,
    format_version: u32,
    binary: String,
    binary_bytes: u64,
    binary_crc32: u32,
    /// Total instructions when it was taken.
    insts: u64,
    total_bytes: u64,
    chunks: Vec<Chunk>,
    config: Value,
}

#[derive(Debug, Serialize, Deserialize)]
struct NicState {
    regs: NicRegs,
    port_stats: Vec<PortStats>,
    port_base: Vec<PortStats>,
    queue_base: Vec<(u64, u64, u64)>,
}

#[derive(Debug, Serialize, Deserialize)]
struct MachineState {
    harts: Vec<Hart>,
    stdout: Vec<u8>,
    stderr: Vec<u8>,
    group_exit: Option<i64>,
    mmap_low: u64,
    rng: u64,
    roi_begin: Option<u64>,
    roi_end: Option<u64>,
    stats_dumps: u64,
    stats_resets: u64,
    next_turn: usize,
    elf: Vec<(u64, u64)>,
    heap_start: u64,
    brk: u64,
    mmaps: Vec<(u64, u64)>,
    stacks: Vec<(u64, u64)>,
    pages_touched: u64,
    pages: Vec<u64>,
    nics: Vec<NicState>,
    measure_insts: Option<u64>,
    client: Option<ClientState>,
    /// The NUMA placements (absent in checkpoints from before NUMA: the restored run keeps its own map).
    #[serde(default)]
    numa: Option<kvsim_timing::numa::NumaMap>,
    /// The hugepage allocations (absent in older checkpoints: the restored run maps none with 2 MB pages).
    #[serde(default)]
    huge: Vec<(u64, u64)>,
    /// Each socket's hugepage heap's free space (absent in older checkpoints: the restored run's next block starts
    /// a new run of pages).
    #[serde(default)]
    huge_heap: Vec<(u64, u64)>,
    /// Every hart's LR reservation, the pages with non-default permissions (mmap, mprotect) and the Linux
    /// threads' clear-child-tid words (absent from older checkpoints of kvsim-runtime programs: the new machine's
    /// own are right for those).
    #[serde(default)]
    reservations: Option<Vec<u64>>,
    #[serde(default)]
    prot: Option<Vec<(u64, u8)>>,
    #[serde(default)]
    clear_child_tid: Option<Vec<u64>>,
    /// The file tree's state: open descriptors and offsets, the scratch tree's files (mapped host files by path:
    /// a restored run reads them again). Absent from older checkpoints: the restored run keeps its new tree.
    #[serde(default)]
    fs: Option<kvsim_os::fs::FileSystem>,
}

/// Writes one chunk, counting its bytes and a CRC-32 per block; `budget` (tests) fails writes past it like a full
/// disk would.
pub(crate) struct ChunkWriter {
    out: BufWriter<File>,
    chunk: Chunk,
    hasher: crc32fast::Hasher,
    in_block: u64,
    budget: Option<u64>,
}

impl ChunkWriter {
    pub(crate) fn create(dir: &Path, name: &str, budget: Option<u64>) -> std::io::Result<ChunkWriter> {
        let out = BufWriter::with_capacity(1 << 20, File::create(dir.join(name))?);
        let chunk = Chunk { name: name.into(), bytes: 0, crc32: Vec::new() };
        Ok(ChunkWriter { out, chunk, hasher: crc32fast::Hasher::new(), in_block: 0, budget })
    }

    pub(crate) fn write(&mut self, mut bytes: &[u8]) -> std::io::Result<()> {
        if let Some(b) = self.budget.as_mut() {
            if (bytes.len() as u64) > *b {
                return Err(std::io::Error::new(std::io::ErrorKind::StorageFull, "No space left on device"));
            }
            *b -= bytes.len() as u64;
        }
        self.out.write_all(bytes)?;
        while !bytes.is_empty() {
            let take = ((CHECKSUM_BLOCK - self.in_block) as usize).min(bytes.len());
            self.hasher.update(&bytes[..take]);
            self.in_block += take as u64;
            self.chunk.bytes += take as u64;
            if self.in_block == CHECKSUM_BLOCK {
                self.chunk.crc32.push(std::mem::take(&mut self.hasher).finalize());
                self.in_block = 0;
            }
            bytes = &bytes[take..];
        }
        Ok(())
    }

    pub(crate) fn finish(mut self) -> std::io::Result<(Chunk, Option<u64>)> {
        if self.in_block > 0 || self.chunk.bytes == 0 {
            self.chunk.crc32.push(self.hasher.finalize());
        }
        self.out.flush()?;
        self.out.get_ref().sync_all()?;
        Ok((self.chunk, self.budget))
    }
}

/// Writes `manifest` last, then renames the finished `tmp` directory to `dir`, so a checkpoint directory exists
/// only once complete (SE and FS checkpoints alike). Returns the bytes written: the chunks' `chunk_bytes` and the
/// manifest's.
pub(crate) fn seal<M: Serialize>(tmp: &Path, dir: &Path, manifest: &M, chunk_bytes: u64) -> std::io::Result<u64> {
    let text = serde_json::to_vec_pretty(manifest).map_err(std::io::Error::other)?;
    let mut w = ChunkWriter::create(tmp, "manifest.json", None)?;
    w.write(&text)?;
    w.finish()?;
    fs::rename(tmp, dir)?;
    Ok(chunk_bytes + text.len() as u64)
}

/// After a failed write: removes the partial checkpoint in `tmp` and says whether it could.
pub(crate) fn discard_partial(tmp: &Path, e: &std::io::Error) -> String {
    let removed = fs::remove_dir_all(tmp).is_ok() || !tmp.exists();
    let what = if removed { "the partial checkpoint was removed" } else { "the partial checkpoint remains" };
    format!("writing failed ({e}); {what}")
}

/// CRC-32 per block of `bytes`, as `ChunkWriter` computes it.
fn block_crcs(bytes: &[u8]) -> Vec<u32> {
    if bytes.is_empty() {
        return vec![crc32fast::hash(&[])];
    }
    bytes.chunks(CHECKSUM_BLOCK as usize).map(crc32fast::hash).collect()
}

pub(crate) fn file_crc(path: &str) -> Result<(u64, u32), String> {
    let data = fs::read(path).map_err(|e| format!("cannot read the binary {path}: {e}"))?;
    Ok((data.len() as u64, crc32fast::hash(&data)))
}

/// The machine of `system` (`Machine::new`), restored from System.restore_from when set, and writing
/// System.checkpoint_to when its scheduler calls for it: the run driver builds its machines here.
pub fn machine(system: &EngineConfig, image: &Image) -> SimResult<Machine> {
    let mut m = Machine::new(system, image)?;
    m.mem.limit_unpacked(system.unpacked_memory / GUEST_PAGE).map_err(SimError::Config)?;
    if !system.restore_from.is_empty() {
        let dir = Path::new(&system.restore_from);
        restore(&mut m, &system.resolved, &system.binary, dir).map_err(SimError::Config)?;
    }
    if !system.checkpoint_to.is_empty() {
        m.checkpoint_writer = Some(Box::new(ToDirectory {
            dir: PathBuf::from(&system.checkpoint_to),
            config: system.resolved.clone(),
            binary: system.binary.clone(),
        }));
    }
    Ok(m)
}

/// Writes the machine's checkpoint into a new directory, recording the resolved configuration and the binary.
struct ToDirectory {
    dir: PathBuf,
    config: Value,
    binary: String,
}

impl CheckpointWriter for ToDirectory {
    fn write(&mut self, m: &Machine) -> Result<(String, u64), String> {
        let w = write(m, &self.config, &self.binary, &self.dir, None)?;
        Ok((w.dir.display().to_string(), w.bytes))
    }
}

/// What a checkpoint took: its directory and bytes on disk.
pub struct Written {
    pub dir: PathBuf,
    pub bytes: u64,
}

/// Write `m`'s state to the new directory `dir`. `config` is the resolved configuration (JSON), `binary` the ELF.
pub fn write(m: &Machine, config: &Value, binary: &str, dir: &Path, budget: Option<u64>) -> Result<Written, String> {
    let fail = |e: String| format!("checkpoint {}: {e}", dir.display());
    if dir.exists() {
        return Err(fail("it already exists (a checkpoint is never overwritten)".into()));
    }
    let state = capture(m).map_err(|e| fail(format!("cannot be taken now: {e}")))?;
    let (binary_bytes, binary_crc32) = file_crc(binary).map_err(fail)?;
    let name = dir.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_else(|| "checkpoint".into());
    let tmp = dir.with_file_name(format!(".{name}.partial-{}", std::process::id()));
    let parent = tmp.parent().map(Path::to_path_buf).unwrap_or_default();
    if !parent.as_os_str().is_empty() {
        fs::create_dir_all(&parent).map_err(|e| fail(format!("cannot create {}: {e}", parent.display())))?;
    }
    let result = write_into(m, &state, &tmp, budget).and_then(|chunks| {
        let total_bytes = chunks.iter().map(|c| c.bytes).sum();
        let manifest = Manifest {
            format: FORMAT.into(),
            format_version: FORMAT_VERSION,
            binary: binary.into(),
            binary_bytes,
            binary_crc32,
            insts: m.total_insts(),
            total_bytes,
            chunks,
            config: config.clone(),
        };
        seal(&tmp, dir, &manifest, total_bytes)
    });
    match result {
        Ok(bytes) => Ok(Written { dir: dir.to_path_buf(), bytes }),
        Err(e) => Err(fail(discard_partial(&tmp, &e))),
    }
}

fn write_into(m: &Machine, state: &MachineState, tmp: &Path, budget: Option<u64>) -> std::io::Result<Vec<Chunk>> {
    fs::create_dir(tmp)?;
    let mut chunks = Vec::new();
    let mut w = ChunkWriter::create(tmp, "pages.bin", budget)?;
    let pad = vec![0u8; PAGE_RECORD - PAGE_SIZE];
    for &vpn in &state.pages {
        w.write(&m.mem.page_data(vpn).expect("a listed page is resident"))?;
        w.write(&pad)?;
    }
    let (c, budget) = w.finish()?;
    chunks.push(c);
    let mut budget = budget;
    if let Some(client) = m.net.as_ref().and_then(|n| n.client.as_ref()) {
        let (_, acked, dense) = client.save().map_err(std::io::Error::other)?;
        let mut w = ChunkWriter::create(tmp, "client_versions.bin", budget)?;
        for bytes in acked.le_blocks() {
            w.write(&bytes)?;
        }
        let (c, b) = w.finish()?;
        chunks.push(c);
        budget = b;
        if let Some(d) = dense {
            let mut w = ChunkWriter::create(tmp, "client_buckets.bin", budget)?;
            w.write(d)?;
            let (c, b) = w.finish()?;
            chunks.push(c);
            budget = b;
        }
    }
    let text = serde_json::to_vec(state).map_err(std::io::Error::other)?;
    let mut w = ChunkWriter::create(tmp, "state.json", budget)?;
    w.write(&text)?;
    chunks.push(w.finish()?.0);
    Ok(chunks)
}

fn capture(m: &Machine) -> Result<MachineState, String> {
    if !m.stat_dumps.is_empty() {
        return Err("the guest has taken STATS_DUMP snapshots (not saved)".into());
    }
    let mut nics = Vec::new();
    let mut measure_insts = None;
    let mut client = None;
    if let (Some(net), Some(bus)) = (m.net.as_deref(), DeviceBus::of(&m.mem)) {
        if net.nics.iter().any(|n| n.fifos.iter().any(|f| !f.is_empty())) {
            return Err("frames are in flight in the NICs".into());
        }
        for (nic, regs) in net.nics.iter().zip(&bus.nics) {
            nics.push(NicState {
                regs: regs.clone(),
                port_stats: nic.port_stats.clone(),
                port_base: nic.port_base.clone(),
                queue_base: nic.queue_base.clone(),
            });
        }
        measure_insts = net.measure_insts;
        if let Some(c) = &net.client {
            client = Some(c.save()?.0);
        }
    }
    let r = &m.mem.regions;
    let (reservations, prot) = m.mem.saved_state();
    Ok(MachineState {
        harts: m.harts.clone(),
        stdout: m.process.stdout.clone(),
        stderr: m.process.stderr.clone(),
        group_exit: m.process.group_exit,
        mmap_low: m.process.mmap_low,
        rng: m.process.rng,
        roi_begin: m.roi_begin,
        roi_end: m.roi_end,
        stats_dumps: m.stats_dumps,
        stats_resets: m.stats_resets,
        next_turn: m.next_turn,
        elf: r.elf.clone(),
        heap_start: r.heap_start,
        brk: r.brk,
        mmaps: r.mmaps.iter().map(|(&a, &b)| (a, b)).collect(),
        stacks: r.stacks.clone(),
        pages_touched: m.mem.pages_touched,
        pages: m.mem.page_numbers(),
        nics,
        measure_insts,
        client,
        numa: Some(m.process.numa.clone()),
        huge: m.process.huge.clone(),
        huge_heap: m.process.huge_heap.clone(),
        fs: Some(m.process.fs.clone()),
        reservations: Some(reservations),
        prot: Some(prot),
        clear_child_tid: Some(m.process.threads.clear_child_tid.clone()),
    })
}

/// The value at a dotted path of a configuration (lists: every element's field, as a list).
fn at(config: &Value, path: &str) -> Value {
    let mut cur = vec![config.clone()];
    for key in path.split('.').filter(|k| !k.is_empty()) {
        cur = cur
            .into_iter()
            .flat_map(|v| match v {
                Value::Array(items) => items.into_iter().map(|x| x.get(key).cloned().unwrap_or(Value::Null)).collect(),
                other => vec![other.get(key).cloned().unwrap_or(Value::Null)],
            })
            .collect();
    }
    if cur.len() == 1 {
        cur.pop().unwrap()
    } else {
        Value::Array(cur)
    }
}

/// The value at `path` that a restore compares: `at`, less the `BY_CONTENT` fields under it (the prefix `workload`
/// is compared as a whole too).
fn matched(config: &Value, path: &str) -> Value {
    let mut value = at(config, path);
    for field in BY_CONTENT {
        if let (Some(rest), Value::Object(fields)) =
            (field.strip_prefix(path).and_then(|r| r.strip_prefix('.')), &mut value)
        {
            fields.remove(rest);
        }
    }
    value
}

/// The dotted paths of `MUST_MATCH` in these configurations, a prefix expanded to every field under it (each named
/// on its own) and then itself.
fn must_match_paths(configs: &[&Value]) -> Vec<String> {
    let mut paths: Vec<String> = Vec::new();
    for path in MUST_MATCH.iter().chain(CLIENT_MUST_MATCH) {
        match path.strip_suffix('.') {
            Some(prefix) => {
                let mut keys: Vec<String> = configs
                    .iter()
                    .filter_map(|c| at(c, prefix).as_object().map(|o| o.keys().cloned().collect::<Vec<_>>()))
                    .flatten()
                    .collect();
                keys.sort();
                keys.dedup();
                paths.extend(
                    keys.into_iter().map(|k| format!("{prefix}.{k}")).filter(|p| !BY_CONTENT.contains(&p.as_str())),
                );
                paths.push(prefix.to_string());
            }
            None => paths.push(path.to_string()),
        }
    }
    paths
}

/// The first parameter on which `now` may not differ from the checkpoint's configuration `then`.
pub fn incompatibility(then: &Value, now: &Value) -> Option<String> {
    for name in &must_match_paths(&[then, now]) {
        let (a, b) = (matched(then, name), matched(now, name));
        if a != b {
            return Some(format!(
                "System.{name} is {b} here but {a} in the checkpoint: a restored run may change only timing and the \
                 client's measured phase"
            ));
        }
    }
    None
}

/// What a checkpoint of `config` holds that a restore may not change: {dotted path: value} over `MUST_MATCH`.
/// Two configurations with equal identities can restore each other's checkpoints (with the same binary); a sweep
/// groups its points by it so that each data set is loaded once.
pub fn identity(config: &Value) -> Value {
    Value::Object(must_match_paths(&[config]).into_iter().map(|p| (p.clone(), matched(config, &p))).collect())
}

fn read_manifest(dir: &Path) -> Result<Manifest, String> {
    if !dir.is_dir() {
        return Err("no such directory".into());
    }
    let text = fs::read(dir.join("manifest.json")).map_err(|_| "not a checkpoint (no manifest.json)".to_string())?;
    let value: Value = serde_json::from_slice(&text).map_err(|e| format!("not a checkpoint (manifest.json: {e})"))?;
    if value.get("format").and_then(Value::as_str) != Some(FORMAT) {
        return Err("not a checkpoint (manifest.json names no kvsim checkpoint format)".into());
    }
    let version = value.get("format_version").and_then(Value::as_u64).unwrap_or(0);
    if version != FORMAT_VERSION as u64 {
        return Err(format!("format version {version}, this engine reads version {FORMAT_VERSION}"));
    }
    serde_json::from_value(value).map_err(|e| format!("manifest.json is corrupt: {e}"))
}

/// Read chunk `name` whole, checking its size and checksums.
fn read_chunk(dir: &Path, man: &Manifest, name: &str) -> Result<Option<Vec<u8>>, String> {
    let Some(chunk) = man.chunks.iter().find(|c| c.name == name) else { return Ok(None) };
    let mut data = Vec::with_capacity(chunk.bytes as usize);
    File::open(dir.join(name))
        .and_then(|mut f| f.read_to_end(&mut data))
        .map_err(|e| format!("cannot read {name}: {e}"))?;
    check(chunk, &data)?;
    Ok(Some(data))
}

/// The client's versions chunk (4 bytes an item: the largest after the pages), read 1 MiB at a time into the
/// client's compact form, each checksum block's CRC-32 accumulated as it is read (the file's u32 array, 768 MiB at
/// the paper's 192 Mi items, is never held).
fn read_versions(dir: &Path, man: &Manifest) -> Result<Versions, String> {
    let name = "client_versions.bin";
    let chunk = man.chunks.iter().find(|c| c.name == name).ok_or_else(|| format!("no {name}"))?;
    let mut f = File::open(dir.join(name)).map_err(|e| format!("cannot read {name}: {e}"))?;
    let len = f.metadata().map_err(|e| format!("cannot read {name}: {e}"))?.len();
    if len != chunk.bytes || len % 4 != 0 || len.div_ceil(CHECKSUM_BLOCK).max(1) != chunk.crc32.len() as u64 {
        return Err(format!("{name} has {len} bytes, the manifest says {} (truncated?)", chunk.bytes));
    }
    let mut acked = Versions::new(len / 4);
    let mut buf = vec![0u8; 1 << 20];
    let (mut hasher, mut done, mut block) = (crc32fast::Hasher::new(), 0u64, 0usize);
    loop {
        let in_block = done % CHECKSUM_BLOCK;
        let n = (buf.len() as u64).min(len - done).min(CHECKSUM_BLOCK - in_block) as usize;
        f.read_exact(&mut buf[..n]).map_err(|e| format!("cannot read {name}: {e}"))?;
        hasher.update(&buf[..n]);
        for (k, v) in buf[..n].chunks_exact(4).enumerate() {
            acked.set(done / 4 + k as u64, u32::from_le_bytes(v.try_into().unwrap()));
        }
        done += n as u64;
        if done % CHECKSUM_BLOCK == 0 || done == len {
            if std::mem::take(&mut hasher).finalize() != chunk.crc32[block] {
                return Err(format!("{name} is corrupt: block {block} fails its checksum"));
            }
            block += 1;
        }
        if done == len {
            return Ok(acked);
        }
    }
}

pub(crate) fn check(chunk: &Chunk, data: &[u8]) -> Result<(), String> {
    if data.len() as u64 != chunk.bytes {
        return Err(format!("{} has {} bytes, the manifest says {} (truncated?)", chunk.name, data.len(), chunk.bytes));
    }
    let got = block_crcs(data);
    if let Some(i) = (0..got.len()).find(|&i| chunk.crc32.get(i) != Some(&got[i])) {
        return Err(format!("{} is corrupt: block {i} fails its checksum", chunk.name));
    }
    Ok(())
}

/// Restore the checkpoint `dir` into `m`, just built from configuration `config` (JSON) running `binary`.
pub fn restore(m: &mut Machine, config: &Value, binary: &str, dir: &Path) -> Result<(), String> {
    let fail = |e: String| format!("System.restore_from = {}: {e}", dir.display());
    let man = read_manifest(dir).map_err(fail)?;
    let (bytes, crc) = file_crc(binary).map_err(fail)?;
    if (bytes, crc) != (man.binary_bytes, man.binary_crc32) {
        return Err(fail(format!(
            "the checkpoint was taken running another binary ({}, CRC-32 {:#010x}; this run's {binary} has {crc:#010x})",
            man.binary, man.binary_crc32
        )));
    }
    if let Some(why) = incompatibility(&man.config, config) {
        return Err(fail(why));
    }
    let state_bytes = read_chunk(dir, &man, "state.json").map_err(fail)?.ok_or_else(|| fail("no state.json".into()))?;
    let st: MachineState =
        serde_json::from_slice(&state_bytes).map_err(|e| fail(format!("state.json is corrupt: {e}")))?;
    let pages = man.chunks.iter().find(|c| c.name == "pages.bin").ok_or_else(|| fail("no pages.bin".into()))?;
    let file = File::open(dir.join("pages.bin")).map_err(|e| fail(format!("cannot open pages.bin: {e}")))?;
    // SAFETY: mapped privately: this process's stores never reach the file; the checkpoint is not modified
    // while runs use it (it is never rewritten: a new checkpoint needs a new directory).
    let map = unsafe { memmap2::MmapOptions::new().map_copy(&file) }
        .map_err(|e| fail(format!("cannot map pages.bin: {e}")))?;
    if map.len() as u64 != pages.bytes {
        return Err(fail(format!("pages.bin has {} bytes, the manifest says {} (truncated?)", map.len(), pages.bytes)));
    }
    // A run touches the page file at random (the index and log pages of the items its requests name). Without
    // this hint the kernel reads ahead on every fault that misses the page cache: restoring the paper's 192 Mi
    // items (a 24 GB file, more than this host's page cache) read 182 GB from disk in one probe's first 9 min
    // (its read_bytes). A hint only: a kernel that refuses it reads more, nothing else changes.
    let _ = map.advise(memmap2::Advice::Random);
    // The page file's checksums are checked by a thread of its own reading the file (not the private mapping,
    // which the run modifies), so the run starts at once; its result is held back until the check passes. A file
    // this process has seen pass, unchanged since, is not read again (page_check.rs).
    let page_check = crate::page_check::start(&file, dir.join("pages.bin"), pages.crc32.clone(), fail(String::new()))?;
    if st.harts.len() != m.harts.len() || st.nics.len() != DeviceBus::of(&m.mem).map_or(0, |d| d.nics.len()) {
        return Err(fail("the checkpoint has another hart or NIC count".into()));
    }
    if let Some(saved) = st.numa.as_ref().filter(|n| n.sockets() != m.process.numa.sockets()) {
        let (had, has) = (saved.sockets(), m.process.numa.sockets());
        return Err(fail(format!("the checkpoint's NUMA map has {had} sockets, this system has {has}")));
    }
    let client = match st.client {
        Some(cs) => {
            let acked = read_versions(dir, &man).map_err(fail)?;
            let dense = read_chunk(dir, &man, "client_buckets.bin").map_err(fail)?;
            Some((cs, acked, dense))
        }
        None => None,
    };
    m.mem.restore_pages(&st.pages, map).map_err(|e| fail(format!("pages.bin: {e}")))?;
    m.page_check = page_check;
    m.mem.pages_touched = st.pages_touched;
    if let (Some(resv), Some(prot)) = (st.reservations, st.prot) {
        m.mem.restore_state(resv, prot).map_err(|e| fail(format!("state.json: {e}")))?;
    }
    if let Some(tids) = st.clear_child_tid {
        if tids.len() != m.process.threads.clear_child_tid.len() {
            return Err(fail("state.json: a clear-child-tid word per hart expected".into()));
        }
        m.process.threads.clear_child_tid = tids;
    }
    let r = &mut m.mem.regions;
    (r.elf, r.heap_start, r.brk, r.stacks) = (st.elf, st.heap_start, st.brk, st.stacks);
    r.mmaps = st.mmaps.into_iter().collect();
    for (h, saved) in m.harts.iter_mut().zip(st.harts) {
        let clock = h.clock;
        *h = saved;
        h.clock = clock;
    }
    (m.process.stdout, m.process.stderr, m.process.group_exit, m.process.mmap_low, m.process.rng) =
        (st.stdout, st.stderr, st.group_exit, st.mmap_low, st.rng);
    (m.roi_begin, m.roi_end, m.stats_dumps, m.stats_resets) =
        (st.roi_begin, st.roi_end, st.stats_dumps, st.stats_resets);
    m.next_turn = st.next_turn;
    if let Some(fs) = st.fs {
        m.process.fs = fs;
    }
    if let Some(numa) = st.numa {
        m.process.numa = numa;
    }
    m.process.huge = st.huge;
    m.process.huge_heap = st.huge_heap;
    if let (Some(net), Some(bus)) = (m.net.as_deref_mut(), DeviceBus::of_mut(&mut m.mem)) {
        for ((nic, regs), saved) in net.nics.iter_mut().zip(bus.nics.iter_mut()).zip(st.nics) {
            // New registers: a count of stores that no pass over the queues saw (`NicRegs::stores`).
            let stores = regs.stores + 1;
            *regs = saved.regs;
            regs.stores = stores;
            (nic.port_stats, nic.port_base, nic.queue_base) = (saved.port_stats, saved.port_base, saved.queue_base);
        }
        net.measure_insts = st.measure_insts;
        match (net.client.as_mut(), client) {
            (Some(c), Some((cs, acked, dense))) => c.restore(cs, acked, dense).map_err(fail)?,
            (None, None) => {}
            _ => return Err(fail("the checkpoint's client and this run's disagree".into())),
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sim::tests::run_words;
    use kvsim_isa::asm::*;

    fn scratch(name: &str) -> PathBuf {
        let dir = std::env::temp_dir().join(format!("kvsim-ckpt-{name}-{}", std::process::id()));
        let _ = fs::remove_dir_all(&dir);
        fs::create_dir_all(&dir).unwrap();
        dir
    }

    /// A machine that stored to a page, a stand-in binary, and a scratch folder.
    fn setup(name: &str) -> (Machine, String, PathBuf) {
        let m = run_words(&[li(5, 77), sw(5, 2, -8)], &[]);
        let dir = scratch(name);
        let binary = dir.join("binary");
        fs::write(&binary, b"not an ELF, only hashed").unwrap();
        (m, binary.display().to_string(), dir)
    }

    #[test]
    fn a_disk_that_fills_leaves_no_partial_checkpoint() {
        let (m, binary, dir) = setup("full");
        let target = dir.join("ck");
        let err = write(&m, &Value::Null, &binary, &target, Some(PAGE_RECORD as u64 + 100)).err().unwrap();
        assert!(err.contains("No space left on device") && err.contains("partial checkpoint was removed"), "{err}");
        let left: Vec<_> = fs::read_dir(&dir).unwrap().map(|e| e.unwrap().file_name()).collect();
        assert_eq!(left, vec![std::ffi::OsString::from("binary")], "only the binary remains");
        // With room, the same checkpoint is written whole and reports its size.
        let w = write(&m, &Value::Null, &binary, &target, None).unwrap();
        let on_disk: u64 = fs::read_dir(&target).unwrap().map(|e| e.unwrap().metadata().unwrap().len()).sum();
        assert_eq!(w.bytes, on_disk);
        assert!(write(&m, &Value::Null, &binary, &target, None).err().unwrap().contains("already exists"));
        fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn a_restore_maps_the_pages_and_stores_stay_private() {
        let (m, binary, dir) = setup("cow");
        let target = dir.join("ck");
        write(&m, &Value::Null, &binary, &target, None).unwrap();
        let before = fs::read(target.join("pages.bin")).unwrap();
        let mut r = run_words(&[li(5, 1)], &[]);
        restore(&mut r, &Value::Null, &binary, &target).unwrap();
        let sp = m.harts[0].x[2];
        assert_eq!(r.mem.load::<4>(sp - 8).unwrap(), 77);
        assert_eq!((r.harts[0].pc, r.harts[0].x[5], r.harts[0].cnt), (m.harts[0].pc, 77, m.harts[0].cnt));
        r.mem.store::<4>(0, sp - 8, 5).unwrap();
        assert_eq!(r.mem.load::<4>(sp - 8).unwrap(), 5);
        assert_eq!(fs::read(target.join("pages.bin")).unwrap(), before, "the page file is never written");
        drop(r); // frees heap pages only
        fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn packed_pages_write_the_same_checkpoint_and_restore_into_packing() {
        let (mut m, binary, dir) = setup("packed");
        write(&m, &Value::Null, &binary, &dir.join("whole"), None).unwrap();
        m.mem.limit_unpacked(1).unwrap(); // the stack page is in the software TLB: a second chance
        m.mem.limit_unpacked(1).unwrap();
        let c = m.mem.packing_counts();
        assert!(c.packed > 0 && c.unpacked <= 1, "{c:?}");
        write(&m, &Value::Null, &binary, &dir.join("packed"), None).unwrap();
        for chunk in ["pages.bin", "state.json"] {
            let (a, b) = (fs::read(dir.join("whole").join(chunk)).unwrap(), fs::read(dir.join("packed").join(chunk)));
            assert!(a == b.unwrap(), "{chunk} differs");
        }
        // A restore replaces every page, packed or not, by the file's (which are never packed).
        let mut r = run_words(&[li(5, 1)], &[]);
        r.mem.limit_unpacked(1).unwrap();
        restore(&mut r, &Value::Null, &binary, &dir.join("packed")).unwrap();
        assert_eq!(r.mem.packing_counts().packed, 0);
        assert_eq!(r.mem.load::<4>(m.harts[0].x[2] - 8).unwrap(), 77);
        assert_eq!(r.mem.page_numbers(), m.mem.page_numbers());
        fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn versions_are_read_across_checksum_blocks() {
        let dir = scratch("versions");
        let items = CHECKSUM_BLOCK / 4 + 3;
        let mut v = Versions::new(items);
        for i in [0, 5, CHECKSUM_BLOCK / 4 - 1, CHECKSUM_BLOCK / 4, items - 1] {
            v.set(i, 1);
        }
        v.set(7, 9);
        v.set(items - 2, 4);
        let mut w = ChunkWriter::create(&dir, "client_versions.bin", None).unwrap();
        for bytes in v.le_blocks() {
            w.write(&bytes).unwrap();
        }
        let (chunk, _) = w.finish().unwrap();
        assert_eq!(chunk.crc32.len(), 2);
        let man = Manifest {
            format: FORMAT.into(),
            format_version: FORMAT_VERSION,
            binary: String::new(),
            binary_bytes: 0,
            binary_crc32: 0,
            insts: 0,
            total_bytes: chunk.bytes,
            chunks: vec![chunk],
            config: Value::Null,
        };
        assert_eq!(read_versions(&dir, &man).unwrap(), v);
        // A byte flipped in the second block is found there.
        let path = dir.join("client_versions.bin");
        let mut data = fs::read(&path).unwrap();
        data[CHECKSUM_BLOCK as usize + 4] ^= 1;
        fs::write(&path, &data).unwrap();
        let err = read_versions(&dir, &man).unwrap_err();
        assert!(err.contains("block 1 fails its checksum"), "{err}");
        fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn numa_placements_survive_a_checkpoint() {
        let machine = |sockets: &[u16]| {
            let mut cfg = crate::sim::EngineConfig::with_binary("/t");
            cfg.harts = sockets.len() as u64;
            cfg.hart_socket = sockets.to_vec();
            crate::sim::tests::machine_with(&bytes(&[nop()]), &cfg)
        };
        let (_, binary, dir) = setup("numa");
        let mut m = machine(&[0, 1]);
        m.process.numa.place(0x10_0000_0000, 0x3000, 1).unwrap();
        let first = m.os().alloc_on(5000, 0, 1);
        let packed = m.os().alloc_on(64, 0, 1);
        let page = first + 5056 - (2 << 20);
        let target = dir.join("ck");
        write(&m, &Value::Null, &binary, &target, None).unwrap();
        let mut r = machine(&[0, 1]);
        assert_ne!(r.process.numa, m.process.numa);
        restore(&mut r, &Value::Null, &binary, &target).unwrap();
        assert_eq!(r.process.numa, m.process.numa);
        // So do the hugepage allocations (the restored run's timing model maps them with 2 MB pages).
        assert_eq!(r.process.huge, vec![(page, page + (2 << 20))]);
        // And the socket's heap: the restored run's next block is carved right below the last one, and a large one
        // grows the heap by the page below, contiguously.
        assert_eq!((packed, r.process.huge_heap.clone()), (first - 64, vec![(0, 0), (page, first - 64)]));
        assert_eq!(r.os().alloc_on(64, 0, 1), first - 128);
        assert_eq!(r.os().alloc_on(2 << 20, 4096, 1), page - 8192, "the next 4 KB boundary 2 MB below");
        assert_eq!(r.process.huge.last(), Some(&(page - (2 << 20), page)));
        assert_eq!(r.process.numa.socket_of(0x10_0000_2fff), 1);
        // Another socket count is refused, naming both.
        let err = restore(&mut machine(&[0, 0]), &Value::Null, &binary, &target).unwrap_err();
        assert!(err.contains("NUMA map has 2 sockets, this system has 1"), "{err}");
        fs::remove_dir_all(&dir).unwrap();
    }

    /// Rewrite a checkpoint's state.json through `edit`, as an older engine would have written it.
    fn rewrite_state(target: &Path, edit: impl FnOnce(&mut Value)) {
        let mut state: Value = serde_json::from_slice(&fs::read(target.join("state.json")).unwrap()).unwrap();
        edit(&mut state);
        let bytes = serde_json::to_vec(&state).unwrap();
        fs::write(target.join("state.json"), &bytes).unwrap();
        let mut man: Value = serde_json::from_slice(&fs::read(target.join("manifest.json")).unwrap()).unwrap();
        let chunk = man["chunks"].as_array_mut().unwrap().iter_mut().find(|c| c["name"] == "state.json").unwrap();
        chunk["bytes"] = bytes.len().into();
        chunk["crc32"] = serde_json::json!(block_crcs(&bytes));
        fs::write(target.join("manifest.json"), serde_json::to_vec(&man).unwrap()).unwrap();
    }

    #[test]
    fn older_checkpoints_restore_their_hugepage_heap_or_start_a_new_one() {
        let machine = || {
            let mut cfg = crate::sim::EngineConfig::with_binary("/t");
            (cfg.harts, cfg.hart_socket) = (2, vec![0, 1]);
            crate::sim::tests::machine_with(&bytes(&[nop()]), &cfg)
        };
        let (_, binary, dir) = setup("oldheap");
        let mut m = machine();
        let first = m.os().alloc_on(4096, 0, 0);
        let page = first + 4096 - (2 << 20);
        // Session 7's engine packed blocks upwards from the page's start: its heap state [next free byte, end of the
        // page) is the free space, so blocks are carved from its end down; the heap does not grow from an unaligned
        // low end, so a block that does not fit starts a new run of pages.
        let target = dir.join("packed");
        write(&m, &Value::Null, &binary, &target, None).unwrap();
        rewrite_state(&target, |st| st["huge_heap"] = serde_json::json!([[page + 4096, page + (2 << 20)]]));
        let mut r = machine();
        restore(&mut r, &Value::Null, &binary, &target).unwrap();
        assert_eq!(r.os().alloc_on(64, 0, 0), page + (2 << 20) - 64);
        let low = r.process.mmap_low;
        assert_eq!(r.os().alloc_on(2 << 20, 0, 0), low - (2 << 20));
        // Before session 7 there was no heap state: the next block starts a new run of pages.
        let target = dir.join("none");
        write(&m, &Value::Null, &binary, &target, None).unwrap();
        rewrite_state(&target, |st| {
            st.as_object_mut().unwrap().remove("huge_heap").unwrap();
        });
        let mut r = machine();
        restore(&mut r, &Value::Null, &binary, &target).unwrap();
        assert!(r.process.huge_heap.is_empty());
        assert_eq!(r.os().alloc_on(64, 0, 0), page - 64);
        fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn open_files_and_the_scratch_tree_survive_a_checkpoint() {
        use kvsim_os::fs::flags::{AT_FDCWD, O_CREAT, O_WRONLY};
        let (_, binary, dir) = setup("files");
        let mut cfg = crate::sim::EngineConfig::with_binary("/t");
        cfg.fs.scratch = Some("/out".into());
        cfg.fs.scratch_size = 1 << 20;
        let mut m = crate::sim::tests::machine_with(&bytes(&[nop()]), &cfg);
        let fd = m.process.fs.openat(AT_FDCWD, "/out/log", O_WRONLY | O_CREAT, 0o644, 0).unwrap() as i64;
        m.process.fs.write(fd, b"before ", None, 0).unwrap();
        let target = dir.join("ck");
        write(&m, &Value::Null, &binary, &target, None).unwrap();
        let mut r = crate::sim::tests::machine_with(&bytes(&[nop()]), &cfg);
        restore(&mut r, &Value::Null, &binary, &target).unwrap();
        r.process.fs.write(fd, b"after", None, 0).unwrap();
        assert_eq!(r.process.fs.scratch_files(), vec![("/out/log".to_string(), b"before after".to_vec())]);
        fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn configurations_with_equal_identities_are_compatible() {
        let then = serde_json::json!({"harts": 4, "caches": {"llc": {"size": 1}}, "workload": {"argv": ["a"]},
                                      "client": {"items": 8, "get_ratio": 0.5}});
        let mut timing = then.clone();
        timing["caches"]["llc"]["size"] = 2.into();
        timing["client"]["get_ratio"] = 0.9.into();
        assert_eq!(identity(&then), identity(&timing));
        assert_eq!(identity(&then)["workload.argv"], serde_json::json!(["a"]));
        for (path, value) in [("harts", serde_json::json!(8)), ("workload", serde_json::json!({"argv": ["b"]}))] {
            let mut other = then.clone();
            other[path] = value;
            assert_ne!(identity(&then), identity(&other), "{path}");
            assert!(incompatibility(&then, &other).is_some());
        }
    }

    #[test]
    fn parameters_that_must_match_are_named() {
        let then = serde_json::json!({"harts": 4, "caches": {"llc": {"size": 1}}, "workload": {"argv": ["a"]},
                                      "nics": [{"queues": 4, "rx_fifo": 1}], "client": {"items": 8, "get_ratio": 0.5}});
        let mut now = then.clone();
        now["caches"]["llc"]["size"] = 2.into();
        now["client"]["get_ratio"] = 0.9.into();
        now["nics"][0]["rx_fifo"] = 9.into();
        assert_eq!(incompatibility(&then, &now), None);
        for (path, value) in
            [("harts", serde_json::json!(8)), ("client", serde_json::json!({"items": 9, "get_ratio": 0.5}))]
        {
            let mut bad = then.clone();
            bad[path] = value;
            let why = incompatibility(&then, &bad).unwrap();
            assert!(why.starts_with(&format!("System.{path}")), "{why}");
        }
        let mut bad = then.clone();
        bad["workload"]["argv"] = serde_json::json!(["b"]);
        assert!(incompatibility(&then, &bad).unwrap().starts_with("System.workload.argv is [\"b\"] here but [\"a\"]"));
        bad = then.clone();
        bad["nics"][0]["queues"] = 2.into();
        assert!(incompatibility(&then, &bad).unwrap().starts_with("System.nics.queues"));
    }

    #[test]
    fn the_binary_is_compared_by_content_not_by_path() {
        let then = serde_json::json!({"harts": 4, "workload": {"binary": "/a/kvs-server", "argv": ["a"]}});
        let mut moved = then.clone();
        moved["workload"]["binary"] = "/another/checkout/kvs-server".into();
        assert_eq!(incompatibility(&then, &moved), None);
        assert_eq!(identity(&then), identity(&moved));
        assert!(identity(&then).get("workload.binary").is_none());
        assert_eq!(identity(&then)["workload"], serde_json::json!({"argv": ["a"]}));
        moved["workload"]["argv"] = serde_json::json!(["b"]);
        assert!(incompatibility(&then, &moved).unwrap().starts_with("System.workload.argv"));
    }
}
