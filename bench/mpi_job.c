/* mpi_job.c - what an MPI job's trace costs at MPI_Finalize, as ranks grow.
 *
 * Each rank records @events marks (tracer.h), then times its own
 * MPI_Finalize: with tracer preloaded (LD_PRELOAD, so that tracer's
 * MPI_Finalize comes before MPICH's) that is where every rank ends its
 * recording and rank 0 writes the job's archive from all ranks' journals.
 * Every rank prints its own time (after MPI_Finalize nothing can be
 * gathered); bench/job_scaling.sh takes rank 0's and the maximum.
 *
 * Not a test: it prints numbers.
 * Usage: mpi_job [events-per-rank] */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "tracer.h"

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

int main(int argc, char **argv)
{
    long events = argc > 1 ? atol(argv[1]) : 10000;
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    tracer_region_t mark = tracer_region_register("bench mark");
    for (long i = 0; i < events; i++)
        tracer_mark(mark, (uint64_t)i);
    MPI_Barrier(MPI_COMM_WORLD);
    double t0 = now();
    MPI_Finalize();
    double t1 = now();
    printf("mpi_job rank=%d ranks=%d events_per_rank=%ld finalize_s=%.4f\n", rank, size, events, t1 - t0);
    return 0;
}
