"""Parameters of the coherence directory (read by kvsim-timing's `mem/directory.rs` and `mem/hierarchy.rs`).

The billion-RPS target keeps its caches coherent with a two-level hierarchical MOESI directory (platforms.md §2):
the first level inside each cluster (its cores' private caches, kept at the cluster's LLC slice), the second at
each line's home LLC slice (address interleave) across the socket, covering the L1s, the LLC and the NICs' direct
cache access. Every message of a transaction crosses the on-chip network, so the latencies here are only the
lookups; "assumed" marks values without a published source.
"""

from __future__ import annotations

from .params import Param, SimObject


class Directory(SimObject):
    """The two-level MOESI directory: exact owner and sharers of every privately cached line."""

    latency = Param.Count(10, "cycles of the uncore clock for a home directory lookup before it forwards a request "
                          "or sends invalidations; a data reply from the LLC waits for the longer of this and the "
                          "LLC's hit latency (assumed 10: the directory sits in the LLC slice's tags)",
                          min=0, max=1000)
    cluster_latency = Param.Count(4, "cycles of the uncore clock for the cluster-level lookup a request makes "
                                  "when its cluster has two or more cores (assumed 4)", min=0, max=1000)
    remote_lines = Param.Bool(True, "on several sockets, a socket's LLC also caches lines homed on other sockets "
                              "(clean copies, as Intel's LLCs do): a core's request for another socket's line first "
                              "looks in its own socket's LLC slice, and a read that finds the copy there does not "
                              "cross the inter-socket link; the home directory tracks which sockets' LLCs hold a "
                              "copy and invalidates them before any core may write the line (off: only the home "
                              "socket's LLC caches a line; no effect on one socket)")
    check = Param.Bool(False, "debug mode: after every access check that a line has one writer or only readers, that "
                       "the directory's sharers are exactly the caches holding it, and that no core reads a stale "
                       "copy; a breach stops the run with an engine error (slow: for tests)")
