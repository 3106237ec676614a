//! Linux on FS mode: the kernel and initramfs of `make fs-image` boot to /init, which prints and powers off (or
//! brings eth0 up and serves memcached); the kernel's console equals qemu-system-riscv64's for the same image and
//! the same (kvsim-generated) device tree, but for the lines the firmware changes (the SBI implementation's name;
//! the Memory line, whose reserved total differs by the device tree copy OpenSBI hands on). With the server, qemu
//! has a virtio-net device too, on the transport the tree names. Ignored by default: it needs `make fs-image`
//! (about eight CPU-minutes of kernel build); run it with `cargo test -p kvsim-os --release --test fs_linux --
//! --ignored`.

use std::io::{BufRead, BufReader};
use std::path::PathBuf;
use std::process::{Command, Stdio};

use kvsim_os::full_system::{Boot, End, FsConfig, Machine};

fn image(name: &str) -> Vec<u8> {
    let p = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../../workloads/fs/build").join(name);
    std::fs::read(&p).unwrap_or_else(|e| panic!("{}: {e} (run `make fs-image`)", p.display()))
}

fn kernel_lines(console: &str) -> Vec<String> {
    let text = console.replace("\r\n", "\n");
    let start = text.find("Linux version").expect("the kernel printed its banner");
    let line_start = text[..start].rfind('\n').map_or(0, |i| i + 1);
    text[line_start..].lines().map(str::to_string).collect()
}

#[test]
#[ignore = "needs `make fs-image`"]
fn linux_boots_to_init_and_its_console_equals_qemus_but_for_the_firmwares_lines() {
    for harts in [1, 2] {
        let (kernel, initramfs) = (image("Image"), image("initramfs.cpio"));
        let cfg = FsConfig { harts, ..FsConfig::default() };
        let mut m = Machine::new(cfg, Boot::Linux { kernel: &kernel, initramfs: Some(&initramfs) }).unwrap();
        assert_eq!(m.run(2_000_000_000), Ok(End::PowerOff { code: 0 }));
        let ours = m.console();
        assert!(ours.contains("Run /init as init process"), "{ours}");
        assert!(ours.contains(&format!("kvsim-init: {harts} cpus online")), "{ours}");
        assert!(ours.contains("reboot: Power down"), "{ours}");

        let dir = std::env::temp_dir().join(format!("kvsim-fs-linux-{}-{harts}", std::process::id()));
        let out = qemu(&dir, &m, &kernel, &initramfs, 120, harts)
            .output()
            .expect("qemu-system-riscv64 (qemu-system-misc) runs");
        std::fs::remove_dir_all(&dir).ok();
        let theirs = String::from_utf8_lossy(&out.stdout).into_owned();
        // qemu's guest time follows the host's clock: on a loaded host its kernel may report a slow timer
        // interrupt ("hrtimer: interrupt took N ns"), a line of the host's load, not of the machine.
        assert_equal_but_firmware(&ours, &theirs, &format!("{harts} harts"));
    }
}

/// qemu-system-riscv64 on `m`'s device tree and the image, written into `dir`, under a timeout of `seconds`.
fn qemu(dir: &PathBuf, m: &Machine, kernel: &[u8], initramfs: &[u8], seconds: u32, harts: usize) -> Command {
    std::fs::create_dir_all(dir).unwrap();
    let (dtb, k, rd) = (dir.join("kvsim.dtb"), dir.join("Image"), dir.join("initramfs.cpio"));
    std::fs::write(&dtb, &m.dtb).unwrap();
    std::fs::write(&k, kernel).unwrap();
    std::fs::write(&rd, initramfs).unwrap();
    let mut cmd = Command::new("timeout");
    cmd.args([&seconds.to_string(), "qemu-system-riscv64", "-machine", "virt", "-nographic", "-m", "256M"])
        .args(["-smp", &harts.to_string()])
        .arg("-dtb")
        .arg(dtb)
        .arg("-kernel")
        .arg(k)
        .arg("-initrd")
        .arg(rd);
    cmd
}

/// The kernel's lines of the two consoles are equal but for the two the firmware changes.
fn assert_equal_but_firmware(ours: &str, theirs: &str, what: &str) {
    // qemu's guest time follows the host's clock: on a loaded host its kernel may report a slow timer
    // interrupt ("hrtimer: interrupt took N ns"), a line of the host's load, not of the machine.
    let (a, mut b) = (kernel_lines(ours), kernel_lines(theirs));
    b.retain(|l| !l.starts_with("hrtimer: interrupt took"));
    assert_eq!(a.len(), b.len(), "{what}: as many lines (kvsim {}, qemu {})", a.len(), b.len());
    let differing: Vec<(&String, &String)> = a.iter().zip(&b).filter(|(x, y)| x != y).collect();
    for (x, y) in &differing {
        let firmware = (x.starts_with("SBI implementation ID=") && y.starts_with("SBI implementation ID="))
            || (x.starts_with("Memory: ") && y.starts_with("Memory: "));
        assert!(firmware, "{what}: kvsim printed {x:?} where qemu printed {y:?}");
    }
    assert_eq!(differing.len(), 2, "{what}: exactly the two firmware lines differ");
}

/// /init's line once eth0 is up and the server listens (workloads/fs/init.c).
const SERVING: &str = "kvsim-init: eth0 up at";

#[test]
#[ignore = "needs `make fs-image`"]
fn with_virtio_net_on_both_the_console_to_the_serving_server_equals_qemus_but_for_the_firmwares_lines() {
    let (kernel, initramfs) = (image("Image"), image("initramfs.cpio"));
    let bootargs = format!("{} -- mcd port=11211 mem=8m buckets=12", FsConfig::default().bootargs);
    let cfg = FsConfig { bootargs, ..FsConfig::default() };
    let mut m = Machine::new(cfg, Boot::Linux { kernel: &kernel, initramfs: Some(&initramfs) }).unwrap();
    // The server runs until stopped: run until it says it serves.
    let mut limit = 0;
    while !m.console().contains(SERVING) {
        limit += 10_000_000;
        assert!(limit <= 2_000_000_000, "the server did not come up:\n{}", m.console());
        assert_eq!(m.run(limit), Ok(End::InstLimit));
    }
    let ours = m.console();
    let dir = std::env::temp_dir().join(format!("kvsim-fs-linux-net-{}", std::process::id()));
    // qemu's virtio-net on its first virtio-mmio transport (0x10001000, the one kvsim's tree names), with kvsim's
    // MAC; qemu's user-mode network behind it. Read its console until the server serves, then stop it.
    let mut child = qemu(&dir, &m, &kernel, &initramfs, 180, 1)
        .args(["-netdev", "user,id=n0", "-device"])
        .arg("virtio-net-device,netdev=n0,mac=02:00:00:00:00:02,bus=virtio-mmio-bus.0")
        .stdout(Stdio::piped())
        .spawn()
        .expect("qemu-system-riscv64 (qemu-system-misc) runs");
    let mut theirs = String::new();
    for line in BufReader::new(child.stdout.take().unwrap()).lines() {
        let line = line.unwrap_or_default();
        theirs.push_str(&line);
        theirs.push('\n');
        if line.contains(SERVING) {
            break;
        }
    }
    // SIGTERM to timeout(1), which passes it on to qemu (a SIGKILL would leave qemu running).
    Command::new("kill").arg(child.id().to_string()).status().ok();
    child.wait().ok();
    std::fs::remove_dir_all(&dir).ok();
    assert!(theirs.contains(SERVING), "qemu's guest did not bring eth0 up:\n{theirs}");
    assert_equal_but_firmware(&ours, &theirs, "with virtio-net");
}
