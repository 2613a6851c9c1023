#define _GNU_SOURCE 1 /* dl_iterate_phdr */
#include "journal/loaded_modules.h"

#include <link.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/object_span.h"
#include "journal/journal_format.h"

static int count_loads(struct dl_phdr_info *info, size_t size, void *data)
{
    (void)size;
    *(unsigned long long *)data = info->dlpi_adds;
    return 1;
}

unsigned long long tr_loader_adds(void)
{
    unsigned long long adds = 0;
    dl_iterate_phdr(count_loads, &adds);
    return adds;
}

typedef struct payload {
    char *p;
    size_t n, cap;
    int failed, first;
} payload;

static int put(payload *out, const void *bytes, size_t n)
{
    if (out->n + n > out->cap) {
        size_t cap = out->cap ? out->cap : 4096;
        while (cap < out->n + n)
            cap *= 2;
        char *grown = realloc(out->p, cap);
        if (!grown)
            return out->failed = 1, -1;
        out->p = grown;
        out->cap = cap;
    }
    memcpy(out->p + out->n, bytes, n);
    out->n += n;
    return 0;
}

static int add_module(struct dl_phdr_info *info, size_t size, void *data)
{
    (void)size;
    payload *out = data;
    int main_program = out->first;
    out->first = 0;
    char path[4096];
    /* The main program has no name here; the vdso has no file. */
    if (main_program && !*info->dlpi_name) {
        ssize_t len = readlink("/proc/self/exe", path, sizeof path - 1);
        if (len <= 0)
            return 0;
        path[len] = 0;
    } else if (info->dlpi_name[0] == '/') {
        snprintf(path, sizeof path, "%s", info->dlpi_name);
    } else {
        return 0;
    }
    tr_journal_module m = {0};
    struct stat st;
    /* The program's own file even if another was put at its path since. */
    if (!tr_object_span(info, &m.lo, &m.hi) || stat(main_program ? "/proc/self/exe" : path, &st) ||
        !S_ISREG(st.st_mode))
        return 0;
    m.bias = info->dlpi_addr;
    m.dev = st.st_dev;
    m.ino = st.st_ino;
    m.size = (uint64_t)st.st_size;
    m.mtime_ns = (int64_t)st.st_mtim.tv_sec * 1000000000 + st.st_mtim.tv_nsec;
    if (put(out, &m, sizeof m) || put(out, path, strlen(path) + 1))
        return 1;
    return 0;
}

int tr_loaded_modules_payload(char **out, size_t *n)
{
    payload p = {0, 0, 0, 0, 1};
    dl_iterate_phdr(add_module, &p);
    if (p.failed) {
        free(p.p);
        return -1;
    }
    *out = p.p;
    *n = p.n;
    return 0;
}
