/* session.h - one traced run: its directory, its journal, its consumer
 * thread and crash handlers, from activation to the OTF2 archive. */
#ifndef TR_SESSION_H
#define TR_SESSION_H

#include <stddef.h>
#include <stdint.h>

/* Installs the session as the lifecycle's start and end hooks. Idempotent. */
void tr_session_install(void);

/* Journals a name as soon as it exists, so even a run that crashes before
 * the consumer writes a single chunk keeps it: a user region's name (@id is
 * its handle) or a text that records refer to by @id (device strings). Cheap
 * enough for the rare paths that create names; no-ops without a journal. */
void tr_session_note_user_region(uint32_t id, const char *name);
void tr_session_note_text(uint64_t id, const char *text);

/* Appends one frame of @type to the journal now (MPI_T catalogue, clock
 * pairs). Returns 0, or -1 without a journal or on a write error. */
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

/* Runs first at the end of the run, if set (MPI_T's last clock pairs). */
extern void (*tr_session_end_hook)(void);
/* Runs last at the end of a run that joined a job, once its journal is
 * complete and closed (the job's archive is written from it). */
extern void (*tr_session_job_end_hook)(void);
/* Nonzero while this run records into a job's directory (it joined one and
 * has not ended): its end will run tr_session_job_end_hook. */
int tr_session_in_job(void);

int tr_session_append(uint16_t type, const void *payload, size_t bytes);

#endif
