"""The simulated machine as a whole: how many harts run which binary, with what memory and limits."""

from __future__ import annotations

from .params import Param, ParamError, SimObject


class Workload(SimObject):
    """The program every hart runs (SE mode: a static riscv64 ELF plus its arguments)."""

    binary = Param.Str("", "path of the statically linked riscv64 ELF that every hart runs")
    argv = Param.StrList([], "arguments passed after the program name")
    env = Param.StrList([], "environment strings, NAME=value")


class System(SimObject):
    """Top of the configuration tree handed to the engine."""

    harts = Param.Count(1, "harts (cores) that run the workload, each with its own stack and hart id",
                        min=1, max=4096)
    clock = Param.Freq("2.5GHz", "clock of every hart when no timing model sets its own; in functional mode "
                       "simulated time advances one cycle per instruction", min="1MHz", max="20GHz")
    mem_limit = Param.Size("4GiB", "most guest memory that may be touched (pages are allocated on first touch)",
                           min="64KiB", max="1TiB")
    stack_size = Param.Size("1MiB", "stack of each hart", min="4KiB", max="1GiB")
    quantum = Param.Count(1000, "instructions a hart runs before the next hart gets its turn; harts interleave "
                          "deterministically in hart order", min=1, max=10**7)
    max_insts = Param.Count(0, "stop the run after this many instructions over all harts (0 = no limit)")
    max_time = Param.Time("0s", "stop the run at this simulated time (0 = no limit)")
    seed = Param.Count(1, "seed of every random choice in the run; same config and seed give identical stats")
    misaligned = Param.Enum("fault", "what a misaligned load or store does: 'fault' stops the run (RISC-V lets "
                            "hardware trap); 'allow' performs it, as Linux's trap emulation (and qemu-user) would; "
                            "misaligned atomics always fault", choices=("fault", "allow"))
    trace_file = Param.Str("", "if set, write hart 0's PC and integer registers before every instruction to "
                           "this file (for lockstep comparison with qemu-riscv64 -singlestep -d cpu)")
    workload = Param.Child(Workload, "the program the harts run")

    def validate(self) -> None:
        super().validate()
        if not self.workload.binary:
            raise ParamError("System.workload.binary is empty: name the riscv64 ELF to run")
        if self.stack_size * self.harts > self.mem_limit:
            raise ParamError(f"System.stack_size x harts = {self.stack_size * self.harts} bytes exceeds "
                             f"System.mem_limit = {self.mem_limit} bytes")
