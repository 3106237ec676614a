//! Every Linux system call SE mode knows by name, with what it does with it: the table behind
//! `workloads/SYSCALLS.md` (rendered by `table_markdown`, kept current by a test here) and behind the name in the
//! error that stops a run at a refused call. The os crate's test runs every entry through its dispatcher (refused
//! calls stop the run, the others do not), so the table cannot drift from the code.

/// What the engine does with a call.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Status {
    /// Implemented with Linux's semantics (within SE mode's single process).
    Supported,
    /// Accepted and answered without effect, for the reason given.
    NoOp,
    /// Always fails with the error given (what Linux would say if the feature were absent), so programs fall back.
    Fails,
    /// Not implemented: the run stops with UnsupportedSyscall naming it.
    Refused,
}

pub struct Entry {
    pub nr: u64,
    pub name: &'static str,
    pub status: Status,
    pub note: &'static str,
}

const fn e(nr: u64, name: &'static str, status: Status, note: &'static str) -> Entry {
    Entry { nr, name, status, note }
}

use Status::*;

/// Ordered by number (asm-generic/unistd.h, which riscv64 uses).
pub const TABLE: &[Entry] = &[
    e(17, "getcwd", Supported, "the guest's working directory in its file tree"),
    e(23, "dup", Supported, ""),
    e(24, "dup3", Supported, "O_CLOEXEC"),
    e(25, "fcntl", Supported, "F_DUPFD(_CLOEXEC), F_GETFD/SETFD, F_GETFL/SETFL (O_APPEND, O_NONBLOCK); record locks (F_SETLK(W), F_OFD_*) always succeed and F_GETLK reports none: one process"),
    e(29, "ioctl", Fails, "ENOTTY: no descriptor is a terminal"),
    e(34, "mkdirat", Supported, "in the scratch directory; EROFS elsewhere"),
    e(35, "unlinkat", Supported, "AT_REMOVEDIR; in the scratch directory; EROFS elsewhere"),
    e(38, "renameat", Supported, "as renameat2 without flags"),
    e(46, "ftruncate", Supported, "scratch files"),
    e(48, "faccessat", Supported, "the guest is root: existence, W_OK on a read-only node (EROFS), X_OK needs an execute bit"),
    e(49, "chdir", Supported, ""),
    e(50, "fchdir", Supported, ""),
    e(52, "fchmod", Supported, "scratch nodes; EROFS on mapped ones"),
    e(53, "fchmodat", Supported, "scratch nodes; EROFS on mapped ones"),
    e(54, "fchownat", NoOp, "owners stay root (uid 0), the only user; EROFS on mapped nodes"),
    e(55, "fchown", NoOp, "as fchownat"),
    e(56, "openat", Supported, "O_CREAT, O_EXCL, O_TRUNC, O_APPEND, O_DIRECTORY, O_NOFOLLOW, O_PATH, O_CLOEXEC; O_TMPFILE fails (EOPNOTSUPP)"),
    e(57, "close", Supported, ""),
    e(59, "pipe2", Supported, "a read of an empty pipe whose writer is open returns EAGAIN (there is no blocking read)"),
    e(61, "getdents64", Supported, "\".\", \"..\", then the names in byte order"),
    e(62, "lseek", Supported, "SEEK_SET/CUR/END/DATA/HOLE"),
    e(63, "read", Supported, "files, pipes, standard input (Workload.stdin)"),
    e(64, "write", Supported, "files, pipes, standard output and error"),
    e(65, "readv", Supported, ""),
    e(66, "writev", Supported, ""),
    e(67, "pread64", Supported, ""),
    e(68, "pwrite64", Supported, ""),
    e(78, "readlinkat", Supported, "links of the guest's tree"),
    e(79, "newfstatat", Supported, "AT_EMPTY_PATH, AT_SYMLINK_NOFOLLOW; owner root, atime = ctime = mtime"),
    e(80, "fstat", Supported, "the standard streams are pipes, as under a test harness"),
    e(81, "sync", NoOp, "the tree is in memory: nothing to flush"),
    e(82, "fsync", Supported, "checks the descriptor; nothing to flush"),
    e(83, "fdatasync", Supported, "as fsync"),
    e(88, "utimensat", Supported, "modification time of scratch nodes (UTIME_NOW: simulated time); EROFS on mapped ones"),
    e(93, "exit", Supported, "ends the calling thread"),
    e(94, "exit_group", Supported, ""),
    e(96, "set_tid_address", Supported, ""),
    e(98, "futex", Supported, "WAIT, WAKE and their BITSET forms"),
    e(99, "set_robust_list", NoOp, "no thread dies holding a lock: threads only exit"),
    e(101, "nanosleep", NoOp, "returns at once"),
    e(113, "clock_gettime", Supported, "simulated time"),
    e(115, "clock_nanosleep", NoOp, "returns at once"),
    e(123, "sched_getaffinity", Supported, "every hart"),
    e(124, "sched_yield", NoOp, "harts interleave by quantum"),
    e(129, "kill", Refused, ""),
    e(130, "tkill", Refused, ""),
    e(131, "tgkill", Refused, ""),
    e(134, "rt_sigaction", NoOp, "accepted; no signal is ever delivered"),
    e(135, "rt_sigprocmask", NoOp, "accepted; no signal is ever delivered"),
    e(160, "uname", Supported, ""),
    e(166, "umask", Supported, "applies to created files and directories"),
    e(172, "getpid", Supported, ""),
    e(173, "getppid", Supported, ""),
    e(174, "getuid", Supported, "0"),
    e(175, "geteuid", Supported, "0"),
    e(176, "getgid", Supported, "0"),
    e(177, "getegid", Supported, "0"),
    e(178, "gettid", Supported, ""),
    e(179, "sysinfo", Supported, "RAM is System.mem_limit"),
    e(198, "socket", Fails, "EAFNOSUPPORT: SE mode has no network stack (glibc's name-service lookups fall back to files)"),
    e(214, "brk", Supported, ""),
    e(215, "munmap", Supported, ""),
    e(216, "mremap", Supported, "grow in place, shrink, move (MREMAP_MAYMOVE, MREMAP_FIXED); MREMAP_DONTUNMAP fails (EINVAL)"),
    e(220, "clone", Supported, "threads only (CLONE_VM | CLONE_THREAD), one hart each; any other clone (a fork) stops the run"),
    e(221, "execve", Refused, ""),
    e(222, "mmap", Supported, "anonymous private; a file private (a copy of its bytes), or shared read-only; shared writable file mappings fail (ENODEV); MAP_FIXED, MAP_FIXED_NOREPLACE"),
    e(226, "mprotect", Supported, "enforced"),
    e(233, "madvise", NoOp, "advice: checked (alignment, known advice, mapped range) and ignored, but MADV_DONTNEED zeroes the pages as Linux does for private anonymous memory"),
    e(260, "wait4", Refused, ""),
    e(261, "prlimit64", Supported, "reads: RLIMIT_STACK is System.stack_size, others unlimited; new limits are ignored"),
    e(276, "renameat2", Supported, "RENAME_NOREPLACE"),
    e(278, "getrandom", Supported, "deterministic from System.seed"),
    e(291, "statx", Supported, "the basic fields (STATX_BASIC_STATS)"),
    e(293, "rseq", Fails, "ENOSYS: glibc runs without restartable sequences"),
    e(435, "clone3", Fails, "ENOSYS: glibc falls back to clone"),
    e(439, "faccessat2", Supported, "as faccessat"),
];

/// The table's entry for call `nr`.
pub fn entry(nr: u64) -> Option<&'static Entry> {
    TABLE.binary_search_by_key(&nr, |e| e.nr).ok().map(|i| &TABLE[i])
}

/// The name of call `nr`, for the error that stops a run at one the engine refuses.
pub fn syscall_name(nr: u64) -> Option<&'static str> {
    entry(nr).map(|e| e.name)
}

/// The table as the markdown page workloads/SYSCALLS.md.
pub fn table_markdown() -> String {
    let mut out = String::from(
        "# System calls in SE mode\n\n\
         Generated from the engine's table (`models/engine/base/src/syscall_table.rs`) by\n\
         `KVSIM_BLESS=1 cargo test -p kvsim-base syscall_table`; a test keeps it current. A call not listed here\n\
         stops the run with `UnsupportedSyscall`, as do the refused ones. Numbers are riscv64's (asm-generic).\n\n\
         | nr | call | status | notes |\n| ---: | --- | --- | --- |\n",
    );
    for e in TABLE {
        let status = match e.status {
            Supported => "supported",
            NoOp => "accepted, no effect",
            Fails => "fails by design",
            Refused => "refused (stops the run)",
        };
        out.push_str(&format!("| {} | {} | {} | {} |\n", e.nr, e.name, status, e.note.replace('|', "\\|")));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn syscall_table_is_sorted_and_unique() {
        assert!(TABLE.windows(2).all(|w| w[0].nr < w[1].nr));
        assert_eq!(syscall_name(216), Some("mremap"));
        assert_eq!(syscall_name(1000), None);
    }

    /// workloads/SYSCALLS.md is the table as rendered now (KVSIM_BLESS=1 rewrites it).
    #[test]
    fn syscall_table_doc_is_current() {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../workloads/SYSCALLS.md");
        let want = table_markdown();
        if std::env::var_os("KVSIM_BLESS").is_some() {
            std::fs::write(&path, &want).unwrap();
        }
        let have = std::fs::read_to_string(&path).unwrap_or_default();
        assert!(have == want, "{} is stale: run KVSIM_BLESS=1 cargo test -p kvsim-base syscall_table", path.display());
    }
}
