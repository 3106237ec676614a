//! The device bus: guest loads and stores in the device range (`abi::DEVICE_BASE..=DEVICE_END`) go to the device
//! whose register window holds the address; an address no device claims (a hole between windows) is a clear
//! memory fault naming it. Guest memory never owns a device: `Memory` hands every device-range access to the bus.
//!
//! Today's devices are NICs. NIC k's window starts at `nic_base(k)`: the windows are `NIC_WINDOW` apart, room for
//! the most queues a NIC may have, and a NIC with fewer queues leaves the rest of its window unmapped.

use crate::nic::{NicRegs, MAX_QUEUES, QUEUE_STRIDE};
use kvsim_base::abi::{DEVICE_BASE, DEVICE_END};
use std::any::Any;

use kvsim_isa::memory::Memory;
use kvsim_isa::mmio::Mmio;
use kvsim_isa::trap::{Access, Trap};

/// Distance between the register windows of consecutive NICs: 1024 queues x 4 KiB.
pub const NIC_WINDOW: u64 = MAX_QUEUES * QUEUE_STRIDE;

/// Most NICs the device range holds.
pub const MAX_NICS: u64 = (DEVICE_END - DEVICE_BASE + 1) / NIC_WINDOW;

/// Base address of NIC k's registers.
pub fn nic_base(k: usize) -> u64 {
    DEVICE_BASE + k as u64 * NIC_WINDOW
}

/// How a device reaches memory: a DMA access (address, write or read, the time it reaches the host) in, the time
/// the memory system has done it out, on behalf of the device's agent id. The memory system's I/O path is coherent:
/// the access enters as that agent at the agent's place on the on-chip network (`AgentPort` names the agent).
/// An access for one of the device's queues also names the hart that owns the queue (a memory with a port per
/// core serves it on that hart's port).
pub trait DmaPort {
    /// The agent the accesses come from (cores are agents 0..harts, NIC k is agent harts + k).
    fn agent(&self) -> usize;
    fn access(&mut self, addr: u64, write: bool, t: u64) -> u64 {
        let agent = self.agent();
        self.access_as(agent, None, addr, write, t)
    }
    /// An access for the device's queue `queue` (its index in the device): on behalf of the hart owning it when
    /// the port knows the owners (`AgentPort`), else as `access`.
    fn queue_access(&mut self, _queue: usize, addr: u64, write: bool, t: u64) -> u64 {
        self.access(addr, write, t)
    }
    /// The access on behalf of `agent` (a port that forwards other devices' accesses keeps their id), for the hart
    /// `owner` when a hart owns it.
    fn access_as(&mut self, agent: usize, owner: Option<usize>, addr: u64, write: bool, t: u64) -> u64;
}

/// A device's DMA port over the memory system's I/O calls; `queue_owner[q]` is the hart owning its queue q.
pub struct AgentPort<'a> {
    pub agent: usize,
    pub queue_owner: &'a [Option<usize>],
    pub memory: &'a mut dyn DmaPort,
}

impl DmaPort for AgentPort<'_> {
    fn agent(&self) -> usize {
        self.agent
    }

    fn queue_access(&mut self, queue: usize, addr: u64, write: bool, t: u64) -> u64 {
        let owner = self.queue_owner.get(queue).copied().flatten();
        self.memory.access_as(self.agent, owner, addr, write, t)
    }

    fn access_as(&mut self, agent: usize, owner: Option<usize>, addr: u64, write: bool, t: u64) -> u64 {
        self.memory.access_as(agent, owner, addr, write, t)
    }
}

/// A memory model as a function (address, write, time) -> completion that ignores the agent (unit tests use
/// bare functions; the agent is 0 unless wrapped in an `AgentPort`).
impl<F: FnMut(u64, bool, u64) -> u64> DmaPort for F {
    fn agent(&self) -> usize {
        0
    }

    fn access_as(&mut self, _agent: usize, _owner: Option<usize>, addr: u64, write: bool, t: u64) -> u64 {
        self(addr, write, t)
    }
}

/// The devices of a machine, by address.
#[derive(Debug, Clone, Default)]
pub struct DeviceBus {
    /// NIC k's registers, at `nic_base(k)`.
    pub nics: Vec<NicRegs>,
}

impl DeviceBus {
    /// The NIC whose register window holds `addr`.
    fn nic_at(&mut self, addr: u64, size: u8, access: Access) -> Result<&mut NicRegs, Trap> {
        let k = ((addr - DEVICE_BASE) / NIC_WINDOW) as usize;
        match self.nics.get_mut(k) {
            Some(regs) if addr - regs.base < regs.window() => Ok(regs),
            _ => Err(Trap::Mmio { addr, size, access, why: "no device at this address (a hole in the device range)" }),
        }
    }

    /// The device bus that `mem` holds (None: the machine has no devices).
    pub fn of(mem: &Memory) -> Option<&DeviceBus> {
        mem.devices.as_deref().and_then(|d| (d as &dyn Any).downcast_ref())
    }

    pub fn of_mut(mem: &mut Memory) -> Option<&mut DeviceBus> {
        mem.devices.as_deref_mut().and_then(|d| (d as &mut dyn Any).downcast_mut())
    }

    /// Take the device bus out of `mem` (so it and guest memory can be borrowed apart); `put_back` returns it.
    pub fn take(mem: &mut Memory) -> Option<Box<DeviceBus>> {
        mem.devices.take().map(|d| (d as Box<dyn Any>).downcast().expect("the machine's devices are a DeviceBus"))
    }

    pub fn put_back(self: Box<Self>, mem: &mut Memory) {
        mem.devices = Some(self);
    }
}

impl Mmio for DeviceBus {
    /// A load in the device range (`addr` is inside it).
    fn load(&mut self, addr: u64, size: u8, access: Access) -> Result<u64, Trap> {
        self.nic_at(addr, size, access)?.load(addr, size, access)
    }

    /// A store in the device range (`addr` is inside it).
    fn store(&mut self, addr: u64, size: u8, val: u64, access: Access) -> Result<(), Trap> {
        self.nic_at(addr, size, access)?.store(addr, size, val, access)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::nic::reg;

    fn two_nics() -> DeviceBus {
        // NIC 0: 2 queues on 1 port; NIC 1: 3 queues on 2 ports.
        DeviceBus { nics: vec![NicRegs::at(nic_base(0), &[0, 0]), NicRegs::at(nic_base(1), &[0, 0, 1])] }
    }

    #[test]
    fn accesses_go_to_the_device_whose_window_holds_them() {
        let mut bus = two_nics();
        let q = |k: usize, q: u64, r: u64| nic_base(k) + q * QUEUE_STRIDE + r;
        assert_eq!(bus.load(q(0, 1, reg::QUEUE_ID), 8, Access::Load).unwrap(), 1);
        assert_eq!(bus.load(q(1, 2, reg::QUEUE_ID), 8, Access::Load).unwrap(), 2);
        assert_eq!(bus.load(q(1, 2, reg::PORT_ID), 8, Access::Load).unwrap(), 1);
        // A store reaches only its own NIC's queue.
        bus.store(q(1, 0, reg::RX_BASE), 8, 0x1000, Access::Store).unwrap();
        assert_eq!(bus.nics[1].queues[0].rx_base, 0x1000);
        assert_eq!(bus.nics[0].queues[0].rx_base, 0);
    }

    #[test]
    fn a_hole_between_devices_faults_naming_the_address() {
        let mut bus = two_nics();
        // Past NIC 0's two queues, before NIC 1's window; and past the last NIC.
        for addr in [nic_base(0) + 2 * QUEUE_STRIDE, nic_base(1) - 8, nic_base(1) + 3 * QUEUE_STRIDE, nic_base(2)] {
            let err = bus.load(addr, 8, Access::Load).unwrap_err();
            assert!(matches!(err, Trap::Mmio { addr: a, .. } if a == addr), "{err:?}");
            assert!(err.reason().contains("no device at this address"), "{}", err.reason());
            assert!(err.reason().contains(&format!("{addr:#x}")), "{}", err.reason());
            assert!(bus.store(addr, 8, 1, Access::Store).is_err());
        }
        const { assert!(MAX_NICS >= 64) };
    }
}
