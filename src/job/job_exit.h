/* job_exit.h - an MPI job's archive written at exit by the last rank out
 * (TRACER_JOB_WRITE=exit, the default).
 *
 * Inside MPI_Finalize the MPI library still raises events (Open MPI's
 * ompi.mpi.finalization, communicators freed), and after it the OpenMP
 * runtime finalizes its devices at exit. For all of them to be in the job's
 * archive, it is written once every rank's journal is complete: at the
 * process exit of the last rank. MPI is gone by then, so the ranks count
 * themselves out through the job's directory, which every rank already
 * shares (the archive is one directory of files written by all ranks):
 * each rank, once its journal is closed, creates journals/.exit-<k> with
 * O_EXCL for the lowest k it can (an atomic counter on any file system
 * that has O_EXCL, NFS included, which serializes it on the server). The
 * rank that creates .exit-<size> is the last: every other rank created
 * its file after its journal was complete. It writes the archive from all
 * the journals exactly as `tracer recover` does (src/writer/job_convert.c),
 * so the two give the same archive, and removes the .exit files.
 *
 * A rank that dies between MPI_Finalize and its exit never counts itself:
 * no archive is written, the journals stay and `tracer recover` writes it.
 * docs/robustness.md ("MPI jobs") has the argument. */
#ifndef TR_JOB_JOB_EXIT_H
#define TR_JOB_JOB_EXIT_H

#include "core/fd_keep.h"

/* Arms the exit step for this rank of a job of @size ranks whose directory
 * is @dir (@abs: where the kernel had it, to reopen it if the program took
 * the descriptor): *@dir_fd is handed over (closed once used; *@dir_fd is
 * then none). Called in MPI_Finalize. A rank that still records into the job's directory counts
 * itself out at the end of its run (session/session.h's job end hook);
 * any other rank (not traced, or its recording already over) at once. */
void tr_job_exit_arm(tr_fd *dir_fd, const char *abs, const char *dir, int rank, int size);

#endif
