/* Ground truth for test_mpi_abort.py (issue 20): an MPI job in which one
 * rank calls MPI_Abort while the others are busy.
 *
 * usage: mpi_abort DIR K
 * Every rank r marks "step" (include/tracer.h, looked up with dlsym as in
 * mpi_regions.c: the program is not linked with libtracer) with values
 * 0, 1, 2, ..., and after each mark appends the line "i\n" to
 * DIR/rank<r>.lines with one write(2): unbuffered, so whatever kills the
 * rank, every line is a mark that was made. Its pid goes to DIR/rank<r>.pid
 * first. Rank 1 calls
 * MPI_Abort(MPI_COMM_WORLD, 7) after its K-th mark; the other ranks mark on
 * (one every 50 us) until the launcher kills them. Without tracer the calls
 * are skipped and only the lines are written. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <fcntl.h>
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include "tracer.h"

typedef tracer_region_t (*register_fn)(const char *);
typedef int (*mark_fn)(tracer_region_t, uint64_t);
_Static_assert(_Generic(&tracer_region_register, register_fn : 1, default : 0), "tracer_region_register");
_Static_assert(_Generic(&tracer_mark, mark_fn : 1, default : 0), "tracer_mark");

int main(int argc, char **argv)
{
    if (argc < 3 || MPI_Init(&argc, &argv) != MPI_SUCCESS)
        return 98;
    long k = atol(argv[2]);
    int r = -1;
    MPI_Comm_rank(MPI_COMM_WORLD, &r);
    register_fn reg = (register_fn)dlsym(RTLD_DEFAULT, "tracer_region_register");
    mark_fn mark = (mark_fn)dlsym(RTLD_DEFAULT, "tracer_mark");
    tracer_region_t step = reg ? reg("step") : 0;
    char path[4200];
    snprintf(path, sizeof path, "%s/rank%d.lines", argv[1], r);
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_APPEND | O_CLOEXEC, 0644);
    if (fd < 0)
        return 97;
    /* mpiexec may return before the ranks it killed are gone: the test waits
     * for these pids before it reads the lines. */
    snprintf(path, sizeof path, "%s/rank%d.pid", argv[1], r);
    FILE *pf = fopen(path, "w");
    if (!pf || fprintf(pf, "%ld\n", (long)getpid()) < 0 || fclose(pf))
        return 96;
    MPI_Barrier(MPI_COMM_WORLD);
    struct timespec pause = {0, 50000};
    for (long i = 0;; i++) {
        if (mark && mark(step, (uint64_t)i))
            return 3;
        char line[32];
        int n = snprintf(line, sizeof line, "%ld\n", i);
        if (write(fd, line, (size_t)n) != n)
            return 4;
        if (r == 1 && i + 1 == k)
            MPI_Abort(MPI_COMM_WORLD, 7);
        nanosleep(&pause, 0);
    }
}
