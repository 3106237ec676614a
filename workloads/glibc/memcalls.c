/* The memory calls beyond plain mmap/munmap (tests/test_syscalls.py): mremap that grows, shrinks and moves a
 * mapping, MAP_FIXED over a mapping, MAP_FIXED_NOREPLACE, madvise, brk's edge cases and glibc's realloc of a large
 * block (which uses mremap). Addresses differ between machines, so only facts about them are printed. Where
 * qemu-riscv64 7.2 departs from Linux (mremap to size 0, MAP_FIXED_NOREPLACE, unknown madvise advice) the engine's
 * unit tests check Linux's answer instead. */
#define _GNU_SOURCE
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#define PAGE 4096L

static void show(const char *what, long r) {
  if (r < 0)
    printf("%-30s -1 %s\n", what, strerrorname_np(errno));
  else
    printf("%-30s %ld\n", what, r);
}

static long sum(const unsigned char *p, long n) {
  long s = 0;
  for (long i = 0; i < n; i++) s = s * 131 + p[i];
  return s;
}

static void fill(unsigned char *p, long n, int seed) {
  for (long i = 0; i < n; i++) p[i] = (unsigned char)(i * 7 + seed);
}

int main(void) {
  /* Grow in place when the pages above are free, or move. */
  unsigned char *a = mmap(NULL, 4 * PAGE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  fill(a, 4 * PAGE, 1);
  long before = sum(a, 4 * PAGE);
  unsigned char *b = mremap(a, 4 * PAGE, 64 * PAGE, MREMAP_MAYMOVE);
  show("mremap grow", b == MAP_FAILED ? -1 : 0);
  printf("  data kept %d, new pages zero %d\n", sum(b, 4 * PAGE) == before, b[40 * PAGE] == 0);
  b[63 * PAGE] = 5;
  unsigned char *c = mremap(b, 64 * PAGE, 2 * PAGE, 0);
  show("mremap shrink in place", c == b ? 0 : -1);
  printf("  data kept %d\n", sum(c, 2 * PAGE) == sum(b, 2 * PAGE));
  show("mremap grow without MAYMOVE", mremap(c, 2 * PAGE, 1L << 40, 0) == MAP_FAILED ? -1 : 0);
  show("mremap unaligned", mremap(c + 1, PAGE, 2 * PAGE, MREMAP_MAYMOVE) == MAP_FAILED ? -1 : 0);
  /* Block the pages above, so growing must move. */
  unsigned char *wall = mmap(c + 2 * PAGE, PAGE, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0);
  show("wall above", wall == c + 2 * PAGE ? 0 : -1);
  long kept = sum(c, 2 * PAGE);
  unsigned char *d = mremap(c, 2 * PAGE, 8 * PAGE, MREMAP_MAYMOVE);
  show("mremap grow moves", d != MAP_FAILED && d != c ? 0 : -1);
  printf("  data kept %d\n", sum(d, 2 * PAGE) == kept);
  show("old address unmapped", mprotect(c, PAGE, PROT_READ));
  unsigned char *target = mmap(NULL, 16 * PAGE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  unsigned char *e = mremap(d, 8 * PAGE, 8 * PAGE, MREMAP_MAYMOVE | MREMAP_FIXED, target + 4 * PAGE);
  show("mremap fixed", e == target + 4 * PAGE ? 0 : -1);
  printf("  data kept %d\n", sum(e, 2 * PAGE) == kept);
  show("mremap fixed without MAYMOVE", mremap(e, PAGE, PAGE, MREMAP_FIXED, target) == MAP_FAILED ? -1 : 0);

  /* MAP_FIXED replaces the middle page of a mapping with fresh zeros; the neighbours keep their data. */
  unsigned char *f = mmap(NULL, 3 * PAGE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  memset(f, 0xab, 3 * PAGE);
  unsigned char *g = mmap(f + PAGE, PAGE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0);
  show("MAP_FIXED over the middle", g == f + PAGE ? 0 : -1);
  printf("  %x %x %x\n", f[PAGE - 1], f[PAGE], f[2 * PAGE]);
  show("MAP_FIXED unaligned", mmap(f + 1, PAGE, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0) ==
                                  MAP_FAILED ? -1 : 0);

  /* madvise is advice: accepted for mapped ranges. */
  show("madvise WILLNEED", madvise(f, 3 * PAGE, MADV_WILLNEED));
  show("madvise SEQUENTIAL", madvise(f, 3 * PAGE, MADV_SEQUENTIAL));
  show("madvise unaligned", madvise(f + 1, PAGE, MADV_WILLNEED));

  /* brk: the current break, growing, shrinking, and requests it refuses (it then returns the old break). */
  uintptr_t b0 = syscall(SYS_brk, 0);
  uintptr_t b1 = syscall(SYS_brk, b0 + 10 * PAGE + 123);
  show("brk grow", b1 == b0 + 10 * PAGE + 123 ? 0 : -1);
  ((volatile char *)b0)[10 * PAGE] = 1;
  uintptr_t b2 = syscall(SYS_brk, b0 + PAGE);
  show("brk shrink", b2 == b0 + PAGE ? 0 : -1);
  show("brk below the start", syscall(SYS_brk, 4096) == (long)b2 ? 0 : -1);
  show("brk absurd", syscall(SYS_brk, (uintptr_t)1 << 62) == (long)b2 ? 0 : -1);
  uintptr_t b3 = syscall(SYS_brk, b0 + 3 * PAGE);
  printf("  regrown page zero %d\n", ((volatile char *)b0)[2 * PAGE] == 0);
  show("brk regrow", b3 == b0 + 3 * PAGE ? 0 : -1);
  syscall(SYS_brk, b0);

  /* glibc's realloc of an mmap'd chunk grows it with mremap. */
  unsigned char *r = malloc(1 << 20);
  fill(r, 1 << 20, 3);
  long rs = sum(r, 1 << 20);
  for (long size = 2 << 20; size <= 32 << 20; size *= 2) {
    r = realloc(r, size);
    r[size - 1] = 1;
  }
  printf("realloc to 32 MiB kept %d\n", sum(r, 1 << 20) == rs);
  r = realloc(r, 1 << 20);
  printf("realloc down kept %d\n", sum(r, 1 << 20) == rs);
  free(r);
  return 0;
}
