/* mcd_store.c - chained hash table, size-class chunks, per-class LRU eviction. */
#include "mcd_store.h"
#include "mcd_proto.h"

uint32_t mcd_hash(const uint8_t *key, uint32_t len)
{
    uint32_t h = 0;
    for (uint32_t i = 0; i < len; i++) {
        h += key[i];
        h += h << 10;
        h ^= h >> 6;
    }
    h += h << 3;
    h ^= h >> 11;
    h += h << 15;
    return h;
}

static size_t chunk_size(unsigned cls) { return (size_t)MCD_MIN_CHUNK << cls; }

uint32_t mcd_store_max_kv(void) { return (uint32_t)(chunk_size(MCD_CLASSES - 1) - sizeof(struct mcd_item)); }

int mcd_store_init(struct mcd_store *s, void *mem, size_t size, unsigned buckets_log2)
{
    return mcd_store_init_classes(s, mem, size, buckets_log2, MCD_CLASSES);
}

int mcd_store_init_classes(struct mcd_store *s, void *mem, size_t size, unsigned buckets_log2, unsigned classes)
{
    size_t heads = ((size_t)1 << buckets_log2) * sizeof(struct mcd_item *);
    heads = (heads + 63) & ~(size_t)63;
    memset(s, 0, sizeof(*s));
    if (buckets_log2 > 30 || classes < 1 || classes > MCD_MAX_CLASSES || size < heads + chunk_size(classes - 1))
        return -1;
    s->classes = classes;
    s->buckets = mem;
    s->mask = (1u << buckets_log2) - 1;
    s->arena = (uint8_t *)mem + heads;
    s->arena_size = size - heads;
    s->next_cas = 1;
    return 0;
}

static int key_eq(const struct mcd_item *it, const uint8_t *key, uint16_t klen, uint32_t hash)
{
    return it->hash == hash && it->klen == klen && memcmp(it->data, key, klen) == 0;
}

static void lru_unlink(struct mcd_store *s, struct mcd_item *it)
{
    if (it->lru_prev)
        it->lru_prev->lru_next = it->lru_next;
    else
        s->lru_head[it->cls] = it->lru_next;
    if (it->lru_next)
        it->lru_next->lru_prev = it->lru_prev;
    else
        s->lru_tail[it->cls] = it->lru_prev;
    it->lru_prev = it->lru_next = 0;
}

static void lru_push_front(struct mcd_store *s, struct mcd_item *it)
{
    it->lru_prev = 0;
    it->lru_next = s->lru_head[it->cls];
    if (it->lru_next)
        it->lru_next->lru_prev = it;
    else
        s->lru_tail[it->cls] = it;
    s->lru_head[it->cls] = it;
}

/* Take it out of its hash chain and LRU and put its chunk on the free list. */
static void item_remove(struct mcd_store *s, struct mcd_item *it)
{
    struct mcd_item **pp = &s->buckets[it->hash & s->mask];
    while (*pp != it)
        pp = &(*pp)->h_next;
    *pp = it->h_next;
    lru_unlink(s, it);
    it->linked = 0;
    it->h_next = s->free_list[it->cls];
    s->free_list[it->cls] = it;
    s->st.items--;
}

static struct mcd_item *find(struct mcd_store *s, const uint8_t *key, uint16_t klen, uint32_t hash)
{
    for (struct mcd_item *it = s->buckets[hash & s->mask]; it; it = it->h_next)
        if (key_eq(it, key, klen, hash))
            return it;
    return 0;
}

struct mcd_item *mcd_store_get(struct mcd_store *s, const uint8_t *key, uint16_t klen, uint32_t hash)
{
    s->st.gets++;
    struct mcd_item *it = find(s, key, klen, hash);
    if (it) {
        s->st.hits++;
        lru_unlink(s, it);
        lru_push_front(s, it);
    }
    return it;
}

/* A free chunk of class cls: the free list, else fresh arena, else the class's LRU tail (evicted). */
static struct mcd_item *chunk_alloc(struct mcd_store *s, unsigned cls)
{
    struct mcd_item *it = s->free_list[cls];
    if (it) {
        s->free_list[cls] = it->h_next;
        return it;
    }
    if (s->arena_used + chunk_size(cls) <= s->arena_size) {
        it = (struct mcd_item *)(s->arena + s->arena_used);
        s->arena_used += chunk_size(cls);
        return it;
    }
    struct mcd_item *victim = s->lru_tail[cls];
    if (!victim)
        return 0;
    item_remove(s, victim);
    s->st.evictions++;
    it = s->free_list[cls];
    s->free_list[cls] = it->h_next;
    return it;
}

int mcd_store_set(struct mcd_store *s, const uint8_t *key, uint16_t klen, uint32_t hash, uint32_t flags,
                  uint32_t exptime, const uint8_t *value, uint32_t vlen, uint64_t *cas)
{
    s->st.sets++;
    size_t need = sizeof(struct mcd_item) + (size_t)klen + vlen;
    unsigned cls = 0;
    while (cls < s->classes && chunk_size(cls) < need)
        cls++;
    if (cls == s->classes) {
        s->st.too_big++;
        return MCD_ST_E2BIG;
    }
    /* The old item goes first, so its chunk can serve the new one; as in memcached, a SET that then fails to
     * allocate leaves no stale value behind. */
    struct mcd_item *old = find(s, key, klen, hash);
    if (old)
        item_remove(s, old);
    struct mcd_item *it = chunk_alloc(s, cls);
    if (!it) {
        s->st.oom++;
        return MCD_ST_ENOMEM;
    }
    it->cas = s->next_cas++;
    it->hash = hash;
    it->flags = flags;
    it->exptime = exptime;
    it->vlen = vlen;
    it->klen = klen;
    it->cls = (uint8_t)cls;
    it->linked = 1;
    memcpy(it->data, key, klen);
    memcpy(it->data + klen, value, vlen); /* the value's copy into the store */
    it->h_next = s->buckets[hash & s->mask];
    s->buckets[hash & s->mask] = it;
    lru_push_front(s, it);
    s->st.items++;
    *cas = it->cas;
    return MCD_ST_OK;
}

int mcd_store_delete(struct mcd_store *s, const uint8_t *key, uint16_t klen, uint32_t hash)
{
    s->st.deletes++;
    struct mcd_item *it = find(s, key, klen, hash);
    if (!it)
        return MCD_ST_KEY_ENOENT;
    item_remove(s, it);
    s->st.delete_hits++;
    return MCD_ST_OK;
}
