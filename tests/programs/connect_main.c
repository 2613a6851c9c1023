/* Ground truth for test_offload_connect.py (device 0, host offload):
 *   1. dlopen(argv[1]) = libconnect_plugin_host.so, whose host_load()
 *      dlopens "libconnect_plugin_impl.so" by bare name: found only through
 *      the host library's own RUNPATH ($ORIGIN), so a dlopen made from any
 *      other frame would miss it;
 *   2. R target regions, each map(tofrom: x[0:N]) of ints: per region alloc
 *      x, to x (N*4), kernel, from x (N*4), delete x;
 *   3. dlopen("libomp.so") by the program itself (RUNPATH of the program:
 *      the LLVM directory) and dlsym(omp_get_max_threads): the same answer
 *      with and without tracer.
 * stdout: one deterministic line. */
#include <dlfcn.h>
#include <stdio.h>

#define R 5
#define N 100

int main(int argc, char **argv)
{
    if (argc < 2)
        return 2;
    void *host = dlopen(argv[1], RTLD_NOW);
    int (*host_load)(void) = host ? (int (*)(void))dlsym(host, "host_load") : 0;
    if (!host_load) {
        fprintf(stderr, "connect: %s\n", dlerror());
        return 3;
    }
    int plugin = host_load();

    int x[N];
    for (int i = 0; i < N; i++)
        x[i] = i;
    for (int r = 0; r < R; r++) {
#pragma omp target map(tofrom : x[0:N])
        for (int i = 0; i < N; i++)
            x[i] += 1;
    }
    long sum = 0;
    for (int i = 0; i < N; i++)
        sum += x[i];

    void *omp = dlopen("libomp.so", RTLD_LAZY);
    int omp_sym = omp && dlsym(omp, "omp_get_max_threads");
    printf("connect: plugin=%d sum=%ld libomp.so=%s omp_get_max_threads=%s\n", plugin, sum,
           omp ? "loaded" : "missing", omp_sym ? "found" : "missing");
    return 0;
}
