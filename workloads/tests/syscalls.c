/* The system calls of workloads/ABI.md that a guest uses directly: brk growth (and the heap is zeroed and
 * usable), mmap/munmap of anonymous memory, clock_gettime (monotonic never goes back, nanoseconds in range),
 * write and writev to stdout and stderr (including a zero-length write and a large one), mprotect of an mmap'ed
 * page, and exit_group's status.
 * Addresses differ between qemu and the engine, so only relations between them are printed. */
#include "common.h"

int main(int argc, char **argv, char **envp) {
    /* argv/envp as the start-up code delivered them: argc and argv[0] exist; argv[argc] and the end of envp are
     * NULL. The path in argv[0] differs between runs, so only its presence is printed. */
    int envc = 0;
    while (envp[envc])
        envc++;
    printf("argc>=1 %d  argv[argc]==NULL %d  argv0 nonempty %d\n", argc >= 1, argv[argc] == 0,
           argv[0] && argv[0][0] != 0);
    (void)envc;

    /* brk */
    long b0 = brk(0);
    long b1 = brk((void *)(b0 + 3 * 4096 + 100));
    long b2 = brk(0);
    printf("brk grows: %d  query after grow matches: %d  page-aligned start: %d\n", b1 == b0 + 3 * 4096 + 100,
           b2 == b1, (b0 & 4095) == 0);
    volatile uint8_t *heap = (uint8_t *)b0;
    int zero = 1;
    for (long i = 0; i < 3 * 4096 + 100; i++)
        zero &= heap[i] == 0;
    for (long i = 0; i < 3 * 4096 + 100; i++)
        heap[i] = (uint8_t)(i * 7);
    uint64_t sum = 0;
    for (long i = 0; i < 3 * 4096 + 100; i += 13)
        sum += heap[i];
    printf("brk memory zeroed: %d  sum %lu\n", zero, sum);
    void *s0 = sbrk(0);
    void *s1 = sbrk(8192);
    void *s2 = sbrk(0);
    printf("sbrk: old==brk %d  advanced %ld\n", s1 == s0 && (long)s0 == b2, (long)((char *)s2 - (char *)s1));
    long shrink = brk((void *)b0);
    printf("brk shrink back: %d\n", shrink == b0);

    /* mmap / munmap */
    size_t len = 5 * 4096 + 17;
    uint8_t *m = mmap(0, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    printf("mmap ok: %d  page-aligned: %d\n", m != MAP_FAILED, ((uintptr_t)m & 4095) == 0);
    zero = 1;
    for (size_t i = 0; i < len; i++)
        zero &= m[i] == 0;
    for (size_t i = 0; i < len; i++)
        m[i] = (uint8_t)(i ^ (i >> 8));
    sum = 0;
    for (size_t i = 0; i < len; i++)
        sum = sum * 31 + m[i];
    printf("mmap zeroed: %d  checksum %016lx\n", zero, sum);
    uint8_t *m2 = mmap(0, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    printf("second mmap distinct: %d\n", m2 != MAP_FAILED && (m2 + 4096 <= m || m2 >= m + len));
    m2[0] = 1;
    m2[4095] = 2;
    printf("mprotect: %d\n", mprotect(m2, 4096, PROT_READ | PROT_WRITE));
    printf("munmap: %d %d\n", munmap(m, len), munmap(m2, 4096));
    uint8_t *m3 = mmap(0, 1 << 20, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    for (int i = 0; i < (1 << 20); i += 4096)
        m3[i] = (uint8_t)i;
    printf("1 MiB mmap ok: %d last page %d\n", m3 != MAP_FAILED, m3[(1 << 20) - 4096]);
    munmap(m3, 1 << 20);

    /* clock_gettime: monotonic, nanoseconds normalized. Values differ by host, so only properties print. */
    struct timespec t0, t1, tr;
    int r0 = clock_gettime(CLOCK_MONOTONIC, &t0);
    volatile long spin = 0;
    for (int i = 0; i < 100000; i++)
        spin += i;
    int r1 = clock_gettime(CLOCK_MONOTONIC, &t1);
    int r2 = clock_gettime(CLOCK_REALTIME, &tr);
    long d = (t1.tv_sec - t0.tv_sec) * 1000000000L + (t1.tv_nsec - t0.tv_nsec);
    printf("clock_gettime: rc %d %d %d  monotonic forward %d  nsec in range %d\n", r0, r1, r2, d > 0,
           t0.tv_nsec >= 0 && t0.tv_nsec < 1000000000L && t1.tv_nsec >= 0 && t1.tv_nsec < 1000000000L);
    int mono = 1;
    struct timespec prev = t1, now;
    for (int i = 0; i < 50; i++) {
        clock_gettime(CLOCK_MONOTONIC, &now);
        mono &= now.tv_sec > prev.tv_sec || (now.tv_sec == prev.tv_sec && now.tv_nsec >= prev.tv_nsec);
        prev = now;
    }
    printf("monotonic over 50 reads: %d\n", mono);

    /* write */
    long w0 = write(1, "", 0);
    long w1 = write(2, "stderr line 1\n", 14);
    dprintf(2, "stderr line 2: %d\n", 12345);
    static char big[10000];
    for (int i = 0; i < 10000; i++)
        big[i] = (i % 100 == 99) ? '\n' : (char)('A' + i % 26);
    long w2 = write(1, big, sizeof big);
    struct iovec iov[4] = {{"writev ", 7}, {"gathers ", 8}, {"", 0}, {"three parts\n", 12}};
    long w3 = writev(1, iov, 4);
    long w4 = writev(2, iov + 3, 1);
    printf("write results: %ld %ld %ld %ld %ld\n", w0, w1, w2, w3, w4);
    return 42;
}
