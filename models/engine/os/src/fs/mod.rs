//! SE mode's file system: the tree the configuration names (Workload.files, .scratch, .cwd, .stdin), the process's
//! file descriptors and the operations behind the Linux file calls. It knows nothing of guest memory: the system
//! calls copy the guest's buffers and paths in and out and call these methods, which return Linux's errno values.

pub mod errno;
pub mod layout;
pub mod tree;

use std::collections::{BTreeMap, VecDeque};
use std::path::Path;

use serde::{Deserialize, Serialize};

use errno::*;
pub use layout::Stat;
use tree::{Content, Ino, Node, Tree, ROOT, S_IFDIR, S_IFIFO, S_IFLNK, S_IFMT, S_IFREG};

/// openat's flags (asm-generic/fcntl.h, which riscv64 uses).
pub mod flags {
    pub const O_ACCMODE: u64 = 3;
    pub const O_WRONLY: u64 = 1;
    pub const O_RDWR: u64 = 2;
    pub const O_CREAT: u64 = 0o100;
    pub const O_EXCL: u64 = 0o200;
    pub const O_TRUNC: u64 = 0o1000;
    pub const O_APPEND: u64 = 0o2000;
    pub const O_NONBLOCK: u64 = 0o4000;
    pub const O_LARGEFILE: u64 = 0o100000;
    pub const O_DIRECTORY: u64 = 0o200000;
    pub const O_NOFOLLOW: u64 = 0o400000;
    pub const O_CLOEXEC: u64 = 0o2000000;
    pub const O_PATH: u64 = 0o10000000;
    pub const O_TMPFILE: u64 = 0o20000000;
    pub const AT_FDCWD: i64 = -100;
    pub const AT_SYMLINK_NOFOLLOW: u64 = 0x100;
    pub const AT_REMOVEDIR: u64 = 0x200;
    pub const AT_EACCESS: u64 = 0x200;
    pub const AT_EMPTY_PATH: u64 = 0x1000;
    pub const RENAME_NOREPLACE: u64 = 1;
}
use flags::*;

/// The most descriptors open at once (RLIMIT_NOFILE's usual soft limit).
pub const MAX_FDS: usize = 1024;
/// The process's umask at start (Linux's default).
const UMASK: u32 = 0o022;

/// What the configuration says the tree is.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct FsConfig {
    /// (host path, absolute guest path) pairs, mapped read-only.
    pub mounts: Vec<(String, String)>,
    /// Absolute guest path of the writable in-memory directory, if any.
    pub scratch: Option<String>,
    pub scratch_size: u64,
    pub cwd: String,
    /// Host file read as standard input (None: an empty pipe).
    pub stdin: Option<String>,
}

/// An open file description (shared by dup'd descriptors): the node, the offset, the status flags.
#[derive(Debug, Clone, Serialize, Deserialize)]
struct OpenFile {
    ino: Ino,
    offset: u64,
    flags: u64,
    refs: u32,
}

#[derive(Debug, Clone, Copy, Serialize, Deserialize)]
struct Fd {
    file: usize,
    cloexec: bool,
}

/// Counters of the file system's work (statistics of the whole run: a stats reset does not clear them).
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq, Eq)]
pub struct FsStats {
    pub opens: u64,
    pub bytes_read: u64,
    pub bytes_written: u64,
}

impl FsStats {
    /// (name, value, description) of each counter.
    pub fn named(&self) -> [(&'static str, u64, &'static str); 3] {
        [
            ("opens", self.opens, "files and directories opened (openat) over the whole run"),
            (
                "bytes_read",
                self.bytes_read,
                "bytes read from files and pipes (not standard input's pipe) over the whole run",
            ),
            (
                "bytes_written",
                self.bytes_written,
                "bytes written to files and pipes (not standard output or error) over the whole run",
            ),
        ]
    }
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct FileSystem {
    tree: Tree,
    files: Vec<Option<OpenFile>>,
    fds: Vec<Option<Fd>>,
    cwd: Ino,
    scratch: Option<Ino>,
    scratch_size: u64,
    scratch_used: u64,
    umask: u32,
    pub stats: FsStats,
}

/// Result of a read that may have to wait: a pipe with writers but no data.
pub const WOULD_BLOCK: i64 = EAGAIN;

impl FileSystem {
    pub fn new(config: &FsConfig) -> Result<FileSystem, String> {
        let mut tree = Tree::new();
        for (host, guest) in &config.mounts {
            tree.map_host(Path::new(host), guest)?;
        }
        let scratch = match &config.scratch {
            Some(path) => {
                let dir = tree.make_dirs(path)?;
                if !tree.entries(dir).map(|e| e.is_empty()).unwrap_or(false) {
                    return Err(format!("scratch directory {path} is inside a mapped folder or holds mapped files"));
                }
                tree.nodes[dir].writable = true;
                Some(dir)
            }
            None => None,
        };
        // An empty working directory (FsConfig's default) is the root.
        let cwd = tree
            .resolve(ROOT, if config.cwd.is_empty() { "/" } else { &config.cwd }, true)
            .ok()
            .filter(|&d| tree.nodes[d].is_dir())
            .ok_or(format!("working directory {} is not a directory of the guest's tree", config.cwd))?;
        let stdin = match &config.stdin {
            Some(host) => {
                let meta = std::fs::metadata(host).map_err(|e| format!("stdin {host}: {e}"))?;
                let mut node =
                    Node::new(Content::Host { path: host.clone(), data: None }, ROOT, S_IFREG | 0o644, false, 0);
                node.host_size = meta.len();
                node.nlink = 0;
                tree.add(node)
            }
            None => tree.add(Node::new(
                Content::Pipe { buf: VecDeque::new(), readers: 1, writers: 0 },
                ROOT,
                S_IFIFO | 0o600,
                false,
                0,
            )),
        };
        let out = tree.add(Node::new(Content::Console(1), ROOT, S_IFIFO | 0o600, true, 0));
        let err = tree.add(Node::new(Content::Console(2), ROOT, S_IFIFO | 0o600, true, 0));
        let mut fs = FileSystem {
            tree,
            files: Vec::new(),
            fds: Vec::new(),
            cwd,
            scratch,
            scratch_size: config.scratch_size,
            scratch_used: 0,
            umask: UMASK,
            stats: FsStats::default(),
        };
        for (ino, access) in [(stdin, 0), (out, O_WRONLY), (err, O_WRONLY)] {
            fs.tree.nodes[ino].nlink = 0;
            fs.install(ino, access, false, 0).map_err(|e| format!("standard streams: errno {e}"))?;
        }
        Ok(fs)
    }

    // --- descriptors -------------------------------------------------------------------------------------------

    fn open_file(&self, fd: i64) -> Result<&OpenFile, i64> {
        let fd = self.fd(fd)?;
        Ok(self.files[fd.file].as_ref().expect("a descriptor's open file exists"))
    }

    fn open_file_mut(&mut self, fd: i64) -> Result<&mut OpenFile, i64> {
        let fd = self.fd(fd)?;
        Ok(self.files[fd.file].as_mut().expect("a descriptor's open file exists"))
    }

    fn fd(&self, fd: i64) -> Result<Fd, i64> {
        usize::try_from(fd).ok().and_then(|i| self.fds.get(i).copied().flatten()).ok_or(EBADF)
    }

    fn lowest_free_fd(&self, min: usize) -> Result<usize, i64> {
        (min..MAX_FDS).find(|&i| self.fds.get(i).is_none_or(|f| f.is_none())).ok_or(EMFILE)
    }

    fn set_fd(&mut self, i: usize, fd: Fd) {
        if self.fds.len() <= i {
            self.fds.resize(i + 1, None);
        }
        self.fds[i] = Some(fd);
    }

    /// A new open file description of `ino` on the lowest free descriptor.
    fn install(&mut self, ino: Ino, flags: u64, cloexec: bool, min_fd: usize) -> Result<u64, i64> {
        let fd = self.lowest_free_fd(min_fd)?;
        let file = OpenFile { ino, offset: 0, flags, refs: 1 };
        let slot = match self.files.iter().position(|f| f.is_none()) {
            Some(i) => {
                self.files[i] = Some(file);
                i
            }
            None => {
                self.files.push(Some(file));
                self.files.len() - 1
            }
        };
        self.tree.nodes[ino].opens += 1;
        if let Content::Pipe { readers, writers, .. } = &mut self.tree.nodes[ino].content {
            if flags & O_ACCMODE == O_WRONLY {
                *writers += 1;
            } else {
                *readers += 1;
            }
        }
        self.set_fd(fd, Fd { file: slot, cloexec });
        Ok(fd as u64)
    }

    pub fn close(&mut self, fd: i64) -> Result<u64, i64> {
        let entry = self.fd(fd)?;
        self.fds[fd as usize] = None;
        let file = self.files[entry.file].as_mut().expect("open");
        file.refs -= 1;
        if file.refs > 0 {
            return Ok(0);
        }
        let (ino, access) = (file.ino, file.flags & O_ACCMODE);
        self.files[entry.file] = None;
        let node = &mut self.tree.nodes[ino];
        node.opens -= 1;
        if let Content::Pipe { readers, writers, .. } = &mut node.content {
            if access == O_WRONLY {
                *writers -= 1;
            } else {
                *readers -= 1;
            }
        }
        self.release_if_unused(ino);
        Ok(0)
    }

    /// A node with no name and no open description left gives its scratch bytes back.
    fn release_if_unused(&mut self, ino: Ino) {
        let node = &mut self.tree.nodes[ino];
        if node.opens == 0 && node.nlink == 0 {
            self.scratch_used -= node.release();
        }
    }

    /// The standard stream (1 or 2) descriptor `fd` writes to, if it is one.
    pub fn console_of(&self, fd: i64) -> Option<u8> {
        let file = self.open_file(fd).ok()?;
        match self.tree.nodes[file.ino].content {
            Content::Console(k) if file.flags & O_ACCMODE != 0 => Some(k),
            _ => None,
        }
    }

    pub fn dup(&mut self, fd: i64, min: usize, cloexec: bool) -> Result<u64, i64> {
        let entry = self.fd(fd)?;
        let new = self.lowest_free_fd(min)?;
        self.files[entry.file].as_mut().expect("open").refs += 1;
        self.set_fd(new, Fd { file: entry.file, cloexec });
        Ok(new as u64)
    }

    pub fn dup3(&mut self, old: i64, new: i64, flags: u64) -> Result<u64, i64> {
        let entry = self.fd(old)?;
        if flags & !O_CLOEXEC != 0 || old == new {
            return Err(EINVAL);
        }
        let new = usize::try_from(new).ok().filter(|&n| n < MAX_FDS).ok_or(EBADF)?;
        if self.fd(new as i64).is_ok() {
            self.close(new as i64)?;
        }
        self.files[entry.file].as_mut().expect("open").refs += 1;
        self.set_fd(new, Fd { file: entry.file, cloexec: flags & O_CLOEXEC != 0 });
        Ok(new as u64)
    }

    pub fn pipe2(&mut self, flags: u64) -> Result<(u64, u64), i64> {
        if flags & !(O_CLOEXEC | O_NONBLOCK) != 0 {
            return Err(EINVAL);
        }
        let content = Content::Pipe { buf: VecDeque::new(), readers: 0, writers: 0 };
        let mut node = Node::new(content, ROOT, S_IFIFO | 0o600, true, 0);
        node.nlink = 0;
        let ino = self.tree.add(node);
        let cloexec = flags & O_CLOEXEC != 0;
        let r = self.install(ino, flags & O_NONBLOCK, cloexec, 0)?;
        match self.install(ino, O_WRONLY | (flags & O_NONBLOCK), cloexec, 0) {
            Ok(w) => Ok((r, w)),
            Err(e) => {
                self.close(r as i64)?;
                Err(e)
            }
        }
    }

    /// fcntl's common commands. Record locks always succeed: the guest is the only process.
    pub fn fcntl(&mut self, fd: i64, cmd: u64, arg: u64) -> Result<FcntlResult, i64> {
        const F_DUPFD: u64 = 0;
        const F_GETFD: u64 = 1;
        const F_SETFD: u64 = 2;
        const F_GETFL: u64 = 3;
        const F_SETFL: u64 = 4;
        const F_GETLK: u64 = 5;
        const F_SETLK: u64 = 6;
        const F_SETLKW: u64 = 7;
        const F_OFD_GETLK: u64 = 36;
        const F_OFD_SETLK: u64 = 37;
        const F_OFD_SETLKW: u64 = 38;
        const F_DUPFD_CLOEXEC: u64 = 1030;
        let entry = self.fd(fd)?;
        Ok(FcntlResult::Value(match cmd {
            F_DUPFD | F_DUPFD_CLOEXEC => {
                let min = usize::try_from(arg).ok().filter(|&m| m < MAX_FDS).ok_or(EINVAL)?;
                self.dup(fd, min, cmd == F_DUPFD_CLOEXEC)?
            }
            F_GETFD => entry.cloexec as u64,
            F_SETFD => {
                self.fds[fd as usize].as_mut().expect("open").cloexec = arg & 1 != 0;
                0
            }
            F_GETFL => self.open_file(fd)?.flags,
            F_SETFL => {
                let file = self.open_file_mut(fd)?;
                file.flags = (file.flags & !(O_APPEND | O_NONBLOCK)) | (arg & (O_APPEND | O_NONBLOCK));
                0
            }
            F_GETLK | F_OFD_GETLK => return Ok(FcntlResult::NoConflictingLock),
            F_SETLK | F_SETLKW | F_OFD_SETLK | F_OFD_SETLKW => 0,
            _ => return Err(EINVAL),
        }))
    }

    // --- paths ------------------------------------------------------------------------------------------------

    /// The directory a relative path starts from: the working directory, or the directory open as `dirfd`.
    fn base(&self, dirfd: i64, path: &str) -> Result<Ino, i64> {
        if path.starts_with('/') || dirfd == AT_FDCWD {
            return Ok(self.cwd);
        }
        let ino = self.open_file(dirfd)?.ino;
        if self.tree.nodes[ino].is_dir() {
            Ok(ino)
        } else {
            Err(ENOTDIR)
        }
    }

    fn lookup(&self, dirfd: i64, path: &str, follow: bool) -> Result<Ino, i64> {
        self.tree.resolve(self.base(dirfd, path)?, path, follow)
    }

    /// The directory and last name of a path that is about to be created or removed, with the directory writable.
    fn parent_for_change<'p>(&self, dirfd: i64, path: &'p str) -> Result<(Ino, &'p str), i64> {
        let (dir, name) = self.tree.resolve_parent(self.base(dirfd, path)?, path)?;
        Ok((dir, name))
    }

    fn node_writable(&self, dir: Ino) -> Result<(), i64> {
        if self.tree.nodes[dir].writable {
            Ok(())
        } else {
            Err(EROFS)
        }
    }

    pub fn openat(&mut self, dirfd: i64, path: &str, oflags: u64, mode: u32, now_ns: u64) -> Result<u64, i64> {
        if oflags & O_TMPFILE == O_TMPFILE {
            return Err(EOPNOTSUPP);
        }
        let access = oflags & O_ACCMODE;
        if access == 3 {
            return Err(EINVAL);
        }
        let follow = oflags & O_NOFOLLOW == 0;
        let ino = match self.lookup(dirfd, path, follow) {
            Ok(ino) => {
                if oflags & O_CREAT != 0 && oflags & O_EXCL != 0 {
                    return Err(EEXIST);
                }
                ino
            }
            Err(ENOENT) if oflags & O_CREAT != 0 => {
                let (dir, name) = self.parent_for_change(dirfd, path)?;
                if name.is_empty() || path.ends_with('/') {
                    return Err(EISDIR);
                }
                if self.tree.entries(dir)?.contains_key(name) {
                    // A dangling symbolic link: creating through it is not supported.
                    return Err(ENOENT);
                }
                self.node_writable(dir)?;
                let node = Node::new(
                    Content::Mem { data: Vec::new() },
                    dir,
                    S_IFREG | (mode & 0o7777 & !self.umask),
                    true,
                    now_ns,
                );
                let ino = self.tree.add(node);
                self.tree.link(dir, name, ino);
                self.touch(dir, now_ns);
                ino
            }
            Err(e) => return Err(e),
        };
        let node = &self.tree.nodes[ino];
        if oflags & O_PATH == 0 {
            match node.content {
                Content::Symlink { .. } => return Err(ELOOP),
                Content::Dir { .. } if access != 0 || oflags & O_TRUNC != 0 => return Err(EISDIR),
                _ if oflags & O_DIRECTORY != 0 && !node.is_dir() => return Err(ENOTDIR),
                _ => {}
            }
            if (access != 0 || oflags & O_TRUNC != 0) && !node.writable {
                return Err(EROFS);
            }
        } else if oflags & O_DIRECTORY != 0 && !node.is_dir() {
            return Err(ENOTDIR);
        }
        if oflags & O_TRUNC != 0 && access != 0 {
            self.resize(ino, 0, now_ns)?;
        }
        self.stats.opens += 1;
        let status = access | (oflags & (O_APPEND | O_NONBLOCK | O_PATH)) | O_LARGEFILE;
        self.install(ino, status, oflags & O_CLOEXEC != 0, 0)
    }

    fn touch(&mut self, ino: Ino, now_ns: u64) {
        self.tree.nodes[ino].mtime_ns = now_ns;
    }

    /// Set a scratch file's size (zero-filled when it grows), within the scratch directory's size.
    fn resize(&mut self, ino: Ino, len: u64, now_ns: u64) -> Result<(), i64> {
        let old = self.tree.nodes[ino].size();
        if len > old && self.scratch_used + (len - old) > self.scratch_size {
            return Err(ENOSPC);
        }
        match &mut self.tree.nodes[ino].content {
            Content::Mem { data } => data.resize(usize::try_from(len).map_err(|_| EFBIG)?, 0),
            Content::Dir { .. } => return Err(EISDIR),
            Content::Host { .. } => return Err(EROFS),
            _ => return Err(EINVAL),
        }
        self.scratch_used = if len >= old { self.scratch_used + (len - old) } else { self.scratch_used - (old - len) };
        self.touch(ino, now_ns);
        Ok(())
    }

    // --- data -------------------------------------------------------------------------------------------------

    /// Read up to `len` bytes at the descriptor's offset (`at`: at that position instead, offset unchanged).
    pub fn read(&mut self, fd: i64, len: u64, at: Option<u64>) -> Result<Vec<u8>, i64> {
        let file = self.open_file(fd)?.clone();
        if file.flags & O_ACCMODE == O_WRONLY || file.flags & O_PATH != 0 {
            return Err(EBADF);
        }
        let len = len.min(1 << 30) as usize;
        let node = &mut self.tree.nodes[file.ino];
        let out = match &mut node.content {
            Content::Pipe { buf, writers, .. } => {
                if at.is_some() {
                    return Err(ESPIPE);
                }
                if buf.is_empty() && *writers > 0 {
                    return Err(WOULD_BLOCK);
                }
                let n = len.min(buf.len());
                buf.drain(..n).collect()
            }
            Content::Console(_) => return Err(EBADF),
            Content::Dir { .. } => return Err(EISDIR),
            _ => {
                let pos = at.unwrap_or(file.offset);
                let data = self.tree.file_data(file.ino)?;
                let start = (pos as usize).min(data.len());
                let out = data[start..(start + len).min(data.len())].to_vec();
                if at.is_none() {
                    self.open_file_mut(fd)?.offset = pos + out.len() as u64;
                }
                out
            }
        };
        self.stats.bytes_read += out.len() as u64;
        Ok(out)
    }

    /// Write `bytes` at the descriptor's offset (or the end with O_APPEND; `at`: at that position). Writes to the
    /// standard streams are the caller's (console_of).
    pub fn write(&mut self, fd: i64, bytes: &[u8], at: Option<u64>, now_ns: u64) -> Result<u64, i64> {
        let file = self.open_file(fd)?.clone();
        if file.flags & O_ACCMODE == 0 || file.flags & O_PATH != 0 {
            return Err(EBADF);
        }
        let ino = file.ino;
        if let Content::Pipe { buf, readers, .. } = &mut self.tree.nodes[ino].content {
            if at.is_some() {
                return Err(ESPIPE);
            }
            if *readers == 0 {
                return Err(EPIPE);
            }
            buf.extend(bytes);
            self.stats.bytes_written += bytes.len() as u64;
            return Ok(bytes.len() as u64);
        }
        let size = self.tree.nodes[ino].size();
        let pos = match at {
            Some(p) => p,
            None if file.flags & O_APPEND != 0 => size,
            None => file.offset,
        };
        let end = pos.checked_add(bytes.len() as u64).ok_or(EFBIG)?;
        if end > size {
            self.resize(ino, end, now_ns)?;
        }
        let Content::Mem { data } = &mut self.tree.nodes[ino].content else { return Err(EBADF) };
        data[pos as usize..end as usize].copy_from_slice(bytes);
        self.touch(ino, now_ns);
        if at.is_none() {
            self.open_file_mut(fd)?.offset = end;
        }
        self.stats.bytes_written += bytes.len() as u64;
        Ok(bytes.len() as u64)
    }

    pub fn lseek(&mut self, fd: i64, offset: i64, whence: u64) -> Result<u64, i64> {
        let file = self.open_file(fd)?.clone();
        let node = &self.tree.nodes[file.ino];
        if matches!(node.content, Content::Pipe { .. } | Content::Console(_)) {
            return Err(ESPIPE);
        }
        let size = node.size() as i64;
        let new = match whence {
            0 => offset,
            1 => (file.offset as i64).checked_add(offset).ok_or(EINVAL)?,
            2 => size.checked_add(offset).ok_or(EINVAL)?,
            // SEEK_DATA / SEEK_HOLE: files have no holes.
            3 if offset >= size => return Err(ENXIO),
            3 => offset,
            4 if offset >= size => return Err(ENXIO),
            4 => size,
            _ => return Err(EINVAL),
        };
        if new < 0 {
            return Err(EINVAL);
        }
        self.open_file_mut(fd)?.offset = new as u64;
        Ok(new as u64)
    }

    pub fn ftruncate(&mut self, fd: i64, len: i64, now_ns: u64) -> Result<u64, i64> {
        let file = self.open_file(fd)?.clone();
        if len < 0 {
            return Err(EINVAL);
        }
        if file.flags & O_ACCMODE == 0 {
            return Err(if self.tree.nodes[file.ino].is_dir() { EISDIR } else { EINVAL });
        }
        self.resize(file.ino, len as u64, now_ns)?;
        Ok(0)
    }

    /// fsync, fdatasync: the tree is the storage, so there is nothing to wait for; the descriptor must be valid.
    pub fn fsync(&self, fd: i64) -> Result<u64, i64> {
        let ino = self.open_file(fd)?.ino;
        match self.tree.nodes[ino].content {
            Content::Pipe { .. } | Content::Console(_) => Err(EINVAL),
            _ => Ok(0),
        }
    }

    /// The whole of a regular file open as `fd` (for a private file mapping), with the descriptor readable.
    pub fn mappable(&mut self, fd: i64) -> Result<Vec<u8>, i64> {
        let file = self.open_file(fd)?.clone();
        if file.flags & O_ACCMODE == O_WRONLY || file.flags & O_PATH != 0 {
            return Err(EACCES);
        }
        match self.tree.nodes[file.ino].content {
            Content::Mem { .. } | Content::Host { .. } => Ok(self.tree.file_data(file.ino)?.to_vec()),
            _ => Err(ENODEV_MAP),
        }
    }

    // --- metadata ---------------------------------------------------------------------------------------------

    fn stat_of(&self, ino: Ino) -> Stat {
        let node = &self.tree.nodes[ino];
        let dev = if self.scratch.is_some_and(|s| self.tree.is_within(ino, s)) { 2 } else { 1 };
        Stat {
            dev,
            ino: ino as u64 + 1,
            mode: node.mode,
            nlink: node.nlink.max(1),
            size: node.size(),
            mtime_ns: node.mtime_ns,
        }
    }

    pub fn fstat(&self, fd: i64) -> Result<Stat, i64> {
        Ok(self.stat_of(self.open_file(fd)?.ino))
    }

    /// newfstatat and statx: a path, or with AT_EMPTY_PATH and "" the descriptor itself.
    pub fn stat_at(&self, dirfd: i64, path: &str, at_flags: u64) -> Result<Stat, i64> {
        if path.is_empty() && at_flags & AT_EMPTY_PATH != 0 {
            if dirfd == AT_FDCWD {
                return Ok(self.stat_of(self.cwd));
            }
            return self.fstat(dirfd);
        }
        Ok(self.stat_of(self.lookup(dirfd, path, at_flags & AT_SYMLINK_NOFOLLOW == 0)?))
    }

    /// faccessat: the guest runs as root, so only existence, a read-only tree (W_OK) and execute bits (X_OK) count.
    pub fn faccessat(&self, dirfd: i64, path: &str, mode: u64, at_flags: u64) -> Result<u64, i64> {
        if mode & !7 != 0 {
            return Err(EINVAL);
        }
        let ino = self.lookup(dirfd, path, at_flags & AT_SYMLINK_NOFOLLOW == 0)?;
        let node = &self.tree.nodes[ino];
        if mode & 2 != 0 && !node.writable {
            return Err(EROFS);
        }
        if mode & 1 != 0 && !node.is_dir() && node.mode & 0o111 == 0 {
            return Err(EACCES);
        }
        Ok(0)
    }

    pub fn readlinkat(&self, dirfd: i64, path: &str, bufsize: u64) -> Result<Vec<u8>, i64> {
        if bufsize == 0 || bufsize > i32::MAX as u64 {
            return Err(EINVAL);
        }
        let ino = self.lookup(dirfd, path, false)?;
        match &self.tree.nodes[ino].content {
            Content::Symlink { target } => Ok(target.as_bytes()[..target.len().min(bufsize as usize)].to_vec()),
            _ => Err(EINVAL),
        }
    }

    /// getdents64: as many whole records as fit in `bufsize` from the directory's position ("." and ".." first,
    /// then the names in byte order).
    pub fn getdents64(&mut self, fd: i64, bufsize: u64) -> Result<Vec<u8>, i64> {
        let file = self.open_file(fd)?.clone();
        let dir = file.ino;
        let entries = self.tree.entries(dir)?;
        let mut listing: Vec<(u64, u8, &str)> =
            vec![(dir as u64 + 1, 4, "."), (self.tree.nodes[dir].parent as u64 + 1, 4, "..")];
        listing.extend(
            entries.iter().map(|(name, &ino)| (ino as u64 + 1, dirent_type(self.tree.nodes[ino].mode), name.as_str())),
        );
        let mut out = Vec::new();
        let mut pos = file.offset as usize;
        while pos < listing.len() {
            let (ino, kind, name) = listing[pos];
            let record = layout::dirent64(ino, pos as u64 + 1, kind, name);
            if out.len() + record.len() > bufsize as usize {
                if out.is_empty() {
                    return Err(EINVAL);
                }
                break;
            }
            out.extend_from_slice(&record);
            pos += 1;
        }
        self.open_file_mut(fd)?.offset = pos as u64;
        Ok(out)
    }

    // --- names ------------------------------------------------------------------------------------------------

    pub fn mkdirat(&mut self, dirfd: i64, path: &str, mode: u32, now_ns: u64) -> Result<u64, i64> {
        let (dir, name) = self.parent_for_change(dirfd, path)?;
        if name.is_empty() || name == "." || name == ".." || self.tree.entries(dir)?.contains_key(name) {
            return Err(EEXIST);
        }
        self.node_writable(dir)?;
        let node = Node::new(
            Content::Dir { entries: BTreeMap::new() },
            dir,
            S_IFDIR | (mode & 0o7777 & !self.umask),
            true,
            now_ns,
        );
        let ino = self.tree.add(node);
        self.tree.link(dir, name, ino);
        self.touch(dir, now_ns);
        Ok(0)
    }

    pub fn unlinkat(&mut self, dirfd: i64, path: &str, at_flags: u64, now_ns: u64) -> Result<u64, i64> {
        if at_flags & !AT_REMOVEDIR != 0 {
            return Err(EINVAL);
        }
        let (dir, name) = self.parent_for_change(dirfd, path)?;
        if name == "." || name.is_empty() {
            return Err(if at_flags & AT_REMOVEDIR != 0 { EINVAL } else { EISDIR });
        }
        if name == ".." {
            return Err(ENOTEMPTY);
        }
        let ino = *self.tree.entries(dir)?.get(name).ok_or(ENOENT)?;
        let node = &self.tree.nodes[ino];
        if at_flags & AT_REMOVEDIR != 0 {
            if !node.is_dir() {
                return Err(ENOTDIR);
            }
            if !self.tree.entries(ino)?.is_empty() {
                return Err(ENOTEMPTY);
            }
            if ino == self.cwd || Some(ino) == self.scratch {
                return Err(EBUSY);
            }
        } else if node.is_dir() {
            return Err(EISDIR);
        }
        self.node_writable(dir)?;
        if !self.tree.nodes[ino].writable && !matches!(self.tree.nodes[ino].content, Content::Symlink { .. }) {
            return Err(EROFS);
        }
        self.tree.unlink(dir, name);
        self.release_if_unused(ino);
        self.touch(dir, now_ns);
        Ok(0)
    }

    pub fn renameat2(
        &mut self,
        olddirfd: i64,
        old: &str,
        newdirfd: i64,
        new: &str,
        rflags: u64,
        now_ns: u64,
    ) -> Result<u64, i64> {
        if rflags & !RENAME_NOREPLACE != 0 {
            return Err(EINVAL);
        }
        let (odir, oname) = self.parent_for_change(olddirfd, old)?;
        let (ndir, nname) = self.parent_for_change(newdirfd, new)?;
        if [oname, nname].iter().any(|n| n.is_empty() || *n == "." || *n == "..") {
            return Err(EBUSY);
        }
        let ino = *self.tree.entries(odir)?.get(oname).ok_or(ENOENT)?;
        self.node_writable(odir)?;
        self.node_writable(ndir)?;
        let moving_dir = self.tree.nodes[ino].is_dir();
        if moving_dir && self.tree.is_within(ndir, ino) {
            return Err(EINVAL);
        }
        if let Some(&existing) = self.tree.entries(ndir)?.get(nname) {
            if existing == ino {
                return Ok(0);
            }
            if rflags & RENAME_NOREPLACE != 0 {
                return Err(EEXIST);
            }
            let target_dir = self.tree.nodes[existing].is_dir();
            match (moving_dir, target_dir) {
                (false, true) => return Err(EISDIR),
                (true, false) => return Err(ENOTDIR),
                (true, true) if !self.tree.entries(existing)?.is_empty() => return Err(ENOTEMPTY),
                _ => {}
            }
            let flags = if target_dir { AT_REMOVEDIR } else { 0 };
            let path = format!("{}/{}", self.tree.path_of(ndir), nname);
            self.unlinkat(AT_FDCWD, &path, flags, now_ns)?;
        }
        self.tree.entries_of_mut_remove(odir, oname);
        self.tree.link(ndir, nname, ino);
        self.touch(odir, now_ns);
        self.touch(ndir, now_ns);
        Ok(0)
    }

    /// umask: set the mask for created nodes; returns the previous one.
    pub fn set_umask(&mut self, mask: u32) -> u32 {
        std::mem::replace(&mut self.umask, mask & 0o777)
    }

    pub fn getcwd(&self) -> String {
        self.tree.path_of(self.cwd)
    }

    pub fn chdir(&mut self, path: &str) -> Result<u64, i64> {
        let ino = self.lookup(AT_FDCWD, path, true)?;
        if !self.tree.nodes[ino].is_dir() {
            return Err(ENOTDIR);
        }
        self.cwd = ino;
        Ok(0)
    }

    pub fn fchdir(&mut self, fd: i64) -> Result<u64, i64> {
        let ino = self.open_file(fd)?.ino;
        if !self.tree.nodes[ino].is_dir() {
            return Err(ENOTDIR);
        }
        self.cwd = ino;
        Ok(0)
    }

    /// fchmodat, fchownat and utimensat on a path, fchmod on a descriptor: only nodes of the scratch tree change.
    pub fn set_attr(&mut self, target: AttrTarget, change: AttrChange) -> Result<u64, i64> {
        let ino = match target {
            AttrTarget::Fd(fd) => self.open_file(fd)?.ino,
            AttrTarget::Path { dirfd, path, follow } => {
                if path.is_empty() {
                    self.open_file(dirfd)?.ino
                } else {
                    self.lookup(dirfd, path, follow)?
                }
            }
        };
        let node = &mut self.tree.nodes[ino];
        if matches!(node.content, Content::Console(_) | Content::Pipe { .. }) {
            return Ok(0);
        }
        if !node.writable {
            return Err(EROFS);
        }
        match change {
            AttrChange::Mode(mode) => node.mode = (node.mode & S_IFMT) | (mode & 0o7777),
            AttrChange::Owner => {}
            AttrChange::Mtime(ns) => node.mtime_ns = ns,
        }
        Ok(0)
    }

    // --- the scratch tree -------------------------------------------------------------------------------------

    /// Every file under the scratch directory, by absolute guest path, in path order.
    pub fn scratch_files(&self) -> Vec<(String, Vec<u8>)> {
        let Some(root) = self.scratch else { return Vec::new() };
        let mut out = Vec::new();
        let mut stack = vec![(root, self.tree.path_of(root))];
        while let Some((dir, path)) = stack.pop() {
            for (name, &ino) in self.tree.entries(dir).expect("a directory") {
                let child = format!("{path}/{name}");
                match &self.tree.nodes[ino].content {
                    Content::Dir { .. } => stack.push((ino, child)),
                    Content::Mem { data } => out.push((child, data.clone())),
                    _ => {}
                }
            }
        }
        out.sort();
        out
    }

    /// Write the scratch tree under host folder `host` (created if missing); returns the files written.
    pub fn save_scratch(&self, host: &Path) -> std::io::Result<usize> {
        let root = self.scratch.map(|s| self.tree.path_of(s)).unwrap_or_default();
        let files = self.scratch_files();
        std::fs::create_dir_all(host)?;
        for (path, data) in &files {
            let rel = path.strip_prefix(&root).unwrap_or(path).trim_start_matches('/');
            let dest = host.join(rel);
            if let Some(parent) = dest.parent() {
                std::fs::create_dir_all(parent)?;
            }
            std::fs::write(dest, data)?;
        }
        Ok(files.len())
    }

    pub fn scratch_bytes(&self) -> u64 {
        self.scratch_used
    }
}

/// What fcntl returns: a value, or "no lock is in the way" (F_GETLK: the caller sets the flock's type to F_UNLCK).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FcntlResult {
    Value(u64),
    NoConflictingLock,
}

pub enum AttrTarget<'p> {
    Fd(i64),
    Path { dirfd: i64, path: &'p str, follow: bool },
}

pub enum AttrChange {
    Mode(u32),
    Owner,
    Mtime(u64),
}

/// mmap of something that is not a regular file.
const ENODEV_MAP: i64 = 19;

fn dirent_type(mode: u32) -> u8 {
    match mode & S_IFMT {
        S_IFDIR => 4,
        S_IFREG => 8,
        S_IFLNK => 10,
        S_IFIFO => 1,
        _ => 0,
    }
}

impl Tree {
    /// Remove an entry without touching the node's link count (a rename moves it).
    fn entries_of_mut_remove(&mut self, dir: Ino, name: &str) {
        if let Content::Dir { entries } = &mut self.nodes[dir].content {
            entries.remove(name);
        }
    }
}

#[cfg(test)]
mod tests;
