/* Ground truth for test_unload_reuse.py: a plug-in program. It loads four
 * offload libraries in turn (argv[1..4], programs/unload_reuse_lib.c built
 * as olib1..olib4), runs the one target region of each (in olibK_run)
 * K + 1 times, and unloads each before it loads the next. Each library is
 * mapped where the one before it was: the same code addresses name four
 * different functions, one after the other.
 * stdout: each library's load address and result, then the number of
 * target regions each ran (the trace must name exactly these). With
 * argv[5] = "kill" it then dies of SIGKILL (tracer recover's case). */
#define _GNU_SOURCE 1 /* dlinfo */
#include <dlfcn.h>
#include <link.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>

enum { LIBS = 4 };

__attribute__((noinline)) static int main_kernel(int base)
{
    int v = base;
#pragma omp target map(tofrom: v)
    v = v + 2;
    return v;
}

int main(int argc, char **argv)
{
    if (argc < 1 + LIBS)
        return 2;
    /* The offload runtime is the program's own, loaded before any plug-in. */
    int total = main_kernel(1);
    for (int k = 1; k <= LIBS; k++) {
        void *h = dlopen(argv[k], RTLD_NOW | RTLD_LOCAL);
        if (!h) {
            fprintf(stderr, "dlopen: %s\n", dlerror());
            return 3;
        }
        char name[32];
        snprintf(name, sizeof name, "olib%d_run", k);
        int (*run)(int) = (int (*)(int))dlsym(h, name);
        struct link_map *map = 0;
        if (!run || dlinfo(h, RTLD_DI_LINKMAP, &map) || !map)
            return 4;
        int got = run(k + 1);
        printf("olib: lib %d base=%#lx run=%#lx result=%d\n", k, (unsigned long)map->l_addr,
               (unsigned long)run - (unsigned long)map->l_addr, got);
        fflush(stdout);
        if (dlclose(h))
            return 5;
    }
    printf("olib: main=%d\n", total);
    printf("olib: regions");
    for (int k = 1; k <= LIBS; k++)
        printf(" olib%d_run=%d", k, k + 1);
    printf("\n");
    fflush(stdout);
    if (argc > 1 + LIBS && !strcmp(argv[1 + LIBS], "kill"))
        raise(SIGKILL);
    return 0;
}
