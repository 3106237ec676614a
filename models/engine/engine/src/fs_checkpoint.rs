//! Checkpoints of a booted full-system machine (System.os_level = 'fs'): boot functionally once, then measure from
//! the checkpoint, functionally or in detail, as often as needed.
//!
//! A run with System.checkpoint_to and the ghost client writes one when the client's bulk load is over (the kernel
//! booted, /init's server up, its network device up, every item stored and acknowledged, nothing in flight at the
//! client; over TCP every connection established and quiet, its sequence numbers saved with the client), then
//! carries on. The directory holds `manifest.json` (format and version, the resolved
//! configuration, the kernel's and initramfs's sizes and CRC-32s, every chunk's size and a CRC-32 per 64 MiB block),
//! `state.json` (the machine's snapshot, `kvsim_os::full_system::snapshot`, the resident pages' numbers, the
//! client's and the wire's state), `pages.bin` (every resident page of guest memory, `PAGE_RECORD` bytes each, in
//! page order, as SE checkpoints write them) and `client_versions.bin` (the client's acknowledged version of every
//! item). It is written under a temporary name beside the target and renamed when complete. Timing state (caches,
//! cores, DRAM) is not saved: a detailed run restored from it starts its timing models at the checkpoint's time.
//!
//! A restore builds the machine from the new configuration as usual, checks the checkpoint against it (the same
//! kernel and initramfs, and the parameters of `MUST_MATCH`), checks every chunk's checksums, maps `pages.bin`
//! privately (a store copies one host page) and overwrites the state.

use std::fs::{self, File};
use std::io::Read;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use serde_json::Value;

use kvsim_base::abi::PAGE_SIZE as GUEST_PAGE;
use kvsim_isa::memory::PAGE_RECORD;
use kvsim_os::full_system::snapshot::Snapshot;
use kvsim_os::full_system::Machine;

use crate::checkpoint::{
    check, discard_partial, file_crc, seal, Chunk, ChunkWriter, CHECKSUM_BLOCK, CLIENT_MUST_MATCH,
};
use crate::fs_net::{FsNet, FsNetState};

pub const FORMAT: &str = "kvsim-fs-checkpoint";
pub const FORMAT_VERSION: u32 = 1;
const PAGE_SIZE: usize = GUEST_PAGE as usize;

/// Parameters a restore must agree on (dotted paths of the resolved configuration) besides the client's data set
/// (`checkpoint::CLIENT_MUST_MATCH`): the machine the guest booted on and its command line. Anything else is timing,
/// the wire, or the client's measured phase.
const MUST_MATCH: &[&str] = &[
    "harts",
    // Functional time is instructions at this clock: the guest's timers were set against it.
    "clock",
    "full_system.entry",
    "full_system.bootargs",
    "full_system.memory",
    "client.protocol",
    "client.transport",
    // Over TCP the connections and the MSS their handshakes agreed are in the guest kernel's memory.
    "client.tcp_connections",
    "client.tcp_mss",
];

#[derive(Debug, Serialize, Deserialize)]
struct Manifest {
    format: String,
    format_version: u32,
    kernel: String,
    kernel_bytes: u64,
    kernel_crc32: u32,
    initramfs: String,
    initramfs_bytes: u64,
    initramfs_crc32: u32,
    /// Total instructions and the machine's simulated time (ps) when it was taken.
    insts: u64,
    time_ps: u64,
    total_bytes: u64,
    chunks: Vec<Chunk>,
    config: Value,
}

#[derive(Debug, Serialize, Deserialize)]
struct State {
    machine: Snapshot,
    pages: Vec<u64>,
    net: Option<FsNetState>,
}

/// Where a run writes its checkpoint, with the inputs the manifest records.
pub struct Target {
    pub dir: PathBuf,
    pub config: Value,
    pub kernel: String,
    pub initramfs: String,
}

/// A file's size and CRC-32.
type Sized32 = (u64, u32);

/// The kernel's and initramfs's (size, CRC-32); (0, 0) for no initramfs.
fn inputs(kernel: &str, initramfs: &str) -> Result<(Sized32, Sized32), String> {
    let k = file_crc(kernel)?;
    let i = if initramfs.is_empty() { (0, 0) } else { file_crc(initramfs)? };
    Ok((k, i))
}

fn at<'a>(config: &'a Value, path: &str) -> &'a Value {
    config.pointer(&format!("/{}", path.replace('.', "/"))).unwrap_or(&Value::Null)
}

/// The first parameter of `MUST_MATCH` on which `now` differs from the checkpoint's configuration `then`.
pub fn incompatibility(then: &Value, now: &Value) -> Option<String> {
    MUST_MATCH.iter().chain(CLIENT_MUST_MATCH).find(|p| at(then, p) != at(now, p)).map(|p| {
        format!(
            "System.{p} is {} here but {} in the checkpoint: a restored FS run may change only timing, the wire and \
             the client's measured phase",
            at(now, p),
            at(then, p)
        )
    })
}

/// Write the checkpoint of `m` (and of the client's side, `net`) into the new directory `t.dir`: the bytes written.
pub fn write(m: &mut Machine, net: Option<&FsNet>, t: &Target) -> Result<u64, String> {
    let dir = &t.dir;
    let fail = |e: String| format!("checkpoint {}: {e}", dir.display());
    if dir.exists() {
        return Err(fail("it already exists (a checkpoint is never overwritten)".into()));
    }
    let machine = m.snapshot().map_err(|e| fail(format!("cannot be taken now: {e}")))?;
    let saved = net.map(FsNet::save).transpose().map_err(|e| fail(format!("cannot be taken now: {e}")))?;
    let ((kernel_bytes, kernel_crc32), (initramfs_bytes, initramfs_crc32)) =
        inputs(&t.kernel, &t.initramfs).map_err(fail)?;
    let name = dir.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_else(|| "checkpoint".into());
    let tmp = dir.with_file_name(format!(".{name}.partial-{}", std::process::id()));
    if let Some(parent) = tmp.parent().filter(|p| !p.as_os_str().is_empty()) {
        fs::create_dir_all(parent).map_err(|e| fail(format!("cannot create {}: {e}", parent.display())))?;
    }
    let pages = m.mem.page_numbers();
    let result = (|| -> std::io::Result<u64> {
        fs::create_dir(&tmp)?;
        let mut chunks = Vec::new();
        let mut w = ChunkWriter::create(&tmp, "pages.bin", None)?;
        let pad = vec![0u8; PAGE_RECORD - PAGE_SIZE];
        for &p in &pages {
            w.write(&m.mem.page_data(p).expect("a listed page is resident"))?;
            w.write(&pad)?;
        }
        chunks.push(w.finish()?.0);
        let mut net_state = None;
        if let Some((st, acked, dense)) = saved {
            let mut w = ChunkWriter::create(&tmp, "client_versions.bin", None)?;
            for bytes in acked.le_blocks() {
                w.write(&bytes)?;
            }
            chunks.push(w.finish()?.0);
            if let Some(d) = dense {
                let mut w = ChunkWriter::create(&tmp, "client_buckets.bin", None)?;
                w.write(d)?;
                chunks.push(w.finish()?.0);
            }
            net_state = Some(st);
        }
        let state = State { machine, pages, net: net_state };
        let mut w = ChunkWriter::create(&tmp, "state.json", None)?;
        w.write(&serde_json::to_vec(&state).map_err(std::io::Error::other)?)?;
        chunks.push(w.finish()?.0);
        let total_bytes = chunks.iter().map(|c| c.bytes).sum();
        let manifest = Manifest {
            format: FORMAT.into(),
            format_version: FORMAT_VERSION,
            kernel: t.kernel.clone(),
            kernel_bytes,
            kernel_crc32,
            initramfs: t.initramfs.clone(),
            initramfs_bytes,
            initramfs_crc32,
            insts: m.total_insts(),
            time_ps: m.time_ps(),
            total_bytes,
            chunks,
            config: t.config.clone(),
        };
        seal(&tmp, dir, &manifest, total_bytes)
    })();
    result.map_err(|e| fail(discard_partial(&tmp, &e)))
}

fn read_manifest(dir: &Path) -> Result<Manifest, String> {
    if !dir.is_dir() {
        return Err("no such directory".into());
    }
    let text = fs::read(dir.join("manifest.json")).map_err(|_| "not a checkpoint (no manifest.json)".to_string())?;
    let value: Value = serde_json::from_slice(&text).map_err(|e| format!("not a checkpoint (manifest.json: {e})"))?;
    match value.get("format").and_then(Value::as_str) {
        Some(FORMAT) => {}
        Some(crate::checkpoint::FORMAT) => {
            return Err(
                "an SE-mode checkpoint (of a program under System.os_level = 'se'), not a full-system one".into()
            )
        }
        _ => return Err("not a checkpoint (manifest.json names no kvsim checkpoint format)".into()),
    }
    let version = value.get("format_version").and_then(Value::as_u64).unwrap_or(0);
    if version != FORMAT_VERSION as u64 {
        return Err(format!("format version {version}, this engine reads version {FORMAT_VERSION}"));
    }
    serde_json::from_value(value).map_err(|e| format!("manifest.json is corrupt: {e}"))
}

fn chunk<'a>(man: &'a Manifest, name: &str) -> Result<&'a Chunk, String> {
    man.chunks.iter().find(|c| c.name == name).ok_or_else(|| format!("no {name} in the manifest"))
}

/// Read chunk `name` whole, checking its size and checksums.
fn read_chunk(dir: &Path, man: &Manifest, name: &str) -> Result<Vec<u8>, String> {
    let c = chunk(man, name)?;
    let mut data = Vec::with_capacity(c.bytes as usize);
    File::open(dir.join(name))
        .and_then(|mut f| f.read_to_end(&mut data))
        .map_err(|e| format!("cannot read {name}: {e}"))?;
    check(c, &data)?;
    Ok(data)
}

/// Check `pages.bin` against its checksums block by block (without holding it whole), and every record's
/// `has_code` byte (0: the memory maps it as a bool).
fn check_pages(dir: &Path, c: &Chunk) -> Result<(), String> {
    let mut f = File::open(dir.join("pages.bin")).map_err(|e| format!("cannot read pages.bin: {e}"))?;
    let len = f.metadata().map_err(|e| format!("cannot read pages.bin: {e}"))?.len();
    if len != c.bytes {
        return Err(format!("pages.bin has {len} bytes, the manifest says {} (truncated?)", c.bytes));
    }
    let mut block = vec![0u8; CHECKSUM_BLOCK.min(len.max(1)) as usize];
    let mut offset = 0u64;
    while offset < len {
        let n = (len - offset).min(CHECKSUM_BLOCK) as usize;
        f.read_exact(&mut block[..n]).map_err(|e| format!("cannot read pages.bin: {e}"))?;
        let first = (PAGE_SIZE + PAGE_RECORD - offset as usize % PAGE_RECORD) % PAGE_RECORD;
        let i = (offset / CHECKSUM_BLOCK) as usize;
        if c.crc32.get(i) != Some(&crc32fast::hash(&block[..n]))
            || !(first..n).step_by(PAGE_RECORD).all(|o| block[o] == 0)
        {
            return Err(format!("pages.bin is corrupt: block {i} fails its checksum"));
        }
        offset += n as u64;
    }
    Ok(())
}

/// Restore the checkpoint `dir` into `m` (just built from configuration `config`, booting `kernel` and
/// `initramfs`) and its client side `net`.
pub fn restore(
    m: &mut Machine,
    net: Option<&mut FsNet>,
    config: &Value,
    kernel: &str,
    initramfs: &str,
    dir: &Path,
) -> Result<(), String> {
    let fail = |e: String| format!("System.restore_from = {}: {e}", dir.display());
    let man = read_manifest(dir).map_err(fail)?;
    let ((kb, kc), (ib, ic)) = inputs(kernel, initramfs).map_err(fail)?;
    if (kb, kc) != (man.kernel_bytes, man.kernel_crc32) || (ib, ic) != (man.initramfs_bytes, man.initramfs_crc32) {
        return Err(fail(format!(
            "the checkpoint was taken booting another kernel or initramfs ({} and {:?}, CRC-32 {:#010x} and \
             {:#010x}; this run's {kernel} and {initramfs:?} have {kc:#010x} and {ic:#010x})",
            man.kernel, man.initramfs, man.kernel_crc32, man.initramfs_crc32
        )));
    }
    if let Some(why) = incompatibility(&man.config, config) {
        return Err(fail(why));
    }
    let st: State = serde_json::from_slice(&read_chunk(dir, &man, "state.json").map_err(fail)?)
        .map_err(|e| fail(format!("state.json is corrupt: {e}")))?;
    let pages = chunk(&man, "pages.bin").map_err(fail)?;
    check_pages(dir, pages).map_err(fail)?;
    let file = File::open(dir.join("pages.bin")).map_err(|e| fail(format!("cannot open pages.bin: {e}")))?;
    // SAFETY: mapped privately: this process's stores never reach the file; a checkpoint is never rewritten.
    let map = unsafe { memmap2::MmapOptions::new().map_copy(&file) }
        .map_err(|e| fail(format!("cannot map pages.bin: {e}")))?;
    let client_chunks = match (&st.net, net.is_some()) {
        (Some(_), true) => {
            let versions = read_chunk(dir, &man, "client_versions.bin").map_err(fail)?;
            let dense = match man.chunks.iter().any(|c| c.name == "client_buckets.bin") {
                true => Some(read_chunk(dir, &man, "client_buckets.bin").map_err(fail)?),
                false => None,
            };
            Some((versions, dense))
        }
        (None, false) => None,
        _ => return Err(fail("the checkpoint's client and this run's disagree".into())),
    };
    m.mem.restore_pages(&st.pages, map).map_err(|e| fail(format!("pages.bin: {e}")))?;
    m.restore(st.machine).map_err(|e| fail(format!("state.json: {e}")))?;
    if let (Some(net), Some(ns), Some((v, dense))) = (net, st.net, client_chunks) {
        let acked = v.chunks_exact(4).map(|b| u32::from_le_bytes(b.try_into().unwrap())).collect();
        net.restore(ns, acked, dense).map_err(fail)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::incompatibility;

    #[test]
    fn a_restore_may_change_timing_and_the_measured_phase_but_not_the_booted_machine_or_its_data_set() {
        let then = serde_json::json!({"harts": 1, "clock": 1_000_000_000u64, "mode": "functional",
            "full_system": {"bootargs": "console=ttyS0 -- mcd", "memory": 268435456u64, "entry": "linux",
                            "link_rate": 10.0},
            "client": {"enabled": true, "items": 1024, "requests": 1, "window": 32, "get_ratio": 0.9}});
        let mut now = then.clone();
        now["mode"] = "detailed".into();
        now["client"]["requests"] = 1000.into();
        now["client"]["window"] = 1.into();
        now["client"]["get_ratio"] = 1.0.into();
        now["full_system"]["link_rate"] = 40.0.into();
        assert_eq!(incompatibility(&then, &now), None);
        for (path, value) in [("/harts", serde_json::json!(2)), ("/clock", 1_500_000_000u64.into())]
            .into_iter()
            .chain([("/full_system/bootargs", "console=ttyS0 quiet -- mcd".into()), ("/client/items", 2048.into())])
        {
            let mut bad = now.clone();
            *bad.pointer_mut(path).unwrap() = value;
            let why = incompatibility(&then, &bad).expect("refused");
            let name = path.trim_start_matches('/').replace('/', ".");
            assert!(why.starts_with(&format!("System.{name} is ")), "{why}");
        }
    }
}
