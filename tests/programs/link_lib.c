/* Shared library for link_dl.c: a `declare target link` variable defined in
 * a dlopen'd offload library.  lib_run maps lib_tab (32 doubles) in a target
 * region: link map lib_tab, reference pointer written, unmap at its end. */
#include <stdint.h>
#include <stdio.h>

double lib_tab[32];
#pragma omp declare target link(lib_tab)

#pragma omp declare target
static double lib_sum(void)
{
    double r = 0;
    for (int i = 0; i < 32; i++)
        r += lib_tab[i] * 2;
    return r;
}
static uintptr_t lib_addr(void) { return (uintptr_t)&lib_tab[0]; }
#pragma omp end declare target

int lib_run(void)
{
    for (int i = 0; i < 32; i++)
        lib_tab[i] = i;
    fprintf(stderr, "addr host lib_tab=%#lx\n", (unsigned long)&lib_tab[0]);
    double r = 0;
    uintptr_t d = 0;
    #pragma omp target map(to: lib_tab) map(from: r, d)
    {
        r = lib_sum();
        d = lib_addr();
    }
    fprintf(stderr, "addr P1 lib_tab=%#lx\n", (unsigned long)d);
    return (int)r;
}
