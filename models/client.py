"""Parameters of the ghost client (read by the engine's `client.rs`): a YCSB-style request generator that loads
the data set, sends requests to the KVS server through the NIC and checks every response.

Datasets (key / value bytes, as in /work/shared/spec/kvs-workload.md): tiny 8 / 8, small 16 / 64, large 128 / 1024,
xlarge 250 / 1152. The item count is `items` (the spec's full counts are hundreds of millions; a run reports the
count it used as `client.items`).
"""

from __future__ import annotations

import math
import os

from .params import Param, ParamError, SimObject

DATASETS = {"tiny": (8, 8), "small": (16, 64), "large": (128, 1024), "xlarge": (250, 1152)}
PROTOCOLS = ("mica", "memcached")
TRANSPORTS = ("udp", "tcp")
# The servers' binaries (workloads/*/Makefile) and the protocol each speaks.
SERVER_PROTOCOL = {"kvs-server": "mica", "mcd-server": "memcached"}
# The memcached binary protocol's frame sizes (workloads/mcd): Ethernet + IPv4 + UDP (42) + the UDP frame header
# (8); a request is a 24-byte header, a SET adds 8 bytes of extras and the value; a GET hit's response adds 4 bytes
# of flags and the value; the key is at most 250 bytes.
MCD_FRAME_HDR, MCD_MSG_HDR, MCD_MAX_KEY = 50, 24, 250
# TCP (workloads/mcd/mcd_tcp.h): Ethernet + IPv4 + TCP headers (54) leave 1460 bytes of a 1514-byte frame; the
# server keeps up to tcp_conns=16 connections per instance (its default).
TCP_MAX_MSS, MCD_TCP_CONNS_DEFAULT = 1460, 16
# memcached's largest item by default (its -I, 1 MiB): the largest value the client sends over TCP.
MCD_MAX_VALUE = 1 << 20


class Client(SimObject):
    """The ghost client: YCSB-style generator and response checker inside the engine."""

    enabled = Param.Bool(False, "run the ghost client (needs System.nic.enabled); the run stops with "
                         "'client_done' when every request is answered")
    dataset = Param.Enum("tiny", "key and value sizes: tiny 8/8 B, small 16/64 B, large 128/1024 B, "
                         "xlarge 250/1152 B", choices=tuple(DATASETS))
    items = Param.Count(65536, "items in the data set (keys 0..items-1)", min=1, max=1 << 32)
    key_size = Param.Count(0, "key bytes (0 = the dataset's)", min=0, max=255)
    value_size = Param.Count(0, "value bytes (0 = the dataset's); over UDP a request and its response fit one "
                             "1514-byte frame (at most 1,400 bytes of value or so); over TCP (protocol 'memcached') "
                             "up to 1 MiB, memcached's largest item, requests and responses spanning segments",
                             min=0, max=MCD_MAX_VALUE)
    popularity = Param.Enum("uniform", "key popularity: 'uniform', or 'zipf' (exact, rank 1 = item 0)",
                            choices=("uniform", "zipf"))
    zipf_theta = Param.Float(0.99, "Zipf exponent (YCSB's default 0.99)", min=0.01, max=5.0)
    get_ratio = Param.Float(0.95, "fraction of measured requests that are GETs (the rest are PUTs, or DELETEs "
                            "with delete_ratio)", min=0.0, max=1.0)
    delete_ratio = Param.Float(0.0, "fraction of measured requests that are DELETEs (protocol 'memcached' only; "
                               "get_ratio + delete_ratio <= 1, the rest are SETs)", min=0.0, max=1.0)
    protocol = Param.Enum("mica", "what the client speaks: 'mica' (the MICA-style KVS server, workloads/kvs) or "
                          "'memcached' (the memcached binary protocol over UDP, workloads/mcd: GET, SET, DELETE); "
                          "it must match the server (its binary's name)", choices=PROTOCOLS)
    transport = Param.Enum("udp", "how memcached requests travel: 'udp' (one datagram each way per frame of "
                           "requests) or 'tcp' (the client opens Client.tcp_connections connections to every "
                           "instance before the load, with the three-way handshake, and streams its requests over "
                           "them; it checks the server's checksums, sequence and acknowledgement numbers). 'tcp' needs "
                           "protocol 'memcached'. Nothing is retransmitted: a segment the NIC drops fails the run",
                           choices=TRANSPORTS)
    tcp_connections = Param.Count(1, "TCP connections per server instance (transport 'tcp'); frames of requests "
                                  "for an instance take its connections in turn. At most the server's tcp_conns= "
                                  f"argument ({MCD_TCP_CONNS_DEFAULT} by default)", min=1, max=64)
    tcp_mss = Param.Count(TCP_MAX_MSS, "largest TCP segment payload, bytes (transport 'tcp'): the client's segments "
                          "and, through the MSS option of its SYN, the server's; below a frame of requests, requests "
                          "and responses span segments", min=32, max=TCP_MAX_MSS)
    tcp_segments = Param.Count(0, "data segments unacknowledged per server instance at most (transport 'tcp'; 0: "
                               "Client.window). It keeps the client's segments from overrunning the server's RX "
                               "ring; a request spanning many segments with Client.window = 1 needs more than one "
                               "in flight, or each waits for the receiver's delayed ACK", min=0, max=4096)
    requests_per_packet = Param.Count(1, "requests packed into one frame (fewer when the frame or its response "
                                      "would exceed 1514 bytes)", min=1, max=32)
    requests = Param.Count(10000, "measured requests (M); the run ends when all are answered", min=1)
    mode = Param.Enum("auto", "steering: 'erew' sends every request to its partition's core; 'crew' sends PUTs "
                      "there and GETs round-robin over the cores; 'auto' follows the server's mode= argument "
                      "(erew when absent). An explicit value must agree with that argument",
                      choices=("auto", "erew", "crew"))
    seed = Param.Count(1, "seed of the client's random choices (keys, operations, fuzz frames)")
    measure_seed = Param.Count(0, "repeated seeds of one data set: nonzero restarts the random choices of the warm-up "
                               "and measured phase (keys, operations) from a stream of (seed, measure_seed) at the "
                               "end of the bulk load, in a run that loads and in one restored from its checkpoint "
                               "alike (the checkpoint does not depend on it); 0 continues the load's stream")
    window = Param.Count(32, "packets outstanding per queue at most (keep it below the server's RX ring size)",
                         min=1, max=4096)
    offered_mpps = Param.Float(0.0, "open-loop offered load per NIC port in million request frames per second "
                               "(all ports together send ports x this, each frame to its key's core); used in the "
                               "measured phase once detailed timing runs; 0: closed loop (at most `window` frames "
                               "outstanding per queue). In open loop frames the NIC drops are counted as lost "
                               "(client.loss), not as failures", min=0.0, max=10000.0)
    bulk_load = Param.Bool(True, "PUT every item (version 1) before measuring; the measured phase starts after "
                           "the last load response, resets the stats and is the region of interest "
                           "(system.roi.*; System.detailed_start='roi' starts detailed timing there)")
    fuzz_frames = Param.Count(0, "random and mutated frames (malformed, truncated, unknown operations, oversized "
                              "keys and values) sent after the load and before the measured phase; their "
                              "responses are checked for form only and counted (client.fuzz.*)", min=0)
    # 400,000 (measured): after a restore, the measured phase's LLC MPKI and throughput are within 2% of those after a
    # 3.2-million-request warm-up (1 Mi Tiny items, 4 cores, the default 45 MiB LLC, uniform, the server with lru=0:
    # `KVS_EXTRA=lru=0 sim-scripts/checkpoint_study.py warmup 1048576 4 DIR 20000 0 100000 ... 3200000` after its
    # `load`). With lru=1 the MPKI is within 5%: the store's layout keeps changing too (LRU re-appends).
    warmup_requests = Param.Count(400_000, "in a run restored from a checkpoint: requests of the measured phase's "
                                  "mix sent before it and not counted; with System.warm_caches they warm the caches "
                                  "before detailed timing starts (a run that loads warms them during the load)",
                                  max=10**9)
    warmup_after_load = Param.Bool(False, "a run that loads also sends warmup_requests requests of the measured mix "
                                   "after the load, not counted: the load leaves the caches full of the log lines it "
                                   "just wrote (dirty), which a server in steady state wrote back long ago, so a "
                                   "measured phase right after it pays their write-backs to memory")
    stall_rounds = Param.Count(100000, "scheduling rounds (every hart has had a turn) without any response while "
                               "requests are outstanding before the run fails (a lost response)", min=1)

    def sizes(self) -> tuple[int, int]:
        """(key bytes, value bytes) used."""
        k, v = DATASETS[self.dataset]
        return (self.key_size or k, self.value_size or v)

    def validate(self) -> None:
        super().validate()
        if self.enabled:
            k, v = self.sizes()
            if k < 8:
                raise ParamError(f"Client.key_size = {k}: keys need at least 8 bytes (they encode the item)")
            over_tcp = self.protocol == "memcached" and self.transport == "tcp"
            if not over_tcp and (48 + 24 + ((k + 7) & ~7) + ((v + 7) & ~7) > 1514 or 48 + 24 + ((v + 7) & ~7) > 1514):
                raise ParamError(f"Client: a {k}-byte key and {v}-byte value do not fit one 1514-byte frame (over "
                                 f"{self.transport.upper()} a request and its response each fit one frame; larger "
                                 "values need protocol 'memcached' over transport 'tcp')")
        if self.get_ratio + self.delete_ratio > 1.0 + 1e-12:
            raise ParamError(f"Client.get_ratio + Client.delete_ratio = {self.get_ratio + self.delete_ratio}: "
                             "must be at most 1 (the rest are SETs)")
        if self.protocol == "mica" and self.delete_ratio > 0:
            raise ParamError(f"Client.delete_ratio = {self.delete_ratio}: DELETEs are sent only with "
                             "Client.protocol = 'memcached' (allowed: 0 for 'mica')")
        if self.transport == "tcp" and self.protocol != "memcached":
            raise ParamError(f"Client.transport = 'tcp' with Client.protocol = {self.protocol!r}: only the memcached "
                             "server speaks TCP (allowed with protocol 'mica': 'udp')")
        if self.transport == "tcp" and self.offered_mpps > 0:
            raise ParamError(f"Client.transport = 'tcp' with Client.offered_mpps = {self.offered_mpps}: TCP runs "
                             "closed loop (no retransmission, so the client must not overrun the NIC; allowed: 0)")
        if self.protocol == "memcached" and self.enabled:
            k, v = self.sizes()
            if k > MCD_MAX_KEY:
                raise ParamError(f"Client.key_size = {k}: memcached keys are at most {MCD_MAX_KEY} bytes")
            if self.transport == "udp" and MCD_FRAME_HDR + MCD_MSG_HDR + 8 + k + v > 1514:
                raise ParamError(f"Client: a memcached SET of a {k}-byte key and {v}-byte value does not fit one "
                                 "1514-byte frame (over UDP a request fits one datagram; transport 'tcp' carries "
                                 "larger ones)")
            if self.mode == "crew":
                raise ParamError("Client.mode = 'crew': memcached instances share nothing, so every request goes "
                                 "to its key's instance (allowed with protocol 'memcached': 'auto', 'erew')")
            if self.fuzz_frames:
                raise ParamError(f"Client.fuzz_frames = {self.fuzz_frames}: fuzzing speaks the MICA format only "
                                 "(allowed with protocol 'memcached': 0)")

    def check_server(self, binary: str) -> None:
        """Refuse a client that does not speak the protocol of the server binary (known by its file name)."""
        speaks = SERVER_PROTOCOL.get(os.path.basename(binary))
        if speaks is not None and speaks != self.protocol:
            raise ParamError(f"Client.protocol = {self.protocol!r} but the server {os.path.basename(binary)} "
                             f"speaks {speaks!r}: set client.protocol={speaks}")


def server_mode(argv: list[str]) -> str:
    """The KVS server's access mode from its arguments (mode=erew|crew; erew when absent)."""
    modes = [a.split("=", 1)[1] for a in argv if a.startswith("mode=")]
    return modes[-1] if modes else "erew"


# The MICA-style server's storage (workloads/kvs/kvs_store.h): a log item is a 24-byte header, the key and the
# value each padded to 8 bytes; an index bucket is 128 bytes of 15 entries. With no log_mib=/log_kib= and buckets=
# argument the server takes 64 MiB and 65536 buckets per partition (kvs_server.c, kvs_config_default).
KVS_BINARY = "kvs-server"
KVS_ITEM_HEADER, KVS_BUCKET_BYTES, KVS_BUCKET_ENTRIES = 24, 128, 15
KVS_SERVER_DEFAULT_LOG, KVS_SERVER_DEFAULT_BUCKETS = 64 << 20, 1 << 16
# Its TX ring's defaults (kvs_config_default): 512 descriptors, sent buffers reclaimed in groups of 32 (a quarter of
# a smaller ring), as MICA configures DPDK.
KVS_SERVER_DEFAULT_TX_RING, KVS_SERVER_DEFAULT_TX_RS = 512, 32
# Sizing from the item count (kvs_server_sizes): the smallest sizes it gives are the ones every config passed before
# the sizes followed the item count (16 MiB and 16384 buckets per partition), so those configs keep their
# statistics (assumed: they are not derived, only known to hold the configs' data sets).
KVS_MIN_LOG, KVS_MIN_BUCKETS = 16 << 20, 1 << 14
# A sized index may drop at most this many items per partition on average to full buckets (the lossy index's
# only loss when the log holds the data set); the run warns when an explicit index drops a whole item or more.
KVS_SIZED_INDEX_LOSS, KVS_WARN_INDEX_LOSS = 0.01, 1.0


def _pad8(n: int) -> int:
    return (n + 7) & ~7


def kvs_item_bytes(key: int, value: int) -> int:
    """Bytes one item occupies in the server's log (kvs_item_alloc_size)."""
    return KVS_ITEM_HEADER + _pad8(key) + _pad8(value)


def partition_items_bound(items: int, partitions: int) -> int:
    """Items the fullest partition holds, to about four standard deviations: keys go to partitions by their hash,
    so a partition's count is binomial(items, 1 / partitions)."""
    share = items / partitions
    return math.ceil(share + 4.0 * math.sqrt(share * (1.0 - 1.0 / partitions))) if partitions > 1 else items


def index_loss(items: int, buckets: int) -> float:
    """Items a partition's index is expected to drop because more than 15 keys hash to one bucket: with keys
    spread uniformly a bucket's keys are Poisson(items / buckets), and each bucket drops E[(X - 15)+]."""
    lam = items / buckets
    term, below, mean_below = math.exp(-lam), 0.0, 0.0     # P(X = k), P(X <= 15), E[X; X <= 15]
    for k in range(KVS_BUCKET_ENTRIES + 1):
        if k:
            term *= lam / k
        below += term
        mean_below += k * term
    # E[(X - 15)+] = E[X] - E[X; X <= 15] - 15 P(X > 15)
    per_bucket = max(0.0, lam - mean_below - KVS_BUCKET_ENTRIES * (1.0 - below))
    return per_bucket * buckets


def _next_pow2(n: int) -> int:
    return 1 << max(0, math.ceil(n) - 1).bit_length()


def kvs_server_sizes(client: Client, partitions: int) -> tuple[int, int]:
    """(log bytes, buckets) per partition that hold the client's whole data set without eviction: the log twice
    the fullest partition's items (with LRU re-append, a read item is re-appended once it is half a log behind the
    tail; live data in half the log is never re-appended, and in-place PUTs do not move the tail), the index the
    fewest buckets (a power of two) that drop under KVS_SIZED_INDEX_LOSS items; never below KVS_MIN_LOG and
    KVS_MIN_BUCKETS."""
    n = partition_items_bound(client.items, partitions)
    log = max(KVS_MIN_LOG, _next_pow2(2 * n * kvs_item_bytes(*client.sizes())))
    buckets = KVS_MIN_BUCKETS
    while index_loss(n, buckets) > KVS_SIZED_INDEX_LOSS:
        buckets *= 2
    return log, buckets


# The KVS server's arguments and what it accepts (workloads/kvs/kvs_server.c, kvs_config_parse): a value it
# refuses makes it exit with "bad argument" before serving.
_POW2 = lambda lo, hi: (lambda n: lo <= n <= hi and n & (n - 1) == 0, f"a power of two in [{lo}, {hi}]")  # noqa: E731
KVS_SERVER_ARGS = {
    "prefetch": (lambda n: n <= 1, "0 or 1"), "lru": (lambda n: n <= 1, "0 or 1"),
    "numa_report": (lambda n: n <= 1, "0 or 1"), "log_mib": _POW2(1, 1 << 20), "log_kib": _POW2(4, 1 << 30),
    "buckets": _POW2(1, 1 << 32), "rx_ring": _POW2(8, 4096), "tx_ring": _POW2(8, 4096),
    "housekeeping_log2": (lambda n: n <= 40, "in [0, 40]"),
    # KiB of the log a partition keeps (kvs_partition_set_window), checked against the log by _check_log_window.
    "log_window_kib": (lambda n: 4 <= n <= 1 << 30, "in [4, 2^30]"),
    # Buckets a partition's index uses (kvs_partition_set_buckets_used), checked against buckets= by
    # _check_buckets_used.
    "buckets_used": (lambda n: 1 <= n <= 1 << 32, "in [1, 2^32]"),
    "tx_rs": _POW2(1, 1024), "tx_free": (lambda n: 1 <= n <= 4096, "in [1, 4096]"),
    **{f"buf_{part}": (lambda n: n % 64 == 0 and n <= 65535, "whole 64-byte lines, at most 65535")
       for part in ("data", "headroom", "meta")},
}


# The servers take up to 32 frames from a queue per poll and answer them together (workloads/kvs/kvs_server.c,
# mcd), and a request costs at most about 4,000 instructions (assumed: above the largest client.insts_per_request
# the test suite's runs report, 3,215, which counts the polling between requests too).
SERVER_RX_BURST, INSTS_PER_REQUEST_BOUND = 32, 4000


def stall_window_insts(client: Client) -> int:
    """Instructions per hart the client must wait, at least, before calling a response lost: twice a full RX burst
    of its largest frames' work."""
    return 2 * min(client.window, SERVER_RX_BURST) * client.requests_per_packet * INSTS_PER_REQUEST_BOUND


def check_kvs_server_args(argv: list[str]) -> None:
    """Refuse, before the run, an argument the KVS server would refuse at start-up (naming it and what it takes)."""
    for arg in argv:
        name, _, value = arg.partition("=")
        if name == "mode":
            if value not in ("erew", "crew"):
                raise ParamError(f"System.workload.argv: {arg!r}: the KVS server's mode is 'erew' or 'crew'")
            continue
        if name in ("selftest", "selftest_nic", "selftest_batch"):
            continue
        if name not in KVS_SERVER_ARGS:
            raise ParamError(f"System.workload.argv: {arg!r}: the KVS server has no argument {name!r} (it takes "
                             f"mode, {', '.join(KVS_SERVER_ARGS)})")
        ok, allowed = KVS_SERVER_ARGS[name]
        if not value.isdigit() or not ok(int(value)):
            raise ParamError(f"System.workload.argv: {arg!r}: the KVS server takes {name}= {allowed}")
    _check_tx_ring_args(argv)
    _check_log_window(argv)
    _check_buckets_used(argv)


def _check_buckets_used(argv: list[str]) -> None:
    """buckets_used= against buckets=, as kvs_config_check does at the server's start-up: more than half of the
    buckets given beside it and at most all of them."""
    given = {a.partition("=")[0]: a.partition("=")[2] for a in argv}
    if "buckets_used" not in given:
        return
    if "buckets" not in given:
        raise ParamError("System.workload.argv: buckets_used= needs the index's own size beside it (buckets=): the "
                         "buckets in use are a part of a given index, not sized from the data set")
    allocated, used = int(given["buckets"]), int(given["buckets_used"])
    if not allocated // 2 < used <= allocated:
        raise ParamError(f"System.workload.argv: buckets_used={used}: the KVS server uses more than half of its "
                         f"buckets and at most all of them (buckets={allocated} per partition)")


def _check_log_window(argv: list[str]) -> None:
    """log_window_kib= against the log, as kvs_config_check does at the server's start-up: more than half of the
    log given beside it (log_mib=/log_kib=) and at most all of it."""
    given = {a.partition("=")[0] for a in argv}
    if "log_window_kib" not in given:
        return
    if not given & {"log_mib", "log_kib"}:
        raise ParamError("System.workload.argv: log_window_kib= needs the log's own size beside it (log_mib= or "
                         "log_kib=): a window is a part of a given log, not sized from the data set")
    log, _, _ = kvs_server_capacity(argv)
    window = kvs_server_window(argv)
    if not log // 2 < window <= log:
        raise ParamError(f"System.workload.argv: log_window_kib={window >> 10}: the KVS server keeps more than half "
                         f"of its log and at most all of it ({log >> 10} KiB per partition: log_mib=/log_kib=)")


def _check_tx_ring_args(argv: list[str]) -> None:
    """The TX ring's arguments against one another, as kvs_config_check does at the server's start-up: a reclaim
    group (tx_rs, default 32 or a quarter of a smaller ring) at most a quarter of tx_ring, and the free threshold
    tx_free between the group and tx_ring (DPDK's tx_rs_thresh <= tx_free_thresh)."""
    given = {a.partition("=")[0]: int(a.partition("=")[2]) for a in argv if a.partition("=")[2].isdigit()}
    ring = given.get("tx_ring", KVS_SERVER_DEFAULT_TX_RING)
    group = given.get("tx_rs") or min(KVS_SERVER_DEFAULT_TX_RS, ring // 4)
    if group * 4 > ring:
        raise ParamError(f"System.workload.argv: tx_rs={group}: a TX reclaim group is at most a quarter of "
                         f"tx_ring={ring}")
    free = given.get("tx_free")
    if free is not None and not group <= free <= ring:
        raise ParamError(f"System.workload.argv: tx_free={free}: the KVS server takes a TX free threshold between "
                         f"the reclaim group ({group}) and tx_ring ({ring})")


def kvs_server_capacity(argv: list[str]) -> tuple[int, int, bool]:
    """(log bytes, buckets in use, lru) per partition that the server's arguments give (its defaults where absent;
    buckets_used= where given, else buckets=)."""
    log, buckets, lru = KVS_SERVER_DEFAULT_LOG, KVS_SERVER_DEFAULT_BUCKETS, True
    used = None
    for a in argv:
        name, _, value = a.partition("=")
        if not value.isdigit():
            continue
        if name == "log_mib":
            log = int(value) << 20
        elif name == "log_kib":
            log = int(value) << 10
        elif name == "buckets":
            buckets = int(value)
        elif name == "buckets_used":
            used = int(value)
        elif name == "lru":
            lru = value == "1"
    return log, used or buckets, lru


def kvs_server_window(argv: list[str]) -> int:
    """Bytes of its log a partition keeps (log_window_kib=; the whole log where absent): an item further behind the
    tail is gone, and a read item more than half of it behind is re-appended."""
    windows = [int(a.partition("=")[2]) << 10 for a in argv
               if a.partition("=")[0] == "log_window_kib" and a.partition("=")[2].isdigit()]
    return windows[-1] if windows else kvs_server_capacity(argv)[0]


def kvs_server_argv(argv: list[str], client: Client, partitions: int) -> list[str]:
    """The server's arguments with its log and index sized from the data set (kvs_server_sizes) where the user gave
    no size: log_mib= (log_kib= below 1 MiB) when neither log size is given, buckets= when it is not."""
    given = {a.split("=", 1)[0] for a in argv}
    log, buckets = kvs_server_sizes(client, partitions)
    extra = []
    if not given & {"log_mib", "log_kib"}:
        extra.append(f"log_mib={log >> 20}" if log >= 1 << 20 else f"log_kib={log >> 10}")
    if "buckets" not in given:
        extra.append(f"buckets={buckets}")
    return [*argv, *extra]


def kvs_eviction_warning(argv: list[str], client: Client, partitions: int) -> str | None:
    """Why the server's log or index (its resolved arguments) cannot hold the client's data set, naming the sizes;
    None when they hold it (then every GET of a loaded item must hit)."""
    log, buckets, lru = kvs_server_capacity(argv)
    window = kvs_server_window(argv)
    n = partition_items_bound(client.items, partitions)
    data = n * kvs_item_bytes(*client.sizes())
    room = window // 2 if lru else window
    kept = f"{log / 2**20:g} MiB" + (f", of which it keeps {window / 2**20:.4g} MiB" if window < log else "")
    problems = []
    if data > room:
        problems.append(f"the log ({kept} per partition{', lru=1: half of it before re-appends' if lru else ''}) "
                        f"holds {room // kvs_item_bytes(*client.sizes()):,} items")
    loss = index_loss(n, buckets)
    if loss >= KVS_WARN_INDEX_LOSS:
        problems.append(f"the index ({buckets:,} buckets of {KVS_BUCKET_ENTRIES} per partition) drops about "
                        f"{loss:,.0f} of them to full buckets")
    if not problems:
        return None
    return (f"the KVS server will evict: up to {n:,} items ({data / 2**20:.1f} MiB of log) per partition "
            f"(Client.items = {client.items:,} over {partitions} partitions) but " + " and ".join(problems) +
            "; GETs of evicted items miss. Remove log_mib=/log_kib=/buckets= from System.workload.argv to size them "
            "from the item count, or give larger ones")


def kvs_server_memory(argv: list[str], client: Client, partitions: int) -> int:
    """Guest bytes the server's partitions are expected to touch once the data set is loaded: the log its items
    fill and the index pages their buckets are on (n keys over P pages touch P (1 - (1 - 1/P)^n) of them)."""
    log, buckets, _ = kvs_server_capacity(argv)
    n = client.items / partitions
    pages = max(1, buckets * KVS_BUCKET_BYTES // 4096)
    touched = pages * -math.expm1(n * math.log1p(-1 / pages)) if pages > 1 else 1
    return int(partitions * (touched * 4096 + min(log, n * kvs_item_bytes(*client.sizes()))))


class ServerEvicts(UserWarning):
    """The KVS server's log or index is too small for the client's data set: GETs of evicted items miss."""


def guest_memory_parts(items: int, partitions: int, dataset: str = "tiny") -> dict[str, int]:
    """Host memory the KVS server's store touches for `items` over `partitions`, by part: its log as written and
    its whole index as sized from the item count (guest pages are allocated on touch, so the log's unwritten half
    costs nothing). Measured (results/figures/conditions.md, session 10): the checkpoint's page file of a 60-core
    load is these parts to within the pages of the program, stacks and rings."""
    client = Client(enabled=True, items=items, dataset=dataset)
    _, buckets = kvs_server_sizes(client, partitions)
    return {"log": items * kvs_item_bytes(*DATASETS[dataset]), "index": partitions * buckets * KVS_BUCKET_BYTES}


def guest_memory_bytes(items: int, partitions: int, dataset: str = "tiny") -> int:
    """The store's host memory (guest_memory_parts, summed): the data set's own footprint, which the engine's
    up-front estimate does not include."""
    return sum(guest_memory_parts(items, partitions, dataset).values())
