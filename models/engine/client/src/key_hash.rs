//! The KVS keyhash: XXH64 of the key bytes with seed 0, written from the algorithm's published description
//! (four 64-bit accumulator lanes over 32-byte stripes, a merge, the tail in 8-, 4- and 1-byte steps, the
//! avalanche). The C server's tests use the same function (`workloads/kvs/keyhash.c`); both are checked against
//! `workloads/kvs/keyhash_vectors.txt`.

const P1: u64 = 0x9E37_79B1_85EB_CA87;
const P2: u64 = 0xC2B2_AE3D_27D4_EB4F;
const P3: u64 = 0x1656_67B1_9E37_79F9;
const P4: u64 = 0x85EB_CA77_C2B2_AE63;
const P5: u64 = 0x27D4_EB2F_1656_67C5;

#[inline]
fn round(acc: u64, lane: u64) -> u64 {
    acc.wrapping_add(lane.wrapping_mul(P2)).rotate_left(31).wrapping_mul(P1)
}

#[inline]
fn merge(acc: u64, lane: u64) -> u64 {
    (acc ^ round(0, lane)).wrapping_mul(P1).wrapping_add(P4)
}

#[inline]
fn le64(b: &[u8]) -> u64 {
    u64::from_le_bytes(b[..8].try_into().unwrap())
}

/// XXH64(data, seed).
pub fn xxh64(data: &[u8], seed: u64) -> u64 {
    let mut rest = data;
    let mut h = if data.len() >= 32 {
        let mut v = [seed.wrapping_add(P1).wrapping_add(P2), seed.wrapping_add(P2), seed, seed.wrapping_sub(P1)];
        while rest.len() >= 32 {
            for (i, lane) in v.iter_mut().enumerate() {
                *lane = round(*lane, le64(&rest[8 * i..]));
            }
            rest = &rest[32..];
        }
        let mut h = v[0].rotate_left(1).wrapping_add(v[1].rotate_left(7));
        h = h.wrapping_add(v[2].rotate_left(12)).wrapping_add(v[3].rotate_left(18));
        for lane in v {
            h = merge(h, lane);
        }
        h
    } else {
        seed.wrapping_add(P5)
    };
    h = h.wrapping_add(data.len() as u64);
    while rest.len() >= 8 {
        h ^= round(0, le64(rest));
        h = h.rotate_left(27).wrapping_mul(P1).wrapping_add(P4);
        rest = &rest[8..];
    }
    if rest.len() >= 4 {
        let w = u32::from_le_bytes(rest[..4].try_into().unwrap()) as u64;
        h ^= w.wrapping_mul(P1);
        h = h.rotate_left(23).wrapping_mul(P2).wrapping_add(P3);
        rest = &rest[4..];
    }
    for &b in rest {
        h ^= (b as u64).wrapping_mul(P5);
        h = h.rotate_left(11).wrapping_mul(P1);
    }
    h ^= h >> 33;
    h = h.wrapping_mul(P2);
    h ^= h >> 29;
    h = h.wrapping_mul(P3);
    h ^ (h >> 32)
}

/// The KVS keyhash of a key.
#[inline]
pub fn keyhash(key: &[u8]) -> u64 {
    xxh64(key, 0)
}

/// partition = (keyhash >> 48) mod partitions (workloads/ABI.md, "Keyhash and placement").
#[inline]
pub fn partition_of(keyhash: u64, partitions: u64) -> u64 {
    (keyhash >> 48) % partitions.max(1)
}

/// The bucket of a partition's index that has `buckets` in use (workloads/kvs/kvs_store.h, kvs_bucket_of): a power
/// of two, (keyhash >> 16) mod buckets; fewer (the server's buckets_used=, never a power of two), the 32 hash bits
/// above the tag scaled onto them.
#[inline]
pub fn bucket_of(keyhash: u64, buckets: u64) -> u64 {
    if buckets.is_power_of_two() || buckets == 0 {
        (keyhash >> 16) & (buckets.max(1) - 1)
    } else {
        (((keyhash >> 16) & 0xffff_ffff) * buckets) >> 32
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn unhex(s: &str) -> Vec<u8> {
        if s == "-" {
            return vec![];
        }
        (0..s.len()).step_by(2).map(|i| u8::from_str_radix(&s[i..i + 2], 16).unwrap()).collect()
    }

    #[test]
    fn matches_the_c_servers_vectors() {
        let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../../workloads/kvs/keyhash_vectors.txt");
        let text = std::fs::read_to_string(path).expect("workloads/kvs/keyhash_vectors.txt");
        let mut n = 0;
        let mut lens = std::collections::BTreeSet::new();
        for line in text.lines().filter(|l| !l.starts_with('#') && !l.trim().is_empty()) {
            let (k, h) = line.split_once(' ').unwrap();
            let key = unhex(k);
            lens.insert(key.len());
            assert_eq!(keyhash(&key), u64::from_str_radix(h.trim(), 16).unwrap(), "key {k}");
            n += 1;
        }
        assert!(n >= 50, "only {n} vectors");
        // Every code path: empty, byte tail, 4-byte step, 8-byte steps, and the 32-byte stripes.
        assert!(lens.contains(&0) && lens.contains(&3) && lens.contains(&4) && lens.iter().any(|&l| l >= 64));
    }

    #[test]
    fn bucket_of_a_power_of_two_masks_and_fewer_scale() {
        let kh = 0xABCD_1234_5678_0000u64;
        assert_eq!(bucket_of(kh, 1024), (kh >> 16) & 1023);
        // The values workloads/kvs/tests/test_hash.c checks on the server's side (hash_buckets_used).
        assert_eq!(bucket_of(kh, 683), (0x1234_5678u64 * 683) >> 32);
        assert_eq!(bucket_of(0xffff_ffff_ffff_0000, 683), 682);
        assert_eq!(bucket_of(0xffff_0000_0000_ffff, 683), 0);
    }

    #[test]
    fn seed_and_every_byte_matter() {
        let key = b"0123456789abcdef0123456789abcdefXYZ";
        let base = xxh64(key, 0);
        assert_ne!(base, xxh64(key, 1));
        for i in 0..key.len() {
            let mut k = key.to_vec();
            k[i] ^= 1;
            assert_ne!(xxh64(&k, 0), base, "byte {i}");
        }
    }
}
