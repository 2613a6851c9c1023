/* job.h - one trace for a whole MPI job.
 *
 * At MPI_Init every rank learns its rank and the job's size; rank 0 picks
 * and claims the job's directory ($TRACER_OUTPUT, or a .1, .2 ... when it
 * already holds a trace) and tells the others; each traced rank moves its
 * journal there as journals/rank<N>.journal and journals its rank; every
 * rank measures its clock offset to rank 0. At MPI_Finalize the offsets
 * are measured again and, unless TRACER_WRITE_AT_END=0, the ranks agree on
 * who writes the job's archive: by default (TRACER_JOB_WRITE=exit) every
 * rank records on until it exits and the last rank out writes the archive
 * from all journals (job_exit.h), so what MPI_Finalize and the exit raise
 * is in it; with TRACER_JOB_WRITE=finalize every rank ends its recording
 * there and the ranks write the archive together (job_write.h). `tracer
 * recover DIR` does the same offline.
 *
 * Every rank takes part, traced or not (TRACER_RANKS), because the steps
 * are collective; tracer must be preloaded into all ranks of a job or none.
 * A process whose MPI is of no family tracer knows (mpit/mpi_abi.h), or with
 * TRACER_ENABLE=0, takes no part. */
#ifndef TR_JOB_JOB_H
#define TR_JOB_JOB_H

/* After the real MPI_Init / MPI_Init_thread returned @rc. */
void tr_job_after_init(int rc);
/* Before the real MPI_Finalize: the second clock offsets, and the
 * agreement on who writes the archive (the write itself, with
 * TRACER_JOB_WRITE=finalize). */
void tr_job_before_finalize(void);

#endif
