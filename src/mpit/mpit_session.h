/* mpit_session.h - MPI_T events in a traced run.
 *
 * The interposed MPI functions (mpit_interpose.c; MPI_Init, MPI_Init_thread
 * and MPI_Finalize: job/job_interpose.c) call these around the real ones:
 *   - before MPI_Init: activate tracing, select the MPI's family (its
 *     handles, mpi_abi.h), MPI_T_init_thread, discover, register the selected
 *     event types, so initialization events are seen;
 *   - after MPI_Init: discover again (MPIs register types during init) and
 *     bind communicator-bound types to MPI_COMM_WORLD and MPI_COMM_SELF;
 *   - communicator constructors and MPI_Comm_free: bind and unbind;
 *   - after MPI_Finalize: free the registrations, MPI_T_finalize.
 * Each source's clock is paired with the host clock at registration, every
 * flush interval (when MPI_T is thread-safe) and at the end. Everything the
 * writer needs to interpret the records goes into the journal as MPIT
 * frames. Nothing here runs on the hot path; all of it is serialised. */
#ifndef TR_MPIT_SESSION_H
#define TR_MPIT_SESSION_H

#include <stdint.h>

#include "core/record.h"

/* Returns 1 when this call is the outermost MPI init (the one to pair with
 * tr_mpit_after_init). */
int tr_mpit_before_init(enum tr_mpi_call call);
void tr_mpit_after_init(enum tr_mpi_call call, int rc);
void tr_mpit_before_finalize(void);
void tr_mpit_after_finalize(int rc);

/* The session model (MPI_Session_init / _finalize): MPI_T starts before
 * the first session like before MPI_Init, and stops after the last one is
 * finalized (unless MPI_Init's world is live). There is no MPI_COMM_WORLD,
 * hence no job-wide archive: each process writes its own. */
void tr_mpit_before_session_init(void);
void tr_mpit_after_session_init(int rc);
void tr_mpit_before_session_finalize(void);
void tr_mpit_after_session_finalize(int rc);

/* @newcomm points to the new communicator's handle (whatever its type in the
 * process's MPI); it is read only when that MPI is the one tracer knows. */
void tr_mpit_comm_created(const void *newcomm);
/* Before the communicator *@comm is freed or disconnected. */
void tr_mpit_comm_freeing(const void *comm);

#endif
