/*
 * kvs_store.c - the lossy index and the circular log of one partition (MICA cache mode).
 *
 * Log offsets are ever-increasing byte counters; an index entry keeps the low 48 bits. An entry is valid when its
 * item starts no more than log_window bytes behind the tail (log_size unless set smaller: nothing has been written
 * over it since); anything older is stale and is cleared when met. Items never straddle the end of the log: when one would, the tail first skips
 * to the next multiple of the log size (the explicit wrap check).
 *
 * CREW: the owner makes a bucket's version odd before changing the bucket or an item it indexes, and even after;
 * it publishes a new tail before writing the appended bytes, so a remote reader that copied an item and then sees
 * the tail within log_window of the item knows the copy was not torn by an append.
 */
#include "kvs_store.h"
#include "kvs_abi.h"
#include "platform.h"

#ifdef KVS_TEST_HOOKS
void (*kvs_test_hook)(int point, const struct kvs_bucket *b);
#endif

#define MEMCPY __builtin_memcpy
#define MEMCMP __builtin_memcmp

int kvs_partition_init(struct kvs_partition *p, unsigned id, struct kvs_bucket *buckets, uint64_t nbuckets,
                       uint8_t *log, uint64_t log_size, int crew)
{
    if (!buckets || !log || nbuckets == 0 || (nbuckets & (nbuckets - 1)) || log_size < KVS_MIN_LOG_SIZE ||
        (log_size & (log_size - 1)) || log_size > (1ull << 46))
        return -1;
    __builtin_memset(p, 0, sizeof(*p));
    p->buckets = buckets;
    p->bucket_mask = nbuckets - 1;
    p->log = log;
    p->log_size = log_size;
    p->log_mask = log_size - 1;
    p->id = id;
    p->crew = crew ? 1 : 0;
    p->log_window = log_size;
    return 0;
}

int kvs_partition_set_window(struct kvs_partition *p, uint64_t window)
{
    if (window <= p->log_size / 2 || window > p->log_size || (window & 7))
        return -1;
    p->log_window = window;
    return 0;
}

int kvs_partition_set_buckets_used(struct kvs_partition *p, uint64_t used)
{
    uint64_t all = p->bucket_mask + 1;
    if (used <= all / 2 || used > all)
        return -1;
    p->buckets_used = used == all ? 0 : used;
    return 0;
}

static inline struct kvs_item_hdr *item_at(const struct kvs_partition *p, uint64_t off)
{
    return (struct kvs_item_hdr *)(p->log + (off & p->log_mask));
}

static inline uint64_t entry_make(uint16_t tag, uint64_t off)
{
    return (uint64_t)tag << KVS_OFFSET_BITS | (off & KVS_OFFSET_MASK);
}

/* How far the entry's item starts behind the tail (mod 2^48). */
static inline uint64_t entry_dist(uint64_t tail, uint64_t e)
{
    return (tail - (e & KVS_OFFSET_MASK)) & KVS_OFFSET_MASK;
}

static inline int dist_valid(const struct kvs_partition *p, uint64_t dist)
{
    return dist >= KVS_ITEM_HDR_LEN && dist <= p->log_window;
}

static inline void entry_store(struct kvs_bucket *b, unsigned i, uint64_t e)
{
    __atomic_store_n(&b->entry[i], e, __ATOMIC_RELAXED);
}

static inline void version_begin(struct kvs_partition *p, struct kvs_bucket *b)
{
    if (!p->crew)
        return;
    __atomic_store_n(&b->version, b->version + 1, __ATOMIC_RELAXED);
    __atomic_thread_fence(__ATOMIC_RELEASE); /* the odd version is visible before any change below */
    KVS_HOOK(KVS_HOOK_WRITER_ODD, b);
}

static inline void version_end(struct kvs_partition *p, struct kvs_bucket *b)
{
    if (!p->crew)
        return;
    __atomic_store_n(&b->version, b->version + 1, __ATOMIC_RELEASE);
}

/* Key comparison: 8 bytes at a time when both keys are 8-byte aligned (log items always are; request keys sit at
 * 8-byte multiples of a packet buffer), then the last 0..7 bytes one by one (never reading past the key). */
static inline int key_equal(const uint8_t *a, const uint8_t *b, uint32_t klen)
{
    if (((uintptr_t)a | (uintptr_t)b) & 7)
        return MEMCMP(a, b, klen) == 0;
    uint32_t words = klen / 8;
    for (uint32_t i = 0; i < words; i++)
        if (((const uint64_t *)a)[i] != ((const uint64_t *)b)[i])
            return 0;
    for (uint32_t i = words * 8; i < klen; i++)
        if (a[i] != b[i])
            return 0;
    return 1;
}

/* Owner-side lookup: the entry index of the key's valid item (its offset in *off), or -1. Stale entries met on the
 * way are cleared when clean is set. */
static inline __attribute__((always_inline)) int find_entry(struct kvs_partition *p, struct kvs_bucket *b, uint16_t tag, uint64_t keyhash,
                      const uint8_t *key, uint32_t klen, uint64_t *off, int clean)
{
    uint64_t tail = p->tail;
    for (unsigned i = 0; i < KVS_BUCKET_ENTRIES; i++) {
        uint64_t e = b->entry[i];
        if (e == 0 || (uint16_t)(e >> KVS_OFFSET_BITS) != tag)
            continue;
        uint64_t dist = entry_dist(tail, e);
        if (!dist_valid(p, dist)) {
            if (clean) {
                entry_store(b, i, 0);
                p->st.stale_cleaned++;
            }
            continue;
        }
        const struct kvs_item_hdr *h = item_at(p, tail - dist);
        if (h->keyhash != keyhash || KVS_KEY_LEN(h->kv_len) != klen ||
            !key_equal((const uint8_t *)(h + 1), key, klen))
            continue;
        *off = tail - dist;
        return (int)i;
    }
    return -1;
}

/* Reserve alloc bytes at the tail (skipping the end of the log if the item would straddle it) and publish the new
 * tail before anything is written there. Returns the item's offset. */
static uint64_t log_reserve(struct kvs_partition *p, uint64_t alloc)
{
    uint64_t tail = p->tail;
    uint64_t phys = tail & p->log_mask;
    if (phys + alloc > p->log_size) {
        tail += p->log_size - phys;
        p->st.wrap_skips++;
    }
    uint64_t off = tail;
    tail += alloc;
    if (p->crew) {
        __atomic_store_n(&p->tail, tail, __ATOMIC_RELAXED);
        __atomic_thread_fence(__ATOMIC_RELEASE); /* readers that see the new bytes see the new tail */
    } else {
        p->tail = tail;
    }
    if (tail - p->head > p->log_window)
        p->head = tail - p->log_window; /* FIFO: everything older is gone */
    return off;
}

/* Point an entry of b at the new item: the given entry, else an empty or stale one, else evict the entry whose
 * item is furthest behind the tail. */
static void index_set(struct kvs_partition *p, struct kvs_bucket *b, int idx, uint16_t tag, uint64_t off)
{
    if (idx < 0) {
        uint64_t tail = p->tail, worst = 0;
        int victim = -1, live = 1;
        for (unsigned i = 0; i < KVS_BUCKET_ENTRIES; i++) {
            uint64_t e = b->entry[i];
            if (e == 0) {
                victim = (int)i;
                live = 0;
                break;
            }
            uint64_t d = entry_dist(tail, e);
            if (!dist_valid(p, d)) {
                victim = (int)i;
                live = 0;
                p->st.stale_cleaned++;
                break;
            }
            if (d > worst) {
                worst = d;
                victim = (int)i;
            }
        }
        if (live)
            p->st.index_evictions++;
        idx = victim;
    }
    entry_store(b, (unsigned)idx, entry_make(tag, off));
}

/* Returns the item's offset afterwards (moved, or unchanged when moving would overwrite the source). */
static uint64_t lru_reappend(struct kvs_partition *p, struct kvs_bucket *b, int idx, uint16_t tag, uint64_t off)
{
    uint64_t alloc = item_at(p, off)->alloc_size;
    uint64_t start = p->tail, phys = start & p->log_mask;
    if (phys + alloc > p->log_size)
        start += p->log_size - phys;
    if (off + p->log_window < start + alloc)
        return off; /* the copy would overwrite its own source (in a log of the window's size): leave it to FIFO */
    version_begin(p, b);
    uint64_t noff = log_reserve(p, alloc);
    MEMCPY(item_at(p, noff), item_at(p, off), alloc);
    entry_store(b, (unsigned)idx, entry_make(tag, noff));
    version_end(p, b);
    p->st.lru_reappends++;
    return noff;
}

unsigned kvs_store_get_ref(struct kvs_partition *p, uint64_t keyhash, const uint8_t *key, uint32_t klen,
                           const uint8_t **val, uint32_t *vlen, int lru)
{
    struct kvs_bucket *b = kvs_bucket_of(p, keyhash);
    uint16_t tag = kvs_tag_of(keyhash);
    uint64_t off;
    p->st.gets++;
    *vlen = 0;
    *val = 0;
    int idx = find_entry(p, b, tag, keyhash, key, klen, &off, 1);
    if (idx < 0)
        return KVS_RES_NOT_FOUND;
    p->st.get_hits++;
    if (lru && p->tail - off > p->log_window / 2)
        off = lru_reappend(p, b, idx, tag, off);
    const struct kvs_item_hdr *h = item_at(p, off);
    *vlen = KVS_VALUE_LEN(h->kv_len);
    *val = (const uint8_t *)(h + 1) + KVS_PAD8(klen);
    return KVS_RES_OK;
}

unsigned kvs_store_get(struct kvs_partition *p, uint64_t keyhash, const uint8_t *key, uint32_t klen,
                       uint8_t *out, uint32_t out_cap, uint32_t *vlen, int lru)
{
    const uint8_t *v;
    unsigned r = kvs_store_get_ref(p, keyhash, key, klen, &v, vlen, lru);
    if (r != KVS_RES_OK)
        return r;
    if (*vlen > out_cap)
        return KVS_RES_NO_ROOM;
    MEMCPY(out, v, *vlen);
    return KVS_RES_OK;
}

unsigned kvs_store_put(struct kvs_partition *p, uint64_t keyhash, const uint8_t *key, uint32_t klen,
                       const uint8_t *val, uint32_t vlen, uint32_t expire)
{
    p->st.puts++;
    uint64_t alloc = kvs_item_alloc_size(klen, vlen);
    if (klen == 0)
        return KVS_RES_BAD_LENGTH;
    if (klen > KVS_MAX_KEY_LEN || vlen > KVS_MAX_VALUE_LEN || alloc > kvs_max_item(p)) {
        p->st.too_large++;
        return KVS_RES_TOO_LARGE;
    }
    struct kvs_bucket *b = kvs_bucket_of(p, keyhash);
    uint16_t tag = kvs_tag_of(keyhash);
    uint64_t off;
    version_begin(p, b);
    int idx = find_entry(p, b, tag, keyhash, key, klen, &off, 1);
    if (idx >= 0) {
        struct kvs_item_hdr *h = item_at(p, off);
        if (alloc <= h->alloc_size) {
            h->kv_len = KVS_KV_LEN(klen, vlen);
            h->expire = expire;
            MEMCPY((uint8_t *)(h + 1) + KVS_PAD8(klen), val, vlen);
            p->st.put_inplace++;
            version_end(p, b);
            return KVS_RES_OK;
        }
    }
    uint64_t noff = log_reserve(p, alloc);
    struct kvs_item_hdr *h = item_at(p, noff);
    h->alloc_size = alloc;
    h->kv_len = KVS_KV_LEN(klen, vlen);
    h->expire = expire;
    h->keyhash = keyhash;
    MEMCPY(h + 1, key, klen);
    MEMCPY((uint8_t *)(h + 1) + KVS_PAD8(klen), val, vlen);
    index_set(p, b, idx, tag, noff);
    p->st.put_append++;
    version_end(p, b);
    return KVS_RES_OK;
}

unsigned kvs_store_delete(struct kvs_partition *p, uint64_t keyhash, const uint8_t *key, uint32_t klen)
{
    struct kvs_bucket *b = kvs_bucket_of(p, keyhash);
    uint16_t tag = kvs_tag_of(keyhash);
    uint64_t off;
    p->st.deletes++;
    version_begin(p, b);
    int idx = find_entry(p, b, tag, keyhash, key, klen, &off, 1);
    if (idx >= 0)
        entry_store(b, (unsigned)idx, 0);
    version_end(p, b);
    return idx >= 0 ? KVS_RES_OK : KVS_RES_NOT_FOUND;
}

unsigned kvs_store_get_remote(const struct kvs_partition *p, uint64_t keyhash, const uint8_t *key, uint32_t klen,
                              uint8_t *out, uint32_t out_cap, uint32_t *vlen, uint64_t max_spins,
                              struct kvs_reader_stats *rs)
{
    const struct kvs_bucket *b = kvs_bucket_of(p, keyhash);
    uint16_t tag = kvs_tag_of(keyhash);
    uint64_t spins = 0;
    *vlen = 0;
    for (;;) {
        uint32_t v1 = __atomic_load_n(&b->version, __ATOMIC_ACQUIRE);
        if (v1 & 1) {
            if (++spins > max_spins)
                goto busy;
            rs->crew_retries++;
            KVS_CPU_RELAX();
            continue;
        }
        unsigned res = KVS_RES_NOT_FOUND;
        uint32_t got = 0;
        uint64_t item_off = 0;
        uint64_t tail = __atomic_load_n(&p->tail, __ATOMIC_ACQUIRE);
        for (unsigned i = 0; i < KVS_BUCKET_ENTRIES; i++) {
            uint64_t e = __atomic_load_n(&b->entry[i], __ATOMIC_RELAXED);
            if (e == 0 || (uint16_t)(e >> KVS_OFFSET_BITS) != tag)
                continue;
            uint64_t dist = entry_dist(tail, e);
            if (!dist_valid(p, dist))
                continue;
            uint64_t off = tail - dist, phys = off & p->log_mask;
            if (phys + KVS_ITEM_HDR_LEN > p->log_size)
                continue;
            /* The owner may be rewriting this item: read the header once and check it bounds itself. */
            const volatile struct kvs_item_hdr *h = (const volatile struct kvs_item_hdr *)(p->log + phys);
            uint64_t alloc = h->alloc_size, kh = h->keyhash;
            uint32_t kv = h->kv_len;
            if (kh != keyhash || KVS_KEY_LEN(kv) != klen)
                continue;
            uint32_t vl = KVS_VALUE_LEN(kv);
            if (alloc > dist || phys + alloc > p->log_size || kvs_item_alloc_size(klen, vl) > alloc)
                continue;
            const uint8_t *body = p->log + phys + KVS_ITEM_HDR_LEN;
            if (!key_equal(body, key, klen))
                continue;
            got = vl;
            item_off = off;
            if (vl <= out_cap) {
                MEMCPY(out, body + KVS_PAD8(klen), vl);
                res = KVS_RES_OK;
            } else {
                res = KVS_RES_NO_ROOM;
            }
            break;
        }
        KVS_HOOK(KVS_HOOK_READER_READ, b);
        __atomic_thread_fence(__ATOMIC_ACQUIRE); /* the copy above happens before the checks below */
        uint32_t v2 = __atomic_load_n(&b->version, __ATOMIC_RELAXED);
        if (v2 != v1) {
            if (++spins > max_spins)
                goto busy;
            rs->crew_retries++;
            continue;
        }
        if (res != KVS_RES_NOT_FOUND) {
            uint64_t t2 = __atomic_load_n(&p->tail, __ATOMIC_RELAXED);
            if (item_off + p->log_window < t2) { /* an append has run over the item while it was copied */
                rs->crew_stale++;
                return KVS_RES_NOT_FOUND;
            }
            *vlen = got;
        }
        return res;
    }
busy:
    rs->crew_busy++;
    return KVS_RES_BUSY;
}

void kvs_store_prefetch_bucket(const struct kvs_partition *p, uint64_t keyhash)
{
    const struct kvs_bucket *b = kvs_bucket_of(p, keyhash);
    KVS_PREFETCH_NT2(b);
}

void kvs_store_prefetch_item(const struct kvs_partition *p, uint64_t keyhash)
{
    const struct kvs_bucket *b = kvs_bucket_of(p, keyhash);
    uint16_t tag = kvs_tag_of(keyhash);
    for (unsigned i = 0; i < KVS_BUCKET_ENTRIES; i++) {
        uint64_t e = __atomic_load_n(&b->entry[i], __ATOMIC_RELAXED);
        if (e != 0 && (uint16_t)(e >> KVS_OFFSET_BITS) == tag) {
            uint64_t phys = e & p->log_mask;
            if (phys + 64 < p->log_size)
                KVS_PREFETCH_NT2(p->log + phys);
            else
                KVS_PREFETCH_NT(p->log + phys);
            return;
        }
    }
}

uint64_t kvs_store_item_offset(const struct kvs_partition *p, uint64_t keyhash, const uint8_t *key, uint32_t klen)
{
    uint64_t off;
    int idx = find_entry((struct kvs_partition *)p, kvs_bucket_of(p, keyhash), kvs_tag_of(keyhash), keyhash, key,
                         klen, &off, 0);
    return idx < 0 ? UINT64_MAX : off;
}
