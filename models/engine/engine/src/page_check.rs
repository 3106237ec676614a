//! The check of a restored checkpoint's page file: every checksum block's CRC-32 and every page record's flag byte,
//! read from the file by a thread of its own while the run starts (the run reports nothing until it passes).
//!
//! A page file that passed is remembered for the rest of the process by its identity (device, inode, size,
//! modification and status-change times, the manifest's checksums), so the probes of a capacity point and the
//! windows after it, which restore the same file again and again, do not read it whole each time (24 GB at the
//! paper's 192 Mi items: one full read per probe). A file written since (any write moves its status-change time,
//! which no caller can set back) is checked again, and refused if it fails. A file whose status changed less than
//! `SETTLED_NS` before its check began is not remembered: file times tick coarsely (a kernel tick), so a write in
//! the same tick as an earlier one could leave them unchanged.

use std::fs::File;
use std::io::Read;
use std::os::unix::fs::MetadataExt;
use std::path::PathBuf;
use std::sync::Mutex;
use std::thread::JoinHandle;

use kvsim_isa::memory::PAGE_RECORD;

/// A checksum's span in a checkpoint's files (each file's CRC-32 per block; the manifest lists them).
pub(crate) const CHECKSUM_BLOCK: u64 = 64 << 20;
const PAGE_SIZE: usize = kvsim_base::abi::PAGE_SIZE as usize;
/// How long a file's status must have stood still before its check for a pass to be remembered (1 s: far above
/// the kernel's file-time granularity, a few ms).
const SETTLED_NS: i128 = 1_000_000_000;

/// What identifies a page file's content without reading it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Identity {
    dev: u64,
    ino: u64,
    bytes: u64,
    mtime_ns: i128,
    ctime_ns: i128,
    /// The manifest's checksums (another manifest over the same file is checked against its own).
    crc32: Vec<u32>,
}

impl Identity {
    fn of(file: &File, crc32: &[u32]) -> std::io::Result<Identity> {
        let m = file.metadata()?;
        let ns = |s: i64, n: i64| s as i128 * 1_000_000_000 + n as i128;
        Ok(Identity {
            dev: m.dev(),
            ino: m.ino(),
            bytes: m.len(),
            mtime_ns: ns(m.mtime(), m.mtime_nsec()),
            ctime_ns: ns(m.ctime(), m.ctime_nsec()),
            crc32: crc32.to_vec(),
        })
    }
}

/// Page files that passed their check in this process.
static PASSED: Mutex<Vec<Identity>> = Mutex::new(Vec::new());

fn passed(id: &Identity) -> bool {
    PASSED.lock().map(|p| p.contains(id)).unwrap_or(false)
}

fn now_ns() -> i128 {
    std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_nanos() as i128)
}

/// Check the page file `path` (open as `file`) against the manifest's checksums `expected`: None when this
/// process has already seen the same file pass, else the check's thread (errors begin with `what`).
pub(crate) fn start(
    file: &File,
    path: PathBuf,
    expected: Vec<u32>,
    what: String,
) -> Result<Option<JoinHandle<Result<(), String>>>, String> {
    let id = Identity::of(file, &expected).map_err(|e| format!("{what}cannot read pages.bin: {e}"))?;
    if passed(&id) {
        return Ok(None);
    }
    let started = now_ns();
    Ok(Some(std::thread::spawn(move || -> Result<(), String> {
        let mut f = File::open(&path).map_err(|e| format!("{what}cannot read pages.bin: {e}"))?;
        check_all(&mut f, &expected, &what)?;
        // Remembered only if the file read is the one identified (no write since) and had settled before.
        let after = Identity::of(&f, &expected).map_err(|e| format!("{what}cannot read pages.bin: {e}"))?;
        if after == id && started - id.ctime_ns >= SETTLED_NS {
            if let Ok(mut p) = PASSED.lock() {
                p.push(id);
            }
        }
        Ok(())
    })))
}

/// Every checksum block's CRC-32, and every record's `has_code` byte 0 (isa memory.rs maps it as a bool).
fn check_all(f: &mut File, expected: &[u32], what: &str) -> Result<(), String> {
    let mut block = vec![0u8; CHECKSUM_BLOCK as usize];
    for (i, want) in expected.iter().enumerate() {
        let mut got = 0;
        while got < block.len() {
            match f.read(&mut block[got..]) {
                Ok(0) => break,
                Ok(n) => got += n,
                Err(e) => return Err(format!("{what}cannot read pages.bin: {e}")),
            }
        }
        let start = i * CHECKSUM_BLOCK as usize;
        let first = (PAGE_SIZE + PAGE_RECORD - start % PAGE_RECORD) % PAGE_RECORD;
        let flags_ok = (first..got).step_by(PAGE_RECORD).all(|o| block[o] == 0);
        if crc32fast::hash(&block[..got]) != *want || (got == 0 && i > 0) || !flags_ok {
            return Err(format!("{what}pages.bin is corrupt: block {i} fails its checksum"));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use std::fs;

    use serde_json::Value;

    use crate::checkpoint::{restore, write};
    use crate::sim::tests::run_words;
    use kvsim_isa::asm::*;

    #[test]
    fn a_page_file_that_passed_is_not_read_again_until_it_changes() {
        let m = run_words(&[li(5, 77), sw(5, 2, -8)], &[]);
        let dir = std::env::temp_dir().join(format!("kvsim-pagecheck-{}", std::process::id()));
        let _ = fs::remove_dir_all(&dir);
        fs::create_dir_all(&dir).unwrap();
        let binary = dir.join("binary");
        fs::write(&binary, b"not an ELF, only hashed").unwrap();
        let binary = binary.display().to_string();
        let target = dir.join("ck");
        write(&m, &Value::Null, &binary, &target, None).unwrap();
        // A file is remembered only once its times have settled (SETTLED_NS).
        std::thread::sleep(std::time::Duration::from_millis(1100));
        let restored = || {
            let mut r = run_words(&[li(5, 1)], &[]);
            restore(&mut r, &Value::Null, &binary, &target).map(|()| r)
        };
        let mut first = restored().unwrap();
        assert!(first.page_check.is_some(), "the first restore checks the page file");
        first.finish_page_check().unwrap();
        let second = restored().unwrap();
        assert!(second.page_check.is_none(), "a file that passed, unchanged, is not read again");
        // One byte of the page file changed in place (same size, same inode): checked again, and refused.
        let pages = target.join("pages.bin");
        let mut bytes = fs::read(&pages).unwrap();
        let k = bytes.len() / 2;
        bytes[k] ^= 0x5a;
        fs::OpenOptions::new()
            .write(true)
            .open(&pages)
            .and_then(|mut f| std::io::Write::write_all(&mut f, &bytes))
            .unwrap();
        let mut third = restored().unwrap();
        assert!(third.page_check.is_some(), "a file written since its check is checked again");
        let err = third.finish_page_check().expect_err("a corrupted page file is refused").to_string();
        assert!(err.contains("pages.bin is corrupt: block 0 fails its checksum"), "{err}");
        fs::remove_dir_all(&dir).unwrap();
    }
}
