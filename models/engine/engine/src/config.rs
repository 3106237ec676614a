//! The engine's view of the configuration: the part of `System` the functional engine and its timing hooks read.

use kvsim_params::System;

/// The part of `System` the functional engine uses (decoupled so tests need not build a whole `System`).
#[derive(Debug, Clone, PartialEq)]
pub struct EngineConfig {
    pub harts: u64,
    /// The socket of each hart (harts are numbered socket by socket, System.sockets), for SOCKET_OF and NUMA.
    pub hart_socket: Vec<u16>,
    pub clock: u64,
    pub mem_limit: u64,
    /// System.unpacked_memory: most guest memory kept as whole pages (0: all; isa packed.rs).
    pub unpacked_memory: u64,
    pub stack_size: u64,
    pub quantum: u64,
    /// System.schedule = 'partitioned' on two or more sockets: the window (ps) the socket partitions advance in,
    /// System.socket_link.latency (None: the global schedule; on one socket both are the same).
    pub partition_window: Option<u64>,
    /// System.partition_order = 'reversed' (the partitioned schedule's check that the partitions' order within a
    /// window does not matter).
    pub partition_reversed: bool,
    /// System.host_threads (only 1 is built: `Machine::new` refuses more).
    pub host_threads: u64,
    pub max_insts: u64,
    pub max_time: u64,
    pub seed: u64,
    pub misaligned: kvsim_params::SystemMisaligned,
    pub trace_file: String,
    pub binary: String,
    pub argv: Vec<String>,
    pub env: Vec<String>,
    /// The guest's file tree (Workload.files, scratch, cwd, stdin) and where to save the scratch tree.
    pub fs: kvsim_os::fs::FsConfig,
    pub scratch_save: String,
    /// The NICs (System.nics, or System.nic when the list is empty and it is enabled) and the ghost client.
    pub nics: Vec<kvsim_params::Nic>,
    pub client: Option<kvsim_params::Client>,
    /// System.checkpoint_to, System.restore_from, and the resolved configuration (JSON) a checkpoint records.
    pub checkpoint_to: String,
    pub checkpoint_at_insts: u64,
    pub restore_from: String,
    pub resolved: serde_json::Value,
}

impl EngineConfig {
    pub fn from_system(s: &System) -> EngineConfig {
        EngineConfig {
            harts: s.harts,
            hart_socket: hart_sockets(s),
            clock: s.clock,
            mem_limit: s.mem_limit,
            unpacked_memory: s.unpacked_memory,
            stack_size: s.stack_size,
            quantum: s.quantum,
            partition_window: partition_window(s),
            partition_reversed: s.partition_order == kvsim_params::SystemPartitionOrder::Reversed,
            host_threads: s.host_threads,
            max_insts: s.max_insts,
            max_time: s.max_time,
            seed: s.seed,
            misaligned: s.misaligned,
            trace_file: s.trace_file.clone(),
            binary: s.workload.binary.clone(),
            argv: s.workload.argv.clone(),
            env: s.workload.env.clone(),
            fs: fs_config(&s.workload),
            scratch_save: s.workload.scratch_save.clone(),
            nics: system_nics(s),
            client: s.client.enabled.then(|| s.client.clone()),
            checkpoint_to: s.checkpoint_to.clone(),
            checkpoint_at_insts: s.checkpoint_at_insts,
            restore_from: s.restore_from.clone(),
            resolved: serde_json::to_value(s).unwrap_or_default(),
        }
    }

    /// The defaults of models/system.py (the generated `System::default()`), running `binary`.
    pub fn with_binary(binary: &str) -> EngineConfig {
        EngineConfig { binary: binary.into(), ..EngineConfig::from_system(&System::default()) }
    }
}

/// The guest's `argv[0]`: the binary's file name, as a shell passes it for a program found on its PATH. Never the
/// host path: that would put where the project is checked out into the guest's stack (its length shifts every
/// stack address, and with them cache sets and statistics), so two checkouts would give different results.
pub fn guest_program_name(binary: &str) -> String {
    std::path::Path::new(binary).file_name().map_or_else(|| binary.to_string(), |n| n.to_string_lossy().into_owned())
}

/// The file tree Workload names: 'HOST=GUEST' or 'HOST' (at /<its name>) entries, the scratch directory, the
/// working directory and standard input (models/system.py has checked them).
pub fn fs_config(w: &kvsim_params::Workload) -> kvsim_os::fs::FsConfig {
    let mounts = w
        .files
        .iter()
        .map(|entry| match entry.split_once('=') {
            Some((host, guest)) => (host.to_string(), guest.to_string()),
            None => {
                let name = std::path::Path::new(entry).file_name().map(|n| n.to_string_lossy().into_owned());
                (entry.clone(), format!("/{}", name.unwrap_or_default()))
            }
        })
        .collect();
    kvsim_os::fs::FsConfig {
        mounts,
        scratch: (!w.scratch.is_empty()).then(|| w.scratch.clone()),
        scratch_size: w.scratch_size,
        cwd: if w.cwd.is_empty() { "/".into() } else { w.cwd.clone() },
        stdin: (!w.stdin.is_empty()).then(|| w.stdin.clone()),
    }
}

/// The system's NICs: `System.nics` (its enabled entries), or the one `System.nic` shorthand when the list is empty.
pub fn system_nics(s: &System) -> Vec<kvsim_params::Nic> {
    if s.nics.is_empty() {
        s.nic.enabled.then(|| s.nic.clone()).into_iter().collect()
    } else {
        s.nics.iter().filter(|n| n.enabled).cloned().collect()
    }
}

/// The partitioned schedule's window: the smallest latency between sockets (one link model joins every pair), when
/// System.schedule asks for it and there are two sockets or more.
pub fn partition_window(s: &System) -> Option<u64> {
    let partitioned = s.schedule == kvsim_params::SystemSchedule::Partitioned;
    (partitioned && s.socket_list().len() > 1).then_some(s.socket_link.latency)
}

/// The socket of each hart: socket 0's cores first, then socket 1's, and so on (models/system.py numbers them so).
pub fn hart_sockets(s: &System) -> Vec<u16> {
    let mut out: Vec<u16> = s
        .socket_list()
        .iter()
        .enumerate()
        .flat_map(|(k, sock)| std::iter::repeat_n(k as u16, sock.cores as usize))
        .collect();
    // A hart beyond the listed cores (a Python-side check refuses this first) stays on the last socket.
    let last = out.last().copied().unwrap_or(0);
    out.resize(s.harts as usize, last);
    out
}
