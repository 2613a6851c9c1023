/* job_write.h - every rank of a job writes its part of the job's archive at
 * MPI_Finalize, together: each its own locations' event and local
 * definition files, side by side; the definitions unified up a binomial
 * tree; rank 0 the global definitions (src/writer/job_part.h has the steps,
 * docs/scaling.md their cost). */
#ifndef TR_JOB_JOB_WRITE_H
#define TR_JOB_JOB_WRITE_H

#include "job/mpi_world.h"
#include "writer/writer.h"

typedef struct tr_job_write_times {
    double events_s;  /* open, load, write events (the slowest rank) */
    double unify_s;   /* reduction tree and broadcast of the definitions */
    double local_s;   /* local definitions */
    double global_s;  /* rank 0: properties and global definitions */
    double total_s;
} tr_job_write_times;

/* Collective over MPI_COMM_WORLD. @journal: this rank's journal, NULL when
 * it has none (not traced). The archive is written in a stage in @dir
 * (@dir_fd; archive_stage.h) and moved into place by rank 0. Returns 0 when
 * the archive @dir/traces.otf2 was written (the same answer on every rank);
 * -1 otherwise, every rank's journal then kept. Rank 0 gets @r and @t
 * filled; a failing rank says why in one tracer: line. */
int tr_job_write(const tr_mpi_world *w, int dir_fd, const char *dir, const char *journal, tr_convert_report *r,
                 tr_job_write_times *t);

#endif
