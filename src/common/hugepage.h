/* hugepage.h - large arrays backed by 2 MiB pages where the kernel offers them.
 *
 * The writer fills arrays of the whole trace once, end to end (a thread's
 * records, hash tables, sorted copies): 100,000 target regions took 31,500
 * page faults of 4 KiB, and a fault costs microseconds in a VM, a third of
 * the end-of-run write. Debian's kernels give transparent huge pages only to
 * memory that asks (THP "madvise" mode); this asks. */
#ifndef TR_COMMON_HUGEPAGE_H
#define TR_COMMON_HUGEPAGE_H

#include <stddef.h>

/* Asks for transparent huge pages for the 2 MiB-aligned part of
 * [@p, @p + @bytes), when that is 4 MiB or more; smaller blocks and kernels
 * without THP are left as they are. A hint: nothing fails, contents are
 * unchanged, and it can be called again after a realloc. */
void tr_hugepage_hint(void *p, size_t bytes);

#endif
