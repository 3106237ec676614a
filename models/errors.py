"""Exceptions a simulation raises. The engine (Rust) builds these by name, so every failure reaches Python as one
of them, never as a crash."""

from __future__ import annotations


class SimError(RuntimeError):
    """Base of every simulation failure."""


class ConfigError(SimError, ValueError):
    """The configuration handed to the engine is inconsistent (parameter errors are caught earlier, in Python)."""


class ElfError(SimError):
    """The workload binary is missing, not a riscv64 ELF, or malformed."""


class GuestFault(SimError):
    """The guest program did something the machine cannot do. Names the hart, PC, instruction word and reason."""

    def __init__(self, message: str, hart: int = -1, pc: int = 0, insn: int = 0, reason: str = ""):
        super().__init__(message)
        self.hart, self.pc, self.insn, self.reason = hart, pc, insn, reason


class IllegalInstruction(GuestFault):
    """An undecodable or unsupported instruction."""


class MemoryFault(GuestFault):
    """A misaligned or unmapped access."""


class MemoryLimitExceeded(GuestFault):
    """Touching one more page would exceed System.mem_limit."""


class UnsupportedSyscall(GuestFault):
    """A system call (or simulator call) the engine does not implement."""


class BadSimcall(GuestFault):
    """A simulator call named something the system does not have (a NUMA socket beyond the configured ones)."""


class GuestDeadlock(GuestFault):
    """Every live guest thread waits on a futex that nothing can wake (a hang, reported instead of spinning)."""


class GuestHalted(GuestFault):
    """FS mode: the guest reset the machine (a Linux kernel's panic with panic=-1) or stopped where the machine
    cannot go on (a trap to M mode with no firmware handler, every hart asleep for good); the message quotes the
    console's last lines."""


class ClientCheckFailed(SimError):
    """The ghost client found a wrong response: a wrong value, an unexplained GET miss, a response to a request
    never sent, a wrong echo, or no response at all (a lost request)."""


class HostMemoryError(ConfigError):
    """The configuration needs more host memory up front than the machine has available (checked before the run;
    see models.sim.host_memory_estimate)."""


class OutputError(SimError, OSError):
    """The run's output folder cannot be created or written (checked before the simulation starts)."""


class RunInterrupted(KeyboardInterrupt):
    """Ctrl-C (SIGINT) stopped a run between scheduling turns. `.result` is the RunResult so far (its stop_reason
    is "interrupted"); with an outdir its files were written and `status` says it was interrupted."""

    def __init__(self, result):
        super().__init__(f"interrupted after {result.insts:,} instructions")
        self.result = result


class EngineBug(SimError):
    """The engine hit an internal error (a Rust panic, caught at the boundary). Please report it."""
