/* A library that loads its own plugin by bare name, relative to itself
 * (RUNPATH $ORIGIN): glibc searches with the RUNPATH of dlopen's caller, so
 * this works only while the call really comes from here
 * (test_offload_connect.py). */
#include <dlfcn.h>
#include <stdio.h>

int host_load(void)
{
    void *impl = dlopen("libconnect_plugin_impl.so", RTLD_NOW);
    int (*value)(void) = impl ? (int (*)(void))dlsym(impl, "plugin_value") : 0;
    if (!value) {
        fprintf(stderr, "host_load: %s\n", dlerror());
        return -1;
    }
    return value();
}
