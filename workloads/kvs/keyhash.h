/* keyhash.h - the 64-bit key hash shared by the server's tests and the client: XXH64 (seed 0), written from the
 * published xxHash specification (XXH64 algorithm description). */
#ifndef KVS_KEYHASH_H
#define KVS_KEYHASH_H

#include <stdint.h>
#include <stddef.h>

uint64_t kvs_xxh64(const void *data, size_t len, uint64_t seed);

static inline uint64_t kvs_keyhash(const void *key, size_t len) { return kvs_xxh64(key, len, 0); }

#endif
