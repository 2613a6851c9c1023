#define _GNU_SOURCE 1 /* dl_iterate_phdr, open_memstream */
#include "journal/symbols_maps.h"

#include "core/object_span.h"

#include <inttypes.h>
#include <link.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct span {
    uint64_t lo, hi;
} span;

typedef struct spans {
    span *s;
    size_t n, cap;
    int failed;
} spans;

/* The address range an object's PT_LOAD segments cover, page-aligned. */
static int add_object(struct dl_phdr_info *info, size_t size, void *data)
{
    (void)size;
    spans *all = data;
    uint64_t lo, hi;
    if (!tr_object_span(info, &lo, &hi))
        return 0;
    if (all->n == all->cap) {
        size_t cap = all->cap ? 2 * all->cap : 64;
        span *grown = realloc(all->s, cap * sizeof *grown);
        if (!grown) {
            all->failed = 1;
            return 1;
        }
        all->s = grown;
        all->cap = cap;
    }
    all->s[all->n++] = (span){lo & ~(uint64_t)4095, hi};
    return 0;
}

static int inside_an_object(const spans *all, uint64_t lo, uint64_t hi)
{
    for (size_t i = 0; i < all->n; i++)
        if (lo < all->s[i].hi && hi > all->s[i].lo)
            return 1;
    return 0;
}

/* A maps line names a file when its sixth field is a path; "[heap]",
 * "[vdso]" and anonymous lines are passed on as they are. */
static int keep_line(const spans *all, const char *line)
{
    uint64_t lo, hi;
    int path_at = 0;
    if (sscanf(line, "%" SCNx64 "-%" SCNx64 " %*s %*s %*s %*s %n", &lo, &hi, &path_at) < 2 || !path_at)
        return 1;
    return line[path_at] != '/' || inside_an_object(all, lo, hi);
}

int tr_symbols_report_loaded(Dwfl *dwfl)
{
    spans all = {0};
    dl_iterate_phdr(add_object, &all);
    FILE *maps = fopen("/proc/self/maps", "re");
    char *text = 0, *line = 0;
    size_t text_len = 0, line_cap = 0;
    FILE *kept = maps && !all.failed ? open_memstream(&text, &text_len) : 0;
    int rc = -1;
    if (kept) {
        while (getline(&line, &line_cap, maps) > 0)
            if (keep_line(&all, line))
                fputs(line, kept);
        if (fclose(kept) == 0) {
            FILE *in = fmemopen(text, text_len, "r");
            if (in) {
                rc = dwfl_linux_proc_maps_report(dwfl, in);
                fclose(in);
            }
        }
    }
    if (maps)
        fclose(maps);
    free(line);
    free(text);
    free(all.s);
    return rc;
}
