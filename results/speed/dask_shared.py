"""A capacity point under a real dask worker (issue 24): a worker holds several threads, so its shared warm-up's
server is a fresh interpreter (drivers/shared_warmup.py). The 2-core target socket restored from a 4,096-item
checkpoint (tests/test_shared_warmup.py's server), end_to_end.evaluate with 5 probes and 2 steady-state windows, on
one dask worker process; then the same point in this process with shared_warmup off. Prints the worker's thread
count, the warm-ups its point ran, and whether the statistics and windows are the same.

Usage: dask_shared.py"""
import json
import pathlib
import tempfile

from distributed import Client, LocalCluster

from configs import brps_target_socket
from models.sim import simulate

OPTIONS = {"resolution": 0.05, "max_probes": 5, "power": False, "steady": True, "steady_max_windows": 2}


def server(rate, ck=None):
    s = brps_target_socket.system(cores=2, items=4096, requests=300, offered_mpps=rate, warmup_requests=2000)
    if ck:
        s.restore_from = ck
    return s


def point(ck, shared=True):
    import threading

    from drivers.studies import end_to_end
    made = []

    class Recorded(end_to_end.SharedWarmup):
        def __init__(self):
            super().__init__()
            made.append(self)

    end_to_end.SharedWarmup = Recorded
    out = end_to_end.evaluate(lambda: server(1.0, ck), {**OPTIONS, "shared_warmup": shared}, lambda _: None)
    return threading.active_count(), [m.warmups for m in made], json.dumps(out["stats"], sort_keys=True), \
        json.dumps(out["windows"])


if __name__ == "__main__":
    folder = pathlib.Path(tempfile.mkdtemp()) / "ck"
    s = server(1.0)
    s.checkpoint_to = str(folder)
    simulate(s)
    with LocalCluster(n_workers=1, threads_per_worker=1, processes=True, dashboard_address=None) as cluster, \
            Client(cluster) as client:
        threads, warmups, stats, windows = client.submit(point, str(folder), pure=False).result()
    _, _, ref_stats, ref_windows = point(str(folder), shared=False)
    print(json.dumps({"worker_threads": threads, "warmups": warmups, "same_stats": stats == ref_stats,
                      "same_windows": windows == ref_windows}))
