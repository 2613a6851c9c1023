/* mpi_next.h - finding the definition of an MPI function that one of
 * libtracer.so's own MPI_ wrappers forwards to.
 *
 * Each wrapper forwards to the next definition of the same MPI_ name
 * (RTLD_NEXT): another PMPI tool preloaded after tracer, or the MPI library
 * itself, so tools stack. PMPI_ is the fallback, and when the MPI was
 * dlopen'ed privately (RTLD_LOCAL, as Python's mpi4py does) the loaded
 * objects are searched.
 *
 * Included by the files that define MPI_ wrappers: mpit/mpit_interpose.c
 * (MPI_T bindings) and job/job_interpose.c (the job's life cycle). */
#ifndef TR_MPIT_MPI_NEXT_H
#define TR_MPIT_MPI_NEXT_H

#include <stdint.h>

/* The definition of @name (else @pname) that tracer's own @self wraps, or
 * NULL after one tracer: line. */
void *tr_mpi_find_next(const char *name, const char *pname, void *self);

/* At the top of the wrapper @fn of type @type: declares `next`, the
 * definition it forwards to, found once; returns MPI_ERR_OTHER without one. */
#define TR_MPI_NEXT(fn, type)                                                                                      \
    static __typeof__(type) next_##fn;                                                                            \
    __typeof__(type) next = __atomic_load_n(&next_##fn, __ATOMIC_ACQUIRE);                                        \
    if (!next) {                                                                                                  \
        next = (type)tr_mpi_find_next(#fn, "P" #fn, (void *)fn);                                                  \
        if (!next)                                                                                                \
            return 16; /* MPI_ERR_OTHER in both families */                                                       \
        __atomic_store_n(&next_##fn, next, __ATOMIC_RELEASE);                                                     \
    }

/* An MPI handle of either family, passed through untouched: the x86-64 and
 * AArch64 calling conventions pass MPICH's int handles and Open MPI's
 * pointer handles alike in a 64-bit word. */
typedef uint64_t tr_mpi_word;

#define TR_MPI_EXPORT __attribute__((visibility("default")))

#endif
