/* offload_entry.c - the parts of an OpenMP offload entry's symbol
 * (offload_entry.h). */
#include <stdlib.h>
#include <string.h>

#include "common/offload_entry.h"

int tr_offload_entry_parse(const char *name, const char **function, size_t *function_len, int *line)
{
    size_t n = strlen(TR_OFFLOAD_ENTRY_PREFIX);
    if (strncmp(name, TR_OFFLOAD_ENTRY_PREFIX, n) != 0)
        return -1;
    const char *p = name + n;
    for (int field = 0; field < 2; field++) {
        p = strchr(p, '_');
        if (!p)
            return -1;
        p++;
    }
    const char *l = strrchr(p, '_');
    if (!l || l == p || l[1] != 'l' || !l[2])
        return -1;
    char *end;
    long v = strtol(l + 2, &end, 10);
    if (*end || v < 0 || v > 0x7fffffff)
        return -1;
    *function = p;
    *function_len = (size_t)(l - p);
    *line = (int)v;
    return 0;
}
