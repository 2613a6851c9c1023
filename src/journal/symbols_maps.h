/* symbols_maps.h - the module list libdwfl reads, from the loader's objects.
 *
 * dwfl_linux_proc_report reads /proc/self/maps and takes consecutive
 * mappings of one file for one module starting at the lowest. libelf maps
 * the files it reads (ELF_C_READ_MMAP), and such a mapping often lands just
 * below the library it reads, the last thing mapped: the next report then
 * starts that library a few pages early, a module with the wrong bias whose
 * addresses name nothing, and drops the old module, freeing what libdw
 * returned from it. Only mappings inside a loaded object's segments (what
 * dl_iterate_phdr says) are reported here, so a file mapped for any other
 * reason (by libelf or by the program) is never taken for a module. */
#ifndef TR_JOURNAL_SYMBOLS_MAPS_H
#define TR_JOURNAL_SYMBOLS_MAPS_H

#include <elfutils/libdwfl.h>

/* dwfl_linux_proc_report for this process, restricted as above; 0 on
 * success (then dwfl_report_end as after that call), else nonzero. */
int tr_symbols_report_loaded(Dwfl *dwfl);

#endif
