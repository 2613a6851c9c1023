#define _GNU_SOURCE 1
#include "common/hugepage.h"

#include <stdint.h>
#include <sys/mman.h>

#define HUGE (2u << 20)

void tr_hugepage_hint(void *p, size_t bytes)
{
#ifdef MADV_HUGEPAGE
    if (!p || bytes < 2 * HUGE)
        return;
    uintptr_t begin = ((uintptr_t)p + HUGE - 1) & ~(uintptr_t)(HUGE - 1);
    uintptr_t end = ((uintptr_t)p + bytes) & ~(uintptr_t)(HUGE - 1);
    if (end > begin)
        (void)madvise((void *)begin, end - begin, MADV_HUGEPAGE);
#else
    (void)p, (void)bytes;
#endif
}
