"""One run of the target socket (REQUESTS requests, 70 M frames/s offered per port): the measured (detailed) phase's
guest instructions from its first progress report on, its host CPU seconds and simulated MIPS per host CPU second,
as `make bench`'s socket_speed measures them. Usage: mips_target.py REQUESTS (run from the checkout to time)."""
import sys
import time

from configs import brps_target_socket
from models.sim import simulate

marks = []


def progress(insts, _ticks, phase):
    if phase == "detailed" and not marks:
        marks.append((time.process_time(), insts))


s = brps_target_socket.system(requests=int(sys.argv[1]), offered_mpps=70.0)
r = simulate(s, progress=progress, progress_every=1_000_000)
c1 = time.process_time()
c0, i0 = marks[0]
print(f"{r.insts - i0} {c1 - c0:.4f} {(r.insts - i0) / (c1 - c0) / 1e6:.3f}")
