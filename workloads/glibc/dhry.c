/* A Dhrystone-like integer benchmark (written here, not the original): record copies, string compares and
 * copies, enumerations, array indexing and small procedure calls in a loop, with a checksum so the result is
 * checked and nothing is optimised away. Argument: iterations (default 200000). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef enum { IDENT_1, IDENT_2, IDENT_3, IDENT_4, IDENT_5 } Enumeration;

typedef struct Record {
    struct Record *next;
    Enumeration discr;
    Enumeration enum_comp;
    int int_comp;
    char str_comp[40];
} Record;

static int int_glob;
static char char_glob_1, char_glob_2;
static int arr_1[50];
static int arr_2[50][50];
static Record *ptr_glob;

static __attribute__((noinline)) Enumeration func_1(char a, char b)
{
    return a == b ? IDENT_2 : IDENT_1;
}

static __attribute__((noinline)) int func_2(const char *s1, const char *s2)
{
    int k = 2;
    char c = 'A';
    while (k <= 2) {
        if (func_1(s1[k], s2[k + 1]) == IDENT_1) {
            c = 'A';
            k++;
        }
    }
    if (c >= 'W' && c < 'Z')
        k = 7;
    if (c == 'R')
        return 1;
    return strcmp(s1, s2) > 0 ? (int_glob = k + 7, 1) : 0;
}

static __attribute__((noinline)) void proc_7(int a, int b, int *out)
{
    *out = b + a + 2;
}

static __attribute__((noinline)) void proc_8(int *a1, int (*a2)[50], int x, int y)
{
    int loc = x + 5;
    a1[loc] = y;
    a1[loc + 1] = a1[loc];
    a1[loc + 30] = loc;
    for (int i = loc; i <= loc + 1; i++)
        a2[loc][i] = loc;
    a2[loc][loc - 1] += 1;
    a2[loc + 20][loc] = a1[loc];
    int_glob = 5;
}

static __attribute__((noinline)) void proc_1(Record *p)
{
    Record *next = p->next;
    *next = *ptr_glob;
    p->int_comp = 5;
    next->int_comp = p->int_comp;
    next->next = p->next;
    proc_7(next->int_comp, 10, &next->int_comp);
    if (next->discr == IDENT_1) {
        next->int_comp = 6;
        next->enum_comp = p->enum_comp == IDENT_3 ? IDENT_2 : IDENT_4;
    } else {
        *p = *next;
    }
}

int main(int argc, char **argv)
{
    long runs = argc > 1 ? atol(argv[1]) : 200000;
    Record *a = malloc(sizeof *a), *b = malloc(sizeof *b);
    ptr_glob = a;
    a->next = b;
    a->discr = IDENT_1;
    a->enum_comp = IDENT_3;
    a->int_comp = 40;
    strcpy(a->str_comp, "DHRYSTONE-LIKE PROGRAM, SOME STRING");
    char s1[40], s2[40];
    strcpy(s1, "DHRYSTONE-LIKE PROGRAM, 1'ST STRING");
    unsigned long check = 0;
    for (long run = 1; run <= runs; run++) {
        int i1 = 2, i2 = 3, i3;
        strcpy(s2, "DHRYSTONE-LIKE PROGRAM, 2'ND STRING");
        char_glob_1 = 'A';
        char_glob_2 = 'B';
        int boolean = !func_2(s1, s2);
        while (i1 < i2) {
            i3 = 5 * i1 - i2;
            proc_7(i1, i2, &i3);
            i1++;
        }
        proc_8(arr_1, arr_2, i1, i3);
        proc_1(ptr_glob);
        for (char c = 'A'; c <= char_glob_2; c++)
            if (func_1(c, 'C') == IDENT_2)
                i3 = run & 7;
        i2 = i2 * i1;
        i1 = i2 / i3 ? i2 / (i3 ? i3 : 1) : 1;
        i2 = 7 * (i2 - i3) - i1;
        check = check * 31 + (unsigned)(i1 + i2 + i3 + int_glob + boolean + ptr_glob->int_comp + arr_2[8][7]);
    }
    printf("dhrystone-like: %ld runs, checksum %016lx, arr_2[8][7] = %d\n", runs, check, arr_2[8][7]);
    return 0;
}
