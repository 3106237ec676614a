/*
 * kvs_store.h - one partition of the MICA-style cache: a lossy hash index of 128-byte buckets over a circular log.
 *
 * Only the partition's owner core writes it. In CREW mode other cores read it (GET) with the per-bucket version
 * protocol; in EREW mode only the owner touches it.
 */
#ifndef KVS_STORE_H
#define KVS_STORE_H

#include <stdint.h>
#include <stddef.h>

#define KVS_BUCKET_ENTRIES 15u
#define KVS_OFFSET_BITS    48u
#define KVS_OFFSET_MASK    ((1ull << KVS_OFFSET_BITS) - 1)
#define KVS_ITEM_HDR_LEN   24u
#define KVS_MIN_LOG_SIZE   4096ull

/* 128 bytes = two cache lines: version, spare, 15 entries of tag(16) | log offset(48); entry 0 = empty. */
struct kvs_bucket {
    uint32_t version;
    uint32_t spare;
    uint64_t entry[KVS_BUCKET_ENTRIES];
} __attribute__((aligned(128)));
_Static_assert(sizeof(struct kvs_bucket) == 128, "a bucket is two cache lines");

/* Log item header; the key and then the value follow, each padded to 8 bytes. */
struct kvs_item_hdr {
    uint64_t alloc_size; /* bytes the item occupies in the log, header included */
    uint32_t kv_len;     /* key length << 24 | value length */
    uint32_t expire;
    uint64_t keyhash;
};
_Static_assert(sizeof(struct kvs_item_hdr) == KVS_ITEM_HDR_LEN, "item header is 24 bytes");

struct kvs_store_stats {
    uint64_t gets, get_hits, puts, put_inplace, put_append, deletes;
    uint64_t index_evictions;   /* entries dropped from a full bucket */
    uint64_t stale_cleaned;     /* entries found pointing at overwritten log space and cleared */
    uint64_t lru_reappends;     /* items re-appended at the tail after a read in the older half */
    uint64_t wrap_skips;        /* times the tail skipped the end of the log so an item stays contiguous */
    uint64_t too_large;
};

struct kvs_reader_stats {
    uint64_t crew_retries;      /* reader retries because the bucket version was odd or changed */
    uint64_t crew_busy;         /* reads that gave up (bounded spins exceeded) */
    uint64_t crew_stale;        /* reads that found their item overwritten by a concurrent append */
};

struct kvs_partition {
    struct kvs_bucket *buckets;
    uint64_t bucket_mask;       /* buckets - 1 (a power of two) */
    uint8_t *log;
    uint64_t log_size;          /* a power of two */
    uint64_t log_mask;
    uint64_t head;              /* oldest log byte still intact (ever-increasing) */
    uint64_t tail;              /* next append position (ever-increasing); readers load it atomically */
    uint32_t id;
    uint32_t crew;              /* 1: keep bucket versions and publish the tail for concurrent readers */
    struct kvs_store_stats st;
    /* Bytes of the log the partition keeps: an item more than this behind the tail is gone, and a read item more
     * than half of it behind is re-appended. log_size unless kvs_partition_set_window made it smaller, so that a
     * reduced data set keeps a full one's log-to-data ratio although the log is a power of two. Last, so that the
     * fields before it keep their offsets. */
    uint64_t log_window;
    /* Buckets in use when fewer than the power of two allocated (kvs_partition_set_buckets_used), so that a reduced
     * data set keeps a full one's items per bucket; 0: all of them, indexed by a mask of the hash as MICA does.
     * After log_window, so that the fields before it keep their offsets. */
    uint64_t buckets_used;
};

/* Key location helpers. */
static inline uint16_t kvs_tag_of(uint64_t keyhash)
{
    uint16_t t = (uint16_t)(keyhash & 0xffff);
    return t ? t : 1;
}
static inline unsigned kvs_partition_of(uint64_t keyhash, unsigned partitions)
{
    return (unsigned)((keyhash >> 48) % partitions);
}
static inline struct kvs_bucket *kvs_bucket_of(const struct kvs_partition *p, uint64_t keyhash)
{
    /* Fewer buckets than a power of two: the 32 hash bits above the tag (below the partition's) scaled onto them
     * by a multiply and a shift, so each bucket takes 2^32 / buckets_used of the hashes (within one). */
    if (p->buckets_used)
        return &p->buckets[(((keyhash >> 16) & 0xffffffffull) * p->buckets_used) >> 32];
    return &p->buckets[(keyhash >> 16) & p->bucket_mask];
}
static inline uint64_t kvs_item_alloc_size(uint32_t klen, uint32_t vlen)
{
    return KVS_ITEM_HDR_LEN + (uint64_t)((klen + 7u) & ~7u) + (((uint64_t)vlen + 7u) & ~7ull);
}

/* Set up a partition over caller-provided zeroed memory: nbuckets buckets (power of two) and a log of log_size
 * bytes (power of two, >= KVS_MIN_LOG_SIZE). Returns 0, or -1 on bad sizes. */
int kvs_partition_init(struct kvs_partition *p, unsigned id, struct kvs_bucket *buckets, uint64_t nbuckets,
                       uint8_t *log, uint64_t log_size, int crew);

/* Keep only the newest `window` bytes of the log (log_size / 2 < window <= log_size, a multiple of 8): the items
 * are still placed in the power-of-two log, but they are gone, and re-appended when read, as in a log of `window`
 * bytes. Returns 0, or -1 on a bad size. */
int kvs_partition_set_window(struct kvs_partition *p, uint64_t window);

/* Use only `used` of the partition's buckets (nbuckets / 2 < used <= nbuckets; all of them: the mask as before):
 * an index of `used` buckets although the allocation is a power of two. Returns 0, or -1 on a bad count. */
int kvs_partition_set_buckets_used(struct kvs_partition *p, uint64_t used);

/* The largest item a partition accepts. */
static inline uint64_t kvs_max_item(const struct kvs_partition *p) { return p->log_size / 4; }

/* Owner operations (the only writer). Results are KVS_RES_* codes. GET copies the value to out when it fits
 * out_cap (else KVS_RES_NO_ROOM, *vlen still set, nothing copied); lru enables the re-append of read items in the
 * older half. */
unsigned kvs_store_get(struct kvs_partition *p, uint64_t keyhash, const uint8_t *key, uint32_t klen,
                       uint8_t *out, uint32_t out_cap, uint32_t *vlen, int lru);
/* The same lookup without the copy: *val points at the value in the log (valid until the owner's next write). */
unsigned kvs_store_get_ref(struct kvs_partition *p, uint64_t keyhash, const uint8_t *key, uint32_t klen,
                           const uint8_t **val, uint32_t *vlen, int lru);
unsigned kvs_store_put(struct kvs_partition *p, uint64_t keyhash, const uint8_t *key, uint32_t klen,
                       const uint8_t *val, uint32_t vlen, uint32_t expire);
unsigned kvs_store_delete(struct kvs_partition *p, uint64_t keyhash, const uint8_t *key, uint32_t klen);

/* CREW: a GET by a core that does not own p (lock-free, version-checked; gives up after max_spins odd/changed
 * versions with KVS_RES_BUSY). The key must not live in memory that out overlaps. */
unsigned kvs_store_get_remote(const struct kvs_partition *p, uint64_t keyhash, const uint8_t *key, uint32_t klen,
                              uint8_t *out, uint32_t out_cap, uint32_t *vlen, uint64_t max_spins,
                              struct kvs_reader_stats *rs);

/* Prefetch pipeline helpers: the bucket's two lines; the first tag match's item (first two lines). */
void kvs_store_prefetch_bucket(const struct kvs_partition *p, uint64_t keyhash);
void kvs_store_prefetch_item(const struct kvs_partition *p, uint64_t keyhash);

/* Introspection for tests: the valid log offset of the key's item, or UINT64_MAX. */
uint64_t kvs_store_item_offset(const struct kvs_partition *p, uint64_t keyhash, const uint8_t *key, uint32_t klen);

/* Test hooks (native test builds only): called at the named points of the version protocol. */
#define KVS_HOOK_WRITER_ODD   1  /* the writer has made the bucket version odd and is about to write */
#define KVS_HOOK_READER_READ  2  /* a remote reader has copied the item and is about to re-check the version */
#ifdef KVS_TEST_HOOKS
extern void (*kvs_test_hook)(int point, const struct kvs_bucket *b);
#define KVS_HOOK(pt, b) do { if (kvs_test_hook) kvs_test_hook((pt), (b)); } while (0)
#else
#define KVS_HOOK(pt, b) do { } while (0)
#endif

#endif
