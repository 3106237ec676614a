/* mcd_store.h - memcached-style item store: a chained hash table over items carved from one arena in size
 * classes (64 B doubling to 4 KiB chunks by default, to 2 MiB at most: memcached's largest item, -I, is 1 MiB by
 * default, and a 1 MiB value with its header needs the 2 MiB chunk), one LRU list per class; a SET that finds its class out of chunks and the
 * arena exhausted evicts that class's least recently used item. Single-threaded: one store per core. Expiry times
 * are kept but not enforced (the guest has no wall clock worth trusting in simulation). */
#ifndef MCD_STORE_H
#define MCD_STORE_H

#include "mcd_sys.h"

#define MCD_CLASSES 7u      /* the default: 64 B .. 4 KiB */
#define MCD_MAX_CLASSES 16u /* 64 B .. 2 MiB */
#define MCD_MIN_CHUNK 64u

struct mcd_item {
    struct mcd_item *h_next;            /* hash chain */
    struct mcd_item *lru_prev, *lru_next; /* prev = more recently used */
    uint64_t cas;
    uint32_t hash, flags, exptime, vlen;
    uint16_t klen;
    uint8_t cls, linked;
    uint8_t data[];                     /* key, then value */
};
/* The ghost client computes how many items an instance holds without evicting from this size (kvsim's
 * client/memcached.rs, ITEM_HEADER): change both together. */
_Static_assert(sizeof(struct mcd_item) == 56, "struct mcd_item is 56 bytes");

struct mcd_store_stats {
    uint64_t items, gets, hits, sets, deletes, delete_hits, evictions, oom, too_big;
};

struct mcd_store {
    struct mcd_item **buckets;
    uint32_t mask;
    uint8_t *arena;
    size_t arena_size, arena_used;
    unsigned classes; /* size classes in use: chunks of 64 B << 0 .. classes-1 */
    struct mcd_item *free_list[MCD_MAX_CLASSES];
    struct mcd_item *lru_head[MCD_MAX_CLASSES], *lru_tail[MCD_MAX_CLASSES];
    uint64_t next_cas;
    struct mcd_store_stats st;
};

/* memcached's original key hash: Bob Jenkins' one-at-a-time. */
uint32_t mcd_hash(const uint8_t *key, uint32_t len);

/* Lay the store out in mem (zeroed, 64-byte aligned): 2^buckets_log2 bucket heads, the rest is the arena.
 * Returns 0, or -1 if mem is too small for the buckets and one largest chunk. */
int mcd_store_init(struct mcd_store *s, void *mem, size_t size, unsigned buckets_log2);
/* The same with `classes` size classes (1..MCD_MAX_CLASSES; the largest chunk is 64 B << (classes - 1)). */
int mcd_store_init_classes(struct mcd_store *s, void *mem, size_t size, unsigned buckets_log2, unsigned classes);

/* The item of key (NULL if none); a hit becomes the most recently used of its class. */
struct mcd_item *mcd_store_get(struct mcd_store *s, const uint8_t *key, uint16_t klen, uint32_t hash);
/* Insert or replace. Returns MCD_ST_OK (with *cas set), MCD_ST_E2BIG or MCD_ST_ENOMEM (mcd_proto.h codes). */
int mcd_store_set(struct mcd_store *s, const uint8_t *key, uint16_t klen, uint32_t hash, uint32_t flags,
                  uint32_t exptime, const uint8_t *value, uint32_t vlen, uint64_t *cas);
/* MCD_ST_OK or MCD_ST_KEY_ENOENT. */
int mcd_store_delete(struct mcd_store *s, const uint8_t *key, uint16_t klen, uint32_t hash);

static inline const uint8_t *mcd_item_value(const struct mcd_item *it) { return it->data + it->klen; }
/* The largest key + value a chunk of the default classes holds. */
uint32_t mcd_store_max_kv(void);

#endif
