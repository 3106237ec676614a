"""Which partition each key of the KVS client's data set falls in, and each server core's expected share of the
requests under Zipf popularity (EREW and CREW): the partition-load study's arithmetic, also read by the capacity
search to predict a skewed server's capacity from its hottest core (drivers/capacity.load_shares). Kept apart from
the study so the search does not import the sweep machinery."""

from __future__ import annotations

import numpy as np

THETA = 0.99                    # the Zipf skew of the paper's skewed workloads (kvs-workload.md)

_P1, _P2, _P3, _P4, _P5 = (np.uint64(v) for v in (0x9E3779B185EBCA87, 0xC2B2AE3D27D4EB4F, 0x165667B19E3779F9,
                                                   0x85EBCA77C2B2AE63, 0x27D4EB2F165667C5))


def _rotl(x: np.ndarray, r: int) -> np.ndarray:
    return (x << np.uint64(r)) | (x >> np.uint64(64 - r))


def keyhash_of_items(items: np.ndarray, key_len: int = 8) -> np.ndarray:
    """The KVS keyhash (XXH64, seed 0; workloads/ABI.md) of each item's key as the client builds it (the item
    number's 8 little-endian bytes, then byte j = (j x 0x9d mod 256) xor byte (j mod 8)), vectorised. Keys of 8 to
    31 bytes (tiny and small); checked against workloads/kvs/keyhash_vectors.txt in the tests."""
    if not 8 <= key_len < 32:
        raise ValueError(f"key_len = {key_len}: keyhash_of_items handles keys of 8 to 31 bytes")
    items = np.asarray(items, dtype=np.uint64)
    base = items.view(np.uint8).reshape(-1, 8) if items.dtype.byteorder in "=<" else \
        items.astype("<u8").view(np.uint8).reshape(-1, 8)
    key = np.empty((len(items), key_len), dtype=np.uint8)
    key[:, :8] = base
    for j in range(8, key_len):
        key[:, j] = np.uint8((j * 0x9D) & 0xFF) ^ base[:, j % 8]
    return xxh64_rows(key)


def xxh64_rows(key: np.ndarray) -> np.ndarray:
    """XXH64 with seed 0 of each row of a uint8 array whose rows are shorter than 32 bytes."""
    n, length = key.shape
    if length >= 32:
        raise ValueError("xxh64_rows: rows of 32 bytes or more are not handled")
    with np.errstate(over="ignore"):
        h = np.full(n, _P5 + np.uint64(length), dtype=np.uint64)
        pos = 0
        while length - pos >= 8:
            lane = np.ascontiguousarray(key[:, pos:pos + 8]).view("<u8").reshape(-1).astype(np.uint64)
            h ^= _rotl(lane * _P2, 31) * _P1
            h = _rotl(h, 27) * _P1 + _P4
            pos += 8
        if length - pos >= 4:
            word = np.ascontiguousarray(key[:, pos:pos + 4]).view("<u4").reshape(-1).astype(np.uint64)
            h ^= word * _P1
            h = _rotl(h, 23) * _P2 + _P3
            pos += 4
        while pos < length:
            h ^= key[:, pos].astype(np.uint64) * _P5
            h = _rotl(h, 11) * _P1
            pos += 1
        h ^= h >> np.uint64(33)
        h *= _P2
        h ^= h >> np.uint64(29)
        h *= _P3
        h ^= h >> np.uint64(32)
    return h


def expected_partition_share(items: int, cores: int, theta: float = THETA, chunk: int = 1 << 22) -> np.ndarray:
    """The fraction of Zipf(theta) requests whose key falls in each of `cores` partitions (item i has rank i + 1,
    weight (i + 1)^-theta), computed in chunks so the paper's 192 Mi items fit in memory."""
    share = np.zeros(cores)
    total = 0.0
    for start in range(0, items, chunk):
        idx = np.arange(start, min(items, start + chunk), dtype=np.uint64)
        weight = (idx.astype(np.float64) + 1.0) ** -theta
        part = (keyhash_of_items(idx) >> np.uint64(48)) % np.uint64(cores)
        share += np.bincount(part.astype(np.int64), weights=weight, minlength=cores)
        total += weight.sum()
    return share / total


def expected_core_share(items: int, cores: int, mode: str, get_ratio: float = 0.95,
                        theta: float = THETA) -> np.ndarray:
    """Each core's expected fraction of the requests: its partition's share in EREW; in CREW the PUTs' share of
    its partition plus an equal part of the GETs (round-robin)."""
    share = expected_partition_share(items, cores, theta)
    if mode == "erew":
        return share
    if mode == "crew":
        return (1 - get_ratio) * share + get_ratio / cores
    raise ValueError(f"mode = {mode!r}: must be 'erew' or 'crew'")
