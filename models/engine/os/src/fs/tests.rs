//! The file system against Linux's behaviour, call by call, with a real host folder mapped in.

use super::*;

/// A host folder: data/a.txt ("alpha\n"), data/sub/b.txt, data/up -> ../../.. , data/abs -> /etc/passwd,
/// data/inside -> sub/b.txt; a sibling secret.txt outside the mapped folder.
fn host_tree(tag: &str) -> std::path::PathBuf {
    let dir = std::env::temp_dir().join(format!("kvsim-fs-test-{tag}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(dir.join("data/sub")).unwrap();
    std::fs::write(dir.join("data/a.txt"), b"alpha\n").unwrap();
    std::fs::write(dir.join("data/sub/b.txt"), b"bravo bravo\n").unwrap();
    std::fs::write(dir.join("secret.txt"), b"host secret\n").unwrap();
    std::os::unix::fs::symlink("../../..", dir.join("data/up")).unwrap();
    std::os::unix::fs::symlink("/etc/passwd", dir.join("data/abs")).unwrap();
    std::os::unix::fs::symlink("../secret.txt", dir.join("data/out")).unwrap();
    std::os::unix::fs::symlink("sub/b.txt", dir.join("data/inside")).unwrap();
    dir
}

fn fs_for(tag: &str) -> FileSystem {
    let host = host_tree(tag);
    FileSystem::new(&FsConfig {
        mounts: vec![(host.join("data").to_str().unwrap().into(), "/in".into())],
        scratch: Some("/out".into()),
        scratch_size: 1 << 20,
        cwd: "/".into(),
        stdin: None,
    })
    .unwrap()
}

const RD: u64 = 0;

#[test]
fn reads_a_mapped_file_and_refuses_to_write_it() {
    let mut fs = fs_for("read");
    let fd = fs.openat(AT_FDCWD, "in/a.txt", RD, 0, 0).unwrap() as i64;
    assert_eq!(fd, 3, "the lowest free descriptor after the standard streams");
    assert_eq!(fs.read(fd, 3, None).unwrap(), b"alp");
    assert_eq!(fs.read(fd, 100, None).unwrap(), b"ha\n");
    assert_eq!(fs.read(fd, 100, None).unwrap(), b"", "end of file");
    assert_eq!(fs.read(fd, 2, Some(1)).unwrap(), b"lp", "pread leaves the offset");
    assert_eq!(fs.write(fd, b"x", None, 0), Err(EBADF), "opened read-only");
    assert_eq!(fs.openat(AT_FDCWD, "/in/a.txt", O_WRONLY, 0, 0), Err(EROFS));
    assert_eq!(fs.openat(AT_FDCWD, "/in/new.txt", O_WRONLY | O_CREAT, 0o644, 0), Err(EROFS));
    assert_eq!(fs.unlinkat(AT_FDCWD, "/in/a.txt", 0, 0), Err(EROFS));
    assert_eq!(fs.fstat(fd).unwrap().size, 6);
    assert_eq!(fs.close(fd), Ok(0));
    assert_eq!(fs.close(fd), Err(EBADF));
    assert_eq!(fs.read(fd, 1, None), Err(EBADF));
}

#[test]
fn missing_files_and_wrong_kinds_give_linux_errors() {
    let mut fs = fs_for("errors");
    assert_eq!(fs.openat(AT_FDCWD, "in/nope", RD, 0, 0), Err(ENOENT));
    assert_eq!(fs.openat(AT_FDCWD, "", RD, 0, 0), Err(ENOENT));
    assert_eq!(fs.openat(AT_FDCWD, "in/a.txt/x", RD, 0, 0), Err(ENOTDIR));
    assert_eq!(fs.openat(AT_FDCWD, "in/a.txt", O_DIRECTORY, 0, 0), Err(ENOTDIR));
    assert_eq!(fs.openat(AT_FDCWD, "in", O_WRONLY, 0, 0), Err(EISDIR));
    assert_eq!(fs.openat(AT_FDCWD, &"x".repeat(300), RD, 0, 0), Err(ENAMETOOLONG));
    assert_eq!(fs.openat(7, "a.txt", RD, 0, 0), Err(EBADF), "relative to a descriptor that is not open");
    let file = fs.openat(AT_FDCWD, "in/a.txt", RD, 0, 0).unwrap() as i64;
    assert_eq!(fs.openat(file, "b.txt", RD, 0, 0), Err(ENOTDIR), "relative to a file");
    assert_eq!(fs.lseek(file, -1, 0), Err(EINVAL));
    assert_eq!(fs.lseek(1, 0, 0), Err(ESPIPE));
    assert_eq!(fs.read(99, 1, None), Err(EBADF));
    assert_eq!(fs.fstat(-1), Err(EBADF));
}

#[test]
fn the_guest_cannot_leave_the_mapped_tree() {
    let mut fs = fs_for("escape");
    // `..` at the root stays at the root; absolute paths are guest paths.
    assert_eq!(fs.openat(AT_FDCWD, "../../../../etc/passwd", RD, 0, 0), Err(ENOENT));
    assert_eq!(fs.openat(AT_FDCWD, "/etc/passwd", RD, 0, 0), Err(ENOENT));
    assert_eq!(fs.openat(AT_FDCWD, "in/../../secret.txt", RD, 0, 0), Err(ENOENT));
    // Host links are resolved in the guest tree: out of the mapped folder there is nothing.
    assert_eq!(fs.openat(AT_FDCWD, "in/abs", RD, 0, 0), Err(ENOENT));
    assert_eq!(fs.openat(AT_FDCWD, "in/out", RD, 0, 0), Err(ENOENT));
    assert_eq!(fs.openat(AT_FDCWD, "in/up/etc/passwd", RD, 0, 0), Err(ENOENT));
    assert_eq!(fs.readlinkat(AT_FDCWD, "in/abs", 64).unwrap(), b"/etc/passwd");
    assert!(fs.stat_at(AT_FDCWD, "in/up", 0).unwrap().mode & S_IFMT == S_IFDIR, "up leads to the guest root");
    // A link inside the tree works.
    let fd = fs.openat(AT_FDCWD, "in/inside", RD, 0, 0).unwrap() as i64;
    assert_eq!(fs.read(fd, 100, None).unwrap(), b"bravo bravo\n");
    assert_eq!(fs.openat(AT_FDCWD, "in/inside", O_NOFOLLOW, 0, 0), Err(ELOOP));
}

#[test]
fn scratch_files_are_created_written_renamed_and_removed() {
    let mut fs = fs_for("scratch");
    let fd = fs.openat(AT_FDCWD, "out/x.txt", O_WRONLY | O_CREAT | O_TRUNC, 0o666, 5_000_000_000).unwrap() as i64;
    assert_eq!(fs.write(fd, b"hello ", None, 0), Ok(6));
    assert_eq!(fs.write(fd, b"world\n", None, 0), Ok(6));
    assert_eq!(fs.write(fd, b"W", Some(6), 0), Ok(1), "pwrite");
    assert_eq!(fs.lseek(fd, 0, 2), Ok(12));
    assert_eq!(fs.fstat(fd).unwrap().mode, S_IFREG | 0o644, "umask 022");
    assert_eq!(fs.openat(AT_FDCWD, "out/x.txt", O_CREAT | O_EXCL | O_WRONLY, 0o644, 0), Err(EEXIST));
    fs.close(fd).unwrap();
    assert_eq!(fs.mkdirat(AT_FDCWD, "out/d", 0o777, 0), Ok(0));
    assert_eq!(fs.mkdirat(AT_FDCWD, "out/d", 0o777, 0), Err(EEXIST));
    assert_eq!(fs.mkdirat(AT_FDCWD, "in/d", 0o777, 0), Err(EROFS));
    assert_eq!(fs.renameat2(AT_FDCWD, "out/x.txt", AT_FDCWD, "out/d/y.txt", 0, 0), Ok(0));
    assert_eq!(fs.openat(AT_FDCWD, "out/x.txt", RD, 0, 0), Err(ENOENT));
    assert_eq!(fs.scratch_files(), vec![("/out/d/y.txt".to_string(), b"hello World\n".to_vec())]);
    assert_eq!(fs.unlinkat(AT_FDCWD, "out/d", AT_REMOVEDIR, 0), Err(ENOTEMPTY));
    // Unlinked while open: still readable through the descriptor.
    let fd = fs.openat(AT_FDCWD, "out/d/y.txt", RD, 0, 0).unwrap() as i64;
    assert_eq!(fs.unlinkat(AT_FDCWD, "out/d/y.txt", 0, 0), Ok(0));
    assert_eq!(fs.read(fd, 5, None).unwrap(), b"hello");
    assert_eq!(fs.unlinkat(AT_FDCWD, "out/d", AT_REMOVEDIR, 0), Ok(0));
    assert!(fs.scratch_files().is_empty());
    fs.close(fd).unwrap();
    assert_eq!(fs.scratch_bytes(), 0);
}

#[test]
fn the_scratch_directory_has_a_size_limit() {
    let mut fs = fs_for("full");
    let fd = fs.openat(AT_FDCWD, "out/big", O_RDWR | O_CREAT, 0o644, 0).unwrap() as i64;
    assert_eq!(fs.write(fd, &vec![1u8; 1 << 20], None, 0), Ok(1 << 20));
    assert_eq!(fs.write(fd, b"x", None, 0), Err(ENOSPC));
    assert_eq!(fs.ftruncate(fd, 10, 0), Ok(0));
    assert_eq!(fs.scratch_bytes(), 10);
    assert_eq!(fs.lseek(fd, 0, 2), Ok(10));
    assert_eq!(fs.write(fd, b"x", None, 0), Ok(1), "room again");
}

#[test]
fn descriptors_dup_pipe_and_fcntl() {
    let mut fs = fs_for("fds");
    assert_eq!(fs.console_of(1), Some(1));
    let d = fs.dup(1, 0, false).unwrap() as i64;
    assert_eq!(fs.console_of(d), Some(1), "dup of standard output writes to it");
    assert_eq!(fs.dup3(2, d, O_CLOEXEC), Ok(d as u64));
    assert_eq!(fs.console_of(d), Some(2));
    assert_eq!(fs.fcntl(d, 1, 0), Ok(FcntlResult::Value(1)), "F_GETFD after dup3(O_CLOEXEC)");
    assert_eq!(fs.dup3(d, d, 0), Err(EINVAL));
    let (r, w) = fs.pipe2(0).unwrap();
    assert_eq!(fs.write(w as i64, b"through", None, 0), Ok(7));
    assert_eq!(fs.read(r as i64, 4, None).unwrap(), b"thro");
    assert_eq!(fs.read(r as i64, 10, None).unwrap(), b"ugh");
    assert_eq!(fs.read(r as i64, 10, None), Err(EAGAIN), "empty with a writer open");
    fs.close(w as i64).unwrap();
    assert_eq!(fs.read(r as i64, 10, None).unwrap(), b"", "end of file once the writers are gone");
    let f = fs.openat(AT_FDCWD, "in/a.txt", RD, 0, 0).unwrap() as i64;
    let g = match fs.fcntl(f, 0, 10).unwrap() {
        FcntlResult::Value(v) => v as i64,
        other => panic!("{other:?}"),
    };
    assert_eq!(g, 10, "F_DUPFD from 10");
    fs.read(f, 2, None).unwrap();
    assert_eq!(fs.lseek(g, 0, 1), Ok(2), "dup'd descriptors share the offset");
    assert_eq!(fs.fcntl(f, 6, 0), Ok(FcntlResult::Value(0)), "F_SETLK succeeds");
    assert_eq!(fs.fcntl(f, 5, 0), Ok(FcntlResult::NoConflictingLock));
    assert_eq!(fs.fcntl(f, 3, 0), Ok(FcntlResult::Value(O_LARGEFILE)), "F_GETFL of a read-only file");
    assert_eq!(fs.fcntl(f, 9999, 0), Err(EINVAL));
}

#[test]
fn directories_list_in_name_order_and_report_their_kinds() {
    let mut fs = fs_for("dents");
    let fd = fs.openat(AT_FDCWD, "in", O_DIRECTORY, 0, 0).unwrap() as i64;
    let bytes = fs.getdents64(fd, 4096).unwrap();
    let mut names = Vec::new();
    let mut at = 0;
    while at < bytes.len() {
        let reclen = u16::from_le_bytes([bytes[at + 16], bytes[at + 17]]) as usize;
        let name: Vec<u8> = bytes[at + 19..at + reclen].iter().take_while(|&&c| c != 0).copied().collect();
        names.push((String::from_utf8(name).unwrap(), bytes[at + 18]));
        at += reclen;
    }
    let want = [(".", 4), ("..", 4), ("a.txt", 8), ("abs", 10), ("inside", 10), ("out", 10), ("sub", 4), ("up", 10)];
    assert_eq!(names, want.map(|(n, t)| (n.to_string(), t)).to_vec());
    assert!(fs.getdents64(fd, 4096).unwrap().is_empty(), "the end of the directory");
    assert_eq!(fs.getdents64(fd, 8), Ok(Vec::new()));
    let again = fs.openat(AT_FDCWD, "in", O_DIRECTORY, 0, 0).unwrap() as i64;
    assert_eq!(fs.getdents64(again, 8), Err(EINVAL), "a buffer too small for one record");
}

#[test]
fn the_state_survives_a_checkpoint_round_trip() {
    let mut fs = fs_for("save");
    let fd = fs.openat(AT_FDCWD, "out/log", O_WRONLY | O_CREAT, 0o644, 0).unwrap() as i64;
    fs.write(fd, b"before", None, 0).unwrap();
    let inp = fs.openat(AT_FDCWD, "in/a.txt", RD, 0, 0).unwrap() as i64;
    fs.read(inp, 2, None).unwrap();
    let text = serde_json::to_string(&fs).unwrap();
    let mut back: FileSystem = serde_json::from_str(&text).unwrap();
    back.write(fd, b" after", None, 0).unwrap();
    assert_eq!(back.read(inp, 100, None).unwrap(), b"pha\n", "the offset and the host file come back");
    assert_eq!(back.scratch_files(), vec![("/out/log".to_string(), b"before after".to_vec())]);
}
