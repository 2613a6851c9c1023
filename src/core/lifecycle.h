/* lifecycle.h - when tracing starts, and the single end of a run.
 *
 * tracer is inert until a producer activates it: the OpenMP runtime calling
 * ompt_start_tool, or the program using include/tracer.h. A process that does
 * neither (a shell, mpiexec, a compiler) gets no trace and no output.
 * The end runs exactly once, at whichever comes first of the OMPT finalize
 * callback, exit() and the library destructor. core/ does not know the
 * session, the journal or the writer: see tr_lifecycle_root below. */
#ifndef TR_CORE_LIFECYCLE_H
#define TR_CORE_LIFECYCLE_H

#include <stdint.h>

#include "core/mpit_note.h"

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
/* --- the composition root ---------------------------------------------
 * core/ and the producers (ompt/, mpit/, api/) know nothing above core/.
 * What they need from the layers above (the run's directory and journal,
 * the consumer thread, the writer) is this table, which the one
 * composition root of libtracer.so (session/session.c) defines as
 * tr_lifecycle_root. It is static data, bound when the library is linked:
 * no constructor has to run first, so an entry point called from another
 * library's constructor (libomp's OMPT start, a C++ static initializer
 * naming a region) finds it in place. A program linked without session/
 * (a unit test of core/) has none: tracing then starts with no journal,
 * and every tr_lifecycle_note_* is a no-op. */
typedef struct tr_lifecycle_ops {
    /* Once tracing is configured; nonzero leaves the run untraced. */
    int (*start)(void);
    /* Once, at the end (recording has stopped). */
    void (*end)(uint64_t end_ticks);
    /* A user region's name (@id is its handle), a text that records refer
     * to by @id (device strings), an MPI_T fact: journaled at once, so a
     * run that crashes before the consumer writes a chunk keeps them. */
    void (*note_user_region)(uint32_t id, const char *name);
    void (*note_text)(uint64_t id, const char *text);
    void (*note_mpit)(const tr_mpit_note *note);
    /* @hook (or none, NULL) runs on the journal's writer thread every
     * flush interval; it may record events. */
    void (*set_interval_hook)(void (*hook)(void));
    /* @hook (or none) runs first at the end of the run, while the journal
     * is still open. */
    void (*set_end_hook)(void (*hook)(void));
} tr_lifecycle_ops;

extern const tr_lifecycle_ops tr_lifecycle_root __attribute__((weak));

/* The producers' way up, through tr_lifecycle_root. Rare paths only (never
 * the hot path); each is a no-op without a root or a journal. */
void tr_lifecycle_note_user_region(uint32_t id, const char *name);
void tr_lifecycle_note_text(uint64_t id, const char *text);
void tr_lifecycle_note_mpit(const tr_mpit_note *note);
void tr_lifecycle_set_interval_hook(void (*hook)(void));
void tr_lifecycle_set_end_hook(void (*hook)(void));

#endif
