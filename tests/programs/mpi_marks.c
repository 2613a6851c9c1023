/* Ground truth for test_job_lost_rank.py and test_job_same_output.py: an MPI
 * job whose every rank r marks "step" (include/tracer.h, looked up with
 * dlsym as in mpi_abort.c: the program is not linked with libtracer)
 * exactly BASE + r times, with the values 0, 1, ..., between two barriers,
 * then ends normally.
 *
 * usage: mpi_marks BASE
 * Prints "rank R of N: M marks" (one line per rank) so that the test knows
 * what each rank did. Without tracer the marks are skipped, the lines
 * printed all the same. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "tracer.h"

typedef tracer_region_t (*register_fn)(const char *);
typedef int (*mark_fn)(tracer_region_t, uint64_t);
_Static_assert(_Generic(&tracer_region_register, register_fn : 1, default : 0), "tracer_region_register");
_Static_assert(_Generic(&tracer_mark, mark_fn : 1, default : 0), "tracer_mark");

int main(int argc, char **argv)
{
    if (argc < 2 || MPI_Init(&argc, &argv) != MPI_SUCCESS)
        return 98;
    long base = atol(argv[1]);
    int r = -1, n = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &r);
    MPI_Comm_size(MPI_COMM_WORLD, &n);
    register_fn reg = (register_fn)dlsym(RTLD_DEFAULT, "tracer_region_register");
    mark_fn mark = (mark_fn)dlsym(RTLD_DEFAULT, "tracer_mark");
    tracer_region_t step = reg ? reg("step") : 0;
    MPI_Barrier(MPI_COMM_WORLD);
    long marks = base + r, made = 0;
    for (long i = 0; i < marks; i++)
        if (mark && mark(step, (uint64_t)i) == 0)
            made++;
    MPI_Barrier(MPI_COMM_WORLD);
    printf("rank %d of %d: %ld marks\n", r, n, mark ? made : marks);
    fflush(stdout);
    MPI_Finalize();
    return 0;
}
