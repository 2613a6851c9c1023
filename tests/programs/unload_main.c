/* Ground truth for test_unload.py: a program that dlopens an offload library
 * (argv[1], programs/unload_lib.c), runs its target regions, dlcloses it and
 * goes on, ROUNDS times; then runs a kernel of its own again. The sleeps let
 * the journal's periodic flush (the test sets TRACER_FLUSH_INTERVAL=20ms)
 * name events while the library is loaded and again after it is unmapped.
 * stdout: each round's results, then the number of target regions of each
 * kernel (the trace must hold exactly these). */
#include <dlfcn.h>
#include <stdio.h>
#include <unistd.h>

enum { ROUNDS = 3, N_MAIN = 5, N_FIRST = 7, N_LAST = 11 };

static int main_kernel(int base)
{
    int v = base;
#pragma omp target map(tofrom: v) /* KERNEL:main */
    v = v + 2;
    return v;
}

int main(int argc, char **argv)
{
    if (argc < 2)
        return 2;
    int total = 0;
    for (int i = 0; i < N_MAIN; i++)
        total += main_kernel(i);
    usleep(200000);
    for (int round = 0; round < ROUNDS; round++) {
        void *h = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
        if (!h) {
            fprintf(stderr, "dlopen: %s\n", dlerror());
            return 3;
        }
        int (*first)(int) = (int (*)(int))dlsym(h, "lib_first");
        int (*last)(int) = (int (*)(int))dlsym(h, "lib_last");
        if (!first || !last)
            return 4;
        int a = first(N_FIRST);
        usleep(200000);
        int b = last(N_LAST);
        if (dlclose(h))
            return 5;
        printf("unload: round %d first=%d last=%d\n", round, a, b);
        usleep(200000);
    }
    for (int i = 0; i < N_MAIN; i++)
        total += main_kernel(i);
    printf("unload: main=%d\n", total);
    printf("unload: kernels main=%d lib_first=%d lib_last=%d\n", 2 * N_MAIN, ROUNDS * N_FIRST, ROUNDS * N_LAST);
    return 0;
}
