//! The state of a full-system machine besides its memory's pages, for a checkpoint of a booted system (the engine's
//! `fs_checkpoint` writes it beside the pages and restores both): the harts and their privileged state, the
//! scheduler's view of them, the platform devices (CLINT, PLIC, UART with the console so far, virtio-net with its
//! queues, backlog and counters), the frames on the wire to and from the device, the LR reservations and the
//! counters the statistics report.
//!
//! A snapshot is taken functionally (a hart's time is then its instructions at its clock plus its time asleep): a
//! run restored from it may then go on functionally or with the timing models, whose clocks start at the
//! snapshot's time (`Machine::start_timing_at`).

use kvsim_isa::hart::Hart;
use kvsim_isa::privileged::Privileged;

use super::devices::Platform;
use super::{HartRun, LevelCounts, Machine};

#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
pub struct Snapshot {
    pub dram_bytes: u64,
    pub harts: Vec<Hart>,
    pub prv: Vec<Privileged>,
    pub run_state: Vec<HartRun>,
    pub firmware_timer: Vec<bool>,
    pub sbi_calls: u64,
    pub system_insts: u64,
    pub by_level: Vec<[LevelCounts; 3]>,
    pub net_in: Vec<(u64, Vec<u8>)>,
    pub net_out: Vec<(u64, Vec<u8>)>,
    pub last_rx_ps: Option<u64>,
    pub platform: Platform,
    /// Each hart's LR reservation (physical address; u64::MAX: none).
    pub reservations: Vec<u64>,
    pub pages_touched: u64,
}

impl Machine {
    /// The machine's state besides its pages (`mem.page_numbers`, `mem.page_data`). Refused in detailed mode (the
    /// timing models' state is not saved, and a hart's time is then theirs) and after the guest has ended.
    pub fn snapshot(&mut self) -> Result<Snapshot, String> {
        if self.end.is_some() {
            return Err("the guest has powered off or reset".into());
        }
        if self.harts.iter().any(|h| h.timed_ps.is_some()) || self.sleep_until.iter().any(Option::is_some) {
            return Err("a checkpoint is taken in a functional run (System.mode = 'functional'): the timing \
                        models' state is not saved"
                .into());
        }
        let (reservations, _) = self.mem.saved_state();
        let platform = self.platform().clone();
        Ok(Snapshot {
            dram_bytes: self.cfg.dram_bytes,
            harts: self.harts.clone(),
            prv: self.prv.clone(),
            run_state: self.run_state.clone(),
            firmware_timer: self.firmware_timer.clone(),
            sbi_calls: self.sbi_calls,
            system_insts: self.system_insts,
            by_level: self.by_level.clone(),
            net_in: self.net_in.iter().cloned().collect(),
            net_out: self.net_out.clone(),
            last_rx_ps: self.last_rx_ps,
            platform,
            reservations,
            pages_touched: self.mem.pages_touched,
        })
    }

    /// Take snapshot `s` (this machine was built from the same configuration, and its pages were replaced by the
    /// snapshot's): every cached translation and decoded block is forgotten.
    pub fn restore(&mut self, s: Snapshot) -> Result<(), String> {
        if s.harts.len() != self.harts.len() || s.prv.len() != self.harts.len() || s.by_level.len() != self.harts.len()
        {
            return Err(format!("the snapshot has {} harts, this machine {}", s.harts.len(), self.harts.len()));
        }
        if s.dram_bytes != self.cfg.dram_bytes {
            return Err(format!(
                "the snapshot has {} bytes of memory, this machine {}",
                s.dram_bytes, self.cfg.dram_bytes
            ));
        }
        if s.platform.net.is_some() != self.platform().net.is_some() {
            return Err("the snapshot's machine and this one disagree on having a network device".into());
        }
        self.mem.restore_state(s.reservations, Vec::new())?;
        self.mem.pages_touched = s.pages_touched;
        for (h, saved) in self.harts.iter_mut().zip(s.harts) {
            let clock = h.clock;
            *h = saved;
            if h.clock != clock {
                return Err(format!("the snapshot's harts run at {} Hz, this machine's at {clock} Hz", h.clock));
            }
        }
        self.prv = s.prv;
        self.run_state = s.run_state;
        self.firmware_timer = s.firmware_timer;
        self.sbi_calls = s.sbi_calls;
        self.system_insts = s.system_insts;
        self.by_level = s.by_level;
        self.net_in = s.net_in.into();
        self.net_out = s.net_out;
        self.last_rx_ps = s.last_rx_ps;
        *self.platform() = s.platform;
        self.sleep_until = vec![None; self.harts.len()];
        self.end = None;
        self.mem.flush_translations();
        Ok(())
    }

    /// Detailed mode from here: every hart's time becomes its core's, starting at `t_ps` (the machine's time, so
    /// no hart's clock goes back); the timing models' own clocks count from there (their offset).
    pub fn start_timing_at(&mut self, t_ps: u64) {
        for h in &mut self.harts {
            h.timed_ps = Some(t_ps);
        }
    }
}
