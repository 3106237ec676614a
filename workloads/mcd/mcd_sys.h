/* mcd_sys.h - the few C library functions the memcached-class server uses: the host's on a native build, the
 * project's freestanding runtime on riscv64
 * (a build on a C library, as the full-system image's, defines MCD_HOSTED). */
#ifndef MCD_SYS_H
#define MCD_SYS_H

#include <stddef.h>
#include <stdint.h>
#if defined(__riscv) && !defined(MCD_HOSTED)
#include "kvsim_libc.h"
#else
#include <string.h>
#endif

static inline uint16_t mcd_get16(const uint8_t *p) { return (uint16_t)(p[0] << 8 | p[1]); }
static inline uint32_t mcd_get32(const uint8_t *p)
{
    return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}
static inline uint64_t mcd_get64(const uint8_t *p) { return (uint64_t)mcd_get32(p) << 32 | mcd_get32(p + 4); }
static inline void mcd_put16(uint8_t *p, uint16_t v) { p[0] = (uint8_t)(v >> 8); p[1] = (uint8_t)v; }
static inline void mcd_put32(uint8_t *p, uint32_t v)
{
    p[0] = (uint8_t)(v >> 24); p[1] = (uint8_t)(v >> 16); p[2] = (uint8_t)(v >> 8); p[3] = (uint8_t)v;
}
static inline void mcd_put64(uint8_t *p, uint64_t v)
{
    mcd_put32(p, (uint32_t)(v >> 32));
    mcd_put32(p + 4, (uint32_t)v);
}

#endif
