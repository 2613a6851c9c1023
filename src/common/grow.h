/* grow.h - room for one more element in an array that doubles.
 *
 * The writer's arrays grow with the trace (items, copies, strings); each
 * used to carry its own copy of this. Large ones ask for transparent huge
 * pages (hugepage.h): on a VM a 4 KiB page fault costs microseconds. */
#ifndef TR_COMMON_GROW_H
#define TR_COMMON_GROW_H

#include <stddef.h>
#include <stdlib.h>

#include "common/hugepage.h"

/* Makes *@p (of *@cap elements of @size bytes, @n in use) hold at least
 * n + 1, doubling, @first elements at first. Returns 0, or -1 out of memory
 * (*@p and *@cap unchanged). */
static inline int tr_grow(void **p, size_t *cap, size_t n, size_t size, size_t first)
{
    if (n < *cap)
        return 0;
    size_t c = *cap ? 2 * *cap : first;
    void *q = realloc(*p, c * size);
    if (!q)
        return -1;
    tr_hugepage_hint(q, c * size);
    *p = q;
    *cap = c;
    return 0;
}

#endif
