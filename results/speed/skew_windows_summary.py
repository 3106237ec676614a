"""The table of results/speed/skew_loss_s19.md from skew_windows.py's --stats-dir DIR (one <load>x<K>.json a
window): per window the capacity rule's loss, the frames dropped (NIC ports, client), how long after the last send
the last response came against the mean round trip, and the busiest core by load factor
(steady_state.busiest_load_factor): its share of the frames, its busy time over the span and over its poll
instructions, its load factor, its busy cycles a frame, its port's share of the frames, and what a long run would
lose through that port's shared RX FIFO if the core is overloaded (port share x (1 - 1 / load factor)). Assumes the
60-core target socket's layout: core c serves queue c mod 20 of NIC c // 20 (checked against the counts).

Usage: skew_windows_summary.py DIR [OUT.json]"""
import glob
import json
import pathlib
import sys

import numpy as np

from drivers import capacity
from drivers import steady_state as ss
from models import stats_paths as paths

QUEUES_PER_NIC = 20
rows = []
for f in sorted(glob.glob(str(pathlib.Path(sys.argv[1]) / "*.json"))):
    s = json.load(open(f))
    name = pathlib.Path(f).stem
    load = float(name.split("x")[0])
    out = capacity.outcome_from_stats(s, load)
    cores = paths.CORE.instances(s, "idle_poll_cycles")
    sent_s = s["client.packets"] / (s["client.offered_mpps"] * 1e6)
    busy = np.array([(s[paths.CORE.stat(*c, "cycles")] - s[paths.CORE.stat(*c, "idle_poll_cycles")]) /
                     s[paths.CORE.stat(*c, "clock")] for c in cores])
    h = int(np.argmax(busy))
    frames_h = s[paths.CLIENT_CORE.stat(h, "requests")]
    nic, queue = divmod(h, QUEUES_PER_NIC)
    if s[paths.NIC_QUEUE.stat(nic, queue, "rx_frames")] != frames_h:
        raise SystemExit(f"{f}: core {h}'s frames are not queue {queue} of NIC {nic}'s: another layout")
    ports = np.array(paths.NIC_PORT.values(s, "rx_frames"))
    hint = s[f"system.hart{h}.busy_poll_insts"] + s[f"system.hart{h}.idle_poll_insts"]
    factor = busy[h] / sent_s
    assert abs(factor - ss.busiest_load_factor(s)) < 1e-12
    rows.append({"window": name, "load": load, "frames": s["client.packets"], "rule_loss": out.loss,
                 "nic_drops": sum(paths.NIC_PORT.values(s, "rx_drops")), "client_lost": s["client.lost_packets"],
                 "last_response_after_last_send_ns": s["client.measured_ns"] - sent_s * 1e9,
                 "mean_latency_ns": s["client.latency.mean"], "p999_ns": s["client.latency.p999"],
                 "busiest_core": h, "busiest_share": frames_h / s["client.packets"],
                 "busy_of_span": busy[h] / (s["client.measured_ns"] * 1e-9),
                 "busy_of_poll_insts": s[f"system.hart{h}.busy_poll_insts"] / hint, "load_factor": factor,
                 "busy_cycles_a_frame": busy[h] * s[paths.CORE.stat(*cores[h], "clock")] / frames_h,
                 "rx_batch_mean": s[paths.NIC_QUEUE.stat(nic, queue, "rx_batch_mean")],
                 "rx_batch_max": s[paths.NIC_QUEUE.stat(nic, queue, "rx_batch_max")],
                 "port_share": ports[nic] / ports.sum(),
                 "long_run_loss": ports[nic] / ports.sum() * max(0.0, 1 - 1 / factor)})
    print(json.dumps(rows[-1]))
if len(sys.argv) > 2:
    with open(sys.argv[2], "w") as out_file:
        json.dump(rows, out_file, indent=1)
