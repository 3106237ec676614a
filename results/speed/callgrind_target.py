"""The target socket's measured phase for callgrind (issue 24): brps_target_socket, REQUESTS (default 3,000)
requests at 70 M frames/s offered per port. Count the phase alone with --toggle-collect='*detailed_phase*'
(driver::detailed_phase is kept out of line for that); the guest instructions of the phase are system.roi.insts
(detailed timing starts at the ROI). Command and figures: README.md here."""
import sys

from configs import brps_target_socket
from models.sim import simulate

s = brps_target_socket.system(requests=int(sys.argv[1]) if len(sys.argv) > 1 else 3000, offered_mpps=70.0)
r = simulate(s)
print("insts", r.insts, {k: v for k, v in r.stats.items() if k.startswith("system.roi") or k == "system.insts"})
