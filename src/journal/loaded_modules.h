/* loaded_modules.h - the objects loaded in this process, for the journal's
 * MODULES frame (journal_format.h).
 *
 * A run that dies before its consumer thread named its last code addresses
 * leaves records whose names were never written; the modules (load bias,
 * address range, file and its identity) let `tracer recover` name them from
 * the same files afterwards (journal/recover_names.h). Written by the
 * consumer thread only, never on the hot path. */
#ifndef TR_JOURNAL_LOADED_MODULES_H
#define TR_JOURNAL_LOADED_MODULES_H

#include <stddef.h>

/* How many objects the loader has loaded so far (glibc counts loads, never
 * down): a change means a module list read before may be stale. */
unsigned long long tr_loader_adds(void);

/* The MODULES payload of every object now loaded that has a file (the
 * main program through /proc/self/exe), malloc'ed into *@out (*@n bytes).
 * Returns 0, or -1 (out of memory; nothing to free). */
int tr_loaded_modules_payload(char **out, size_t *n);

#endif
