/* symbols.h - code addresses to names, for region names at the end of a run.
 *
 * A target construct's codeptr_ra is resolved (libdw) to its function and
 * source line. The offload entry table of the module that holds it
 * ("omp_offloading_entries", LLVM <= 19, 32-byte entries;
 * "llvm_offload_entries", LLVM 20+, 56-byte entries) lists the outlined kernels, named
 * __omp_offloading_<dev>_<file>_<function>_l<line>; matching function and
 * line gives the kernel's symbol. Before that, the machine code just before
 * codeptr_ra is searched for the kernel's region id (exact even at -O2).
 * A construct with nowait runs in a task whose entry function the compiler
 * made (.omp_task_entry.<n>); the function the user wrote is the one that
 * takes that entry's address to create the task, found by scanning the
 * module's code for the reference.
 *
 * The consumer thread reads this process's modules and memory; `tracer
 * recover` (journal/recover_names.h) reads the same from a dead run's files
 * (tr_symbols_open_files), through the same code, so a name is the same
 * either way. */
#ifndef TR_WRITER_SYMBOLS_H
#define TR_WRITER_SYMBOLS_H

#include <stddef.h>
#include <stdint.h>

typedef struct tr_symbols tr_symbols;

/* Texts are cut to TR_SYMBOL_TEXT - 1 bytes, the journal's limit. */
#define TR_SYMBOL_TEXT 1001

/* What the journal keeps about a target construct, copied out of libdw. */
typedef struct tr_code_description {
    char function[TR_SYMBOL_TEXT]; /* the calling function; "" when unknown */
    char file[TR_SYMBOL_TEXT];     /* its source file as the line table names it; "" when unknown */
    char kernel[TR_SYMBOL_TEXT];   /* the outlined kernel's symbol; "" when unknown */
    /* When the call is in a compiler-made task entry (".omp_task_entry.",
     * a deferred target task: nowait), the function that creates that task
     * (the one whose code takes the entry's address); "" otherwise or when
     * not found. */
    char task_of[TR_SYMBOL_TEXT];
    int line;                      /* the call's source line; 0 when unknown */
    int kernel_line;               /* the line in the kernel's symbol (the construct's); 0 when unknown */
} tr_code_description;

/* This process's modules, read again as the loader loads more. */
tr_symbols *tr_symbols_open(void);

/* A module's file as a process had it loaded: opened by the caller (who
 * checked it is the file that process loaded), at its load bias. */
typedef struct tr_symbols_file {
    const char *path;
    int fd;        /* duplicated: the caller keeps and closes its own */
    uint64_t bias; /* dlpi_addr */
} tr_symbols_file;

/* Offline: names from @n files (a run gone, `tracer recover`), as that
 * process would have named them; the process's memory is read from the
 * files' loadable segments, relocated. NULL when out of memory. */
tr_symbols *tr_symbols_open_files(const tr_symbols_file *files, size_t n);
void tr_symbols_close(tr_symbols *s);
/* Describes the target construct whose call returns to @codeptr_ra (s may
 * be NULL: all unknown). Nothing in @out points into @s: a later call may
 * read the module list again and free what libdw gave before. */
void tr_symbols_describe(tr_symbols *s, uint64_t codeptr_ra, tr_code_description *out);

typedef struct tr_variable {
    const char *name; /* owned by tr_symbols, valid until its next call */
    uint64_t base, size;
    uint64_t ref_ptr; /* declare target link: host address of its reference pointer; 0 otherwise */
} tr_variable;

/* The named global (an ELF object symbol) that holds host address @addr;
 * returns 1 and fills @out, or 0. Libraries loaded since the last call are
 * found too. */
int tr_symbols_variable(tr_symbols *s, uint64_t addr, tr_variable *out);

#endif
