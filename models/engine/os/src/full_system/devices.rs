//! The platform devices of full-system mode, at the physical addresses of qemu's `virt` board so one device tree
//! and one kernel serve both: the CLINT (timer and software interrupts), the PLIC, an NS16550 UART and the SiFive
//! test device (power off). `Platform` is the bus guest memory hands device accesses to (`kvsim_isa::mmio::Mmio`).
//!
//! Devices hold no time of their own: the machine tells the CLINT what time it is before a hart runs (`now`), and
//! reads the interrupt lines back after (`lines`).

use kvsim_isa::mmio::Mmio;
use kvsim_isa::trap::{Access, Trap};

use super::virtio_net::VirtioNet;

/// The physical memory map (qemu virt's).
pub mod map {
    pub const TEST: u64 = 0x0010_0000;
    pub const CLINT: u64 = 0x0200_0000;
    pub const CLINT_SIZE: u64 = 0x1_0000;
    pub const PLIC: u64 = 0x0c00_0000;
    pub const PLIC_SIZE: u64 = 0x60_0000;
    pub const UART0: u64 = 0x1000_0000;
    pub const UART_SIZE: u64 = 0x100;
    pub const UART0_IRQ: u32 = 10;
    /// The first of qemu virt's virtio-mmio slots (the one its first `-device` takes) and its interrupt.
    pub const VIRTIO0: u64 = 0x1000_1000;
    pub const VIRTIO_SIZE: u64 = 0x1000;
    pub const VIRTIO0_IRQ: u32 = 1;
    pub const DRAM: u64 = 0x8000_0000;
    /// Every physical address below DRAM is a device address (holes fault).
    pub const DEVICES_END: u64 = DRAM - 1;
    /// PLIC interrupt sources 1..=PLIC_SOURCES.
    pub const PLIC_SOURCES: u32 = 31;
}

/// Ends of a run the guest asks for through the test device or SBI system reset.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub enum PowerRequest {
    /// Power off; `code` 0 is success (the test device's 0x5555, an SBI shutdown with reason "none").
    Off {
        code: u32,
    },
    Reset,
}

// ------------------------------------------------------------------------------------------------ CLINT

/// The core-local interruptor: msip (software interrupt) and mtimecmp per hart, mtime shared.
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
pub struct Clint {
    pub msip: Vec<bool>,
    pub mtimecmp: Vec<u64>,
    /// mtime as of the running hart's current slice (timebase ticks).
    pub now: u64,
}

impl Clint {
    fn new(harts: usize) -> Clint {
        Clint { msip: vec![false; harts], mtimecmp: vec![u64::MAX; harts], now: 0 }
    }

    fn load(&mut self, off: u64, size: u8) -> Option<u64> {
        let harts = self.msip.len() as u64;
        match off {
            o if o < 4 * harts && size == 4 => Some(self.msip[(o / 4) as usize] as u64),
            o if (0x4000..0x4000 + 8 * harts).contains(&o) => {
                let v = self.mtimecmp[((o - 0x4000) / 8) as usize];
                Some(if o % 8 == 4 { v >> 32 } else { v })
            }
            0xbff8 => Some(self.now),
            0xbffc => Some(self.now >> 32),
            _ => None,
        }
    }

    fn store(&mut self, off: u64, size: u8, val: u64) -> Option<()> {
        let harts = self.msip.len() as u64;
        match off {
            o if o < 4 * harts && size == 4 => self.msip[(o / 4) as usize] = val & 1 != 0,
            o if (0x4000..0x4000 + 8 * harts).contains(&o) => {
                let cmp = &mut self.mtimecmp[((o - 0x4000) / 8) as usize];
                *cmp = match (size, o % 8) {
                    (8, 0) => val,
                    (4, 0) => (*cmp & !0xffff_ffff) | (val & 0xffff_ffff),
                    (4, 4) => (*cmp & 0xffff_ffff) | (val << 32),
                    _ => return None,
                };
            }
            // mtime is derived from the harts' simulated time: writes are refused.
            _ => return None,
        }
        Some(())
    }
}

// ------------------------------------------------------------------------------------------------ PLIC

/// The platform-level interrupt controller (SiFive PLIC programming model): per source a priority and a pending
/// bit; per context (hart h: context 2h is its M mode, 2h+1 its S mode) enables, a threshold, claim and complete.
/// Sources are level-triggered through a gateway: a source is pending when its line is high and it is not being
/// served (claimed and not yet completed).
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
pub struct Plic {
    pub priority: Vec<u32>,
    pub pending: u64,
    pub in_service: u64,
    pub enable: Vec<u64>,
    pub threshold: Vec<u32>,
    /// The devices' lines (bit = source).
    pub lines: u64,
}

impl Plic {
    fn new(harts: usize) -> Plic {
        let sources = map::PLIC_SOURCES as usize + 1;
        Plic {
            priority: vec![0; sources],
            pending: 0,
            in_service: 0,
            enable: vec![0; 2 * harts],
            threshold: vec![0; 2 * harts],
            lines: 0,
        }
    }

    /// A device's line changed level.
    pub fn set_line(&mut self, source: u32, level: bool) {
        if level {
            self.lines |= 1 << source;
        } else {
            self.lines &= !(1 << source);
        }
        self.update_pending();
    }

    fn update_pending(&mut self) {
        self.pending |= self.lines & !self.in_service;
    }

    /// The source context `ctx` would claim now (highest priority above the threshold; ties to the lowest id).
    fn best(&self, ctx: usize) -> u32 {
        let mut best = (0u32, 0u32);
        let candidates = self.pending & self.enable[ctx];
        for s in 1..=map::PLIC_SOURCES {
            let p = self.priority[s as usize];
            if candidates & (1 << s) != 0 && p > self.threshold[ctx] && p > best.1 {
                best = (s, p);
            }
        }
        best.0
    }

    /// Is context `ctx`'s interrupt line (MEIP or SEIP) high?
    pub fn context_line(&self, ctx: usize) -> bool {
        self.best(ctx) != 0
    }

    fn load(&mut self, off: u64) -> Option<u64> {
        let contexts = self.enable.len() as u64;
        Some(match off {
            o if o < 4 * (map::PLIC_SOURCES as u64 + 1) => self.priority[(o / 4) as usize] as u64,
            0x1000 => self.pending & 0xffff_ffff,
            o if (0x2000..0x2000 + 0x80 * contexts).contains(&o) && o % 0x80 == 0 => {
                self.enable[((o - 0x2000) / 0x80) as usize] & 0xffff_ffff
            }
            o if (0x20_0000..0x20_0000 + 0x1000 * contexts).contains(&o) => {
                let ctx = ((o - 0x20_0000) / 0x1000) as usize;
                match o % 0x1000 {
                    0 => self.threshold[ctx] as u64,
                    4 => {
                        let s = self.best(ctx);
                        if s != 0 {
                            self.pending &= !(1 << s);
                            self.in_service |= 1 << s;
                        }
                        s as u64
                    }
                    _ => return None,
                }
            }
            // Enable words of sources >= 32 and the pending word above them: this PLIC has 31 sources.
            o if (0x1000..0x20_0000).contains(&o) => 0,
            _ => return None,
        })
    }

    fn store(&mut self, off: u64, val: u64) -> Option<()> {
        let contexts = self.enable.len() as u64;
        match off {
            0 => {}
            o if o < 4 * (map::PLIC_SOURCES as u64 + 1) => self.priority[(o / 4) as usize] = (val & 7) as u32,
            o if (0x2000..0x2000 + 0x80 * contexts).contains(&o) && o % 0x80 == 0 => {
                self.enable[((o - 0x2000) / 0x80) as usize] = val & 0xffff_fffe;
            }
            o if (0x20_0000..0x20_0000 + 0x1000 * contexts).contains(&o) => {
                let ctx = ((o - 0x20_0000) / 0x1000) as usize;
                match o % 0x1000 {
                    0 => self.threshold[ctx] = (val & 7) as u32,
                    4 => {
                        let s = val as u32;
                        if (1..=map::PLIC_SOURCES).contains(&s) && self.enable[ctx] & (1 << s) != 0 {
                            self.in_service &= !(1 << s);
                            self.update_pending();
                        }
                    }
                    _ => return None,
                }
            }
            o if (0x1000..0x20_0000).contains(&o) => {}
            _ => return None,
        }
        Some(())
    }
}

// ------------------------------------------------------------------------------------------------ UART

/// An NS16550A with its transmitter always ready (a byte written leaves at once, into the console) and a receive
/// FIFO the machine may fill. Interrupts: received data available, and transmitter-holding-register empty (raised
/// when enabled or after each byte, cleared by reading IIR while it is the source, as the 16550 does).
#[derive(Debug, Clone, Default, serde::Serialize, serde::Deserialize)]
pub struct Uart {
    pub ier: u8,
    pub lcr: u8,
    pub mcr: u8,
    pub scr: u8,
    pub fcr: u8,
    pub dll: u8,
    pub dlm: u8,
    pub thre_pending: bool,
    pub rx: std::collections::VecDeque<u8>,
    pub output: Vec<u8>,
}

const IER_RDI: u8 = 1;
const IER_THRI: u8 = 2;
const LCR_DLAB: u8 = 0x80;

impl Uart {
    pub fn irq_line(&self) -> bool {
        (self.ier & IER_THRI != 0 && self.thre_pending) || (self.ier & IER_RDI != 0 && !self.rx.is_empty())
    }

    fn load(&mut self, off: u64) -> u64 {
        let dlab = self.lcr & LCR_DLAB != 0;
        (match off {
            0 if dlab => self.dll,
            0 => self.rx.pop_front().unwrap_or(0),
            1 if dlab => self.dlm,
            1 => self.ier,
            2 => {
                let fifo = if self.fcr & 1 != 0 { 0xc0 } else { 0 };
                let id = if self.ier & IER_RDI != 0 && !self.rx.is_empty() {
                    0x04
                } else if self.ier & IER_THRI != 0 && self.thre_pending {
                    self.thre_pending = false;
                    0x02
                } else {
                    0x01
                };
                fifo | id
            }
            3 => self.lcr,
            4 => self.mcr,
            // LSR: transmitter empty and holding register empty, data ready when a byte waits.
            5 => 0x60 | !self.rx.is_empty() as u8,
            // MSR: carrier detect, data set ready and clear to send (a connected terminal); in loopback, the
            // modem-control outputs looped back.
            6 => {
                if self.mcr & 0x10 != 0 {
                    ((self.mcr & 0x0c) << 4) | ((self.mcr & 0x01) << 5) | ((self.mcr & 0x02) << 3)
                } else {
                    0xb0
                }
            }
            _ => self.scr,
        }) as u64
    }

    fn store(&mut self, off: u64, val: u8) {
        let dlab = self.lcr & LCR_DLAB != 0;
        match off {
            0 if dlab => self.dll = val,
            0 => {
                self.output.push(val);
                self.thre_pending = true;
            }
            1 if dlab => self.dlm = val,
            1 => {
                if val & IER_THRI != 0 && self.ier & IER_THRI == 0 {
                    self.thre_pending = true;
                }
                self.ier = val & 0x0f;
            }
            2 => self.fcr = val,
            3 => self.lcr = val,
            4 => self.mcr = val & 0x1f,
            7 => self.scr = val,
            _ => {}
        }
    }
}

// ------------------------------------------------------------------------------------------------ the bus

/// Every platform device; guest memory's device window leads here.
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
pub struct Platform {
    pub clint: Clint,
    pub plic: Plic,
    pub uart: Uart,
    pub power: Option<PowerRequest>,
    /// The network device (None: the machine has none).
    pub net: Option<VirtioNet>,
}

impl Platform {
    pub fn new(harts: usize, net_mac: Option<[u8; 6]>) -> Platform {
        Platform {
            clint: Clint::new(harts),
            plic: Plic::new(harts),
            uart: Uart::default(),
            power: None,
            net: net_mac.map(VirtioNet::new),
        }
    }

    /// Bring the PLIC's view of the devices' lines up to date (after a device access or an event).
    pub fn sync_lines(&mut self) {
        let uart = self.uart.irq_line();
        if (self.plic.lines >> map::UART0_IRQ) & 1 != uart as u64 {
            self.plic.set_line(map::UART0_IRQ, uart);
        }
        let net = self.net.as_ref().is_some_and(VirtioNet::irq_line);
        if (self.plic.lines >> map::VIRTIO0_IRQ) & 1 != net as u64 {
            self.plic.set_line(map::VIRTIO0_IRQ, net);
        }
    }
}

/// The reason of the refused access that ends a slice at a write to the network device's QueueNotify: the
/// machine retires the store and serves the queue at once (it has the memory the device reads and writes).
pub const NET_KICK: &str = "the network device was notified";

/// The reason of the refused access that ends a slice at a power-off store (see `Platform::store`).
pub const POWER_STOP: &str = "the machine powers off";

fn refuse(addr: u64, size: u8, access: Access, why: &'static str) -> Trap {
    Trap::Mmio { addr, size, access, why }
}

impl Mmio for Platform {
    fn load(&mut self, addr: u64, size: u8, access: Access) -> Result<u64, Trap> {
        use map::*;
        let v = match addr {
            a if (CLINT..CLINT + CLINT_SIZE).contains(&a) => self.clint.load(a - CLINT, size),
            a if (PLIC..PLIC + PLIC_SIZE).contains(&a) && size == 4 => self.plic.load(a - PLIC),
            a if (UART0..UART0 + UART_SIZE).contains(&a) && size == 1 => Some(self.uart.load(a - UART0)),
            a if (TEST..TEST + 0x1000).contains(&a) => Some(0),
            a if (VIRTIO0..VIRTIO0 + VIRTIO_SIZE).contains(&a) => match self.net.as_mut() {
                Some(net) => net.load(a - VIRTIO0, size),
                // An empty virtio-mmio slot: the magic and version, device id 0 (the driver skips it).
                None => match a - VIRTIO0 {
                    0 if size == 4 => Some(0x7472_6976),
                    4 if size == 4 => Some(2),
                    _ => Some(0),
                },
            },
            _ => None,
        };
        self.sync_lines();
        v.ok_or_else(|| refuse(addr, size, access, "no device register here"))
    }

    fn store(&mut self, addr: u64, size: u8, val: u64, access: Access) -> Result<(), Trap> {
        use map::*;
        let done = match addr {
            a if (CLINT..CLINT + CLINT_SIZE).contains(&a) => self.clint.store(a - CLINT, size, val),
            a if (PLIC..PLIC + PLIC_SIZE).contains(&a) && size == 4 => self.plic.store(a - PLIC, val),
            a if (UART0..UART0 + UART_SIZE).contains(&a) && size == 1 => {
                self.uart.store(a - UART0, val as u8);
                Some(())
            }
            // The SiFive test device: 0x5555 powers off with success, 0xN3333 with failure code N, 0x7777 resets.
            // The store then stops the executor (as a refused access the machine recognises by `power`), so that
            // nothing after it runs.
            a if a == TEST && size == 4 => {
                self.power = match val & 0xffff {
                    0x5555 => Some(PowerRequest::Off { code: 0 }),
                    0x3333 => Some(PowerRequest::Off { code: ((val >> 16) as u32).max(1) }),
                    0x7777 => Some(PowerRequest::Reset),
                    _ => return Ok(()),
                };
                return Err(refuse(addr, size, access, POWER_STOP));
            }
            a if (VIRTIO0..VIRTIO0 + VIRTIO_SIZE).contains(&a) => match self.net.as_mut() {
                Some(net) => match net.store(a - VIRTIO0, size, val) {
                    Some(true) => return Err(refuse(addr, size, access, NET_KICK)),
                    done => done.map(|_| ()),
                },
                None => Some(()),
            },
            _ => None,
        };
        self.sync_lines();
        done.ok_or_else(|| refuse(addr, size, access, "no device register here (or a refused write)"))
    }
}
