/* Page permissions as Linux enforces them for a static program. Argument: which access to try.
 *   ok        mprotect a page read-only, read it, make it writable again, write it: exits 0
 *   rodata    write to a string literal (read-only segment)
 *   readonly  write to a heap page made read-only with mprotect
 *   none      read a page made PROT_NONE
 *   stack     jump to code on the stack (not executable)
 * Each of the last four dies with SIGSEGV under Linux/qemu; the engine must stop with a memory fault. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

int main(int argc, char **argv)
{
    const char *what = argc > 1 ? argv[1] : "ok";
    char *page = aligned_alloc(4096, 8192);
    memset(page, 1, 8192);
    printf("trying %s\n", what);
    fflush(stdout);
    if (!strcmp(what, "ok")) {
        if (mprotect(page, 4096, PROT_READ) != 0)
            return 2;
        int sum = page[0] + page[4095];
        if (mprotect(page, 4096, PROT_READ | PROT_WRITE) != 0)
            return 3;
        page[0] = 5;
        printf("sum %d, now %d\n", sum, page[0]);
        return 0;
    }
    if (!strcmp(what, "rodata")) {
        volatile char *lit = (volatile char *)(uintptr_t)"a string literal";
        lit[0] = 'A';
    } else if (!strcmp(what, "readonly")) {
        mprotect(page, 4096, PROT_READ);
        ((volatile char *)page)[10] = 2;
    } else if (!strcmp(what, "none")) {
        mprotect(page, 4096, PROT_NONE);
        printf("%d\n", ((volatile char *)page)[10]);
    } else if (!strcmp(what, "stack")) {
        uint32_t code[2] = {0x00008067u /* ret */, 0};
        void (*fn)(void) = (void (*)(void))(uintptr_t)code;
        __asm__ volatile("fence.i" ::: "memory");
        fn();
    }
    puts("not stopped");
    return 1;
}
