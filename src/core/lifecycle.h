/* lifecycle.h - when tracing starts, and the single end of a run.
 *
 * tracer is inert until a producer activates it: the OpenMP runtime calling
 * ompt_start_tool, or the program using include/tracer.h. A process that does
 * neither (a shell, mpiexec, a compiler) gets no trace and no output.
 * The end runs exactly once, at whichever comes first of the OMPT finalize
 * callback, exit() and the library destructor. core/ does not know the
 * writer: the writer registers itself as the end hook. */
#ifndef TR_CORE_LIFECYCLE_H
#define TR_CORE_LIFECYCLE_H

#include <stdint.h>

typedef int (*tr_start_hook)(void);
typedef void (*tr_end_hook)(uint64_t end_ticks);

/* Starts recording; idempotent and thread-safe. Returns 1 when active. */
int tr_lifecycle_activate(const char *why);
/* Nonzero once activated (and not yet ended). */
int tr_lifecycle_active(void);
/* Runs the end hook once; later calls return at once. */
void tr_lifecycle_end(const char *why);
/* Sets *status and returns 1 when the run ends through exit() (or main's
 * return), whose status is then known; returns 0 otherwise. */
int tr_lifecycle_exit_status(int *status);
/* Sets *rank and returns 1 when a launcher (mpiexec, srun) gave this
 * process a rank in its environment (PMI_RANK, PMIX_RANK, ...). */
int tr_lifecycle_launcher_rank(long *rank);
/* Installed by the session before activation: @start runs once tracing is
 * configured (returning nonzero leaves the run untraced), @end once at the
 * end. */
void tr_lifecycle_set_hooks(tr_start_hook start, tr_end_hook end);

#endif
