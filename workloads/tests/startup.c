/* The Linux initial stack as the start-up code sees it (workloads/ABI.md, "Start-up"): argc, every argument
 * after argv[0] (whose path differs between runners), every environment string, the NULL terminators, sp
 * alignment, and the auxiliary vector entries the ABI promises (AT_PAGESZ, AT_PHDR, AT_PHNUM, AT_ENTRY,
 * AT_RANDOM). tests/test_qemu_diff.py also runs it with arguments and an environment. */
#include "common.h"

#define AT_NULL 0
#define AT_PHDR 3
#define AT_PHNUM 5
#define AT_PAGESZ 6
#define AT_ENTRY 9
#define AT_RANDOM 25

extern char _start[];

int main(int argc, char **argv, char **envp) {
    printf("argc %d\n", argc);
    for (int i = 1; i < argc; i++)
        printf("argv[%d] = \"%s\" (%zu bytes)\n", i, argv[i], strlen(argv[i]));
    printf("argv[argc] is NULL: %d\n", argv[argc] == 0);
    /* Printed sorted: qemu-user hands the environment to the guest in reverse order (Linux keeps it). */
    int n = 0;
    while (envp[n])
        n++;
    const char *sorted[64];
    int ns = n < 64 ? n : 64;
    for (int i = 0; i < ns; i++) {
        int j = i;
        for (; j > 0 && strcmp(sorted[j - 1], envp[i]) > 0; j--)
            sorted[j] = sorted[j - 1];
        sorted[j] = envp[i];
    }
    printf("envc %d\n", n);
    for (int i = 0; i < ns; i++)
        printf("env %s\n", sorted[i]);
    printf("envp follows argv: %d\n", envp == argv + argc + 1);
    uint64_t *aux = (uint64_t *)(envp + n + 1);
    uint64_t pagesz = 0, phdr = 0, phnum = 0, entry = 0, random = 0;
    for (; aux[0] != AT_NULL; aux += 2) {
        switch (aux[0]) {
        case AT_PAGESZ: pagesz = aux[1]; break;
        case AT_PHDR: phdr = aux[1]; break;
        case AT_PHNUM: phnum = aux[1]; break;
        case AT_ENTRY: entry = aux[1]; break;
        case AT_RANDOM: random = aux[1]; break;
        }
    }
    printf("AT_PAGESZ %lu AT_PHNUM %lu AT_PHDR %lx AT_ENTRY is _start %d\n", pagesz, phnum, phdr,
           entry == (uint64_t)_start);
    /* The phdrs AT_PHDR points at describe this program: the first PT_LOAD's p_vaddr and the entry check. */
    const uint32_t *ph = (const uint32_t *)phdr;
    int first_load = -1;
    for (uint64_t i = 0; phdr && i < phnum; i++)
        if (ph[i * 14] == 1 && first_load < 0)      /* Elf64_Phdr is 56 bytes = 14 words; p_type first */
            first_load = (int)i;
    printf("first PT_LOAD index %d vaddr %lx\n", first_load,
           first_load >= 0 ? *(const uint64_t *)(ph + first_load * 14 + 4) : 0);
    /* AT_RANDOM: 16 bytes on the initial stack, above argv; their values differ by design. */
    printf("AT_RANDOM above argv: %d\n", random > (uint64_t)argv);
    volatile uint8_t sink = 0;
    for (int i = 0; i < 16 && random; i++)
        sink ^= ((volatile uint8_t *)random)[i];
    (void)sink;
    long sp;
    __asm__ volatile("mv %0, sp" : "=r"(sp));
    printf("sp 16-byte aligned in main: %d\n", (sp & 15) == 0);
    return argc;
}
