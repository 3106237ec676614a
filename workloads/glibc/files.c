/* The Linux file calls as an ordinary program uses them (tests/test_syscalls.py). Run in a folder holding in/
 * (inputs: a.txt, sub/b.txt, link -> sub/b.txt) and an empty out/, with standard input from a file.
 *
 *   files compare   calls that behave the same under qemu-riscv64 on the host's folder and under kvsim's tree:
 *                   results, error numbers, and what is written under out/ (compared by the test)
 *   files sandbox   kvsim only: the mapped tree is read-only and nothing outside it can be reached
 *   files rofault   writes into a read-only file mapping: the program is killed (SIGSEGV; under kvsim a fault) */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

static void show(const char *what, long r) {
  if (r < 0)
    printf("%-28s -1 %s\n", what, strerrorname_np(errno));
  else
    printf("%-28s %ld\n", what, r);
}

static int cmp(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

static void list(const char *dir) {
  DIR *d = opendir(dir);
  if (!d) {
    show("opendir", -1);
    return;
  }
  char *names[64];
  int n = 0;
  struct dirent *e;
  while ((e = readdir(d)) && n < 64) names[n++] = strdup(e->d_name);
  closedir(d);
  qsort(names, n, sizeof names[0], cmp);
  printf("%s:", dir);
  for (int i = 0; i < n; i++) printf(" %s", names[i]), free(names[i]);
  printf("\n");
}

static void compare(void) {
  char buf[256];
  show("open missing", open("in/missing.txt", O_RDONLY));
  show("read bad fd", read(77, buf, 1));
  show("close bad fd", close(77));
  show("open dir for writing", open("in", O_WRONLY));
  show("open through a file", open("in/a.txt/x", O_RDONLY));

  int fd = open("in/a.txt", O_RDONLY);
  show("open in/a.txt", fd);
  show("read 5", read(fd, buf, 5));
  printf("  %.5s\n", buf);
  show("lseek cur +2", lseek(fd, 2, SEEK_CUR));
  show("lseek end -4", lseek(fd, -4, SEEK_END));
  show("read rest", read(fd, buf, sizeof buf));
  show("pread 3 at 1", pread(fd, buf, 3, 1));
  printf("  %.3s\n", buf);
  show("write to O_RDONLY", write(fd, "x", 1));
  struct stat st;
  show("fstat", fstat(fd, &st));
  printf("  size %ld regular %d\n", (long)st.st_size, S_ISREG(st.st_mode));
  show("close", close(fd));

  show("stat sub/b.txt", stat("in/sub/b.txt", &st));
  printf("  size %ld dir %d\n", (long)st.st_size, S_ISDIR(st.st_mode));
  show("lstat link", lstat("in/link", &st));
  printf("  link %d\n", S_ISLNK(st.st_mode));
  ssize_t n = readlink("in/link", buf, sizeof buf);
  show("readlink", n);
  printf("  %.*s\n", (int)(n > 0 ? n : 0), buf);
  show("readlink of a file", readlink("in/a.txt", buf, sizeof buf));
  show("access R_OK", access("in/a.txt", R_OK));
  show("access missing", access("in/nope", F_OK));
  show("stat dir", stat("in/sub", &st));
  printf("  dir %d\n", S_ISDIR(st.st_mode));
  list("in");
  list("in/sub");

  fd = open("out/new.txt", O_WRONLY | O_CREAT | O_TRUNC, 0644);
  show("create out/new.txt", fd);
  show("write", write(fd, "first line\nsecond line\n", 23));
  show("pwrite at 6", pwrite(fd, "LINE", 4, 6));
  show("ftruncate 30", ftruncate(fd, 30));
  show("fsync", fsync(fd));
  show("fdatasync", fdatasync(fd));
  show("read from O_WRONLY", read(fd, buf, 1));
  show("close", close(fd));
  show("O_EXCL on existing", open("out/new.txt", O_WRONLY | O_CREAT | O_EXCL, 0644));
  fd = open("out/new.txt", O_WRONLY | O_APPEND);
  show("open O_APPEND", fd);
  show("lseek set 0", lseek(fd, 0, SEEK_SET));
  show("append", write(fd, "tail\n", 5));
  show("F_GETFL has O_APPEND", (fcntl(fd, F_GETFL) & O_APPEND) != 0);
  close(fd);
  fd = open("out/new.txt", O_RDONLY);
  n = read(fd, buf, sizeof buf);
  show("read back", n);
  for (ssize_t i = 0; i < n; i++) buf[i] = buf[i] ? buf[i] : '.';
  printf("  %.*s|\n", (int)n, buf);
  close(fd);

  show("mkdir out/d", mkdir("out/d", 0755));
  show("mkdir again", mkdir("out/d", 0755));
  show("rename into out/d", rename("out/new.txt", "out/d/moved.txt"));
  show("rename missing", rename("out/none", "out/x"));
  show("rmdir non-empty", rmdir("out/d"));
  show("unlink a dir", unlink("out/d"));
  fd = open("out/d/tmp.txt", O_RDWR | O_CREAT, 0600);
  show("create tmp", fd);
  show("write tmp", write(fd, "temporary", 9));
  show("unlink open file", unlink("out/d/tmp.txt"));
  show("pread unlinked", pread(fd, buf, 4, 0));
  printf("  %.4s\n", buf);
  close(fd);
  show("stat unlinked", stat("out/d/tmp.txt", &st));
  show("chdir out", chdir("out"));
  fd = open("rel.txt", O_WRONLY | O_CREAT, 0644);
  show("create relative", fd);
  show("write", write(fd, "relative\n", 9));
  close(fd);
  show("chdir ..", chdir(".."));
  int dirfd = open("out/d", O_RDONLY | O_DIRECTORY);
  show("open dir", dirfd);
  fd = openat(dirfd, "at.txt", O_WRONLY | O_CREAT, 0644);
  show("openat dir", fd);
  show("write", write(fd, "at\n", 3));
  close(fd);
  show("renameat", renameat(dirfd, "at.txt", AT_FDCWD, "out/at2.txt"));
  show("unlinkat missing", unlinkat(dirfd, "at.txt", 0));
  show("mkdirat", mkdirat(dirfd, "e", 0755));
  show("rmdir empty via unlinkat", unlinkat(dirfd, "e", AT_REMOVEDIR));
  close(dirfd);
  list("out");
  list("out/d");

  fflush(stdout);
  int d = dup(1);
  show("dup stdout", d);
  show("write to dup", write(d, "via dup\n", 8));
  show("F_GETFD", fcntl(d, F_GETFD));
  show("F_SETFD", fcntl(d, F_SETFD, FD_CLOEXEC));
  show("F_GETFD", fcntl(d, F_GETFD));
  show("dup3 cloexec", dup3(1, 20, O_CLOEXEC));
  show("write to 20", write(20, "via 20\n", 7));
  show("F_DUPFD 30", fcntl(1, F_DUPFD, 30));
  show("dup2 onto itself", dup2(d, d));
  close(d), close(20), close(30);
  fflush(stdout);

  int p[2];
  show("pipe2", pipe2(p, O_CLOEXEC));
  show("write pipe", write(p[1], "piped bytes", 11));
  show("read pipe", read(p[0], buf, 5));
  printf("  %.5s\n", buf);
  close(p[1]);
  show("read rest", read(p[0], buf, sizeof buf));
  show("read at end", read(p[0], buf, sizeof buf));
  show("lseek pipe", lseek(p[0], 0, SEEK_SET));
  close(p[0]);

  FILE *f = fopen("out/log.txt", "w");
  show("fopen w", f ? 0 : -1);
  for (int i = 0; i < 200; i++) fprintf(f, "line %d of the log %x\n", i, i * 2654435761u);
  fclose(f);
  f = fopen("out/log.txt", "r");
  long lines = 0, sum = 0;
  while (fgets(buf, sizeof buf, f)) lines++, sum += strlen(buf);
  fclose(f);
  printf("log: %ld lines %ld bytes\n", lines, sum);

  long total = 0, check = 0;
  while ((n = read(0, buf, sizeof buf)) > 0)
    for (ssize_t i = 0; i < n; i++) total++, check = check * 31 + (unsigned char)buf[i];
  printf("stdin: %ld bytes, hash %ld\n", total, check);

  fd = open("in/a.txt", O_RDONLY);
  char *map = mmap(NULL, 4096, PROT_READ, MAP_PRIVATE, fd, 0);
  show("mmap file", map == MAP_FAILED ? -1 : 0);
  if (map != MAP_FAILED) {
    /* Past the end of the file, inside its last page: zeros. */
    printf("  %.10s|%d\n", map, map[100]);
    show("munmap", munmap(map, 4096));
  }
  show("mmap bad fd", mmap(NULL, 4096, PROT_READ, MAP_PRIVATE, 55, 0) == MAP_FAILED ? -1 : 0);
  show("mmap odd offset", mmap(NULL, 4096, PROT_READ, MAP_PRIVATE, fd, 100) == MAP_FAILED ? -1 : 0);
  close(fd);
  printf("done\n");
}

static void sandbox(void) {
  show("open /etc/passwd", open("/etc/passwd", O_RDONLY));
  show("open ../../../etc/passwd", open("../../../../../etc/passwd", O_RDONLY));
  show("open in/../../../etc/passwd", open("in/../../../etc/passwd", O_RDONLY));
  show("open link out of the tree", open("in/escape", O_RDONLY));
  show("open in/a.txt for writing", open("in/a.txt", O_WRONLY));
  show("create in in/", open("in/new", O_WRONLY | O_CREAT, 0644));
  show("unlink in/a.txt", unlink("in/a.txt"));
  show("mkdir in/x", mkdir("in/x", 0755));
  show("rename in/a.txt", rename("in/a.txt", "out/a.txt"));
  show("access W_OK in/a.txt", access("in/a.txt", W_OK));
  show("access W_OK out", access("out", W_OK));
}

static void rofault(void) {
  int fd = open("in/a.txt", O_RDONLY);
  char *map = mmap(NULL, 4096, PROT_READ, MAP_PRIVATE, fd, 0);
  printf("mapped %d\n", map != MAP_FAILED);
  fflush(stdout);
  map[0] = 'X';
  printf("wrote into a read-only mapping\n");
}

int main(int argc, char **argv) {
  const char *mode = argc > 1 ? argv[1] : "compare";
  if (!strcmp(mode, "compare"))
    compare();
  else if (!strcmp(mode, "sandbox"))
    sandbox();
  else if (!strcmp(mode, "rofault"))
    rofault();
  else
    return 2;
  return 0;
}
