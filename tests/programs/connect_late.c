/* Ground truth for test_offload_connect.py, case e: a program without
 * OpenMP (no libomp, no libomptarget at start-up) dlopens an offload library,
 * as a Python interpreter loads an extension, and calls its lib_run: R
 * target regions, each map(tofrom: x[0:N]) of ints (see connect_lib.c).
 * stdout: one deterministic line. */
#include <dlfcn.h>
#include <stdio.h>

int main(int argc, char **argv)
{
    if (argc < 2)
        return 2;
    void *lib = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
    long (*run)(void) = lib ? (long (*)(void))dlsym(lib, "lib_run") : 0;
    if (!run) {
        fprintf(stderr, "connect_late: %s\n", dlerror());
        return 3;
    }
    printf("connect_late: sum=%ld\n", run());
    return 0;
}
