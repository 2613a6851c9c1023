/* Ground truth for test_loader_lock.py: dlopens programs/loader_lock_lib.c
 * (argv[1]), whose constructor and destructor run target regions under the
 * loader's lock, then dlcloses it. stdout: what each ran, and the number of
 * target regions the trace must hold. */
#include <dlfcn.h>
#include <stdio.h>

int main(int argc, char **argv)
{
    if (argc < 2)
        return 2;
    void *h = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
    if (!h) {
        fprintf(stderr, "dlopen: %s\n", dlerror());
        return 3;
    }
    int (*regions)(void) = (int (*)(void))dlsym(h, "lib_regions");
    if (!regions)
        return 4;
    int n = regions();
    if (dlclose(h))
        return 5;
    printf("loader_lock: kernels ctor_dtor=%d\n", n);
    return 0;
}
