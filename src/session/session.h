/* session.h - one traced run: its directory, its journal, its consumer
 * thread and crash handlers, from activation to the OTF2 archive.
 *
 * session/ is libtracer.so's composition root: it wires core, journal,
 * writer and summary together, and is installed by being linked in (it
 * defines core/lifecycle.h's tr_lifecycle_root), not by any call. The
 * producers (ompt/, mpit/, api/) never include this header; job/ does (an
 * MPI job's directory and end). */
#ifndef TR_SESSION_H
#define TR_SESSION_H

#include <stddef.h>
#include <stdint.h>

/* Moves this run's journal into an MPI job's directory @job_fd (@job_path)
 * as journals/rank<@rank>.journal, and forgets the per-process directory it
 * was in (removed when tracer made it). From then on the end of the run
 * closes the journal and writes no archive of its own: the job writes one
 * from all ranks' journals. Returns 0, or -1 (nothing changed; a tracer:
 * line said why). Without a journal (this rank is not traced) returns 0. */
int tr_session_join_job(int job_fd, const char *job_path, int rank);

/* A descriptor (the caller closes it) of this run's directory, and its path
 * in @path; -1 without a journal or once it joined a job. */
int tr_session_dir_dup(char *path, size_t size);

/* Runs last at the end of a run that joined a job, once its journal is
 * complete and closed (the job's archive is written from it). */
extern void (*tr_session_job_end_hook)(void);
/* MPI_Abort is about to end this process (and the launcher the others):
 * saves every recorded event into the journal at once, which then says
 * "ended in MPI_Abort(errorcode)", and ends the run here, so that nothing
 * is written after (MPI may call exit, or the launcher kill this rank). */
void tr_session_before_abort(int errorcode);
/* Nonzero while this run records into a job's directory (it joined one and
 * has not ended): its end will run tr_session_job_end_hook. */
int tr_session_in_job(void);

#endif
