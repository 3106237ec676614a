"""The target socket's run (REQUESTS requests, 70 M frames/s offered per port) for a CPU-time profile of its
detailed (measured) phase: perf records only from the first progress report of the detailed phase on, told so through
its control file descriptor. Usage: see perf_detailed.sh here (it makes the FIFO and starts perf)."""
import sys

from configs import brps_target_socket
from models.sim import simulate

requests, ctl = int(sys.argv[1]), sys.argv[2]
started = []


def tell(command):
    with open(ctl, "w") as f:
        f.write(command + "\n")


def progress(_insts, _ticks, phase):
    if phase == "detailed" and not started:
        tell("enable")
        started.append(True)


s = brps_target_socket.system(requests=requests, offered_mpps=70.0)
r = simulate(s, progress=progress, progress_every=1_000_000)
tell("disable")
print("insts", r.insts)
