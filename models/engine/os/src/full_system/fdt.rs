//! The device tree of an FS-mode machine, generated from its configuration and written as a flattened device tree
//! blob (Devicetree Specification 0.4, chapter 5): the harts and their interrupt controllers, memory, the CLINT,
//! the PLIC, the UART, the test device, the network device, and /chosen (command line, initramfs, console).

use super::devices::map;
use super::FsConfig;

const FDT_MAGIC: u32 = 0xd00d_feed;
const BEGIN_NODE: u32 = 1;
const END_NODE: u32 = 2;
const PROP: u32 = 3;
const END: u32 = 9;

/// A flattened-device-tree writer: nodes and properties in order, strings deduplicated.
#[derive(Default)]
pub struct FdtWriter {
    structs: Vec<u8>,
    strings: Vec<u8>,
    depth: usize,
}

impl FdtWriter {
    fn u32(&mut self, v: u32) {
        self.structs.extend_from_slice(&v.to_be_bytes());
    }

    fn pad(&mut self) {
        while !self.structs.len().is_multiple_of(4) {
            self.structs.push(0);
        }
    }

    pub fn begin(&mut self, name: &str) {
        self.u32(BEGIN_NODE);
        self.structs.extend_from_slice(name.as_bytes());
        self.structs.push(0);
        self.pad();
        self.depth += 1;
    }

    pub fn end(&mut self) {
        self.u32(END_NODE);
        self.depth -= 1;
    }

    fn name_offset(&mut self, name: &str) -> u32 {
        let mut at = 0;
        while at < self.strings.len() {
            let len = self.strings[at..].iter().position(|&b| b == 0).unwrap_or(0);
            if &self.strings[at..at + len] == name.as_bytes() {
                return at as u32;
            }
            at += len + 1;
        }
        let off = self.strings.len() as u32;
        self.strings.extend_from_slice(name.as_bytes());
        self.strings.push(0);
        off
    }

    pub fn prop(&mut self, name: &str, value: &[u8]) {
        let off = self.name_offset(name);
        self.u32(PROP);
        self.u32(value.len() as u32);
        self.u32(off);
        self.structs.extend_from_slice(value);
        self.pad();
    }

    pub fn cells(&mut self, name: &str, cells: &[u32]) {
        let v: Vec<u8> = cells.iter().flat_map(|c| c.to_be_bytes()).collect();
        self.prop(name, &v);
    }

    pub fn string(&mut self, name: &str, s: &str) {
        self.strings_list(name, &[s]);
    }

    pub fn strings_list(&mut self, name: &str, list: &[&str]) {
        let mut v = Vec::new();
        for s in list {
            v.extend_from_slice(s.as_bytes());
            v.push(0);
        }
        self.prop(name, &v);
    }

    pub fn empty(&mut self, name: &str) {
        self.prop(name, &[]);
    }

    /// The blob: header, an empty memory reservation map, the structure block, the strings.
    pub fn finish(mut self) -> Vec<u8> {
        assert_eq!(self.depth, 0, "every node ended");
        self.u32(END);
        let header_len = 40u32;
        let rsv_len = 16u32;
        let off_struct = header_len + rsv_len;
        let off_strings = off_struct + self.structs.len() as u32;
        let total = off_strings + self.strings.len() as u32;
        let mut out = Vec::with_capacity(total as usize);
        for v in [FDT_MAGIC, total, off_struct, off_strings, header_len, 17, 16, 0, self.strings.len() as u32] {
            out.extend_from_slice(&v.to_be_bytes());
        }
        out.extend_from_slice(&(self.structs.len() as u32).to_be_bytes());
        out.extend_from_slice(&[0u8; 16]);
        out.extend_from_slice(&self.structs);
        out.extend_from_slice(&self.strings);
        out
    }
}

fn reg(addr: u64, size: u64) -> [u32; 4] {
    [(addr >> 32) as u32, addr as u32, (size >> 32) as u32, size as u32]
}

/// The UART's input clock (Hz) as the device tree states it: qemu virt's value (the divisor the kernel programs
/// has no effect on this transmitter, which is always ready).
const UART_CLOCK_HZ: u32 = 3_686_400;
/// Where the device tree's fixed rng-seed is drawn from (any constant: the kernel only needs 256 bits it trusts).
const RNG_SEED_STREAM: u64 = 0x6b76_7369_6d5f_7267;
/// The ISA string the harts advertise (what the functional model executes).
pub const ISA: &str = "rv64imafdc";

/// The machine's device tree; `initrd` is the physical [start, end) of the initramfs when there is one.
pub fn machine_tree(cfg: &FsConfig, initrd: Option<(u64, u64)>) -> Vec<u8> {
    let harts = cfg.harts as u32;
    // Phandles: 1..=harts for the harts' interrupt controllers, then the PLIC and the test device.
    let intc = |h: u32| h + 1;
    let plic_phandle = harts + 1;
    let test_phandle = harts + 2;
    let mut w = FdtWriter::default();
    w.begin("");
    w.cells("#address-cells", &[2]);
    w.cells("#size-cells", &[2]);
    w.string("compatible", "riscv-virtio");
    w.string("model", "kvsim full-system machine");

    w.begin("chosen");
    w.string("bootargs", &cfg.bootargs);
    // A seed for the kernel's random number generator, as qemu's virt board and boot loaders hand one over:
    // without it (the machine has no other entropy source) the kernel's generator stays uninitialised and mixes
    // every interrupt into its pool with BLAKE2s, over a third of a UDP request's instructions. Fixed, so runs
    // are deterministic.
    let mut state = RNG_SEED_STREAM;
    let seed: Vec<u8> = (0..4).flat_map(|_| kvsim_base::random::splitmix64(&mut state).to_le_bytes()).collect();
    w.prop("rng-seed", &seed);
    w.string("stdout-path", &format!("/soc/serial@{:x}", map::UART0));
    if let Some((start, end)) = initrd {
        w.cells("linux,initrd-start", &[(start >> 32) as u32, start as u32]);
        w.cells("linux,initrd-end", &[(end >> 32) as u32, end as u32]);
    }
    w.end();

    w.begin(&format!("memory@{:x}", map::DRAM));
    w.string("device_type", "memory");
    w.cells("reg", &reg(map::DRAM, cfg.dram_bytes));
    w.end();

    w.begin("cpus");
    w.cells("#address-cells", &[1]);
    w.cells("#size-cells", &[0]);
    w.cells("timebase-frequency", &[kvsim_base::abi::TIMEBASE_HZ as u32]);
    for h in 0..harts {
        w.begin(&format!("cpu@{h}"));
        w.string("device_type", "cpu");
        w.cells("reg", &[h]);
        w.string("status", "okay");
        w.string("compatible", "riscv");
        w.string("riscv,isa", ISA);
        w.string("mmu-type", "riscv,sv39");
        w.begin("interrupt-controller");
        w.cells("#interrupt-cells", &[1]);
        w.empty("interrupt-controller");
        w.string("compatible", "riscv,cpu-intc");
        w.cells("phandle", &[intc(h)]);
        w.end();
        w.end();
    }
    w.end();

    w.begin("soc");
    w.cells("#address-cells", &[2]);
    w.cells("#size-cells", &[2]);
    w.string("compatible", "simple-bus");
    w.empty("ranges");

    w.begin(&format!("test@{:x}", map::TEST));
    w.strings_list("compatible", &["sifive,test1", "sifive,test0", "syscon"]);
    w.cells("reg", &reg(map::TEST, 0x1000));
    w.cells("phandle", &[test_phandle]);
    w.end();

    w.begin(&format!("clint@{:x}", map::CLINT));
    w.strings_list("compatible", &["sifive,clint0", "riscv,clint0"]);
    w.cells("reg", &reg(map::CLINT, map::CLINT_SIZE));
    let clint_irqs: Vec<u32> = (0..harts).flat_map(|h| [intc(h), 3, intc(h), 7]).collect();
    w.cells("interrupts-extended", &clint_irqs);
    w.end();

    w.begin(&format!("plic@{:x}", map::PLIC));
    w.strings_list("compatible", &["sifive,plic-1.0.0", "riscv,plic0"]);
    w.cells("reg", &reg(map::PLIC, map::PLIC_SIZE));
    w.cells("#address-cells", &[0]);
    w.cells("#interrupt-cells", &[1]);
    w.empty("interrupt-controller");
    w.cells("riscv,ndev", &[map::PLIC_SOURCES]);
    let plic_irqs: Vec<u32> = (0..harts).flat_map(|h| [intc(h), 11, intc(h), 9]).collect();
    w.cells("interrupts-extended", &plic_irqs);
    w.cells("phandle", &[plic_phandle]);
    w.end();

    w.begin(&format!("serial@{:x}", map::UART0));
    w.string("compatible", "ns16550a");
    w.cells("reg", &reg(map::UART0, map::UART_SIZE));
    w.cells("clock-frequency", &[UART_CLOCK_HZ]);
    w.cells("interrupt-parent", &[plic_phandle]);
    w.cells("interrupts", &[map::UART0_IRQ]);
    w.end();

    if cfg.net_mac.is_some() {
        w.begin(&format!("virtio_mmio@{:x}", map::VIRTIO0));
        w.string("compatible", "virtio,mmio");
        w.cells("reg", &reg(map::VIRTIO0, map::VIRTIO_SIZE));
        w.cells("interrupt-parent", &[plic_phandle]);
        w.cells("interrupts", &[map::VIRTIO0_IRQ]);
        w.end();
    }

    w.end(); // soc
    w.end(); // root
    w.finish()
}
