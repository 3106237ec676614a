//! kvsim's devices: the device bus that answers guest MMIO (`bus`, the isa crate's `Mmio`), the DMA port through
//! which a device reaches memory (`dma::DmaPort`), the NICs (`nic`: steering and FIFOs, owning its parts;
//! `nic::regs`: registers and descriptor rings; `nic::timing`: wire, FIFO and DMA timing; `nic::zero_copy`:
//! KeyVault's zero-copy slots), the KVD switch in front of a NIC (`kvd_switch`), the PCIe link (`pcie`), the on-die
//! MAC (`on_die_mac`) and the MAC's SRAM on the memory side (`mac_sram`).

pub mod bus;
pub mod dma;
pub mod kvd_switch;
pub mod mac_sram;
pub mod nic;
pub mod on_die_mac;
pub mod pcie;
