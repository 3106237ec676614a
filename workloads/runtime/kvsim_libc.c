/* The tiny C library of kvsim guests (see kvsim_libc.h). */
#include "kvsim_libc.h"

/* Keep GCC from turning the loops below into calls to themselves. */
#define NO_LOOP_IDIOMS __attribute__((optimize("no-tree-loop-distribute-patterns")))

long write(int fd, const void *buf, size_t len) {
    const char *p = buf;
    size_t done = 0;
    while (done < len) {
        long r = syscall3(SYS_write, fd, p + done, len - done);
        if (r <= 0)
            return done ? (long)done : r;
        done += (size_t)r;
    }
    return (long)done;
}

long writev(int fd, const struct iovec *iov, int iovcnt) { return syscall3(SYS_writev, fd, iov, iovcnt); }

void exit_group(int code) {
    for (;;)
        syscall1(SYS_exit_group, code);
}

void exit(int code) { exit_group(code); }

void hart_exit(int code) {
    for (;;)
        syscall1(SYS_exit, code);
}

long brk(void *addr) { return syscall1(SYS_brk, addr); }

static uintptr_t cur_brk;

void *sbrk(long increment) {
    if (cur_brk == 0)
        cur_brk = (uintptr_t)brk(0);
    uintptr_t old = cur_brk;
    if (increment == 0)
        return (void *)old;
    uintptr_t want = old + (uintptr_t)increment;
    uintptr_t got = (uintptr_t)brk((void *)want);
    if (got != want)
        return (void *)-1;
    cur_brk = got;
    return (void *)old;
}

void *mmap(void *addr, size_t len, int prot, int flags, int fd, long offset) {
    long r = syscall6(SYS_mmap, (long)addr, (long)len, prot, flags, fd, offset);
    return (r < 0 && r > -4096) ? MAP_FAILED : (void *)r;
}

int munmap(void *addr, size_t len) { return (int)syscall2(SYS_munmap, addr, len); }

int mprotect(void *addr, size_t len, int prot) { return (int)syscall3(SYS_mprotect, addr, len, prot); }

int clock_gettime(int clock, struct timespec *ts) { return (int)syscall2(SYS_clock_gettime, clock, ts); }

NO_LOOP_IDIOMS void *memcpy(void *dst, const void *src, size_t n) {
    unsigned char *d = dst;
    const unsigned char *s = src;
    if ((((uintptr_t)d | (uintptr_t)s) & 7) == 0) {
        for (; n >= 8; n -= 8, d += 8, s += 8)
            *(uint64_t *)d = *(const uint64_t *)s;
    }
    while (n--)
        *d++ = *s++;
    return dst;
}

NO_LOOP_IDIOMS void *memmove(void *dst, const void *src, size_t n) {
    unsigned char *d = dst;
    const unsigned char *s = src;
    if (d <= s || d >= s + n)
        return memcpy(dst, src, n);
    while (n--)
        d[n] = s[n];
    return dst;
}

NO_LOOP_IDIOMS void *memset(void *dst, int c, size_t n) {
    unsigned char *d = dst;
    if (((uintptr_t)d & 7) == 0) {
        uint64_t v = (unsigned char)c * 0x0101010101010101ull;
        for (; n >= 8; n -= 8, d += 8)
            *(uint64_t *)d = v;
    }
    while (n--)
        *d++ = (unsigned char)c;
    return dst;
}

int memcmp(const void *a, const void *b, size_t n) {
    const unsigned char *x = a, *y = b;
    for (size_t i = 0; i < n; i++)
        if (x[i] != y[i])
            return x[i] < y[i] ? -1 : 1;
    return 0;
}

uint64_t kvsim_parse_size(const char *s) {
    uint64_t v = 0;
    while (*s >= '0' && *s <= '9')
        v = v * 10 + (uint64_t)(*s++ - '0');
    switch (*s) {
    case 'k': case 'K': return v << 10;
    case 'm': case 'M': return v << 20;
    case 'g': case 'G': return v << 30;
    default: return v;
    }
}

size_t strlen(const char *s) {
    size_t n = 0;
    while (s[n])
        n++;
    return n;
}

int strcmp(const char *a, const char *b) {
    while (*a && *a == *b)
        a++, b++;
    return (unsigned char)*a - (unsigned char)*b;
}

/* ---- formatted output ---- */

/* Where formatted characters go: a bounded buffer (snprintf), or a buffer flushed to a file descriptor. */
struct sink {
    char *buf;
    size_t size;   /* capacity of buf */
    size_t len;    /* characters in buf */
    size_t total;  /* characters produced in all */
    int fd;        /* -1 for a string sink */
};

static void sink_flush(struct sink *s) {
    if (s->fd >= 0 && s->len) {
        write(s->fd, s->buf, s->len);
        s->len = 0;
    }
}

static void sink_put(struct sink *s, char c) {
    s->total++;
    if (s->fd >= 0) {
        if (s->len == s->size)
            sink_flush(s);
        s->buf[s->len++] = c;
    } else if (s->len + 1 < s->size) {
        s->buf[s->len++] = c;
    }
}

static void sink_pad(struct sink *s, char c, int n) {
    while (n-- > 0)
        sink_put(s, c);
}

/* One converted field: an optional sign/prefix, then the digits, padded to width. */
static void put_field(struct sink *s, const char *prefix, const char *body, int len, int width, int zero,
                      int left) {
    int plen = (int)strlen(prefix);
    int pad = width - plen - len;
    if (!left && !zero)
        sink_pad(s, ' ', pad);
    for (int i = 0; i < plen; i++)
        sink_put(s, prefix[i]);
    if (!left && zero)
        sink_pad(s, '0', pad);
    for (int i = 0; i < len; i++)
        sink_put(s, body[i]);
    if (left)
        sink_pad(s, ' ', pad);
}

static int utoa_rev(char *out, unsigned long long v, unsigned base, int upper) {
    const char *digits = upper ? "0123456789ABCDEF" : "0123456789abcdef";
    int n = 0;
    do {
        out[n++] = digits[v % base];
        v /= base;
    } while (v);
    return n;
}

static void format(struct sink *s, const char *fmt, va_list ap) {
    char tmp[24], num[24];
    for (; *fmt; fmt++) {
        if (*fmt != '%') {
            sink_put(s, *fmt);
            continue;
        }
        fmt++;
        int zero = 0, left = 0, width = 0, lng = 0, shrt = 0;
        for (;; fmt++) {
            if (*fmt == '0')
                zero = 1;
            else if (*fmt == '-')
                left = 1;
            else
                break;
        }
        while (*fmt >= '0' && *fmt <= '9')
            width = width * 10 + (*fmt++ - '0');
        for (;; fmt++) {
            if (*fmt == 'l')
                lng++;
            else if (*fmt == 'z')
                lng = 1;
            else if (*fmt == 'h')
                shrt++;
            else
                break;
        }
        unsigned long long u;
        long long sv;
        unsigned base = 10;
        int upper = 0;
        const char *prefix = "";
        switch (*fmt) {
        case 'd':
        case 'i':
            sv = lng ? va_arg(ap, long long) : va_arg(ap, int);  /* long and long long are both 64-bit */
            if (shrt == 1)
                sv = (short)sv;
            else if (shrt >= 2)
                sv = (signed char)sv;
            if (sv < 0) {
                prefix = "-";
                u = 0ull - (unsigned long long)sv;
            } else {
                u = (unsigned long long)sv;
            }
            goto emit_number;
        case 'u':
        case 'x':
        case 'X':
        case 'o':
            base = *fmt == 'u' ? 10 : *fmt == 'o' ? 8 : 16;
            upper = *fmt == 'X';
            u = lng ? va_arg(ap, unsigned long long) : va_arg(ap, unsigned int);
            if (shrt == 1)
                u = (unsigned short)u;
            else if (shrt >= 2)
                u = (unsigned char)u;
            goto emit_number;
        case 'p':
            u = (uintptr_t)va_arg(ap, void *);
            base = 16;
            prefix = "0x";
        emit_number: {
            int n = utoa_rev(tmp, u, base, upper);
            for (int i = 0; i < n; i++)
                num[i] = tmp[n - 1 - i];
            put_field(s, prefix, num, n, width, zero && !left, left);
            break;
        }
        case 's': {
            const char *str = va_arg(ap, const char *);
            if (!str)
                str = "(null)";
            put_field(s, "", str, (int)strlen(str), width, 0, left);
            break;
        }
        case 'c':
            tmp[0] = (char)va_arg(ap, int);
            put_field(s, "", tmp, 1, width, 0, left);
            break;
        case '%':
            sink_put(s, '%');
            break;
        case '\0':
            return;
        default:  /* unknown conversion: print it as written */
            sink_put(s, '%');
            sink_put(s, *fmt);
            break;
        }
    }
}

int vsnprintf(char *buf, size_t size, const char *fmt, va_list ap) {
    struct sink s = {buf, size, 0, 0, -1};
    format(&s, fmt, ap);
    if (size)
        buf[s.len] = '\0';
    return (int)s.total;
}

int snprintf(char *buf, size_t size, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(buf, size, fmt, ap);
    va_end(ap);
    return n;
}

int vdprintf(int fd, const char *fmt, va_list ap) {
    char buf[256];
    struct sink s = {buf, sizeof buf, 0, 0, fd};
    format(&s, fmt, ap);
    sink_flush(&s);
    return (int)s.total;
}

int dprintf(int fd, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    int n = vdprintf(fd, fmt, ap);
    va_end(ap);
    return n;
}

int printf(const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    int n = vdprintf(1, fmt, ap);
    va_end(ap);
    return n;
}

int puts(const char *s) {
    size_t n = strlen(s);
    write(1, s, n);
    write(1, "\n", 1);
    return (int)n + 1;
}
