//! FS mode against the reference: the bare-metal test programs of workloads/fs/bare/ (built here with the cross
//! compiler) run on qemu-system-riscv64's virt board and on kvsim's FS machine; their UART output must be equal.
//! M-mode programs run with no firmware on both (qemu `-bios none`); S-mode programs (names ending in `_s`) under
//! the SBI firmware (qemu's default OpenSBI, whose banner before the program's first line is not compared).

use std::path::PathBuf;
use std::process::Command;
use std::time::Duration;

use kvsim_os::full_system::{Boot, End, FsConfig, Machine};

fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../..").canonicalize().unwrap()
}

fn build() -> PathBuf {
    let root = repo();
    let out = std::env::temp_dir().join(format!("kvsim-fs-bare-{}", std::process::id()));
    let st = Command::new("bash")
        .arg(root.join("workloads/fs/bare/build.sh"))
        .env("FS_OUT", &out)
        .status()
        .expect("bash runs");
    assert!(st.success(), "building the bare-metal programs failed (riscv64-linux-gnu-gcc installed?)");
    out.join("bare")
}

fn qemu(elf: &PathBuf, supervisor: bool) -> String {
    let mut cmd = Command::new("timeout");
    cmd.args(["20", "qemu-system-riscv64", "-machine", "virt", "-m", "256M", "-smp", "1", "-nographic"]);
    if !supervisor {
        cmd.args(["-bios", "none"]);
    }
    cmd.arg("-kernel").arg(elf);
    let out = cmd.output().unwrap_or_else(|e| panic!("qemu-system-riscv64 (Debian's qemu-system-misc) is needed: {e}"));
    String::from_utf8_lossy(&out.stdout).replace("\r\n", "\n")
}

fn kvsim(elf: &[u8], supervisor: bool) -> (String, End) {
    let boot = if supervisor { Boot::BareSupervisor { elf } } else { Boot::BareMachine { elf } };
    let mut m = Machine::new(FsConfig::default(), boot).unwrap();
    let end = m.run(10_000_000).unwrap();
    (m.console(), end)
}

#[test]
fn bare_metal_programs_print_what_they_print_on_qemu_system_riscv64() {
    let dir = build();
    let mut names: Vec<String> =
        std::fs::read_dir(&dir).unwrap().map(|e| e.unwrap().file_name().into_string().unwrap()).collect();
    names.sort();
    assert!(names.len() >= 2, "programs built: {names:?}");
    for name in names {
        let path = dir.join(&name);
        let supervisor = name.ends_with("_s");
        let (ours, end) = kvsim(&std::fs::read(&path).unwrap(), supervisor);
        assert_eq!(end, End::PowerOff { code: 0 }, "{name} powered off with success on kvsim");
        let first_line = ours.lines().next().unwrap_or_default().to_string();
        assert!(!first_line.is_empty(), "{name} printed nothing on kvsim");
        let theirs = qemu(&path, supervisor);
        let theirs = match theirs.find(&first_line) {
            Some(at) => theirs[at..].to_string(),
            None => panic!("{name}: qemu's output lacks the program's first line {first_line:?}:\n{theirs}"),
        };
        assert_eq!(ours, theirs, "{name}: kvsim's console (left) differs from qemu's (right)");
        assert!(ours.lines().count() > 10, "{name} printed its steps");
    }
    std::thread::sleep(Duration::from_millis(1));
    std::fs::remove_dir_all(dir.parent().unwrap()).ok();
}
