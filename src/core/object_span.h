/* object_span.h - the address range a loaded object's PT_LOAD segments cover.
 *
 * For dl_iterate_phdr callbacks: the OMPT host producer finds the OpenMP
 * runtime's range with it, the journal's symbol reader keeps only the
 * /proc/self/maps lines of loaded objects. Include after defining
 * _GNU_SOURCE (struct dl_phdr_info). */
#ifndef TR_CORE_OBJECT_SPAN_H
#define TR_CORE_OBJECT_SPAN_H

#include <link.h>
#include <stdint.h>

/* Sets [*lo, *hi) to the lowest and highest byte any PT_LOAD segment of the
 * object covers (gaps between segments included); 0 when it has none. */
static inline int tr_object_span(const struct dl_phdr_info *info, uint64_t *lo, uint64_t *hi)
{
    uint64_t l = UINT64_MAX, h = 0;
    for (int i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        if (ph->p_type != PT_LOAD)
            continue;
        uint64_t a = info->dlpi_addr + ph->p_vaddr;
        if (a < l)
            l = a;
        if (a + ph->p_memsz > h)
            h = a + ph->p_memsz;
    }
    *lo = l;
    *hi = h;
    return l < h;
}

/* Whether addr lies inside one of the object's PT_LOAD segments (not in a
 * gap between them). */
static inline int tr_object_holds(const struct dl_phdr_info *info, uint64_t addr)
{
    for (int i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        uint64_t a = info->dlpi_addr + ph->p_vaddr;
        if (ph->p_type == PT_LOAD && addr >= a && addr - a < ph->p_memsz)
            return 1;
    }
    return 0;
}

#endif
