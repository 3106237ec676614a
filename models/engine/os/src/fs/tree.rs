//! The guest's file tree: directories, read-only files mapped from the host, files in the simulator's memory (the
//! scratch directory), symbolic links, and the nameless nodes behind pipes and the standard streams. Paths resolve
//! inside this tree only: `..` at the root stays at the root and a symbolic link's target is resolved in the tree
//! too, so no guest path reaches a host file that was not mapped.

use std::collections::{BTreeMap, VecDeque};
use std::path::Path;
use std::sync::Arc;

use serde::{Deserialize, Serialize};

use super::errno::*;

/// A node's number: its index in the tree's arena (and its inode number less one).
pub type Ino = usize;
pub const ROOT: Ino = 0;
/// Longest name of one path component, and of a whole path (Linux's NAME_MAX and PATH_MAX).
const NAME_MAX: usize = 255;
pub const PATH_MAX: usize = 4096;
/// Symbolic links followed while resolving one path before ELOOP (Linux's MAXSYMLINKS).
const MAX_SYMLINKS: u32 = 40;

pub const S_IFMT: u32 = 0o170000;
pub const S_IFIFO: u32 = 0o010000;
pub const S_IFDIR: u32 = 0o040000;
pub const S_IFREG: u32 = 0o100000;
pub const S_IFLNK: u32 = 0o120000;

#[derive(Debug, Clone, Serialize, Deserialize)]
pub enum Content {
    Dir {
        entries: BTreeMap<String, Ino>,
    },
    /// A host file, read whole on first use (never written, never re-read: the run sees one version of it).
    Host {
        path: String,
        #[serde(skip)]
        data: Option<Arc<Vec<u8>>>,
    },
    /// A file in the simulator's memory (scratch).
    Mem {
        data: Vec<u8>,
    },
    Symlink {
        target: String,
    },
    /// A pipe's buffer; `readers`/`writers` count the open ends.
    Pipe {
        buf: VecDeque<u8>,
        readers: u32,
        writers: u32,
    },
    /// Standard output (1) or error (2): what is written goes to the run's output.
    Console(u8),
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Node {
    pub content: Content,
    pub parent: Ino,
    /// File type and permission bits (st_mode).
    pub mode: u32,
    /// May the guest change it (a file's data, a directory's entries)? Mapped host nodes and the directories
    /// leading to mounts are read-only (EROFS).
    pub writable: bool,
    pub mtime_ns: u64,
    /// Size of a host file (from the host's metadata until its data is read).
    pub host_size: u64,
    pub nlink: u32,
    /// Open file descriptions on it (an unlinked node keeps its data while open).
    pub opens: u32,
}

impl Node {
    pub fn new(content: Content, parent: Ino, mode: u32, writable: bool, mtime_ns: u64) -> Node {
        Node { content, parent, mode, writable, mtime_ns, host_size: 0, nlink: 1, opens: 0 }
    }

    pub fn is_dir(&self) -> bool {
        matches!(self.content, Content::Dir { .. })
    }

    pub fn size(&self) -> u64 {
        match &self.content {
            Content::Host { data: Some(d), .. } => d.len() as u64,
            Content::Host { .. } => self.host_size,
            Content::Mem { data } => data.len() as u64,
            Content::Symlink { target } => target.len() as u64,
            Content::Pipe { buf, .. } => buf.len() as u64,
            Content::Dir { entries } => 4096 * (1 + entries.len() as u64 / 128),
            Content::Console(_) => 0,
        }
    }
}

/// The tree: an arena of nodes, node 0 the root.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Tree {
    pub nodes: Vec<Node>,
}

impl Tree {
    pub fn new() -> Tree {
        Tree { nodes: vec![Node::new(Content::Dir { entries: BTreeMap::new() }, ROOT, S_IFDIR | 0o755, false, 0)] }
    }

    pub fn add(&mut self, node: Node) -> Ino {
        self.nodes.push(node);
        self.nodes.len() - 1
    }

    pub fn entries(&self, dir: Ino) -> Result<&BTreeMap<String, Ino>, i64> {
        match &self.nodes[dir].content {
            Content::Dir { entries } => Ok(entries),
            _ => Err(ENOTDIR),
        }
    }

    fn entries_mut(&mut self, dir: Ino) -> &mut BTreeMap<String, Ino> {
        match &mut self.nodes[dir].content {
            Content::Dir { entries } => entries,
            _ => unreachable!("callers check that {dir} is a directory"),
        }
    }

    /// Add `name` → `ino` in directory `dir` (the caller has checked that it may).
    pub fn link(&mut self, dir: Ino, name: &str, ino: Ino) {
        self.entries_mut(dir).insert(name.to_string(), ino);
        self.nodes[ino].parent = dir;
    }

    pub fn unlink(&mut self, dir: Ino, name: &str) -> Option<Ino> {
        let ino = self.entries_mut(dir).remove(name)?;
        let node = &mut self.nodes[ino];
        node.nlink = node.nlink.saturating_sub(1);
        Some(ino)
    }

    /// Resolve `path` from directory `start`, following a final symbolic link when `follow`.
    pub fn resolve(&self, start: Ino, path: &str, follow: bool) -> Result<Ino, i64> {
        let mut links = 0;
        self.walk(start, path, follow, &mut links)
    }

    /// The directory that holds `path`'s last component, and that component ("" for a path of only slashes,
    /// meaning the directory itself). Intermediate symbolic links are followed.
    pub fn resolve_parent<'p>(&self, start: Ino, path: &'p str) -> Result<(Ino, &'p str), i64> {
        check_path(path)?;
        let trimmed = path.trim_end_matches('/');
        let (dir_part, name) = match trimmed.rfind('/') {
            Some(i) => (&trimmed[..=i], &trimmed[i + 1..]),
            None => ("", trimmed),
        };
        let dir = if dir_part.is_empty() { start } else { self.resolve(start, dir_part, true)? };
        self.entries(dir)?;
        Ok((dir, name))
    }

    fn walk(&self, start: Ino, path: &str, follow: bool, links: &mut u32) -> Result<Ino, i64> {
        check_path(path)?;
        let mut cur = if path.starts_with('/') { ROOT } else { start };
        let parts: Vec<&str> = path.split('/').filter(|p| !p.is_empty()).collect();
        let trailing_slash = path.ends_with('/') && !parts.is_empty();
        for (i, part) in parts.iter().enumerate() {
            let entries = self.entries(cur)?;
            let next = match *part {
                "." => cur,
                ".." => self.nodes[cur].parent,
                name => *entries.get(name).ok_or(ENOENT)?,
            };
            let last = i + 1 == parts.len();
            if let Content::Symlink { target } = &self.nodes[next].content {
                if !last || follow || trailing_slash {
                    *links += 1;
                    if *links > MAX_SYMLINKS {
                        return Err(ELOOP);
                    }
                    cur = self.walk(cur, target, true, links)?;
                    continue;
                }
            }
            cur = next;
        }
        if trailing_slash && !self.nodes[cur].is_dir() {
            return Err(ENOTDIR);
        }
        Ok(cur)
    }

    /// The absolute path of directory `dir`.
    pub fn path_of(&self, mut dir: Ino) -> String {
        let mut parts = Vec::new();
        while dir != ROOT {
            let parent = self.nodes[dir].parent;
            let name = self.entries(parent).ok().and_then(|e| e.iter().find(|(_, &i)| i == dir).map(|(n, _)| n));
            parts.push(name.cloned().unwrap_or_default());
            dir = parent;
        }
        parts.reverse();
        format!("/{}", parts.join("/"))
    }

    /// Is `node` `ancestor` or inside it?
    pub fn is_within(&self, mut node: Ino, ancestor: Ino) -> bool {
        loop {
            if node == ancestor {
                return true;
            }
            if node == ROOT {
                return false;
            }
            node = self.nodes[node].parent;
        }
    }

    /// The directory at absolute guest path `path`, made (read-only, like a mount point's parents) where missing.
    pub fn make_dirs(&mut self, path: &str) -> Result<Ino, String> {
        let mut cur = ROOT;
        for part in path.split('/').filter(|p| !p.is_empty()) {
            cur = match self.entries(cur).map_err(|_| format!("guest path {path}: {part} is inside a file"))?.get(part)
            {
                Some(&ino) => ino,
                None => {
                    let ino =
                        self.add(Node::new(Content::Dir { entries: BTreeMap::new() }, cur, S_IFDIR | 0o755, false, 0));
                    self.link(cur, part, ino);
                    ino
                }
            };
        }
        Ok(cur)
    }

    /// Map host file or folder `host` at guest path `guest` (read-only; a folder with its whole tree). Host symbolic
    /// links become guest links with the same target, resolved in the guest tree.
    pub fn map_host(&mut self, host: &Path, guest: &str) -> Result<(), String> {
        let (parent, name) = split_guest(guest)?;
        let dir = self.make_dirs(parent)?;
        if self.entries(dir).map_err(|e| format!("guest path {guest}: errno {e}"))?.contains_key(name) {
            return Err(format!("guest path {guest} is mapped twice"));
        }
        let ino = self.host_node(host, dir)?;
        self.link(dir, name, ino);
        Ok(())
    }

    fn host_node(&mut self, host: &Path, parent: Ino) -> Result<Ino, String> {
        let meta = std::fs::symlink_metadata(host).map_err(|e| format!("host path {}: {e}", host.display()))?;
        let mtime_ns = meta
            .modified()
            .ok()
            .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
            .map_or(0, |d| d.as_nanos() as u64);
        let perm = host_mode(&meta) & 0o7777;
        let ft = meta.file_type();
        if ft.is_symlink() {
            let target = std::fs::read_link(host).map_err(|e| format!("host link {}: {e}", host.display()))?;
            let target = target.to_str().ok_or(format!("host link {}: target is not UTF-8", host.display()))?;
            return Ok(self.add(Node::new(
                Content::Symlink { target: target.into() },
                parent,
                S_IFLNK | 0o777,
                false,
                mtime_ns,
            )));
        }
        if ft.is_dir() {
            let ino =
                self.add(Node::new(Content::Dir { entries: BTreeMap::new() }, parent, S_IFDIR | perm, false, mtime_ns));
            let mut names: Vec<_> = std::fs::read_dir(host)
                .map_err(|e| format!("host folder {}: {e}", host.display()))?
                .filter_map(|e| e.ok())
                .collect();
            names.sort_by_key(|e| e.file_name());
            for entry in names {
                let name = entry.file_name();
                let Some(name) = name.to_str() else { continue };
                let child = self.host_node(&entry.path(), ino)?;
                self.link(ino, name, child);
            }
            return Ok(ino);
        }
        if !ft.is_file() {
            return Err(format!("host path {}: only files, folders and links can be mapped", host.display()));
        }
        let path = host.to_str().ok_or(format!("host path {}: not UTF-8", host.display()))?.to_string();
        let mut node = Node::new(Content::Host { path, data: None }, parent, S_IFREG | perm, false, mtime_ns);
        node.host_size = meta.len();
        Ok(self.add(node))
    }

    /// The bytes of a regular file (a host file is read now if it was not yet).
    pub fn file_data(&mut self, ino: Ino) -> Result<&[u8], i64> {
        let node = &mut self.nodes[ino];
        match &mut node.content {
            Content::Mem { data } => Ok(data),
            Content::Host { path, data } => {
                if data.is_none() {
                    let bytes = std::fs::read(&*path).map_err(|_| EIO)?;
                    *data = Some(Arc::new(bytes));
                }
                Ok(data.as_ref().map(|d| d.as_slice()).unwrap_or_default())
            }
            Content::Dir { .. } => Err(EISDIR),
            _ => Err(EINVAL),
        }
    }
}

impl Node {
    /// Free the data of a node no name and no descriptor refers to any more; returns the scratch bytes freed.
    pub fn release(&mut self) -> u64 {
        match &mut self.content {
            Content::Mem { data } => std::mem::take(data).len() as u64,
            Content::Host { data, .. } => {
                *data = None;
                0
            }
            _ => 0,
        }
    }
}

impl Default for Tree {
    fn default() -> Tree {
        Tree::new()
    }
}

#[cfg(unix)]
fn host_mode(meta: &std::fs::Metadata) -> u32 {
    use std::os::unix::fs::PermissionsExt;
    meta.permissions().mode()
}

fn check_path(path: &str) -> Result<(), i64> {
    if path.is_empty() {
        return Err(ENOENT);
    }
    if path.len() >= PATH_MAX {
        return Err(ENAMETOOLONG);
    }
    if path.split('/').any(|p| p.len() > NAME_MAX) {
        return Err(ENAMETOOLONG);
    }
    Ok(())
}

/// "/a/b/c" → ("/a/b", "c"); the validated Workload paths are absolute without `.` or `..`.
pub fn split_guest(guest: &str) -> Result<(&str, &str), String> {
    let trimmed = guest.trim_end_matches('/');
    match trimmed.rfind('/') {
        Some(i) if !trimmed[i + 1..].is_empty() => Ok((&trimmed[..i], &trimmed[i + 1..])),
        _ => Err(format!("guest path {guest:?} must be absolute and name something below /")),
    }
}
