/* A tiny freestanding C library for kvsim guests: Linux system calls, memory and string helpers, printf.
 * Nothing here is thread-safe unless stated (the brk heap is one global); printf formats into a buffer and
 * writes it with one write() per call (or per 256 bytes), so lines from different harts do not interleave
 * within a short line.
 */
#ifndef KVSIM_LIBC_H
#define KVSIM_LIBC_H

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

/* Linux riscv64 (asm-generic) system call numbers. */
#define SYS_write          64
#define SYS_writev         66
#define SYS_exit           93
#define SYS_exit_group     94
#define SYS_clock_gettime 113
#define SYS_brk           214
#define SYS_munmap        215
#define SYS_mmap          222
#define SYS_mprotect      226

#define PROT_NONE      0
#define PROT_READ      1
#define PROT_WRITE     2
#define PROT_EXEC      4
#define MAP_SHARED     0x01
#define MAP_PRIVATE    0x02
#define MAP_FIXED      0x10
#define MAP_ANONYMOUS  0x20
#define MAP_FAILED     ((void *)-1)

#define CLOCK_REALTIME  0
#define CLOCK_MONOTONIC 1

struct iovec {
    void *iov_base;
    size_t iov_len;
};

struct timespec {
    long tv_sec;
    long tv_nsec;
};

static inline long syscall6(long nr, long a0_, long a1_, long a2_, long a3_, long a4_, long a5_) {
    register long a0 __asm__("a0") = a0_;
    register long a1 __asm__("a1") = a1_;
    register long a2 __asm__("a2") = a2_;
    register long a3 __asm__("a3") = a3_;
    register long a4 __asm__("a4") = a4_;
    register long a5 __asm__("a5") = a5_;
    register long a7 __asm__("a7") = nr;
    __asm__ volatile("ecall" : "+r"(a0) : "r"(a1), "r"(a2), "r"(a3), "r"(a4), "r"(a5), "r"(a7) : "memory");
    return a0;
}
#define syscall0(n)                  syscall6(n, 0, 0, 0, 0, 0, 0)
#define syscall1(n, a)               syscall6(n, (long)(a), 0, 0, 0, 0, 0)
#define syscall2(n, a, b)            syscall6(n, (long)(a), (long)(b), 0, 0, 0, 0)
#define syscall3(n, a, b, c)         syscall6(n, (long)(a), (long)(b), (long)(c), 0, 0, 0)

/* System calls: these return the kernel's result (negative errno on failure), except mmap (MAP_FAILED) and
 * sbrk ((void *)-1). */
long write(int fd, const void *buf, size_t len);      /* writes all of buf (loops over short writes) */
long writev(int fd, const struct iovec *iov, int iovcnt);
void exit(int code) __attribute__((noreturn));        /* ends the process: exit_group */
void exit_group(int code) __attribute__((noreturn));  /* ends every hart */
void hart_exit(int code) __attribute__((noreturn));   /* SYS_exit: ends only the calling hart */
long brk(void *addr);                                 /* the new break (the current one for brk(0)) */
void *sbrk(long increment);
void *mmap(void *addr, size_t len, int prot, int flags, int fd, long offset);
int munmap(void *addr, size_t len);
int mprotect(void *addr, size_t len, int prot);
int clock_gettime(int clock, struct timespec *ts);

void *memcpy(void *dst, const void *src, size_t n);
void *memmove(void *dst, const void *src, size_t n);
void *memset(void *dst, int c, size_t n);
int memcmp(const void *a, const void *b, size_t n);
size_t strlen(const char *s);
/* A decimal count with an optional binary suffix: "4096", "32K", "16M", "1G"; parsing stops at the first other
 * character ("" gives 0). For command-line arguments of guest programs. */
uint64_t kvsim_parse_size(const char *s);
int strcmp(const char *a, const char *b);

/* printf family: %d %i %u %x %X %o %s %c %p %%, length modifiers l ll z h hh, flags '0' and '-', a width. */
int vsnprintf(char *buf, size_t size, const char *fmt, va_list ap);
int snprintf(char *buf, size_t size, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
int vdprintf(int fd, const char *fmt, va_list ap);
int dprintf(int fd, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
int printf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
int puts(const char *s);

#endif
