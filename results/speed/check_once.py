"""A page file checked once per process (engine/src/page_check.rs, issue 24): restore CHECKPOINT (ITEMS items, the
60-core point of probe_phases.py with a short warm-up and 600 measured requests) twice in one process and print each
run's CPU time on threads other than the main one (the page file's check) and the whole process's.

Usage: check_once.py CHECKPOINT ITEMS"""
import sys
import time

from drivers.studies import servers
from models.sim import simulate

checkpoint, items = sys.argv[1], int(sys.argv[2])
for run in (1, 2):
    s = servers.server(sockets=1, items=items, requests_per_core=10, warmup_requests=600)
    s.client.offered_mpps, s.restore_from = 60.0, checkpoint
    p0, m0 = time.process_time(), time.clock_gettime(time.CLOCK_THREAD_CPUTIME_ID)
    simulate(s)
    p1, m1 = time.process_time(), time.clock_gettime(time.CLOCK_THREAD_CPUTIME_ID)
    print(f"restore {run}: process {p1 - p0:.2f} s CPU, other threads (the page file check) {(p1 - p0) - (m1 - m0):.2f} s")
