/* Keyhash: XXH64 against published vectors, and the shared vector file against this implementation. */
#include <string.h>
#include <stdlib.h>
#include "kt.h"

KT_TEST(hash_xxh64_published_vectors)
{
    /* Published XXH64 values (seed 0 unless given). Together they cover the <4, 4..7, 8..31-byte tails and the
     * 32-byte stripe loop. */
    KT_EQ(kvs_xxh64("", 0, 0), 0xEF46DB3751D8E999ull);
    KT_EQ(kvs_xxh64("a", 1, 0), 0xD24EC4F1A98C6E5Bull);
    KT_EQ(kvs_xxh64("abc", 3, 0), 0x44BC2CF5AD770999ull);
    KT_EQ(kvs_xxh64("message digest", 14, 0), 0x066ED728FCEEB3BEull);
    KT_EQ(kvs_xxh64("Hello, World!", 13, 0), 0xC49AACF8080FE47Full);
    KT_EQ(kvs_xxh64("Hello, World!", 13, 42), 0xC2E0FE28B2512846ull);
    KT_EQ(kvs_xxh64("12345678901234567890123456789012", 32, 0), 0x40FD1AA52D98274Cull);
    KT_EQ(kvs_xxh64("The quick brown fox jumps over the lazy dog", 43, 0), 0x0B242D361FDA71BCull);
    KT_EQ(kvs_xxh64("Nobody inspects the spammish repetition", 39, 123), 0xA8BA45551F24B7AEull);
    KT_EQ(kvs_keyhash("abc", 3), 0x44BC2CF5AD770999ull);
}

static int hexval(int c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    return -1;
}

/* keyhash_vectors.txt (shared with the Rust client) must agree with this implementation, line by line. */
KT_TEST(hash_vector_file_agrees)
{
    FILE *f = fopen(KT_SRCDIR "/keyhash_vectors.txt", "r");
    KT_CHECK(f != NULL);
    char line[1200];
    unsigned checked = 0, lens_seen[300] = {0};
    while (fgets(line, sizeof(line), f)) {
        if (line[0] == '#' || line[0] == '\n')
            continue;
        char *sp = strchr(line, ' ');
        if (!sp) {
            fclose(f);
            KT_CHECK(sp != NULL);
        }
        size_t hexlen = (size_t)(sp - line);
        uint8_t key[600];
        int bad = hexlen % 2 != 0 || hexlen / 2 > sizeof(key);
        if (line[0] == '-' && hexlen == 1)
            hexlen = 0, bad = 0; /* "-" = the empty key */
        for (size_t i = 0; !bad && i < hexlen / 2; i++) {
            int hi = hexval(line[2 * i]), lo = hexval(line[2 * i + 1]);
            bad = hi < 0 || lo < 0;
            key[i] = (uint8_t)(hi << 4 | lo);
        }
        uint64_t want = strtoull(sp + 1, 0, 16);
        if (bad) {
            fclose(f);
            KT_CHECK(!bad);
        }
        if (kvs_keyhash(key, hexlen / 2) != want) {
            fclose(f);
            KT_EQ(kvs_keyhash(key, hexlen / 2), want);
        }
        if (hexlen / 2 < 300)
            lens_seen[hexlen / 2] = 1;
        checked++;
    }
    fclose(f);
    KT_CHECK(checked >= 64);
    /* Every length class is present: empty, 1..3, 4..7, 8..31, 32+, and the longest key (255). */
    KT_CHECK(lens_seen[0] && lens_seen[3] && lens_seen[7] && lens_seen[31] && lens_seen[32] && lens_seen[255]);
}

KT_TEST(hash_partition_bucket_tag_bits)
{
    uint64_t kh = 0xABCD123456780000ull;
    KT_EQ(kvs_tag_of(kh), 1);                       /* tag 0 becomes 1 */
    KT_EQ(kvs_tag_of(kh | 0x2a), 0x2a);
    KT_EQ(kvs_partition_of(kh, 7), 0xABCDu % 7);   /* the high 16 bits */
    struct kvs_partition *p = kt_partition(1024, 65536, 0);
    KT_CHECK(p != NULL);
    KT_EQ(kvs_bucket_of(p, kh) - p->buckets, (kh >> 16) & 1023);
}

/* buckets_used: fewer buckets than the power of two allocated take the 32 hash bits above the tag scaled onto
 * them (hash * used >> 32), every bucket about as many keys; all of them is the mask again; half or more than all
 * is refused and leaves the index as it was. */
KT_TEST(hash_buckets_used)
{
    struct kvs_partition *p = kt_partition(1024, 65536, 0);
    KT_CHECK(p != NULL);
    KT_EQ(kvs_partition_set_buckets_used(p, 512), -1);
    KT_EQ(kvs_partition_set_buckets_used(p, 1025), -1);
    KT_EQ(p->buckets_used, 0);
    KT_EQ(kvs_partition_set_buckets_used(p, 1024), 0);
    KT_EQ(p->buckets_used, 0);
    uint64_t kh = 0xABCD123456780000ull;
    KT_EQ(kvs_bucket_of(p, kh) - p->buckets, (kh >> 16) & 1023);
    KT_EQ(kvs_partition_set_buckets_used(p, 683), 0);
    KT_EQ(kvs_bucket_of(p, kh) - p->buckets, (0x12345678ull * 683) >> 32);
    KT_EQ(kvs_bucket_of(p, 0xffffffffffff0000ull) - p->buckets, 682); /* the last bucket in use */
    KT_EQ(kvs_bucket_of(p, 0xffff00000000ffffull) - p->buckets, 0);
    static unsigned count[1024];
    memset(count, 0, sizeof(count));
    for (uint64_t i = 0; i < 683 * 64; i++) {
        long b = kvs_bucket_of(p, kvs_keyhash(&i, 8)) - p->buckets;
        KT_CHECK(b >= 0 && b < 683);
        count[b]++;
    }
    unsigned lo = ~0u, hi = 0;
    for (unsigned b = 0; b < 683; b++) {
        lo = count[b] < lo ? count[b] : lo;
        hi = count[b] > hi ? count[b] : hi;
    }
    KT_CHECK(lo >= 30 && hi <= 105); /* Poisson(64): every bucket within about 4.5 standard deviations */
}
