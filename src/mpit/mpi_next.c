/* mpi_next.c - see mpi_next.h. Runs once per wrapped function, at its
 * first call; never on the hot path. */
#define _GNU_SOURCE 1 /* RTLD_NEXT, dl_iterate_phdr */
#include "mpit/mpi_next.h"

#include <dlfcn.h>
#include <link.h>
#include <stdint.h>
#include <string.h>

#include "core/log.h"

struct search {
    const char *name;
    void *self, *found;
};

static int search_object(struct dl_phdr_info *info, size_t size, void *arg)
{
    (void)size;
    struct search *s = arg;
    if (!info->dlpi_name || !info->dlpi_name[0])
        return 0;
    void *h = dlopen(info->dlpi_name, RTLD_LAZY | RTLD_NOLOAD);
    if (!h)
        return 0;
    void *f = dlsym(h, s->name);
    dlclose(h);
    Dl_info di;
    if (f && f != s->self && dladdr(f, &di) && di.dli_fbase != (void *)(uintptr_t)info->dlpi_addr)
        f = 0; /* found through a dependency, not defined here */
    if (f && f != s->self) {
        s->found = f;
        return 1;
    }
    return 0;
}

void *tr_mpi_find_next(const char *name, const char *pname, void *self)
{
    void *f = dlsym(RTLD_NEXT, name);
    if (!f || f == self)
        f = dlsym(RTLD_NEXT, pname);
    if (!f) {
        struct search s = {pname, self, 0};
        dl_iterate_phdr(search_object, &s);
        f = s.found;
    }
    if (!f)
        tr_log("cannot find the MPI library's %s; returning an error to the application", name);
    return f;
}
