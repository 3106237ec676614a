/* The index and the log of one partition, and the CREW version protocol. */
#include <string.h>
#include "kt.h"

/* A value that depends on (key id, version) so stale data is never mistaken for current data. */
static void fill_value(uint8_t *v, uint32_t n, uint64_t id, uint64_t ver)
{
    uint64_t s = id * 0x100000001b3ull ^ ver;
    for (uint32_t i = 0; i < n; i++)
        v[i] = (uint8_t)(kt_rand(&s) >> 56);
}

static unsigned get(struct kvs_partition *p, uint64_t kh, const void *key, uint32_t klen, uint8_t *out,
                    uint32_t *vlen, int lru)
{
    return kvs_store_get(p, kh, key, klen, out, 4096, vlen, lru);
}

KT_TEST(store_insert_lookup)
{
    struct kvs_partition *p = kt_partition(256, 1 << 20, 0);
    KT_CHECK(p != NULL);
    char key[64];
    uint8_t val[128], out[4096];
    for (unsigned i = 0; i < 500; i++) {
        int n = snprintf(key, sizeof(key), "user:%u", i);
        fill_value(val, 8 + i % 100, i, 1);
        KT_EQ(kvs_store_put(p, kvs_keyhash(key, n), (uint8_t *)key, n, val, 8 + i % 100, i), KVS_RES_OK);
    }
    for (unsigned i = 0; i < 500; i++) {
        int n = snprintf(key, sizeof(key), "user:%u", i);
        uint32_t vlen;
        fill_value(val, 8 + i % 100, i, 1);
        KT_EQ(get(p, kvs_keyhash(key, n), key, n, out, &vlen, 0), KVS_RES_OK);
        KT_EQ(vlen, 8 + i % 100);
        KT_CHECK(memcmp(out, val, vlen) == 0);
    }
    uint32_t vlen = 99;
    KT_EQ(get(p, kvs_keyhash("nope", 4), "nope", 4, out, &vlen, 0), KVS_RES_NOT_FOUND);
    KT_EQ(vlen, 0);
    KT_EQ(p->st.puts, 500);
    KT_EQ(p->st.put_append, 500);
    KT_EQ(p->st.index_evictions, 0);
}

KT_TEST(store_tag_collisions)
{
    struct kvs_partition *p = kt_partition(64, 1 << 16, 0);
    KT_CHECK(p != NULL);
    /* Same bucket (bits 16+), same tag (low 16 bits), different keyhash (high bits): the keyhash decides. */
    uint64_t kh_a = 1ull << 40 | 5ull << 16 | 7, kh_b = 2ull << 40 | 5ull << 16 | 7;
    KT_CHECK(kvs_bucket_of(p, kh_a) == kvs_bucket_of(p, kh_b) && kvs_tag_of(kh_a) == kvs_tag_of(kh_b));
    uint8_t out[64];
    uint32_t vlen;
    KT_EQ(kvs_store_put(p, kh_a, (const uint8_t *)"samekey1", 8, (const uint8_t *)"AAAAAAAA", 8, 0), KVS_RES_OK);
    KT_EQ(kvs_store_put(p, kh_b, (const uint8_t *)"samekey1", 8, (const uint8_t *)"BBBBBBBB", 8, 0), KVS_RES_OK);
    /* Same keyhash, different key bytes: the key decides. */
    KT_EQ(kvs_store_put(p, kh_a, (const uint8_t *)"otherkey", 8, (const uint8_t *)"CCCCCCCC", 8, 0), KVS_RES_OK);
    KT_EQ(get(p, kh_a, "samekey1", 8, out, &vlen, 0), KVS_RES_OK);
    KT_CHECK(memcmp(out, "AAAAAAAA", 8) == 0);
    KT_EQ(get(p, kh_b, "samekey1", 8, out, &vlen, 0), KVS_RES_OK);
    KT_CHECK(memcmp(out, "BBBBBBBB", 8) == 0);
    KT_EQ(get(p, kh_a, "otherkey", 8, out, &vlen, 0), KVS_RES_OK);
    KT_CHECK(memcmp(out, "CCCCCCCC", 8) == 0);
    /* A key that is a prefix of another (length differs) does not match. */
    KT_EQ(get(p, kh_a, "samekey", 7, out, &vlen, 0), KVS_RES_NOT_FOUND);
    /* Tag 0 is stored as 1 and found again. */
    uint64_t kh0 = 9ull << 16;
    KT_EQ(kvs_store_put(p, kh0, (const uint8_t *)"zerotag", 7, (const uint8_t *)"Z", 1, 0), KVS_RES_OK);
    KT_EQ(kvs_bucket_of(p, kh0)->entry[0] >> 48, 1);
    KT_EQ(get(p, kh0, "zerotag", 7, out, &vlen, 0), KVS_RES_OK);
    KT_EQ(out[0], 'Z');
    /* Updating one of the colliding keys leaves the others alone. */
    KT_EQ(kvs_store_put(p, kh_b, (const uint8_t *)"samekey1", 8, (const uint8_t *)"DDDDDDDD", 8, 0), KVS_RES_OK);
    KT_EQ(get(p, kh_a, "samekey1", 8, out, &vlen, 0), KVS_RES_OK);
    KT_CHECK(memcmp(out, "AAAAAAAA", 8) == 0);
    KT_EQ(get(p, kh_b, "samekey1", 8, out, &vlen, 0), KVS_RES_OK);
    KT_CHECK(memcmp(out, "DDDDDDDD", 8) == 0);
}

/* 16 keys into one bucket: the 16th insert evicts the entry furthest behind the tail. */
KT_TEST(store_full_bucket_eviction)
{
    struct kvs_partition *p = kt_partition(64, 1 << 16, 0);
    KT_CHECK(p != NULL);
    uint8_t out[64], v[8];
    uint32_t vlen;
    char key[16];
    uint64_t kh[20];
    for (unsigned i = 0; i < 20; i++)
        kh[i] = 3ull << 16 | (100 + i); /* bucket 3, tags 100.. */
    for (unsigned i = 0; i < 15; i++) {
        snprintf(key, sizeof(key), "k%02u", i);
        fill_value(v, 8, i, 0);
        KT_EQ(kvs_store_put(p, kh[i], (uint8_t *)key, 3, v, 8, 0), KVS_RES_OK);
    }
    KT_EQ(p->st.index_evictions, 0);
    snprintf(key, sizeof(key), "k%02u", 15);
    KT_EQ(kvs_store_put(p, kh[15], (uint8_t *)key, 3, v, 8, 0), KVS_RES_OK);
    KT_EQ(p->st.index_evictions, 1);
    KT_EQ(get(p, kh[0], "k00", 3, out, &vlen, 0), KVS_RES_NOT_FOUND);
    for (unsigned i = 1; i < 16; i++) {
        snprintf(key, sizeof(key), "k%02u", i);
        KT_EQ(get(p, kh[i], key, 3, out, &vlen, 0), KVS_RES_OK);
    }
    /* k01 is now the oldest; move it to the tail by growing its value (append, not in place). Then the oldest is
     * k02, and that is what the next insert evicts - not k01, not a fixed slot. */
    uint8_t big[32] = {1};
    KT_EQ(kvs_store_put(p, kh[1], (const uint8_t *)"k01", 3, big, 32, 0), KVS_RES_OK);
    KT_EQ(p->st.put_append, 17);
    KT_EQ(kvs_store_put(p, kh[16], (const uint8_t *)"k16", 3, v, 8, 0), KVS_RES_OK);
    KT_EQ(p->st.index_evictions, 2);
    KT_EQ(get(p, kh[2], "k02", 3, out, &vlen, 0), KVS_RES_NOT_FOUND);
    KT_EQ(get(p, kh[1], "k01", 3, out, &vlen, 0), KVS_RES_OK);
    KT_EQ(vlen, 32);
    KT_EQ(get(p, kh[16], "k16", 3, out, &vlen, 0), KVS_RES_OK);
    /* Other buckets are untouched by this. */
    KT_EQ(kvs_bucket_of(p, 4ull << 16)->entry[0], 0);
}

KT_TEST(store_log_append_layout)
{
    struct kvs_partition *p = kt_partition(64, 1 << 16, 0);
    KT_CHECK(p != NULL);
    KT_EQ(kvs_item_alloc_size(8, 8), 40); /* the tiny item */
    KT_EQ(kvs_item_alloc_size(9, 1), 48);
    KT_EQ(kvs_item_alloc_size(250, 1152), 24 + 256 + 1152);
    uint64_t kh = kvs_keyhash("tinykey1", 8);
    KT_EQ(kvs_store_put(p, kh, (const uint8_t *)"tinykey1", 8, (const uint8_t *)"tinyval1", 8, 77), KVS_RES_OK);
    KT_EQ(p->tail, 40);
    KT_EQ(kvs_store_item_offset(p, kh, (const uint8_t *)"tinykey1", 8), 0);
    const struct kvs_item_hdr *h = (const struct kvs_item_hdr *)p->log;
    KT_EQ(h->alloc_size, 40);
    KT_EQ(h->kv_len, 8u << 24 | 8);
    KT_EQ(h->expire, 77);
    KT_EQ(h->keyhash, kh);
    KT_CHECK(memcmp(p->log + 24, "tinykey1", 8) == 0 && memcmp(p->log + 32, "tinyval1", 8) == 0);
    uint64_t kh2 = kvs_keyhash("k2", 2);
    KT_EQ(kvs_store_put(p, kh2, (const uint8_t *)"k2", 2, (const uint8_t *)"v", 1, 0), KVS_RES_OK);
    KT_EQ(kvs_store_item_offset(p, kh2, (const uint8_t *)"k2", 2), 40);
    KT_EQ(p->tail, 40 + 40);
    KT_EQ(p->head, 0);
}

/* A 4 KiB log with 936-byte items: the fifth item would straddle the end, so the tail skips to 4096 and the item
 * lands at the start, overwriting the first; the others stay valid. */
KT_TEST(store_log_wraparound)
{
    struct kvs_partition *p = kt_partition(64, 4096, 0);
    KT_CHECK(p != NULL);
    uint8_t v[900], out[1024];
    uint32_t vlen;
    char key[8];
    uint64_t kh[8];
    for (unsigned i = 0; i < 5; i++) {
        snprintf(key, sizeof(key), "w%u", i);
        kh[i] = kvs_keyhash(key, 2);
        fill_value(v, 900, i, 0);
        KT_EQ(kvs_store_put(p, kh[i], (uint8_t *)key, 2, v, 900, 0), KVS_RES_OK);
    }
    KT_EQ(p->st.wrap_skips, 1);
    KT_EQ(kvs_store_item_offset(p, kh[4], (const uint8_t *)"w4", 2), 4096);
    KT_EQ(p->tail, 4096 + 936);
    KT_EQ(p->head, 936);
    KT_EQ(get(p, kh[0], "w0", 2, out, &vlen, 0), KVS_RES_NOT_FOUND);
    KT_EQ(p->st.stale_cleaned, 1);
    for (unsigned i = 1; i < 5; i++) {
        snprintf(key, sizeof(key), "w%u", i);
        fill_value(v, 900, i, 0);
        KT_EQ(get(p, kh[i], key, 2, out, &vlen, 0), KVS_RES_OK);
        KT_CHECK(memcmp(out, v, 900) == 0);
    }
    /* Keep going around the log many times: every item read back is intact and the newest always hits. */
    for (unsigned i = 5; i < 200; i++) {
        snprintf(key, sizeof(key), "w%u", i % 8);
        uint64_t h = kvs_keyhash(key, 2);
        uint32_t n = 100 + (i * 37) % 800;
        fill_value(v, n, i % 8, i);
        KT_EQ(kvs_store_put(p, h, (uint8_t *)key, 2, v, n, 0), KVS_RES_OK);
        KT_EQ(get(p, h, key, 2, out, &vlen, 0), KVS_RES_OK);
        KT_EQ(vlen, n);
        KT_CHECK(memcmp(out, v, n) == 0);
        uint64_t o = kvs_store_item_offset(p, h, (uint8_t *)key, 2);
        KT_CHECK(o % 4096 + ((const struct kvs_item_hdr *)(p->log + o % 4096))->alloc_size <= 4096);
    }
}

/* Put tiny items 0..n-1 (8-byte keys and values) into p, whose log is L bytes, checking each lands where it must
 * (off[i]): contiguous, the tail skipping the end of the log; *tail is where the next would go. */
static void put_tiny_items(struct kvs_partition *p, uint64_t L, uint64_t *off, uint64_t n, uint64_t *tail)
{
    uint8_t v[8];
    uint64_t t = 0;
    *tail = 0;
    for (uint64_t i = 0; i < n; i++) {
        if (t % L + 40 > L)
            t += L - t % L;
        off[i] = t;
        t += 40;
        fill_value(v, 8, i, 0);
        KT_EQ(kvs_store_put(p, kvs_keyhash(&i, 8), (uint8_t *)&i, 8, v, 8, 0), KVS_RES_OK);
        KT_EQ(kvs_store_item_offset(p, kvs_keyhash(&i, 8), (uint8_t *)&i, 8), off[i]);
    }
    *tail = t;
}

/* FIFO: with many more tiny items than fit, exactly those within log_size bytes of the tail survive. */
KT_TEST(store_fifo_eviction)
{
    const uint64_t L = 1 << 16;
    struct kvs_partition *p = kt_partition(4096, L, 0);
    KT_CHECK(p != NULL);
    uint8_t v[8], out[64];
    uint32_t vlen;
    uint64_t off[5000], t;
    put_tiny_items(p, L, off, 5000, &t);
    KT_EQ(p->tail, t);
    KT_EQ(p->head, t - L);
    KT_EQ(p->st.wrap_skips, 5000 * 40 / L);
    KT_EQ(p->st.index_evictions, 0);
    unsigned hits = 0;
    for (uint64_t i = 0; i < 5000; i++) {
        unsigned r = get(p, kvs_keyhash(&i, 8), &i, 8, out, &vlen, 0);
        int expect_hit = off[i] >= p->tail - L;
        KT_EQ(r, expect_hit ? KVS_RES_OK : KVS_RES_NOT_FOUND);
        if (expect_hit) {
            fill_value(v, 8, i, 0);
            KT_CHECK(memcmp(out, v, 8) == 0);
            hits++;
        }
    }
    /* Everything from the oldest surviving item on is there: L / 40 items less what the last skip wasted. */
    KT_CHECK(hits >= L / 40 - 1 && hits <= L / 40);
}

/* Stale entries are detected from the offset alone, cleared when met, and their slots reused without counting an
 * eviction; offsets keep working across the 48-bit wrap of the entry field. */
KT_TEST(store_stale_offsets)
{
    struct kvs_partition *p = kt_partition(64, 4096, 0);
    KT_CHECK(p != NULL);
    /* Start just below 2^48 so items straddle the wrap of the 48-bit offset field. */
    p->tail = p->head = (1ull << 48) - 2048;
    uint8_t v[8] = "12345678", out[64];
    uint32_t vlen;
    uint64_t kh_old = 7ull << 16 | 1;
    KT_EQ(kvs_store_put(p, kh_old, (const uint8_t *)"old", 3, v, 8, 0), KVS_RES_OK);
    for (unsigned i = 0; i < 100; i++) { /* 100 tiny items in bucket 8: 4000 bytes, crossing 2^48 */
        uint64_t kh = 8ull << 16 | (i + 1);
        KT_EQ(kvs_store_put(p, kh, (uint8_t *)&i, 4, v, 8, 0), KVS_RES_OK);
        KT_EQ(get(p, kh, &i, 4, out, &vlen, 0), KVS_RES_OK);
        if (i >= 15) /* bucket 8 holds 15: the oldest was evicted, not a stale one */
            KT_EQ(p->st.index_evictions, i - 14);
    }
    KT_CHECK(p->tail > (1ull << 48));
    /* "old" stays valid exactly while it is no more than log_size behind the tail. */
    uint64_t off_old = (1ull << 48) - 2048;
    for (unsigned i = 0; p->tail - off_old <= 4096; i++) {
        KT_EQ(kvs_store_item_offset(p, kh_old, (const uint8_t *)"old", 3), off_old);
        KT_EQ(kvs_store_put(p, 9ull << 16 | (i % 15 + 1), (uint8_t *)&i, 4, v, 8, 0), KVS_RES_OK);
    }
    KT_EQ(kvs_store_item_offset(p, kh_old, (const uint8_t *)"old", 3), UINT64_MAX);
    uint64_t stale_before = p->st.stale_cleaned;
    KT_CHECK(kvs_bucket_of(p, kh_old)->entry[0] != 0);
    KT_EQ(get(p, kh_old, "old", 3, out, &vlen, 0), KVS_RES_NOT_FOUND);
    KT_EQ(p->st.stale_cleaned, stale_before + 1);
    KT_EQ(kvs_bucket_of(p, kh_old)->entry[0], 0);
    /* A bucket whose entries all went stale takes 15 new keys without evicting anything. */
    uint64_t ev = p->st.index_evictions;
    for (unsigned i = 0; i < 100; i++) /* overwrite the whole log with bucket-10 items */
        KT_EQ(kvs_store_put(p, 10ull << 16 | (i % 15 + 1), (uint8_t *)&i, 4, v, 8, 0), KVS_RES_OK);
    ev = p->st.index_evictions;
    for (unsigned i = 0; i < 15; i++)
        KT_EQ(kvs_store_put(p, 8ull << 16 | (500 + i), (uint8_t *)&i, 4, v, 8, 0), KVS_RES_OK);
    KT_EQ(p->st.index_evictions, ev);
}

KT_TEST(store_inplace_update)
{
    struct kvs_partition *p = kt_partition(64, 1 << 16, 0);
    KT_CHECK(p != NULL);
    uint64_t kh = kvs_keyhash("counter", 7);
    uint8_t out[64];
    uint32_t vlen;
    KT_EQ(kvs_store_put(p, kh, (const uint8_t *)"counter", 7, (const uint8_t *)"value-01", 8, 1), KVS_RES_OK);
    uint64_t t = p->tail;
    KT_EQ(kvs_store_put(p, kh, (const uint8_t *)"counter", 7, (const uint8_t *)"value-02", 8, 2), KVS_RES_OK);
    KT_EQ(p->tail, t); /* same size: in place */
    KT_EQ(p->st.put_inplace, 1);
    KT_EQ(get(p, kh, "counter", 7, out, &vlen, 0), KVS_RES_OK);
    KT_CHECK(vlen == 8 && memcmp(out, "value-02", 8) == 0);
    KT_EQ(((const struct kvs_item_hdr *)p->log)->expire, 2);
    KT_EQ(kvs_store_put(p, kh, (const uint8_t *)"counter", 7, (const uint8_t *)"v3", 2, 3), KVS_RES_OK);
    KT_EQ(p->tail, t); /* smaller: in place, the length shrinks */
    KT_EQ(get(p, kh, "counter", 7, out, &vlen, 0), KVS_RES_OK);
    KT_CHECK(vlen == 2 && memcmp(out, "v3", 2) == 0);
    KT_EQ(kvs_store_put(p, kh, (const uint8_t *)"counter", 7, (const uint8_t *)"value-04", 8, 4), KVS_RES_OK);
    KT_EQ(p->tail, t); /* back up to the allocated size: still fits */
    KT_EQ(kvs_store_put(p, kh, (const uint8_t *)"counter", 7, (const uint8_t *)"value-05-longer", 15, 5),
          KVS_RES_OK);
    KT_EQ(p->tail, t + kvs_item_alloc_size(7, 15)); /* bigger: appended */
    KT_EQ(kvs_store_item_offset(p, kh, (const uint8_t *)"counter", 7), t);
    KT_EQ(get(p, kh, "counter", 7, out, &vlen, 0), KVS_RES_OK);
    KT_CHECK(vlen == 15 && memcmp(out, "value-05-longer", 15) == 0);
    KT_EQ(p->st.put_inplace, 3);
    KT_EQ(p->st.put_append, 2);
    /* Only one entry points at the key. */
    const struct kvs_bucket *b = kvs_bucket_of(p, kh);
    unsigned n = 0;
    for (unsigned i = 0; i < KVS_BUCKET_ENTRIES; i++)
        n += b->entry[i] != 0;
    KT_EQ(n, 1);
}

/* Approximate LRU: a read of an item in the older half of the log re-appends it (owner only); a read in the newer
 * half does not; a re-appended item outlives its unread neighbour. */
KT_TEST(store_lru_reappend)
{
    struct kvs_partition *p = kt_partition(1024, 4096, 1);
    KT_CHECK(p != NULL);
    uint8_t out[64], v[8] = "vvvvvvvv";
    uint32_t vlen;
    uint64_t kha = kvs_keyhash("A", 1), khb = kvs_keyhash("B", 1);
    KT_EQ(kvs_store_put(p, kha, (const uint8_t *)"A", 1, v, 8, 0), KVS_RES_OK);
    KT_EQ(kvs_store_put(p, khb, (const uint8_t *)"B", 1, v, 8, 0), KVS_RES_OK);
    uint64_t i = 0;
    while (p->tail <= 2048) { /* fill until A (offset 0) is in the older half */
        KT_EQ(get(p, kha, "A", 1, out, &vlen, 1), KVS_RES_OK); /* newer half: stays */
        KT_EQ(kvs_store_item_offset(p, kha, (const uint8_t *)"A", 1), 0);
        i++;
        KT_EQ(kvs_store_put(p, kvs_keyhash(&i, 8), (uint8_t *)&i, 8, v, 8, 0), KVS_RES_OK);
    }
    KT_EQ(p->st.lru_reappends, 0);
    /* A reader on another core does not move it. */
    struct kvs_reader_stats rs = {0};
    KT_EQ(kvs_store_get_remote(p, kha, (const uint8_t *)"A", 1, out, 64, &vlen, 10, &rs), KVS_RES_OK);
    KT_EQ(kvs_store_item_offset(p, kha, (const uint8_t *)"A", 1), 0);
    /* Without LRU the owner does not move it either. */
    KT_EQ(get(p, kha, "A", 1, out, &vlen, 0), KVS_RES_OK);
    KT_EQ(kvs_store_item_offset(p, kha, (const uint8_t *)"A", 1), 0);
    uint64_t t = p->tail;
    uint32_t ver = kvs_bucket_of(p, kha)->version;
    KT_EQ(get(p, kha, "A", 1, out, &vlen, 1), KVS_RES_OK);
    KT_CHECK(vlen == 8 && memcmp(out, v, 8) == 0);
    KT_EQ(p->st.lru_reappends, 1);
    KT_EQ(kvs_store_item_offset(p, kha, (const uint8_t *)"A", 1), t);
    KT_EQ(p->tail, t + 40);
    KT_EQ(kvs_bucket_of(p, kha)->version, ver + 2); /* CREW: the move is a write */
    /* Push on until B (offset 40) falls off: A, re-appended, is still there. */
    while (p->tail < 4096 + 80) {
        i++;
        KT_EQ(kvs_store_put(p, kvs_keyhash(&i, 8), (uint8_t *)&i, 8, v, 8, 0), KVS_RES_OK);
    }
    KT_EQ(get(p, khb, "B", 1, out, &vlen, 1), KVS_RES_NOT_FOUND);
    KT_EQ(get(p, kha, "A", 1, out, &vlen, 1), KVS_RES_OK);
}

KT_TEST(store_delete_and_too_large)
{
    struct kvs_partition *p = kt_partition(64, 4096, 0);
    KT_CHECK(p != NULL);
    uint8_t out[2048], big[2048] = {0};
    uint32_t vlen;
    uint64_t kh = kvs_keyhash("gone", 4);
    KT_EQ(kvs_store_put(p, kh, (const uint8_t *)"gone", 4, (const uint8_t *)"x", 1, 0), KVS_RES_OK);
    KT_EQ(kvs_store_delete(p, kh, (const uint8_t *)"gone", 4), KVS_RES_OK);
    KT_EQ(get(p, kh, "gone", 4, out, &vlen, 0), KVS_RES_NOT_FOUND);
    KT_EQ(kvs_store_delete(p, kh, (const uint8_t *)"gone", 4), KVS_RES_NOT_FOUND);
    uint64_t t = p->tail;
    /* log 4096: the largest item is 1024 bytes (24 + 8 + 992). */
    KT_EQ(kvs_store_put(p, kh, (const uint8_t *)"gone", 4, big, 992, 0), KVS_RES_OK);
    KT_EQ(kvs_store_put(p, kh, (const uint8_t *)"gone", 4, big, 993, 0), KVS_RES_TOO_LARGE);
    KT_EQ(p->tail, t + 1024);
    KT_EQ(get(p, kh, "gone", 4, out, &vlen, 0), KVS_RES_OK);
    KT_EQ(vlen, 992);
    /* A value bigger than the caller's room: NO_ROOM with the length, nothing copied. */
    out[0] = 0x5a;
    KT_EQ(kvs_store_get(p, kh, (const uint8_t *)"gone", 4, out, 100, &vlen, 0), KVS_RES_NO_ROOM);
    KT_EQ(vlen, 992);
    KT_EQ(out[0], 0x5a);
}

/* ---------------------------------------------------------------------------------------------------------- */
/* CREW version protocol, interleavings made deterministic with the test hooks.                                 */
/* ---------------------------------------------------------------------------------------------------------- */

static struct {
    struct kvs_partition *p;
    uint64_t kh;
    int calls;
    uint32_t seen_version;
    unsigned inner_result;
    struct kvs_reader_stats inner_rs;
    int mode;
    uint8_t inner_out[64];
} hk;

static void writer_odd_hook(int point, const struct kvs_bucket *b)
{
    if (point != KVS_HOOK_WRITER_ODD || hk.calls++)
        return;
    hk.seen_version = b->version;
    uint32_t vlen;
    /* A reader arriving mid-write must not get through (bounded so the test cannot hang). */
    hk.inner_result = kvs_store_get_remote(hk.p, hk.kh, (const uint8_t *)"key", 3, hk.inner_out, 64, &vlen, 50,
                                           &hk.inner_rs);
}

KT_TEST(crew_writer_makes_version_odd)
{
    struct kvs_partition *p = kt_partition(64, 1 << 16, 1);
    KT_CHECK(p != NULL);
    memset(&hk, 0, sizeof(hk));
    hk.p = p;
    hk.kh = kvs_keyhash("key", 3);
    const struct kvs_bucket *b = kvs_bucket_of(p, hk.kh);
    KT_EQ(kvs_store_put(p, hk.kh, (const uint8_t *)"key", 3, (const uint8_t *)"one", 3, 0), KVS_RES_OK);
    KT_EQ(b->version, 2);
    kvs_test_hook = writer_odd_hook;
    KT_EQ(kvs_store_put(p, hk.kh, (const uint8_t *)"key", 3, (const uint8_t *)"two", 3, 0), KVS_RES_OK);
    kvs_test_hook = 0;
    KT_EQ(hk.calls, 1);
    KT_EQ(hk.seen_version, 3);           /* odd while writing */
    KT_EQ(hk.inner_result, KVS_RES_BUSY); /* the reader waited and gave up rather than read */
    KT_EQ(hk.inner_rs.crew_busy, 1);
    KT_EQ(b->version, 4);                 /* even after */
    uint8_t out[8];
    uint32_t vlen;
    struct kvs_reader_stats rs = {0};
    KT_EQ(kvs_store_get_remote(p, hk.kh, (const uint8_t *)"key", 3, out, 8, &vlen, 50, &rs), KVS_RES_OK);
    KT_CHECK(vlen == 3 && memcmp(out, "two", 3) == 0);
    KT_EQ(rs.crew_retries, 0);
    /* EREW partitions keep no versions. */
    struct kvs_partition *e = kt_partition(64, 1 << 16, 0);
    KT_CHECK(e != NULL);
    KT_EQ(kvs_store_put(e, hk.kh, (const uint8_t *)"key", 3, (const uint8_t *)"one", 3, 0), KVS_RES_OK);
    KT_EQ(kvs_bucket_of(e, hk.kh)->version, 0);
}

/* mode 1: the writer updates the key being read; mode 2: it writes another bucket; mode 3: it runs the log over
 * the item being read without touching its bucket. */
static void reader_hook(int point, const struct kvs_bucket *b)
{
    (void)b;
    if (point != KVS_HOOK_READER_READ || hk.calls++)
        return;
    uint8_t v[900] = {0};
    if (hk.mode == 1) {
        kvs_store_put(hk.p, hk.kh, (const uint8_t *)"key", 3, (const uint8_t *)"NEWVALUE", 8, 0);
    } else if (hk.mode == 2) {
        kvs_store_put(hk.p, hk.kh ^ (1ull << 16), (const uint8_t *)"zzz", 3, (const uint8_t *)"12345678", 8, 0);
    } else {
        for (uint64_t i = 0; i < 8; i++) /* 8 x 936 bytes > 4 KiB log, all in bucket 1 */
            kvs_store_put(hk.p, 1ull << 16 | (i + 1), (const uint8_t *)&i, 8, v, 900, 0);
    }
}

static unsigned crew_read_with(int mode, uint64_t log_size, uint8_t *out, uint32_t *vlen, struct kvs_reader_stats *rs,
                               struct kvs_partition **pp)
{
    struct kvs_partition *p = kt_partition(64, log_size, 1);
    if (!p)
        return 0;
    memset(&hk, 0, sizeof(hk));
    hk.p = p;
    hk.kh = 5ull << 16 | 0x77;
    hk.mode = mode;
    kvs_store_put(p, hk.kh, (const uint8_t *)"key", 3, (const uint8_t *)"OLDVALUE", 8, 0);
    kvs_test_hook = reader_hook;
    unsigned r = kvs_store_get_remote(p, hk.kh, (const uint8_t *)"key", 3, out, 64, vlen, 100, rs);
    kvs_test_hook = 0;
    *pp = p;
    return r;
}

KT_TEST(crew_reader_retries_on_concurrent_write)
{
    uint8_t out[64];
    uint32_t vlen;
    struct kvs_reader_stats rs = {0};
    struct kvs_partition *p;
    KT_EQ(crew_read_with(1, 1 << 16, out, &vlen, &rs, &p), KVS_RES_OK);
    KT_EQ(hk.calls, 2);         /* read, write happened, read again */
    KT_EQ(rs.crew_retries, 1);
    KT_CHECK(vlen == 8 && memcmp(out, "NEWVALUE", 8) == 0);
}

KT_TEST(crew_reader_no_retry_for_other_bucket)
{
    uint8_t out[64];
    uint32_t vlen;
    struct kvs_reader_stats rs = {0};
    struct kvs_partition *p;
    KT_EQ(crew_read_with(2, 1 << 16, out, &vlen, &rs, &p), KVS_RES_OK);
    KT_EQ(hk.calls, 1);
    KT_EQ(rs.crew_retries, 0);
    KT_CHECK(vlen == 8 && memcmp(out, "OLDVALUE", 8) == 0);
}

KT_TEST(crew_reader_detects_item_overwritten_by_log)
{
    uint8_t out[64];
    uint32_t vlen;
    struct kvs_reader_stats rs = {0};
    struct kvs_partition *p;
    KT_EQ(crew_read_with(3, 4096, out, &vlen, &rs, &p), KVS_RES_NOT_FOUND);
    KT_EQ(rs.crew_retries, 0);  /* the bucket never changed ... */
    KT_EQ(rs.crew_stale, 1);    /* ... but the tail ran over the copy */
    KT_EQ(vlen, 0);
}

/* A window smaller than the log: FIFO keeps exactly the items within the window's bytes of the tail (the log's
 * end is still skipped where the power-of-two log ends), and a read re-appends an item more than half the window
 * behind the tail, not half the log. */
KT_TEST(store_log_window)
{
    const uint64_t L = 1 << 16, W = 40000;
    struct kvs_partition *p = kt_partition(4096, L, 0);
    KT_CHECK(p != NULL);
    KT_EQ(p->log_window, L);
    KT_EQ(kvs_partition_set_window(p, L / 2), -1);
    KT_EQ(kvs_partition_set_window(p, L + 8), -1);
    KT_EQ(kvs_partition_set_window(p, W + 4), -1);
    KT_EQ(p->log_window, L);
    KT_EQ(kvs_partition_set_window(p, W), 0);
    uint8_t out[64];
    uint32_t vlen;
    uint64_t off[5000], t;
    put_tiny_items(p, L, off, 5000, &t);
    KT_EQ(p->tail, t);
    KT_EQ(p->head, t - W);
    unsigned hits = 0;
    for (uint64_t i = 0; i < 5000; i++) {
        unsigned r = get(p, kvs_keyhash(&i, 8), &i, 8, out, &vlen, 0);
        KT_EQ(r, off[i] >= p->tail - W ? KVS_RES_OK : KVS_RES_NOT_FOUND);
        hits += r == KVS_RES_OK;
    }
    KT_CHECK(hits >= W / 40 - 1 && hits <= W / 40); /* W / 40 items, less one if a skip of the log's end is in it */
    KT_EQ(p->st.lru_reappends, 0);
    /* LRU: the newest item more than W / 2 behind the tail moves; the oldest within W / 2 does not. */
    uint64_t first_young = 4999;
    while (p->tail - off[first_young - 1] <= W / 2)
        first_young--;
    uint64_t last_old = first_young - 1;
    KT_CHECK(p->tail - off[last_old] > W / 2 && p->tail - off[last_old] < L / 2);
    KT_EQ(get(p, kvs_keyhash(&first_young, 8), &first_young, 8, out, &vlen, 1), KVS_RES_OK);
    KT_EQ(p->st.lru_reappends, 0);
    uint64_t tail = p->tail;
    KT_EQ(get(p, kvs_keyhash(&last_old, 8), &last_old, 8, out, &vlen, 1), KVS_RES_OK);
    KT_EQ(p->st.lru_reappends, 1);
    KT_EQ(kvs_store_item_offset(p, kvs_keyhash(&last_old, 8), (uint8_t *)&last_old, 8), tail);
}
