/* symbols.h - code addresses to names, for region names at the end of a run.
 *
 * A target construct's codeptr_ra is resolved (libdw) to its function and
 * source line. The offload entry table of the module that holds it
 * ("omp_offloading_entries", LLVM <= 19, 32-byte entries;
 * "llvm_offload_entries", LLVM 20+, 56-byte entries) lists the outlined kernels, named
 * __omp_offloading_<dev>_<file>_<function>_l<line>; matching function and
 * line gives the kernel's symbol. Before that, the machine code just before
 * codeptr_ra is searched for the kernel's region id (exact even at -O2). */
#ifndef TR_WRITER_SYMBOLS_H
#define TR_WRITER_SYMBOLS_H

#include <stdint.h>

typedef struct tr_symbols tr_symbols;

typedef struct tr_code_location {
    const char *function; /* NULL when unknown; owned by tr_symbols */
    const char *file;     /* full path, NULL when unknown */
    int line;             /* 0 when unknown */
} tr_code_location;

tr_symbols *tr_symbols_open(void);
void tr_symbols_close(tr_symbols *s);
/* Location of the call that returns to @codeptr_ra. */
tr_code_location tr_symbols_locate(tr_symbols *s, uint64_t codeptr_ra);
/* Outlined kernel symbol for the target construct at @codeptr_ra, or NULL. */
const char *tr_symbols_kernel_name(tr_symbols *s, uint64_t codeptr_ra);
/* Source line encoded in that kernel's symbol (the construct's line), or 0. */
int tr_symbols_kernel_line(tr_symbols *s, uint64_t codeptr_ra);

typedef struct tr_variable {
    const char *name; /* owned by tr_symbols */
    uint64_t base, size;
    uint64_t ref_ptr; /* declare target link: host address of its reference pointer; 0 otherwise */
} tr_variable;

/* The named global (an ELF object symbol) that holds host address @addr;
 * returns 1 and fills @out, or 0. Libraries loaded since the last call are
 * found too. */
int tr_symbols_variable(tr_symbols *s, uint64_t addr, tr_variable *out);

#endif
