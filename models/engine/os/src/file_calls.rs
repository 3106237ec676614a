//! The Linux file calls: each copies the guest's paths and buffers in or out and leaves the work to the file system
//! (fs/), whose errors are Linux's. Standard output and error go to the run's output.

use kvsim_base::abi::PAGE_SIZE;

use crate::fs::errno::{EFAULT, EINVAL, ENAMETOOLONG, ENOENT, ERANGE};
use crate::fs::flags::AT_SYMLINK_NOFOLLOW;
use crate::fs::tree::PATH_MAX;
use crate::fs::{AttrChange, AttrTarget, FcntlResult};
use crate::process::Linux;

/// Numbers of the file calls (asm-generic/unistd.h).
pub mod nr {
    pub const GETCWD: u64 = 17;
    pub const DUP: u64 = 23;
    pub const DUP3: u64 = 24;
    pub const FCNTL: u64 = 25;
    pub const MKDIRAT: u64 = 34;
    pub const UNLINKAT: u64 = 35;
    pub const RENAMEAT: u64 = 38;
    pub const FTRUNCATE: u64 = 46;
    pub const FACCESSAT: u64 = 48;
    pub const CHDIR: u64 = 49;
    pub const FCHDIR: u64 = 50;
    pub const FCHMOD: u64 = 52;
    pub const FCHMODAT: u64 = 53;
    pub const FCHOWNAT: u64 = 54;
    pub const FCHOWN: u64 = 55;
    pub const OPENAT: u64 = 56;
    pub const CLOSE: u64 = 57;
    pub const PIPE2: u64 = 59;
    pub const GETDENTS64: u64 = 61;
    pub const LSEEK: u64 = 62;
    pub const READ: u64 = 63;
    pub const WRITE: u64 = 64;
    pub const READV: u64 = 65;
    pub const WRITEV: u64 = 66;
    pub const PREAD64: u64 = 67;
    pub const PWRITE64: u64 = 68;
    pub const READLINKAT: u64 = 78;
    pub const NEWFSTATAT: u64 = 79;
    pub const FSTAT: u64 = 80;
    pub const SYNC: u64 = 81;
    pub const FSYNC: u64 = 82;
    pub const FDATASYNC: u64 = 83;
    pub const UTIMENSAT: u64 = 88;
    pub const UMASK: u64 = 166;
    pub const RENAMEAT2: u64 = 276;
    pub const STATX: u64 = 291;
    pub const FACCESSAT2: u64 = 439;
}

/// utimensat's special nanosecond values.
const UTIME_NOW: u64 = (1 << 30) - 1;
const UTIME_OMIT: u64 = (1 << 30) - 2;
/// Most iovecs one readv/writev takes (IOV_MAX).
const IOV_MAX: u64 = 1024;

fn neg(e: i64) -> u64 {
    (-e) as u64
}

/// A result for a0: the value, or -errno.
fn ret(r: Result<u64, i64>) -> u64 {
    r.unwrap_or_else(neg)
}

impl Linux<'_> {
    /// Simulated time now, in ns: the clock of file times (as clock_gettime reports it).
    fn fs_now(&self, hid: usize) -> u64 {
        self.harts[hid].time_ps() / 1000
    }

    /// A NUL-terminated path from guest memory (EFAULT, ENAMETOOLONG; a path that is not UTF-8 names nothing).
    fn guest_path(&mut self, addr: u64) -> Result<String, i64> {
        let mut bytes = Vec::new();
        let mut a = addr;
        loop {
            let chunk_len = (PAGE_SIZE - (a & (PAGE_SIZE - 1))).min(256);
            let chunk = self.mem.read_bytes(a, chunk_len).map_err(|_| EFAULT)?;
            if let Some(end) = chunk.iter().position(|&c| c == 0) {
                bytes.extend_from_slice(&chunk[..end]);
                break;
            }
            bytes.extend_from_slice(&chunk);
            if bytes.len() >= PATH_MAX {
                return Err(ENAMETOOLONG);
            }
            a += chunk_len;
        }
        String::from_utf8(bytes).map_err(|_| ENOENT)
    }

    fn put(&mut self, hid: usize, addr: u64, bytes: &[u8]) -> Result<(), i64> {
        self.mem.write_bytes(hid, addr, bytes).map_err(|_| EFAULT)
    }

    fn iovecs(&mut self, addr: u64, count: u64) -> Result<Vec<(u64, u64)>, i64> {
        if count > IOV_MAX {
            return Err(EINVAL);
        }
        let raw = self.mem.read_bytes(addr, 16 * count).map_err(|_| EFAULT)?;
        Ok(raw
            .chunks_exact(16)
            .map(|c| (u64::from_le_bytes(c[..8].try_into().unwrap()), u64::from_le_bytes(c[8..].try_into().unwrap())))
            .collect())
    }

    /// Write to descriptor `fd` (a standard stream appends to the run's output).
    fn fd_write(&mut self, hid: usize, fd: i64, bytes: &[u8], at: Option<u64>) -> Result<u64, i64> {
        match self.process.fs.console_of(fd) {
            Some(1) if at.is_none() => self.process.stdout.extend_from_slice(bytes),
            Some(_) if at.is_none() => self.process.stderr.extend_from_slice(bytes),
            _ => {
                let now = self.fs_now(hid);
                return self.process.fs.write(fd, bytes, at, now);
            }
        }
        Ok(bytes.len() as u64)
    }

    /// The file calls; None when `nr` is not one of them.
    pub fn file_call(&mut self, hid: usize, nr: u64, a: [u64; 6]) -> Option<u64> {
        let fd = a[0] as i64;
        let now = self.fs_now(hid);
        Some(ret(match nr {
            nr::OPENAT => self.guest_path(a[1]).and_then(|p| self.process.fs.openat(fd, &p, a[2], a[3] as u32, now)),
            nr::CLOSE => self.process.fs.close(fd),
            nr::READ | nr::PREAD64 => {
                let at = (nr == nr::PREAD64).then_some(a[3]);
                match self.process.fs.read(fd, a[2], at) {
                    Ok(bytes) => self.put(hid, a[1], &bytes).map(|()| bytes.len() as u64),
                    Err(e) => Err(e),
                }
            }
            nr::WRITE | nr::PWRITE64 => match self.mem.read_bytes(a[1], a[2]) {
                Ok(bytes) => self.fd_write(hid, fd, &bytes, (nr == nr::PWRITE64).then_some(a[3])),
                Err(_) => Err(EFAULT),
            },
            nr::READV => self.readv(hid, fd, a[1], a[2]),
            nr::WRITEV => self.writev(hid, fd, a[1], a[2]),
            nr::LSEEK => self.process.fs.lseek(fd, a[1] as i64, a[2]),
            nr::FSTAT => self.process.fs.fstat(fd).and_then(|st| self.put(hid, a[1], &st.to_stat()).map(|()| 0)),
            nr::NEWFSTATAT => self
                .guest_path(a[1])
                .and_then(|p| self.process.fs.stat_at(fd, &p, a[3]))
                .and_then(|st| self.put(hid, a[2], &st.to_stat()).map(|()| 0)),
            nr::STATX => self
                .guest_path(a[1])
                .and_then(|p| self.process.fs.stat_at(fd, &p, a[2]))
                .and_then(|st| self.put(hid, a[4], &st.to_statx()).map(|()| 0)),
            nr::GETDENTS64 => match self.process.fs.getdents64(fd, a[2]) {
                Ok(bytes) => self.put(hid, a[1], &bytes).map(|()| bytes.len() as u64),
                Err(e) => Err(e),
            },
            nr::READLINKAT => match self.guest_path(a[1]).and_then(|p| self.process.fs.readlinkat(fd, &p, a[3])) {
                Ok(bytes) => self.put(hid, a[2], &bytes).map(|()| bytes.len() as u64),
                Err(e) => Err(e),
            },
            nr::FACCESSAT => self.guest_path(a[1]).and_then(|p| self.process.fs.faccessat(fd, &p, a[2], 0)),
            nr::FACCESSAT2 => self.guest_path(a[1]).and_then(|p| self.process.fs.faccessat(fd, &p, a[2], a[3])),
            nr::FCNTL => match self.process.fs.fcntl(fd, a[1], a[2]) {
                Ok(FcntlResult::Value(v)) => Ok(v),
                // struct flock's l_type (a short at offset 0) becomes F_UNLCK.
                Ok(FcntlResult::NoConflictingLock) => self.put(hid, a[2], &2u16.to_le_bytes()).map(|()| 0),
                Err(e) => Err(e),
            },
            nr::DUP => self.process.fs.dup(fd, 0, false),
            nr::DUP3 => self.process.fs.dup3(fd, a[1] as i64, a[2]),
            nr::PIPE2 => match self.process.fs.pipe2(a[1]) {
                Ok((r, w)) => {
                    let mut fds = [0u8; 8];
                    fds[..4].copy_from_slice(&(r as u32).to_le_bytes());
                    fds[4..].copy_from_slice(&(w as u32).to_le_bytes());
                    match self.put(hid, a[0], &fds) {
                        Ok(()) => Ok(0),
                        Err(e) => {
                            let _ = (self.process.fs.close(r as i64), self.process.fs.close(w as i64));
                            Err(e)
                        }
                    }
                }
                Err(e) => Err(e),
            },
            nr::FTRUNCATE => self.process.fs.ftruncate(fd, a[1] as i64, now),
            nr::FSYNC | nr::FDATASYNC => self.process.fs.fsync(fd),
            nr::SYNC => Ok(0),
            nr::UNLINKAT => self.guest_path(a[1]).and_then(|p| self.process.fs.unlinkat(fd, &p, a[2], now)),
            nr::MKDIRAT => self.guest_path(a[1]).and_then(|p| self.process.fs.mkdirat(fd, &p, a[2] as u32, now)),
            nr::RENAMEAT | nr::RENAMEAT2 => {
                let flags = if nr == nr::RENAMEAT2 { a[4] } else { 0 };
                match (self.guest_path(a[1]), self.guest_path(a[3])) {
                    (Ok(old), Ok(new)) => self.process.fs.renameat2(fd, &old, a[2] as i64, &new, flags, now),
                    (Err(e), _) | (_, Err(e)) => Err(e),
                }
            }
            nr::GETCWD => {
                let mut cwd = self.process.fs.getcwd().into_bytes();
                cwd.push(0);
                if (cwd.len() as u64) > a[1] {
                    Err(ERANGE)
                } else {
                    self.put(hid, a[0], &cwd).map(|()| cwd.len() as u64)
                }
            }
            nr::CHDIR => self.guest_path(a[0]).and_then(|p| self.process.fs.chdir(&p)),
            nr::FCHDIR => self.process.fs.fchdir(fd),
            nr::UMASK => Ok(self.process.fs.set_umask(a[0] as u32) as u64),
            nr::FCHMOD => self.process.fs.set_attr(AttrTarget::Fd(fd), AttrChange::Mode(a[1] as u32)),
            nr::FCHOWN => self.process.fs.set_attr(AttrTarget::Fd(fd), AttrChange::Owner),
            nr::FCHMODAT | nr::FCHOWNAT => {
                let (flags, change) =
                    if nr == nr::FCHMODAT { (0, AttrChange::Mode(a[2] as u32)) } else { (a[4], AttrChange::Owner) };
                self.guest_path(a[1]).and_then(|path| {
                    let follow = flags & AT_SYMLINK_NOFOLLOW == 0;
                    self.process.fs.set_attr(AttrTarget::Path { dirfd: fd, path: &path, follow }, change)
                })
            }
            nr::UTIMENSAT => self.utimensat(fd, a[1], a[2], a[3], now),
            _ => return None,
        }))
    }

    fn readv(&mut self, hid: usize, fd: i64, iov: u64, count: u64) -> Result<u64, i64> {
        let mut total = 0;
        for (base, len) in self.iovecs(iov, count)? {
            let bytes = match self.process.fs.read(fd, len, None) {
                Ok(b) => b,
                Err(e) if total == 0 => return Err(e),
                Err(_) => break,
            };
            self.put(hid, base, &bytes)?;
            total += bytes.len() as u64;
            if (bytes.len() as u64) < len {
                break;
            }
        }
        Ok(total)
    }

    fn writev(&mut self, hid: usize, fd: i64, iov: u64, count: u64) -> Result<u64, i64> {
        let mut all = Vec::new();
        for (base, len) in self.iovecs(iov, count)? {
            all.extend_from_slice(&self.mem.read_bytes(base, len).map_err(|_| EFAULT)?);
        }
        self.fd_write(hid, fd, &all, None)
    }

    /// utimensat(dirfd, path or NULL for dirfd itself, times[2] or NULL for now, flags): the modification time.
    fn utimensat(&mut self, fd: i64, path: u64, times: u64, flags: u64, now: u64) -> Result<u64, i64> {
        let mtime = if times == 0 {
            Some(now)
        } else {
            let t = self.mem.read_bytes(times, 32).map_err(|_| EFAULT)?;
            let sec = u64::from_le_bytes(t[16..24].try_into().unwrap());
            let nsec = u64::from_le_bytes(t[24..32].try_into().unwrap());
            match nsec {
                UTIME_OMIT => None,
                UTIME_NOW => Some(now),
                n if n < 1_000_000_000 => Some(sec.saturating_mul(1_000_000_000).saturating_add(n)),
                _ => return Err(EINVAL),
            }
        };
        let path = if path == 0 { String::new() } else { self.guest_path(path)? };
        let target = AttrTarget::Path { dirfd: fd, path: &path, follow: flags & AT_SYMLINK_NOFOLLOW == 0 };
        match mtime {
            Some(ns) => self.process.fs.set_attr(target, AttrChange::Mtime(ns)),
            None => self.process.fs.set_attr(target, AttrChange::Owner),
        }
    }
}
