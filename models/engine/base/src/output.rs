//! What a finished run hands back: how it stopped, what the guest printed, and the statistics tree.

/// Why the run stopped.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StopReason {
    /// Every hart exited, or one called exit_group.
    Exit,
    /// System.max_insts was reached.
    MaxInsts,
    /// System.max_time was reached.
    MaxTime,
    /// The ghost client has every response it waited for (System.client).
    ClientDone,
    /// The scheduler paused at a mode switch or a progress report (internal: the driver resumes the run).
    Pause,
    /// A signal (Ctrl-C) reached the process during the run: it stopped between turns with its results so far.
    Interrupted,
}

impl StopReason {
    pub fn as_str(self) -> &'static str {
        match self {
            StopReason::Exit => "exit",
            StopReason::MaxInsts => "max_insts",
            StopReason::MaxTime => "max_time",
            StopReason::Pause => "pause",
            StopReason::ClientDone => "client_done",
            StopReason::Interrupted => "interrupted",
        }
    }
}

/// One named statistic (gem5 style: `system.hart0.insts`), with a one-line description.
#[derive(Debug, Clone, PartialEq)]
pub struct Stat {
    pub name: String,
    pub value: f64,
    pub desc: String,
}

#[derive(Debug, Clone, Default)]
pub struct HartSummary {
    pub insts: u64,
    /// Code passed to exit(), if the hart exited.
    pub exit_code: Option<i64>,
}

#[derive(Debug, Clone)]
pub struct RunOutput {
    pub stop: StopReason,
    /// The process's exit status: exit_group's code, else hart 0's exit code.
    pub exit_code: Option<i64>,
    pub stdout: Vec<u8>,
    pub stderr: Vec<u8>,
    pub harts: Vec<HartSummary>,
    /// Simulated time at the end of the run, in picoseconds.
    pub sim_ticks: u64,
    pub stats: Vec<Stat>,
    /// Snapshots taken by the guest's STATS_DUMP simulator calls (a time series): (sim_ticks, stats) each, at
    /// most `MAX_STAT_DUMPS` of them.
    pub stat_dumps: Vec<(u64, Vec<Stat>)>,
    /// The NUMA map's placed ranges (start, end, socket); every other address is on socket 0.
    pub numa_ranges: Vec<(u64, u64, u16)>,
    /// The files of the scratch directory (Workload.scratch) at the end: (absolute guest path, bytes).
    pub scratch_files: Vec<(String, Vec<u8>)>,
}

/// Most STATS_DUMP snapshots a run keeps (later calls are only counted).
pub const MAX_STAT_DUMPS: usize = 10_000;
