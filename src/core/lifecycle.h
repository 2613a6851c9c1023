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
 * process a rank in its environment (PMI_RANK, PMIX_RANK, ...), as the
 * environment was at the first call (made at activation, before MPI_Init). */
int tr_lifecycle_launcher_rank(long *rank);
/* Which image of this process this is: 0 for the first, N after the Nth
 * exec of a traced image (told by __TRACER_EXEC, which the exec wrappers put
 * in the new environment and the new image removes before the program's
 * code runs). Names the output directory. */
unsigned tr_lifecycle_exec_sequence(void);
/* Before this process replaces its image (src/session/exec.c): with @end,
 * ends the run (the trace is written as at exit) when this image is tracing;
 * returns the sequence number to hand to the new image (0: none; a forked
 * or vforked child of this image is a process of its own and ends nothing).
 * Async-signal-safe without @end. */
unsigned tr_lifecycle_before_exec(int end);
/* The exec failed after tr_lifecycle_before_exec ended the run: one line
 * says this process is no longer traced (and no later line counts late
 * events). @err is the exec's errno. */
void tr_lifecycle_exec_failed(int err);
/* Installed by the session before activation: @start runs once tracing is
 * configured (returning nonzero leaves the run untraced), @end once at the
 * end. */
void tr_lifecycle_set_hooks(tr_start_hook start, tr_end_hook end);

#endif
