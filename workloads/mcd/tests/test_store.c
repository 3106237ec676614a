/* The store: hash, set/get/replace/delete, chains, size classes, per-class LRU eviction, limits. */
#include <stdlib.h>
#include <string.h>
#include "mt.h"

static struct mcd_store *store_new(size_t mem, unsigned buckets_log2, void **m)
{
    struct mcd_store *s = calloc(1, sizeof(*s));
    *m = aligned_alloc(64, mem);
    memset(*m, 0, mem);
    if (mcd_store_init(s, *m, mem, buckets_log2) != 0)
        abort();
    return s;
}

static int set(struct mcd_store *s, const char *k, const char *v)
{
    uint64_t cas;
    return mcd_store_set(s, (const uint8_t *)k, (uint16_t)strlen(k), mcd_hash((const uint8_t *)k, strlen(k)), 0, 0,
                         (const uint8_t *)v, (uint32_t)strlen(v), &cas);
}

static struct mcd_item *get(struct mcd_store *s, const char *k)
{
    return mcd_store_get(s, (const uint8_t *)k, (uint16_t)strlen(k), mcd_hash((const uint8_t *)k, strlen(k)));
}

MT_TEST(hash_is_jenkins_one_at_a_time)
{
    MT_EQ(mcd_hash((const uint8_t *)"", 0), 0);
    /* 'a' -> 0xca2e9442, from the definition by an independent implementation (Python). */
    MT_EQ(mcd_hash((const uint8_t *)"a", 1), 0xca2e9442u);
    MT_CHECK(mcd_hash((const uint8_t *)"ab", 2) != mcd_hash((const uint8_t *)"ba", 2));
}

MT_TEST(set_get_replace_delete)
{
    void *m;
    struct mcd_store *s = store_new(1 << 16, 4, &m);
    MT_CHECK(get(s, "k") == NULL);
    MT_EQ(set(s, "k", "one"), MCD_ST_OK);
    struct mcd_item *it = get(s, "k");
    MT_CHECK(it && it->vlen == 3 && memcmp(mcd_item_value(it), "one", 3) == 0);
    uint64_t cas1 = it->cas;
    MT_EQ(set(s, "k", "two!"), MCD_ST_OK);
    it = get(s, "k");
    MT_CHECK(it && it->vlen == 4 && memcmp(mcd_item_value(it), "two!", 4) == 0 && it->cas > cas1);
    MT_EQ(s->st.items, 1);
    MT_EQ(mcd_store_delete(s, (const uint8_t *)"k", 1, mcd_hash((const uint8_t *)"k", 1)), MCD_ST_OK);
    MT_EQ(mcd_store_delete(s, (const uint8_t *)"k", 1, mcd_hash((const uint8_t *)"k", 1)), MCD_ST_KEY_ENOENT);
    MT_CHECK(get(s, "k") == NULL);
    MT_EQ(s->st.items, 0);
    MT_EQ(s->st.hits, 2);
    free(m);
    free(s);
}

MT_TEST(chains_hold_many_keys_in_few_buckets)
{
    void *m;
    struct mcd_store *s = store_new(1 << 20, 1, &m); /* 2 buckets */
    char k[16], v[16];
    for (int i = 0; i < 500; i++) {
        snprintf(k, sizeof(k), "key%d", i);
        snprintf(v, sizeof(v), "v%d", i * 7);
        MT_EQ(set(s, k, v), MCD_ST_OK);
    }
    for (int i = 0; i < 500; i += 3) {
        snprintf(k, sizeof(k), "key%d", i);
        MT_EQ(mcd_store_delete(s, (const uint8_t *)k, (uint16_t)strlen(k), mcd_hash((uint8_t *)k, strlen(k))), 0);
    }
    for (int i = 0; i < 500; i++) {
        snprintf(k, sizeof(k), "key%d", i);
        snprintf(v, sizeof(v), "v%d", i * 7);
        struct mcd_item *it = get(s, k);
        if (i % 3 == 0) {
            MT_CHECK(it == NULL);
        } else {
            MT_CHECK(it && it->vlen == strlen(v) && memcmp(mcd_item_value(it), v, it->vlen) == 0);
        }
    }
    MT_EQ(s->st.evictions, 0);
    free(m);
    free(s);
}

MT_TEST(a_full_class_evicts_its_least_recently_used)
{
    void *m;
    /* 2 bucket heads (one 64-byte line) + an arena of exactly one 4 KiB chunk: 64 chunks of 64 bytes. */
    size_t mem = 64 + ((size_t)MCD_MIN_CHUNK << (MCD_CLASSES - 1));
    struct mcd_store *s = store_new(mem, 1, &m);
    char k[16];
    for (int i = 0; i < 64; i++) {
        snprintf(k, sizeof(k), "k%02d", i);
        MT_EQ(set(s, k, "v"), MCD_ST_OK);
    }
    MT_EQ(s->st.evictions, 0);
    MT_CHECK(get(s, "k00") != NULL); /* k00 becomes most recent: k01 is now the LRU */
    MT_EQ(set(s, "new", "v"), MCD_ST_OK);
    MT_EQ(s->st.evictions, 1);
    MT_CHECK(get(s, "k01") == NULL);
    MT_CHECK(get(s, "k00") != NULL && get(s, "k02") != NULL && get(s, "new") != NULL);
    /* Another class has no chunks and nothing of its own to evict: out of memory, not an eviction of others. */
    char big[200];
    memset(big, 'x', sizeof(big) - 1);
    big[sizeof(big) - 1] = 0;
    MT_EQ(set(s, "big", big), MCD_ST_ENOMEM);
    MT_EQ(s->st.oom, 1);
    MT_EQ(s->st.items, 64);
    free(m);
    free(s);
}

MT_TEST(too_big_and_too_small)
{
    void *m;
    struct mcd_store *s = store_new(1 << 16, 4, &m);
    uint8_t *v = calloc(1, 8192);
    uint64_t cas;
    MT_EQ(mcd_store_set(s, (const uint8_t *)"k", 1, 1, 0, 0, v, mcd_store_max_kv() - 1, &cas), MCD_ST_OK);
    MT_EQ(mcd_store_set(s, (const uint8_t *)"k", 1, 1, 0, 0, v, mcd_store_max_kv(), &cas), MCD_ST_E2BIG);
    MT_CHECK(mcd_store_get(s, (const uint8_t *)"k", 1, 1) != NULL); /* a refused SET leaves the old value */
    struct mcd_store s2;
    MT_EQ(mcd_store_init(&s2, m, 1000, 4), -1);
    free(v);
    free(m);
    free(s);
}

MT_TEST(sixteen_classes_hold_a_1_mib_value_in_a_2_mib_chunk_byte_for_byte)
{
    size_t chunk = (size_t)MCD_MIN_CHUNK << (MCD_MAX_CLASSES - 1), mem = 64 + chunk;
    uint8_t *m = aligned_alloc(64, mem);
    memset(m, 0, mem);
    struct mcd_store s;
    MT_EQ(mcd_store_init_classes(&s, m, mem - 1, 1, MCD_MAX_CLASSES), -1); /* no room for one 2 MiB chunk */
    MT_EQ(mcd_store_init_classes(&s, m, mem, 1, MCD_MAX_CLASSES + 1), -1);
    MT_EQ(mcd_store_init_classes(&s, m, mem, 1, MCD_MAX_CLASSES), 0);
    uint32_t vlen = 1u << 20;
    uint8_t *v = malloc(vlen);
    for (uint32_t i = 0; i < vlen; i++)
        v[i] = (uint8_t)(i * 131u + (i >> 12));
    uint64_t cas;
    MT_EQ(mcd_store_set(&s, (const uint8_t *)"big", 3, 7, 0, 0, v, vlen, &cas), MCD_ST_OK);
    struct mcd_item *it = mcd_store_get(&s, (const uint8_t *)"big", 3, 7);
    MT_CHECK(it != NULL && it->vlen == vlen && it->cls == MCD_MAX_CLASSES - 1);
    MT_CHECK(memcmp(mcd_item_value(it), v, vlen) == 0);
    /* Beyond the largest chunk: refused, the stored value kept. */
    uint8_t *w = calloc(1, chunk);
    MT_EQ(mcd_store_set(&s, (const uint8_t *)"big", 3, 7, 0, 0, w, (uint32_t)(chunk - sizeof(struct mcd_item) - 2),
                        &cas), MCD_ST_E2BIG);
    MT_CHECK(mcd_store_get(&s, (const uint8_t *)"big", 3, 7) != NULL);
    free(w);
    free(v);
    free(m);
}
