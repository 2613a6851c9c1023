/* Ground truth for test_link.py: dlopen(argv[1]) (link_lib.c built as a
 * shared offload library) and call its lib_run, which maps its link variable
 * lib_tab.  The program itself has no link variable and no target region.
 * stdout: one deterministic result line. */
#include <dlfcn.h>
#include <stdio.h>

int main(int argc, char **argv)
{
    if (argc < 2)
        return 2;
    void *h = dlopen(argv[1], RTLD_NOW);
    if (!h) {
        fprintf(stderr, "dlopen: %s\n", dlerror());
        return 3;
    }
    int (*run)(void) = (int (*)(void))dlsym(h, "lib_run");
    if (!run)
        return 4;
    printf("link_dl: lib_run=%d\n", run());
    return 0;
}
